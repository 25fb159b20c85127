"""Tidying an issue's code into a test body a reviewer accepts: no ``print``, no statement that
does nothing, no commented-out output, and the repro's check as ``self.assert…`` calls.

Line-based, on ``ast`` positions: a statement is changed only when it has its lines to itself.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Iterator

from contribkit.core.astnames import source_lines
from contribkit.testgen.pyedit import string_continuation_lines

# Calls whose only effect is their value (a print of them can go whole).
VALUE_CALLS = {
    "torch.allclose",
    "torch.equal",
    "torch.isclose",
    "abs",
    "max",
    "min",
    "sum",
    "mean",
    "item",
    "cpu",
    "norm",
    "tolist",
    "all",
    "any",
    "len",
    "str",
    "repr",
    "float",
    "int",
    "type",
    "size",
    "dim",
    "format",
}
# A comment line that shows output rather than explains: a tensor or array, a list of numbers, a
# traceback or error line, "Output:", a prompt, a bare value.
_OUTPUT = re.compile(
    r"^#+\s*(?:tensor\(|Tensor\(|array\(|torch\.Size\(|Parameter containing|\[+\s*[-+]?[\d.]"
    r"|\[+\s*(?:True|False|None|nan|inf)\b"
    r"|[-+]?\d+(?:\.\d*)?(?:e[-+]?\d+)?\s*[,)\]]*\s*$|Traceback|File \"|[\w.]*(?:Error|Exception)\b"
    r"|(?:Output|Outputs|Result|Results|Prints?|Out)\s*(?:\[\d*\])?\s*:|>>>"
    r"|(?:True|False|nan|inf|None)\s*$|grad_fn=|device=)",
    re.IGNORECASE,
)


def call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Name) and func.value.id == "torch":
            return f"torch.{func.attr}"
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _blocks(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _owns_lines(node: ast.stmt, lines: list[str]) -> bool:
    """Nothing but whitespace (and a trailing comment) shares the statement's lines."""
    end = node.end_lineno or node.lineno
    before = lines[node.lineno - 1].encode("utf-8")[: node.col_offset]
    after = lines[end - 1].encode("utf-8")[node.end_col_offset or 0 :]
    return not before.strip() and not after.split(b"#", 1)[0].strip()


def replace_statements(code: str, pick: Callable[[ast.stmt], list[str] | None]) -> str:
    """``code`` with each statement that owns its lines and for which ``pick`` gives lines
    replaced by them (none: deleted; a block left empty gets ``pass``)."""
    tree = ast.parse(code)
    lines = source_lines(code)
    changes: dict[int, tuple[int, list[str]]] = {}
    for block in _blocks(tree):
        picked = [(node, pick(node)) for node in block if _owns_lines(node, lines)]
        chosen = [(node, new) for node, new in picked if new is not None]
        if not chosen:
            continue
        emptied = len(chosen) == len(block) and not any(new for _, new in chosen)
        for index, (node, new) in enumerate(chosen):
            indent = lines[node.lineno - 1][: node.col_offset]
            text = ["pass"] if emptied and index == 0 else new or []
            changes[node.lineno] = (node.end_lineno or node.lineno, [indent + t for t in text])
    if not changes:
        return code
    out: list[str] = []
    number = 1
    while number <= len(lines):
        if number in changes:
            last, new = changes[number]
            out.extend(line + "\n" for line in new)
            number = last + 1
            continue
        out.append(lines[number - 1])
        number += 1
    return "".join(out)


