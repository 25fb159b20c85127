"""``contribkit op``: an operator from Python to its kernels, its derivatives and its tests."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from contribkit.cli import options
from contribkit.cli.output import say_lines

if TYPE_CHECKING:
    from contribkit.ops.findings import Trace
    from contribkit.ops.grep import GrepReport
    from contribkit.ops.model import OpReport, Overload
    from contribkit.ops.newop import NewOpPlan

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

    request = OpRequest(name, grep, trace, new, output, force, dry_run, python)
    result = run_op(request)
    if as_json:
        print_json(result.as_dict())
    elif isinstance(result, OpReport):
        say_lines(report_lines(result))
    else:  # --grep or --new: a query by name does not import their types
        from contribkit.ops.grep import GrepReport

        say_lines(grep_lines(result) if isinstance(result, GrepReport) else new_lines(result))
    return 0


def report_lines(report: OpReport) -> list[str]:
    """What ``op NAME`` prints, one string a line: written at once (say_lines)."""
    lines: list[str] = []
    add = lines.append
    source = report.source
    torch = f", torch {report.torch_version}" if report.torch_version else ""
    add(f"{report.family}: {len(report.overloads)} overload(s){torch}")
    add(f"source:   {source.kind} {source.native_functions} (index {source.index})")
    if report.opinfo is not None:
        add(f"OpInfo:   {', '.join(report.opinfo) or 'none (no op_db entry covers it)'}")
    for overload in report.overloads:
        lines += overload_lines(overload)
    if report.checkout is not None:
        lines += checkout_lines(report)
    if report.trace is not None:
        lines += trace_lines(report.trace)
    for note in report.notes:
        add(f"note:     {note}")
    return lines


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


def overload_lines(overload: Overload) -> list[str]:
    lines: list[str] = []
    add = lines.append
    entry = overload.entry
    add("")
    add(f"{entry.schema}    (native_functions.yaml:{entry.line})")
    add(f"  python:     {', '.join(overload.python) or '(not public)'}")
    add(f"  variants:   {', '.join(entry.variants)}")
    if entry.structured:
        add("  structured: True (TORCH_META_FUNC and TORCH_IMPL_FUNC)")
    for i, line in enumerate(_dispatch_lines(overload)):
        add(f"  {'dispatch:' if i == 0 else '':<11} {line}")
    if entry.tags or entry.autogen:
        add(f"  tags:       {', '.join(entry.tags) or '-'}")
    if entry.autogen:
        add(f"  autogen:    {', '.join(entry.autogen)}")
    derivative = overload.derivative
    if derivative is None:
        add("  derivative: none in derivatives.yaml")
    else:
        own = "" if derivative.name == entry.name else f" of {derivative.name}"
        add(f"  derivative{own}: (derivatives.yaml:{derivative.line})")
        for formula in derivative.formulas:
            add(f"    {formula.input}: {formula.formula}")
        if derivative.forward:
            add(f"    forward (result): {derivative.forward}")
    if overload.decomposition is not None:
        add(f"  decomposition: {', '.join(overload.decomposition) or 'none'}")
    if overload.inductor is not None:
        add(f"  inductor:   {overload.inductor}")
    return lines


def checkout_lines(report: OpReport) -> list[str]:
    lines: list[str] = []
    add = lines.append
    findings = report.checkout
    assert findings is not None
    add("")
    add("kernels:")
    for site in findings.kernels or []:
        add(f"  {site.kind:<18} {site.path}:{site.line}  {site.text}")
    if not findings.kernels:
        add("  (none found under aten/src/ATen/native)")
    shown = len(findings.tests)
    add(f"tests:    {findings.test_files_total} file(s) under test/ mention it")
    for test in findings.tests:
        add(f"  {test.path}  ({test.mentions})")
    if findings.test_files_total > shown:
        add(f"  … and {findings.test_files_total - shown} more (--json lists the top {shown})")
    return lines


def trace_lines(trace: Trace) -> list[str]:
    lines: list[str] = []
    add = lines.append
    add("")
    add(f"trace of {trace.overload} (the dispatch table torch computed):")
    if trace.sample:
        add(f"  sample:  {trace.sample}")
    if trace.input_keys:
        add(f"  keys:    {', '.join(trace.input_keys)} (the sample's first tensor)")
    for i, row in enumerate(trace.path):
        add(f"  {'path:' if i == 0 else '':<8} {row.key} -> {row.kind} ({row.kernel})")
    add(f"  ran:     {', '.join(trace.ops_run) or '(nothing reached the Python key)'}")
    if trace.error:
        add(f"  error:   {trace.error}")
    add("  table:")
    for row in trace.table:
        if row.key in SHOWN_KEYS:
            add(f"    {row.key:<26} {row.kind:<22} {row.kernel}")
    return lines


def grep_lines(report: GrepReport) -> list[str]:
    lines = [f"{match.family:<32} {', '.join(match.overloads)}" for match in report.matches]
    lines.append(
        f"{len(report.matches)} operator(s) match '{report.pattern}' ({report.source.kind})"
    )
    return lines


def new_lines(plan: NewOpPlan) -> list[str]:
    lines: list[str] = []
    add = lines.append
    if plan.written is None:
        for skeleton in plan.skeletons:
            add(f"==> {skeleton.path} ({skeleton.action}): {skeleton.what}")
            add(skeleton.content)
        add(f"nothing written; -o DIR writes these {len(plan.skeletons)} skeletons there")
        return lines
    verb = "would write" if plan.dry_run else "wrote"
    add(f"{verb} the skeletons of {plan.name} under {plan.output}/:")
    for path, action in plan.written.items():
        add(f"  {path}" + (f"  ({action})" if plan.dry_run else ""))
    if plan.dry_run and "exists" in plan.written.values():
        add("note: existing files would be refused; pass --force to overwrite")
    return lines
