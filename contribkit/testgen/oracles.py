"""Test bodies from the oracles a repro decides by besides a failure signature or ``check()``:
the issue's own checks (kept, as TestCase assertions), a process crash (the code runs in a child
Python; the test fails while a signal kills it), and the output the issue quotes (the printed
values asserted equal to the expected ones or, where the issue quotes only the reported output,
ruled out).

The runtime evidence comes from meta.json's ``evidence`` (what ``Repro(evidence=...)`` gets); a
meta.json without it gives none of these tests. What cannot be made honest raises BadInput with
the reason.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from contribkit.core.astnames import source_lines
from contribkit.core.errors import BadInput
from contribkit.core.render import python_literal
from contribkit.repro.codefacts import Edit, apply_edits
from contribkit.testgen.pyedit import ImportSpec
from contribkit.testgen.tidy import (
    as_assertions,
    call_name,
    drop_no_op_expressions,
    drop_prints,
)

# Oracle name -> the evidence key that says it applies, in the order a test prefers them.
ORACLE_KEYS = {"assert": "own_checks", "crash": "crash", "quoted-output": "units"}
_SUBPROCESS = [ImportSpec("signal"), ImportSpec("subprocess"), ImportSpec("sys")]
_TENSOR = re.compile(r"(?<![\w.])tensor\(")
_NAN_INF = re.compile(r"(?<![\w.])(nan|inf)\b")
_DROPPED_KW = re.compile(r",\s*(?:grad_fn=<[^>]*>|device='[^']*'|device=\"[^\"]*\")")
_FLOAT = re.compile(r"(?<![\w.])\d+\.(\d*)(?:e([-+]?\d+))?", re.I)
_LITERAL_CALLS = {"torch.tensor": {"dtype", "requires_grad"}, "torch.Size": set()}
_LITERAL_NODES = (
    ast.Expression,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.UnaryOp,
    ast.USub,
    ast.UAdd,
    ast.Load,
    ast.keyword,
)


@dataclass
class OracleBody:
    code: str  # the test body, at column 0
    checks: str  # the docstring's sentence: what makes the test fail
    imports: list[ImportSpec] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def pick_oracle(meta: dict[str, Any], decided: str | None) -> str | None:
    """The oracle a test is written for: the one that decided the verdict, when meta.json's
    evidence supports a test for it; with no deciding oracle known, the first one supported."""
    evidence = meta.get("evidence")
    if not isinstance(evidence, dict):
        return None
    present = [name for name, key in ORACLE_KEYS.items() if evidence.get(key)]
    if decided is not None:
        return decided if decided in present else None
    return present[0] if present else None


def has_oracle_evidence(meta: dict[str, Any]) -> bool:
    evidence = meta.get("evidence")
    return isinstance(evidence, dict) and any(evidence.get(k) for k in ORACLE_KEYS.values())


# -- the issue's own checks --------------------------------------------------------------------
def assert_body(code: str, where: str) -> OracleBody:
    """The code with its asserts, ``assert_close`` calls and ``if ...: raise`` checks as
    TestCase assertions."""
    if "_repro.run_tests(" in code:
        raise BadInput(
            f"{where}: the issue's checks are in unittest cases of its own, which a test method "
            "cannot hold",
            hint="move the failing check into repro.py's check(), or write the test by hand",
        )
    code, _ = strip_runtime(code)
    code = as_assertions(drop_no_op_expressions(drop_prints(code)))
    return OracleBody(code, "Fails while the issue's own checks fail.")


# -- a process crash ---------------------------------------------------------------------------
def crash_body(code: str, fail_prefix: str, uses_device: bool, engines: bool = False) -> OracleBody:
    """Run the code in a child Python: the test fails when a signal kills it (the crash), and
    passes when it ends, cleanly or with a Python exception. With ``engines`` (quantized code,
    whose kernels differ by engine), once under each quantized engine this torch supports."""
    code = strip_runtime(code)[0].strip("\n")  # prints stay: printing a value may be the crash
    lines = [python_literal(line) for line in code.splitlines()]
    if uses_device:
        lines.insert(0, 'f"device = {device!r}"')
    # Seeded as the repro seeds its code (a crash may need the same random input); a hang
    # ends the test, not the test run.
    lines[:0] = ['"import random, torch"', '"random.seed(0)"', '"torch.manual_seed(0)"']
    run = (
        'subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)'
    )
    fail = [
        "self.fail(",
        f"    {python_literal(fail_prefix)}",
        "    + signal.Signals(-child.returncode).name",
        *(['    + f" (quantized engine {engine})"'] if engines else []),
        '    + "\\n"',
        "    + child.stderr[-2000:]",
        ")",
    ]
    check = [f"child = {run}", "if child.returncode < 0:", *(f"    {line}" for line in fail)]
    if engines:
        lines[3:3] = ['f"torch.backends.quantized.engine = {engine!r}"']
    body = [
        "# The issue's code, in a child process: a crash kills the child, not the test run.",
        *(["for engine in torch.backends.quantized.supported_engines:"] if engines else []),
        *(
            f"{'    ' if engines else ''}{line}"
            for line in [
                'code = "\\n".join(',
                "    [",
                *(f"        {line}," for line in lines),
                "    ]",
                ")",
                *check,
            ]
        ),
    ]
    if engines:
        body.insert(2, '    if engine == "none":')
        body.insert(3, "        continue")
    checks = (
        "Fails while the code crashes the process (a signal, as the issue reports)"
        + (", under any quantized engine" if engines else "")
        + "; passes when it ends, with or without a Python exception."
    )
    return OracleBody("\n".join(body) + "\n", checks, list(_SUBPROCESS))


# -- the code, less the repro runtime's calls ------------------------------------------
@dataclass
class Shown:
    """A top-level statement that prints one value (``print(x)`` or the REPL's echo)."""

    start: tuple[int, int]  # where the statement (with its mark) starts
    end: tuple[int, int]
    expr: str
    form: str  # "str" (print) or "repr" (echo)
    unit: int | None  # the quoted-output unit it was marked with


def _runtime_call(node: ast.stmt, name: str) -> ast.Call | None:
    if (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func) == f"_repro.{name}"
    ):
        return node.value
    return None


