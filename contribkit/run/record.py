"""The run record: what ``contribkit run`` checked, on which tree, and what came out.

Written atomically to ``.contribkit/runs/<utc-timestamp>-<short-sha>.json`` (docs/architecture.md, "Run
record") and read back by ``run --last``, the ``submit`` gate and the PR body. This module owns the
schema, what "green" means, and the matrix view (table rows, markdown, JUnit) of a record.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from contribkit.core.errors import BadInput
from contribkit.core.fsutil import atomic_write
from contribkit.target.reprolib import VERDICT_PREFIX

SCHEMA = 1
RUNS_DIR = Path(".contribkit") / "runs"

STATUSES = (
    "PASS",
    "FAIL",
    "REPRODUCED",
    "NOT_REPRODUCED",
    "SKIP",
    "NOT_AVAILABLE",
    "TIMEOUT",
    "ERROR",
)
SKIPPED = frozenset({"SKIP", "NOT_AVAILABLE"})
EXPECTATIONS = ("not-reproduced", "reproduced")  # what a green repro cell shows

KINDS = ("repro", "device-test", "pytest")


@dataclass
class TestCounts:
    total: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0

    def __str__(self) -> str:
        """``3 passed, 1 skipped``; ``1 failed, 2 passed``."""
        parts = [
            f"{n} {word}"
            for n, word in (
                (self.failed, "failed"),
                (self.errors, "errors" if self.errors > 1 else "error"),
                (self.passed, "passed"),
                (self.skipped, "skipped"),
            )
            if n
        ]
        return ", ".join(parts) or "no tests"


@dataclass
class TestOutcome:
    name: str  # device-neutral name: TestFoo.test_bar_float32 for TestFooCPU.test_bar_cpu_float32
    test_id: str  # as pytest ran it: classname::name
    outcome: str  # passed, failed, error, skipped
    message: str = ""
    duration_s: float = 0.0


@dataclass
class Interpreter:
    index: int  # 1-based column group in the matrix
    path: str
    host: str | None = None  # None: this machine; else the ssh host that ran it
    python_version: str | None = None
    torch_version: str | None = None
    git_version: str | None = None
    cuda_available: bool = False
    device_count: int = 0
    device_names: list[str] = field(default_factory=list)
    mps_available: bool = False
    error: str | None = None  # why torch could not be imported

    @property
    def label(self) -> str:
        where = f"{self.host}:" if self.host else ""
        torch = f"torch {self.torch_version}" if self.torch_version else "no torch"
        return f"{where}{self.path} (Python {self.python_version or '?'}, {torch})"


@dataclass
class Cell:
    file: str  # relative to the repository root
    kind: str  # one of KINDS
    device: str
    interpreter: int  # Interpreter.index
    status: str  # one of STATUSES
    detail: str = ""  # the verdict detail, the skip reason, the error
    exit_code: int | None = None
    duration_s: float = 0.0
    log_path: str | None = None  # relative to the repository root
    verdict: str | None = None  # a repro's verdict word, as printed
    counts: TestCounts | None = None
    tests: list[TestOutcome] = field(default_factory=list)
    required: bool = True  # must be green for the run (and the submit gate) to pass
    # A repro's execution evidence and the rule that decided (the script's evidence line).
    evidence: dict[str, Any] | None = None
    engine: str = ""  # where the leg ran: local, ssh, ray, slurm ("": it did not run)
    worker: str | None = None  # the machine that ran it (its host name)
    sandbox: str | None = None  # "bwrap" or "none": how the leg was confined there


@dataclass
class RunRecord:
    id: str
    created: str  # UTC, ISO 8601
    head: str
    branch: str | None
    dirty: bool
    diff_hash: str
    expect: str  # one of EXPECTATIONS
    devices: list[str]
    require: list[str]
    interpreters: list[Interpreter]
    cells: list[Cell]
    files: dict[str, str]  # path -> sha256 of the file as it ran
    ok: bool
    reason: str
    uncommitted: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    keyword: str | None = None  # `run -k`: only the tests matching it ran
    oracle: str | None = None  # `run --oracle`: the repros decided by it
    contribkit_version: str = ""
    sandbox: str = "none"  # "bwrap" or "none": how the local legs were confined
    sandbox_reason: str = ""  # why: "bubblewrap", "bubblewrap (bwrap) is not installed", …
    schema: int = SCHEMA

    @property
    def short_head(self) -> str:
        return self.head[:7]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRecord:
        cells = [
            Cell(
                **{
                    **c,
                    "counts": TestCounts(**c["counts"]) if c.get("counts") else None,
                    "tests": [TestOutcome(**t) for t in c.get("tests", [])],
                }
            )
            for c in data["cells"]
        ]
        interpreters = [Interpreter(**i) for i in data["interpreters"]]
        rest = {
            k: v
            for k, v in data.items()
            if k in cls.__dataclass_fields__ and k not in ("cells", "interpreters")
        }
        return cls(**rest, cells=cells, interpreters=interpreters)


# -- what green means -------------------------------------------------------------------------
def is_green(cell: Cell, expect: str = "not-reproduced") -> bool:
    """A test cell that PASSed; a repro cell that shows the expected verdict."""
    if cell.kind == "repro":
        return cell.status == ("REPRODUCED" if expect == "reproduced" else "NOT_REPRODUCED")
    return cell.status == "PASS"


def is_required(cell: Cell, require: Iterable[str]) -> bool:
    """Every cell that ran must be green; a skipped or absent device only when it is required."""
    return cell.status not in SKIPPED or cell.device in set(require)


def evaluate(cells: Sequence[Cell], expect: str = "not-reproduced") -> tuple[bool, str]:
    """Whether a matrix passes, and why not: a red required cell, or nothing checked at all."""
    if not cells:
        return False, "no cell ran"
    red = [c for c in cells if c.required and not is_green(c, expect)]
    if red:
        first = red[0]
        more = f" (and {len(red) - 1} more)" if len(red) > 1 else ""
        why = f": {first.detail}" if first.detail else ""
        return False, f"{first.file} on {first.device} is {first.status}{why}{more}"
    if all(c.status in SKIPPED for c in cells):
        return False, "every cell was skipped or not available: nothing was checked"
    return True, "all required cells are green"


# -- files on disk ----------------------------------------------------------------------------
def runs_dir(root: Path) -> Path:
    return root / RUNS_DIR


def new_record_id(head: str, now: datetime | None = None) -> str:
    """``20260102T030405.123456Z-abc1234``: sorts by time, names the commit."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%S.%fZ")
    return f"{stamp}-{head[:7]}"


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def redacted(record: RunRecord) -> RunRecord:
    """``record`` with every known secret replaced by ``***`` (a leg's detail, a test's message
    and the notes are what the legs printed)."""
    from contribkit.core.redact import current

    return RunRecord.from_dict(current().value(record.as_dict()))


