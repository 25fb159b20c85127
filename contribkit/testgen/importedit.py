"""Imports of a test file: what a test needs (:class:`ImportSpec`), a new file's import block
(:func:`render_imports`), and adding imports to an existing file as its author would
(:func:`plan_imports`): a name joins the file's own ``from X import …`` statement (in the order
the file keeps it), and a new statement goes into the block of its kind (standard library, third
party, torch) at its sorted place.

Line-exact, like :mod:`contribkit.testgen.pyedit`: the edits are whole lines inserted, plus one
rewritten statement per module that gains a name in a one-line ``from`` import; a parenthesized
multi-line import gains a line and keeps every other.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

_STDLIB = set(getattr(sys, "stdlib_module_names", ()))
LINE_LIMIT = 100


# -- import specs ---------------------------------------------------------------------------


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
        members = sorted(set(s for s in specs if s.group == group), key=sort_key)
        lines: list[str] = []
        by_module: dict[str, list[ImportSpec]] = {}
        for spec in members:
            if spec.name is None:
                lines.append(spec.statement())
            else:
                by_module.setdefault(spec.module, []).append(spec)
        for module, names in by_module.items():
            parts = [s.statement().split(" import ", 1)[1] for s in names]
            lines.append(from_line(module, parts))
        blocks.append("\n".join(sorted(lines, key=_line_key)))
    return "\n\n".join(blocks)


def sort_key(spec: ImportSpec) -> tuple[int, str, str]:
    return (spec.group, spec.module.lower(), (spec.name or "").lower())


def _line_key(line: str) -> tuple[str, int]:
    module = line.split()[1]
    return (module.lower(), 0 if line.startswith("import ") else 1)


def from_line(module: str, names: list[str]) -> str:
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


# -- adding imports to a file ----------------------------------------------------------


@dataclass
class LineEdits:
    """Whole-line edits of a file: lines inserted after line ``n`` (0: before the first), and
    statements replaced (first line -> (last line, the new lines))."""

    insertions: dict[int, list[str]] = field(default_factory=dict)
    replacements: dict[int, tuple[int, list[str]]] = field(default_factory=dict)

    def insert(self, after: int, lines: list[str]) -> None:
        self.insertions.setdefault(after, []).extend(lines)


def _isort_key(name: str) -> tuple[int, str]:
    """isort's default order of imported names: CONSTANTS, Classes, functions."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return kind, name.lower()


# The orders a file's imported names may follow, in the order they are tried (usort, PyTorch's
# sorter, first). A name list that follows none gets new names at its end.
SortKey = Callable[[str], Any]
NAME_ORDERS: list[SortKey] = [str.lower, lambda name: name, _isort_key]


def name_order(names: list[str]) -> SortKey | None:
    """The order the file keeps ``names`` in (None: unsorted). One name or none: usort's."""
    for key in NAME_ORDERS:
        keys = [key(n) for n in names]
        if all(a <= b for a, b in pairwise(keys)):
            return key
    return None


def _alias_text(alias: ast.alias) -> str:
    return alias.name + (f" as {alias.asname}" if alias.asname else "")


def _position(names: list[str], new: str, key: SortKey | None) -> int:
    """Where ``new`` goes among ``names``: its sorted place, or the end of an unsorted list."""
    if key is None:
        return len(names)
    return sum(1 for n in names if key(n) <= key(new))


def _parenthesized(lines: list[str], node: ast.ImportFrom) -> bool:
    """``from X import (`` then one ``name,`` per line, then ``)``: a name is a new line."""
    end = node.end_lineno or node.lineno
    own = lines[node.lineno - 1 : end]
    if len(own) != len(node.names) + 2:
        return False
    if not own[0].rstrip().endswith("(") or own[-1].strip() != ")":
        return False
    return all(
        line.split("#", 1)[0].strip() == _alias_text(alias) + ","
        for line, alias in zip(own[1:-1], node.names, strict=True)
    )


