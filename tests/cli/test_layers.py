"""Imports flow one way: the layer order of docs/architecture.md, checked on every import.

Every ``import`` in ``contribkit/`` counts, wherever it is written: at the top, inside a function
(a lazy import is still a dependency) or under ``TYPE_CHECKING`` (a type is still a dependency).
Two rules: no module imports a module of a higher layer, and no circle of imports exists at all,
within a layer included. A new circle or an upward import fails here with the path that makes it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent.parent / "contribkit"

# Lowest first. A module may import its own layer and any layer below it, never one above.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("target", "data"),  # run by the target interpreter (stdlib only); bundled data
    ("core",),  # what every stage shares
    ("conventions",),  # PyTorch's rules as pure functions
    ("git",),  # the repository (workspace: where a command runs)
    ("issue", "github"),  # the issue, and where it comes from
    ("run",),  # children, legs, records, probes of the target torch
    ("repro", "ops", "gaps", "debug", "pr", "demo", "setup", "bench", "bisect", "triage"),
    ("testgen", "hooks"),
    ("cli",),
    ("__main__",),
)
# Modules that sit in another layer than their package's.
MODULE_LAYER = {"contribkit.core.workspace": "git"}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """(imported contribkit module, line) for every import statement in the file."""
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".")
                keep = len(parts) - node.level + (1 if is_pkg else 0)
                base = ".".join(parts[:keep] + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in known:
                    yield full, node.lineno
                elif base in known:
                    yield base, node.lineno


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return 0  # contribkit/__init__.py: the version, nothing else
    package = MODULE_LAYER.get(module, parts[1])
    for rank, names in enumerate(LAYERS):
        if package in names:
            return rank
    raise AssertionError(f"{module}: package {package!r} has no layer in LAYERS (add it)")


def _graph() -> dict[str, dict[str, int]]:
    known = _modules()
    graph: dict[str, dict[str, int]] = {}
    for name, path in known.items():
        edges = graph.setdefault(name, {})
        for target, line in _imports(name, path, known):
            if target != name and not name.startswith(target + "."):
                edges.setdefault(target, line)
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(graph.get(child, {}))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_every_package_has_a_layer() -> None:
    for module in _modules():
        _layer(module)


def test_no_module_imports_a_higher_layer() -> None:
    upward = [
        f"{module} (layer {_layer(module)}) imports {target} (layer {_layer(target)}) "
        f"at line {line}"
        for module, edges in sorted(_graph().items())
        for target, line in sorted(edges.items())
        if _layer(target) > _layer(module)
    ]
    assert not upward, "imports flow upward:\n" + "\n".join(upward)


def test_no_import_circles() -> None:
    circles = _cycles(_graph())
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ({"a": {"b": 1}, "b": {"c": 1}, "c": {}}, []),
        ({"a": {"b": 1}, "b": {"a": 1}}, [["a", "b"]]),
        ({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}, [["a", "b", "c"]]),
    ],
)
def test_the_circle_finder_finds_circles(
    edges: dict[str, dict[str, int]], expected: list[list[str]]
) -> None:
    assert _cycles(edges) == expected
