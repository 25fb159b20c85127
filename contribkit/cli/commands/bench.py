"""``contribkit bench``: before/after timings with torch.utils.benchmark, and a record for the PR."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from contribkit.cli import options

if TYPE_CHECKING:
    from contribkit.bench.session import BenchOutcome

EPILOG = """\b
A change is 'slower' or 'faster' only when its whole confidence interval lies above or below
1; otherwise it reads 'no significant change'. Exit 0 when it measured (whatever the verdict),
2 when the statement, file or revision cannot be measured.

\b
The clock: wall (the default) is the time a user waits, as torch.utils.benchmark reports it;
on a machine other processes load, it also counts the time a block waited for a CPU, and the
interval widens. --timer cpu leaves that out: for CPU work that does not sleep or wait on I/O,
locks or a GPU (those it does not count). It is the process's CPU time, all threads: with
--threads N > 1, the threads' total, so spreading the same work over more threads reads as no
change. --min-time then counts CPU seconds, which a loaded machine stretches in wall time.
"""


@click.command(epilog=EPILOG)
@click.argument("target", metavar="STMT_OR_FILE")
@click.option(
    "--setup", metavar="S", default="pass", help="Run once before timing (a statement's setup)."
)
@click.option(
    "--baseline",
    metavar="REV",
    default=None,
    help="Also measure REV (a git worktree, removed afterwards), before and after in turn.",
)
@click.option(
    "--baseline-python",
    metavar="PATH",
    default=None,
    help="Also measure with another interpreter (e.g. an installed release), in turn.",
)
@options.python
@click.option(
    "--devices",
    metavar="LIST",
    default="cpu",
    show_default=True,
    help="Comma-separated: cpu, cuda. A statement sees the device as `device`.",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="N",
    help="torch threads while timing (torch.utils.benchmark's num_threads).",
)
@click.option(
    "--timer",
    type=click.Choice(["wall", "cpu"]),
    default="wall",
    show_default=True,
    help="wall: elapsed time (torch.utils.benchmark's clock, CUDA synchronised). cpu: the CPU "
    "time of the measuring process, all its threads (time.process_time), which waiting for a "
    "CPU on a loaded machine does not inflate; cpu devices only (see below).",
)
@click.option(
    "--blocks",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    metavar="N",
    help="Blocks per side, each a fresh process; a verdict needs at least 8.",
)
@click.option(
    "--min-time",
    type=click.FloatRange(min=0, min_open=True),
    default=0.2,
    show_default=True,
    metavar="S",
    help="Seconds of timing per benchmark in each block (blocked_autorange's min_run_time), "
    "after as long an untimed warm-up.",
)
@options.json_output
@options.verbose
def bench(
    target: str,
    setup: str,
    baseline: str | None,
    baseline_python: str | None,
    python: str | None,
    devices: str,
    threads: int,
    timer: str,
    blocks: int,
    min_time: float,
    as_json: bool,
) -> int:
    """Time a statement or a file of benchmarks, against a baseline; record it for the PR.

    STMT_OR_FILE is a statement (with `torch` and `device` defined, plus what --setup makes),
    or a .py file of benchmarks: torch.utils.benchmark Timer objects at module level, or
    pytest-benchmark style functions `bench_x(benchmark)` / `test_x(benchmark)` that call
    `benchmark(fn, *args)`. Each block is a fresh process of the target interpreter that
    times every benchmark with Timer.blocked_autorange (CUDA synchronised); it runs the code
    confined like `contribkit run` (run.sandbox). The tree under test is first on its path:
    this checkout, or for --baseline the worktree at REV (Python changes; build outputs are
    shared). The record goes to .contribkit/bench/, where `contribkit pr` finds it for HEAD.

    \b
    Examples:
      contribkit bench 'torch.relu(x)' --setup 'x = torch.randn(1_000_000)'
      contribkit bench 'f(x)' --setup 'from mypkg import f; x = torch.ones(64)' --baseline HEAD~1
      contribkit bench benchmarks/relu.py --baseline upstream/main --devices cpu,cuda
      contribkit bench 'x @ x' --setup 'x = torch.randn(512, 512)' --baseline-python ~/rel/bin/python
      contribkit bench 'work()' --setup 'from mypkg import work' --baseline HEAD~1 --timer cpu
    """
    from contribkit.bench.session import BenchRequest, run_bench

    request = BenchRequest(
        target=target,
        setup=setup,
        baseline=baseline,
        baseline_python=baseline_python,
        python=python,
        devices=devices,
        threads=threads,
        timer=timer,
        blocks=blocks,
        min_time=min_time,
    )
    show_progress = not as_json and sys.stderr.isatty()
    try:
        outcome = run_bench(request, progress=progress_line if show_progress else None)
    finally:
        if show_progress:  # an error's line, too, starts on a clean line
            _overwrite("")
    show(outcome, as_json)
    return 0


def _overwrite(text: str) -> None:
    """One status line, rewritten in place: contribkit's own words and numbers only, so it
    goes to the terminal itself (the stream guard turns a carriage return into a new line)."""
    stream = sys.__stderr__
    if stream is not None:
        stream.write(f"\r\033[K{text}")
        stream.flush()


def progress_line(side: str, block: int, of: int, left: float | None) -> None:
    eta = f", ~{left:.0f} s left" if left is not None else ""
    _overwrite(f"measuring {side}: block {block}/{of}{eta}")


def show(outcome: BenchOutcome, as_json: bool) -> None:
    from contribkit.bench.record import figure, measured_on, ratio_text, time_unit
    from contribkit.cli.output import print_json, print_table
    from contribkit.core.termsafe import clean
    from contribkit.run.runner import relpath

    record = outcome.record
    shown = relpath(outcome.path, outcome.root)
    if as_json:
        print_json({"record_path": shown, **record.as_dict()})
        return
    unit = time_unit(record)
    columns = ["benchmark", "device", "threads"]
    if record.baseline is None:
        columns += [f"median ({unit})", f"IQR ({unit})"]
    else:
        pct = f"{record.confidence * 100:g}%"
        columns += [f"baseline ({unit})", f"this tree ({unit})", f"ratio ({pct} CI)", "verdict"]
    rows = []
    for r in record.results:
        row = [r.name, r.device, str(r.threads)]
        if record.baseline is None:
            row += [figure(r.candidate), figure(r.candidate_iqr)]
        else:
            row += [
                f"{figure(r.baseline)} ± {figure(r.baseline_iqr)}",
                f"{figure(r.candidate)} ± {figure(r.candidate_iqr)}",
                ratio_text(r, record.confidence),
                r.verdict or "",
            ]
        rows.append(row)
    against = f" against {record.baseline}" if record.baseline else ""
    print_table(columns, rows, title=f"contribkit bench at {record.head[:7]}{against}")
    for r in record.results:
        if r.verdict in ("slower", "faster"):
            click.echo(
                f"{r.verdict.upper()}: {clean(r.name, single_line=True)} on {r.device}, "
                f"{ratio_text(r, record.confidence)} the baseline's time"
            )
    for line in measured_on(record):
        click.echo(clean(line, single_line=True))
    for note in record.notes:
        click.echo(f"note: {clean(note, single_line=True)}")
    click.echo(f"record: {shown}")
