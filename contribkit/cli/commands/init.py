"""``contribkit init``: install contribkit's hooks in a fork without touching a tracked file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from contribkit.cli import options
from contribkit.core.workspace import Workspace

if TYPE_CHECKING:
    from contribkit.setup.hookinstall import Plan

ACTION_WORDS = {
    # (action, dry run) -> what to print
    ("install", False): "installed",
    ("install", True): "would install",
    ("replace", False): "replaced",
    ("replace", True): "would replace",
    ("keep", False): "already contribkit's",
    ("keep", True): "already contribkit's",
    ("remove", False): "removed",
    ("remove", True): "would remove",
    ("none", False): "not contribkit's; left alone",
    ("none", True): "not contribkit's; left alone",
}
CONFIG_WORDS = {
    "write": ("wrote", "would write"),
    "update": ("updated", "would update"),
    "unchanged": ("unchanged", "unchanged"),
    "remove": ("removed", "would remove"),
    "absent": ("not there", "not there"),
}


ENGINE_WORDS = {
    "native": "native: each git hook runs all its checks in one process "
    "(python -m contribkit.hooks.stage)",
    "pre-commit": "pre-commit, from contribkit's config",
    "prek": "prek, from contribkit's config",
}


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root.resolve()))
    except ValueError:
        return str(path)


def _print_plan(plan: Plan, dry_run: bool) -> None:
    from contribkit.setup.hookinstall import TRACKED_CONFIG

    root = plan.root
    if plan.mode == "snippet":
        click.echo(
            f"{root} tracks its own {TRACKED_CONFIG}, so contribkit installs nothing here.\n"
            f"Add contribkit's hooks under `repos:` in {TRACKED_CONFIG}:\n"
        )
        click.echo(plan.snippet)
        click.echo(
            "Then install the hook types they need (commit-msg and pre-push hooks do nothing "
            "until installed):\n  pre-commit install -t pre-commit -t commit-msg -t pre-push"
        )
    else:
        click.echo(f"contribkit init{' --uninstall' if plan.mode == 'uninstall' else ''}: {root}")
        if plan.mode == "install":
            click.echo(f"  {'engine':<11} {ENGINE_WORDS[plan.engine]}")
        done, would = CONFIG_WORDS[plan.config_action]
        if not (plan.engine == "native" and plan.config_action == "absent"):
            click.echo(
                f"  {'config':<11} {would if dry_run else done} {_shown(plan.config_path, root)}"
            )
        for change in plan.hooks:
            words = ACTION_WORDS[(change.action, dry_run)]
            was = f" (was: {change.before})" if change.action in ("install", "replace") else ""
            note = f"; {change.note}" if change.note else ""
            click.echo(f"  {change.hook_type:<11} {words}{was}{note}")
    if plan.excludes:
        if plan.mode == "uninstall":
            verb, where = ("would remove" if dry_run else "removed"), "from"
        else:
            verb, where = ("would add" if dry_run else "added"), "to"
        click.echo(f"  {'exclude':<11} {verb} {', '.join(plan.excludes)} {where} .git/info/exclude")
    elif plan.mode != "uninstall":
        click.echo(f"  {'exclude':<11} scratch outputs already in .git/info/exclude")
    if plan.excludes_kept:
        click.echo(
            f"  {'exclude':<11} kept {', '.join(plan.excludes_kept)}: still on disk, so git "
            "would start showing them (--uninstall again removes them once they are gone)"
        )
    if plan.mode == "install":
        state = (
            "runs on staged files at each commit"
            if plan.lintrunner
            else ("off (contribkit init --lintrunner runs it at each commit)")
        )
        click.echo(f"  {'lintrunner':<11} {state}")
    if dry_run:
        click.echo("Dry run: nothing was changed.")
    elif not plan.changes_anything:
        click.echo(
            "Nothing to change: already set up." if plan.mode != "uninstall" else "Nothing to undo."
        )
    elif plan.mode == "install":
        click.echo(
            "Done: the hooks run at every commit and push. Tune or switch off rules in "
            ".contribkit.toml [hooks]; undo with: contribkit init --uninstall"
        )
    elif plan.mode == "uninstall":
        click.echo("Done: contribkit's hooks are uninstalled.")


@click.command()
@click.option(
    "--uninstall",
    is_flag=True,
    help="Remove contribkit's hooks, its pre-commit config and its .git/info/exclude entries.",
)
@click.option(
    "--lintrunner",
    is_flag=True,
    help="Also run lintrunner on the staged files at each commit (when the repo has .lintrunner.toml).",
)
@click.option(
    "-f",
    "--force",
    is_flag=True,
    help="Replace pre-commit hooks that run another config, and an edited contribkit config.",
)
@click.option(
    "--engine",
    type=click.Choice(["native", "pre-commit", "prek"]),
    default="native",
    show_default=True,
    help="What runs the hooks: native git hooks (one process per stage), or pre-commit or prek "
    "from a config in .git/contribkit/.",
)
@options.dry_run
@options.json_output
@options.verbose
def init(
    uninstall: bool, lintrunner: bool, force: bool, engine: str, dry_run: bool, as_json: bool
) -> int:
    """Install contribkit's hooks in this fork without touching a tracked file.

    Installs the pre-commit, commit-msg and pre-push git hooks in .git/hooks (inside the git
    directory, so nothing can end up in a PR) and adds scratch outputs (repros/, .contribkit/,
    debug artefacts) to .git/info/exclude. By default each hook is a small script that runs all
    of its stage's checks in one Python process; --engine pre-commit (or prek) writes a config
    to .git/contribkit/pre-commit-config.yaml and has that runner install the hooks from it.
    Existing git hooks of your own are kept and still run first. It is safe to run again: it
    says what changes, if anything.

    In a repository that tracks its own .pre-commit-config.yaml it installs nothing and prints
    the snippet to add to that file instead.

    \b
    Examples:
      contribkit init
      contribkit init --dry-run
      contribkit init --lintrunner
      contribkit init --engine pre-commit
      contribkit init --uninstall
    """
    from contribkit.cli.output import print_json
    from contribkit.setup.hookinstall import apply, plan_install, plan_uninstall

    ws = Workspace.load()
    root = ws.require_root()
    if uninstall:
        plan = plan_uninstall(root)
    else:
        repros_dir = str(ws.settings.text("repros_dir"))
        plan = plan_install(
            root, lintrunner=lintrunner, force=force, repros_dir=repros_dir, engine=engine
        )
    if not dry_run:
        apply(plan)
    if as_json:
        print_json({**plan.as_dict(), "dry_run": dry_run})
    else:
        _print_plan(plan, dry_run)
    return 0
