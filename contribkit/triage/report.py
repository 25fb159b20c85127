"""What a triage's cells say, as pure functions of the record: the boundary per repro and
device, a state per repro, the tables, and the comment to paste on the issue."""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from pathlib import Path

from contribkit.run.record import Cell, Interpreter
from contribkit.triage.model import (
    DEFINITE,
    Boundary,
    ReproState,
    TriageRecord,
    TriageRepro,
)


def word(cell: Cell) -> str:
    """The cell's outcome in one word: the verdict when the repro printed one (CANNOT_RUN, not
    run's ERROR), else the cell's status (TIMEOUT, ERROR, NOT_AVAILABLE, SKIP)."""
    if cell.status in DEFINITE:
        return cell.status
    return cell.verdict or cell.status


def reason(cell: Cell) -> str:
    detail = cell.detail.removeprefix("CANNOT_RUN: ")
    return " ".join(detail.split())


def version_label(interp: Interpreter) -> str:
    return interp.torch_version or "no torch"


def _cells_of(record: TriageRecord, repro: TriageRepro) -> list[Cell]:
    return [c for c in record.cells if c.file == repro.file]


def _ordered(record: TriageRecord, cells: Sequence[Cell]) -> list[Cell]:
    rank = {interp.index: n for n, interp in enumerate(record.by_version())}
    devices = {d: n for n, d in enumerate(record.devices)}
    return sorted(cells, key=lambda c: (rank[c.interpreter], devices.get(c.device, 99)))


def boundary(record: TriageRecord, repro: TriageRepro, device: str) -> Boundary | None:
    """Where the verdicts on ``device`` change with the torch version, or None when no
    interpreter decided there."""
    cells = [c for c in _ordered(record, _cells_of(record, repro)) if c.device == device]
    seen = [(version_label(record.interpreter(c.interpreter)), c.status) for c in cells]
    seen = [(v, s) for v, s in seen if s in DEFINITE]
    if not seen:
        return None
    yes = [v for v, s in seen if s == "REPRODUCED"]
    no = [v for v, s in seen if s == "NOT_REPRODUCED"]
    flips = sum(1 for a, b in itertools.pairwise(seen) if a[1] != b[1])
    span = seen[0][0] if len(seen) == 1 else f"{seen[0][0]} to {seen[-1][0]}"
    if not no:
        kind, text = "always", f"reproduces on every version tried ({span})"
    elif not yes:
        kind, text = "never", f"does not reproduce on any version tried ({span})"
    elif flips == 1 and seen[0][1] == "NOT_REPRODUCED":
        kind, text = "introduced", f"reproduces from {yes[0]} on; not on {no[-1]}"
    elif flips == 1:
        kind, text = "fixed", f"no longer reproduces from {no[0]} on; reproduces on {yes[-1]}"
    else:
        kind = "mixed"
        text = f"no single boundary: reproduces on {', '.join(yes)}; not on {', '.join(no)}"
    return Boundary(repro.name, device, kind, text)


def state(record: TriageRecord, repro: TriageRepro) -> ReproState:
    """Whether ``repro`` still reproduces on the newest torch here, no longer does (a candidate
    to close), or cannot be decided here; with the evidence."""
    if repro.missing:
        return ReproState(repro.name, "cannot decide", repro.missing)
    newest = record.newest()
    if newest is None:
        return ReproState(repro.name, "cannot decide", "no interpreter here can import torch")
    cells = [c for c in _cells_of(record, repro) if c.interpreter == newest.index]
    bounds = [b for d in record.devices if (b := boundary(record, repro, d)) is not None]
    history = "; ".join(f"{b.device}: {b.text}" for b in bounds if b.kind != "always")
    at = f"torch {newest.torch_version}"
    hit = next((c for c in cells if c.status == "REPRODUCED"), None)
    if hit is not None:
        evidence = f"REPRODUCED on {at} {hit.device}: {reason(hit)}"
        return ReproState(repro.name, "reproduces", _join(evidence, history))
    ran = [c for c in cells if c.status not in ("SKIP", "NOT_AVAILABLE")]
    if ran and all(c.status == "NOT_REPRODUCED" for c in ran):
        passed = ran[0]
        evidence = f"NOT_REPRODUCED on {at} {passed.device}: {reason(passed)}"
        return ReproState(repro.name, "no longer reproduces", _join(evidence, history))
    undecided = next((c for c in ran if c.status != "NOT_REPRODUCED"), None)
    if undecided is not None:
        why = f"{word(undecided)} on {at} {undecided.device}: {reason(undecided)}"
    else:
        skipped = cells[0] if cells else None
        why = f"nothing ran on {at}" + (f" ({reason(skipped)})" if skipped else "")
    return ReproState(repro.name, "cannot decide", _join(why, history))


def _join(first: str, then: str) -> str:
    return f"{first} ({then})" if then else first


def analyse(record: TriageRecord) -> None:
    """Fill in the record's boundaries and states."""
    record.boundaries = [
        b
        for repro in record.repros
        for device in record.devices
        if (b := boundary(record, repro, device)) is not None
    ]
    record.states = [state(record, repro) for repro in record.repros]


# -- tables -----------------------------------------------------------------------------------
def _ran(cell: Cell) -> bool:
    return cell.status not in ("NOT_AVAILABLE", "SKIP")


