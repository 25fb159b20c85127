"""``contribkit triage``: repros on each interpreter and device, the version boundary, and a
comment ready to paste."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from contribkit.cli import options
from contribkit.cli.output import say
from contribkit.core.termsafe import clean

if TYPE_CHECKING:
    from contribkit.triage.model import TriageRecord
    from contribkit.triage.session import TriageOutcome

EPILOG = """\b
A repro's state comes from the newest torch here: it still reproduces (REPRODUCED on a
device), no longer reproduces (every cell that ran is NOT_REPRODUCED: a candidate to close),
or cannot be decided here (CANNOT_RUN, an error, a device it needs is missing).
Exit 0 when at least one cell gave a verdict, 1 when none did, 2 on bad input.
"""


@click.command(epilog=EPILOG)
@click.argument("repros", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--issues",
    metavar="FILE",
    default=None,
    help="Also the repros of the issues listed in FILE ('-': stdin): numbers, #N, URLs, or "
    "`gh issue list` output (text or --json number); each is repros/issue-N.",
)
@options.pythons("An interpreter to try; repeatable (default: the python setting).")
@click.option(
    "--venvs-dir",
    type=click.Path(path_type=Path, file_okay=False),
    metavar="DIR",
    default=None,
    help="Also every virtual environment in DIR (DIR/*/bin/python), one per torch version.",
)
@options.devices()
@options.jobs
@options.timeout("a leg is killed with its whole process group")
@options.allow_network("Let the legs")
@options.cuda_host
@options.cuda_python
@options.engine
@click.option(
    "--markdown",
    is_flag=True,
    help="Print a comment ready to paste on the issue (paths and secrets hidden).",
)
@options.json_output
@options.verbose
def triage(
    repros: tuple[Path, ...],
    issues: str | None,
    pythons: tuple[str, ...],
    venvs_dir: Path | None,
    devices: str | None,
    jobs: int | None,
    timeout: float | None,
    allow_network: bool,
    cuda_host: str | None,
    cuda_python: str | None,
    engine: str | None,
    markdown: bool,
    as_json: bool,
) -> int:
    """Run REPROS on each interpreter and device: where they reproduce, and from which torch
    version on.

    REPROS are repro folders (repros/issue-N) or folders of them (repros/). Each interpreter
    is probed (torch version, git version, CUDA devices); each repro runs on each interpreter
    and device as a `run` leg (confined, logged under .contribkit/triage/). One repro gives a
    row per interpreter and device, oldest torch first, and the boundary ("reproduces from
    2.9.0 on; not on 2.8.0"); several give one table, with the repros that still reproduce,
    those that no longer do (candidates to close, with the evidence) and those that cannot
    be decided here.

    \b
    Examples:
      contribkit triage repros/issue-170398 --venvs-dir ~/venvs --devices cpu
      contribkit triage repros/issue-170398 --python ~/t28/bin/python --python ~/t29/bin/python --markdown
      gh issue list -l "module: nn" --json number | contribkit triage --issues - --venvs-dir ~/venvs -j 4
      contribkit triage repros/ --engine ray --python /opt/t29/bin/python --python /opt/t210/bin/python
    """
    from contribkit.cli.progress import Progress
    from contribkit.run.record import Cell
    from contribkit.triage.session import TriageRequest, triage_session

    if as_json and markdown:
        raise click.UsageError("--json and --markdown exclude each other")
    progress = Progress("legs", quiet=as_json or markdown)

    def on_leg(done: int, total: int, cell: Cell) -> None:
        progress.advance(
            done, total, f"{cell.file} {cell.device} [{cell.interpreter}]: {cell.status}"
        )

    try:
        outcome = triage_session(
            TriageRequest(
                repros=repros,
                issues=issues,
                pythons=pythons,
                venvs_dir=venvs_dir,
                devices=devices,
                jobs=jobs,
                timeout=timeout,
                allow_network=allow_network,
                cuda_host=cuda_host,
                cuda_python=cuda_python,
                engine=engine,
            ),
            on_leg,
        )
    finally:
        progress.clear()
    if as_json:
        from contribkit.cli.output import print_json

        print_json({"record_path": outcome.record_path, **outcome.record.as_dict()})
    elif markdown:
        from contribkit.triage.report import markdown as comment

        say(comment(outcome.record, outcome.root), nl=False)
    else:
        show(outcome)
    return outcome.exit_code


def show(outcome: TriageOutcome) -> None:
    from contribkit.cli.output import print_table
    from contribkit.triage import report

    record = outcome.record
    devices = ",".join(record.devices)
    count = len(record.interpreters)
    if len(record.repros) == 1:
        repro = record.repros[0]
        header, rows = report.version_rows(record)
        title = f"contribkit triage {repro.name}: {count} interpreter(s) x {devices}"
        print_table(header, rows, title=title)
        for line in report.idle_devices(record):
            say(clean(line, single_line=True))
        for bound in record.boundaries:
            say(f"{bound.device}: {bound.text}")
        if not record.boundaries:
            say("no interpreter gave a verdict: no boundary")
        say(clean(f"oracle: {repro.oracle}", single_line=True))
    else:
        header, rows = report.sweep_rows(record)
        title = (
            f"contribkit triage: {len(record.repros)} repros, {count} interpreter(s) x {devices}"
        )
        print_table(header, rows, title=title)
        for line in report.idle_devices(record):
            say(clean(line, single_line=True))
        _sections(record)
    for interp in record.by_version():
        say(clean(f"[{interp.index}] {interp.label}", single_line=True))
    for note in record.notes:
        say(clean(f"note: {note}", single_line=True))
    say(f"record: {outcome.record_path}")


def _sections(record: TriageRecord) -> None:
    from contribkit.triage.report import clip, section_title

    for wanted in ("reproduces", "no longer reproduces", "cannot decide"):
        chosen = [s for s in record.states if s.state == wanted]
        if not chosen:
            continue
        say(f"{section_title(wanted)} ({len(chosen)}):")
        for state in chosen:
            say(clean(f"  {state.repro}: {clip(state.evidence, 200)}", single_line=True))
