"""Generated repro scripts, executed with real CPU torch: the verdict contract end to end."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contribkit.core.render import write_outputs
from contribkit.core.verdict import RUNTIME_FILE
from contribkit.issue.model import Issue, ParsedIssue, ReporterEnv, Signature
from contribkit.repro.plan import plan_repro

INDEX_ADD = (
    "import torch\n"
    "counts = torch.zeros(3, dtype=torch.long)\n"
    "counts.index_add_(0, torch.tensor([0]), torch.tensor([1.5]))\n"
)
INDEX_ADD_SIG = Signature(
    "RuntimeError",
    "index_add_(): self (Long) and source (Float) must have the same scalar type",
    "traceback",
)


def parsed(
    code: str,
    signature: Signature | None = None,
    *,
    env: ReporterEnv | None = None,
    expected: str | None = None,
) -> ParsedIssue:
    return ParsedIssue(
        code=code,
        code_source="body" if code else "",
        blocks=[],
        signatures=[signature] if signature else [],
        env=env,
        expected=expected,
        actual=None,
    )


def generate(
    tmp_path: Path,
    code: str,
    signature: Signature | None = None,
    title: str = "A bug",
    *,
    env: ReporterEnv | None = None,
    expected: str | None = None,
) -> Path:
    issue = Issue(
        title=title,
        body="body",
        number=123,
        repo="pytorch/pytorch",
        url="https://github.com/pytorch/pytorch/issues/123",
    )
    plan = plan_repro(issue, parsed(code, signature, env=env, expected=expected))
    write_outputs(plan.output_files(tmp_path / "issue-123"))
    return tmp_path / "issue-123" / "repro.py"


def run(script: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=script.parent,
        env=env,
    )
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    return proc.returncode, last, proc.stderr


pytestmark = pytest.mark.slow


def test_crash_with_matching_signature_is_reproduced(tmp_path: Path) -> None:
    code, last, err = run(generate(tmp_path, INDEX_ADD, INDEX_ADD_SIG))
    assert code == 1, err
    assert last.startswith(
        "contribkit-verdict: REPRODUCED [signature] RuntimeError: index_add_(): self (Long)"
    )
    assert "Traceback" in err  # the user still sees the real traceback


def test_benign_code_is_not_reproduced(tmp_path: Path) -> None:
    benign = "import torch\ncounts = torch.zeros(3)\ncounts.index_add_(0, torch.tensor([0]), torch.tensor([1.5]))\n"
    code, last, _ = run(generate(tmp_path, benign, INDEX_ADD_SIG))
    assert code == 0
    assert last.startswith(
        "contribkit-verdict: NOT_REPRODUCED [signature] completed on cpu without RuntimeError"
    )


@pytest.mark.parametrize(
    "handler",
    ["    print(e)\n", "    print(f'{type(e).__name__}: {e}')\n", "    traceback.print_exc()\n"],
)
def test_error_caught_and_printed_by_the_issue_is_reproduced(tmp_path: Path, handler: str) -> None:
    """Issue code that catches the error and prints it still reproduces: no false all-clear."""
    body = "".join("    " + line + "\n" for line in INDEX_ADD.splitlines()[1:])
    caught = f"import traceback\nimport torch\ntry:\n{body}except Exception as e:\n{handler}"
    code, last, _ = run(generate(tmp_path, caught, INDEX_ADD_SIG))
    assert code == 1, last
    assert last.startswith(
        "contribkit-verdict: REPRODUCED [signature] the issue's code caught the error: "
    ), last
    assert "must have the same scalar type" in last


def test_different_exception_cannot_run(tmp_path: Path) -> None:
    other = "import torch\ntorch.ones(2) @ torch.ones(3)\n"
    code, last, _ = run(generate(tmp_path, other, INDEX_ADD_SIG))
    assert code == 125
    assert "CANNOT_RUN different error: got RuntimeError" in last
    assert "the issue reports RuntimeError: index_add_()" in last


def test_cuda_only_code_rewritten_and_device_switch(tmp_path: Path) -> None:
    cuda_code = (
        INDEX_ADD.replace("dtype=torch.long)", "dtype=torch.long, device='cuda')")
        .replace("torch.tensor([0])", "torch.tensor([0]).cuda()")
        .replace("torch.tensor([1.5])", "torch.tensor([1.5], device='cuda')")
    )
    script = generate(tmp_path, cuda_code, INDEX_ADD_SIG)
    text = script.read_text()
    assert "device=DEVICE" in text and ".cuda()" not in text.split("# ---- the issue's code")[1]
    assert "Device rewrite" in text
    code, last, _ = run(script)  # default device is the issue's: cuda
    assert code == 125 and "device cuda is not available here" in last
    code, last, _ = run(script, "--device", "cpu")
    assert code == 1 and "REPRODUCED" in last
    code, last, _ = run(script, env={**_env(), "CONTRIBKIT_DEVICE": "cpu"})
    assert code == 1 and "REPRODUCED" in last


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def test_cpu_vs_cuda_comparison_needs_cuda(tmp_path: Path) -> None:
    compare = "import torch\na = torch.ones(3)\nb = a.cuda()\nprint(torch.allclose(a, b.cpu()))\n"
    code, last, _ = run(generate(tmp_path, compare), "--device", "cpu")
    assert code == 125 and "CUDA is not available here, and the issue's code needs it" in last


def test_wrong_result_check_is_filled_in(tmp_path: Path) -> None:
    wrong = "import torch\nexpected = torch.tensor([1.0, 2.0])\nactual = torch.tensor([1.0, 2.5])\nprint(torch.allclose(actual, expected))\n"
    script = generate(tmp_path / "a", wrong)
    assert (
        "torch.testing.assert_close(actual, expected, atol=1e-08, rtol=1e-05, check_device=False)"
        in script.read_text()
    )
    code, last, _ = run(script)
    assert code == 1 and last.startswith(
        "contribkit-verdict: REPRODUCED [compare] check failed: Tensor-likes are not close!"
    )
    right = wrong.replace("2.5", "2.0")
    code, last, _ = run(generate(tmp_path / "b", right))
    assert code == 0 and "NOT_REPRODUCED [compare] check passed on cpu" in last


MEASURED = (
    "import torch\n"
    "x = torch.arange(1.0, 9.0) * 1e6\n"
    "ref = torch.cumsum(x.double(), 0).float()\n"
    "out = torch.cumsum(x, 0) * SCALE\n"
    "print((out - ref).abs().max())\n"
)


@pytest.mark.parametrize(
    ("scale", "exit_code", "verdict"),
    [
        ("1.5", 1, "REPRODUCED [compare] check failed: Tensor-likes are not close!"),
        ("(1 + 2e-7)", 125, "CANNOT_RUN the values agree within assert_close's default"),
        ("1", 0, "NOT_REPRODUCED [compare] check passed on cpu"),
    ],
)
def test_a_measured_difference_without_tolerance_needs_equal_values_to_pass(
    tmp_path: Path, scale: str, exit_code: int, verdict: str
) -> None:
    # Code that prints ``(out - ref).abs().max()`` states no tolerance: a value within
    # assert_close's default one, but not equal, decides nothing (a float32 GPU scan drifting
    # from the float64 reference by an ulp is what such issues report).
    script = generate(tmp_path, MEASURED.replace("SCALE", scale))
    assert "def check_exact():" in script.read_text()
    code, last, err = run(script)
    assert (code, last.split(" ", 1)[1][: len(verdict)]) == (exit_code, verdict), err


def test_own_asserts_that_pass_do_not_hide_a_comparison_that_fails(tmp_path: Path) -> None:
    # The code asserts a shape and prints whether the values agree: the assert passing says
    # nothing of the values (a compiled result printed beside the eager one, overflowed).
    code = (
        "import torch\nexpected = torch.tensor([1.0, 2.0])\nactual = torch.tensor([1.0, 2.5])\n"
        "assert actual.shape == expected.shape\nprint(torch.allclose(actual, expected))\n"
    )
    exit_code, last, err = run(generate(tmp_path / "a", code))
    assert exit_code == 1 and "REPRODUCED [compare] check failed" in last, (last, err)
    exit_code, last, _ = run(generate(tmp_path / "b", code.replace("2.5", "2.0")))
    assert exit_code == 0 and "NOT_REPRODUCED [compare] check passed on cpu" in last


def test_a_passing_comparison_and_a_quoted_output_that_still_shows_the_bug_abstain(
    tmp_path: Path,
) -> None:
    code = (
        "import torch\nexpected = torch.tensor([1.0, 2.0])\nactual = expected * 1.0\n"
        "print(torch.allclose(actual, expected))\nprint(actual.sum().item())  # 3.0\n"
    )
    exit_code, last, err = run(generate(tmp_path, code))
    assert exit_code == 125, (last, err)
    assert "check passed on cpu, but the code still prints what the issue shows" in last


def test_no_code_and_bad_code_are_incomplete(tmp_path: Path) -> None:
    no_code = generate(tmp_path / "a", "", INDEX_ADD_SIG)
    assert "def check" not in no_code.read_text()  # a crash is decided by its signature
    code, last, _ = run(no_code)
    assert code == 125 and last == (
        "contribkit-verdict: CANNOT_RUN INCOMPLETE: the issue has no code: write the "
        "reproduction in repro.py, then set incomplete=None"
    )
    # Once the reproduction is written and incomplete=None is set, the signature decides.
    text = re.sub(r"incomplete=(['\"])", r"incomplete=None and \1", no_code.read_text(), count=1)
    no_code.write_text(text.replace("# ---- end of the issue's code", INDEX_ADD + "# ---- end", 1))
    code, last, _ = run(no_code)
    assert code == 1 and "REPRODUCED [signature] RuntimeError: index_add_()" in last
    nothing = generate(tmp_path / "c", "")  # no code, no signature: the code is missing first
    code, last, _ = run(nothing)
    assert code == 125 and last == (
        "contribkit-verdict: CANNOT_RUN INCOMPLETE: the issue has no code: write the "
        "reproduction in repro.py and fill in check(), then set incomplete=None"
    )
    script = generate(tmp_path / "b", "import torch\nx = torch.ones(2\nprint(x)\n", INDEX_ADD_SIG)
    text = script.read_text()
    ast.parse(text)  # always valid Python
    assert (
        "# x = torch.ones(2\n# # ^^^ contribkit: does not parse here ('(' was never closed)\n"
        in text
    )
    assert "def check" not in text
    code, last, _ = run(script)
    assert (
        code == 125
        and "INCOMPLETE: the issue's code does not parse (line 2 of the code: '(' was never closed)"
        in last
    )


def test_unknown_kind_without_signature_or_comparison(tmp_path: Path) -> None:
    code, last, _ = run(generate(tmp_path, "import torch\nprint(torch.ones(2))\n"))
    assert code == 125 and "INCOMPLETE: fill in check()" in last
    assert last.endswith(
        "; or state what shows the bug: --expect output:TEXT (what it prints with the bug)"
    )


def test_json_verdict_and_exit_paths(tmp_path: Path) -> None:
    code, last, _ = run(generate(tmp_path / "a", INDEX_ADD, INDEX_ADD_SIG), "--json")
    data = json.loads(last)
    assert (
        data["verdict"] == "REPRODUCED"
        and data["exit_code"] == code == 1
        and data["device"] == "cpu"
    )
    exits = "import sys\nimport torch\nsys.exit(3)\n"
    code, last, _ = run(generate(tmp_path / "b", exits, INDEX_ADD_SIG))
    assert code == 125 and "exited with 3" in last
    clean = "import sys\nimport torch\nsys.exit(0)\n"  # no operation of the issue's runs
    code, last, _ = run(generate(tmp_path / "c", clean, INDEX_ADD_SIG))
    assert code == 125 and "no torch operation ran" in last
    fixed = "import sys\nimport torch\nx = torch.zeros(2)\nx.index_add_(0, torch.tensor([1]), torch.ones(1))\nsys.exit(0)\n"
    code, last, _ = run(generate(tmp_path / "d", fixed, INDEX_ADD_SIG))
    assert code == 0 and "NOT_REPRODUCED" in last


def test_missing_module_cannot_run(tmp_path: Path) -> None:
    code, last, _ = run(
        generate(tmp_path, "import torch\nimport not_a_real_module_xyz\n", INDEX_ADD_SIG)
    )
    assert code == 125 and "missing module" in last


def test_a_missing_compiler_is_this_machines_error_not_the_issues(tmp_path: Path) -> None:
    # inductor with no working C++ compiler: CANNOT_RUN that names the machine, with no
    # "--expect error:..." hint (the missing tool is never the bug), even where the issue
    # reports a crash (a Python error there would otherwise say NOT_REPRODUCED).
    code = (
        "import torch\nimport torch._inductor.config\n"
        'torch._inductor.config.cpp.cxx = ("/nonexistent/g++",)\n'
        "print(torch.compile(lambda x: x.sin() + 1)(torch.randn(4)))\n"
    )
    crash = "torch.compile crashes with a segmentation fault"
    for folder, signature, title in (("a", INDEX_ADD_SIG, "A bug"), ("b", None, crash)):
        script = generate(tmp_path / folder, code, signature, title)
        if folder == "b":
            assert '"crash": true' in (script.parent / "meta.json").read_text()
        exit_code, last, err = run(script)
        assert exit_code == 125, err
        assert "torch.compile found no build tool it runs here" in last, last
        assert "--expect" not in last
    # A stated oracle does not take the missing tool for the bug either.
    for stated in ("error", "compile-vs-eager"):
        exit_code, last, err = run(script, "--expect", stated)
        assert exit_code == 125, (stated, last, err)


def test_a_name_the_snippet_never_defines_is_named(tmp_path: Path) -> None:
    # A snippet cut from a longer program: the verdict says what to add, not "an error".
    exit_code, last, _ = run(generate(tmp_path, "import torch\nprint(torch.ones(2) + b)\n"))
    assert exit_code == 125
    assert last.endswith(
        "CANNOT_RUN the issue's code uses a name it never defines (NameError: name 'b' is not"
        " defined): define it in repro.py"
    )


def test_template_parts_pass_ruff(tmp_path: Path) -> None:
    script = generate(
        tmp_path, INDEX_ADD, INDEX_ADD_SIG, env=ReporterEnv(torch_version="2.9.1", os="Linux")
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--isolated",
            "--select",
            "E4,E7,E9,F",
            "--ignore",
            "E402",
            str(script),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout
    assert "torch version: 2.9.1" in script.read_text()


@settings(max_examples=60, deadline=None)
@given(st.text(), st.text())
def test_issue_text_is_data_never_template_or_code(title: str, expected: str) -> None:
    issue = Issue(title=title, body="", number=1, repo="o/r", url=None)
    plan = plan_repro(issue, parsed("", None, expected=expected))
    script = plan.files["repro.py"]
    tree = ast.parse(script)  # never breaks out of the docstring
    doc = ast.get_docstring(tree, clean=False) or ""
    assert (
        title.replace("\r\n", "\n").replace("\r", "\n").split("\n")[0] in doc or not title.strip()
    )


def test_template_syntax_in_issue_text_stays_literal(tmp_path: Path) -> None:
    script = generate(
        tmp_path, "", None, title="{{ 7 * 7 }} {% for x in y %}", expected='"""; import os'
    )
    text = script.read_text()
    assert "{{ 7 * 7 }} {% for x in y %}" in text and "49" not in text.split("\n")[1]
    assert '#   Expected:  """; import os' in text  # a comment at the end: inert


