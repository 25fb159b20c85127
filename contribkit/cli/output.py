"""Printing results: rich tables on a terminal, plain stable text when piped, JSON on request."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import click

from contribkit.core.termsafe import clean

STATUS_STYLES = {
    "OK": "green",
    "PASS": "green",
    "NOT_REPRODUCED": "green",
    "WARN": "yellow",
    "SKIP": "yellow",
    "NOT_AVAILABLE": "dim",
    "FAIL": "bold red",
    "REPRODUCED": "bold red",
    "ERROR": "bold red",
    "TIMEOUT": "bold red",
}


def use_rich() -> bool:
    """Tables and colour follow the one colour rule the hooks' reports follow too: a terminal,
    without ``NO_COLOR`` or ``TERM=dumb``."""
    from contribkit.conventions.report import use_color

    return use_color("auto", sys.stdout)


def say(text: Any = "", *, err: bool = False, nl: bool = True, file: Any = None) -> None:
    """``click.echo`` for what a command prints for a person: it may quote an issue (title,
    signature, verdict detail), a child's output or a fork's files, so it goes through the one
    terminal filter (:func:`~contribkit.core.termsafe.clean`: no control character, escape
    sequence or bidi override; lines kept) whether stdout is a terminal, a pipe or a file.
    A file a command writes to stdout on request (``repro --stdout``) goes out as written."""
    click.echo(clean(text), err=err, nl=nl, file=file)


def say_lines(lines: Sequence[Any], *, err: bool = False) -> None:
    """:func:`say` for each of ``lines``, written at once: each line is cleaned on its own (an
    unterminated escape sequence ends with its line), and the stream filters (redaction, the
    terminal guard) pass over the text once, not once a line. Nothing for no lines."""
    if lines:
        click.echo("\n".join(clean(line) for line in lines), err=err)


def print_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, default=str))


def print_table(
    columns: Sequence[str], rows: Sequence[Sequence[str]], title: str | None = None
) -> None:
    """A table: rich when :func:`use_rich`, else tab-free aligned plain text."""
    rows = [[clean(cell, single_line=True) for cell in row] for row in rows]
    if use_rich():
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, title_justify="left", show_lines=False)
        for col in columns:
            table.add_column(col, overflow="fold")
        for row in rows:
            table.add_row(*(_styled(cell) for cell in row))
        Console().print(table)
        return
    lines = [clean(title, single_line=True)] if title else []
    widths = [max(len(str(c)) for c in col) for col in zip(columns, *rows, strict=True)]
    for row in (columns, *rows):
        cells = [str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)]
        lines.append("  ".join(cells).rstrip())
    click.echo("\n".join(lines))  # one write: each line costs the stream filters a pass


def _styled(cell: str) -> str:
    from rich.markup import escape

    word = cell.split(" ", 1)[0]
    style = STATUS_STYLES.get(word)
    return f"[{style}]{escape(cell)}[/]" if style else escape(cell)
