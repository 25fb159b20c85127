"""Bench records: measured numbers a PR body may show in a Performance section.

A PR body shows performance numbers only from a record on disk, never invented ones. A record
is ``.contribkit/bench/<utc-time>-<short sha>.json``, written by ``contribkit bench`` (schema 2)
or by any tool (schema 1, the minimal form)::

    {
      "schema": 1,
      "head": "<full sha of the commit the candidate numbers were taken at>",
      "baseline": "<sha or ref the baseline numbers were taken at>",
      "command": "python benchmarks/index_add.py",
      "device": "cpu",
      "unit": "us",
      "results": [{"name": "index_add_ 1e6", "baseline": 812.0, "candidate": 640.5}]
    }

Schema 2 adds, per result, the device, the interquartile ranges, the ratio with its interval
and verdict, and per record the environment (machine, torch, threads) and how it was measured;
its ``baseline`` may be null (the candidate measured alone), and its ``timer`` names the clock,
``"wall"`` or ``"cpu"`` (process CPU time; a record without one was timed by the wall clock).
Only a record whose ``head`` is the current HEAD counts: numbers taken before the last commit
describe other code. The newest such record (by file name) is used.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SCHEMA = 2
SCHEMAS = (1, 2)
BENCH_DIR = Path(".contribkit") / "bench"
# What each --timer measures, as the table's headers and the facts under it name it.
TIMER_WORDS = {"wall": "wall time", "cpu": "CPU time"}
TIMER_FACTS = {
    "wall": "timer: wall clock (torch.utils.benchmark's default; CUDA synchronised)",
    "cpu": "timer: CPU time of the measuring process, all its threads (time.process_time); "
    "waiting for a CPU, sleeping and I/O are not counted",
}


@dataclass(frozen=True)
class BenchResult:
    name: str
    baseline: float | None  # the baseline's median (None: measured alone)
    candidate: float  # the candidate's median
    device: str = ""
    baseline_iqr: float | None = None
    candidate_iqr: float | None = None
    ratio: float | None = None  # candidate / baseline time, from the paired blocks
    low: float | None = None  # the ratio's interval (None: too few blocks for one)
    high: float | None = None
    verdict: str | None = None  # stats.SLOWER, FASTER, SAME or TOO_FEW
    threads: int | None = None

    @property
    def change(self) -> str:
        """``-21.1%``: the candidate relative to the baseline."""
        if not self.baseline:
            return "n/a"
        return f"{(self.candidate - self.baseline) / self.baseline * 100:+.1f}%"


@dataclass(frozen=True)
class BenchEnvironment:
    """What every number was measured on."""

    machine: str  # "x86_64, Intel(R) Xeon(R) ..., 2 CPUs, linux"
    torch: str  # the candidate's torch version
    python: str  # the candidate's interpreter
    baseline_torch: str | None = None
    baseline_python: str | None = None
    sandbox: str = ""


@dataclass(frozen=True)
class BenchRecord:
    head: str
    baseline: str | None
    command: str
    device: str
    unit: str
    results: tuple[BenchResult, ...]
    schema: int = SCHEMA
    created: str = ""
    dirty: bool = False  # the candidate included uncommitted changes
    blocks: int = 0  # blocks per side
    min_run_time: float = 0.0
    confidence: float = 0.0
    environment: BenchEnvironment | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    timer: str = "wall"  # a key of TIMER_WORDS

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["results"] = [asdict(r) for r in self.results]
        data["notes"] = list(self.notes)
        return data


def _number(value: Any, what: str, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} is not a number: {value!r}")
    return float(value)


def _text(data: dict[str, Any], key: str, optional: bool = False) -> str | None:
    value = data.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"'{key}' is missing or not a string")
    return value


def _result(row: Any, i: int, schema: int) -> BenchResult:
    if not isinstance(row, dict) or not isinstance(row.get("name"), str):
        raise ValueError(f"results[{i}] has no 'name'")
    number = {
        key: _number(row.get(key), f"results[{i}].{key}", optional=schema > 1 or key != "baseline")
        for key in ("baseline", "baseline_iqr", "candidate_iqr", "ratio", "low", "high")
    }
    candidate = _number(row.get("candidate"), f"results[{i}].candidate")
    assert candidate is not None
    if schema == 1:
        return BenchResult(row["name"], number["baseline"], candidate)
    threads = row.get("threads")
    return BenchResult(
        name=row["name"],
        candidate=candidate,
        device=str(row.get("device") or ""),
        verdict=row.get("verdict") if isinstance(row.get("verdict"), str) else None,
        threads=threads if isinstance(threads, int) and not isinstance(threads, bool) else None,
        **number,
    )


def _environment(env: Any) -> BenchEnvironment | None:
    if not isinstance(env, dict):
        return None

    def text(key: str) -> str:
        value = env.get(key)
        return value if isinstance(value, str) else ""

    return BenchEnvironment(
        machine=text("machine"),
        torch=text("torch"),
        python=text("python"),
        baseline_torch=text("baseline_torch") or None,
        baseline_python=text("baseline_python") or None,
        sandbox=text("sandbox"),
    )


def parse_bench_record(data: Any) -> BenchRecord:
    """A record from its JSON; ValueError saying what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    schema = data.get("schema")
    if schema not in SCHEMAS:
        raise ValueError(f"schema {schema!r}, expected one of {', '.join(map(str, SCHEMAS))}")
    rows = data.get("results")
    fields = {
        key: _text(data, key, optional=key == "baseline" and schema > 1)
        for key in ("head", "baseline", "command", "device", "unit")
    }
    if not isinstance(rows, list) or not rows:
        raise ValueError("'results' is missing or empty")
    results = tuple(_result(row, i, schema) for i, row in enumerate(rows))
    head, command, device, unit = (fields[k] for k in ("head", "command", "device", "unit"))
    assert head and command and device and unit
    if schema == 1:
        return BenchRecord(head, fields["baseline"], command, device, unit, results, schema=1)
    environment = _environment(data.get("environment"))
    notes = data.get("notes")
    timer = data.get("timer", "wall")
    if timer not in TIMER_WORDS:
        raise ValueError(f"timer {timer!r}, expected one of {', '.join(TIMER_WORDS)}")
    return BenchRecord(
        head,
        fields["baseline"],
        command,
        device,
        unit,
        results,
        schema=2,
        created=str(data.get("created") or ""),
        dirty=data.get("dirty") is True,
        blocks=int(data.get("blocks") or 0),
        min_run_time=float(data.get("min_run_time") or 0.0),
        confidence=float(data.get("confidence") or 0.0),
        environment=environment,
        notes=tuple(str(n) for n in notes) if isinstance(notes, list) else (),
        timer=timer,
    )


