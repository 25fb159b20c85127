"""Printing results: rich tables on a terminal, plain stable text when piped, JSON on request."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

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
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=str))


def print_table(
    columns: Sequence[str], rows: Sequence[Sequence[str]], title: str | None = None
) -> None:
    """A table: rich (colour honours NO_COLOR) on a TTY, else tab-free aligned plain text."""
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
    if title:
        print(title)
    widths = [max(len(str(c)) for c in col) for col in zip(columns, *rows, strict=True)]
    for row in (columns, *rows):
        cells = [str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)]
        print("  ".join(cells).rstrip())


def _styled(cell: str) -> str:
    from rich.markup import escape

    word = cell.split(" ", 1)[0]
    style = STATUS_STYLES.get(word)
    return f"[{style}]{escape(cell)}[/]" if style else escape(cell)
