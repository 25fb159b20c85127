"""Test bodies for a repro whose oracle the user stated (``contribkit repro N --expect KIND``):
the test checks what that oracle checks, so that it fails while the repro says REPRODUCED.

- ``error[:TEXT]``: the code raises an error (holding TEXT) -> the test fails with it;
- ``no-error``: the test asserts the code raises;
- ``output:TEXT``: what the code prints must not hold TEXT;
- ``compile-vs-eager`` / ``device-vs-cpu`` / ``determinism``: the values the code prints (or
  its result) compiled against eager (``torch._dynamo.config.patch(disable=True)``), on
  ``device`` against CPU, or in one run against a second with the same seeds;
- ``recompiles:N`` / ``graph-breaks:N``: torch._dynamo's own counts, at most N;
- ``crash``: the crash test of :mod:`contribkit.testgen.oracles`;
- ``warning:TEXT``: no warning the code raises may hold TEXT.
"""

from __future__ import annotations

import ast

from contribkit.core.render import python_literal
from contribkit.repro.codefacts import Edit, apply_edits
from contribkit.target.reproexpect import parse_expect
from contribkit.testgen.bodies import OracleBody, crash_body, strip_runtime
from contribkit.testgen.pyedit import ImportSpec, indent_block
from contribkit.testgen.rewrite import take_result
from contribkit.testgen.tidy import drop_no_op_expressions, drop_prints

_ECHO = "def echo(value):  # what the REPL prints for an expression\n    if value is not None:\n        print(repr(value))\n"
# Automatic dynamic shapes recompile once by design: the repro's oracle leaves them out too.
_RECOMPILES = (
    "recompiles = [\n"
    "    m\n"
    "    for m in torch._dynamo.utils.get_compilation_metrics()\n"
    "    if m.recompile_reason\n"
    '    and not (m.feature_usage or {}).get("dynamo.automatic_dynamic_shapes")\n'
    "]\n"
)


def expect_body(
    value: str, code: str, ref: str, uses_device: bool, said: str | None = None
) -> OracleBody:
    """The test body for the stated oracle ``value`` around the issue's ``code`` (as repro.py
    holds it, the repro runtime's calls still in); ``ref`` names the issue in failures; ``said``
    where the oracle comes from, for the docstring and failures (default ``--expect VALUE``)."""
    kind, arg = parse_expect(value)
    said = said or f"--expect {value}"
    fail_prefix = f"{ref} is back ({said}): "
    if kind == "crash":
        prefix = f"{ref} is back: the code crashes the process again: killed by "
        return crash_body(code, prefix, uses_device)
    if kind == "output":
        return _output(code, arg, fail_prefix, said)
    if kind in ("compile-vs-eager", "device-vs-cpu", "determinism"):
        return two_runs_body(kind, code, fail_prefix, said)
    plain = drop_no_op_expressions(drop_prints(strip_runtime(code)[0]))
    if kind == "error":
        return _error(plain, arg, fail_prefix, said)
    if kind == "warning":
        return _warning(plain, arg, fail_prefix, said)
    if kind == "no-error":
        message = python_literal(f"{fail_prefix}the code runs to its end without an error")
        body = f"with self.assertRaises(Exception, msg={message}):\n" + indent_block(plain, "    ")
        checks = f"Fails while the code runs to its end without an error ({said})."
        note = "the test asserts only that an error is raised: name the error the fix raises"
        return OracleBody(body, checks, notes=[note])
    limit = int(arg)
    if kind == "recompiles":
        body = (
            "torch._dynamo.reset()\ntorch._dynamo.utils.clear_compilation_metrics()\n"
            + plain
            + _RECOMPILES
            + f"self.assertLessEqual(\n    len(recompiles),\n    {limit},\n"
            f"    {python_literal(fail_prefix)} + '; '.join(str(m.recompile_reason) for m in recompiles)[:500],\n)\n"
        )
        checks = f"Fails while torch.compile recompiles more than {limit} time(s) ({said})."
        return OracleBody(body, checks)
    body = (
        "torch._dynamo.reset()\ntorch._dynamo.utils.counters.clear()\n"
        + plain
        + 'breaks = torch._dynamo.utils.counters["graph_break"]\n'
        + f"self.assertLessEqual(sum(breaks.values()), {limit}, {python_literal(fail_prefix)} + str(list(breaks)[:3]))\n"
    )
    checks = f"Fails while torch._dynamo counts more than {limit} graph break(s) ({said})."
    return OracleBody(body, checks)


def _error(code: str, text: str, fail_prefix: str, said: str) -> OracleBody:
    prefix = python_literal(fail_prefix)
    if text:
        flat = python_literal(" ".join(text.split()))
        handler = (
            "except Exception as e:\n"
            "    if " + flat + ' in " ".join(f"{type(e).__name__}: {e}".split()):\n'
            f'        self.fail({prefix} + f"{{type(e).__name__}}: {{e}}")\n'
            "    raise\n"
        )
    else:
        handler = (
            f'except Exception as e:\n    self.fail({prefix} + f"{{type(e).__name__}}: {{e}}")\n'
        )
    body = "try:\n" + indent_block(code, "    ") + handler
    holds = f" holding {text!r}" if text else ""
    return OracleBody(body, f"Fails while the code raises an error{holds} ({said}).")


