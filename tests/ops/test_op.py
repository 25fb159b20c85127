"""``contribkit op``: the yaml index, name resolution, the checkout search, --new, and the real
torch's packaged yaml (slow: one probe per session, shared through the probe cache)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contribkit.core.cache import JsonCache
from contribkit.core.errors import BadInput
from contribkit.ops import index as index_module
from contribkit.ops.index import family_of, load_index
from contribkit.ops.resolve import normalise, resolve
from tests.conftest import RunCli, commit_files

NATIVE_YAML = """\
- func: my_add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  device_check: NoCheck
  structured_delegate: my_add.out
  variants: function, method
  tags: [core, pointwise]

- func: my_add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  structured_delegate: my_add.out
  variants: method

- func: my_add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIteratorBase
  dispatch:
    CPU, CUDA: my_add_out
    SparseCPU: my_add_sparse_out

- func: my_relu(Tensor self) -> Tensor
  variants: function, method
  autogen: my_relu.out
"""
DERIVATIVES_YAML = """\
- name: my_add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  self: grad
  other: maybe_multiply(grad, alpha.conj())
  result: self_t + maybe_multiply(other_t, alpha)
"""
FORK_OP_FILES = {
    "aten/src/ATen/native/native_functions.yaml": NATIVE_YAML,
    "tools/autograd/derivatives.yaml": DERIVATIVES_YAML,
    "aten/src/ATen/native/MyOps.cpp": (
        "TORCH_META_FUNC2(my_add, Tensor)(const Tensor& self, const Tensor& other) {\n}\n"
        "DEFINE_DISPATCH(my_add_stub);\n"
        "TORCH_IMPL_FUNC(my_add_out)(const Tensor& self, const Tensor& result) {\n"
        "  my_add_stub(device_type(), *this);\n}\n"
    ),
    "aten/src/ATen/native/cpu/MyKernel.cpp": "REGISTER_DISPATCH(my_add_stub, &my_add_kernel)\n",
    "aten/src/ATen/native/sparse/MySparse.cu": (
        "Tensor& my_add_sparse_out(const Tensor& self, const Tensor& other, Tensor& out) {\n"
        "  return out;\n}\n"
    ),
    "aten/src/ATen/native/MyOps.h": "Tensor& my_add_sparse_out(const Tensor& self);\n",
    "test/test_my_ops.py": "torch.my_add(x, y)\ntorch.my_add(y, x)\nx.my_add_(y)\n",
    "test/test_other.py": "torch.my_addition(x)\n",
}

# The --json schema (README, `contribkit op`): keep in step with ops/model.py.
REPORT_KEYS = {
    "schema",
    "query",
    "family",
    "source",
    "overloads",
    "opinfo",
    "torch_version",
    "notes",
    "checkout",
    "trace",
}
SOURCE_KEYS = {"kind", "native_functions", "derivatives", "index"}
OVERLOAD_KEYS = {"entry", "derivative", "python", "decomposition", "inductor"}
ENTRY_KEYS = {
    "name",
    "schema",
    "line",
    "variants",
    "dispatch",
    "composite_implicit",
    "structured",
    "structured_delegate",
    "tags",
    "autogen",
    "python_module",
    "ufunc_inner_loop",
}
DERIVATIVE_KEYS = {
    "name",
    "schema",
    "line",
    "formulas",
    "forward",
    "output_differentiability",
    "dispatch_formulas",
}
TRACE_KEYS = {"overload", "table", "sample", "input_keys", "path", "ops_run", "error"}


@pytest.fixture
def op_fork(fork_repo: Path) -> Path:
    commit_files(fork_repo, FORK_OP_FILES, "Add my_add")
    return fork_repo


def op_json(run_cli: RunCli, *args: str, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    proc = run_cli("op", *args, "--json", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


# -- the index ----------------------------------------------------------------------------


def test_family_of_groups_inplace_and_out_overloads() -> None:
    assert family_of("add.Tensor") == family_of("add_.Scalar") == family_of("add.out") == "add"
    assert family_of("__and__.Tensor") == "__and__"
    assert family_of("_foo_") == "_foo"


def test_index_is_reused_without_parsing_the_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_path = tmp_path / "native_functions.yaml"
    yaml_path.write_text(NATIVE_YAML)
    cache = JsonCache(tmp_path / "cache", "op-index")
    first = load_index(yaml_path, "native", cache)
    assert first.status == "built"
    files = sorted((tmp_path / "cache" / "op-index").iterdir())

    def no_parse(path: Path, kind: str) -> object:
        raise AssertionError("the yaml was parsed again")

    monkeypatch.setattr(index_module, "parse_yaml", no_parse)
    warm = load_index(yaml_path, "native", cache)
    assert warm.status == "cached"
    assert [e.name for e in warm.native("my_add")] == [
        "my_add.Tensor",
        "my_add_.Tensor",
        "my_add.out",
    ]
    assert sorted((tmp_path / "cache" / "op-index").iterdir()) == files  # nothing rewritten

    monkeypatch.undo()  # a changed file (its size) is parsed again
    yaml_path.write_text(NATIVE_YAML + "\n- func: other(Tensor self) -> Tensor\n")
    rebuilt = load_index(yaml_path, "native", cache)
    assert rebuilt.status == "built" and rebuilt.has("other")


def test_entries_keep_dispatch_structured_and_lines(tmp_path: Path) -> None:
    yaml_path = tmp_path / "native_functions.yaml"
    yaml_path.write_text(NATIVE_YAML)
    index = load_index(yaml_path, "native", JsonCache(tmp_path / "cache", "op-index"))
    functional, _, out = index.native("my_add")
    assert functional.structured_delegate == "my_add.out" and functional.line == 1
    assert functional.tags == ["core", "pointwise"]
    assert out.structured and {(d.key, d.kernel) for d in out.dispatch} == {
        ("CPU", "my_add_out"),
        ("CUDA", "my_add_out"),
        ("SparseCPU", "my_add_sparse_out"),
    }
    (relu,) = index.native("my_relu")
    assert relu.composite_implicit and relu.autogen == ["my_relu.out"]


# -- names --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("add", ("add", None)),
        ("aten::add.Tensor", ("add", "add.Tensor")),
        ("torch.add", ("add", None)),
        ("Tensor.index_add_", ("index_add_", None)),
        ("torch.Tensor.index_add_", ("index_add_", None)),
        ("torch.ops.aten.relu.default", ("relu", None)),
        ("torch.linalg.svd", ("linalg_svd", None)),
        ("F.relu", ("relu", None)),
    ],
)
def test_names_in_any_spelling(query: str, expected: tuple[str, str | None]) -> None:
    assert normalise(query) == expected


def test_unknown_name_suggests_close_ones(tmp_path: Path) -> None:
    yaml_path = tmp_path / "native_functions.yaml"
    yaml_path.write_text(NATIVE_YAML)
    index = load_index(yaml_path, "native", JsonCache(tmp_path / "cache", "op-index"))
    with pytest.raises(BadInput) as info:
        resolve("my_ad", index)
    assert info.value.hint and "my_add" in info.value.hint
    with pytest.raises(BadInput):
        normalise("add(x)")


# -- a fork-shaped checkout (a bare interpreter: no torch, so no probe of torch's facts) -----


def test_checkout_shows_kernels_tests_and_derivatives(
    run_cli: RunCli, op_fork: Path, bare_python: str
) -> None:
    env = {"CONTRIBKIT_CACHE_DIR": str(op_fork.parent / "cache")}
    doc = op_json(run_cli, "my_add", "--python", bare_python, cwd=op_fork, env=env)
    assert set(doc) == REPORT_KEYS
    source = doc["source"]
    assert isinstance(source, dict) and source["kind"] == "checkout"
    overloads = doc["overloads"]
    assert isinstance(overloads, list)
    names = [o["entry"]["name"] for o in overloads]
    assert names == ["my_add.Tensor", "my_add_.Tensor", "my_add.out"]
    formulas = {f["input"] for f in overloads[0]["derivative"]["formulas"]}
    assert formulas == {"self", "other"}
    assert overloads[1]["derivative"]["name"] == "my_add.Tensor"  # in-place uses the functional's
    checkout = doc["checkout"]
    assert isinstance(checkout, dict)
    kinds = {(k["kind"], k["path"]) for k in checkout["kernels"]}
    assert ("structured kernel", "aten/src/ATen/native/MyOps.cpp") in kinds
    assert ("meta function", "aten/src/ATen/native/MyOps.cpp") in kinds
    assert ("dispatch stub", "aten/src/ATen/native/cpu/MyKernel.cpp") in kinds
    assert ("definition", "aten/src/ATen/native/sparse/MySparse.cu") in kinds
    assert all(k["path"] != "aten/src/ATen/native/MyOps.h" for k in checkout["kernels"])  # a ;
    assert checkout["tests"] == [{"path": "test/test_my_ops.py", "mentions": 3}]
    assert any("cannot import torch" in n for n in doc["notes"])


def test_checkout_text_and_warm_index(run_cli: RunCli, op_fork: Path, bare_python: str) -> None:
    env = {"CONTRIBKIT_CACHE_DIR": str(op_fork.parent / "cache")}
    first = run_cli("op", "torch.my_add", "--python", bare_python, cwd=op_fork, env=env)
    assert first.returncode == 0, first.stderr
    assert "(index built)" in first.stdout
    assert "TORCH_IMPL_FUNC(my_add_out)" in first.stdout
    assert "test/test_my_ops.py  (3)" in first.stdout
    second = run_cli("op", "my_add", "--python", bare_python, cwd=op_fork, env=env)
    assert "(index cached)" in second.stdout


def test_grep_and_unknown_names(run_cli: RunCli, op_fork: Path, bare_python: str) -> None:
    env = {"CONTRIBKIT_CACHE_DIR": str(op_fork.parent / "cache")}
    listed = run_cli("op", "--grep", "^my_", "--python", bare_python, cwd=op_fork, env=env)
    assert listed.returncode == 0, listed.stderr
    assert "my_add" in listed.stdout and "my_relu" in listed.stdout
    unknown = run_cli("op", "my_ad", "--python", bare_python, cwd=op_fork, env=env)
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("contribkit: error: no operator 'my_ad'")
    assert "hint: did you mean my_add" in unknown.stderr
    bad = run_cli("op", "--grep", "(", "--python", bare_python, cwd=op_fork, env=env)
    assert bad.returncode == 2 and "hint:" in bad.stderr


def test_no_checkout_and_no_torch_is_bad_input(
    run_cli: RunCli, tmp_path: Path, bare_python: str
) -> None:
    proc = run_cli("op", "add", "--python", bare_python, cwd=tmp_path)
    assert proc.returncode == 2
    assert "no native_functions.yaml" in proc.stderr and "hint:" in proc.stderr


# -- --new --------------------------------------------------------------------------------


def test_new_writes_nothing_without_output(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli("op", "--new", "my_softplus", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "- func: my_softplus(Tensor self) -> Tensor" in proc.stdout
    assert "TORCH_IMPL_FUNC(my_softplus_out)" in proc.stdout
    assert "nothing written" in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_new_writes_skeletons_and_refuses_to_overwrite(run_cli: RunCli, tmp_path: Path) -> None:
    out = tmp_path / "plan"
    dry = run_cli("op", "--new", "my_softplus", "-o", str(out), "--dry-run", "--json")
    assert dry.returncode == 0 and not out.exists()
    proc = run_cli("op", "--new", "my_softplus", "-o", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert set(plan) == {"schema", "name", "skeletons", "written", "output", "dry_run"}
    paths = {s["path"] for s in plan["skeletons"]}
    assert {
        "aten/src/ATen/native/native_functions.yaml",
        "tools/autograd/derivatives.yaml",
        "aten/src/ATen/native/cpu/MySoftplusKernel.cpp",
        "aten/src/ATen/native/cuda/MySoftplus.cu",
        "torch/testing/_internal/common_methods_invocations.py",
    } <= paths
    assert (out / "PLAN.md").is_file()
    assert "my_softplus_backward" in (out / "tools/autograd/derivatives.yaml").read_text()
    again = run_cli("op", "--new", "my_softplus", "-o", str(out))
    assert again.returncode == 2 and "--force" in again.stderr
    assert run_cli("op", "--new", "my_softplus", "-o", str(out), "--force").returncode == 0
    bad = run_cli("op", "--new", "My-Op")
    assert bad.returncode == 2 and "hint:" in bad.stderr


# -- the installed torch (slow: its packaged yaml and the probes) --------------------------


@pytest.fixture(scope="module")
def torch_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    cache = tmp_path_factory.mktemp("op-cache")
    return {"CONTRIBKIT_CACHE_DIR": str(cache)}


@pytest.mark.slow
def test_add_on_the_packaged_yaml(
    run_cli: RunCli, tmp_path: Path, torch_env: dict[str, str]
) -> None:
    doc = op_json(run_cli, "add", cwd=tmp_path, env=torch_env)
    assert set(doc) == REPORT_KEYS
    assert isinstance(doc["source"], dict) and set(doc["source"]) == SOURCE_KEYS
    assert doc["source"]["kind"] == "packaged"
    assert doc["source"]["native_functions"].endswith("native_functions.yaml")
    overloads = {o["entry"]["name"]: o for o in doc["overloads"]}
    assert {"add.Tensor", "add.out"} <= set(overloads)
    for overload in overloads.values():
        assert set(overload) == OVERLOAD_KEYS and set(overload["entry"]) == ENTRY_KEYS
    tensor, out = overloads["add.Tensor"], overloads["add.out"]
    assert tensor["entry"]["structured_delegate"] == "add.out" or tensor["entry"]["dispatch"]
    assert out["entry"]["structured"] and (
        out["entry"]["dispatch"] or out["entry"]["ufunc_inner_loop"]
    )
    assert set(tensor["derivative"]) == DERIVATIVE_KEYS
    assert {"self", "other"} <= {f["input"] for f in tensor["derivative"]["formulas"]}
    assert "torch.add" in tensor["python"] and "Tensor.add" in tensor["python"]
    assert tensor["decomposition"]  # torch._decomp and/or torch._refs
    assert tensor["inductor"].startswith("lowered")
    assert "add" in doc["opinfo"]
    assert doc["checkout"] is None and doc["trace"] is None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("query", "family"), [("index_add", "index_add"), ("Tensor.unfold", "unfold")]
)
def test_other_ops_resolve(
    run_cli: RunCli, tmp_path: Path, torch_env: dict[str, str], query: str, family: str
) -> None:
    proc = run_cli("op", query, cwd=tmp_path, env=torch_env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{family}: ")
    assert "derivative" in proc.stdout and "inductor:" in proc.stdout


@pytest.mark.slow
def test_trace_shows_the_autograd_key(
    run_cli: RunCli, tmp_path: Path, torch_env: dict[str, str]
) -> None:
    doc = op_json(run_cli, "aten::add.Tensor", "--trace", cwd=tmp_path, env=torch_env)
    trace = doc["trace"]
    assert isinstance(trace, dict) and set(trace) == TRACE_KEYS
    assert trace["overload"] == "add.Tensor"
    keys = {row["key"] for row in trace["table"]}
    assert {"CPU", "AutogradCPU"} <= keys
    assert [row["key"] for row in trace["path"]][:1] == ["AutogradCPU"]
    assert "add.Tensor" in trace["ops_run"]
    text = run_cli("op", "add", "--trace", cwd=tmp_path, env=torch_env)
    assert "AutogradCPU" in text.stdout


@pytest.mark.slow
def test_unknown_op_suggests(run_cli: RunCli, tmp_path: Path, torch_env: dict[str, str]) -> None:
    proc = run_cli("op", "index_ad", cwd=tmp_path, env=torch_env)
    assert proc.returncode == 2
    assert "hint: did you mean index_add" in proc.stderr


@pytest.mark.slow
def test_warm_query_imports_no_yaml(
    run_cli: RunCli, tmp_path: Path, torch_env: dict[str, str]
) -> None:
    """A warm query reads the cached index: PyYAML is not even imported."""
    assert run_cli("op", "add", cwd=tmp_path, env=torch_env).returncode == 0
    guard = (
        "import runpy, sys\n"
        "sys.argv = ['contribkit', 'op', 'add']\n"
        "try:\n    runpy.run_module('contribkit', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('YAML=' + str('yaml' in sys.modules), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", guard],
        cwd=tmp_path,
        env={**os.environ, **torch_env},
        capture_output=True,
        text=True,
        check=True,
    )
    assert "YAML=False" in proc.stderr
    assert "(index cached)" in proc.stdout
