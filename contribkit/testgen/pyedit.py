"""Line-exact, syntax-aware edits of Python source (``ast`` positions, never ``ast.unparse``).

Every edit here either re-indents code it is given, or *inserts* whole lines into a file: the
original text survives byte for byte and in order, which :func:`insert_lines` checks.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from contribkit.core.astnames import dotted, source_lines
from contribkit.repro.codefacts import Edit, apply_edits
from contribkit.testgen.importedit import (
    LINE_LIMIT,
    ImportSpec,
    LineEdits,
    imports_of,
    module_bindings,
    plan_imports,
    render_imports,
    sort_key,
)

__all__ = [
    "LINE_LIMIT",
    "ImportSpec",
    "imports_of",
    "match_quotes",
    "module_bindings",
    "render_imports",
]


class EditError(Exception):
    """The source cannot take the edit (with a message for the user, and what to do)."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


def string_continuation_lines(source: str) -> set[int]:
    """1-based lines that continue a multi-line string literal: re-indenting them would change
    the string (lines inside brackets are included too, where indentation does not matter).

    Docstrings and other bare string statements are left out: they are prose, and re-indenting
    them keeps them aligned with their code.
    """
    tree = ast.parse(source)
    bare = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Constant, ast.JoinedStr)) or id(node) in bare:
            continue
        if isinstance(node, ast.Constant) and not isinstance(node.value, (str, bytes)):
            continue
        if node.end_lineno:
            lines.update(range(node.lineno + 1, node.end_lineno + 1))
    return lines


def block_at_column_zero(source: str, width: int) -> str:
    """Lines of a statement block indented by ``width`` columns (e.g. a function body), moved to
    column 0; lines inside multi-line strings are kept as they are."""
    keep = string_continuation_lines("if True:\n" + source)
    out = []
    for number, line in enumerate(source_lines(source), start=2):
        if number not in keep and line[:width].strip() == "":
            line = line[width:] if line.strip() else line.lstrip(" \t")
        out.append(line)
    return "".join(out)


def indent_block(source: str, prefix: str) -> str:
    """``source`` (valid Python) with ``prefix`` before every non-blank line outside strings."""
    keep = string_continuation_lines(source)
    out = []
    for number, line in enumerate(source_lines(source), start=1):
        out.append(line if number in keep or not line.strip() else prefix + line)
    return "".join(out)


def dedent_lines(source: str, first: int, last: int, width: int) -> str:
    """Remove ``width`` leading columns from lines ``first..last`` (1-based), outside strings."""
    keep = string_continuation_lines(source)
    out = []
    for number, line in enumerate(source_lines(source), start=1):
        if first <= number <= last and number not in keep and line[:width].strip() == "":
            line = line[width:] if line.strip() else line.lstrip(" \t")
        out.append(line)
    return "".join(out)


_PREFIX = "rRbBuU"


def _strings(source: str) -> list[tokenize.TokenInfo]:
    """The plain (not triple-quoted, not f-) string literals of ``source``."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    found = []
    for token in tokens:
        body = token.string.lstrip(_PREFIX)
        if (
            token.type == tokenize.STRING
            and body[:1] in ("'", '"')
            and body[:3] not in ("'''", '"""')
        ):
            found.append(token)
    return found


def match_quotes(code: str, file_source: str) -> str:
    """``code`` (double-quoted, as ruff format writes it) with single quotes where the file it
    goes into mostly uses them; a string holding a quote or a backslash keeps its own."""
    strings = _strings(file_source)
    single = sum(t.string.lstrip(_PREFIX).startswith("'") for t in strings)
    if single * 2 <= len(strings):
        return code
    edits = []
    for token in _strings(code):
        body = token.string.lstrip(_PREFIX)
        prefix = token.string[: len(token.string) - len(body)]
        if not body.startswith('"') or "'" in body or "\\" in body:
            continue
        (line, col), end_line = token.start, token.end[0]
        start_bytes = len(token.line[:col].encode("utf-8"))  # Edit columns are UTF-8 offsets
        end_bytes = start_bytes + len(token.string.encode("utf-8"))
        after = f"{prefix}'{body[1:-1]}'"
        edits.append(Edit(line, start_bytes, end_line, end_bytes, token.string, after))
    return apply_edits(code, edits) if edits else code


def rename(source: str, old: str, new: str) -> str:
    """Rename every use of the variable ``old`` to ``new`` (names only, never strings or attributes)."""
    tree = ast.parse(source)
    edits = [
        Edit(node.lineno, node.col_offset, node.lineno, node.col_offset + len(old), old, new)
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id == old
    ]
    return apply_edits(source, edits) if edits else source


# -- insertion -------------------------------------------------------------------------


def insert_lines(original: str, insertions: dict[int, list[str]]) -> str:
    """Insert whole lines after line ``n`` (0 = before the first line) of ``original``.

    Inserted lines take the file's line ending. The result contains ``original`` unchanged and in
    order; a missing final newline is completed only when lines go after the last line.
    """
    return edit_lines(original, LineEdits(insertions=insertions))


