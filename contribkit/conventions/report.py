"""The report every rule check prints: the hooks, ``contribkit pr --check`` and the ``submit`` gate.

One violation per line in the gitlint style, led by its severity,
``LOCATION: warning CK101 title-too-long: title is 95 characters (…), limit 100 ("…")`` or
``LOCATION: error CK301 breakpoint: breakpoint() call``, each followed by one fix hint, then a
summary that says whether anything blocks, and the recovery command once. Colour only on a TTY, and never with ``NO_COLOR``.
Standard library only (and light contribkit modules): the hooks import this on every commit.
"""

from __future__ import annotations

import os
from collections.abc import Collection

from contribkit.conventions.rules import Violation
from contribkit.core.config import REPO_CONFIG_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is slow to import; annotations only
    from typing import TextIO


class Findings:
    __slots__ = ("output", "recovery", "violations")

    def __init__(
        self,
        violations: list[Violation] | None = None,
        recovery: str | None = None,
        output: str = "",
    ) -> None:
        self.violations = [] if violations is None else violations
        self.recovery = recovery  # the command that gets the user back on track
        self.output = output  # a tool's own output, printed before the violations


def use_color(choice: str, stream: TextIO) -> bool:
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return stream.isatty()


def _paint(text: str, code: str, color: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if color else text


def format_violation(v: Violation, color: bool = False, strict: bool = False) -> str:
    """``LOCATION: error CK301 breakpoint: message`` (``warning`` for one that does not block)."""
    location = ":".join(str(p) for p in (v.path, v.line) if p is not None)
    blocks = v.blocks(strict)
    severity = "error" if blocks else "warning"
    tag = _paint(f"{severity} {v.rule.id} {v.rule.slug}", "1;31" if blocks else "1;33", color)
    return f"{location + ': ' if location else ''}{tag}: {v.message}"


def quote(text: str, limit: int = 60, tail: bool = False) -> str:
    """``("text")`` for a violation message, shortened to ``limit`` characters (keeping the end
    when ``tail``)."""
    text = text.strip()
    if len(text) > limit:
        text = "…" + text[-(limit - 1) :].lstrip() if tail else text[: limit - 1].rstrip() + "…"
    return f'("{text}")'


def write_report(
    source: str,
    findings: Findings,
    color: bool,
    out: TextIO,
    disabled: Collection[str] = (),
    strict: bool = False,
) -> int:
    """Print the violations whose rules are not ``disabled``; 1 if any blocks, else 0.

    ``source`` names the checker in the summary line (a hook id, or ``contribkit pr --check``).
    A warning blocks only when ``strict`` (``hooks.strict``).
    """
    shown = [v for v in findings.violations if v.rule.id not in disabled]
    if not shown:
        return 0
    if findings.output:
        print(findings.output.rstrip(), file=out)
    for v in shown:
        print(format_violation(v, color, strict), file=out)
        print(_paint(f"    hint: {v.fix}", "2", color), file=out)
    errors = sum(v.blocks(strict) for v in shown)
    warnings = len(shown) - errors
    counts = ", ".join(
        f"{n} {word}{'s' if n != 1 else ''}"
        for n, word in ((errors, "error"), (warnings, "warning"))
        if n
    )
    summary = f"{source}: {counts}."
    if not errors:
        summary += " Warnings do not block (hooks.strict = true makes them errors)."
    elif findings.recovery:
        summary += f" To recover: {findings.recovery}"
    print(summary, file=out)
    print(
        f'To switch a rule off: hooks.disable = ["{shown[0].rule.id}"] in {REPO_CONFIG_NAME}, '
        "then contribkit config --trust",
        file=out,
    )
    return 1 if errors else 0
