"""``contribkit test`` end to end: real CPU torch, real op_db probes, generated files run for real.

Probing op_db takes seconds, so every test here shares one probe cache (session-scoped); each
probe runs once per session.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pytest

from contribkit.conventions.testfiles import check_test_source
from tests.conftest import RunCli
from tests.largefile import edited_lines, inserted_lines, large_file
from tests.reprofixtures import (
    ANY_DEVICE_CRASH_CODE,
    COMPILE_CODE,
    CRASH_CODE,
    CRASH_SIGNATURE,
    CUDA_COMPARE_CODE,
    RANDOM_CRASH_CODE,
    WRONG_CODE,
    make_repro,
    write_buggy_ops,
)

pytestmark = pytest.mark.slow
T = TypeVar("T")


@pytest.fixture(scope="session")
def probe_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("probe-cache")


@pytest.fixture
def fork(fork_repo: Path, probe_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The PyTorch-shaped fork, with a buggy stand-in library importable by the issues' code."""
    monkeypatch.setenv("CONTRIBKIT_CACHE_DIR", str(probe_cache))
    stub = write_buggy_ops(fork_repo.parent / "stub")
    # Prepended: a PYTHONPATH that picks the contribkit under test (a worktree) stays in force.
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(stub), os.environ.get("PYTHONPATH")]))
    )
    return fork_repo


