"""The data passed between the stages of ``contribkit op``: yaml entries, torch facts, the report.

The checkout's findings and the trace have their types in findings.py, which imports nothing of
ops: checkout.py and trace.py import this module and that one, and this one names them only for
the type checker, so a warm query imports only what it uses. --grep and --new keep their types
beside their code (grep.py, newop.py).

Every report's ``as_dict`` is the documented ``--json`` schema (README, ``contribkit op``).
The types are records (core/record): a warm query creates all of them, and a record class costs
nothing to create where a dataclass compiles its methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contribkit.core.record import Record, field
from contribkit.core.record import as_dict as record_dict

if TYPE_CHECKING:
    from contribkit.ops.findings import CheckoutFindings, Trace

SCHEMA_VERSION = 1


class DispatchEntry(Record, frozen=True):
    """One row of an overload's yaml dispatch table: a dispatch key and the kernel it names."""

    key: str
    kernel: str


class NativeEntry(Record):
    """One ``- func:`` entry of native_functions.yaml."""

    name: str  # the overload: add.Tensor, add_.Scalar, relu (no overload name)
    schema: str
    line: int
    variants: list[str]
    dispatch: list[DispatchEntry]
    composite_implicit: bool  # no dispatch and no delegate: CompositeImplicitAutograd by default
    structured: bool
    structured_delegate: str | None
    tags: list[str]
    autogen: list[str]
    python_module: str | None
    ufunc_inner_loop: dict[str, str]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NativeEntry:
        return cls(**{**data, "dispatch": [DispatchEntry(**d) for d in data["dispatch"]]})


class Formula(Record, frozen=True):
    """The derivative formula of one input (or several, as derivatives.yaml joins them)."""

    input: str
    formula: str


class DerivativeEntry(Record):
    """One ``- name:`` entry of derivatives.yaml."""

    name: str
    schema: str
    line: int
    formulas: list[Formula]
    forward: str | None  # the ``result:`` forward-mode formula
    output_differentiability: list[bool] | None
    dispatch_formulas: dict[str, list[Formula]]  # AutogradNestedTensor: …, beside Default

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DerivativeEntry:
        return cls(
            **{
                **data,
                "formulas": [Formula(**f) for f in data["formulas"]],
                "dispatch_formulas": {
                    k: [Formula(**f) for f in v] for k, v in data["dispatch_formulas"].items()
                },
            }
        )


class Source(Record):
    """Where the yaml came from, and whether its index was built now or read from the cache."""

    kind: str  # "checkout" or "packaged"
    native_functions: str
    derivatives: str | None
    index: str  # "built" or "cached" (for native_functions.yaml; derivatives.yaml alike)


class TorchFacts(Record):
    """What the target torch knows beyond the yaml (op_info.py's ``facts``, cached per build)."""

    torch_version: str | None
    decompositions: set[str]
    refs: set[str]
    inductor_lowerings: set[str]
    inductor_fallbacks: set[str]
    inductor_decompositions: set[str]
    opinfo: dict[str, list[str]]  # aten name -> OpInfo names (name.variant) covering it
    functional: dict[str, list[str]]  # aten name -> torch.nn.functional wrappers calling it
    namespaces: dict[str, set[str]]  # "torch", "Tensor", "linalg", … -> public names
    errors: dict[str, str]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TorchFacts:
        sets = ("decompositions", "refs", "inductor_lowerings", "inductor_fallbacks")
        return cls(
            torch_version=data.get("torch_version"),
            **{name: set(data.get(name, [])) for name in sets},
            inductor_decompositions=set(data.get("inductor_decompositions", [])),
            opinfo=dict(data.get("opinfo", {})),
            functional=dict(data.get("functional", {})),
            namespaces={k: set(v) for k, v in data.get("namespaces", {}).items()},
            errors=dict(data.get("errors", {})),
        )


class Overload(Record):
    """One overload in the report: its yaml entry, its derivative and what torch does with it."""

    entry: NativeEntry
    derivative: DerivativeEntry | None
    python: list[str]  # torch.add, Tensor.add, torch.nn.functional.… wrappers
    decomposition: list[str] | None  # torch._decomp, torch._refs; None: torch not probed
    inductor: str | None  # lowered, fallback, decomposed, no lowering; None: not probed


class OpReport(Record):
    """What ``op NAME`` prints; ``as_dict`` is its ``--json``."""

    query: str
    family: str
    source: Source
    overloads: list[Overload]
    opinfo: list[str] | None  # None: torch not probed
    torch_version: str | None
    notes: list[str] = field(default_factory=list)
    checkout: CheckoutFindings | None = None
    trace: Trace | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA_VERSION, **record_dict(self)}
