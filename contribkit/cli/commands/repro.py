"""``contribkit repro``: turn a GitHub issue into a runnable, verdict-giving reproduction script."""

from __future__ import annotations

import os
import re
from dataclasses import asdict
from pathlib import Path

import click

from contribkit.cli import options
from contribkit.core.errors import BadInput, warn
from contribkit.core.workspace import Workspace


def default_out_dir(ws: Workspace, name: str) -> Path:
    base = ws.root if ws.root is not None else Path.cwd()
    return base / str(ws.settings.get("repros_dir")) / name


def scratch_patterns(ws: Workspace, out_dir: Path, written: list[str]) -> tuple[str, ...]:
    """The ``.git/info/exclude`` lines that keep what was written out of commits.

    The repros folder is excluded whole; anywhere else in the repo (``-o test/x``), only the
    files written are, so that no other new file there is hidden from ``git status``.
    """
    assert ws.root is not None
    root = ws.root.resolve()
    target = out_dir.resolve()
    if not target.is_relative_to(root):
        return ()
    repros = default_out_dir(ws, "x").parent.resolve()
    if target.is_relative_to(repros) and repros != root:
        return (f"/{repros.relative_to(root).as_posix()}/",)
    return tuple(f"/{Path(path).resolve().relative_to(root).as_posix()}" for path in written)


@click.command()
@click.argument("issue", required=False, metavar="[ISSUE]")
@click.option(
    "--from-file",
    "from_file",
    metavar="PATH",
    help="Read a saved issue: a markdown body or GitHub issue JSON ('-' for stdin).",
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
@options.force
@options.dry_run
@options.repo
@options.github_url
@options.json_output
@options.verbose
def repro(
    issue: str | None,
    from_file: str | None,
    example: bool,
    token: str | None,
    offline: bool,
    refresh: bool,
    output: Path | None,
    to_stdout: bool,
    force: bool,
    dry_run: bool,
    repo: str | None,
    github_url: str | None,
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
      contribkit repro --from-file saved-issue.md -o /tmp/repro
      contribkit repro --example --stdout
    """
    from contribkit.cli.output import print_json
    from contribkit.core.cache import JsonCache, cache_root
    from contribkit.core.render import write_outputs
    from contribkit.git.cmd import ensure_excluded
    from contribkit.github.auth import resolve_token
    from contribkit.github.sources import (
        example_issue,
        fetch_issue,
        load_issue_file,
        parse_issue_ref,
    )
    from contribkit.repro.plan import plan_for

    sources = [bool(issue), bool(from_file), example]
    if sum(sources) != 1:
        raise BadInput(
            "give exactly one of ISSUE, --from-file or --example", "e.g. contribkit repro 170398"
        )
    ws = Workspace.load(repo=repo, github_url=github_url)
    if issue:
        named, number = parse_issue_ref(issue)
        slug = named or ws.repo()[0]  # the remote lookup only when the reference names no repo
        github = ws.settings.get("github_url")
        fetched = fetch_issue(
            ws.settings,
            slug,
            number,
            resolve_token(github, token, use_gh=not offline),
            offline=offline,
            refresh=refresh,
        )
    elif from_file:
        fetched = load_issue_file(from_file)
    else:
        fetched = example_issue()
    item = fetched.issue
    if item.number is not None:
        name = f"issue-{item.number}"
    else:  # a saved body without a number: name the folder after the file
        stem = "stdin" if from_file in (None, "-") else Path(from_file).stem
        name = f"issue-{re.sub(r'[^A-Za-z0-9_.-]+', '-', stem).strip('-.') or 'saved'}"
    out_dir = output or default_out_dir(ws, name)
    plan = plan_for(item, JsonCache(cache_root(ws.settings), "renders"))
    warnings = [*fetched.warnings, *plan.summary.warnings]
    if to_stdout:
        click.echo(plan.files["repro.py"], nl=False)
        for message in warnings:
            warn(message)
        return 0
    actions = write_outputs(plan.output_files(out_dir), force=force, dry_run=dry_run)
    if not dry_run and ws.root is not None:
        patterns = scratch_patterns(ws, out_dir, list(actions))
        if patterns:
            ensure_excluded(ws.root, patterns)
    here = Path.cwd().resolve()
    shown = os.path.relpath(out_dir) if out_dir.resolve().is_relative_to(here) else str(out_dir)
    summary = {
        **asdict(plan.summary),
        "warnings": warnings,
        "source": fetched.origin,
        "dir": str(out_dir),
        "script": str(out_dir / "repro.py"),
        "dry_run": dry_run,
        "files": actions,
        "next": f"contribkit run {shown}",
    }
    if as_json:
        print_json(summary)
        return 0
    verb = "would write" if dry_run else "wrote"
    click.echo(f"{verb} {shown}/ for {summary['issue']}: {summary['title']}")
    for path, action in actions.items():
        click.echo(f"  {Path(path).name:<10} {action}" if dry_run else f"  {Path(path).name}")
    click.echo(f"source:     {summary['source']}")
    click.echo(f"kind:       {summary['kind']}")
    click.echo(f"signature:  {summary['signature'] or '(none found)'}")
    rewrite = " (CUDA uses rewritten to --device)" if summary["device_rewrite"] else ""
    click.echo(f"devices:    {', '.join(summary['devices_needed'])}{rewrite}")
    for message in summary["warnings"]:
        click.echo(f"warning:    {message}")
    if dry_run and "exists" in actions.values():
        click.echo("note:       existing files would be refused; pass --force to overwrite")
    click.echo(f"next:       {summary['next']}")
    return 0