def ck(run_cli: RunCli, *args: str) -> dict[str, Any]:
    proc = run_cli("test", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    made: dict[str, Any] = json.loads(proc.stdout)
    return made


def run_file(
    path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(path), *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=path.parent,
        env={**os.environ, **(env or {})},
    )


def pytest_file(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", str(path)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=path.parent,
    )


def in_parallel(calls: list[Callable[[], T]]) -> list[T]:
    """Run independent subprocess-bound calls side by side (each starts torch: seconds)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(lambda call: call(), calls))


NN_FILE = """# Owner(s): ["module: nn"]
import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_utils import run_tests, TestCase


class TestNN(TestCase):
    def test_relu(self):
        self.assertEqual(torch.nn.ReLU()(torch.tensor([-1.0])), torch.tensor([0.0]))


class TestNNDeviceType(TestCase):
    def test_unfold(self, device):  # a test of its own name: the generated one must not clash
        x = torch.ones(1, 1, 2, 2, device=device)
        self.assertEqual(torch.nn.Unfold(kernel_size=2)(x).shape, (1, 4, 1))


instantiate_device_type_tests(TestNNDeviceType, globals())

if __name__ == "__main__":
    run_tests()
"""


def test_generated_files_run_green_with_python_and_pytest(fork: Path, run_cli: RunCli) -> None:
    (fork / "test" / "test_nn.py").write_text(NN_FILE)  # as in PyTorch: tests join its classes
    repros = fork / "repros"
    make_repro(repros, 102, WRONG_CODE, title="row_means is wrong", labels=["module: nn"])
    make_repro(
        repros,
        103,
        COMPILE_CODE,
        CRASH_SIGNATURE,
        title="compiled pick crashes",
        labels=["oncall: pt2"],
    )
    make_repro(repros, 104, CUDA_COMPARE_CODE, title="erf differs on CUDA")
    make_repro(repros, 105, RANDOM_CRASH_CODE, CRASH_SIGNATURE, title="random rows crash")
    # Commands that write one file run in turn (a file is read, then written); files side by side.
    groups = {
        "test/test_torch.py": [
            # no family: PyTorch's general tensor tests; created here
            ["--op", "index_add", "--check", "result.shape == sample.input.shape"],
            ["--op", "relu", "--check", "(result >= 0).all()"],  # no OpInfo: a property test
            ["--from-repro", str(repros / "issue-104")],  # no area label; inserted
            ["--from-repro", "105"],  # seeded: the CPU run draws the same numbers
        ],
        "test/test_nn.py": [
            ["--module", "torch.nn.Unfold"],  # no ModuleInfo: kernel_size filled in
            ["--module", "torch.nn.Linear"],  # has a ModuleInfo
            ["--module", "torch.nn.BatchNorm2d"],  # a ModuleInfo whose train and eval differ
            ["--module", "torch.nn.Dropout"],  # no ModuleInfo, and depends on the mode
            ["--from-repro", "repros/issue-102"],  # labelled module: nn
        ],
        "test/test_scatter_gather.py": [["--op", "scatter_add"]],  # the op's family
        "test/test_indexing.py": [["--name", "empty index", "--area", "indexing"]],
        "test/dynamo/test_repros.py": [["--from-repro", "103"]],  # a compile issue, eager
    }

    def in_turn(commands: list[list[str]]) -> list[dict[str, Any]]:
        return [ck(run_cli, *args) for args in commands]

    made_by_file = dict(
        zip(groups, in_parallel([partial(in_turn, g) for g in groups.values()]), strict=True)
    )
    for rel, made_there in made_by_file.items():
        assert [m["path"] for m in made_there] == [rel] * len(made_there)
        assert [m["action"] for m in made_there][1:] == ["insert"] * (len(made_there) - 1)
    made = [m for made_there in made_by_file.values() for m in made_there]
    paths = list(groups)
    torch_file, nn_file, scatter = (
        made_by_file["test/test_torch.py"],
        made_by_file["test/test_nn.py"],
        made_by_file["test/test_scatter_gather.py"][0],
    )
    assert torch_file[0]["action"] == "create" and torch_file[0]["class"] == "TestTorchDeviceType"
    assert torch_file[0]["dtypes"]["cpu"][:2] == ["float32", "float64"]
    assert (
        "test_index_add_property_gradients_index_add_cpu_float32"
        in torch_file[0]["variants"]["cpu"]
    )
    assert any("TestCommon.test_compare_cpu already compares" in n for n in torch_file[0]["notes"])
    assert (torch_file[0]["owner"], scatter["owner"]) == (
        "module: tests",
        "module: scatter & gather ops",
    )
    assert torch_file[2]["only"] == "cuda"
    assert {(m["action"], m["class"], m["placed_by"]) for m in nn_file} == {
        ("insert", "TestNNDeviceType", "the module's package"),
        ("insert", "TestNNDeviceType", "the issue's label 'module: nn'"),
    }
    assert any("as --into test/test_nn.py::TestNNDeviceType does" in n for n in nn_file[0]["notes"])
    assert any(
        "builds torch.nn.Unfold(kernel_size=2) (required arguments" in n
        for n in nn_file[0]["notes"]
    )
    nn_text = (fork / "test" / "test_nn.py").read_text()
    assert "torch.nn.Unfold(kernel_size=2).to(device=device" in nn_text
    # Modules run in train mode, checked for what test_modules.py does not check; no .eval().
    unfold, linear, batchnorm, dropout = nn_file[:4]
    assert (unfold["test"], linear["test"], dropout["test"]) == (
        "test_unfold_gradients",
        "test_linear_gradients",
        "test_dropout_zeroed_or_scaled_gradients",
    )
    assert batchnorm["variants"]["cpu"] == [
        "test_batchnorm2d_channel_mean_zero_gradients_nn_BatchNorm2d_cpu_float32",
        "test_batchnorm2d_channel_mean_zero_gradients_nn_BatchNorm2d_cpu_float64",
    ]
    assert "train_eval_mode=TrainEvalMode.train_only," in nn_text
    assert ".eval()" not in nn_text and "module.train()  #" in nn_text
    assert any("test_cpu_gpu_parity already compares" in n for n in linear["notes"])
    assert torch_file[1]["test"] == "test_relu_property" and torch_file[1]["only"] is None
    # The file's own lines all survive, in order, but for the one-line import that gains names.
    removed, _ = edited_lines(NN_FILE, nn_text)
    assert removed == [
        "from torch.testing._internal.common_device_type import instantiate_device_type_tests\n"
    ]
    dynamo = made_by_file["test/dynamo/test_repros.py"][0]
    assert (dynamo["class"], dynamo["owner"], dynamo["dynamo"]) == (
        "ReproTests",
        "module: dynamo",
        True,
    )
    for rel in paths:
        assert check_test_source((fork / rel).read_text(), rel) == []
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "E4,E7,E9,F", *paths],
        cwd=fork,
        capture_output=True,
        text=True,
    )
    assert lint.returncode == 0, lint.stdout
    pytest_run = partial(
        subprocess.run,
        [sys.executable, "-m", "pytest", "-v", "-rs", "-p", "no:cacheprovider", *paths],
        cwd=fork,
        capture_output=True,
        text=True,
        timeout=600,
    )
    proc, *direct = in_parallel([pytest_run, *(partial(run_file, fork / rel) for rel in paths)])
    for rel, run in zip(paths, direct, strict=True):
        assert run.returncode == 0, (rel, run.stdout + run.stderr)
        assert re.search(r"^OK", run.stderr, re.M), run.stderr
    assert proc.returncode == 0, proc.stdout[-4000:]
    passed = set(re.findall(r"::(\w+) PASSED", proc.stdout))
    skipped = set(re.findall(r"::(\w+) SKIPPED", proc.stdout))
    for summary in made:
        if summary["only"] == "cuda":  # instantiated for CPU, and skipped there
            assert summary["test"] + "_cpu" in skipped
            continue
        assert set(summary["variants"]["cpu"]) <= passed  # every dtype variant was instantiated
    assert "Only runs on cuda" in proc.stdout
    assert "CUDA::" not in proc.stdout  # no CUDA class on a machine without CUDA


def test_crash_regression_fails_while_the_bug_is_simulated(fork: Path, run_cli: RunCli) -> None:
    make_repro(fork / "repros", 101, ANY_DEVICE_CRASH_CODE, CRASH_SIGNATURE)
    made = ck(run_cli, "--from-repro", "repros/issue-101")
    assert made["test"] == "test_issue_101_pick_rows_rejects_rows_in_range"
    test_file = fork / made["path"]
    fixed = run_file(test_file)
    assert fixed.returncode == 0 and "Ran 1 test" in fixed.stderr, fixed.stderr
    broken = run_file(test_file, env={"BUGGY_OPS_BUG": "1"})
    assert broken.returncode == 1
    assert (
        "pytorch/pytorch#101 is back: the code raises the issue's error again: pick_rows(): index [2, 0]"
        in broken.stderr
    )
    other = run_file(test_file, env={"BUGGY_OPS_BUG": "other"})  # a different error fails it too
    assert other.returncode == 1 and "ValueError: an unrelated failure" in other.stderr
    assert "is back" not in other.stderr
    # The code uses no device, so the result is not compared with a CPU run (a CUDA-written
    # repro's test does that, @onlyCUDA here): it must hold no inf or nan, in a plain class too.
    (fork / "test" / "test_plain.py").write_text(
        '# Owner(s): ["module: tests"]\nimport torch\n'
        "from torch.testing._internal.common_utils import run_tests, TestCase\n\n\n"
        "class TestPlain(TestCase):\n    def test_old(self):\n        pass\n\n\n"
        'if __name__ == "__main__":\n    run_tests()\n'
    )
    ck(run_cli, "--from-repro", "101", "--into", "test/test_plain.py")
    plain = fork / "test" / "test_plain.py"
    nan, fine, under_pytest = in_parallel(
        [
            partial(run_file, plain, env={"BUGGY_OPS_BUG": "nan"}),
            partial(run_file, plain),
            partial(pytest_file, plain),
        ]
    )
    assert nan.returncode == 1 and "rows holds inf or nan" in nan.stderr, nan.stderr
    assert fine.returncode == 0 and "Ran 2 tests" in fine.stderr, fine.stderr
    assert under_pytest.returncode == 0 and "2 passed" in under_pytest.stdout
    # The repro agrees: REPRODUCED while the bug is there, NOT_REPRODUCED once it is fixed.
    repro = fork / "repros" / "issue-101" / "repro.py"
    assert run_file(repro, "--device", "cpu", env={"BUGGY_OPS_BUG": "1"}).returncode == 1
    assert run_file(repro, "--device", "cpu").returncode == 0


def test_into_a_large_file_changes_no_other_byte(fork: Path, run_cli: RunCli) -> None:
    target = fork / "test" / "test_large.py"
    original = large_file().replace("\n", "\r\n", 3)  # a few CRLF lines too: kept as they are
    target.write_bytes(original.encode())
    target.chmod(0o755)  # an executable test file stays executable
    make_repro(fork / "repros", 101, CRASH_CODE, CRASH_SIGNATURE)

    preview = run_cli(
        "test", "--op", "index_add", "--into", "test/test_large.py::TestGroup7", "--dry-run"
    )
    assert preview.returncode == 0, preview.stderr
    assert preview.stdout.startswith("--- a/test/test_large.py\n+++ b/test/test_large.py\n")
    # index_add's OpInfo has no reference: the @ops test checks its gradients.
    assert "+    def test_index_add_gradients(self, device, dtype, op):" in preview.stdout
    assert target.read_bytes() == original.encode()  # --dry-run wrote nothing
    shown = run_cli(
        "test", "--op", "index_add", "--into", "test/test_large.py::TestGroup7", "--stdout"
    )
    assert target.read_bytes() == original.encode()

    made = ck(run_cli, "--op", "index_add", "--into", "test/test_large.py::TestGroup7")
    assert made["action"] == "insert" and made["class"] == "TestGroup7"
    assert made["imports_added"] == [
        "from torch.testing._internal.common_device_type import ops",
        "from torch.testing._internal.common_methods_invocations import op_db",
        "from torch.testing._internal.common_utils import gradcheck",
    ]
    after_op = target.read_bytes().decode()
    assert after_op.replace("\r\n", "\n") == shown.stdout  # (read back in text mode)
    removed, added = edited_lines(original, after_op)
    # `ops` joins the multi-line common_device_type import as a line of its own; the one-line
    # common_utils import is the one line rewritten.
    assert removed == ["from torch.testing._internal.common_utils import run_tests, TestCase\n"]
    assert "    ops,\n" in added
    assert "    def test_index_add_gradients(self, device, dtype, op):\n" in added
    # A non-generic class gets a test without `device`, skipped without CUDA only when needed.
    made = ck(run_cli, "--from-repro", "101", "--into", "test/test_large.py::TestPlain")
    assert made["device_generic"] is False
    final = target.read_bytes().decode()
    assert target.stat().st_mode & 0o777 == 0o755
    assert edited_lines(original, final)[0] == removed
    inserted_lines(after_op, final)
    proc = run_file(target, "-k", "test_index_add_gradients", "-k", "test_issue_101", "-v")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "test_index_add_gradients_index_add_cpu_float64 (__main__.TestGroup7CPU" in proc.stderr
    assert "test_issue_101_pick_rows_rejects_rows_in_range (__main__.TestPlain" in proc.stderr


def test_refusals_are_one_line_exit_2_and_write_nothing(fork: Path, run_cli: RunCli) -> None:
    (fork / "repros" / "issue-5").mkdir(parents=True)
    (fork / "test" / "notes.txt").write_text("not python\n")
    (fork / "test" / "test_broken.py").write_text("class TestA(TestCase):\n    def test_a(self:\n")
    (fork / "test" / "test_helpers.py").write_text("def helper():\n    return 1\n")
    (fork / "test" / "test_oneline.py").write_text(
        "from torch.testing._internal.common_utils import TestCase\nclass TestOne(TestCase): pass\n"
        "instantiate_device_type_tests(TestOne, globals())\n"
    )
    (fork / "test" / "test_two.py").write_text(
        "import torch\nfrom torch.testing._internal.common_utils import TestCase\n"
        "class TestOne(TestCase):\n    pass\nclass TestTwo(TestCase):\n    pass\n"
    )
    before = {p: p.read_bytes() for p in fork.rglob("*") if p.is_file() and ".git" not in p.parts}
    cases = [
        (["--op", "indx_add"], "unknown operator 'indx_add'", "did you mean: index_add"),
        (["--op", "selu"], "has no OpInfo, and the target has one device", "--check EXPR"),
        (["--module", "torch.nn.ReLU", "--ref", "numpy.abs"], "--ref goes with --op", "--op"),
        (["--module", "torch.nn.Unfld"], "'torch.nn.Unfld' is not a module", "torch.nn.Unfold"),
        (
            ["--module", "torch.nn.Fold"],
            "has no ModuleInfo in this torch, and contribkit cannot fill its argument output_size",
            "--init 'output_size=..., kernel_size=...'",
        ),
        (
            ["--module", "torch.nn.Unfold", "--init", "bogus=1"],
            "torch.nn.Unfold(bogus=1) fails: TypeError:",
            "--init 'kernel_size=...'",
        ),
        (
            ["--module", "torch.nn.Unfold", "--init", "kernel_size=-1"],
            "torch.nn.Unfold(kernel_size=-1) accepts no float input of shape (2, 3), (2, 3, 4)",
            "start from a skeleton",
        ),
        (["--from-repro", "repros/issue-5"], "has no meta.json", "contribkit repro N"),
        (
            ["--name", "x", "--area", "nn", "--into", "test/notes.txt"],
            "is not a Python test file",
            "--into",
        ),
        (
            ["--name", "x", "--into", "test/test_broken.py"],
            "test/test_broken.py:2: syntax error",
            "nothing was written",
        ),
        (["--name", "x", "--into", "test/test_helpers.py"], "defines no TestCase class", "--path"),
        (
            ["--name", "x", "--into", "test/test_two.py::TestThree"],
            "class TestThree not found",
            "classes: TestOne, TestTwo",
        ),
        (
            ["--name", "x", "--into", "test/test_two.py"],
            "several test classes: TestOne, TestTwo",
            "::TestOne",
        ),
        (
            ["--name", "x", "--into", "test/test_two.py::TestOne"],
            "needs a device-generic class",
            "instantiate_device_type_tests",
        ),
        (
            ["--name", "x", "--into", "test/test_oneline.py"],
            "test/test_oneline.py:2: the body of TestOne is on its `class` line",
            "own indented lines",
        ),
        (["--op", "index_add", "--module", "torch.nn.ReLU"], "only one of", "--help"),
        (["--name", "x"], "needs --area", "--area"),
    ]
    results = in_parallel([partial(run_cli, "test", *args) for args, _, _ in cases])
    for (args, error, hint), proc in zip(cases, results, strict=True):
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert (
            len(lines) == 2 and lines[0].startswith("contribkit: error: ") and error in lines[0]
        ), (args, lines)
        assert lines[1].startswith("hint: ") and hint in lines[1], (args, lines)
    after = {p: p.read_bytes() for p in fork.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert after == before


def test_existing_file_is_never_overwritten(fork: Path, run_cli: RunCli) -> None:
    proc = run_cli("test", "--name", "x", "--area", "nn", "--path", "test/test_nn.py")
    assert proc.returncode == 2
    assert (
        "test/test_nn.py already exists" in proc.stderr and "--into test/test_nn.py" in proc.stderr
    )
    assert (fork / "test" / "test_nn.py").read_text() == '# Owner(s): ["module: nn"]\n'
    # Placed by default, a test joins the area's file when the fork has it; this one has no class.
    placed = run_cli("test", "--name", "x", "--area", "nn")
    assert placed.returncode == 2
    assert (
        "test/test_nn.py is not a Python test file: it defines no TestCase class" in placed.stderr
    )
    assert (fork / "test" / "test_nn.py").read_text() == '# Owner(s): ["module: nn"]\n'
    forced = run_cli("test", "--name", "x", "--area", "nn", "--path", "test/test_nn.py", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "def test_x(self, device, dtype):" in (fork / "test" / "test_nn.py").read_text()
    assert (fork / "test" / "test_nn.py").stat().st_mode & 0o777 == 0o644


OLD_FILE = """\ufeff# Owner(s): ["module: tests"]
import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_utils import run_tests, TestCase
\x0c

class TestOld(TestCase):
    # a form feed\x0c and a line separator\u2028 in a comment
    def test_old(self, device):
        self.assertEqual("a\x0cb\u2028c".split("\x0c"), ["a", "b\u2028c"])
\x0c

instantiate_device_type_tests(TestOld, globals())

if __name__ == "__main__":
    run_tests()
"""


def test_into_keeps_a_bom_and_form_feeds_and_the_file_runs(fork: Path, run_cli: RunCli) -> None:
    target = fork / "test" / "test_old.py"
    target.write_bytes(OLD_FILE.encode("utf-8"))
    made = ck(run_cli, "--name", "new", "--into", "test/test_old.py")
    assert made["class"] == "TestOld" and made["imports_added"] == [
        "from torch.testing import make_tensor",
        "from torch.testing._internal.common_device_type import dtypes",
    ]
    raw = target.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf# Owner(s): ")  # the BOM, byte for byte
    removed, added = edited_lines(OLD_FILE, raw.decode("utf-8"))
    assert "    def test_new(self, device, dtype):\n" in added
    # The one-line import that gains `dtypes` is the only line rewritten.
    assert removed == [
        "from torch.testing._internal.common_device_type import instantiate_device_type_tests\n"
    ]
    direct, under_pytest = in_parallel(
        [partial(run_file, target, "-v"), partial(pytest_file, target)]
    )
    assert direct.returncode == 0, direct.stderr[-3000:]
    assert "test_new_cpu_float64 (__main__.TestOldCPU" in direct.stderr
    assert "test_old_cpu (__main__.TestOldCPU" in direct.stderr
    assert under_pytest.returncode == 0, under_pytest.stdout[-3000:]
    assert "3 passed" in under_pytest.stdout


def test_from_repro_writes_only_what_the_repros_verdict_supports(
    fork: Path, run_cli: RunCli
) -> None:
    make_repro(fork / "repros", 101, ANY_DEVICE_CRASH_CODE, CRASH_SIGNATURE)
    unsigned_code = (
        "import torch\nimport buggy_ops\nx = torch.ones(3, 2)\n"
        "actual = buggy_ops.pick_rows(x, torch.tensor([0]))\nexpected = x[:1]\n"
        "print(torch.allclose(actual, expected))\n"
    )
    make_repro(fork / "repros", 106, unsigned_code, None, title="no signature")
    before = {p: p.read_bytes() for p in fork.rglob("*") if p.is_file() and ".git" not in p.parts}
    # A different error, or an error the issue gives no signature for: refused, nothing written.
    other, unsigned = in_parallel(
        [
            partial(run_cli, "test", "--from-repro", "101", env={"BUGGY_OPS_BUG": "other"}),
            partial(run_cli, "test", "--from-repro", "106", env={"BUGGY_OPS_BUG": "1"}),
        ]
    )
    for proc, why in ((other, "different error"), (unsigned, "no signature to compare")):
        assert proc.returncode == 2, proc.stderr
        assert "did not reproduce the issue" in proc.stderr and why in proc.stderr
        assert "hint: " in proc.stderr and "--force" in proc.stderr
    after = {p: p.read_bytes() for p in fork.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert after == before
    forced = run_cli(
        "test", "--from-repro", "101", "--force", "--json", env={"BUGGY_OPS_BUG": "other"}
    )
    assert forced.returncode == 0, forced.stderr
    assert any("written with --force" in n for n in json.loads(forced.stdout)["notes"])
    (fork / "test" / "test_torch.py").unlink()
    # REPRODUCED: the test fails now, for the reason, and passes once the bug is gone.
    made = run_cli("test", "--from-repro", "101", "--json", env={"BUGGY_OPS_BUG": "1"})
    assert made.returncode == 0, made.stderr
    summary = json.loads(made.stdout)
    assert "the repro REPRODUCED" in summary["notes"][0]
    test_file = fork / summary["path"]
    text = test_file.read_text()
    statements = [
        ast.unparse(n.value) for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Expr)
    ]
    assert not [s for s in statements if s.startswith(("print(", "str(", "rows"))]
    broken, fixed, under_pytest = in_parallel(
        [
            partial(run_file, test_file, env={"BUGGY_OPS_BUG": "1"}),
            partial(run_file, test_file),
            partial(pytest_file, test_file),
        ]
    )
    assert broken.returncode == 1 and "pytorch/pytorch#101 is back" in broken.stderr
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert under_pytest.returncode == 0, under_pytest.stdout[-3000:]


@pytest.mark.parametrize("source", [("--module", "torch.nn.ReLU"), ("--op", "index_add")])
def test_a_class_that_is_not_device_generic_is_refused_before_the_probe(
    run_cli: RunCli, fork_repo: Path, bare_python: str, source: tuple[str, str]
) -> None:
    """The class is read before the target is probed (seconds): an interpreter without torch
    shows it, since a probe would have failed on torch first."""
    plain = "import unittest\n\n\nclass TestPlain(unittest.TestCase):\n    pass\n"
    (fork_repo / "test" / "test_plain.py").write_text(plain)
    proc = run_cli(
        "test",
        *source,
        "--into",
        "test/test_plain.py::TestPlain",
        "--python",
        bare_python,
        cwd=fork_repo,
    )
    assert proc.returncode == 2, proc.stderr
    assert "needs a device-generic class" in proc.stderr
    assert "cannot import torch" not in proc.stderr  # refused before any probe
    hint = next(line for line in proc.stderr.splitlines() if line.startswith("hint: "))
    assert "--path FILE" in hint and "--into FILE::Class" in hint
