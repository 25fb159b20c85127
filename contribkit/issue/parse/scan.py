"""The shared types of one read source text: its blocks, its prose, the scan that holds both.

Also the one Python-parsing helper every step uses.
"""

from __future__ import annotations

import ast
import warnings as warnings_module
from dataclasses import dataclass, field

from contribkit.issue.model import CodeBlock


@dataclass
class Block:
    code: CodeBlock
    role: str
    section: int
    after_workaround: bool  # the prose just before it calls it a workaround
    after_expected: bool = False  # the prose just before introduces the expected result


@dataclass
class Prose:
    text: str  # inline text; code spans keep their backticks, soft breaks are newlines
    raw: str  # the source lines, less any traceback that starts inside them
    line: int  # 0-based
    role: str
    section: int
    heading: bool
    has_traceback: bool = False


@dataclass
class Scan:
    source: str  # "body" or "comment by @login"
    text: str
    blocks: list[Block] = field(default_factory=list)
    prose: list[Prose] = field(default_factory=list)
    section_roles: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Piece:
    kind: str
    offset: int  # 0-based line of its first line within the block's content
    text: str


def document_order(scan: Scan) -> list[Prose | Block]:
    items: list[Prose | Block] = [*scan.prose, *scan.blocks]
    return sorted(
        items, key=lambda item: item.line if isinstance(item, Prose) else item.code.line - 1
    )


def parse_python(code: str) -> ast.Module | None:
    """``ast.parse``, or None for anything it refuses (syntax, NULs, nesting, size)."""
    try:
        with warnings_module.catch_warnings():
            warnings_module.simplefilter("ignore")
            return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
