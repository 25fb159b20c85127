"""``contribkit submit``: refuse without a fresh green run record, then open the pull request."""

from __future__ import annotations

import json
import shlex
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import click

from contribkit.cli import options
from contribkit.cli.output import say
from contribkit.core.errors import CheckFailed, warn

# Where a hint has `pr` write the body to edit: under .contribkit/, which git ignores (a body in
# the tree would make the next submit refuse a dirty tree).
BODY_FILE = ".contribkit/pr-body.md"

if TYPE_CHECKING:
    from contribkit.pr.submit import Push, Submission

EPILOG = """\b
Exit codes: 0 opened (or --dry-run passed the gate), 1 the gate refused (the run record,
or a PR rule the title or body breaks) or gh/GitHub failed, 2 bad input (detached HEAD, no
upstream remote, no --body-file), 4 authentication needed.
"""


@click.command(epilog=EPILOG)
@click.option("-d", "--draft", is_flag=True, help="Open the pull request as a draft.")
@click.option(
    "-B",
    "--base",
    metavar="BRANCH",
    default=None,
    help="Branch to merge into (default: the base_branch setting, i.e. main).",
)
@click.option(
    "-H",
    "--head",
    metavar="USER:BRANCH",
    default=None,
    help="Branch holding the change (default: OWNER-OF-YOUR-FORK:CURRENT-BRANCH). "
    "With --head, contribkit does not check that the branch is pushed.",
)
@click.option(
    "-t",
    "--title",
    default=None,
    help="Title (default: contribkit pr's, e.g. '[nn] Fix …' from the main commit's subject).",
)
@click.option(
    "-F",
    "--body-file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    default=None,
    help="Body to send, e.g. one written by `contribkit pr -o FILE` and edited "
    "(default: contribkit pr's body, from the cached issue).",
)
@click.option(
    "-l", "--label", "labels", multiple=True, metavar="NAME", help="Add a label; repeatable."
)
@click.option(
    "-r",
    "--reviewer",
    "reviewers",
    multiple=True,
    metavar="LOGIN",
    help="Request a review; repeatable.",
)
@click.option(
    "--push",
    is_flag=True,
    help="Push the branch to your fork (push_remote, i.e. origin) first if it is not there. "
    "Without it, submit asks on a terminal and refuses otherwise.",
)
@click.option(
    "-n",
    "--dry-run",
    is_flag=True,
    help="Print what would be sent (command or API requests, and the body); push nothing, "
    "create nothing.",
)
@click.option(
    "-R",
    "--repo",
    metavar="OWNER/NAME",
    default=None,
    help="Repository to open the PR against (default: the repo setting, else the remote "
    "named by upstream_remote).",
)
@options.github_url
@options.github_timeout
@options.json_output
@options.verbose
def submit(
    draft: bool,
    base: str | None,
    head: str | None,
    title: str | None,
    body_file: Path | None,
    labels: tuple[str, ...],
    reviewers: tuple[str, ...],
    push: bool,
    dry_run: bool,
    repo: str | None,
    github_url: str | None,
    github_timeout: float | None,
    as_json: bool,
) -> int:
    """Open a pull request, if the latest `contribkit run` vouches for this exact tree.

    The gate: the latest run record must be for the current HEAD, taken on a clean tree that is
    still the same, cover the repro of the branch's issue and the test files the branch changes
    (what `contribkit run` runs without PATHS), and every required cell must be green (tests
    PASS, repros NOT_REPRODUCED);
    and the title and body must pass the PR rules of `contribkit pr --check` (a Fixes link, a
    test plan naming a test, no placeholder left, …; switch rules off in hooks.disable).
    Then: `gh pr create --body-file` when gh is installed and logged in, else GitHub's API
    (token from GH_TOKEN, GITHUB_TOKEN or `gh auth token`). The body is `contribkit pr`'s
    (Fixes #N, the commits' prose, the test plan and the run's device matrix), or --body-file.

    --dry-run prints exactly what would be sent (the gh command or the API requests, and the
    body) and never pushes or creates anything, unlike gh's own --dry-run.

    \b
    Examples:
      contribkit submit --dry-run
      contribkit pr -o .contribkit/pr-body.md --force && $EDITOR .contribkit/pr-body.md
      contribkit submit --body-file .contribkit/pr-body.md
      contribkit submit --draft --push --label "module: nn" --reviewer albanD
    """
    from contribkit.cli.output import print_json
    from contribkit.pr import submit as core
    from contribkit.run.runner import relpath

    request = core.SubmitRequest(
        base=base,
        head=head,
        title=title,
        body_file=body_file,
        draft=draft,
        labels=labels,
        reviewers=reviewers,
        push=push,
        dry_run=dry_run,
        repo=repo,
        github_url=github_url,
        github_timeout=github_timeout,
    )
    review = partial(review_plan, dry_run=dry_run, as_json=as_json, push_flag=push)
    outcome = core.submit(request, review=review, confirm=confirm_push)
    if dry_run:
        return outcome.exit_code
    plan, root = outcome.plan, outcome.root
    if as_json:
        print_json(
            {
                "dry_run": False,
                "created": True,
                "url": outcome.url,
                "number": outcome.number,
                **plan.describe(root),
            }
        )
    else:
        say(f"opened {outcome.url}")
        say(f"gate: {relpath(plan.record_path, root)} at {plan.record.short_head}")
        for comment in plan.comments:  # contribkit posts no comment: the bot reads the user's
            say(f"next: comment on the PR: {comment}")
    return 0


