"""Shared helpers for the benchmarks: medians of wall time, and ratio tables."""

from __future__ import annotations

import compileall
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


def find(name: str) -> str | None:
    """A console script beside this interpreter, else on PATH, else None."""
    return shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)


def installed(name: str = "contribkit") -> str:
    """The console script ``name`` beside this interpreter (else on PATH); exits if missing.

    contribkit's bytecode is compiled first, as an installed wheel's is: a source checkout under
    PYTHONDONTWRITEBYTECODE would otherwise recompile it on every run and time the compiler.
    """
    found = find(name)
    if not found:
        raise SystemExit(f"{name} is not installed in this environment (pip install -e .)")
    spec = importlib.util.find_spec("contribkit")
    if spec and spec.origin:
        compileall.compile_dir(str(Path(spec.origin).parent), quiet=1)
    return found


def median_wall(cmd: Sequence[str], runs: int = 15, warmup: int = 2, **kwargs: object) -> float:
    """Median wall time in seconds of running ``cmd`` (stdout/stderr discarded)."""
    env = kwargs.pop("env", None) or os.environ.copy()
    times = []
    for i in range(warmup + runs):
        start = time.perf_counter()
        subprocess.run(
            list(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, **kwargs
        )  # type: ignore[call-overload]
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved_medians(
    cmds: Sequence[Sequence[str]], runs: int = 15, warmup: int = 2, **kwargs: object
) -> list[float]:
    """Median wall times of several commands, run in turn (a, b, a, b, ...) so that a change in
    the machine's load during the benchmark weighs on every command alike."""
    env = kwargs.pop("env", None) or os.environ.copy()
    times: list[list[float]] = [[] for _ in cmds]
    for i in range(warmup + runs):
        for cmd, bucket in zip(cmds, times, strict=True):
            start = time.perf_counter()
            subprocess.run(
                list(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, **kwargs
            )  # type: ignore[call-overload]
            if i >= warmup:
                bucket.append(time.perf_counter() - start)
    return [statistics.median(bucket) for bucket in times]


@dataclass
class Timing:
    """Medians over the runs of one command: wall time, and the CPU time (user + system) the
    command and its waited-for children used. On a machine others load, the wall time moves
    with their load; the CPU time much less: a ratio of CPU times says what the command itself
    costs, a ratio of wall times what a user waited."""

    wall: float
    cpu: float


def run_timed(cmd: Sequence[str], **kwargs: object) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``cmd``, its output discarded."""
    start = time.perf_counter()
    child = subprocess.Popen(
        list(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs
    )  # type: ignore[call-overload]
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    child.returncode = code  # reaped here: Popen must not wait for it again
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {code}")
    return wall, usage.ru_utime + usage.ru_stime


def interleaved_times(
    cmds: Sequence[Sequence[str]], runs: int = 15, warmup: int = 2, **kwargs: object
) -> list[Timing]:
    """:func:`interleaved_medians` with the CPU time beside the wall time (see :class:`Timing`);
    a command that fails stops the benchmark."""
    kwargs.setdefault("env", os.environ.copy())
    walls: list[list[float]] = [[] for _ in cmds]
    cpus: list[list[float]] = [[] for _ in cmds]
    for i in range(warmup + runs):
        for cmd, wall, cpu in zip(cmds, walls, cpus, strict=True):
            spent = run_timed(cmd, **kwargs)
            if i >= warmup:
                wall.append(spent[0])
                cpu.append(spent[1])
    return [
        Timing(statistics.median(w), statistics.median(c)) for w, c in zip(walls, cpus, strict=True)
    ]


def report(title: str, rows: list[tuple[str, float, str, float | None, float | None]]) -> bool:
    """Print ``name, median, baseline name, ratio, target`` rows; return whether all targets are met."""
    print(title)
    ok = True
    for name, median, baseline, ratio, target in rows:
        line = f"  {name:<42} {median * 1000:8.1f} ms"
        if ratio is not None:
            line += f"   {ratio:5.2f}x {baseline}"
        if target is not None and ratio is not None:
            met = ratio <= target
            ok &= met
            line += f"   (target <= {target}x: {'met' if met else 'MISSED'})"
        print(line)
    return ok
