"""Line-exact, syntax-aware edits of Python source (``ast`` positions, never ``ast.unparse``).

Every edit here either re-indents code it is given, or *inserts* whole lines into a file: the
original text survives byte for byte and in order, which :func:`insert_lines` checks.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass

from contribkit.core.astnames import dotted, source_lines
from contribkit.repro.codefacts import Edit, apply_edits

_STDLIB = set(getattr(sys, "stdlib_module_names", ()))
LINE_LIMIT = 100


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


def rename(source: str, old: str, new: str) -> str:
    """Rename every use of the variable ``old`` to ``new`` (names only, never strings or attributes)."""
    tree = ast.parse(source)
    edits = [
        Edit(node.lineno, node.col_offset, node.lineno, node.col_offset + len(old), old, new)
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id == old
    ]
    return apply_edits(source, edits) if edits else source


# -- imports ---------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class ImportSpec:
    """One imported name: ``import module [as asname]`` or ``from module import name [as asname]``."""

    module: str
    name: str | None = None
    asname: str | None = None

    @property
    def bound(self) -> str:
        return self.asname or self.name or self.module.split(".")[0]

    @property
    def group(self) -> int:
        """usort's order: __future__, standard library, third party, torch (first party)."""
        top = self.module.split(".")[0]
        if top == "__future__":
            return 0
        if top in _STDLIB:
            return 1
        return 3 if top == "torch" else 2

    def statement(self) -> str:
        alias = f" as {self.asname}" if self.asname else ""
        if self.name is None:
            return f"import {self.module}{alias}"
        return f"from {self.module} import {self.name}{alias}"


def imports_of(node: ast.Import | ast.ImportFrom) -> list[ImportSpec]:
    if isinstance(node, ast.Import):
        return [ImportSpec(a.name, None, a.asname) for a in node.names]
    module = "." * node.level + (node.module or "")
    return [ImportSpec(module, a.name, a.asname) for a in node.names]


def render_imports(specs: list[ImportSpec]) -> str:
    """An import block: groups separated by a blank line, one ``from`` line per module."""
    blocks = []
    for group in sorted({s.group for s in specs}):
        members = sorted(set(s for s in specs if s.group == group), key=_sort_key)
        lines: list[str] = []
        by_module: dict[str, list[ImportSpec]] = {}
        for spec in members:
            if spec.name is None:
                lines.append(spec.statement())
            else:
                by_module.setdefault(spec.module, []).append(spec)
        for module, names in by_module.items():
            parts = [s.statement().split(" import ", 1)[1] for s in names]
            lines.append(_from_line(module, parts))
        blocks.append("\n".join(sorted(lines, key=_line_key)))
    return "\n\n".join(blocks)


def _sort_key(spec: ImportSpec) -> tuple[int, str, str]:
    return (spec.group, spec.module.lower(), (spec.name or "").lower())


def _line_key(line: str) -> tuple[str, int]:
    module = line.split()[1]
    return (module.lower(), 0 if line.startswith("import ") else 1)


def _from_line(module: str, names: list[str]) -> str:
    one = f"from {module} import {', '.join(names)}"
    if len(one) <= LINE_LIMIT:
        return one
    inner = "".join(f"    {name},\n" for name in names)
    return f"from {module} import (\n{inner})"


def module_bindings(tree: ast.Module) -> dict[str, str]:
    """Names bound at module scope by imports (including inside top-level if/try), with the
    import statement each came from."""
    bound: dict[str, str] = {}
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for spec in imports_of(node):
                bound.setdefault(spec.bound, spec.statement())
        elif isinstance(node, (ast.If, ast.Try)):
            stack.extend(node.body + node.orelse)
            if isinstance(node, ast.Try):
                stack.extend(node.finalbody)
                for handler in node.handlers:
                    stack.extend(handler.body)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.setdefault(node.name, f"{type(node).__name__} {node.name}")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, "assignment")
    return bound


# -- insertion -------------------------------------------------------------------------


def insert_lines(original: str, insertions: dict[int, list[str]]) -> str:
    """Insert whole lines after line ``n`` (0 = before the first line) of ``original``.

    Inserted lines take the file's line ending. The result contains ``original`` unchanged and in
    order; a missing final newline is completed only when lines go after the last line.
    """
    crlf = original.count("\r\n")
    newline = "\r\n" if crlf * 2 > original.count("\n") else "\n"  # the file's usual ending
    lines = source_lines(original)
    out: list[str] = []
    for index in range(len(lines) + 1):
        if insertions.get(index):
            if out and not out[-1].endswith(("\n", "\r")):
                out.append(newline)
            out.extend(line + newline for line in insertions[index])
        if index < len(lines):
            out.append(lines[index])
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
    ``imports`` it lacks added after the module's import block. Returns the new source and the
    imports that were added."""
    lines = source_lines(source)
    indent = body_indent(lines, cls, path)
    bound = module_bindings(tree)
    missing = sorted({spec for spec in imports if spec.bound not in bound}, key=_sort_key)
    if any(spec.group == 0 for spec in missing):
        raise EditError(
            f"{path} lacks a __future__ import the test needs: "
            + ", ".join(s.statement() for s in missing if s.group == 0),
            hint="add the import by hand, or write a new file with --path",
        )
    insertions: dict[int, list[str]] = {}
    if missing:
        before_class = [
            node
            for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno < cls.lineno
        ]
        if before_class:
            after = before_class[-1].end_lineno or before_class[-1].lineno
        else:  # no import yet: before the first statement after the docstring
            first = tree.body[0]
            docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            after = (first.end_lineno or 0) if docstring else first.lineno - 1
        insertions[after] = [spec.statement() for spec in missing]
    last = _class_end(lines, cls, indent)
    following = lines[last] if last < len(lines) else ""
    block = indent_block(method, indent).rstrip("\n").split("\n")
    insertions.setdefault(last, [])
    insertions[last] = [*insertions[last], "", *block, *([""] * 2 if following.strip() else [])]
    result = insert_lines(source, insertions)
    _check_pure_insertion(source, result)
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


def _check_pure_insertion(original: str, result: str) -> None:
    """Every original line is in ``result``, unchanged and in order (an internal guarantee)."""
    remaining = iter(source_lines(result))
    for line in source_lines(original):
        stripped = line.rstrip("\r\n")
        for candidate in remaining:
            if candidate == line or (
                candidate.rstrip("\r\n") == stripped and line == stripped  # the completed last line
            ):
                break
        else:
            raise AssertionError("an insertion changed the original text")