def _extend(lines: list[str], node: ast.ImportFrom, new: list[str], edits: LineEdits) -> bool:
    """Add ``new`` names to the file's ``from`` statement ``node``; False when it cannot take
    them without touching more than the statement (a trailing comment, a ``;``)."""
    names = [_alias_text(a) for a in node.names]
    key = name_order([a.name for a in node.names])
    end = node.end_lineno or node.lineno
    if _parenthesized(lines, node):
        first_name = lines[node.lineno]
        indent = first_name[: len(first_name) - len(first_name.lstrip())]
        for name in sorted(new, key=lambda n: _position(names, n, key)):
            edits.insert(node.lineno + _position(names, name, key), [f"{indent}{name},"])
        return True
    own = lines[node.lineno - 1 : end]
    text = "".join(own).rstrip()
    if "#" in text or ";" in text or node.col_offset:
        return False
    merged = list(names)
    for name in new:
        merged.insert(_position(merged, name, key), name)
    edits.replacements[node.lineno] = (end, from_line(node.module or "", merged).split("\n"))
    return True


def _group(node: ast.Import | ast.ImportFrom) -> int:
    return imports_of(node)[0].group


def _module_key(node: ast.Import | ast.ImportFrom | ImportSpec) -> str:
    if isinstance(node, ImportSpec):
        return node.module.lower()
    if isinstance(node, ast.Import):
        return node.names[0].name.lower()
    return ("." * node.level + (node.module or "")).lower()


def _place_group(
    tree: ast.Module,
    imports: list[ast.Import | ast.ImportFrom],
    statements: list[list[str]],
    group: int,
    edits: LineEdits,
) -> None:
    """New statements of one group: each among the file's imports of that group, at its sorted
    place; without any, as a block of their own before the next group's (or after the last)."""
    same = [n for n in imports if _group(n) == group]
    if same:
        for statement in statements:
            module = statement[0].split()[1].lower()
            later = [n for n in same if _module_key(n) > module]
            after = later[0].lineno - 1 if later else same[-1].end_lineno or same[-1].lineno
            edits.insert(after, statement)
        return
    block = [line for statement in statements for line in statement]
    higher = [n for n in imports if _group(n) > group]
    if higher:
        edits.insert(higher[0].lineno - 1, [*block, ""])
    elif imports:
        edits.insert(imports[-1].end_lineno or imports[-1].lineno, ["", *block])
    else:  # no import yet: before the first statement after the docstring
        first = tree.body[0]
        docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
        edits.insert((first.end_lineno or 0) if docstring else first.lineno - 1, block)


def plan_imports(
    lines: list[str], tree: ast.Module, missing: list[ImportSpec], before: int
) -> LineEdits:
    """The edits that add ``missing`` to a file whose top-level imports before line ``before``
    (its first test class) are the import block."""
    imports: list[ast.Import | ast.ImportFrom] = [
        n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) and n.lineno < before
    ]
    edits = LineEdits()
    by_module: dict[str, list[ImportSpec]] = {}
    for spec in missing:
        by_module.setdefault(spec.module, []).append(spec)
    fresh: dict[int, list[ImportSpec]] = {}
    for module, specs in by_module.items():
        named = [s for s in specs if s.name is not None]
        home = next(
            (
                n
                for n in imports
                if isinstance(n, ast.ImportFrom)
                and n.level == 0
                and n.module == module
                and all(a.name != "*" for a in n.names)
            ),
            None,
        )
        texts = [s.statement().split(" import ", 1)[1] for s in named]
        if home is not None and named and _extend(lines, home, texts, edits):
            specs = [s for s in specs if s.name is None]
        for spec in specs:
            fresh.setdefault(spec.group, []).append(spec)
    for group, specs in sorted(fresh.items()):
        _place_group(tree, imports, _statements(specs), group, edits)
    return edits


def _statements(specs: list[ImportSpec]) -> list[list[str]]:
    """One statement (its lines) per plain import and per ``from`` module, sorted by module."""
    out: list[tuple[str, str]] = []
    by_module: dict[str, list[str]] = {}
    for spec in sorted(specs, key=lambda s: (_module_key(s), (s.name or "").lower())):
        if spec.name is None:
            out.append((_module_key(spec), spec.statement()))
        else:
            by_module.setdefault(spec.module, []).append(spec.statement().split(" import ", 1)[1])
    for module, names in by_module.items():
        out.append((module.lower(), from_line(module, names)))
    return [text.split("\n") for _, text in sorted(out)]
