"""``test --from-repro`` for repros decided by the assert, crash and quoted-output oracles: issues
of our own, written as GitHub's API gives them, through ``contribkit repro`` and ``contribkit
test --from-repro`` into a fork, and the generated test run with real CPU torch, under ``python
FILE`` and pytest: it fails now for the issue's reason, and passes on a variant without the bug.
"""

from __future__ import annotations

import ast
import json
import signal
import subprocess
import sys
import unittest
from pathlib import Path
from typing import Any

import pytest

from contribkit.core.errors import BadInput
from contribkit.testgen.oracles import crash_body, literal, quoted_output_body, strip_runtime
from contribkit.testgen.selfcheck import read_unittest
from contribkit.testgen.tidy import as_assertions
from contribkit.testgen.verdict import ReproVerdict, Verdicts, judge
from tests.conftest import RunCli
from tests.testgen.test_test_command import pytest_file, run_file

ENV = "\n\n## Versions\n\nPyTorch version: 2.13.0+cpu\n"


def issue(number: int, title: str, body: str) -> dict[str, Any]:
    return {
        "number": number,
        "repo": "pytorch/pytorch",
        "html_url": f"https://github.com/pytorch/pytorch/issues/{number}",
        "title": title,
        "state": "open",
        "labels": [],
        "user": {"login": "reporter"},
        "created_at": "2025-01-01T00:00:00Z",
        "body": body + ENV,
        "comments": [],
        "body_complete": True,
    }


def fence(code: str) -> str:
    return f"```python\n{code}```\n"


# The issue asserts what it expects; float32 cannot hold 0.1 exactly, so the assert fails.
ASSERT_CODE = (
    "import torch\nx = torch.tensor(0.1, dtype={dtype})\nassert x.item() == 0.1, 'not 0.1'\n"
)
# SIGFPE in NNPACK's convolution with a zero stride (torch 2.13, CPU); stride 1 runs.
CRASH_CODE = (
    "import torch\n"
    "x = torch.ones(1, 2, 6, 6)\n"
    "w = torch.ones(1, 2, 6, 6)\n"
    "b = torch.ones(1)\n"
    "torch._nnpack_spatial_convolution(x, w, b, [0, 0], {stride})\n"
)
ROUND_CODE = "import torch\nprint(torch.tensor([2.5, 3.5, -0.5]).round())\n"


def assert_issue(number: int, dtype: str) -> dict[str, Any]:
    body = "## 🐛 Describe the bug\n\nThe value should be 0.1:\n\n" + fence(
        ASSERT_CODE.format(dtype=dtype)
    )
    return issue(number, "tensor(0.1).item() is not 0.1", body)


def crash_issue(number: int, stride: str) -> dict[str, Any]:
    body = (
        "## 🐛 Describe the bug\n\nThis dies with `Floating point exception (core dumped)`:\n\n"
        + fence(CRASH_CODE.format(stride=stride))
    )
    return issue(number, "_nnpack_spatial_convolution crashes with a zero stride", body)


def round_issue(number: int, expected: str | None) -> dict[str, Any]:
    body = (
        "## 🐛 Describe the bug\n\n"
        + fence(ROUND_CODE)
        + "The output is\n```\ntensor([ 2.,  4., -0.])\n```\n"
    )
    if expected is not None:
        body += f"\n## Expected behavior\n\n```\n{expected}\n```\n"
    return issue(number, "round() of halves", body)


def make_test(
    fork: Path,
    run_cli: RunCli,
    data: dict[str, Any],
    *extra: str,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    number = data["number"]
    source = fork.parent / f"issue-{number}.json"
    source.write_text(json.dumps(data))
    out = fork / "repros" / f"issue-{number}"
    made = run_cli("repro", "--from-file", str(source), "-o", str(out), cwd=fork, env=env)
    assert made.returncode == 0, made.stderr
    meta = json.loads((out / "meta.json").read_text())
    assert isinstance(meta["evidence"], dict)
    path = f"test/test_issue_{number}.py"
    return run_cli(
        "test", "--from-repro", str(out), "--path", path, "--json", *extra, cwd=fork, env=env
    )


def generated(proc: subprocess.CompletedProcess[str], fork: Path) -> tuple[Path, dict[str, Any]]:
    assert proc.returncode == 0, proc.stderr
    summary: dict[str, Any] = json.loads(proc.stdout)
    path = fork / summary["path"]
    text = path.read_text()
    calls = [ast.unparse(n.func) for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call)]
    assert "print" not in calls and "_repro.mark" not in calls and "_repro.echo" not in calls
    assert "#:" not in text
    return path, summary


