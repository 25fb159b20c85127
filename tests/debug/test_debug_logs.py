"""TORCH_LOGS names: the real torch 2.13 registry (slow: it imports torch), the bundled fallback,
spec parsing, caching."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from contribkit.core.cache import JsonCache
from contribkit.core.errors import BadInput
from contribkit.debug.torchlogs import Registry, bundled_fallback, load_registry, parse_spec


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    """The registry of the torch installed for the tests (probed once for the module)."""
    cache = JsonCache(tmp_path_factory.mktemp("cache"), "torch-logs")
    return load_registry(sys.executable, cache, scrub=())


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory, bare_python: str) -> Registry:
    """The bundled list, as an interpreter without torch gets it (no torch imported)."""
    cache = JsonCache(tmp_path_factory.mktemp("cache"), "torch-logs")
    return load_registry(bare_python, cache, scrub=())


@pytest.mark.slow
def test_registry_comes_from_the_real_torch(registry: Registry) -> None:
    assert not registry.fallback
    assert registry.torch_version and registry.torch_version.startswith("2.13")
    assert {"dynamo", "aot", "inductor", "dynamic", "distributed"} <= set(registry.components)
    assert {"graph_breaks", "recompiles", "recompiles_verbose", "guards", "output_code"} <= set(
        registry.artifacts
    )
    assert "torch._dynamo" in registry.components["dynamo"]
    assert registry.artifacts["output_code"].off_by_default
    assert not registry.artifacts["graph_breaks"].off_by_default
    assert "guards" in registry.artifacts["guards"].description
    assert registry.debug_build is False  # the CPU wheel is a release build


@pytest.mark.slow
def test_bundled_fallback_is_torch_2_13s_registry(registry: Registry) -> None:
    fallback = bundled_fallback()
    assert registry.torch_version
    assert fallback["torch_version"] == registry.torch_version.split("+")[0], (
        "refresh it: python scripts/update_torch_logs_fallback.py"
    )
    assert fallback["components"] == registry.components
    assert set(fallback["artifacts"]) == set(registry.artifacts)


@pytest.mark.slow
def test_spec_kinds_levels_and_artifact_prefix_warning(registry: Registry) -> None:
    spec = parse_spec(
        "+dynamo, graph_breaks,-inductor,+output_code,+torch._dynamo.guards,all",
        registry,
        scrub=(),
    )
    kinds = {e.name: (e.prefix, e.kind) for e in spec.entries}
    assert kinds == {
        "dynamo": ("+", "component"),
        "graph_breaks": ("", "artifact"),
        "inductor": ("-", "component"),
        "output_code": ("+", "artifact"),
        "torch._dynamo.guards": ("+", "module"),
        "all": ("", "all"),
    }
    assert str(spec) == "+dynamo,graph_breaks,-inductor,+output_code,+torch._dynamo.guards,all"
    assert len(spec.warnings) == 1 and "'+output_code'" in spec.warnings[0]
    assert "does nothing" in spec.warnings[0]


def test_any_importable_module_is_accepted(bundled: Registry) -> None:
    # torch accepts every module importlib can find (not only torch's own).
    spec = parse_spec("+json.decoder,-torch._inductor.codegen", bundled, scrub=())
    assert [e.kind for e in spec.entries] == ["module", "module"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("spec", "suggestion"),
    [
        ("grahp_breaks", "graph_breaks"),
        ("+dynamo,recompile", "recompiles"),
        ("+torch._dynamo.gaurds", "torch._dynamo.guards"),
    ],
)
def test_unknown_names_are_bad_input_with_did_you_mean(
    registry: Registry, spec: str, suggestion: str
) -> None:
    with pytest.raises(BadInput) as err:
        parse_spec(spec, registry, scrub=())
    assert "unknown TORCH_LOGS name" in err.value.message
    assert "torch 2.13" in err.value.message
    assert err.value.hint and f"'{suggestion}'" in err.value.hint
    assert err.value.exit_code == 2


@pytest.mark.parametrize("spec", ["dynamo,,aot", "+", "dynamo;aot", "dyn amo", ".torch", "help"])
def test_bad_syntax_is_bad_input(bundled: Registry, spec: str) -> None:
    with pytest.raises(BadInput):
        parse_spec(spec, bundled, scrub=())


def test_fallback_list_when_torch_is_absent(bare_python: str, tmp_path: Path) -> None:
    fallback = load_registry(bare_python, JsonCache(tmp_path, "torch-logs"), scrub=())
    assert fallback.fallback and "No module named 'torch'" in (fallback.error or "")
    assert "list bundled with contribkit" in fallback.source()
    assert "graph_breaks" in fallback.artifacts and "dynamo" in fallback.components
    spec = parse_spec("+dynamo,graph_breaks,+torch._dynamo.guards", fallback, scrub=())
    assert [e.kind for e in spec.entries] == ["component", "artifact", "module"]
    assert any("not checked" in w for w in spec.warnings)
    with pytest.raises(BadInput) as err:
        parse_spec("graph_brakes", fallback, scrub=())
    assert "bundled list" in err.value.message and "'graph_breaks'" in (err.value.hint or "")


def _stub_interpreter(tmp_path: Path, counter: Path, torch_dir: Path) -> Path:
    """A fake interpreter that answers the registry probe and counts how often it ran."""
    answer = {
        "executable": "stub",
        "purelib": str(torch_dir.parent),
        "torch": True,
        "torch_version": "2.99.0",
        "torch_path": str(torch_dir),
        "components": {"dynamo": ["torch._dynamo"]},
        "artifacts": {"graph_breaks": {"description": "breaks", "off_by_default": False}},
    }
    stub = tmp_path / "python"
    stub.write_text(
        f"#!/bin/sh\necho x >> '{counter}'\necho 'CONTRIBKIT_PROBE {json.dumps(answer)}'\n"
    )
    stub.chmod(0o755)
    return stub


def test_registry_is_cached_per_interpreter_and_torch_version(tmp_path: Path) -> None:
    torch_dir = tmp_path / "site" / "torch"
    torch_dir.mkdir(parents=True)
    version_py = torch_dir / "version.py"
    version_py.write_text("__version__ = '2.99.0'\n")
    counter = tmp_path / "calls"
    stub = _stub_interpreter(tmp_path, counter, torch_dir)
    cache = JsonCache(tmp_path / "cache", "torch-logs")
    first = load_registry(str(stub), cache, scrub=())
    second = load_registry(str(stub), cache, scrub=())
    assert first.components == second.components == {"dynamo": ["torch._dynamo"]}
    assert len(counter.read_text().splitlines()) == 1
    # A new torch version in place (same folder, mtime kept) is noticed from version.py.
    mtime = version_py.stat().st_mtime
    version_py.write_text("__version__ = '3.0.0'\n")
    os.utime(version_py, (mtime, mtime))
    load_registry(str(stub), cache, scrub=())
    assert len(counter.read_text().splitlines()) == 2
