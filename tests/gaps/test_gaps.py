"""``contribkit gaps``: docstring styles, a fixture module in a fork-shaped checkout, and the real
``torch.nn.functional`` (slow; asserted on structure, not on today's findings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contribkit.gaps.docstrings import check_docstring
from tests.conftest import RunCli, commit_files

MODULE = '''\
"""A fixture module."""

import enum


class Colour(enum.Enum):  # enums are constants, not callables to document: left out
    RED = 1


class _Scaling:  # the shape of pybind11's py::enum_ (F.ScalingType): no Enum subclass
    def __init__(self, value):
        self.value = value


_Scaling.__members__ = {"TensorWise": _Scaling(0), "RowWise": _Scaling(1)}
Scaling = _Scaling


def documented(a, b=1, *, out=None):
    """Add things.

    Args:
        a (Tensor): the input.
        b (int, optional): how much. Default: 1

    Keyword args:
        out (Tensor, optional): the output tensor.
    """


def half_documented(x, y, *args, **kwargs):
    """Do it.

    Args:
        x: the x.
    """


def numpy_style(p, q):
    """Compute.

    Parameters
    ----------
    p : int
        the p
    q : float
    """


def undocumented(z):
    return z


def _private(w):
    return w


class Thing:
    """A thing.

    :param size: how big
    """

    def __init__(self, size, colour):
        self.size = size
'''
GAPS_KEYS = {
    "schema",
    "module",
    "file",
    "torch_version",
    "checkout",
    "tests_searched",
    "opinfo_checked",
    "gaps",
    "notes",
}
GAP_KEYS = {
    "name",
    "kind",
    "need",
    "docstring",
    "doc_style",
    "undocumented",
    "tested",
    "test_mentions",
    "opinfo",
    "moduleinfo",
    "todo",
}


def test_google_style_as_pytorch_writes_it() -> None:
    doc = (
        "conv(input, weight) -> Tensor\n\nArgs:\n    input: input tensor of shape\n"
        "        :math:`(N, C)`\n    weight, bias (Tensor): filters\n\nExample::\n\n    >>> x\n"
    )
    check = check_docstring(doc, ["input", "weight", "bias", "stride"])
    assert check.style == "google"
    assert check.missing == ["stride"]


def test_numpy_and_sphinx_styles() -> None:
    numpy_doc = (
        "Do.\n\nParameters\n----------\nx : int\n    the x\ny, z : float\n\nReturns\n-------\nint\n"
    )
    assert check_docstring(numpy_doc, ["x", "y", "z", "w"]).missing == ["w"]
    sphinx = check_docstring(":param x: a\n:param int y: b", ["x", "y", "q"])
    assert sphinx.style == "sphinx" and sphinx.missing == ["q"]
    assert check_docstring(None, ["a"]).missing == ["a"]
    assert check_docstring("No sections at all.", ["a"]).style is None


def test_fixture_module_in_a_checkout(run_cli: RunCli, fork_repo: Path, bare_python: str) -> None:
    commit_files(
        fork_repo,
        {
            "tools/mymod.py": MODULE,
            "test/test_mymod.py": "mymod.documented(1)\nmymod.documented(2)\nmymod.Thing(3)\n",
        },
        "Add mymod",
    )
    proc = run_cli("gaps", "tools/mymod.py", "--python", bare_python, "--json", cwd=fork_repo)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == GAPS_KEYS and doc["module"] == "mymod" and doc["tests_searched"]
    rows = {g["name"]: g for g in doc["gaps"]}
    assert set(rows) == {"documented", "half_documented", "numpy_style", "undocumented", "Thing"}
    assert all(set(g) == GAP_KEYS for g in doc["gaps"])
    assert rows["documented"]["docstring"] == "ok" and rows["documented"]["test_mentions"] == 2
    assert rows["half_documented"]["undocumented"] == ["y"]  # *args, **kwargs are not asked for
    assert rows["numpy_style"]["doc_style"] == "numpy" and rows["numpy_style"]["undocumented"] == []
    assert rows["Thing"]["undocumented"] == ["colour"] and rows["Thing"]["tested"]
    assert rows["undocumented"]["docstring"] == "missing"
    assert doc["gaps"][0]["name"] == "undocumented"  # untested and undocumented first
    assert any("Args:" in step for step in rows["half_documented"]["todo"])
    assert any("add a test" in step for step in rows["undocumented"]["todo"])
    needs = [g["need"] for g in doc["gaps"]]
    assert needs == sorted(needs, reverse=True)

    markdown = run_cli(
        "gaps", "tools/mymod.py", "--python", bare_python, "--markdown", cwd=fork_repo
    )
    assert markdown.stdout.startswith("### Gaps in `mymod`")
    assert "| `undocumented` | missing | 0 |" in markdown.stdout


def test_unimportable_module_is_bad_input(
    run_cli: RunCli, tmp_path: Path, bare_python: str
) -> None:
    proc = run_cli("gaps", "no_such_module_here", "--python", bare_python, cwd=tmp_path)
    assert proc.returncode == 2
    assert "cannot import 'no_such_module_here'" in proc.stderr and "hint:" in proc.stderr


def test_the_probe_answer_is_cached_until_an_input_changes(
    run_cli: RunCli, tmp_path: Path, bare_python: str
) -> None:
    """The module logs each import beside itself: a cached answer imports nothing; an edit to
    the module's file, or --refresh, probes again."""
    module = tmp_path / "counted.py"
    log = tmp_path / "imports.log"
    body = (
        "import pathlib\n"
        "with open(pathlib.Path(__file__).with_name('imports.log'), 'a') as f:\n"
        "    f.write('x')\n\n\n"
        "def visible(a):\n    return a\n"
    )
    module.write_text(body)
    env = {"CONTRIBKIT_CACHE_DIR": str(tmp_path / "cache")}

    def names() -> list[str]:
        proc = run_cli("gaps", str(module), "--python", bare_python, "--json", env=env)
        assert proc.returncode == 0, proc.stderr
        return [g["name"] for g in json.loads(proc.stdout)["gaps"]]

    assert names() == ["visible"] and log.read_text() == "x"
    assert names() == ["visible"] and log.read_text() == "x"  # answered from the cache
    module.write_text(body + "\n\ndef added(b):\n    return b\n")
    assert sorted(names()) == ["added", "visible"] and log.read_text() == "xx"
    refreshed = run_cli(
        "gaps", str(module), "--python", bare_python, "--refresh", "--json", env=env
    )
    assert refreshed.returncode == 0, refreshed.stderr
    assert log.read_text() == "xxx"


@pytest.mark.slow
def test_real_torch_nn_functional(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli("gaps", "torch.nn.functional", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == GAPS_KEYS and doc["module"] == "torch.nn.functional"
    assert doc["opinfo_checked"] and not doc["tests_searched"]
    assert any("only OpInfo" in note for note in doc["notes"])
    rows = {g["name"]: g for g in doc["gaps"]}
    assert {"relu", "conv2d", "gelu"} <= set(rows)  # Python functions and add_docstr builtins
    assert not {"ScalingType", "SwizzleType"} & set(rows)  # pybind11 enums are enums
    assert "nn.functional.conv2d" in rows["conv2d"]["opinfo"]
    assert rows["conv2d"]["docstring"] in ("ok", "incomplete")  # its Args: section is read
    assert all(set(g) == GAP_KEYS for g in doc["gaps"])
    needs = [g["need"] for g in doc["gaps"]]
    assert needs == sorted(needs, reverse=True)
