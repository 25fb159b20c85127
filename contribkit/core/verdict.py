"""Reading a repro's verdict back: the one parser of the contract that ``target/reprolib.py`` prints.

The last line a repro prints is ``contribkit-verdict: <VERDICT> [<oracle>] <detail>`` (or, with
``--json``, one JSON object with ``verdict`` and ``detail``). ``run`` reads a leg's output with
:func:`parse_verdict`; ``debug`` finds the last verdict line in a log with :func:`find_verdict`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from typing import Any

from contribkit.core.errors import BadInput
from contribkit.target.reproexpect import EXPECT_AUTO, parse_expect
from contribkit.target.reprolib import VERDICT_EXIT, VERDICT_PREFIX
from contribkit.target.reprotrace import EVIDENCE_PREFIX

# The verdict runtime a repro loads from its own folder, beside repro.py (``repro.plan`` writes
# it; every engine that ships a repro ships it too).
RUNTIME_FILE = "_contribkit_runtime.py"


def verdict_of_line(line: str) -> tuple[str, str] | None:
    """The verdict word and detail of one ``contribkit-verdict:`` line, else None."""
    line = line.strip()
    if not line.startswith(VERDICT_PREFIX):
        return None
    word, _, detail = line[len(VERDICT_PREFIX) :].strip().partition(" ")
    return (word, detail.strip()) if word in VERDICT_EXIT else None


def last_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def parse_verdict(output: str) -> tuple[str, str] | None:
    """The verdict word and detail from a repro's last line (text or ``--json`` form)."""
    line = last_line(output)
    if line.startswith("{"):
        with contextlib.suppress(ValueError):
            data = json.loads(line)
            if isinstance(data, dict) and data.get("verdict") in VERDICT_EXIT:
                return str(data["verdict"]), str(data.get("detail", ""))
        return None
    return verdict_of_line(line)


def parse_evidence(output: str) -> dict[str, Any] | None:
    """The execution evidence and rule a repro printed (its last ``contribkit-evidence:`` line,
    printed with ``--explain`` or ``CONTRIBKIT_REPRO_EVIDENCE=1``), else None."""
    for line in reversed(output.splitlines()):
        if line.startswith(EVIDENCE_PREFIX):
            with contextlib.suppress(ValueError):
                data = json.loads(line[len(EVIDENCE_PREFIX) :])
                return data if isinstance(data, dict) else None
            return None
    return None


def find_verdict(lines: Iterable[str]) -> tuple[str, str] | None:
    """The last verdict line among ``lines`` (a debug log, where output may follow it)."""
    for line in reversed(list(lines)):
        verdict = verdict_of_line(line)
        if verdict is not None:
            return verdict
    return None


def check_expect(value: str, option: str = "--expect") -> str:
    """``value`` as stored (``kind`` or ``kind:arg``, or ``auto``); BadInput (exit 2, one line
    naming the kinds) when it is not an oracle."""
    if value.strip().lower() == EXPECT_AUTO:
        return EXPECT_AUTO
    try:
        kind, arg = parse_expect(value)
    except ValueError as exc:
        raise BadInput(
            f"{option}: {str(exc).removeprefix('--expect ')}",
            hint=f"e.g. {option} 'error:index out of range'",
        ) from None
    stated = ":" in value  # recompiles and graph-breaks default to 0, kept unsaid
    return f"{kind}:{arg}" if arg and stated else kind