def fails_then_passes(broken: Path, fixed: Path, reason: str) -> None:
    for path, ok in ((broken, False), (fixed, True)):
        direct, under_pytest = run_file(path), pytest_file(path)
        assert (direct.returncode == 0) is ok, direct.stderr[-3000:]
        assert (under_pytest.returncode == 0) is ok, under_pytest.stdout[-3000:]
        if not ok:
            assert reason in direct.stderr, direct.stderr[-3000:]
            assert "1 failed" in under_pytest.stdout, under_pytest.stdout[-3000:]


@pytest.mark.slow
def test_assert_oracle_keeps_the_issues_check(fork_repo: Path, run_cli: RunCli) -> None:
    broken, summary = generated(
        make_test(fork_repo, run_cli, assert_issue(9101, "torch.float32")), fork_repo
    )
    assert "REPRODUCED" in summary["notes"][0] and "[assert]" in summary["notes"][0]
    assert "self.assertEqual(x.item(), 0.1, 'not 0.1', atol=0, rtol=0)" in broken.read_text()
    fixed, _ = generated(
        make_test(fork_repo, run_cli, assert_issue(9102, "torch.float64")), fork_repo
    )
    fails_then_passes(broken, fixed, "not 0.1")


@pytest.mark.slow
def test_crash_oracle_runs_the_code_in_a_child(fork_repo: Path, run_cli: RunCli) -> None:
    broken, summary = generated(
        make_test(fork_repo, run_cli, crash_issue(9201, "[0, 0]")), fork_repo
    )
    assert "[crash] the process was killed by SIGFPE" in summary["notes"][0]
    text = broken.read_text()
    assert '[sys.executable, "-c", code]' in text and "import subprocess" in text
    fixed, _ = generated(make_test(fork_repo, run_cli, crash_issue(9202, "[1, 1]")), fork_repo)
    fails_then_passes(broken, fixed, "crashes the process again: killed by SIGFPE")


@pytest.mark.slow
def test_quoted_output_oracle_asserts_the_expected_value(fork_repo: Path, run_cli: RunCli) -> None:
    broken, summary = generated(
        make_test(fork_repo, run_cli, round_issue(9301, "tensor([ 3.,  4., -1.])")), fork_repo
    )
    assert "[quoted-output]" in summary["notes"][0]
    assert (
        "self.assertEqual(torch.tensor([2.5, 3.5, -0.5]).round(), torch.tensor([3., 4., -1.]),"
        " exact_dtype=False)" in broken.read_text()
    )
    fixed, _ = generated(
        make_test(fork_repo, run_cli, round_issue(9302, "tensor([ 2.,  4., -0.])")), fork_repo
    )
    fails_then_passes(broken, fixed, "Mismatched elements")


@pytest.mark.slow
def test_reported_output_alone_needs_force(fork_repo: Path, run_cli: RunCli) -> None:
    before = sorted(p for p in (fork_repo / "test").rglob("*"))
    refused = make_test(fork_repo, run_cli, round_issue(9401, None))
    assert refused.returncode == 2
    assert (
        refused.stderr.startswith("contribkit: error: ")
        and "not the output it expects" in refused.stderr
    )
    assert "hint: " in refused.stderr and "--force" in refused.stderr
    assert sorted(p for p in (fork_repo / "test").rglob("*")) == before
    out = fork_repo / "repros" / "issue-9401"
    forced = run_cli(
        "test",
        "--from-repro",
        str(out),
        "--path",
        "test/test_issue_9401.py",
        "--json",
        "--force",
        cwd=fork_repo,
    )
    path, summary = generated(forced, fork_repo)
    assert any("only rules out the reported value" in n for n in summary["notes"])
    assert "it does not check the right value" in path.read_text()
    assert "self.assertNotEqual(" in path.read_text()
    assert run_file(path).returncode == 1


