"""``contribkit op``: an operator from Python to its kernels, its derivatives and its tests."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from contribkit.cli import options
from contribkit.cli.output import say

if TYPE_CHECKING:
    from contribkit.ops.findings import Trace
    from contribkit.ops.model import OpReport, Overload
    from contribkit.ops.newop import NewOpPlan
    from contribkit.ops.resolve import GrepReport

# The rows of the live dispatch table shown as text (--json has them all).
SHOWN_KEYS = (
    "CPU",
    "CUDA",
    "Meta",
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "AutogradCPU",
    "AutogradCUDA",
    "ADInplaceOrView",
    "FuncTorchBatched",
    "Functionalize",
    "Python",
)


@click.command()
@click.argument("name", required=False, metavar="[NAME]")
@click.option("--grep", "grep", metavar="PATTERN", help="List the operators matching a regex.")
@click.option(
    "--trace",
    is_flag=True,
    help="Add the live dispatch table and the aten ops one sample call runs (imports torch).",
)
@click.option(
    "--new", "new", metavar="NAME", help="The places a new operator with autograd touches."
)
@click.option(
    "-o",
    "--output",
    "output",
    metavar="DIR",
    type=click.Path(file_okay=False, path_type=Path),
    help="With --new: write the skeletons here (the checkout's paths, plus PLAN.md).",
)
@options.force
@options.dry_run
@options.python
@options.json_output
@options.verbose
def op(
    name: str | None,
    grep: str | None,
    trace: bool,
    new: str | None,
    output: Path | None,
    force: bool,
    dry_run: bool,
    python: str | None,
    as_json: bool,
) -> int:
    """Trace an operator from Python to its kernels: schema, dispatch, derivatives, tests.

    NAME is an aten operator in any spelling: add, aten::add.Tensor, torch.add,
    Tensor.index_add_, torch.linalg.svd, F.relu. In a PyTorch checkout the fork's
    native_functions.yaml and derivatives.yaml are read, and the kernels and tests are searched;
    elsewhere the copies packaged with the target torch. Each yaml is indexed once (cached).

    \b
    Examples:
      contribkit op add
      contribkit op aten::add.Tensor --trace
      contribkit op --grep '^index_'
      contribkit op --new my_softplus -o /tmp/my_softplus
    """
    from contribkit.cli.output import print_json
    from contribkit.ops.model import OpReport
    from contribkit.ops.report import OpRequest, run_op
    from contribkit.ops.resolve import GrepReport

    request = OpRequest(name, grep, trace, new, output, force, dry_run, python)
    result = run_op(request)
    if as_json:
        print_json(result.as_dict())
    elif isinstance(result, OpReport):
        print_report(result)
    elif isinstance(result, GrepReport):
        print_grep(result)
    else:
        print_new(result)
    return 0


def print_report(report: OpReport) -> None:
    source = report.source
    torch = f", torch {report.torch_version}" if report.torch_version else ""
    say(f"{report.family}: {len(report.overloads)} overload(s){torch}")
    say(f"source:   {source.kind} {source.native_functions} (index {source.index})")
    if report.opinfo is not None:
        say(f"OpInfo:   {', '.join(report.opinfo) or 'none (no op_db entry covers it)'}")
    for overload in report.overloads:
        print_overload(overload)
    if report.checkout is not None:
        print_checkout(report)
    if report.trace is not None:
        print_trace(report.trace)
    for note in report.notes:
        say(f"note:     {note}")


def _dispatch_lines(overload: Overload) -> list[str]:
    entry = overload.entry
    by_kernel: dict[str, list[str]] = {}
    for row in entry.dispatch:
        by_kernel.setdefault(row.kernel, []).append(row.key)
    lines = [f"{', '.join(keys)}: {kernel}" for kernel, keys in by_kernel.items()]
    if entry.composite_implicit:
        lines.append(f"CompositeImplicitAutograd: {entry.name.split('.')[0]} (no dispatch entry)")
    if entry.structured_delegate:
        lines.insert(0, f"structured_delegate: {entry.structured_delegate} (its kernels run)")
    if entry.ufunc_inner_loop:
        loops = "; ".join(f"{k}: {v}" for k, v in entry.ufunc_inner_loop.items())
        lines.append(f"CPU, CUDA: generated from ufunc_inner_loop ({loops})")
    return lines


def print_overload(overload: Overload) -> None:
    entry = overload.entry
    say("")
    say(f"{entry.schema}    (native_functions.yaml:{entry.line})")
    say(f"  python:     {', '.join(overload.python) or '(not public)'}")
    say(f"  variants:   {', '.join(entry.variants)}")
    if entry.structured:
        say("  structured: True (TORCH_META_FUNC and TORCH_IMPL_FUNC)")
    for i, line in enumerate(_dispatch_lines(overload)):
        say(f"  {'dispatch:' if i == 0 else '':<11} {line}")
    if entry.tags or entry.autogen:
        say(f"  tags:       {', '.join(entry.tags) or '-'}")
    if entry.autogen:
        say(f"  autogen:    {', '.join(entry.autogen)}")
    derivative = overload.derivative
    if derivative is None:
        say("  derivative: none in derivatives.yaml")
    else:
        own = "" if derivative.name == entry.name else f" of {derivative.name}"
        say(f"  derivative{own}: (derivatives.yaml:{derivative.line})")
        for formula in derivative.formulas:
            say(f"    {formula.input}: {formula.formula}")
        if derivative.forward:
            say(f"    forward (result): {derivative.forward}")
    if overload.decomposition is not None:
        say(f"  decomposition: {', '.join(overload.decomposition) or 'none'}")
    if overload.inductor is not None:
        say(f"  inductor:   {overload.inductor}")


def print_checkout(report: OpReport) -> None:
    findings = report.checkout
    assert findings is not None
    say("")
    say("kernels:")
    for site in findings.kernels or []:
        say(f"  {site.kind:<18} {site.path}:{site.line}  {site.text}")
    if not findings.kernels:
        say("  (none found under aten/src/ATen/native)")
    shown = len(findings.tests)
    say(f"tests:    {findings.test_files_total} file(s) under test/ mention it")
    for test in findings.tests:
        say(f"  {test.path}  ({test.mentions})")
    if findings.test_files_total > shown:
        say(f"  … and {findings.test_files_total - shown} more (--json lists the top {shown})")


def print_trace(trace: Trace) -> None:
    say("")
    say(f"trace of {trace.overload} (the dispatch table torch computed):")
    if trace.sample:
        say(f"  sample:  {trace.sample}")
    if trace.input_keys:
        say(f"  keys:    {', '.join(trace.input_keys)} (the sample's first tensor)")
    for i, row in enumerate(trace.path):
        say(f"  {'path:' if i == 0 else '':<8} {row.key} -> {row.kind} ({row.kernel})")
    say(f"  ran:     {', '.join(trace.ops_run) or '(nothing reached the Python key)'}")
    if trace.error:
        say(f"  error:   {trace.error}")
    say("  table:")
    for row in trace.table:
        if row.key in SHOWN_KEYS:
            say(f"    {row.key:<26} {row.kind:<22} {row.kernel}")


def print_grep(report: GrepReport) -> None:
    for match in report.matches:
        say(f"{match.family:<32} {', '.join(match.overloads)}")
    say(f"{len(report.matches)} operator(s) match '{report.pattern}' ({report.source.kind})")


def print_new(plan: NewOpPlan) -> None:
    if plan.written is None:
        for skeleton in plan.skeletons:
            say(f"==> {skeleton.path} ({skeleton.action}): {skeleton.what}")
            say(skeleton.content)
        say(f"nothing written; -o DIR writes these {len(plan.skeletons)} skeletons there")
        return
    verb = "would write" if plan.dry_run else "wrote"
    say(f"{verb} the skeletons of {plan.name} under {plan.output}/:")
    for path, action in plan.written.items():
        say(f"  {path}" + (f"  ({action})" if plan.dry_run else ""))
    if plan.dry_run and "exists" in plan.written.values():
        say("note: existing files would be refused; pass --force to overwrite")
