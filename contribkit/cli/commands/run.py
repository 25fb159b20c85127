"""``contribkit run``: repros and tests across a CPU/CUDA × interpreter matrix, with a record."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from contribkit.cli import options
from contribkit.cli.output import say
from contribkit.core.termsafe import clean
from contribkit.run.record import EXPECTATIONS

if TYPE_CHECKING:
    from contribkit.run.record import RunRecord

EPILOG = """\b
Green means: a test cell PASSed; a repro cell is NOT_REPRODUCED (the fix works), or
REPRODUCED with --expect reproduced. Exit 0 when every required cell is green, 1 otherwise,
and 1 when every cell was skipped or not available (nothing was checked).
"""


@click.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@options.devices("An absent device gives NOT_AVAILABLE cells.")
@options.pythons(
    "Interpreter to run with; repeat it for one column group per interpreter "
    "(default: the python setting, else the one running contribkit)."
)
@options.timeout("a leg is killed with its whole process group")
@options.jobs
@click.option(
    "--require",
    multiple=True,
    metavar="DEVICE",
    help="Fail unless DEVICE's cells are green: NOT_AVAILABLE or SKIP there fails. Repeatable.",
)
@click.option(
    "--expect",
    type=click.Choice(EXPECTATIONS),
    default="not-reproduced",
    show_default=True,
    help="What a green repro cell shows: 'reproduced' confirms a repro fails before the fix.",
)
@click.option(
    "--oracle",
    metavar="ORACLE",
    help="Repros decide by this oracle instead of the one they store (their --expect):"
    " error[:TEXT], no-error, output:TEXT, compile-vs-eager, device-vs-cpu, recompiles[:N],"
    " graph-breaks[:N], determinism, crash, or auto. --expect stays the gate.",
)
@click.option("-k", "keyword", metavar="EXPR", help="Only tests matching EXPR (pytest -k).")
@options.cuda_host
@options.cuda_python
@options.engine
@click.option(
    "--per-test",
    is_flag=True,
    help="A row per test of each test file (default: failing tests are listed under the table).",
)
@click.option(
    "--junit",
    "junit_file",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    default=None,
    help="Also write the matrix as JUnit XML to FILE (replaced each run, as pytest's --junitxml).",
)
@options.allow_network("Let the legs")
@click.option("--last", is_flag=True, help="Show the latest record instead of running.")
@options.json_output
@options.verbose
def run(
    paths: tuple[Path, ...],
    devices: str | None,
    pythons: tuple[str, ...],
    timeout: float | None,
    jobs: int | None,
    require: tuple[str, ...],
    expect: str,
    oracle: str | None,
    keyword: str | None,
    cuda_host: str | None,
    cuda_python: str | None,
    engine: str | None,
    per_test: bool,
    junit_file: Path | None,
    allow_network: bool,
    last: bool,
    as_json: bool,
) -> int:
    """Run repros and tests on every device and interpreter; record the result.

    PATHS are repro folders (repros/issue-N), repro scripts, PyTorch device-generic test files
    (run through pytest with PYTORCH_TESTING_DEVICE_ONLY_FOR=DEVICE) and plain pytest files
    (run once, in the cpu column). Without PATHS: the repro of the branch's issue (from the
    branch name, e.g. fix/issue-170398-x) and the test files changed since the merge-base
    with upstream.

    Each leg runs in its own process group with a scrubbed environment (no tokens), a closed
    stdin, a timeout and a capped, redacted log; on Linux with bubblewrap, in a sandbox
    (run.sandbox): no network, no home folder, no other process, writing only its own
    folder. The record goes to .contribkit/runs/, where `contribkit submit` reads it.

    \b
    Examples:
      contribkit run repros/issue-170398 --expect reproduced   # before the fix
      contribkit run repros/issue-170398 --oracle compile-vs-eager --expect reproduced
      contribkit run                                           # after it
      contribkit run test/test_nn.py -k test_relu --require cuda --cuda-host gpu-box
      contribkit run --python ~/nightly/bin/python --python ~/build/bin/python -j 2
      contribkit run repros/issue-1 repros/issue-2 --engine ray --python /opt/torch/bin/python
      contribkit run --last --json
    """
    from contribkit.run.session import RunRequest, run_session

    outcome = run_session(
        RunRequest(
            paths=paths,
            devices=devices,
            pythons=pythons,
            timeout=timeout,
            jobs=jobs,
            require=require,
            expect=expect,
            oracle=oracle,
            keyword=keyword,
            cuda_host=cuda_host,
            cuda_python=cuda_python,
            junit_file=junit_file,
            last=last,
            allow_network=allow_network,
            engine=engine,
        )
    )
    show(outcome.root, outcome.path, outcome.record, per_test, as_json)
    for hint in outcome.hints:
        click.echo(f"hint: {hint}", err=as_json)
    return outcome.exit_code


def show(root: Path, path: Path, record: RunRecord, per_test: bool, as_json: bool) -> None:
    from contribkit.cli.output import print_json, print_table
    from contribkit.run.record import failure_lines, matrix_rows, verdict_lines
    from contribkit.run.runner import relpath

    shown_path = relpath(path, root)
    if as_json:
        print_json({"record_path": shown_path, **record.as_dict()})
        return
    header, rows = matrix_rows(record, tests="all" if per_test else "none")
    print_table(header, rows, title=f"contribkit run at {record.short_head}")
    if len(record.interpreters) > 1 or record.interpreters[0].host:
        for interp in record.interpreters:
            say(f"[{interp.index}] {interp.label}")
    if record.oracle:
        say(f"oracle: {clean(record.oracle, single_line=True)} (--oracle, not the repros' own)")
    for note in record.notes:
        say(f"note: {clean(note, single_line=True)}")
    from contribkit.cli.app import verbose

    for line in failure_lines(record, width=0 if verbose() else 100):  # -v: whole details
        say(clean(line, single_line=True))  # details are the child's: no escapes
    counts: dict[str, int] = {}
    for cell in record.cells:
        counts[cell.status] = counts.get(cell.status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in counts.items())
    total = sum(c.duration_s for c in record.cells)
    say(f"{len(record.cells)} cells ({summary}), {total:.1f}s of legs")
    say(f"record: {shown_path}")
    verdict = ("ok: " if record.ok else "failed: ") + " ".join(record.reason.split())
    say(verdict if len(verdict) <= 100 or verbose() else verdict[:99] + "…")
    for line in verdict_lines(record):
        say(clean(line, single_line=True))
