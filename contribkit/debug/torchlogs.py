"""TORCH_LOGS names: the target interpreter's registry, and parsing/validating a log spec.

The registry is read by a probe (``probes/torch_logs.py``) in the *target* interpreter and cached
per interpreter (path, mtime) and torch version. When that interpreter cannot import torch, the
list bundled with contribkit (``data/torch_logs_fallback.json``) is used instead, and says so.

A spec follows PyTorch's syntax: comma-separated ``[+|-]name``, where a name is ``all``, a
component (``dynamo``), an artifact (``graph_breaks``) or a qualified module name
(``+torch._dynamo.guards``). ``+`` means DEBUG and ``-`` ERROR for components and modules; an
artifact is only on or off.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contribkit.core.cache import JsonCache
from contribkit.core.errors import BadInput

FALLBACK_RESOURCE = "data/torch_logs_fallback.json"
_ENTRY_RE = re.compile(r"^(?P<prefix>[+-]?)(?P<name>[\w.]+)$")
_EXTENSION_SUFFIXES = (".so", ".pyd")


@dataclass(frozen=True)
class Artifact:
    description: str = ""
    off_by_default: bool = False


@dataclass
class Registry:
    """The log names one interpreter's torch accepts."""

    python: str
    components: dict[str, list[str]]  # alias -> logger qualified names
    artifacts: dict[str, Artifact]
    torch_version: str | None
    fallback: bool  # True: torch is not importable there; names come from the bundled list
    error: str | None = None  # why torch could not be imported
    torch_path: str | None = None
    debug_build: bool | None = None  # None when unknown (fallback)
    cuda_build: str | None = None
    search_path: list[str] = field(default_factory=list)
    builtin_modules: list[str] = field(default_factory=list)

    def source(self) -> str:
        if self.fallback:
            return (
                f"the list bundled with contribkit (torch {self.torch_version}), because "
                f"torch is not importable by {self.python}"
            )
        return f"torch {self.torch_version} in {self.python}"

    def names(self) -> list[str]:
        return ["all", *sorted(self.components), *sorted(self.artifacts)]

    def describe(self, name: str) -> str:
        if name == "all":
            return "Every torch logger (sets the level of 'torch')."
        if name in self.components:
            qnames = self.components[name]
            shown = ", ".join(qnames[:3]) + (
                f", +{len(qnames) - 3} more" if len(qnames) > 3 else ""
            )
            return f"Component: sets the level of {shown}."
        art = self.artifacts[name]
        text = " ".join(art.description.split()) or "(no description registered)"
        return text + (" [off unless named]" if art.off_by_default else "")

    def module_on_disk(self, qname: str) -> bool:
        """Whether ``qname`` can be found on the interpreter's path, without importing anything.

        A ``False`` is not final: editable installs and zip imports are only seen by importlib
        (see :func:`find_modules`).
        """
        parts = qname.split(".")
        if len(parts) == 1 and qname in self.builtin_modules:
            return True
        roots = list(self.search_path)
        if parts[0] == "torch" and self.torch_path:
            roots.insert(0, os.path.dirname(self.torch_path))
        for root in roots:
            folder = os.path.join(root, *parts[:-1])
            if os.path.isdir(folder) and _has_module(folder, parts[-1]):
                return True
        return False

    def sibling_modules(self, qname: str) -> list[str]:
        """Modules next to ``qname`` (for a did-you-mean on a mistyped qualified name)."""
        parent, _, _ = qname.rpartition(".")
        roots = list(self.search_path)
        if qname.startswith("torch.") and self.torch_path:
            roots.insert(0, os.path.dirname(self.torch_path))
        found: set[str] = set()
        for root in roots:
            folder = os.path.join(root, *parent.split("."))
            try:
                entries = os.listdir(folder)
            except OSError:
                continue
            for entry in entries:
                stem = entry.split(".", 1)[0]
                if stem.isidentifier() and (
                    entry.endswith(".py") or os.path.isdir(os.path.join(folder, entry))
                ):
                    found.add(f"{parent}.{stem}")
        return sorted(found)


def _has_module(folder: str, name: str) -> bool:
    if os.path.isdir(os.path.join(folder, name)) or os.path.isfile(
        os.path.join(folder, name + ".py")
    ):
        return True
    try:
        entries = os.listdir(folder)
    except OSError:
        return False
    return any(e.startswith(name + ".") and e.endswith(_EXTENSION_SUFFIXES) for e in entries)


def _artifacts(raw: dict[str, Any]) -> dict[str, Artifact]:
    return {
        name: Artifact(str(a.get("description", "")), bool(a.get("off_by_default", False)))
        for name, a in raw.items()
    }


