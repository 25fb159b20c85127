"""``contribkit bisect``: the commit that broke a repro, in the fork checkout."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from contribkit.cli import options
from contribkit.cli.output import say
from contribkit.core.termsafe import clean

if TYPE_CHECKING:
    from contribkit.bisect.gitbisect import Commit
    from contribkit.bisect.session import BisectOutcome
    from contribkit.bisect.step import Step
    from contribkit.cli.progress import Progress

EPILOG = """\b
Each step: NOT_REPRODUCED is good; REPRODUCED is bad; CANNOT_RUN, a failed --build-cmd, torch
not importable or a timeout is skipped, and so is a different exception unless --crash-is-bad.
Exit 0 when the first bad commit is named (or with --dry-run), 1 when the ends are not as stated
or only skipped commits are left, 2 on bad input, 130 on Ctrl-C. The branch is always restored.
"""


@click.command(epilog=EPILOG)
@click.argument("repro", type=click.Path(path_type=Path))
@click.argument("pathspec", nargs=-1)
@click.option("--good", required=True, metavar="REV", help="A commit where it does not reproduce.")
@click.option("--bad", required=True, metavar="REV", help="A later commit where it reproduces.")
@click.option(
    "--build-cmd",
    metavar="CMD",
    default=None,
    help="Shell command that builds each commit, run at the checkout's root; a failure skips "
    "the commit (e.g. 'python setup.py develop').",
)
@click.option(
    "--no-build",
    is_flag=True,
    help="Build nothing: the interpreter uses the checkout's Python files directly "
    "(tools/nightly.py, an editable install).",
)
@click.option(
    "--first-parent", is_flag=True, help="Follow only the first parent of merges (git's flag)."
)
@click.option(
    "--crash-is-bad",
    is_flag=True,
    help="Count a different exception, or a crash the issue does not report, as bad.",
)
@click.option(
    "--python",
    metavar="PATH",
    default=None,
    help="Interpreter that runs the repro (default: the python setting).",
)
@click.option(
    "--device",
    type=click.Choice(["cpu", "cuda", "mps"]),
    default=None,
    help="Device the repro runs on (default: the repro's own).",
)
@options.timeout("a step's repro is killed, which skips the commit")
@click.option(
    "--build-timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="S",
    default=None,
    help="Seconds before a build is killed, which skips the commit (default: no limit).",
)
@options.allow_network("Let the repro")
@click.option(
    "-n",
    "--dry-run",
    is_flag=True,
    help="Print the range's size and the estimated steps; check nothing out.",
)
@options.json_output
@options.verbose
def bisect(
    repro: Path,
    pathspec: tuple[str, ...],
    good: str,
    bad: str,
    build_cmd: str | None,
    no_build: bool,
    first_parent: bool,
    crash_is_bad: bool,
    python: str | None,
    device: str | None,
    timeout: float | None,
    build_timeout: float | None,
    allow_network: bool,
    dry_run: bool,
    as_json: bool,
) -> int:
    """Find the commit that broke REPRO (a repro folder), in the fork checkout.

    Refuses a tree with uncommitted changes; copies REPRO outside the working tree; checks
    that --bad reproduces and --good does not; then drives git bisect one step at a time,
    each step building the commit (--build-cmd) and running REPRO confined like a `run` leg.
    Prints each step, then the first bad commit (sha, subject, author, date, PR number) and
    the commits it skipped. On success, failure, Ctrl-C or SIGTERM it runs `git bisect
    reset` and checks your branch out again. PATHSPEC after -- limits the commits tried.

    \b
    Examples:
      contribkit bisect repros/issue-170398 --good v2.8.0 --bad main --no-build
      contribkit bisect repros/issue-170398 --good a1b2c3d --bad HEAD \\
          --build-cmd 'python setup.py develop' -- torch/nn aten/src/ATen/native
      contribkit bisect repros/issue-170398 --good v2.8.0 --bad v2.9.0 --dry-run
    """
    from contribkit.bisect.session import BisectRequest, bisect_session
    from contribkit.cli.progress import Progress

    progress = Progress("steps", quiet=as_json)
    try:
        outcome = bisect_session(
            BisectRequest(
                repro=repro,
                good=good,
                bad=bad,
                build_cmd=build_cmd,
                no_build=no_build,
                first_parent=first_parent,
                crash_is_bad=crash_is_bad,
                dry_run=dry_run,
                paths=pathspec,
                python=python,
                device=device,
                timeout=timeout,
                build_timeout=build_timeout,
                allow_network=allow_network,
            ),
            None if as_json else _Shown(progress),
        )
    finally:
        progress.clear()
    if as_json:
        from contribkit.cli.output import print_json

        print_json(outcome.as_dict())
    else:
        show(outcome)
    return outcome.exit_code


class _Shown:
    """Prints the range, then each step as it finishes, under the progress line."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def started(self, outcome: BisectOutcome) -> None:
        for line in header(outcome):
            self.progress.echo(line)

    def step(self, step: Step, done: int, total: int) -> None:
        self.progress.echo(step_line(step))
        self.progress.advance(done, total, f"{step.commit.short} {step.mark}")


def header(outcome: BisectOutcome) -> list[str]:
    limited = f", touching {' '.join(outcome.paths)}" if outcome.paths else ""
    return [
        f"bisect {outcome.repro}: {outcome.range_size} commit(s) after good "
        f"{outcome.good.short} up to bad {outcome.bad.short}{limited}, roughly "
        f"{outcome.estimated_steps} step(s) (plus 2 to check the ends)",
        clean(f"oracle: {outcome.oracle}", single_line=True),
        clean(
            f"build: {outcome.build}; python: {outcome.python}; device: {outcome.device}",
            single_line=True,
        ),
    ]


def step_line(step: Step) -> str:
    label = step.role if step.role != "step" else str(step.number)
    subject = _clip(step.commit.subject, 30)
    return clean(
        f"{label:>4}  {step.commit.short}  {subject:<30}  {step.mark:<4}  {_clip(step.why, 64)}",
        single_line=True,
    )


def commit_lines(commit: Commit) -> list[str]:
    lines = [
        f"  subject: {commit.subject}",
        f"  author:  {commit.author}",
        f"  date:    {commit.date}",
    ]
    if commit.pr is not None:
        lines.append(f"  PR:      #{commit.pr}")
    return [clean(line, single_line=True) for line in lines]


def show(outcome: BisectOutcome) -> None:
    if outcome.status == "dry-run":
        for line in header(outcome):
            say(line)
        for note in outcome.notes:
            say(f"note: {clean(note, single_line=True)}")
        say("dry run: nothing was checked out")
        return
    if outcome.culprit is not None:
        say(f"first bad commit: {outcome.culprit.sha}")
        for line in commit_lines(outcome.culprit):
            say(line)
    elif outcome.candidates:
        say(f"the first bad commit is one of {len(outcome.candidates)} (skipped) commits:")
        for commit in outcome.candidates:
            say(clean(f"  {commit.short}  {commit.subject}", single_line=True))
    else:
        say(clean(f"stopped: {outcome.reason}", single_line=True))
    skipped = outcome.skipped
    if skipped:
        say(f"skipped ({len(skipped)}):")
        for step in skipped:
            say(
                clean(
                    f"  {step.commit.short}  {_clip(step.commit.subject, 40)}: {step.why}",
                    single_line=True,
                )
            )
    say(f"restored: {outcome.restored}")
    if outcome.record_path:
        say(f"record: {outcome.record_path}")


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
