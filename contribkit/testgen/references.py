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


def _reference_expr(code: str, statement: Shown) -> str | None:
    """``statement.expr`` (or the expression last assigned to the name it prints) with every
    value it reads in float64; None when it calls anything but torch functions and methods."""
    tree = ast.parse(code)
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    try:
        node = ast.parse(statement.expr, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Name):
        assigned = [
            s.value
            for s in tree.body
            if isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and s.targets[0].id == node.id
            and s.lineno < statement.start[0]
        ]
        if not assigned:
            return None
        node = assigned[-1]
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        func = call.func
        if isinstance(func, ast.Name):
            return None  # a function of the code's own, or a builtin
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in defined:
            return None
    upcast = _Float64(_tensor_names(tree, statement.start[0]))
    wrapped = ast.unparse(upcast.visit(ast.parse(ast.unparse(node), mode="eval")))
    return wrapped if upcast.changed else None  # nothing upcast: the same computation again


# Low-precision floating dtypes and the methods that convert to them: float64 in the reference.
_LOW = {"float16", "half", "bfloat16", "float32", "float"}
_TO_LOW = {"half", "bfloat16", "float"}


def _tensor_names(tree: ast.Module, before: int) -> set[str]:
    """Names the code's top level assigns (before line ``before``) from a torch call or from
    another such name: the values that are tensors, which the reference upcasts."""
    names: set[str] = set()
    for stmt in tree.body:
        if stmt.lineno >= before or not isinstance(stmt, ast.Assign):
            continue
        reads = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
        calls = [n.func for n in ast.walk(stmt.value) if isinstance(n, ast.Call)]
        if any(_under_torch(f) for f in calls) or reads & names:
            names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    return names


class _Float64(ast.NodeTransformer):
    """Tensor names the expression reads become ``float64(name)``, low-precision dtypes
    ``torch.float64`` and ``.half()``/``.float()`` ``.double()``; ``torch`` paths stay."""

    def __init__(self, tensors: set[str]) -> None:
        self.tensors = tensors
        self.changed = False

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        if isinstance(node.func, ast.Attribute):
            if node.func.attr in _TO_LOW and not node.args and not _under_torch(node.func):
                node.func.attr, self.changed = "double", True
            node.func.value = self._value(node.func.value)
        return node

    def _value(self, node: ast.expr) -> ast.expr:
        if _under_torch(node):  # torch, torch.nn.functional
            return node
        result = self.visit(node)
        assert isinstance(result, ast.expr)
        return result

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if _under_torch(node):
            if node.attr in _LOW and isinstance(node.value, ast.Name):  # torch.float16
                self.changed = True
                return ast.Attribute(node.value, "float64", ast.Load())
            return node  # torch.pi, torch.nn.functional
        node.value = self.visit(node.value)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id not in self.tensors or not isinstance(node.ctx, ast.Load):
            return node
        self.changed = True
        return ast.Call(ast.Name("float64", ast.Load()), [node], [])


def _under_torch(node: ast.expr) -> bool:
    """``torch`` or an attribute path from it (``torch.nn.functional``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "torch"