def test_issue_contrasting_cpu_and_cuda_is_not_rewritten(tmp_path: Path) -> None:
    from contribkit.issue.parse import parse_issue

    body = (
        "The result differs between CPU and GPU.\n\n```python\nimport torch\n"
        "x = torch.ones(3).to(torch.device('cuda:0'))\nprint(torch.ones(3) + x)\n```\n"
    )
    issue = Issue(title="add: inconsistent", body=body, number=9, repo="o/r")
    parsed_issue = parse_issue(issue)
    assert parsed_issue.contrasts_devices
    plan = plan_repro(issue, parsed_issue)
    assert plan.summary.devices_needed == ["cuda"] and not plan.summary.device_rewrite
    assert "contrasts CPU with CUDA" in plan.files["repro.py"]
    same = parse_issue(Issue(title="t", body="The error is the same on CPU and GPU.\n"))
    assert not same.contrasts_devices


def test_printed_eager_vs_compiled_gets_a_check(tmp_path: Path) -> None:
    code = (
        "import torch\ndef func(x):\n    return x.sin() + 1\nx = torch.arange(4.0)\n"
        "print(func(x))\nprint(torch.compile(func, backend='eager')(x))\n"
    )
    script = generate(tmp_path, code)
    assert (
        "torch.testing.assert_close(torch.compile(func, backend='eager')(x), func(x)"
        in script.read_text()
    )
    code_, last, err = run(script)
    assert code_ == 0, err
    assert "NOT_REPRODUCED [compile-vs-eager] check passed on cpu" in last