def bench_dir(root: Path) -> Path:
    return root / BENCH_DIR


def write_bench_record(root: Path, record: BenchRecord) -> Path:
    """Write ``record`` atomically as ``<utc time>-<short sha>.json`` (names sort by time)."""
    from contribkit.core.fsutil import atomic_write
    from contribkit.core.redact import current

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    path = bench_dir(root) / f"{stamp}-{record.head[:7]}.json"
    atomic_write(path, json.dumps(current().value(record.as_dict()), indent=2) + "\n")
    return path


def bench_for_head(root: Path, head: str) -> tuple[tuple[Path, BenchRecord] | None, list[str]]:
    """The newest readable record for ``head``, and a warning for each unreadable file."""
    folder = bench_dir(root)
    warnings: list[str] = []
    found = None
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            record = parse_bench_record(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            warnings.append(f"{path.relative_to(root)}: not a bench record ({exc}); ignored")
            continue
        if record.head == head:
            found = (path, record)
    return found, warnings


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def figure(value: float | None) -> str:
    """A time as measured, 3 significant digits (never more digits than the noise allows)."""
    return "n/a" if value is None else f"{value:.3g}"


def time_unit(record: BenchRecord) -> str:
    """``ms, CPU time``: a schema-2 table's unit, with the clock that measured it."""
    return f"{record.unit}, {TIMER_WORDS.get(record.timer, record.timer)}"


def ratio_text(result: BenchResult, confidence: float) -> str:
    """``1.52x (1.48-1.57)``: the ratio and its interval; without a baseline, empty."""
    if result.ratio is None:
        return ""
    if result.low is None or result.high is None:
        return f"{result.ratio:.3f}x"
    return f"{result.ratio:.3f}x ({result.low:.3f}-{result.high:.3f})"


def markdown_table(record: BenchRecord) -> str:
    if record.schema == 1:
        lines = [
            f"| benchmark | baseline ({record.unit}) | this PR ({record.unit}) | change |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {_md(r.name)} | {r.baseline:g} | {r.candidate:g} | {r.change} |"
            for r in record.results
        ]
        return "\n".join(lines)
    unit = time_unit(record)
    pct = f"{record.confidence * 100:g}%"
    if record.baseline is None:
        lines = [
            f"| benchmark | device | threads | median ({unit}) | IQR ({unit}) |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {_md(r.name)} | {_md(r.device)} | {r.threads} | {figure(r.candidate)} "
            f"| {figure(r.candidate_iqr)} |"
            for r in record.results
        ]
        return "\n".join(lines)
    lines = [
        f"| benchmark | device | threads | baseline ({unit}) | this PR ({unit}) "
        f"| ratio ({pct} CI) | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in record.results:
        lines.append(
            f"| {_md(r.name)} | {_md(r.device)} | {r.threads} "
            f"| {figure(r.baseline)} ± {figure(r.baseline_iqr)} "
            f"| {figure(r.candidate)} ± {figure(r.candidate_iqr)} "
            f"| {ratio_text(r, record.confidence)} | {r.verdict or ''} |"
        )
    return "\n".join(lines)


def measured_on(record: BenchRecord) -> list[str]:
    """What the numbers were measured on, one fact a line (for the PR body and the terminal)."""
    env = record.environment
    if env is None:
        return []
    torch = f"torch {env.torch} ({env.python})"
    if record.baseline is not None and env.baseline_torch is not None:
        torch += f"; baseline: torch {env.baseline_torch} ({env.baseline_python})"
    how = (
        f"{record.blocks} blocks per side of at least {record.min_run_time:g} s per benchmark"
        + (", before and after alternating" if record.baseline is not None else "")
        + "; ± is the interquartile range of "
        + ("the blocks' medians" if record.blocks > 1 else "the runs")
    )
    lines = [f"machine: {env.machine}", torch, how, TIMER_FACTS[record.timer]]
    if record.dirty:
        lines.append("measured with uncommitted changes in the working tree")
    return lines
