"""``contribkit pr``: the PR title and body in PyTorch's conventions, or ``--check`` of a body."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from contribkit.cli import options
from contribkit.cli.output import say
from contribkit.core.errors import BadInput, warn
from contribkit.core.workspace import Workspace
from contribkit.issue.model import MAX_ISSUE_NUMBER

if TYPE_CHECKING:
    from contribkit.pr.draft import PrDraft

TITLE_STYLES = ("pytorch", "conventional")

EPILOG = """\b
Exit codes: 0 the body was written (placeholders may be left: they are listed), or --check
found nothing; 1 --check found a violation; 2 bad input (not a git repository, an existing
-o FILE without --force, a template error).
"""


@click.command(epilog=EPILOG)
@click.option(
    "--issue",
    type=click.IntRange(min=1, max=MAX_ISSUE_NUMBER),
    metavar="N",
    default=None,
    help="The issue the PR fixes (default: from the branch name, e.g. fix/issue-170398-x, "
    "else a 'Fixes #N' or '#N' in the commits).",
)
@click.option(
    "-o",
    "--output",
    metavar="FILE",
    default=None,
    help="Write the body to FILE ('-' prints it, the default); e.g. for gh pr create --body-file.",
)
@click.option(
    "--template",
    "template_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    metavar="FILE",
    default=None,
    help="Render the body from this Jinja template instead of templates/pr_body.md.j2 "
    "(same variables, same sandbox; see the README).",
)
@click.option(
    "--title-style",
    type=click.Choice(TITLE_STYLES),
    default=None,
    help="'[area] Imperative summary' (pytorch) or 'fix(area): summary' (conventional) "
    "(default: hooks.title_style, else pytorch).",
)
@click.option(
    "-t",
    "--title",
    metavar="TEXT",
    default=None,
    help="Use this title instead of generating one; with --check, the title to check.",
)
@click.option(
    "--ai-assisted",
    "ai_text",
    metavar="TEXT",
    default=None,
    help="Say how an AI tool helped; it goes in an 'Agent details' section (also added, with a "
    "placeholder, when a commit has an AI trailer such as 'Co-authored-by: Claude').",
)
@click.option(
    "--offline",
    is_flag=True,
    help="Read the issue from the cache (or its repro folder) only; make no request.",
)
@click.option(
    "--check",
    "check_file",
    metavar="FILE",
    default=None,
    help="Check FILE (a PR body; '-' reads stdin) against rules CKP01-CKP06 instead of writing "
    "a body; exit 1 on a violation.",
)
@click.option(
    "--disable",
    multiple=True,
    metavar="RULES",
    help="With --check: rule ids or slugs to switch off, comma-separated (adds to hooks.disable).",
)
@click.option(
    "-B",
    "--base",
    metavar="BRANCH",
    default=None,
    help="Upstream branch for the merge-base (default: the base_branch setting, i.e. main).",
)
@options.force
@options.repo
@options.github_url
@options.github_timeout
@options.json_output
@options.verbose
def pr(
    issue: int | None,
    output: str | None,
    template_file: Path | None,
    title_style: str | None,
    title: str | None,
    ai_text: str | None,
    offline: bool,
    check_file: str | None,
    disable: tuple[str, ...],
    base: str | None,
    force: bool,
    repo: str | None,
    github_url: str | None,
    github_timeout: float | None,
    as_json: bool,
) -> int:
    """Write the PR title and body for this branch, in PyTorch's conventions.

    The body starts with 'Fixes #N', then prose from the commit bodies (Root cause and Solution
    sections when the commits have 'Root cause:' or 'Solution:' paragraphs), a Test plan naming
    the changed test files and the commands to run them, the repro's verdict before and after
    the fix, and the device matrix of the latest `contribkit run` for HEAD. Then a Performance
    section only when a bench record exists for HEAD, the rest of the fork's PR template (its
    checklist) as written, an 'Agent details' section when an AI helped, and the issue's cc
    line. What contribkit cannot know is left as a marked placeholder (<!-- contribkit: … -->),
    and listed. The suggested release-notes label and its @pytorchbot comment are printed, not
    put in the body (it becomes the landed commit message); --json has them under 'comments'.

    --check FILE checks a body instead: a Fixes link, a test plan naming a test, no placeholder
    left, no Performance section without a bench record, AI disclosure when commits say an AI
    helped, and (with --title) the title style. Violations are reported one per line, gitlint
    style, each with a fix hint.

    \b
    Examples:
      contribkit pr                          # the body on stdout, title and label on stderr
      contribkit pr -o .contribkit/pr-body.md && gh pr create --title "$(contribkit pr --json | jq -r .title)" --body-file .contribkit/pr-body.md
      contribkit pr --title-style conventional --ai-assisted "Claude drafted the test; I rewrote the kernel change."
      contribkit pr --check body.md --title "[nn] Fix relu for negative zero"
    """
    ws = Workspace.load(repo=repo, github_url=github_url, github_timeout=github_timeout)
    if check_file is not None:
        return check(ws, check_file, title, title_style, ai_text, disable, base, as_json)
    if disable:
        raise BadInput("--disable goes with --check", hint="e.g. --check body.md --disable CKP02")
    from contribkit.cli.output import print_json
    from contribkit.core.fsutil import atomic_write
    from contribkit.git import facts as gitfacts
    from contribkit.pr.draft import TitleRules, draft
    from contribkit.pr.gather import gather

    root = ws.require_root()
    settings = ws.settings
    facts = gitfacts.branch_facts(
        root, settings.text("upstream_remote"), base or settings.text("base_branch")
    )
    inputs = gather(ws, facts, issue=issue, offline=offline)
    result = draft(
        inputs,
        TitleRules.from_settings(settings, title_style),
        ai_text=ai_text,
        template_file=template_file,
        title=title,
    )
    written = None
    if output not in (None, "-"):
        written = Path(output)
        if written.resolve().is_relative_to((root / ".contribkit").resolve()):
            from contribkit.git.cmd import ensure_excluded

            ensure_excluded(root)  # .contribkit/ stays out of git before anything is in it
            written.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(written, result.body, force=force)
    if as_json:
        print_json({**result.as_dict(), "written": str(written) if written else None})
        return 0
    for message in result.warnings:
        warn(message)
    if written is None:
        say(result.body, nl=False)
    report(result, written, sys.stderr if written is None else sys.stdout)
    return 0


def report(result: PrDraft, written: Path | None, stream: TextIO) -> None:
    """What a user needs besides the body, never in it: the title, the label and the comment
    that adds it, what is left to do, the placeholders left."""
    lines = [f"wrote {written}"] if written else []
    lines.append(f"title: {result.title}")
    lines += [f"title problem: {problem}" for problem in result.title_problems]
    if result.labels:
        lines.append(f"label: {result.labels[0]} ({result.label_reason})")
    else:
        lines.append(f"label: none suggested ({result.label_reason}); pick one before merging")
    lines += [f"  comment on the PR: {comment}" for comment in result.comments]
    lines += [f"  {instruction}" for instruction in result.instructions]
    left = result.placeholders
    lines.append(
        f"placeholders left ({len(left)}): " + "; ".join(left)
        if left
        else "placeholders left: none"
    )
    say("\n".join(lines), file=stream)


def read_body(check_file: str) -> tuple[str, str]:
    """The body to check and the name to report it by."""
    if check_file == "-":
        raw, name = sys.stdin.buffer.read(), "<stdin>"
    else:
        path = Path(check_file)
        if not path.is_file():
            raise BadInput(f"{check_file}: no such file", hint="pass the PR body to check")
        raw, name = path.read_bytes(), check_file
    try:
        return raw.decode("utf-8-sig"), name
    except UnicodeDecodeError as exc:
        raise BadInput(f"{name} is not UTF-8 text (offset {exc.start})") from exc


def check(
    ws: Workspace,
    check_file: str,
    title: str | None,
    title_style: str | None,
    ai_text: str | None,
    disable: tuple[str, ...],
    base: str | None,
    as_json: bool,
) -> int:
    from contribkit.cli.output import print_json
    from contribkit.conventions.report import Findings, use_color, write_report
    from contribkit.conventions.rules import resolve_rule_names
    from contribkit.git import facts as gitfacts
    from contribkit.pr.check import check_pr
    from contribkit.pr.draft import TitleRules, check_context

    body, name = read_body(check_file)
    settings = ws.settings
    facts = None
    if ws.root is not None:  # outside a fork only the body itself is checked
        facts = gitfacts.branch_facts(
            ws.root, settings.text("upstream_remote"), base or settings.text("base_branch")
        )
    rules = TitleRules.from_settings(settings, title_style)
    ctx = check_context(ws.root, facts, rules, title=title, ai_text=ai_text)
    names = list(ws.settings.names("hooks.disable"))
    for arg in disable:
        names.extend(arg.split(","))
    disabled, unknown = resolve_rule_names(names)
    for unknown_name in unknown:
        warn(f"no rule named '{unknown_name}' (ignored)")
    violations = [v for v in check_pr(body, ctx, path=name) if v.rule.id not in disabled]
    strict = settings.flag("hooks.strict")
    blocking = any(v.blocks(strict) for v in violations)
    if as_json:
        print_json(
            {
                "ok": not blocking,
                "file": name,
                "title_checked": title is not None,
                "violations": [
                    {
                        "id": v.rule.id,
                        "slug": v.rule.slug,
                        "severity": "error" if v.blocks(strict) else "warning",
                        "line": v.line,
                        "where": v.path,
                        "message": v.message,
                        "hint": v.fix,
                    }
                    for v in violations
                ],
            }
        )
        return 1 if blocking else 0
    code = write_report(
        "contribkit pr --check",
        Findings(violations),
        use_color("auto", sys.stdout),
        sys.stdout,
        disabled,
        strict,
    )
    if code == 0:
        note = "" if title is not None else " (title not checked: pass --title)"
        say(f"ok: {name} follows the PR rules{note}")
    return code
