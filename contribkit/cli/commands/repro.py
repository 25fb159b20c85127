"""``contribkit repro``: turn a GitHub issue into a runnable, verdict-giving reproduction script."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from contribkit.cli import options
from contribkit.cli.output import say_lines
from contribkit.core.errors import warn
from contribkit.core.termsafe import clean
from contribkit.repro.expect import describe

if TYPE_CHECKING:
    from contribkit.repro.make import ReproResult


@click.command()
@click.argument("issue", required=False, metavar="[ISSUE]")
@click.option(
    "--from-file",
    "from_file",
    metavar="PATH",
    help="Read a saved issue: a markdown body or GitHub issue JSON ('-' for stdin).",
)
@click.option(
    "--number",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --from-file: the issue's number, where the file holds none (a markdown body).",
)
@click.option("--example", is_flag=True, help="Use the bundled example issue (offline).")
@click.option(
    "--token",
    metavar="TOKEN",
    envvar=None,
    help="GitHub token (default: GH_TOKEN, GITHUB_TOKEN, then `gh auth token`).",
)
@click.option(
    "--offline", is_flag=True, help="Read the issue from the cache only; make no request."
)
@click.option("--refresh", is_flag=True, help="Fetch the issue even if the cached copy is current.")
@click.option(
    "-o",
    "--output",
    "output",
    metavar="DIR",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write (default: <repo>/repros/issue-N).",
)
@click.option(
    "--stdout", "to_stdout", is_flag=True, help="Print repro.py instead of writing files."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=300.0,
    show_default=True,
    metavar="SECONDS",
    help="The script's time limit: past it, it says CANNOT_RUN (0: no limit).",
)
@click.option(
    "--expect",
    metavar="ORACLE",
    help="The oracle that decides the verdict: error[:TEXT], no-error, output:TEXT,"
    " compile-vs-eager, device-vs-cpu, recompiles[:N], graph-breaks[:N], determinism, crash"
    " (auto: the ones inferred from the issue). On a folder already written, only the oracle"
    " changes.",
)
@options.force
@options.dry_run
@options.repo
@options.github_url
@options.github_timeout
@options.json_output
@options.verbose
def repro(
    issue: str | None,
    from_file: str | None,
    number: int | None,
    example: bool,
    token: str | None,
    offline: bool,
    refresh: bool,
    output: Path | None,
    to_stdout: bool,
    timeout: float,
    expect: str | None,
    force: bool,
    dry_run: bool,
    repo: str | None,
    github_url: str | None,
    github_timeout: float | None,
    as_json: bool,
) -> int:
    """Turn a GitHub issue into a runnable repro script with a git-bisect verdict.

    ISSUE is a number (the repository comes from --repo, config, or the git remote),
    OWNER/NAME#N, or an issue URL. The script is written, never run: run it with
    `contribkit run` or `python repros/issue-N/repro.py`.

    \b
    Examples:
      contribkit repro 170398
      contribkit repro pytorch/pytorch#170398 --dry-run
      contribkit repro --from-file saved-issue.md --number 170398
      contribkit repro --from-file saved-issue.md -o /tmp/repro
      contribkit repro --example --stdout
      contribkit repro 170398 --expect 'error:index out of range'   # only the oracle changes
    """
    from contribkit.cli.output import print_json
    from contribkit.repro.make import ReproRequest, make_repro

    result = make_repro(
        ReproRequest(
            issue=issue,
            from_file=from_file,
            number=number,
            example=example,
            token=token,
            offline=offline,
            refresh=refresh,
            output=output,
            to_stdout=to_stdout,
            force=force,
            dry_run=dry_run,
            repo=repo,
            github_url=github_url,
            github_timeout=github_timeout,
            timeout=timeout,
            expect=expect,
        )
    )
    if result.actions is None:  # --stdout
        click.echo(result.script_text, nl=False)
        for message in result.warnings:
            warn(message)
        return 0
    if as_json:
        print_json(result.as_dict())
        return 0
    if result.oracle_only:
        print_oracle_change(result)
    else:
        print_summary(result)
    return 0


def print_oracle_change(result: ReproResult) -> None:
    summary = result.plan.summary
    verb = "would set" if result.dry_run else "set"
    click.echo(f"{verb} the oracle of {result.shown}/ ({summary.issue}); the code is unchanged")
    click.echo(f"was:        {clean(result.oracle_was or 'auto', single_line=True)}")
    click.echo(f"oracle:     {clean(describe(summary.expect), single_line=True)}")
    click.echo(f"next:       {result.next_command}")


def print_summary(result: ReproResult) -> None:
    summary, actions, dry_run = result.plan.summary, result.actions or {}, result.dry_run
    verb = "would write" if dry_run else "wrote"
    title = clean(summary.title, single_line=True)  # the issue's: no escapes, no forged lines
    lines = [f"{verb} {result.shown}/ for {summary.issue}: {title}"]
    for path, action in actions.items():
        lines.append(f"  {Path(path).name:<10} {action}" if dry_run else f"  {Path(path).name}")
    lines.append(f"source:     {result.source}")
    lines.append(f"kind:       {summary.kind}")
    lines.append(f"signature:  {clean(summary.signature or '(none found)', single_line=True)}")
    rewrite = " (CUDA uses rewritten to --device)" if summary.device_rewrite else ""
    lines.append(f"devices:    {', '.join(summary.devices_needed)}{rewrite}")
    lines.append(f"code:       {summary.code_lines} line(s) from {summary.code_source or '(none)'}")
    for edit in summary.edits:
        lines.append(f"edit:       {edit}")
    if summary.expect:
        lines.append(f"oracle:     {clean(describe(summary.expect), single_line=True)}")
    for name, why in zip(summary.oracles, summary.oracles_why, strict=False):
        lines.append(f"oracle:     {name}: {why}")
    if not summary.oracles and not summary.expect:
        lines.append("oracle:     none: the verdict stays CANNOT_RUN until the issue gives one")
    for item in summary.to_add:
        lines.append(f"to add:     {item}")
    lines += (f"warning:    {clean(message, single_line=True)}" for message in result.warnings)
    if dry_run and "exists" in actions.values():
        lines.append("note:       existing files would be refused; pass --force to overwrite")
    lines.append(f"next:       {result.next_command}")
    say_lines(lines)  # at once: an issue of thousands of blocks gives thousands of warnings
