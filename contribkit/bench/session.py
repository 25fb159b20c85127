"""``contribkit bench`` behind its options: measure, compare, record.

:func:`run_bench` takes a :class:`BenchRequest` (the command's options) and returns a
:class:`BenchOutcome` (the record and where it was written); the command only prints it.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from contribkit.bench import stats
from contribkit.bench.measure import (
    BASELINE,
    CANDIDATE,
    CPU_TIME,
    WALL,
    BenchSpec,
    Block,
    Limits,
    Progress,
    Sample,
    Side,
)
from contribkit.bench.record import BenchEnvironment, BenchRecord, BenchResult
from contribkit.core.errors import BadInput, warn

DEVICES = ("cpu", "cuda")
UNITS = (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0))


@dataclass(frozen=True)
class BenchRequest:
    target: str  # a statement, or a .py file of benchmarks
    setup: str = "pass"
    baseline: str | None = None  # a revision
    baseline_python: str | None = None
    python: str | None = None
    devices: str = "cpu"
    threads: int = 1
    blocks: int = 10  # per side
    min_time: float = 0.2  # seconds per benchmark per block
    confidence: float = stats.DEFAULT_CONFIDENCE
    timer: str = WALL  # measure.TIMERS


@dataclass(frozen=True)
class BenchOutcome:
    root: Path
    path: Path
    record: BenchRecord


def parse_target(target: str, setup: str) -> tuple[str | None, Path | None]:
    """A file of benchmarks when ``target`` names a ``.py`` file (which must then exist), else a
    statement, checked for syntax here (it runs only in the target interpreter)."""
    # A path-like word ending in .py is a file even when missing (benchmarks/relu.py, b.py:
    # a typo is an error, not a statement); code has spaces, brackets or operators (f(x.py)).
    looks_like_file = target.endswith(".py") and not any(c in target for c in " ()=;\n")
    if looks_like_file or Path(target).is_file():
        path = Path(target)
        if not path.is_file():
            raise BadInput(
                f"no such file: {target}", hint="pass a statement or an existing .py file"
            )
        return None, path.resolve()
    for what, code in (("statement", target), ("--setup", setup)):
        try:
            compile(code, f"<{what}>", "exec")
        except SyntaxError as exc:
            raise BadInput(
                f"the {what} is not valid Python: {exc.msg} (line {exc.lineno})",
                hint="quote it for the shell, e.g. contribkit bench 'torch.relu(x)' --setup 'x = torch.randn(1000)'",
            ) from exc
    return target, None


def parse_devices(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(d.strip() for d in text.split(",") if d.strip()))
    unknown = [d for d in names if d not in DEVICES]
    if unknown or not names:
        raise BadInput(
            f"--devices {text!r}: unknown device {unknown[0] if unknown else '(none)'}",
            hint="pass cpu, cuda or cpu,cuda",
        )
    return names


def machine_line() -> str:
    """``x86_64, Intel(R) Xeon(R) Platinum 8481C, 2 CPUs, Linux``."""
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = " ".join(line.split(":", 1)[1].split())
                break
    parts = [platform.machine(), model or platform.processor(), f"{os.cpu_count()} CPUs"]
    return ", ".join(p for p in [*parts, platform.system()] if p)


def unit_for(seconds: Sequence[float]) -> tuple[str, float]:
    """The largest unit in which the smallest time is at least 1 (as Compare picks one)."""
    smallest = min(seconds)
    chosen = UNITS[0]
    for unit in UNITS:
        if smallest >= unit[1]:
            chosen = unit
    return chosen


@dataclass(frozen=True)
class _Row:
    first: Sample  # names the benchmark and its device
    candidate: stats.Spread
    baseline: stats.Spread | None
    change: stats.Change | None


def _samples(blocks: Sequence[Block], key: tuple[str, str], side: str) -> list[Sample]:
    found = [next((s for s in b.samples if s.key == key), None) for b in blocks]
    present = [s for s in found if s is not None]
    if len(present) != len(found):
        raise BadInput(f"the {side} has no benchmark {key[0]!r} on {key[1]} in every block")
    return present


def side_spread(samples: Sequence[Sample]) -> stats.Spread:
    """A side's median and IQR over its blocks' medians, the unit the verdict compares (so that
    the medians shown and the ratio agree); with one block, over that block's runs."""
    if len(samples) == 1:
        return stats.spread(samples[0].times)
    return stats.spread([s.median for s in samples])


