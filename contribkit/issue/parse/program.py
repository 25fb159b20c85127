"""The issue's program: the Python blocks of one source text that form it, merged."""

from __future__ import annotations

import ast

from contribkit.issue.parse.markdown import NOT_PROGRAM_ROLES
from contribkit.issue.parse.scan import Scan, parse_python


def program(scan: Scan) -> tuple[str, list[str]]:
    """The Python blocks that form one program, merged, and notes on the blocks left out.

    Left out: blocks under env/expected/actual/workaround headings or summaries; a block after the
    first whose preceding prose calls it a workaround; a block repeating an earlier one. Imports
    repeated across blocks keep their first occurrence; nothing is reordered.
    """
    parts: list[str] = []
    notes: list[str] = []
    seen = _SeenLines()
    for block in scan.blocks:
        code = block.code
        if code.kind not in ("python", "repl") or not code.text.strip():
            continue
        where = f"the {code.kind} block at line {code.line} of the {scan.source}"
        if block.role in NOT_PROGRAM_ROLES:
            notes.append(
                f"left out {where}: its heading or summary says it is {NOT_PROGRAM_ROLES[block.role]}"
            )
        elif parts and block.after_workaround:
            notes.append(f"left out {where}: the text calls it a workaround")
        elif seen.contains(code.text):
            notes.append(f"left out {where}: it repeats an earlier block")
        else:
            parts.append(code.text)
            seen.add(code.text)
    return _merge(parts), notes


class _SeenLines:
    """The lines of the blocks kept so far, indexed by content: whether a block appears in one
    of them as whole lines is answered by checking only where its first line occurs (linear in
    the number of blocks, where comparing each block with every earlier one was quadratic)."""

    _MAX_CANDIDATES = 64

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.where: dict[str, list[int]] = {}

    def add(self, text: str) -> None:
        for line in text.strip().split("\n"):
            self.where.setdefault(line, []).append(len(self.lines))
            self.lines.append(line)
        self.lines.append("\x00")  # no match spans two blocks

    def contains(self, text: str) -> bool:
        lines = text.strip().split("\n")
        starts = self.where.get(lines[0], [])[: self._MAX_CANDIDATES]
        return any(self.lines[start : start + len(lines)] == lines for start in starts)


def _merge(parts: list[str]) -> str:
    seen: set[str] = set()
    merged: list[str] = []
    for part in parts:
        keys = _import_keys(part)
        kept = []
        for number, line in enumerate(part.split("\n")):
            key = keys.get(number)
            if key is not None:
                if key in seen:
                    continue
                seen.add(key)
            kept.append(line)
        text = "\n".join(kept).strip("\n")
        if text.strip():
            merged.append(text)
    return "\n\n".join(merged) + "\n" if merged else ""


def _import_keys(code: str) -> dict[int, str]:
    """0-based line -> canonical text, for lines that are exactly one top-level import."""
    tree = parse_python(code)
    if tree is None:
        keys = {}
        for number, line in enumerate(code.split("\n")):
            if line.startswith(("import ", "from ")):
                single = parse_python(line)
                if single is not None and len(single.body) == 1:
                    keys[number] = ast.unparse(single.body[0])
        return {n: k for n, k in keys.items() if k.startswith(("import ", "from "))}
    per_line: dict[int, int] = {}
    for stmt in tree.body:
        for number in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1):
            per_line[number] = per_line.get(number, 0) + 1
    return {
        stmt.lineno - 1: ast.unparse(stmt)
        for stmt in tree.body
        if isinstance(stmt, (ast.Import, ast.ImportFrom))
        and stmt.end_lineno == stmt.lineno
        and per_line[stmt.lineno] == 1
    }