def strip_runtime(code: str) -> tuple[str, list[Shown]]:
    """``code`` without the repro's ``_repro.mark(...)`` calls and ``#:`` output lines, echoes
    unwrapped; and, found in the code before that, the statements that print one value."""
    tree = ast.parse(code)
    edits: list[Edit] = []
    shown: list[Shown] = []
    unit: int | None = None
    mark_start: tuple[int, int] | None = None
    for node in tree.body:
        mark = _runtime_call(node, "mark")
        if mark is not None:
            number = ast.literal_eval(mark.args[0]) if mark.args else -1
            unit = number if isinstance(number, int) and number >= 0 else None
            mark_start = (node.lineno, node.col_offset) if unit is not None else None
            end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
            edits.append(Edit(node.lineno, node.col_offset, *end, "", ""))
            continue
        start = mark_start or (node.lineno, node.col_offset)
        end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
        echo = _runtime_call(node, "echo")
        value = node.value if isinstance(node, ast.Expr) else None
        if echo is not None and len(echo.args) == 1:
            inner = ast.get_source_segment(code, echo.args[0]) or ast.unparse(echo.args[0])
            shown.append(Shown(start, end, inner, "repr", unit))
            edits.append(Edit(node.lineno, node.col_offset, *end, "", inner))
        elif isinstance(value, ast.Call) and call_name(value) == "print" and value.args:
            args = [ast.get_source_segment(code, a) or ast.unparse(a) for a in value.args]
            one = (
                len(args) == 1 and not value.keywords and not isinstance(value.args[0], ast.Starred)
            )
            expr = args[0] if one else f'" ".join(str(v) for v in ({", ".join(args)},))'
            shown.append(Shown(start, end, expr, "str", unit))
        unit, mark_start = None, None
    stripped = apply_edits(code, edits)
    kept = "".join(s for s in source_lines(stripped) if not s.lstrip().startswith("#:"))
    return re.sub(r"^(\s*);\s*", r"\1", kept, flags=re.M), shown