def test_printed_values_read_as_literals() -> None:
    assert literal("tensor([0.1000, ..., 0.9000])") is None  # torch's summarised print
    assert literal("tensor([0., nan, 2.])") == ("torch.tensor([0., torch.nan, 2.])", "")
    assert literal("tensor([0, -1], dtype=torch.int32)") == (
        "torch.tensor([0, -1], dtype=torch.int32)",
        "",
    )
    assert literal("tensor([0.4080, 1.5], grad_fn=<AddBackward0>)") == (
        "torch.tensor([0.4080, 1.5])",
        "atol=0.05, rtol=0",
    )
    assert literal("(tensor([1.0000e+00, 2.5000e-05]), True)") == (
        "(torch.tensor([1.0000e+00, 2.5000e-05]), True)",
        "atol=0, rtol=5e-05",
    )
    assert literal("[True, False]") == ("[True, False]", "")
    assert literal("0.7091516256332397") is not None
    for text in ("array([1, 2])", "hello world", "tensor([1, 2]) ...", "'text'", "os.system('x')"):
        assert literal(text) is None, text


def test_runtime_calls_go_and_printed_statements_are_found() -> None:
    code = (
        "import torch\nx = torch.ones(2)\n_repro.mark(1); _repro.echo(x.sum())\n"
        "_repro.mark(-1)\n_repro.reference(1, lambda: (x.sum()), lambda: (_repro.float64(x).sum()))"
        "\n#: tensor(2.)\nprint(x)\n"
    )
    stripped, shown = strip_runtime(code)
    assert stripped == "import torch\nx = torch.ones(2)\nx.sum()\n\n\nprint(x)\n"
    assert [(s.expr, s.form, s.unit) for s in shown] == [("x.sum()", "repr", 1), ("x", "str", None)]


def test_quoted_output_that_does_not_line_up_is_refused() -> None:
    code = "import torch\nprint(torch.ones(1))\nprint(torch.zeros(1))\n"
    units = [
        {"id": 0, "where": "the code", "actual": ["tensor([1.])"], "expected": ["tensor([2.])"]}
    ]
    with pytest.raises(BadInput, match="does not line up with the 2 value"):
        quoted_output_body(code, {"units": units}, "repro")


def test_raise_checks_become_assertions() -> None:
    code = (
        "y = f()\nif y.isnan().any():\n    raise ValueError('nan in y')\n"
        "class Helper:\n    def check(self):\n        assert self.ok\n"
    )
    assert as_assertions(code) == (
        "y = f()\nself.assertFalse(y.isnan().any(), 'nan in y')\n"
        "class Helper:\n    def check(self):\n        assert self.ok\n"
    )


def test_raise_checks_in_the_issues_own_functions_and_try_bodies_stay() -> None:
    """Input validation the code catches is not the test's check: rewritten, the ``except``
    would no longer catch it and the test would fail for a reason that is not the issue."""
    assert as_assertions(VALIDATION_CODE) == (
        "def f(x):\n    if x < 0:\n        raise ValueError('neg')\n    return x\n"
        "try:\n    f(-1)\nexcept ValueError:\n    pass\n"
        "try:\n    if f(2):\n        raise KeyError('k')\nexcept KeyError:\n    pass\n"
        "with self.assertRaises(TypeError):\n    if True:\n        raise TypeError('t')\n"
        "for v in (1, 2):\n    self.assertFalse(f(v) != v, 'changed')\n"
    )


VALIDATION_CODE = (
    "def f(x):\n    if x < 0:\n        raise ValueError('neg')\n    return x\n"
    "try:\n    f(-1)\nexcept ValueError:\n    pass\n"
    "try:\n    if f(2):\n        raise KeyError('k')\nexcept KeyError:\n    pass\n"
    "with self.assertRaises(TypeError):\n    if True:\n        raise TypeError('t')\n"
    "for v in (1, 2):\n    if f(v) != v:\n        raise RuntimeError('changed')\n"
)


