"""Progress of long work (a sweep's legs, a bisect's steps): done out of the total, the elapsed
time and an estimate of what is left.

On a terminal one status line on stderr is rewritten in place (and cleared before any other
line is printed); elsewhere each event is one plain line on stderr; with ``--json`` nothing.
The status line is contribkit's own text (numbers and durations, cleaned), written to the raw
stderr: the terminal filter (:mod:`contribkit.core.termsafe`) would turn its carriage return
into a line break.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

import click

from contribkit.core.termsafe import clean


def clock(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    def __init__(self, what: str, *, quiet: bool = False) -> None:
        self.what = what  # "legs", "steps"
        self.quiet = quiet
        raw: TextIO | None = sys.__stderr__
        self.tty = raw is not None and raw.isatty() and sys.stderr.isatty()
        self.stream: TextIO = raw if self.tty and raw is not None else sys.stderr
        self.started = time.monotonic()
        self._shown = False

    def status(self, done: int, total: int) -> str:
        elapsed = time.monotonic() - self.started
        text = f"{done}/{total} {self.what}, {clock(elapsed)} elapsed"
        if 0 < done < total:
            text += f", ~{clock(elapsed / done * (total - done))} left"
        return text

    def advance(self, done: int, total: int, label: str) -> None:
        """``done`` of ``total`` finished; ``label`` says what just finished."""
        if self.quiet:
            return
        status = self.status(done, max(total, done))
        if self.tty:
            self.stream.write("\r\x1b[K" + clean(status, single_line=True)[:120])
            self._shown = True
        else:
            self.stream.write(f"[{status}] {clean(label, single_line=True)}\n")
        self.stream.flush()

    def echo(self, line: str) -> None:
        """A line of the result (stdout), printed under the status line, which stays last."""
        self.clear()
        click.echo(line)

    def clear(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False