def write_record(root: Path, record: RunRecord) -> Path:
    """Write ``record``, redacted."""
    path = runs_dir(root) / f"{record.id}.json"
    atomic_write(path, json.dumps(redacted(record).as_dict(), indent=2) + "\n")
    return path


def load_record(path: Path) -> RunRecord:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError(f"a JSON {type(data).__name__}, not an object")
        if data.get("schema") != SCHEMA:
            raise ValueError(f"schema {data.get('schema')!r}, expected {SCHEMA}")
        record = RunRecord.from_dict(data)
        for cell in record.cells:
            if cell.status not in STATUSES or cell.kind not in KINDS:
                raise ValueError(f"a cell of {cell.file} is {cell.status!r} of kind {cell.kind!r}")
        if record.expect not in EXPECTATIONS:
            raise ValueError(f"unknown expectation {record.expect!r}")
        return record
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise BadInput(
            f"{path} is not a readable run record ({exc})",
            hint="delete it and run `contribkit run` again",
        ) from exc


def latest_record(root: Path) -> tuple[Path, RunRecord] | None:
    """The newest record in ``.contribkit/runs/``, or None when there is none."""
    folder = runs_dir(root)
    paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not paths:
        return None
    return paths[-1], load_record(paths[-1])


def records_newest_first(root: Path) -> Iterator[tuple[Path, RunRecord]]:
    """Every readable record in ``.contribkit/runs/``, newest first; unreadable ones are skipped
    (the history is context; only :func:`latest_record` must be readable)."""
    folder = runs_dir(root)
    for path in sorted(folder.glob("*.json"), reverse=True) if folder.is_dir() else []:
        try:
            yield path, load_record(path)
        except BadInput:
            continue


# -- the matrix view --------------------------------------------------------------------------
def columns(record: RunRecord) -> list[tuple[int, str]]:
    """(interpreter, device) pairs that have at least one cell, interpreter-major."""
    present = {(c.interpreter, c.device) for c in record.cells}
    order = {d: i for i, d in enumerate(record.devices)}
    return sorted(present, key=lambda col: (col[0], order.get(col[1], len(order)), col[1]))


def column_title(record: RunRecord, column: tuple[int, str]) -> str:
    index, device = column
    return device if len(record.interpreters) == 1 else f"{device} [{index}]"


def cell_text(cell: Cell, durations: bool = True, details: bool = False) -> str:
    """``PASS 3/3 1.2s``, ``REPRODUCED 0.8s``, ``NOT_AVAILABLE no CUDA device``,
    ``n/a (the repro is cpu-only)``: short, so that a matrix fits 100 columns; the details of a
    cell that is not green are listed under the table (:func:`failure_lines`)."""
    if cell.status == "SKIP" and cell.detail.startswith("n/a"):
        return cell.detail  # a device the repro cannot use: nothing was skipped by a test
    parts = [cell.status]
    if cell.counts is not None and cell.status in ("PASS", "FAIL"):
        parts.append(str(cell.counts))
    elif cell.detail and cell.status in (
        *SKIPPED,
        *(("ERROR", "TIMEOUT", "FAIL") if details else ()),
    ):
        parts.append(_clip(cell.detail, 60 if details else 24))
    if cell.status == "FAIL" and cell.exit_code not in (None, 0, 1):
        parts.append(f"code {cell.exit_code}")
    if durations and cell.status != "NOT_AVAILABLE":
        parts.append(f"{cell.duration_s:.1f}s")
    return " ".join(parts)


