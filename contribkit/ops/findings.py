"""The types of what ``contribkit op`` finds beyond the yaml: the checkout's kernels and tests
(checkout.py) and the live dispatch table (trace.py). Dataclasses only, importing nothing of ops,
so that model.py can name them without an import circle."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CodeSite:
    """A line of the checkout: a kernel definition, a registration, a test mentioning the op."""

    path: str
    line: int
    kind: str
    text: str


@dataclass(frozen=True)
class TestFile:
    path: str
    mentions: int


@dataclass
class CheckoutFindings:
    kernels: list[CodeSite]
    tests: list[TestFile]
    test_files_total: int


@dataclass(frozen=True)
class TableRow:
    """One dispatch key of the live table that torch computed, and what it runs."""

    key: str
    kernel: str
    kind: str  # kernel, autograd kernel, math kernel, default backend kernel, fallthrough, …


@dataclass
class Trace:
    """``--trace``: the computed dispatch table and one sample call."""

    overload: str
    table: list[TableRow]
    sample: str | None
    input_keys: list[str]
    path: list[TableRow]  # the keys the sample's inputs go through, highest first
    ops_run: list[str]  # aten ops that reached the Python dispatch key (a TorchDispatchMode)
    error: str | None