def _warning(code: str, text: str, fail_prefix: str, said: str) -> OracleBody:
    """The code under ``warnings.catch_warnings``: no warning it raises may hold ``text``."""
    body = (
        "warn_always = torch.is_warn_always_enabled()  # torch's warn-once warnings too\n"
        "torch.set_warn_always(True)\n"
        "try:\n"
        "    with warnings.catch_warnings(record=True) as caught:\n"
        '        warnings.simplefilter("always")\n'
        + indent_block(code, "        ")
        + "finally:\n    torch.set_warn_always(warn_always)\n"
        + 'said = [" ".join(f"{w.category.__name__}: {w.message}".split()) for w in caught]\n'
        + f"held = [w for w in said if {python_literal(' '.join(text.split()))} in w]\n"
        + f"self.assertFalse(held, {python_literal(fail_prefix + 'the code warns again')})\n"
    )
    checks = f"Fails while the code raises a warning holding {text!r} ({said})."
    return OracleBody(body, checks, [ImportSpec("warnings")])


def _output(code: str, text: str, fail_prefix: str, said: str) -> OracleBody:
    """The code with its prints (and the REPL's echoes) kept, its output captured."""
    code = code.replace("_repro.echo(", "echo(")
    stripped, _ = strip_runtime(code)
    needs_echo = "echo(" in stripped
    body = (
        (_ECHO if needs_echo else "")
        + "printed = io.StringIO()\n"
        + "with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):\n"
        + indent_block(stripped, "    ")
        + f"self.assertNotIn(\n    {python_literal(' '.join(text.split()))},\n"
        + '    " ".join(printed.getvalue().split()),\n'
        + f"    {python_literal(fail_prefix + 'the code prints it again')},\n)\n"
    )
    checks = f"Fails while what the code prints holds {text!r} ({said})."
    return OracleBody(body, checks, [ImportSpec("contextlib"), ImportSpec("io")])


def printed_values(code: str) -> tuple[str, str | None]:
    """The code with each top-level statement that prints one value appending that value to
    ``printed`` instead; else its result (:func:`take_result`); the name to compare, or None."""
    _, shown = strip_runtime(code)
    if shown:
        edits = [Edit(*s.start, *s.end, "", f"printed.append({_values_of(s.expr)})") for s in shown]
        body, _ = strip_runtime(apply_edits(code, edits))
        return "printed = []\n" + drop_prints(body), "printed"
    plain = drop_prints(strip_runtime(code)[0])
    return take_result(plain)


def two_runs_body(kind: str, code: str, fail_prefix: str, said: str) -> OracleBody:
    values, name = printed_values(code)
    if name is None:
        from contribkit.core.errors import BadInput

        raise BadInput(
            f"the code neither prints a value nor ends with a result that {said} could compare",
            hint="end the code with the value the issue is about (e.g. print(out))",
        )
    param = "device" if kind == "device-vs-cpu" else ""
    run = (
        f"def run_code({param}):\n    torch.manual_seed(0)\n"
        + indent_block(values, "    ")
        + f"    return {name}\n\n"
    )
    if kind == "compile-vs-eager":
        body = (
            run + "torch._dynamo.reset()\nwith torch._dynamo.config.patch(disable=True):\n"
            "    expected = run_code()  # eager: torch.compile does nothing here\n"
            "torch._dynamo.reset()\n"
            f"self.assertEqual(run_code(), expected, msg={_msg(fail_prefix, 'compiled differs from eager')})\n"
        )
        checks = f"Fails while the compiled code's values differ from eager's ({said})."
    elif kind == "device-vs-cpu":
        body = (
            run + 'expected = run_code("cpu")\n'
            "self.assertEqual(run_code(device), expected, exact_device=False, msg="
            f"{_msg(fail_prefix, 'the device differs from cpu')})\n"
        )
        checks = f"Fails while the values on `device` differ from CPU's ({said})."
    else:
        body = (
            run + "first = run_code()\n"
            f"self.assertEqual(run_code(), first, atol=0, rtol=0, msg={_msg(fail_prefix, 'two runs differ')})\n"
        )
        checks = f"Fails while two runs with the same seed give different values ({said})."
    return OracleBody(body, checks)


def _msg(prefix: str, what: str) -> str:
    return python_literal(prefix + what)


def _values_of(expr: str) -> str:
    """The values a print shows: ``print(a, b)`` (held as ``" ".join(str(v) for v in (a, b,))``)
    is the tuple ``(a, b,)``, so that tensors compare as values, not as text that names a
    device."""
    node = ast.parse(expr, mode="eval").body
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.GeneratorExp)
        and isinstance(node.args[0].generators[0].iter, ast.Tuple)
    ):
        return ast.unparse(node.args[0].generators[0].iter)
    return expr