def _row(done: dict[str, list[Block]], key: tuple[str, str], confidence: float) -> _Row:
    cand = _samples(done[CANDIDATE], key, CANDIDATE)
    spread = side_spread(cand)
    if BASELINE not in done:
        return _Row(cand[0], spread, None, None)
    base = _samples(done[BASELINE], key, BASELINE)
    change = stats.change([s.median for s in base], [s.median for s in cand], confidence)
    return _Row(cand[0], spread, side_spread(base), change)


def summarise(
    done: dict[str, list[Block]], confidence: float
) -> tuple[str, tuple[BenchResult, ...]]:
    """Per benchmark and device: each side's median and IQR (:func:`side_spread`), and the
    paired change, in one unit."""
    rows = [_row(done, s.key, confidence) for s in done[CANDIDATE][0].samples]
    unit, scale = unit_for([r.candidate.median for r in rows])
    results = []
    for r in rows:
        first = r.first
        device = first.device if first.device == "cpu" else f"{first.device} ({first.device_name})"
        results.append(
            BenchResult(
                name=first.name,
                baseline=r.baseline.median / scale if r.baseline else None,
                candidate=r.candidate.median / scale,
                device=device,
                baseline_iqr=r.baseline.iqr / scale if r.baseline else None,
                candidate_iqr=r.candidate.iqr / scale,
                ratio=r.change.ratio if r.change else None,
                low=r.change.low if r.change else None,
                high=r.change.high if r.change else None,
                verdict=r.change.verdict if r.change else None,
                threads=first.threads,
            )
        )
    return unit, tuple(results)


@contextlib.contextmanager
def baseline_side(
    root: Path, request: BenchRequest, python: str
) -> Iterator[tuple[Side | None, list[str]]]:
    """The baseline's side, if one is asked for, and notes about it; a worktree lives as long as
    the block runs."""
    notes: list[str] = []
    if request.baseline_python is not None:
        from contribkit.core.workspace import resolve_python

        python = resolve_python(request.baseline_python)
        yield Side(BASELINE, python, root, python), notes
        return
    if request.baseline is None:
        yield None, notes
        return
    from contribkit.bench.worktree import baseline_tree

    with baseline_tree(root, request.baseline) as tree:
        if tree.compiled_changes:
            shown = ", ".join(tree.compiled_changes[:3])
            more = len(tree.compiled_changes) - 3
            notes.append(
                f"compiled sources changed since {request.baseline} ({shown}"
                + (f" and {more} more" if more > 0 else "")
                + "): both sides share this checkout's build, so only Python changes are "
                "measured; for the rest, pass --baseline-python with an interpreter built at "
                f"{request.baseline}"
            )
        what = f"{request.baseline} ({tree.sha[:7]})"
        yield Side(BASELINE, python, tree.path, what), notes


def command_line(request: BenchRequest) -> str:
    """The command that made a record, as one would type it again."""
    words = ["contribkit", "bench", request.target]
    if request.setup != "pass":
        words += ["--setup", request.setup]
    if request.baseline:
        words += ["--baseline", request.baseline]
    if request.baseline_python:
        words += ["--baseline-python", request.baseline_python]
    if request.devices != "cpu":
        words += ["--devices", request.devices]
    if request.threads != 1:
        words += ["--threads", str(request.threads)]
    if request.timer != WALL:
        words += ["--timer", request.timer]
    return shlex.join(words)


def check_timer(timer: str, devices: Sequence[str]) -> None:
    """CPU time cannot time a GPU: its kernels run while the process waits (or spins, which
    would count as CPU time) on the synchronisation."""
    if timer == CPU_TIME and "cuda" in devices:
        raise BadInput(
            "--timer cpu cannot time cuda: the GPU's work is not this process's CPU time",
            hint="time cuda with --timer wall (CUDA synchronised), cpu alone with --devices cpu",
        )


