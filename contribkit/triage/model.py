"""The triage record: which repros ran on which interpreters and devices, the cells, and what
they say (the boundary per repro and device, and a state per repro).

Written atomically to ``.contribkit/triage/<id>.json`` beside the legs' logs; never under
``.contribkit/runs/``, whose latest record the ``submit`` gate reads.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from contribkit.run.record import Cell, Interpreter

DEFINITE = ("REPRODUCED", "NOT_REPRODUCED")
STATES = ("reproduces", "no longer reproduces", "cannot decide")

_RELEASE_RE = re.compile(r"^v?(\d+(?:\.\d+)*)(?:[.-]?(dev|a|alpha|b|beta|rc|c|post)\.?(\d*))?")
_PHASES = {"dev": 0, "a": 1, "alpha": 1, "b": 2, "beta": 2, "rc": 3, "c": 3, "post": 5}


def version_key(version: str | None) -> tuple[Any, ...]:
    """A sort key that orders torch versions as PEP 440 does for the forms torch uses: release
    numbers compared as numbers (2.13.0 after 2.9.0), a nightly or pre-release before its
    release (2.10.0.dev20250601 < 2.10.0a0+git1234 < 2.10.0rc1 < 2.10.0), the local part
    (+cpu, +cu126, +gitabc) last. No version (no torch) sorts after every version."""
    if not version:
        return (1, (), 0, 0, "")
    found = _RELEASE_RE.match(version.strip())
    if not found:
        return (1, (), 0, 0, version)
    release = tuple(int(p) for p in found.group(1).split("."))
    release = release + (0,) * (3 - len(release))
    phase = _PHASES.get(found.group(2) or "", 4)
    number = int(found.group(3)) if found.group(3) else 0
    return (0, release, phase, number, version)


@dataclass
class TriageRepro:
    name: str  # issue-170398
    file: str  # the script as cells name it (relative to the root)
    issue: int | None
    command: str  # the command line a leg runs (device as DEVICE)
    oracle: str  # the oracle that decides its verdict
    missing: str | None = None  # why there is no repro to run (an --issues entry)


@dataclass
class Boundary:
    repro: str
    device: str
    kind: str  # "introduced", "fixed", "always", "never", "mixed"
    text: str  # "reproduces from 2.9.0 on; not on 2.8.0"


@dataclass
class ReproState:
    repro: str
    state: str  # one of STATES
    evidence: str  # the cell (version, device, detail) that decides it, and the boundary


@dataclass
class TriageRecord:
    id: str
    created: str
    devices: list[str]
    interpreters: list[Interpreter]
    repros: list[TriageRepro]
    cells: list[Cell]
    boundaries: list[Boundary] = field(default_factory=list)
    states: list[ReproState] = field(default_factory=list)
    jobs: int = 1
    sandbox: str = "none"
    sandbox_reason: str = ""
    notes: list[str] = field(default_factory=list)
    contribkit_version: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def interpreter(self, index: int) -> Interpreter:
        return next(i for i in self.interpreters if i.index == index)

    def by_version(self) -> list[Interpreter]:
        """The interpreters, oldest torch first (no torch last)."""
        return sorted(self.interpreters, key=lambda i: (version_key(i.torch_version), i.index))

    def newest(self) -> Interpreter | None:
        with_torch = [i for i in self.by_version() if i.torch_version]
        return with_torch[-1] if with_torch else None

    @property
    def decided(self) -> bool:
        """Whether any cell gave a definite verdict."""
        return any(c.status in DEFINITE for c in self.cells)