def review_plan(
    root: Path, plan: Submission, *, dry_run: bool, as_json: bool, push_flag: bool
) -> None:
    """Before anything is pushed or sent: show a dry run, warn about the body's gaps, and
    refuse a title or body that breaks PR rules (a --json dry run only prints the plan)."""
    from contribkit.cli.output import print_json

    if dry_run:
        if as_json:
            print_json({"dry_run": True, "created": False, **plan.describe(root)})
            return
        print_plan(plan, root, push_flag)
    if not as_json:
        for note in plan.notes:
            warn(f"PR body: {note}")
    if plan.violations:
        refuse_body(plan)


def refuse_body(plan: Submission) -> None:
    """Print the PR rules the title or body breaks (gitlint style), then refuse."""
    from contribkit.conventions.report import format_violation

    for violation in plan.violations:  # each one blocks (a warning only under hooks.strict)
        say(format_violation(violation, strict=True), err=True)
        say(f"    hint: {violation.fix}", err=True)
    count = len(plan.violations)
    raise CheckFailed(
        f"the PR title or body breaks {count} PR rule{'s' if count > 1 else ''} (above)",
        hint=f"contribkit pr -o {BODY_FILE} --force, fix it there, then: contribkit submit --body-file {BODY_FILE}",
    )


def confirm_push(push: Push) -> bool:
    """Ask on the terminal (stderr: stdout may carry --json); never push implicitly when nobody
    can answer."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    return click.confirm(
        f"{push.state}. Push it ({shlex.join(push.argv())})?", default=False, err=True
    )


def print_plan(plan: Submission, root: Path, push_flag: bool) -> None:
    from contribkit.run.runner import relpath

    record = plan.record
    green = sum(c.required for c in record.cells)
    say(
        f"gate: ok: {relpath(plan.record_path, root)} is for {record.short_head} "
        f"on a clean tree, {green} required cell(s) green"
    )
    if plan.push is None:
        say("push: no push remote; --head names the branch")
    elif not plan.push.needed:
        say(f"push: not needed ({plan.push.state})")
    elif push_flag:
        say(f"would push: {shlex.join(plan.push.argv())}  ({plan.push.state})")
    elif plan.push_required:
        say(
            f"push: needed ({plan.push.state}); without --push a real run asks on a "
            "terminal, and stops when there is none"
        )
    else:
        say(f"push: not checked ({plan.push.state}; --head names the branch)")
    if plan.method == "gh":
        say(f"would run: {shlex.join(plan.gh_argv())}")
    else:
        for call in plan.api_calls():
            say(f"would send: {call['method']} {call['url']}")
            say(json.dumps(call["json"], indent=2))
    for comment in plan.comments:
        say(f"then: comment on the PR: {comment}")
    where = f" ({relpath(plan.body_path, root)})" if plan.method == "gh" else ""
    say(f"--- body{where} ---")
    say(plan.pr.body, nl=False)