def load_average() -> float | None:
    """The 1-minute load average (None where the system has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def load_note(timer: str, devices: Sequence[str], load: float | None, cpus: int) -> str | None:
    """A note when wall-clock times of CPU work were taken on a loaded machine: a load average
    above the CPU count means runnable processes queued for a CPU, and wall time counts the
    queueing of whichever side happened to wait (one case of a class: other processes' load,
    e.g. a build or a test run beside the benchmark, or other users of a shared machine)."""
    if timer != WALL or "cuda" in devices or load is None or load <= cpus:
        return None
    return (
        f"the machine was loaded (load average {load:.1f} on {cpus} CPUs): wall time includes "
        "waiting for a CPU, which widens the interval; --timer cpu counts only the CPU time "
        "the benchmark used"
    )


def check_request(request: BenchRequest) -> None:
    if request.baseline is not None and request.baseline_python is not None:
        raise BadInput(
            "--baseline and --baseline-python cannot be combined",
            hint="compare with a revision (--baseline REV) or an interpreter (--baseline-python PATH)",
        )
    needed = stats.min_pairs(request.confidence)
    if (request.baseline or request.baseline_python) and request.blocks < needed:
        warn(
            f"{request.blocks} blocks per side cannot show a change at "
            f"{request.confidence * 100:g}% confidence (it takes {needed}): the verdict will "
            f"be '{stats.TOO_FEW}'"
        )


def run_bench(request: BenchRequest, progress: Progress | None = None) -> BenchOutcome:
    """Measure the request's benchmarks (and the baseline's), write the record, return it."""
    from contribkit.bench.measure import measure
    from contribkit.bench.record import write_bench_record
    from contribkit.core.sandbox import from_settings
    from contribkit.core.workspace import Workspace, resolve_python
    from contribkit.git import facts as gitfacts
    from contribkit.git.cmd import ensure_excluded

    check_request(request)
    ws = Workspace.load()
    root = ws.require_root()
    stmt, file = parse_target(request.target, request.setup)
    devices = parse_devices(request.devices)
    check_timer(request.timer, devices)
    spec = BenchSpec(
        stmt, file, request.setup, devices, request.threads, request.min_time, request.timer
    )
    ensure_excluded(root)  # before anything is written under .contribkit/
    state = gitfacts.tree_state(root)
    if len(state.head) < 40:
        raise BadInput("HEAD has no commit yet", hint="commit first: a record is kept per commit")
    python = resolve_python(request.python) if request.python else ws.python()
    settings = ws.settings
    limits = Limits(
        sandbox=from_settings(settings),
        scrub=tuple(settings.names("scrub_env")),
        timeout=settings.number("run.timeout"),
    )
    what = f"HEAD {state.short_head}" + (" with uncommitted changes" if state.dirty else "")
    candidate = Side(CANDIDATE, python, root, what)
    loads = [load_average()]
    with baseline_side(root, request, python) as (base, notes):
        sides = [base, candidate] if base is not None else [candidate]
        done = measure(sides, spec, request.blocks, limits, progress)
    loads.append(load_average())  # the higher of the load at the start and at the end
    known = [load for load in loads if load is not None]
    loaded = load_note(request.timer, devices, max(known, default=None), os.cpu_count() or 1)
    notes += [loaded] if loaded else []
    unit, results = summarise(done, request.confidence)
    first_base = done[BASELINE][0] if BASELINE in done else None
    record = BenchRecord(
        head=state.head,
        baseline=base.what if base is not None else None,
        command=command_line(request),
        device=",".join(spec.devices),
        unit=unit,
        results=results,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        dirty=state.dirty,
        blocks=request.blocks,
        min_run_time=request.min_time,
        confidence=request.confidence,
        environment=BenchEnvironment(
            machine=machine_line(),
            torch=done[CANDIDATE][0].torch_version,
            python=done[CANDIDATE][0].python,
            baseline_torch=first_base.torch_version if first_base else None,
            baseline_python=first_base.python if first_base else None,
            sandbox=limits.sandbox.kind,
        ),
        notes=tuple(notes),
        timer=request.timer,
    )
    return BenchOutcome(root, write_bench_record(root, record), record)
