"""Names and lines as ``ast`` sees them: one small, stdlib-only module, cheap enough for the
hooks to import."""

from __future__ import annotations

import ast
import re


def dotted(node: ast.AST) -> str:
    """``a.b.c`` for a Name/Attribute chain, "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


_LINE_END = re.compile(r"\r\n|\r|\n")


def qualified(node: ast.AST, aliases: dict[str, str]) -> str:
    """``dotted(node)`` with its first name resolved through ``aliases`` (``np.max`` ->
    ``numpy.max`` after ``import numpy as np``)."""
    name = dotted(node)
    head, dot, rest = name.partition(".")
    return aliases[head] + dot + rest if head in aliases else name


def source_lines(text: str) -> list[str]:
    """``text``'s lines with their endings, split as Python's tokenizer does: on ``\\n``,
    ``\\r\\n`` and ``\\r`` only (``str.splitlines`` also splits on form feeds, U+2028 and
    others, which would shift ``ast`` line numbers)."""
    lines, start = [], 0
    for match in _LINE_END.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines
