"""``contribkit op``'s one core function: resolve the name, read the indexes and the torch facts,
search the checkout, trace on request, or plan a new operator."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from contribkit.core.errors import BadInput
from contribkit.core.record import Record
from contribkit.ops.index import YamlIndex
from contribkit.ops.model import (
    DerivativeEntry,
    NativeEntry,
    OpReport,
    Overload,
    TorchFacts,
)
from contribkit.ops.resolve import Resolved, resolve
from contribkit.ops.sources import Sources, open_sources

if TYPE_CHECKING:
    from contribkit.ops.grep import GrepReport
    from contribkit.ops.newop import NewOpPlan

# python_module in the yaml -> (Python namespace, the facts' key, prefix the op name carries)
NAMESPACES = {
    None: ("torch", "torch", ""),
    "nn": ("torch._C._nn", "nn", ""),
    "linalg": ("torch.linalg", "linalg", "linalg_"),
    "special": ("torch.special", "special", "special_"),
    "fft": ("torch.fft", "fft", "fft_"),
    "nested": ("torch.nested", "nested", "nested_"),
    "sparse": ("torch.sparse", "sparse", "sparse_"),
}


class OpRequest(Record):
    """What ``contribkit op`` was asked: a NAME, a --grep PATTERN or a --new NAME, and options."""

    name: str | None
    grep: str | None = None
    trace: bool = False
    new: str | None = None
    output: Path | None = None
    force: bool = False
    dry_run: bool = False
    python: str | None = None


def run_op(request: OpRequest) -> OpReport | GrepReport | NewOpPlan:
    """The report ``contribkit op`` prints: one operator, a --grep listing, or a --new plan."""
    from contribkit.core.workspace import Workspace

    given = [x for x in (request.name, request.grep, request.new) if x]
    if len(given) != 1:
        raise BadInput(
            "give one of NAME, --grep PATTERN or --new NAME",
            hint="e.g. contribkit op add, contribkit op --grep '^index_', contribkit op --new my_op",
        )
    if request.output is not None and not request.new:
        raise BadInput(
            "-o/--output is for --new", hint="e.g. contribkit op --new my_op -o /tmp/my_op"
        )
    if request.new:
        from contribkit.ops.newop import plan_new_op

        return plan_new_op(
            request.new, request.output, force=request.force, dry_run=request.dry_run
        )
    ws = Workspace.load(python=request.python)
    sources = open_sources(ws.python(), ws.settings, ws.root, with_derivatives=not request.grep)
    if request.grep:
        from contribkit.ops.grep import GrepReport, grep

        return GrepReport(request.grep, sources.source, grep(request.grep, sources.native))
    assert request.name is not None
    report = describe(request.name, sources)
    if request.trace:
        from contribkit.ops.trace import trace_overload

        report.trace = trace_overload(ws.python(), ws.settings.get("scrub_env"), report)
    return report


def select(resolved: Resolved, index: YamlIndex) -> list[NativeEntry]:
    entries = index.native(resolved.family)
    chosen = [
        e
        for e in entries
        if (resolved.overload is None or e.name == resolved.overload)
        and (resolved.op is None or e.name.split(".", 1)[0] == resolved.op)
    ]
    if not chosen:
        names = ", ".join(e.name for e in entries)
        raise BadInput(
            f"'{resolved.overload or resolved.op}' is not an overload of {resolved.family}",
            hint=f"its overloads: {names}",
        )
    return chosen


def describe(query: str, sources: Sources) -> OpReport:
    resolved = resolve(query, sources.native)
    entries = select(resolved, sources.native)
    derivatives = sources.derivatives.derivatives(resolved.family) if sources.derivatives else []
    facts = sources.facts
    overloads = [
        Overload(
            entry=entry,
            derivative=derivative_for(entry, derivatives),
            python=python_names(entry, facts),
            decomposition=decomposition(entry, facts),
            inductor=inductor(entry, facts),
        )
        for entry in entries
    ]
    report = OpReport(
        query=query,
        family=resolved.family,
        source=sources.source,
        overloads=overloads,
        opinfo=opinfos(resolved.family, entries, facts),
        torch_version=facts.torch_version if facts else None,
        notes=notes(sources),
    )
    if sources.checkout is not None:
        from contribkit.ops.checkout import search_checkout

        all_entries = sources.native.native(resolved.family)
        report.checkout = search_checkout(sources.checkout, resolved.family, all_entries)
    return report


def notes(sources: Sources) -> list[str]:
    found: list[str] = []
    if sources.torch_error:
        found.append(
            f"the target interpreter cannot import torch ({sources.torch_error}): "
            "decompositions, lowerings and OpInfos are unknown"
        )
    if sources.facts:
        for section, error in sorted(sources.facts.errors.items()):
            found.append(f"the probe's {section} section failed: {error}")
    if sources.derivatives is None:
        found.append("no derivatives.yaml was found: derivative formulas are unknown")
    if sources.checkout is None:
        found.append("not in a PyTorch checkout: kernel locations and tests are not searched")
    return found


def derivative_for(
    entry: NativeEntry, derivatives: list[DerivativeEntry]
) -> DerivativeEntry | None:
    """The derivatives.yaml entry autograd uses: the overload's own, else (for an in-place
    overload) its functional twin's."""
    by_name = {d.name: d for d in derivatives}
    if entry.name in by_name:
        return by_name[entry.name]
    op, dot, overload = entry.name.partition(".")
    if op.endswith("_") and not op.endswith("__"):
        return by_name.get(op[:-1] + dot + overload)
    return None


def python_names(entry: NativeEntry, facts: TorchFacts | None) -> list[str]:
    """How Python reaches the overload: torch.X / torch.linalg.X, Tensor.X, F wrappers."""
    op = entry.name.split(".", 1)[0]
    found: list[str] = []
    space, key, prefix = NAMESPACES.get(entry.python_module, NAMESPACES[None])
    if "function" in entry.variants:
        short = op[len(prefix) :] if prefix and op.startswith(prefix) else op
        if facts is None or short in facts.namespaces.get(key, set()):
            found.append(f"{space}.{short}")
    if "method" in entry.variants and (
        facts is None or op in facts.namespaces.get("Tensor", set())
    ):
        found.append(f"Tensor.{op}")
    if facts is not None:
        found += [w for w in facts.functional.get(op, []) if w not in found]
        same = f"torch.nn.functional.{op}"
        if op in facts.namespaces.get("functional", set()) and same not in found:
            found.append(same)
    return found


def decomposition(entry: NativeEntry, facts: TorchFacts | None) -> list[str] | None:
    if facts is None:
        return None
    op = entry.name.split(".", 1)[0]
    found = []
    if entry.name in facts.decompositions:
        found.append("torch._decomp")
    if op in facts.refs:
        found.append("torch._refs")
    return found


def inductor(entry: NativeEntry, facts: TorchFacts | None) -> str | None:
    if facts is None or "inductor" in facts.errors:
        return None
    packet = entry.name.split(".", 1)[0] + ".*"
    decomposed = entry.name in facts.inductor_decompositions
    if entry.name in facts.inductor_fallbacks or packet in facts.inductor_fallbacks:
        return "fallback (runs the aten kernel)"
    if entry.name in facts.inductor_lowerings or packet in facts.inductor_lowerings:
        return "lowered" + (
            " (after inductor's decomposition, for the inputs it takes)" if decomposed else ""
        )
    if decomposed:
        return "decomposed (inductor's decomposition table)"
    return "no lowering (an implicit fallback)"


def opinfos(family: str, entries: list[NativeEntry], facts: TorchFacts | None) -> list[str] | None:
    if facts is None or "opinfos" in facts.errors:
        return None
    found: list[str] = []
    for name in [family, *(e.name.split(".", 1)[0] for e in entries)]:
        found += [n for n in facts.opinfo.get(name, []) if n not in found]
    return found