def _effects(node: ast.AST) -> bool:
    """The expression may do something beyond giving a value (a call of consequence, an index
    that may raise, an await)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and call_name(sub) not in VALUE_CALLS:
            return True
        if isinstance(sub, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Subscript)):
            return True
    return False


def _print_replacement(code: str) -> Callable[[ast.stmt], list[str] | None]:
    def pick(node: ast.stmt) -> list[str] | None:
        if not (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and call_name(node.value) == "print"
        ):
            return None
        kept = [a for a in node.value.args if not isinstance(a, ast.Starred) and _effects(a)]
        return [ast.get_source_segment(code, a) or ast.unparse(a) for a in kept]

    return pick


def drop_prints(code: str) -> str:
    """Every ``print(...)`` statement goes; an argument that calls something of consequence
    stays as a statement of its own (the call may be what raises)."""
    return replace_statements(code, _print_replacement(code))


def drop_no_op_expressions(code: str) -> str:
    """Expression statements that do nothing (a bare name, attribute, constant or comparison
    without calls) go."""

    def pick(node: ast.stmt) -> list[str] | None:
        return [] if isinstance(node, ast.Expr) and not _effects(node.value) else None

    return replace_statements(code, pick)


def drop_output_comments(code: str) -> str:
    """Runs of whole-line comments that show output (tensors, numbers, tracebacks, "Output:")
    go, and so do such comments at the end of a line of code (``print(x)  # tensor([1.])``);
    comments that explain stay."""
    keep = string_continuation_lines(code)
    comment_lines: set[int] = set()
    trailing: dict[int, int] = {}  # line -> the column its output comment starts at
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type != tokenize.COMMENT:
                continue
            if not token.line[: token.start[1]].strip():
                comment_lines.add(token.start[0])
            elif _OUTPUT.match(token.string.strip()):
                trailing[token.start[0]] = token.start[1]
    except (tokenize.TokenError, SyntaxError):
        return code
    lines = source_lines(code)
    for number, column in trailing.items():
        line = lines[number - 1]
        lines[number - 1] = line[:column].rstrip() + line[len(line.rstrip("\r\n")) :]
    drop: set[int] = set()
    run: list[int] = []
    for number in [*range(1, len(lines) + 1), 0]:
        if number in comment_lines and number not in keep:
            run.append(number)
            continue
        if any(_OUTPUT.match(lines[n - 1].strip()) for n in run):
            drop.update(run)
        run = []
    return "".join(line for n, line in enumerate(lines, 1) if n not in drop)


_RENAMED = {"check_dtype": "exact_dtype"}


def _assertion(code: str, node: ast.stmt) -> list[str] | None:
    """One check statement as a ``self.assert…`` call, or None to keep it."""

    def seg(expr: ast.AST) -> str:
        return ast.get_source_segment(code, expr) or ast.unparse(expr)

    if isinstance(node, ast.Assert):
        message = [seg(node.msg)] if node.msg else []
        test = node.test
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Eq, ast.Is))
        ):
            how = "assertEqual" if isinstance(test.ops[0], ast.Eq) else "assertIs"
            pair = [test.left, test.comparators[0]]
            # TestCase.assertEqual compares floats within a tolerance; `==` does not.
            exact = ["atol=0", "rtol=0"] if how == "assertEqual" and _may_be_float(pair) else []
            args = [seg(test.left), seg(test.comparators[0]), *message, *exact]
        else:
            how, args = "assertTrue", [seg(test), *message]
        return [f"self.{how}({', '.join(args)})"]
    if isinstance(node, ast.If):
        return _raise_check(code, node)
    if not (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and call_name(node.value) == "assert_close"
        and len(node.value.args) == 2
    ):
        return None
    call = node.value
    keywords = {k.arg: seg(k.value) for k in call.keywords if k.arg}
    if len(keywords) != len(call.keywords) or ("atol" in keywords) != ("rtol" in keywords):
        return None  # assertEqual takes atol and rtol together
    if keywords.get("check_device") not in (None, "False") or not set(keywords) <= {
        "atol",
        "rtol",
        "check_device",
        "check_dtype",
    }:
        return None
    args = [seg(a) for a in call.args]
    # check_device=False is assertEqual's default (exact_device=False): left out.
    args += [f"{_RENAMED.get(k, k)}={v}" for k, v in keywords.items() if k != "check_device"]
    return [f"self.assertEqual({', '.join(args)})"]


_NOT_FLOAT_ATTRS = {"shape", "dtype", "device", "ndim", "layout", "is_cuda", "requires_grad"}
_NOT_FLOAT_CALLS = {
    "len",
    "size",
    "dim",
    "numel",
    "str",
    "repr",
    "type",
    "isinstance",
    "int",
    "bool",
    "torch.Size",
}
_DTYPES = {
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "long",
    "int",
    "float16",
    "half",
    "bfloat16",
    "float32",
    "float",
    "float64",
    "double",
    "complex64",
    "complex128",
}


def _may_be_float(pair: list[ast.expr]) -> bool:
    """Either side may be a float (or a tensor of them): only two sides that are both plainly
    something else (ints, shapes, dtypes, lengths, strings, bools…) compare without ``atol=0,
    rtol=0``. One plain side is not enough: ``assertEqual(tensor(2.4e-07), 0)`` passes within
    the default tolerance though ``==`` is False."""

    def plain(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return not isinstance(node.value, (float, complex))
        if isinstance(node, ast.UnaryOp):
            return plain(node.operand)
        if isinstance(node, (ast.Tuple, ast.List)):
            return all(plain(e) for e in node.elts)
        if isinstance(node, ast.Subscript):  # x.shape[0]
            return plain(node.value)
        if isinstance(node, ast.Attribute):
            torch_dtype = isinstance(node.value, ast.Name) and node.value.id == "torch"
            return node.attr in _NOT_FLOAT_ATTRS or (torch_dtype and node.attr in _DTYPES)
        return isinstance(node, ast.Call) and call_name(node) in _NOT_FLOAT_CALLS

    return not all(plain(node) for node in pair)


def _raise_check(code: str, node: ast.If) -> list[str] | None:
    """``if COND: raise X("why")`` (nothing else, no else) as ``self.assertFalse(COND, "why")``."""
    if node.orelse or len(node.body) != 1 or not isinstance(node.body[0], ast.Raise):
        return None
    exc = node.body[0].exc
    if exc is None:
        return None
    args = exc.args if isinstance(exc, ast.Call) else []
    message = ast.get_source_segment(code, args[0]) if len(args) == 1 else None
    test = ast.get_source_segment(code, node.test) or ast.unparse(node.test)
    return [f"self.assertFalse({', '.join(filter(None, [test, message]))})"]


# Context managers that catch what their body raises.
_CATCHING = {"raises", "assertRaises", "assertRaisesRegex", "suppress"}
_Span = tuple[int, int]


def _span(nodes: list[ast.stmt]) -> _Span:
    return nodes[0].lineno, nodes[-1].end_lineno or nodes[-1].lineno


def _binds_self(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    args = node.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return any(a is not None and a.arg == "self" for a in params)


def _kept_spans(tree: ast.AST) -> tuple[list[_Span], list[_Span]]:
    """Where no check is rewritten (a class; a function whose ``self`` is its own), and where
    ``if …: raise`` checks are not (a function, a ``try`` body, a ``with`` that catches): an
    exception raised there may be caught by the code itself, and an assertion would not be."""
    no_checks: list[_Span] = []
    no_raises: list[_Span] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            no_checks.append((node.lineno, node.end_lineno or node.lineno))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            (no_checks if _binds_self(node) else no_raises).append(_span(node.body))
        elif (body := _catching_body(node)) is not None:
            no_raises.append(_span(body))
    return no_checks, no_raises


def _catching_body(node: ast.AST) -> list[ast.stmt] | None:
    """The body of a ``try`` (or ``try``/``except*``), or of a ``with`` such as
    ``pytest.raises(…)``: what its own handlers catch."""
    if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
        body: list[ast.stmt] = getattr(node, "body")  # noqa: B009 (ast.TryStar: Python 3.11+)
        return body
    if isinstance(node, (ast.With, ast.AsyncWith)) and any(
        isinstance(item.context_expr, ast.Call) and call_name(item.context_expr) in _CATCHING
        for item in node.items
    ):
        return node.body
    return None


def as_assertions(code: str) -> str:
    """The repro's check with its ``assert`` statements, ``torch.testing.assert_close`` calls
    and ``if …: raise X(…)`` checks as TestCase assertions (``self.assertEqual`` compares
    tensors as ``assert_close`` does).

    Statements in a class the code defines, or in a function with a ``self`` of its own, stay:
    ``self`` there is not the test. ``if …: raise`` checks are rewritten only outside the
    code's functions, ``try`` bodies and ``with pytest.raises(…)``-like blocks, where an
    ``except`` may expect that very exception (``self.assert…`` raises AssertionError, as
    ``assert`` does, so asserts there are rewritten).
    """
    no_checks, no_raises = _kept_spans(ast.parse(code))

    def within(spans: list[_Span], node: ast.stmt) -> bool:
        return any(start <= node.lineno <= end for start, end in spans)

    def pick(node: ast.stmt) -> list[str] | None:
        if within(no_checks, node) or (isinstance(node, ast.If) and within(no_raises, node)):
            return None
        return _assertion(code, node)

    return replace_statements(code, pick)