@pytest.mark.slow
def test_raise_checks_that_stay_pass_in_pytorchs_testcase() -> None:
    """The rewritten body above runs as a real PyTorch TestCase's method: nothing here is the
    issue, so it passes (imports torch)."""
    run_as_test_method(as_assertions(VALIDATION_CODE), {})


def test_asserts_in_the_issues_own_functions_still_fail_as_assertions() -> None:
    # self.assert… raises AssertionError as `assert` does: an `except AssertionError` still
    # catches it, so asserts in functions are rewritten as before; only where `self` is the
    # function's own parameter (a method written outside its class) do they stay.
    assert as_assertions(OWN_FUNCTIONS_CODE) == OWN_FUNCTIONS_TIDY


OWN_FUNCTIONS_CODE = (
    "def positive(x):\n    assert x > 0, 'not positive'\n    return x\n"
    "try:\n    positive(-1)\nexcept AssertionError:\n    caught = True\n"
    "assert caught\n"
    "def forward(self, x):\n    assert x.dim() == 2\n    return x\n"
)
OWN_FUNCTIONS_TIDY = (
    "def positive(x):\n    self.assertTrue(x > 0, 'not positive')\n    return x\n"
    "try:\n    positive(-1)\nexcept AssertionError:\n    caught = True\n"
    "self.assertTrue(caught)\n"
    "def forward(self, x):\n    assert x.dim() == 2\n    return x\n"
)


@pytest.mark.slow
def test_asserts_in_the_issues_own_functions_run_in_pytorchs_testcase() -> None:
    """The rewritten body above runs as the method of a real PyTorch TestCase (imports torch)."""
    run_as_test_method(as_assertions(OWN_FUNCTIONS_CODE), {})


def run_as_test_method(body: str, scope: dict[str, Any]) -> None:
    """``body`` as the method of a real PyTorch TestCase, run once."""
    from torch.testing._internal.common_utils import TestCase

    method = "def check(self):\n" + "".join(f"    {line}\n" for line in body.splitlines())
    exec(compile(method, "<test>", "exec"), scope)

    class Case(TestCase):  # type: ignore[misc]  # torch.testing._internal is untyped
        def runTest(self) -> None:
            scope["check"](self)

    Case().runTest()


@pytest.mark.slow
def test_an_exact_check_stays_exact_in_pytorchs_testcase() -> None:
    import torch

    # `(a - b).abs().max() == 0` is False for a difference of one float32 ulp; the test must fail.
    check = as_assertions("assert (a - b).abs().max() == 0\nassert a.shape == (1,)\n")
    a = torch.tensor([1.0])
    with pytest.raises(AssertionError, match="Scalars are not equal"):
        run_as_test_method(check, {"a": a, "b": torch.nextafter(a, torch.tensor([2.0]))})
    run_as_test_method(check, {"a": a, "b": a.clone()})  # no difference: it passes


QNNPACK_CRASH = (
    "import os, signal\nimport torch\n"
    'if torch.backends.quantized.engine == "qnnpack":\n'
    "    os.kill(os.getpid(), signal.SIGFPE)\n"
)


def test_a_quantized_crash_test_names_every_engine() -> None:
    body = crash_body(QNNPACK_CRASH, "#1 is back: killed by ", uses_device=False, engines=True)
    assert "for engine in torch.backends.quantized.supported_engines:" in body.code
    assert "torch.manual_seed(0)" in body.code and "timeout=600" in body.code  # as the repro


@pytest.mark.slow
def test_a_quantized_crash_test_runs_the_code_under_every_engine() -> None:
    import torch

    # Only qnnpack "crashes" here: the test must still fail, naming the engine.
    body = crash_body(QNNPACK_CRASH, "#1 is back: killed by ", uses_device=False, engines=True)
    method = "def check(self):\n" + "".join(f"    {line}\n" for line in body.code.splitlines())

    class Case(unittest.TestCase):
        pass

    scope: dict[str, Any] = {"torch": torch, "signal": signal, "subprocess": subprocess, "sys": sys}
    exec(compile(method, "<test>", "exec"), scope)
    with pytest.raises(AssertionError, match=r"killed by SIGFPE \(quantized engine qnnpack\)"):
        scope["check"](Case())
    calm = crash_body("import torch\n", "#1 is back: killed by ", uses_device=False, engines=True)
    method = "def check(self):\n" + "".join(f"    {line}\n" for line in calm.code.splitlines())
    exec(compile(method, "<test>", "exec"), scope)
    scope["check"](Case())  # no engine crashes: the test passes


