"""REPL and IPython transcripts (``>>>``, ``...``, ``In [n]:``) and printed output: values like
``tensor([1., 2.])`` pasted as the result of the code rather than as code."""

from __future__ import annotations

import ast
import re
import textwrap

from contribkit.issue.parse.scan import Piece, parse_python
from contribkit.issue.parse.signature import error_start

_PROMPT = re.compile(r"(?:>>>|In \[\d*\]:)(?: |$)")
_CONTINUATION = re.compile(r"(?:\.\.\.|\s*\.\.\.+:)(?: |$)")
# The first line of a printed value that does not parse: `tensor([1.], grad_fn=<AddBackward0>)`.
PRINTED = re.compile(r"\s*[\[(]*(?:tensor|array|torch\.Size|Parameter containing:)(?:\(|$)")
# Call names that only appear in printed values: `tensor([1., 2.])`, `torch.Size([2])`, ...
_REPR_CALLS = frozenset(
    {"tensor", "array", "Parameter", "Size", "device", "dtype", "OrderedDict", "defaultdict"}
)


def has_prompts(lines: list[str]) -> bool:
    return any(_PROMPT.match(line) for line in lines)


def repl_pieces(lines: list[str]) -> list[Piece]:
    """A REPL transcript's code (prompts stripped) and the traceback in its output, if any."""
    code: list[str] = []
    output: list[tuple[int, str]] = []
    in_statement = False
    for number, line in enumerate(lines):
        prompt = _PROMPT.match(line)
        if prompt is None and in_statement:
            prompt = _CONTINUATION.match(line)
        if prompt is not None:
            code.append(line[prompt.end() :])
            in_statement = True
        else:
            in_statement = False
            output.append((number, line))
    pieces: list[Piece] = []
    code_text = "\n".join(code).strip("\n")
    if code_text.strip():
        pieces.append(Piece("repl", 0, code_text))
    error = error_start([line for _, line in output])
    if error is not None:
        text = "\n".join(line for _, line in output[error:])
        pieces.append(Piece("traceback", output[error][0], textwrap.dedent(text).strip("\n")))
    return pieces


def has_statements(tree: ast.Module) -> bool:
    """True unless the module is empty or only printed values (``tensor([1.])``, ``True``)."""
    return any(not _is_printed_value(stmt) for stmt in tree.body)


def _is_printed_value(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and _is_value(stmt.value)


def _is_value(node: ast.expr) -> bool:
    if isinstance(node, (ast.Constant, ast.Name)):
        return True
    if isinstance(node, ast.Attribute):
        return _is_value(node.value)
    if isinstance(node, ast.UnaryOp):
        return _is_value(node.operand)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_is_value(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or _is_value(k) for k in node.keys) and all(
            _is_value(v) for v in node.values
        )
    if isinstance(node, ast.Call):
        name = _call_name(node)
        return (
            (name.rsplit(".", 1)[-1] in _REPR_CALLS or name.startswith("torch.return_types."))
            and all(_is_value(a) for a in node.args)
            and all(_is_value(k.value) for k in node.keywords)
        )
    return False


def _call_name(node: ast.Call) -> str:
    parts: list[str] = []
    func: ast.expr = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def drop_trailing_output(code: str) -> str:
    """Cut printed values pasted after the code: a final ``tensor([...])`` the code never defines."""
    tree = parse_python(code)
    if tree is None or len(tree.body) < 2:
        return code
    bound = _bound_names(tree)
    cut = len(tree.body)
    while cut > 1:
        stmt = tree.body[cut - 1]
        if not (
            _is_printed_value(stmt)
            and isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name)
            and stmt.value.func.id not in bound
        ):
            break
        cut -= 1
    if cut == len(tree.body):
        return code
    return "\n".join(code.split("\n")[: tree.body[cut].lineno - 1]).rstrip()


def _bound_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names