def test_aliased_torch_gets_a_working_check(tmp_path: Path) -> None:
    """`import torch as th`: check() still compares, with its own torch."""
    code = "import torch as th\na = th.ones(3)\nb = a * 2\nprint(th.allclose(a, b))\n"
    status, last, err = run(generate(tmp_path, code))
    assert status == 1, err
    assert last.startswith("contribkit-verdict: REPRODUCED [compare] check failed: "), last


# -- the runtime beside repro.py ----------------------------------------------------------------
def test_the_issues_code_comes_first_and_the_runtime_is_a_lint_clean_sibling(
    tmp_path: Path,
) -> None:
    script = generate(tmp_path, INDEX_ADD, INDEX_ADD_SIG)
    lines = script.read_text().splitlines()
    start = lines.index("# ---- the issue's code (body) ----")
    assert start < 60 and len(lines) < 120  # a 7-line issue reads as one, not 999 lines
    assert "class Repro" not in script.read_text()
    runtime = script.with_name(RUNTIME_FILE)
    assert "class Repro" in runtime.read_text()
    meta = json.loads(script.with_name("meta.json").read_text())
    assert meta["runtime"] == {
        "file": RUNTIME_FILE,
        "sha256": hashlib.sha256(runtime.read_bytes()).hexdigest(),
    }
    # the repository's own lint rules, on the Python the runtime targets (3.9)
    lint = ["--isolated", "--line-length", "100", "--target-version", "py39"]
    check = subprocess.run(
        [sys.executable, "-m", "ruff", "check", *lint, "--select", "E,F,W,I,B,SIM", str(runtime)],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout
    fmt = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", *lint, str(runtime)],
        capture_output=True,
        text=True,
    )
    assert fmt.returncode == 0, fmt.stdout


@pytest.mark.slow
def test_the_folder_runs_anywhere_and_nothing_on_sys_path_shadows_its_runtime(
    tmp_path: Path,
) -> None:
    script = generate(tmp_path / "made", INDEX_ADD, INDEX_ADD_SIG)
    moved = tmp_path / "elsewhere" / "issue-123"
    shutil.copytree(script.parent, moved)
    # a checkout under `git bisect run` with a module of the runtime's name, first on sys.path
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / RUNTIME_FILE).write_text("raise SystemExit('the wrong runtime')\n")
    proc = subprocess.run(
        [sys.executable, str(moved / "repro.py"), "--device", "cpu"],
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("contribkit-verdict: REPRODUCED [signature]")
