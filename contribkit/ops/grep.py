"""``contribkit op --grep``: the operator families whose name matches a regex, with their
overloads (its types live here, so that a query by name does not build them)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from contribkit.core.errors import BadInput
from contribkit.ops.index import YamlIndex
from contribkit.ops.model import SCHEMA_VERSION, Source


@dataclass(frozen=True)
class GrepMatch:
    """One family that matches, with its overloads' names."""

    family: str
    overloads: list[str]


@dataclass
class GrepReport:
    """What ``op --grep`` prints; ``as_dict`` is its ``--json``."""

    pattern: str
    source: Source
    matches: list[GrepMatch]

    def as_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA_VERSION, **asdict(self)}


def grep(pattern: str, index: YamlIndex) -> list[GrepMatch]:
    """The families whose name matches ``pattern`` (a Python regex), with their overloads."""
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise BadInput(
            f"--grep: '{pattern}' is not a regular expression: {exc}",
            hint="e.g. --grep '^index_' or --grep add",
        ) from exc
    matches = []
    for family in index.names():
        if compiled.search(family):
            overloads = [str(entry["name"]) for entry in index.raw(family)]
            matches.append(GrepMatch(family, overloads))
    return matches
