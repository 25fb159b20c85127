"""``contribkit test``: scaffold a PyTorch-style device-generic test, or a regression test from a repro."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from contribkit.cli import options
from contribkit.cli.output import say
from contribkit.core.errors import warn


@click.command()
@click.option("--op", "op", metavar="NAME", help="An operator: its op_db name or a torch function.")
@click.option(
    "--module", "module", metavar="NAME", help="An nn.Module class, e.g. torch.nn.Unfold."
)
@click.option(
    "--init",
    metavar="ARGS",
    help="Constructor arguments for a --module without a ModuleInfo, e.g. 'kernel_size=2' "
    "(default: its required arguments, filled in by name).",
)
@click.option(
    "--check",
    "check",
    metavar="EXPR",
    help="The property the result must have, e.g. 'result.isfinite().all()'. Names: with an "
    "OpInfo result, sample, op; a function without one result, x; a --module result, module, "
    "inputs; and torch.",
)
@click.option(
    "--ref",
    "ref",
    metavar="NUMPY_FN",
    help="With --op, for a function without an OpInfo: a numpy reference, e.g. numpy.sinc.",
)
@click.option(
    "--from-repro",
    "from_repro",
    metavar="DIR|N",
    help="A repro folder written by `contribkit repro` (or just the issue number).",
)
@click.option(
    "--name",
    "name",
    metavar="NAME",
    help="The test's name (test_ is added); needed for a skeleton.",
)
@click.option(
    "--area",
    "area",
    metavar="AREA",
    help="Where the test belongs (nn, inductor, linalg, …); overrides the inferred area.",
)
@click.option(
    "--path",
    "path",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write a new test file here instead of the inferred place.",
)
@click.option(
    "--into",
    "into",
    metavar="FILE[::CLASS]",
    help="Insert the test into an existing test file (and class), changing no other line.",
)
@click.option(
    "--stdout", "to_stdout", is_flag=True, help="Print the resulting file instead of writing it."
)
@options.force
@options.dry_run
@options.python
@options.json_output
@options.verbose
def test(
    op: str | None,
    module: str | None,
    init: str | None,
    check: str | None,
    ref: str | None,
    from_repro: str | None,
    name: str | None,
    area: str | None,
    path: Path | None,
    into: str | None,
    to_stdout: bool,
    force: bool,
    dry_run: bool,
    python: str | None,
    as_json: bool,
) -> int:
    """Write a PyTorch-style test: device-generic, dtype-parametrized, owned and runnable.

    Give one of --op, --module or --from-repro; or --name (with --area) for an empty skeleton.
    The test goes where PyTorch keeps such tests: into the area's file when the fork has it
    (test/test_torch.py, test/test_nn.py, …; its device-generic class, as --into would), else
    into a new file there. --path writes a new file elsewhere; --into picks the file and class.
    A new file has the Owner(s) header, instantiate_device_type_tests and the run_tests() main
    block; every result is checked with the same rules as the contribkit-test-conventions hook.
    An insertion changes no other line, and an existing --path file is replaced only with --force.

    \b
    Examples:
      contribkit test --op index_add
      contribkit test --op index_add --check 'result.shape == sample.input.shape'
      contribkit test --module torch.nn.Unfold
      contribkit test --module torch.nn.Unfold --init 'kernel_size=3, stride=2'
      contribkit test --module torch.nn.Softmax --check 'result.ge(0).all()'
      contribkit test --op relu --check '(result >= 0).all()'
      contribkit test --from-repro repros/issue-170398
      contribkit test --from-repro 170398 --into test/dynamo/test_repros.py::ReproTests
      contribkit test --name empty_index --area indexing --dry-run
    """
    from contribkit.cli.output import print_json
    from contribkit.testgen.scaffold import ScaffoldRequest, scaffold

    request = ScaffoldRequest(
        op=op,
        module=module,
        init=init,
        check=check,
        ref=ref,
        from_repro=from_repro,
        name=name,
        area=area,
        path=path,
        into=into,
        to_stdout=to_stdout,
        force=force,
        dry_run=dry_run,
        python=python,
    )
    result = scaffold(request)
    plan = result.plan
    if to_stdout:
        click.echo(plan.after, nl=False)
        for note in plan.summary["notes"]:
            warn(note)
        return 0
    if as_json:
        print_json({**result.summary, **({"diff": plan.diff()} if dry_run else {})})
        return 0
    if dry_run:
        say(plan.diff(), nl=False)  # a preview for a person: filtered
    _print_summary(result.summary, dry_run)
    return 0


def _print_summary(summary: dict[str, Any], dry_run: bool) -> None:
    verb = "would insert into" if summary["action"] == "insert" else "would write"
    if not dry_run:
        verb = "inserted into" if summary["action"] == "insert" else "wrote"
    say(f"{verb} {summary['path']}")
    kind = "device-generic" if summary["device_generic"] else "not device-generic"
    say(f"  class:    {summary['class']} ({kind})")
    say(f"  test:     {summary['test']}")
    for device, names in summary["variants"].items():
        say(f"  {device + ':':<9} {', '.join(names)}")
    if "owner" in summary:
        say(f"  owner:    {summary['owner']} (from the {summary['owner_source']})")
    if "placed_by" in summary:
        say(f"  placed:   by {summary['placed_by']}")
    for added in summary.get("imports_added", []):
        say(f"  import:   {added}")
    for note in summary["notes"]:
        say(f"  note:     {note}")
    if summary["action"] == "create" and summary["file"] == "exists":
        say("  note:     the file exists and would be refused; pass --force to overwrite")
    say(f"  run:      {summary['run']}")
