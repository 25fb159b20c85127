"""Measuring: blocks of ``torch.utils.benchmark`` runs in the target interpreter, before and
after in turn.

A block is one process of one side (``target/wrappers/bench_worker.py``): it imports torch and
the tree under test, then times every benchmark on every device once with
``Timer.blocked_autorange`` (which synchronises CUDA and sets the thread count). A fresh process
per block makes the spread include what differs between processes (memory layout, import
order), so that one lucky process cannot pass for a change. With a baseline, blocks come in
pairs whose order alternates (baseline first, then candidate first, ...), so a machine that
slows down or speeds up during the run affects both sides alike.

The clock (``--timer``) is torch.utils.benchmark's own, wall time with the accelerator
synchronised (``wall``), or ``time.process_time`` (``cpu``): the CPU time of every thread of the
measuring process, so that time spent waiting for a CPU on a loaded machine, which
wall time counts for whichever side happened to wait, is left out.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from contribkit.core.errors import BadInput
from contribkit.core.sandbox import Sandbox

MARKER = "CONTRIBKIT_BENCH "
BASELINE, CANDIDATE = "baseline", "candidate"
WALL, CPU_TIME = "wall", "cpu"
TIMERS = (WALL, CPU_TIME)


@dataclass(frozen=True)
class Side:
    label: str  # BASELINE or CANDIDATE
    python: str
    root: Path  # first on PYTHONPATH, and the working folder
    what: str  # "HEAD 1a2b3c4", "HEAD~1 (9f8e7d6)", "/opt/torch-2.12/bin/python"


@dataclass(frozen=True)
class BenchSpec:
    stmt: str | None  # a statement, or
    file: Path | None  # a file of benchmarks
    setup: str
    devices: tuple[str, ...]
    threads: int
    min_run_time: float
    timer: str = WALL  # one of TIMERS

    def payload(self) -> str:
        return json.dumps(
            {
                "stmt": self.stmt,
                "file": str(self.file) if self.file else None,
                "setup": self.setup,
                "devices": list(self.devices),
                "threads": self.threads,
                "min_run_time": self.min_run_time,
                "timer": self.timer,
            }
        )


@dataclass(frozen=True)
class Sample:
    """One benchmark on one device in one block."""

    name: str
    device: str
    device_name: str
    threads: int
    times: tuple[float, ...]  # seconds per run of the statement

    @property
    def key(self) -> tuple[str, str]:
        return self.name, self.device

    @property
    def median(self) -> float:
        return statistics.median(self.times)


@dataclass(frozen=True)
class Block:
    side: str
    samples: tuple[Sample, ...]
    torch_version: str
    python: str
    seconds: float


@dataclass(frozen=True)
class Limits:
    sandbox: Sandbox
    scrub: tuple[str, ...]
    timeout: float


Progress = Callable[[str, int, int, float | None], None]  # side, block, of, seconds left


def worker_source() -> str:
    from importlib import resources

    wrappers = resources.files("contribkit.target.wrappers")
    return wrappers.joinpath("bench_worker.py").read_text(encoding="utf-8")


def run_block(side: Side, spec: BenchSpec, limits: Limits, source: str) -> Block:
    """One block of ``side``: every benchmark on every device, in a fresh process."""
    from contribkit.core.confine import leg_space, run_code

    inherited = os.environ.get("PYTHONPATH")
    path = os.pathsep.join([str(side.root), *([inherited] if inherited else [])])
    env = {"PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
    readable = (side.root, *((spec.file.parent,) if spec.file else ()))
    try:
        with leg_space() as space:  # the one confinement of code from an issue or a test
            result = run_code(
                [side.python, "-c", source, spec.payload()],
                space=space,
                sandbox=limits.sandbox,
                python=side.python,
                readable=readable,
                cwd=side.root,
                env=env,
                scrub=limits.scrub,
                gpu="cuda" in spec.devices,
                timeout=limits.timeout,
            )
    except OSError as exc:
        raise BadInput(f"could not run {side.python}: {exc.strerror or exc}") from exc
    found = [ln for ln in result.output.splitlines() if ln.startswith(MARKER)]
    if result.timed_out:
        raise BadInput(
            f"{side.label} ({side.what}): a block ran past {limits.timeout:g} s",
            hint="lower --min-time, or raise run.timeout"
            + (
                " (--timer cpu counts CPU seconds: a loaded machine's blocks take longer)"
                if spec.timer == CPU_TIME
                else ""
            ),
        )
    if not found:
        last = (result.output.strip().splitlines() or [f"exit {result.returncode}"])[-1]
        raise BadInput(f"{side.label} ({side.what}) failed: {last}")
    data = json.loads(found[-1][len(MARKER) :])
    if data.get("error"):
        error = str(data["error"])
        hint = "the statement must run on both sides; try it with --blocks 1 and no baseline"
        if "not a built torch" in error:
            hint = "build torch in this tree (pip install -e . or tools/nightly.py), or bench from another folder"
        raise BadInput(f"{side.label} ({side.what}) failed: {error}", hint=hint)
    samples = tuple(
        Sample(r["name"], r["device"], r["device_name"], int(r["threads"]), tuple(r["times"]))
        for r in data["results"]
    )
    if not samples:
        raise BadInput(
            f"{spec.file} defines no benchmark",
            hint="define torch.utils.benchmark Timer objects, or functions "
            "bench_x(benchmark) / test_x(benchmark) that call benchmark(fn)",
        )
    return Block(side.label, samples, data["torch_version"], data["python"], result.duration_s)


def schedule(sides: Sequence[Side], blocks: int) -> list[Side]:
    """The order of the blocks: one side alone, or pairs in alternating order (AB BA AB ...)."""
    if len(sides) == 1:
        return [sides[0]] * blocks
    first, second = sides
    order: list[Side] = []
    for pair in range(blocks):
        order += [first, second] if pair % 2 == 0 else [second, first]
    return order


def measure(
    sides: Sequence[Side],
    spec: BenchSpec,
    blocks: int,
    limits: Limits,
    progress: Progress | None = None,
) -> dict[str, list[Block]]:
    """Every block of every side, in :func:`schedule`'s order; BadInput on the first failure."""
    source = worker_source()
    order = schedule(sides, blocks)
    done: dict[str, list[Block]] = {side.label: [] for side in sides}
    start = time.monotonic()
    for index, side in enumerate(order):
        if progress is not None:
            elapsed = time.monotonic() - start
            left = elapsed / index * (len(order) - index) if index else None
            progress(side.label, len(done[side.label]) + 1, blocks, left)
        done[side.label].append(run_block(side, spec, limits, source))
    return done