# -- the output the issue quotes ---------------------------------------------------------------
def literal(text: str) -> tuple[str, str] | None:
    """A printed value as Python source (``tensor([0., nan])`` -> ``torch.tensor([0.0,
    torch.nan])``) and the tolerance its printed precision allows (``atol=…, rtol=…`` or ""),
    or None when it does not read as a literal of numbers, bools, lists, tuples and tensors."""
    source = _DROPPED_KW.sub("", " ".join(text.split()))
    source = re.sub(r"\s+([\])])", r"\1", re.sub(r"([\[(])\s+", r"\1", source))
    source = _NAN_INF.sub(r"torch.\1", _TENSOR.sub("torch.tensor(", source))
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            allowed = _LITERAL_CALLS.get(ast.unparse(node.func))
            if allowed is None or not {k.arg for k in node.keywords} <= allowed:
                return None
        elif isinstance(node, ast.Attribute):
            if not (isinstance(node.value, ast.Name) and node.value.id == "torch"):
                return None
        elif isinstance(node, ast.Name):
            if node.id != "torch":
                return None
        elif not isinstance(node, _LITERAL_NODES):
            return None
        if isinstance(node, ast.Constant) and (
            isinstance(node.value, (str, bytes, complex)) or node.value is Ellipsis
        ):
            return None  # text, or torch's summarised print ("...") that holds no values
    return source, _tolerance(source)


def _tolerance(source: str) -> str:
    """As close as the printed digits say: half a unit of the last printed decimal."""
    floats = _FLOAT.findall(source)
    places = [len(d) - int(e or 0) for d, e in floats if d]
    if not places:
        return ""  # integers, or floats printed as whole numbers (torch prints 1. only for 1)
    if any(e for _, e in floats):
        return f"atol=0, rtol={0.5 * 10.0 ** -min(len(d) for d, _ in floats if d):g}"
    return f"atol={0.5 * 10.0 ** -min(places):g}, rtol=0"


def _values(lines: list[str]) -> list[str]:
    """Printed lines grouped into values: a multi-line tensor is one value."""
    values: list[str] = []
    pending: list[str] = []
    for line in lines:
        pending.append(line)
        text = "\n".join(pending)
        depth = sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
        if depth <= 0:
            values.append(text)
            pending = []
    return [*values, *(["\n".join(pending)] if pending else [])]


def _assertion(shown: Shown, text: str, equal: bool) -> str:
    how = "assertEqual" if equal else "assertNotEqual"
    parsed = literal(text)
    if parsed is not None:
        source, tolerance = parsed
        # A quoted value shows no dtype unless printed with one: the values are what count.
        loose = "" if "dtype=" in source else "exact_dtype=False"
        return f"self.{how}({', '.join(filter(None, [shown.expr, source, tolerance, loose]))})"
    flat = " ".join(text.split())
    value = f'" ".join({shown.form}({shown.expr}).split())'
    return f"self.{how}({value}, {python_literal(flat)})"


def _pairs(
    shown: list[Shown], units: list[dict[str, Any]], where: str
) -> list[tuple[Shown, list[str] | None, list[str] | None]]:
    """Each printing statement with the values the issue quotes for it: (reported, expected)."""
    pairs: list[tuple[Shown, list[str] | None, list[str] | None]] = []
    for unit in units:
        actual, expected = unit.get("actual"), unit.get("expected")
        if unit.get("id"):
            mine = [s for s in shown if s.unit == unit.get("id")]
            if len(mine) == 1:
                pairs.append(
                    (
                        mine[0],
                        ["\n".join(actual)] if actual else None,
                        ["\n".join(expected)] if expected else None,
                    )
                )
            continue
        printing = [s for s in shown if s.unit is None or s.unit == 0]
        got = _values(actual) if actual else None
        want = _values(expected) if expected else None
        counts = {len(v) for v in (got, want) if v is not None}
        if counts != {len(printing)}:
            raise BadInput(
                f"{where}: the output the issue quotes ({' / '.join(map(str, sorted(counts)))} "
                f"value(s)) does not line up with the {len(printing)} value(s) the code prints",
                hint="fill in check() in repro.py with the expected values, then run this again",
            )
        for index, statement in enumerate(printing):
            pairs.append(
                (
                    statement,
                    [got[index]] if got else None,
                    [want[index]] if want else None,
                )
            )
    return pairs


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def _form(source: str) -> object:
    """What kind of value a literal is, to pair an expected value with a printed one: a
    sequence (its length and element kinds), a tensor (the form of its data) or a scalar."""
    node = ast.parse(source, mode="eval").body
    if isinstance(node, ast.Call):  # torch.tensor(data, ...) or torch.Size(...)
        return (
            "call",
            ast.unparse(node.func),
            _form(ast.unparse(node.args[0])) if node.args else None,
        )
    if isinstance(node, (ast.List, ast.Tuple)):
        return ("seq", len(node.elts), tuple(_form(ast.unparse(e)) for e in node.elts))
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return "bool"
    return "number"