def repl_error_issue(number: int, call: str) -> dict[str, Any]:
    body = (
        "## 🐛 Describe the bug\n\n```\n>>> import torch\n>>> " + call + "\n"
        "Traceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        "RuntimeError: narrow(): length must be non-negative.\n```\n"
    )
    return issue(number, "narrow with a negative length", body)


@pytest.mark.slow
def test_a_signature_test_from_a_repl_transcript_has_no_runtime_calls(
    fork_repo: Path, run_cli: RunCli
) -> None:
    # The repro echoes the transcript's expression (`_repro.echo(...)`); the test must not.
    broken, _ = generated(
        make_test(fork_repo, run_cli, repl_error_issue(9401, "torch.ones(4).narrow(0, 1, -1)")),
        fork_repo,
    )
    text = broken.read_text()
    assert "_repro" not in text and "torch.ones(4).narrow(0, 1, -1)" in text
    direct = run_file(broken)
    assert direct.returncode != 0 and "is back" in direct.stderr, direct.stderr[-3000:]


def test_an_expected_value_stated_in_prose_becomes_the_assertion() -> None:
    code = (
        "import torch\nx = torch.tensor([-0.0, 1.0])\n"
        "print(torch.signbit(x).tolist())\nprint(torch.signbit(x.cumsum(0)).tolist())\n"
    )
    units = [{"id": 0, "actual": ["[True, False]", "[False, False]"], "expected": None}]
    prose = "The sign is lost: the second line should also be `[True, False]` (see `cumsum`)."
    body = quoted_output_body(code, {"units": units}, "repro", expected_text=prose)
    assert "self.assertEqual(torch.signbit(x.cumsum(0)).tolist(), [True, False]," in body.code
    assert "states in prose" in body.notes[0]
    # Two values that could each be either line's: nothing pairs up, so it is refused as before.
    vague = "It should be `[True, True]` or `[False, True]`."
    with pytest.raises(BadInput, match="not the output it expects"):
        quoted_output_body(code, {"units": units}, "repro", expected_text=vague)


# A floor division of a negative number by inf gives -1, not -0 (torch 2.13, CPU), in float64
# too: the float64 reference shares the bug (it is in the operation, not its precision).
FLOOR_CODE = (
    "import torch\na = torch.tensor(-2.5)\nb = torch.tensor(float('inf'))\nprint({value})\n"
)
FLOOR = "torch.div(a, b, rounding_mode='floor')"
# Compiled with the eager backend, eager (the reference for compiled code) shares it too.
COMPILED_FLOOR = (
    "torch.compile(lambda a, b: torch.div(a, b, rounding_mode='floor'), backend='eager')(a, b)"
)


def floor_issue(number: int, value: str) -> dict[str, Any]:
    body = (
        "## 🐛 Describe the bug\n\n"
        + fence(FLOOR_CODE.format(value=value))
        + "It prints\n```\ntensor(-1.)\n```\n"
    )
    return issue(number, "div floor of a negative number by inf", body)


@pytest.mark.slow
def test_a_float64_reference_that_shares_the_bug_still_rules_out_the_reported_value(
    fork_repo: Path, run_cli: RunCli
) -> None:
    path, summary = generated(make_test(fork_repo, run_cli, floor_issue(9502, FLOOR)), fork_repo)
    assert (
        "checked once before writing: the test fails here, as the repro REPRODUCED"
        in (summary["notes"])
    )
    text = path.read_text()
    compared = text.index("self.assertEqual(actual, expected, exact_dtype=False")
    assert text.index("self.assertNotEqual(actual, torch.tensor(-1.),") > compared
    ran = run_file(path)
    assert ran.returncode == 1, ran.stderr[-2000:]
    assert "#9502 is back: the value is the one the issue reports" in ran.stderr


@pytest.mark.slow
def test_a_test_that_does_not_see_the_bug_is_refused(fork_repo: Path, run_cli: RunCli) -> None:
    data = floor_issue(9501, COMPILED_FLOOR)
    before = sorted(p for p in (fork_repo / "test").rglob("*"))
    refused = make_test(fork_repo, run_cli, data)
    assert refused.returncode == 2, refused.stderr
    assert "the test passes here although the repro REPRODUCED" in refused.stderr
    assert "hint: " in refused.stderr and "--force" in refused.stderr
    assert sorted(p for p in (fork_repo / "test").rglob("*")) == before
    out, path_arg = str(fork_repo / "repros" / "issue-9501"), "test/test_issue_9501.py"
    forced = run_cli(
        "test", "--from-repro", out, "--path", path_arg, "--json", "--force", cwd=fork_repo
    )
    path, summary = generated(forced, fork_repo)
    assert any("written with --force: the test passes here" in n for n in summary["notes"])
    assert "compiled differs from eager" in path.read_text()
    assert run_file(path).returncode == 0  # what the note warns of


def test_unittest_summaries_are_read() -> None:
    ran = "....\n----------------------------------------------------------------------\n"
    failed = read_unittest(ran + "Ran 2 tests in 0.1s\n\nFAILED (failures=1, skipped=1)\n", 1)
    assert (failed.ran, failed.skipped, failed.failed, failed.decides) == (2, 1, True, True)
    skipped = read_unittest(ran + "Ran 1 test in 0.0s\n\nOK (skipped=1)\n", 0)
    assert (skipped.failed, skipped.decides) == (False, False)
    broken = read_unittest("ModuleNotFoundError: No module named 'expecttest'\n", 1)
    assert (broken.ran, broken.decides) == (0, False)


# The issue says the code raises an error but quotes none (no traceback, so no signature): the
# no-error oracle. It runs clean here (NOT_REPRODUCED); index 5 is the code with the bug.
TAKE_CODE = "import torch\nx = torch.ones(3)\nprint(x[torch.tensor([{index}])])\n"


def take_issue(number: int, index: int) -> dict[str, Any]:
    body = (
        "## 🐛 Describe the bug\n\nIndexing with a one-element tensor raises an error for me.\n\n"
        + fence(TAKE_CODE.format(index=index))
    )
    return issue(number, "indexing with a one-element tensor", body)


@pytest.mark.slow
def test_a_clean_run_of_a_reported_error_gives_a_test_that_fails_on_any_error(
    fork_repo: Path, run_cli: RunCli
) -> None:
    fixed, summary = generated(make_test(fork_repo, run_cli, take_issue(9601, 1)), fork_repo)
    assert "NOT_REPRODUCED [no-error]" in summary["notes"][0]
    assert "checked once before writing: the test passes here, as the fix" in summary["notes"]
    text = fixed.read_text()
    assert "Fails while the code raises an error (the issue reports an error, not its text)." in (
        text
    )
    # The same test around the code with the bug fails, naming the error it raised.
    broken = fixed.with_name("test_issue_9601_broken.py")
    broken.write_text(text.replace("torch.tensor([1])", "torch.tensor([5])"))
    fails_then_passes(broken, fixed, "#9601 is back (the issue reports an error, not its text)")
    assert "IndexError" in run_file(broken).stderr
    # From that code a torch operation raises an error: REPRODUCED [error], and the same test,
    # checked once to fail here.
    broken_repro, summary = generated(make_test(fork_repo, run_cli, take_issue(9602, 5)), fork_repo)
    assert "REPRODUCED [error]" in summary["notes"][0]
    assert "Fails while the code raises an error" in broken_repro.read_text()


# A CUDA issue quoting the sums of random values on CPU and CUDA: on CPU the values differ from
# the quoted ones for the randomness, which decides nothing; the test is for CUDA, against CPU.
SUM_CODE = "import torch\na = torch.rand(1000)\nb = a.sum()\nc = a.cuda().sum()\nprint((b, c))\n"


@pytest.mark.slow
def test_a_cpu_run_that_cannot_decide_a_cuda_issue_gives_a_cuda_test(
    fork_repo: Path, run_cli: RunCli
) -> None:
    body = (
        "## 🐛 Describe the bug\n\nThe sums differ:\n\n"
        + fence(SUM_CODE)
        + "It prints\n```\n(tensor(498.1234), tensor(731.5521, device='cuda:0'))\n```\n"
        + "Both should be the same.\n"
    )
    proc = make_test(
        fork_repo, run_cli, issue(9603, "sum on CUDA", body), env={"CUDA_VISIBLE_DEVICES": ""}
    )
    path, summary = generated(proc, fork_repo)
    assert summary["only"] == "cuda", summary
    assert "cpu: CANNOT_RUN completed on cpu, but what it printed neither" in summary["notes"][0]
    assert "the test is @onlyCUDA" in summary["notes"][0]
    text = path.read_text()
    assert "@onlyCUDA" in text and "c = a.to(device).sum()" in text
    assert 'expected = run_code("cpu")' in text
    assert "self.assertEqual(run_code(device), expected, exact_device=False" in text
    ran = run_file(path, env={"CUDA_VISIBLE_DEVICES": ""})
    assert ran.returncode == 0 and "OK (skipped=1)" in ran.stderr, ran.stderr[-2000:]


def test_only_an_undecided_cpu_fallback_leaves_the_test_to_the_missing_device() -> None:
    missing = ReproVerdict("CANNOT_RUN", "[device] device cuda is not available here", "default")
    undecided = ReproVerdict(
        "CANNOT_RUN",
        "completed on cpu, but what it printed neither matches nor clearly differs from the"
        " output the issue quotes",
        "cpu",
    )
    gate = judge(Verdicts([missing, undecided], "repro.py, run just now"), force=False)
    assert gate.device == "cuda" and gate.expect_failure is None
    # A CPU leg that failed, or gave nothing to compare, is no reason to trust the CUDA test.
    for detail in (
        "error, and the issue gives no signature to compare: RuntimeError: boom",
        "completed on cpu; the issue gives nothing to compare with (no traceback, assert or"
        " quoted output): add an assert, or fill in check()",
    ):
        failed = ReproVerdict("CANNOT_RUN", detail, "cpu")
        with pytest.raises(BadInput, match="did not reproduce"):
            judge(Verdicts([missing, failed], "repro.py, run just now"), force=False)


# Stepping the scheduler before the optimizer warns; stepping the optimizer first does not.
WARN_CODE = (
    "import torch\n"
    "model = torch.nn.Linear(2, 2)\n"
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "sched = torch.optim.lr_scheduler.StepLR(opt, 1)\n"
    "{calls}\n"
)
WARNING = (
    "/opt/torch/optim/lr_scheduler.py:200: UserWarning: Detected call of `lr_scheduler.step()`"
    " before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in the"
    " opposite order\n  warnings.warn(\n"
)


def warning_issue(number: int, calls: str) -> dict[str, Any]:
    body = (
        "## 🐛 Describe the bug\n\nThe scheduler warns about the order of the calls:\n\n"
        + fence(WARN_CODE.format(calls=calls))
        + f"\n```\n{WARNING}```\n"
    )
    return issue(number, "StepLR warns about the call order", body)


@pytest.mark.slow
def test_warning_oracle_decides_and_its_test_fails_while_the_code_warns(
    fork_repo: Path, run_cli: RunCli
) -> None:
    """The issue quotes the warning it complains of: the repro is REPRODUCED while the code
    raises it, and the test written from it fails then; without it both pass."""
    broken, summary = generated(
        make_test(fork_repo, run_cli, warning_issue(9601, "sched.step()")), fork_repo
    )
    assert "[warning] the code still warns: UserWarning: Detected call" in summary["notes"][0]
    assert "warnings.catch_warnings(record=True)" in broken.read_text()
    fixed, summary = generated(
        make_test(fork_repo, run_cli, warning_issue(9602, "opt.step()\nsched.step()")), fork_repo
    )
    assert "NOT_REPRODUCED [warning]" in summary["notes"][0], summary["notes"]
    fails_then_passes(broken, fixed, "the code warns again")


@pytest.mark.slow
def test_expect_warning_decides_a_repro(tmp_path: Path, run_cli: RunCli) -> None:
    """``--expect warning:TEXT``: REPRODUCED while a warning the code raises holds TEXT."""
    source = tmp_path / "issue.json"
    data = warning_issue(9603, "sched.step()")
    data["body"] = data["body"].replace(WARNING, "it prints a warning\n")  # no quoted warning
    source.write_text(json.dumps(data))
    out = tmp_path / "repro"
    made = run_cli(
        "repro",
        "--from-file",
        str(source),
        "-o",
        str(out),
        "--expect",
        "warning:before `optimizer.step()`",
    )
    assert made.returncode == 0, made.stderr
    ran = subprocess.run(
        [sys.executable, str(out / "repro.py"), "--device", "cpu"],
        capture_output=True,
        text=True,
        cwd=out,
        timeout=300,
    )
    last = ran.stdout.strip().splitlines()[-1]
    assert last.startswith("contribkit-verdict: REPRODUCED [expect:warning] warns"), last


def test_marks_inside_functions_go_too() -> None:
    code = (
        "import torch\ndef f(x):\n    _repro.mark(2); x.view(-1, 5); _repro.mark(-1)  # raise\n"
        "_repro.mark(1); print(f(torch.ones(3))); _repro.mark(-1)\n"
    )
    stripped, _ = strip_runtime(code)
    assert "_repro" not in stripped
    assert "    x.view(-1, 5)  # raise\n" in stripped
    compile(stripped, "test.py", "exec")


# The issue says a call should raise and does not (a comment on the call): the missing-error
# oracle. The call raises here (NOT_REPRODUCED); view(3, 1) is the code with the bug. The issue's
# function is named check: it is not the repro's check().
VIEW_CODE = (
    "import torch\n\ndef check():\n    x = torch.ones(3)\n    x.view({shape})  # should raise\n"
    "\ncheck()\n"
)


def view_issue(number: int, shape: str) -> dict[str, Any]:
    body = "## 🐛 Describe the bug\n\n" + fence(VIEW_CODE.format(shape=shape))
    return issue(number, "view accepts a bad shape", body)


@pytest.mark.slow
def test_an_error_no_longer_missing_gives_a_test_that_fails_on_a_clean_run(
    fork_repo: Path, run_cli: RunCli
) -> None:
    fixed, summary = generated(make_test(fork_repo, run_cli, view_issue(9611, "-1, 5")), fork_repo)
    assert "NOT_REPRODUCED [missing-error]" in summary["notes"][0]
    text = fixed.read_text()
    assert "_repro" not in text and "--expect no-error" in text
    broken = fixed.with_name("test_issue_9611_broken.py")
    broken.write_text(text.replace("x.view(-1, 5)", "x.view(3, 1)"))
    fails_then_passes(broken, fixed, "#9611 is back (--expect no-error)")


# An issue about an error's wording: the message should say "overflow". It does now
# (NOT_REPRODUCED [message]); a message without the word is the bug.
OVERFLOW_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "<stdin>", line 1, in <module>\n'
    "TypeError: zeros(): argument 'size' must be tuple of ints, but found element of type int\n"
)


def overflow_issue(number: int) -> dict[str, Any]:
    body = (
        "## 🐛 Describe the bug\n\nI'd expect the error to mention overflow.\n\n"
        + fence("import torch\ntorch.zeros(2 * 10 ** 20)\n")
        + "```\n"
        + OVERFLOW_TRACE
        + "```\n"
    )
    return issue(number, "Unhelpful error message for huge sizes", body)


@pytest.mark.slow
def test_an_error_message_that_now_says_what_was_asked_gives_a_test_of_its_words(
    fork_repo: Path, run_cli: RunCli
) -> None:
    fixed, summary = generated(make_test(fork_repo, run_cli, overflow_issue(9621)), fork_repo)
    assert "NOT_REPRODUCED [message]" in summary["notes"][0]
    text = fixed.read_text()
    assert "Fails while the code raises no TypeError whose message says 'overflow'." in text
    broken = fixed.with_name("test_issue_9621_broken.py")
    broken.write_text(text.replace("torch.zeros(2 * 10 ** 20)", "torch.zeros('many')"))
    fails_then_passes(broken, fixed, "the error's message no longer says 'overflow'")
