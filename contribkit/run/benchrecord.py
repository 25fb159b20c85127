"""Bench records: measured numbers a PR body may show in a Performance section.

A PR body shows performance numbers only from a record on disk, never invented ones. A record
is ``.contribkit/bench/<name>.json`` (any tool may write it; a ``contribkit bench`` command
would write it here)::

    {
      "schema": 1,
      "head": "<full sha of the commit the candidate numbers were taken at>",
      "baseline": "<sha or ref the baseline numbers were taken at>",
      "command": "python benchmarks/index_add.py",
      "device": "cpu",
      "unit": "us",
      "results": [{"name": "index_add_ 1e6", "baseline": 812.0, "candidate": 640.5}]
    }

Only a record whose ``head`` is the current HEAD counts: numbers taken before the last commit
describe other code. The newest such record (by file name) is used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = 1
BENCH_DIR = Path(".contribkit") / "bench"


@dataclass(frozen=True)
class BenchResult:
    name: str
    baseline: float
    candidate: float

    @property
    def change(self) -> str:
        """``-21.1%``: the candidate relative to the baseline."""
        if self.baseline == 0:
            return "n/a"
        return f"{(self.candidate - self.baseline) / self.baseline * 100:+.1f}%"


@dataclass(frozen=True)
class BenchRecord:
    head: str
    baseline: str
    command: str
    device: str
    unit: str
    results: tuple[BenchResult, ...]


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} is not a number: {value!r}")
    return float(value)


def parse_bench_record(data: Any) -> BenchRecord:
    """A record from its JSON; ValueError saying what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if data.get("schema") != SCHEMA:
        raise ValueError(f"schema {data.get('schema')!r}, expected {SCHEMA}")
    fields = {}
    for key in ("head", "baseline", "command", "device", "unit"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ValueError(f"'{key}' is missing or not a string")
        fields[key] = data[key]
    rows = data.get("results")
    if not isinstance(rows, list) or not rows:
        raise ValueError("'results' is missing or empty")
    results = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise ValueError(f"results[{i}] has no 'name'")
        results.append(
            BenchResult(
                row["name"],
                _number(row.get("baseline"), f"results[{i}].baseline"),
                _number(row.get("candidate"), f"results[{i}].candidate"),
            )
        )
    return BenchRecord(results=tuple(results), **fields)


def bench_for_head(root: Path, head: str) -> tuple[tuple[Path, BenchRecord] | None, list[str]]:
    """The newest readable record for ``head``, and a warning for each unreadable file."""
    folder = root / BENCH_DIR
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


def markdown_table(record: BenchRecord) -> str:
    lines = [
        f"| benchmark | baseline ({record.unit}) | this PR ({record.unit}) | change |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r.name.replace('|', chr(92) + '|')} | {r.baseline:g} | {r.candidate:g} | {r.change} |"
        for r in record.results
    ]
    return "\n".join(lines)
