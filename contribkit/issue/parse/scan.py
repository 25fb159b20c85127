"""The shared types of one read source text: its blocks, its prose, the scan that holds both.

Also the one Python-parsing helper every step uses, and :func:`parsing_once`, under which it
parses each distinct text once (the steps ask about the same block several times: does it parse,
is it only printed values, does it end in pasted output, which imports does it hold).
"""

from __future__ import annotations

import ast
import gc
import warnings as warnings_module
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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


# source text -> its tree (None: it does not parse), while a parsing_once() block is open.
_PARSED: ContextVar[dict[str, ast.Module | None] | None] = ContextVar("parsed", default=None)


@contextmanager
def parsing_once() -> Iterator[None]:
    """Within the block, :func:`parse_python` parses each distinct text once and hands back the
    same tree after (callers only read trees, never change them). The trees are dropped when the
    block ends, so memory is held for one issue's texts only. The warnings ``ast.parse`` gives
    about the issue's code (invalid escapes, ``is`` with a literal) are silenced for the whole
    block, once, rather than around each parse.

    The cyclic garbage collector is paused meanwhile: a parse makes many small objects that
    reference counting frees (trees hold no cycles), and each automatic collection would scan
    every tree kept so far again (a quarter of the time on an issue of 20,000 blocks)."""
    token = _PARSED.set({})
    collecting = gc.isenabled()
    gc.disable()
    try:
        with warnings_module.catch_warnings():
            warnings_module.simplefilter("ignore")
            yield
    finally:
        _PARSED.reset(token)
        if collecting:
            gc.enable()


def parse_python(code: str) -> ast.Module | None:
    """``ast.parse``, or None for anything it refuses (syntax, NULs, nesting, size); inside
    :func:`parsing_once`, each distinct text is parsed once."""
    memo = _PARSED.get()
    if memo is None:
        with warnings_module.catch_warnings():
            warnings_module.simplefilter("ignore")
            return _parse(code)
    if code not in memo:
        memo[code] = _parse(code)
    return memo[code]


def _parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