def prose_expectation(
    text: str | None, reported: list[tuple[Shown, str]]
) -> tuple[Shown, str] | None:
    """The one printed statement whose value the issue's expected-behaviour prose states in
    code (`` `[True, False]` ``): a literal of the same form as the value the issue reports for
    it, and a different one. None unless exactly one statement and one value pair up."""
    candidates = {c.strip() for c in _CODE_SPAN.findall(text or "")}
    values = {
        c: parsed[0]
        for c in candidates
        if (parsed := literal(c)) is not None and _form(parsed[0]) not in ("number", "bool")
    }  # a bare number in backticks ("batch size `1`") is too often something else
    found: dict[int, set[str]] = {}
    for index, (_, got) in enumerate(reported):
        parsed = literal(got)
        if parsed is None:
            continue
        for text_value, source in values.items():
            if _form(source) == _form(parsed[0]) and source != parsed[0]:
                found.setdefault(index, set()).add(text_value)
    if len(found) != 1:
        return None
    ((index, matched),) = found.items()
    return (reported[index][0], matched.pop()) if len(matched) == 1 else None


def quoted_output_body(
    code: str,
    evidence: dict[str, Any],
    where: str,
    force: bool = False,
    expected_text: str | None = None,
    compiled: bool = False,
    fail_prefix: str = "",
    on_device: bool = False,
) -> OracleBody:
    """The printed values asserted equal to the output the issue expects (quoted as output, or
    else stated in code in its expected-behaviour prose, see :func:`prose_expectation`); where
    it quotes only the reported output, against a reference where one exists (eager for
    compiled code, float64 for a floating result, see ``references``); else the last printed
    value is asserted to differ from it:
    a weak test (the reported output may even be right, the bug elsewhere), written only with
    ``force``, and the notes and the docstring say so."""
    _, shown = strip_runtime(code)
    units = [u for u in evidence.get("units") or [] if isinstance(u, dict)]
    pairs = _pairs(shown, units, where)
    expected = [(s, want[0]) for s, _, want in pairs if want]
    notes: list[str] = []
    stated = None
    if not expected:
        stated = prose_expectation(expected_text, [(s, got[0]) for s, got, _ in pairs if got])
    if stated is not None:
        expected = [stated]
        notes.append(
            f"the expected value of `{stated[0].expr}` is the one the issue states in prose,"
            f" `{stated[1]}`: check that it is the right one"
        )
    if expected:
        lines = {s.start: _assertion(s, text, True) for s, text in expected}
        checks = "Fails while the code's values differ from the output the issue expects."
    else:
        reported = [(s, got[0]) for s, got, _ in pairs if got]
        if not reported:
            raise BadInput(
                f"{where}: no statement of the code prints the output the issue quotes",
                hint="fill in check() in repro.py so that it fails while the bug is present",
            )
        statement, text = reported[-1]
        from contribkit.testgen.references import reference_body

        reference = reference_body(code, statement, text, compiled, fail_prefix, on_device)
        if reference is not None:
            return reference
        if not force:
            raise BadInput(
                f"{where}: the issue quotes the output `{statement.expr}` gives, not the output "
                "it expects, and no reference computes it (eager for compiled code, float64 for"
                " a floating result of torch functions): a test could only rule out the"
                " reported value",
                hint="fill in check() in repro.py with the expected value, or pass --force for a "
                "test that only rules out the reported one",
            )
        lines = {statement.start: _assertion(statement, text, False)}
        checks = (
            "Fails while the code still prints the output the issue reports; it does not "
            "check the right value: assert that once it is known."
        )
        notes.append(
            f"the issue quotes only the wrong output: the test only rules out the reported value "
            f"of `{statement.expr}`; assert the right value in its place"
        )
    edits = [Edit(*s.start, *s.end, "", lines[s.start]) for s in shown if s.start in lines]
    body, _ = strip_runtime(apply_edits(code, edits))
    body = drop_no_op_expressions(drop_prints(body))
    return OracleBody(body, checks, notes=notes)