def edit_lines(original: str, edits: LineEdits) -> str:
    """``original`` with ``edits``: lines inserted, statements replaced by new lines. New lines
    take the file's usual line ending; every other line is kept byte for byte."""
    crlf = original.count("\r\n")
    newline = "\r\n" if crlf * 2 > original.count("\n") else "\n"  # the file's usual ending
    lines = source_lines(original)
    out: list[str] = []
    index = 0
    while index <= len(lines):
        if edits.insertions.get(index):
            if out and not out[-1].endswith(("\n", "\r")):
                out.append(newline)
            out.extend(line + newline for line in edits.insertions[index])
        if index < len(lines) and index + 1 in edits.replacements:
            last, new = edits.replacements[index + 1]
            out.extend(line + newline for line in new)
            index = last
            continue
        if index < len(lines):
            out.append(lines[index])
        index += 1
    return "".join(out)


_CLASS_BASES = re.compile(r"TestCase$|^Test")


def find_test_classes(tree: ast.Module) -> list[ast.ClassDef]:
    """Top-level classes that look like tests: named Test… or deriving from a …TestCase."""
    return [
        node
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and (
            node.name.startswith("Test")
            or any(_CLASS_BASES.search(dotted(base)) for base in node.bases)
        )
    ]


def parse_file(source: str, path: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise EditError(
            f"{path}:{exc.lineno}: syntax error: {exc.msg}",
            hint="fix the syntax error first; nothing was written",
        ) from exc


def body_indent(lines: list[str], cls: ast.ClassDef, path: str) -> str:
    """The whitespace that starts the class body's lines. A body on the ``class`` line itself
    (``class TestA(TestCase): pass``) has none: a method cannot be added by inserting lines."""
    first = cls.body[0]
    line = lines[first.lineno - 1]
    if line.encode("utf-8")[: first.col_offset].strip():  # ast columns are UTF-8 offsets
        raise EditError(
            f"{path}:{first.lineno}: the body of {cls.name} is on its `class` line, so a "
            "method cannot be added below it",
            hint=f"put the body of {cls.name} on its own indented lines first",
        )
    return line[: len(line) - len(line.lstrip(" \t"))]


def plan_insertion(
    source: str,
    path: str,
    cls: ast.ClassDef,
    tree: ast.Module,
    method: str,
    imports: list[ImportSpec],
) -> tuple[str, list[ImportSpec]]:
    """``source`` with ``method`` (source at column 0) appended to ``cls``'s body and the
    ``imports`` it lacks added to the module's import block (:func:`plan_imports`). Returns the
    new source and the imports that were added."""
    lines = source_lines(source)
    indent = body_indent(lines, cls, path)
    bound = module_bindings(tree)
    missing = sorted({spec for spec in imports if spec.bound not in bound}, key=sort_key)
    if any(spec.group == 0 for spec in missing):
        raise EditError(
            f"{path} lacks a __future__ import the test needs: "
            + ", ".join(s.statement() for s in missing if s.group == 0),
            hint="add the import by hand, or write a new file with --path",
        )
    start = min([cls.lineno, *(d.lineno for d in cls.decorator_list)])
    edits = plan_imports(lines, tree, missing, start) if missing else LineEdits()
    last = _class_end(lines, cls, indent)
    following = lines[last] if last < len(lines) else ""
    block = indent_block(method, indent).rstrip("\n").split("\n")
    edits.insert(last, ["", *block, *([""] * 2 if following.strip() else [])])
    result = edit_lines(source, edits)
    _check_kept(source, result, edits)
    return result, missing


def _class_end(lines: list[str], cls: ast.ClassDef, indent: str) -> int:
    """The class's last line: its last statement, then any comment lines indented like its body
    that follow (they read as part of the class)."""
    last = cls.body[-1].end_lineno or cls.body[-1].lineno
    number = last
    while number < len(lines):
        line = lines[number]
        if not line.strip():
            number += 1
            continue
        if line.startswith(indent) and line.strip().startswith("#"):
            number += 1
            last = number
            continue
        break
    return last


def _check_kept(original: str, result: str, edits: LineEdits) -> None:
    """Every original line but the replaced statements' is in ``result``, unchanged and in order
    (an internal guarantee)."""
    replaced = {
        n for first, (last, _) in edits.replacements.items() for n in range(first, last + 1)
    }
    remaining = iter(source_lines(result))
    for number, line in enumerate(source_lines(original), start=1):
        if number in replaced:
            continue
        stripped = line.rstrip("\r\n")
        for candidate in remaining:
            if candidate == line or (
                candidate.rstrip("\r\n") == stripped and line == stripped  # the completed last line
            ):
                break
        else:
            raise AssertionError("an edit changed the original text")