def _clip(text: str, width: int) -> str:
    """``text`` on one line within ``width`` columns (0: whole)."""
    text = " ".join(text.split())
    return text if width <= 0 or len(text) <= width else text[: width - 1] + "…"


OUTCOME_WORDS = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP"}


def failure_lines(record: RunRecord, width: int = 100) -> list[str]:
    """What went wrong, under the table: one line per cell that is not green (its detail), then
    its failed tests, each within ``width`` columns (0: whole, for -v)."""
    lines = []
    for cell in record.cells:
        if is_green(cell, record.expect) or cell.status in SKIPPED:
            continue
        where = f"{cell.file} on {cell.device}" + (
            f" [{cell.interpreter}]" if len(record.interpreters) > 1 else ""
        )
        head = f"{cell.status}: {where}"
        room = max(width - len(head) - 2, 20) if width else 0
        lines.append(head + (f": {_clip(cell.detail, room)}" if cell.detail else ""))
        failed = [t.name for t in cell.tests if t.outcome in ("failed", "error")]
        lines += [f"  {_clip(name, max(width - 2, 0))}" for name in failed]
        if cell.log_path:
            lines.append(f"  log: {cell.log_path}")
    return lines


def verdict_lines(record: RunRecord) -> list[str]:
    """The verdict line of each repro cell that shows the expected verdict, whole (the cells that
    do not are in :func:`failure_lines`): ``run repros/issue-N --expect reproduced`` ends with
    what the script said, as running it would."""
    lines = []
    for cell in record.cells:
        if cell.kind != "repro" or cell.verdict is None or not is_green(cell, record.expect):
            continue
        where = f"{cell.file} on {cell.device}" + (
            f" [{cell.interpreter}]" if len(record.interpreters) > 1 else ""
        )
        lines.append(f"{where}: {VERDICT_PREFIX} {cell.verdict} {' '.join(cell.detail.split())}")
    return lines


def matrix_rows(
    record: RunRecord, durations: bool = True, tests: str = "none", details: bool = False
) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one row per file, one column per (interpreter, device); '-' for none.

    Under a test file's row, one row per test: for every test with ``tests="all"``, for tests
    that failed or errored somewhere with ``"failed"``, none with ``"none"`` (the terminal's
    default: :func:`failure_lines` lists them under the table).
    """
    cols = columns(record)
    by_key = {(c.file, c.interpreter, c.device): c for c in record.cells}
    files = list(dict.fromkeys(c.file for c in record.cells))
    header = ["file", *(column_title(record, col) for col in cols)]
    rows = []
    for path in files:
        cells = [by_key.get((path, index, device)) for index, device in cols]
        rows.append([path, *(cell_text(c, durations, details) if c else "-" for c in cells)])
        if tests == "none":
            continue
        outcomes = [{t.name: t.outcome for t in c.tests} if c else {} for c in cells]
        names = dict.fromkeys(name for per_cell in outcomes for name in per_cell)
        for name in names:
            seen = [per_cell.get(name) for per_cell in outcomes]
            if tests == "all" or any(o in ("failed", "error") for o in seen):
                rows.append([f"  {name}", *(OUTCOME_WORDS.get(o or "", "-") for o in seen)])
    return header, rows


def markdown_matrix(record: RunRecord) -> str:
    header, rows = matrix_rows(record, durations=False, tests="failed", details=True)
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(_md(c) for c in row) + " |" for row in rows),
    ]
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def to_junit(record: RunRecord) -> str:
    """The matrix as JUnit XML: one testcase per cell, named ``file[device,interpreter]``."""
    import xml.etree.ElementTree as ET

    suite = ET.Element(
        "testsuite",
        name="contribkit run",
        tests=str(len(record.cells)),
        failures=str(sum(c.required and not is_green(c, record.expect) for c in record.cells)),
        skipped=str(sum(c.status in SKIPPED for c in record.cells)),
        time=f"{sum(c.duration_s for c in record.cells):.3f}",
        timestamp=record.created,
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (("head", record.head), ("dirty", str(record.dirty).lower())):
        ET.SubElement(props, "property", name=name, value=value)
    for cell in record.cells:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=cell.file,
            name=f"{cell.device}[{cell.interpreter}]",
            time=f"{cell.duration_s:.3f}",
        )
        if cell.required and not is_green(cell, record.expect):
            tag = "error" if cell.status in ("ERROR", "TIMEOUT") else "failure"
            failure = ET.SubElement(case, tag, message=f"{cell.status}: {cell.detail}".strip())
            failure.text = f"log: {cell.log_path}" if cell.log_path else None
        elif cell.status in SKIPPED:
            ET.SubElement(case, "skipped", message=f"{cell.status}: {cell.detail}".strip())
    text: str = ET.tostring(suite, encoding="unicode", xml_declaration=True)
    return text
