"""A reference to test against where the issue quotes only the wrong output (no expected value):
the test then asserts the code's value equals the reference, never only that it differs from the
reported value.

- the code calls ``torch.compile``: eager is the reference (the values the code prints, compiled
  against the same code with ``torch._dynamo.config.patch(disable=True)``);
- the printed value is a floating-point result of torch functions and tensor methods on the
  code's values (``torch.norm(a)``, ``x.sqrt()``, ``torch.fmod(a, b)``): the same expression
  on those values in float64 is the reference, compared at the tolerance of the value's dtype;
  the value the issue reports is ruled out besides (the reference can share the bug);
- the issue reports the bug on CUDA and the code takes its device from the test: CPU is the
  reference (the test is for CUDA only).

Anything else (a user function or module, an integer or boolean value, text) has no reference
here: None, and the caller refuses as before.
"""

from __future__ import annotations

import ast

from contribkit.core.render import python_literal
from contribkit.repro.codefacts import Edit, apply_edits
from contribkit.repro.reference import float64_reference, recomputed_reference
from contribkit.testgen.bodies import OracleBody, Shown, literal, strip_runtime
from contribkit.testgen.tidy import drop_no_op_expressions, drop_prints

FLOAT64 = (
    "def float64(value):  # the same value in float64, for the reference\n"
    "    if isinstance(value, torch.Tensor) and value.is_floating_point():\n"
    "        return value.double()\n"
    "    return value\n"
)


def reference_body(
    code: str,
    statement: Shown,
    reported: str,
    compiled: bool,
    fail_prefix: str,
    on_device: bool = False,
) -> OracleBody | None:
    """The test body against a reference for the printed ``statement`` whose output the issue
    reports as ``reported``, or None when no reference exists for it. ``on_device``: the issue
    reports the bug on CUDA and the code runs on the test's ``device`` (CPU is the reference)."""
    if compiled or on_device:
        from contribkit.core.errors import BadInput
        from contribkit.testgen.expectbodies import two_runs_body

        kind, against = ("compile-vs-eager", "eager") if compiled else ("device-vs-cpu", "CPU")
        try:
            two = two_runs_body(kind, code, fail_prefix, f"{against} as the reference")
        except BadInput:
            return None
        note = (
            f"the issue quotes only the wrong output: the test compares its values with {against}'s"
        )
        return OracleBody(two.code, two.checks, two.imports, [note])
    parsed = literal(reported)
    if parsed is None or not _floats(parsed[0]):
        return None
    expr = _reference_expr(code, statement)
    if expr is None:
        return None
    message = python_literal(f"{fail_prefix}the value differs from the float64 reference")
    again = python_literal(f"{fail_prefix}the value is the one the issue reports")
    reported_value = ", ".join(filter(None, [parsed[0], parsed[1], "exact_dtype=False"]))
    # The reference can share the bug, when it is in the operation and not in its precision
    # (``torch.unique`` counting NaNs, dev set 94106; ``histc`` with min == max, 126021): the
    # self-check sees that after REPRODUCED, not after NOT_REPRODUCED. So the test also rules
    # out the value the issue reports, which the bug gives whatever the reference says.
    check = (
        f"actual = {statement.expr}\n"
        f"expected = {expr}\n"
        f"self.assertEqual(actual, expected, exact_dtype=False, msg={message})\n"
        f"self.assertNotEqual(actual, {reported_value}, msg={again})"
    )
    edits = [Edit(*statement.start, *statement.end, "", check)]
    body, _ = strip_runtime(apply_edits(code, edits))
    body = (FLOAT64 if "float64(" in expr else "") + drop_no_op_expressions(drop_prints(body))
    checks = (
        f"Fails while `{statement.expr}` differs from the same computation in float64, or is"
        " the value the issue reports (it quotes only that wrong output)."
    )
    note = (
        f"the issue quotes only the wrong output: the test asserts `{statement.expr}` against "
        "the same torch functions on float64 values, and that it is not the reported value;"
        " check that it fails while the bug is there"
    )
    return OracleBody(body, checks, notes=[note])


def _reference_expr(code: str, statement: Shown) -> str | None:
    """The printed value computed again from the code's inputs in float64 where the code's
    assignments say how (``(b, c)`` of two norms: both norms again), else the value's own
    expression with the values it reads upcast."""
    line = statement.start[0]
    again = recomputed_reference(code, statement.expr, line, "float64", literals=False)
    return again or float64_reference(code, statement.expr, line)


def _floats(source: str) -> bool:
    """The printed literal holds a floating value: ``1.5``, ``torch.nan``, a float dtype."""
    for node in ast.walk(ast.parse(source, mode="eval")):
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            return True
        if isinstance(node, ast.Attribute) and (
            node.attr in ("nan", "inf") or node.attr.startswith(("float", "bfloat", "half"))
        ):
            return True
    return False
