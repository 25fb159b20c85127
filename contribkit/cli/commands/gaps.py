"""``contribkit gaps``: a module's public callables ranked by what their docstrings and tests lack."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from contribkit.cli import options
from contribkit.cli.output import say

if TYPE_CHECKING:
    from contribkit.gaps.report import GapsReport


@click.command()
@click.argument("module", metavar="MODULE")
@click.option("--markdown", is_flag=True, help="Print a Markdown table to paste into an issue.")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    metavar="N",
    default=None,
    help="Show only the N rows most in need.",
)
@click.option(
    "--refresh",
    is_flag=True,
    help="Probe the module again even if the cached answer is current.",
)
@options.python
@options.json_output
@options.verbose
def gaps(
    module: str,
    markdown: bool,
    limit: int | None,
    refresh: bool,
    python: str | None,
    as_json: bool,
) -> int:
    """Rank a module's public callables by missing docstring entries and tests.

    MODULE is imported in the target interpreter (a module name, or a .py file). Each public
    callable's parameters are checked against its docstring (Google `Args:` as PyTorch writes
    it, NumPy and `:param` styles; add_docstr docs count). In a PyTorch checkout, test/ is
    searched for mentions (F.name, torch.nn.functional.name, OpInfo names); OpInfo and
    ModuleInfo coverage comes from the target torch. Untested and undocumented come first.
    The probe's answer is cached until the interpreter, its site-packages, torch or the
    module's file changes (--refresh probes again).

    \b
    Examples:
      contribkit gaps torch.nn.functional
      contribkit gaps torch.nn --limit 20
      contribkit gaps torch.linalg --markdown > gaps.md
    """
    from contribkit.cli.output import print_json
    from contribkit.gaps.report import GapsRequest, find_gaps
    from contribkit.gaps.report import markdown as to_markdown

    report = find_gaps(GapsRequest(module, python, limit, refresh))
    if as_json:
        print_json(report.as_dict())
    elif markdown:
        say(to_markdown(report), nl=False)
    else:
        print_table(report)
    return 0


def print_table(report: GapsReport) -> None:
    from contribkit.cli.output import print_table as table

    rows = []
    for gap in report.gaps:
        doc = gap.docstring + (f": {', '.join(gap.undocumented)}" if gap.undocumented else "")
        mentions = "-" if gap.test_mentions is None else str(gap.test_mentions)
        covered = ", ".join(gap.opinfo[:2]) or gap.moduleinfo or "none"
        rows.append([gap.name, gap.kind, doc, mentions, covered, "; ".join(gap.todo) or "-"])
    title = f"{report.module}: {len(report.gaps)} public callable(s), most in need first"
    table(
        ["callable", "kind", "docstring", "tests", "OpInfo/ModuleInfo", "what to do"], rows, title
    )
    for note in report.notes:
        say(f"note: {note}")
