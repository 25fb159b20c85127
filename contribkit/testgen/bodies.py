"""The pieces every test body of ``test --from-repro`` is made of: ``OracleBody`` (the body,
what makes it fail, its imports and notes), the crash body (the code in a child Python), the
printed values the runtime marked (``strip_runtime``) and the literals they read as. The oracle
modules (``oracles``, ``references``, ``expectbodies``) build on these and never on each other
in a circle.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from contribkit.core.astnames import source_lines
from contribkit.core.render import python_literal
from contribkit.repro.codefacts import Edit, apply_edits
from contribkit.testgen.pyedit import ImportSpec
from contribkit.testgen.tidy import call_name

_SUBPROCESS = [ImportSpec("signal"), ImportSpec("subprocess"), ImportSpec("sys")]
_TENSOR = re.compile(r"(?<![\w.])tensor\(")
_NAN_INF = re.compile(r"(?<![\w.])(nan|inf)\b")
_DROPPED_KW = re.compile(r",\s*(?:grad_fn=<[^>]*>|device='[^']*'|device=\"[^\"]*\")")
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

_FLOAT = re.compile(r"(?<![\w.])\d+\.(\d*)(?:e([-+]?\d+))?", re.I)


@dataclass
class OracleBody:
    code: str  # the test body, at column 0
    checks: str  # the docstring's sentence: what makes the test fail
    imports: list[ImportSpec] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


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


_NESTED_MARK = re.compile(r"\b_repro\.mark\(\d+\);[ \t]*")
_NESTED_UNMARK = re.compile(r";[ \t]*_repro\.mark\(-[12]\)")


def strip_runtime(code: str) -> tuple[str, list[Shown]]:
    """``code`` without the repro's ``_repro.mark(...)`` and ``_repro.reference(...)`` calls and
    ``#:`` output lines, echoes unwrapped; and, found in the code before that, the statements
    that print one value."""
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
        if _runtime_call(node, "reference") is not None:  # the runtime's float64 recomputation
            edits.append(Edit(node.lineno, node.col_offset, *end, "", ""))
            continue
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
    # marks inside a function or block (the statement a comment says should raise)
    stripped = _NESTED_MARK.sub("", _NESTED_UNMARK.sub("", stripped))
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