def idle_devices(record: TriageRecord) -> list[str]:
    """Devices on which nothing ran anywhere, each with why (a line under the table instead of
    a row per interpreter): ``cuda: n/a (the repro is cpu-only)``, ``cuda: no CUDA device``."""
    lines = []
    for device in record.devices:
        cells = [c for c in record.cells if c.device == device]
        if cells and not any(_ran(c) for c in cells):
            lines.append(f"{device}: {clip(reason(cells[0]), 60)}")
    return lines


def version_rows(record: TriageRecord) -> tuple[list[str], list[list[str]]]:
    """One repro: a row per interpreter and device, oldest torch first (devices where nothing
    ran anywhere are left to :func:`idle_devices`)."""
    header = ["torch", "git", "python", "device", "verdict", "time", "detail"]
    idle = {line.split(":", 1)[0] for line in idle_devices(record)}
    rows = []
    for cell in _ordered(record, [c for c in record.cells if c.device not in idle]):
        interp = record.interpreter(cell.interpreter)
        ran = _ran(cell)
        rows.append(
            [
                f"{version_label(interp)} [{interp.index}]",
                (interp.git_version or "-")[:10],
                interp.python_version or "?",
                cell.device,
                word(cell),
                f"{cell.duration_s:.1f}s" if ran else "-",
                clip(reason(cell), 60),
            ]
        )
    return header, rows


def sweep_columns(record: TriageRecord) -> list[tuple[Interpreter, str]]:
    """(interpreter, device) pairs, oldest torch first, without devices that no cell ran on."""
    ran = {(c.interpreter, c.device) for c in record.cells if _ran(c)}
    return [
        (interp, device)
        for interp in record.by_version()
        for device in record.devices
        if (interp.index, device) in ran
    ]


def sweep_rows(record: TriageRecord) -> tuple[list[str], list[list[str]]]:
    """Several repros: a row per repro, a column per interpreter and device, and its state."""
    columns = sweep_columns(record)
    header = ["repro", *(f"{version_label(i)} {d}" for i, d in columns), "state"]
    by_key = {(c.file, c.interpreter, c.device): c for c in record.cells}
    states = {s.repro: s.state for s in record.states}
    rows = []
    for repro in record.repros:
        cells = [by_key.get((repro.file, i.index, d)) for i, d in columns]
        rows.append(
            [repro.name, *(word(c) if c else "-" for c in cells), states.get(repro.name, "")]
        )
    return header, rows


def clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


# -- the comment to paste ---------------------------------------------------------------------
def hide_paths(text: str, root: Path | None) -> str:
    """``text`` without this machine's paths: the repository root becomes ``.``, the home
    folder ``~``, the temporary folder ``$TMPDIR``."""
    import tempfile

    swaps = [(str(root), ".")] if root is not None else []
    swaps += [(os.path.expanduser("~"), "~"), (tempfile.gettempdir(), "$TMPDIR")]
    for path, short in sorted(swaps, key=lambda s: len(s[0]), reverse=True):
        if path and path not in ("/", "."):
            text = text.replace(path, short)
    return text


def _code(text: str) -> str:
    """Inline code: the text is shown as it is (no @mention, link or markup) and stays in
    its table cell."""
    body = " ".join(text.replace("`", "'").split()).replace("|", "\\|")
    return f"`{body}`" if body else ""


def markdown(record: TriageRecord, root: Path | None) -> str:
    """A comment ready to paste on the issue: versions, devices, verdicts, the boundary, the
    command line and the oracle; paths hidden and secrets redacted."""
    from contribkit import __version__
    from contribkit.core.redact import redact

    lines = [f"**Triage** with contribkit {__version__}"]
    if len(record.repros) == 1:
        repro = record.repros[0]
        lines += [""]
        lines += [f"- {b.device}: {b.text}" for b in record.boundaries if b.repro == repro.name]
        lines += ["", "| torch | git | device | verdict | detail |", "|---|---|---|---|---|"]
        for cell in _ordered(record, record.cells):
            interp = record.interpreter(cell.interpreter)
            lines.append(
                f"| {version_label(interp)} | {_code(interp.git_version or '')} "
                f"| {cell.device} | {word(cell)} | {_code(clip(reason(cell), 160))} |"
            )
        lines += ["", *_repro_lines(repro)]
    else:
        header, rows = sweep_rows(record)
        lines += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        for wanted in ("no longer reproduces", "reproduces", "cannot decide"):
            chosen = [s for s in record.states if s.state == wanted]
            if chosen:
                lines += ["", f"**{section_title(wanted)}** ({len(chosen)})", ""]
                lines += [f"- {s.repro}: {_code(clip(s.evidence, 300))}" for s in chosen]
        lines += ["", "Each repro runs as `python repro.py --device DEVICE`; oracles:"]
        lines += [f"- {r.name}: {_code(r.oracle)}" for r in record.repros if not r.missing]
    return redact(hide_paths("\n".join(lines), root)) + "\n"


def _repro_lines(repro: TriageRepro) -> list[str]:
    made = f" (made by `contribkit repro {repro.issue}`)" if repro.issue else ""
    return [
        f"Repro: {_code(repro.command)}{made}",
        f"Oracle: {_code(repro.oracle)}",
    ]


def section_title(state: str) -> str:
    return {
        "reproduces": "Still reproduce",
        "no longer reproduces": "No longer reproduce: candidates to close",
        "cannot decide": "Cannot be decided here",
    }[state]
