"""``contribkit demo``: the whole workflow, offline, on the bundled example issue."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import click

from contribkit.cli import options
from contribkit.core.errors import BadInput, CheckFailed
from contribkit.core.workspace import Workspace

if TYPE_CHECKING:
    from contribkit.demo.walkthrough import Step

EPILOG = """\b
Exit codes: 0 every step passed, 1 a step failed (the demo stops there),
2 bad input (a --dir that is not empty, an interpreter without torch).
"""


@click.command(epilog=EPILOG)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Make the scratch fork here (a new or empty folder; default: a new temporary folder).",
)
@options.python
@options.json_output
@options.verbose
def demo(directory: Path | None, python: str | None, as_json: bool) -> int:
    """Walk the whole workflow offline on the bundled example issue, in a scratch fork.

    In a scratch git repository shaped like a PyTorch fork: 1. repro --example (index_add_
    refuses a float source for a long tensor); 2. run: REPRODUCED on cpu; 3. test
    --from-repro: a regression test; 4. a fix
    commit; 5. run: NOT_REPRODUCED, and the test passes; 6. pr: the PR body. Each step is the
    real command, run in the scratch fork; its command line and result are printed as it goes.

    The bug is in torch, which the demo cannot rebuild: the fix commit adds a sitecustomize.py
    that changes index_add in the processes the demo's runs start, and stands in for a change
    to aten/. Nothing is installed or changed outside the scratch folder, which is left for you
    to look around in. It takes well under a minute on CPU torch.

    \b
    Examples:
      contribkit demo
      contribkit demo --dir /tmp/ck-demo --python ~/pytorch/venv/bin/python
      contribkit demo --json | jq '.steps[] | {name, status, result}'
    """
    from contribkit.cli.output import print_json
    from contribkit.core.cache import JsonCache, cache_root
    from contribkit.demo.walkthrough import run_demo, scratch_dir
    from contribkit.run.probe import install_torch_hint, probe_torch

    ws = Workspace.load(python=python)
    interpreter = ws.python()
    info = probe_torch(
        interpreter,
        JsonCache(cache_root(ws.settings), "probes"),
        scrub=ws.settings.names("scrub_env"),
    )
    if not info.torch:
        raise BadInput(
            f"the demo runs torch code, and {interpreter} cannot import torch ({info.error})",
            hint=install_torch_hint(interpreter),
        )
    root = scratch_dir(directory)
    # With --json, the JSON object is stdout; the progress a person watches goes to stderr.
    say = functools.partial(click.echo, err=as_json)
    say("contribkit demo: the whole workflow on the bundled example issue, offline")
    say(f"scratch fork: {root}")
    say(f"interpreter:  {interpreter} (torch {info.torch_version})")
    result = run_demo(root, interpreter, progress=functools.partial(show_step, err=as_json))
    if as_json:
        print_json(result.as_dict())
    elif result.body is not None:
        say("\n--- the PR body ---")
        say(result.body, nl=False)
        say("---")
    say(f"\n{'Done' if result.ok else 'Stopped'} in {result.duration_s:.1f}s.")
    say(f"The scratch fork is left for you: {root}")
    say(f"  cd {root} && git log --stat && contribkit run --last")
    if not result.ok:
        failed = result.steps[-1]
        if as_json:
            return 1
        raise CheckFailed(
            f"step {failed.number} ({failed.name}) failed: {failed.result}",
            hint=f"see the output above; the scratch fork is in {root}",
        )
    return 0


def show_step(step: Step, err: bool = False) -> None:
    say = functools.partial(click.echo, err=err)
    say(f"\n{step.number}. {step.name}: {step.purpose}")
    if step.note:
        say(f"   {step.note}")
    if step.command:
        say(f"   $ {step.command}")
    for line in step.output.rstrip().splitlines():
        say(f"     {line}")
    mark = {"ok": "->", "failed": "!!"}[step.status]
    say(f"   {mark} {step.result} ({step.duration_s:.1f}s)")
