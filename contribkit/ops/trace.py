"""``contribkit op --trace``: the dispatch table the target torch computed for an overload, the
path a sample call's inputs take through it, and the aten ops that call runs."""

from __future__ import annotations

from contribkit.core.errors import BadInput
from contribkit.ops.findings import TableRow, Trace
from contribkit.ops.model import OpReport


def trace_target(report: OpReport) -> str:
    """The overload to trace: the one asked for, else the first functional one."""
    entries = [o.entry for o in report.overloads]
    for entry in entries:
        if ".out" not in entry.name and not entry.name.split(".")[0].endswith("_"):
            return entry.name
    return entries[0].name


def trace_overload(python: str, scrub: list[str], report: OpReport) -> Trace:
    """Run op_info.py's trace mode: the live dispatch table and one sample call."""
    from contribkit.run.probe import probe_source, run_probe

    overload = trace_target(report)
    raw = run_probe(python, probe_source("op_info.py"), scrub=scrub, args=["trace", overload])
    if "error" in raw:
        raise BadInput(
            f"--trace needs torch in {python}: {raw['error']}",
            hint="pass --python with the interpreter of your PyTorch build",
        )
    return Trace(
        overload=overload,
        table=[TableRow(**row) for row in raw.get("table", [])],
        sample=raw.get("sample"),
        input_keys=list(raw.get("input_keys", [])),
        path=[TableRow(**row) for row in raw.get("path", [])],
        ops_run=list(raw.get("ops_run", [])),
        error=raw.get("trace_error"),
    )