def bundled_fallback() -> dict[str, Any]:
    from importlib import resources

    text = resources.files("contribkit").joinpath(FALLBACK_RESOURCE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def load_registry(
    python: str, cache: JsonCache | None = None, *, scrub: Sequence[str], refresh: bool = False
) -> Registry:
    """The registry of ``python``'s torch (cached), or the bundled fallback without torch."""
    from contribkit.run.probe import cached_probe

    raw = cached_probe(python, "torch_logs.py", cache, scrub=scrub, refresh=refresh)
    common: dict[str, Any] = {
        "python": python,
        "search_path": list(raw.get("search_path", [])),
        "builtin_modules": list(raw.get("builtin_modules", [])),
    }
    if raw.get("torch") and "components" in raw:
        return Registry(
            components={k: list(v) for k, v in raw["components"].items()},
            artifacts=_artifacts(raw.get("artifacts", {})),
            torch_version=raw.get("torch_version"),
            fallback=False,
            torch_path=raw.get("torch_path"),
            debug_build=bool(raw.get("debug")),
            cuda_build=raw.get("cuda_build"),
            **common,
        )
    bundled = bundled_fallback()
    return Registry(
        components={k: list(v) for k, v in bundled["components"].items()},
        artifacts=_artifacts(bundled["artifacts"]),
        torch_version=bundled.get("torch_version"),
        fallback=True,
        error=raw.get("error") or "torch has no TORCH_LOGS registry",
        **common,
    )


def find_modules(python: str, names: list[str], *, scrub: Sequence[str]) -> dict[str, bool]:
    """Ask the interpreter's importlib whether each module exists (exact, but may import parents)."""
    from contribkit.run.probe import probe_source, run_probe

    probe = probe_source("find_modules.py")
    found = run_probe(python, probe, scrub=scrub, args=names).get("found", {})
    return {name: bool(found.get(name)) for name in names}


@dataclass(frozen=True)
class LogEntry:
    name: str
    prefix: str  # "", "+" (DEBUG) or "-" (ERROR)
    kind: str  # "all", "component", "artifact" or "module"

    def __str__(self) -> str:
        return self.prefix + self.name


@dataclass
class LogSpec:
    entries: list[LogEntry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return ",".join(str(e) for e in self.entries)

    def add(self, entry: LogEntry) -> None:
        """Add ``entry``; a later mention of the same name replaces the earlier one."""
        self.entries = [e for e in self.entries if e.name != entry.name] + [entry]


def split_spec(spec: str) -> list[tuple[str, str]]:
    """``"+dynamo, graph_breaks"`` -> ``[("+", "dynamo"), ("", "graph_breaks")]``; syntax only."""
    if spec.strip() in {"help", "+help"}:
        raise BadInput(
            "TORCH_LOGS 'help' only prints torch's list of names",
            hint="see them with: contribkit debug --list-logs",
        )
    pairs = []
    for raw in spec.split(","):
        item = raw.strip()
        m = _ENTRY_RE.match(item)
        if not m or m.group("name").startswith(".") or m.group("name").endswith("."):
            what = f"'{item}'" if item else "an empty name"
            raise BadInput(
                f"bad TORCH_LOGS spec '{spec}': {what} is not [+|-]NAME",
                hint='use comma-separated names, e.g. --logs "+dynamo,graph_breaks,recompiles"',
            )
        pairs.append((m.group("prefix"), m.group("name")))
    return pairs


def parse_spec(
    spec: str, registry: Registry, *, scrub: Sequence[str], python: str | None = None
) -> LogSpec:
    """Check every name of ``spec`` against ``registry``; unknown names raise :class:`BadInput`.

    Names that look like modules and are not found on disk are confirmed by importlib in the
    target interpreter (``python``, with ``scrub`` as for any child) before they are called unknown.
    """
    result = LogSpec()
    pending: list[tuple[str, str]] = []
    for prefix, name in split_spec(spec):
        kind = classify(name, registry)
        if kind is None:
            pending.append((prefix, name))
            continue
        if kind == "artifact" and prefix:
            result.warnings.append(
                f"'{prefix}{name}': {name} is an artifact, which is only on or off; "
                f"the '{prefix}' does nothing"
            )
        if kind == "module" and registry.fallback:
            result.warnings.append(
                f"'{name}' is not checked: torch is not importable by {registry.python}"
            )
        result.add(LogEntry(name, prefix, kind))
    if pending:
        names = [name for _, name in pending]
        exists = find_modules(python or registry.python, names, scrub=scrub)
        for prefix, name in pending:
            if not exists[name]:
                raise unknown_name(name, registry)
            result.add(LogEntry(name, prefix, "module"))
    return result


def classify(name: str, registry: Registry) -> str | None:
    """The kind of ``name``, or None when only importlib can tell (a module not seen on disk)."""
    if name == "all":
        return "all"
    if name in registry.components:
        return "component"
    if name in registry.artifacts:
        return "artifact"
    if registry.fallback and "." in name:
        return "module"  # cannot be checked without torch; parse_spec warns
    if registry.module_on_disk(name):
        return "module"
    return None


def unknown_name(name: str, registry: Registry) -> BadInput:
    import difflib

    candidates = registry.sibling_modules(name) if "." in name else registry.names()
    close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    suggestion = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    where = (
        "in the bundled list (torch is not importable there)"
        if registry.fallback
        else f"in torch {registry.torch_version}"
    )
    return BadInput(
        f"unknown TORCH_LOGS name '{name}': not a component, artifact or module {where}",
        hint=f"{suggestion}see every name with: contribkit debug --list-logs",
    )
