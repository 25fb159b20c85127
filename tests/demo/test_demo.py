"""`contribkit demo` end to end with CPU torch: every step is a real command in a scratch fork."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import RunCli, git, isolated_environ

pytestmark = pytest.mark.slow  # three real runs of torch code, a few seconds each

DemoRun = tuple[subprocess.CompletedProcess[str], Path]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """One real demo for the module: ``--json`` on stdout, the progress a person sees on stderr."""
    scratch = tmp_path_factory.mktemp("demo") / "scratch"
    proc = subprocess.run(
        [sys.executable, "-m", "contribkit", "demo", "--dir", str(scratch), "--json"],
        env=isolated_environ(tmp_path_factory.mktemp("home")),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc, scratch


def test_demo_walks_the_workflow(demo_run: DemoRun) -> None:
    proc, scratch = demo_run
    result = json.loads(proc.stdout)
    assert result["ok"] and result["dir"] == str(scratch)
    steps = {s["number"]: s for s in result["steps"]}
    assert [(s["name"], s["status"]) for s in result["steps"]] == [
        ("repro", "ok"),
        ("run", "ok"),
        ("test", "ok"),
        ("fix", "ok"),
        ("run", "ok"),
        ("pr", "ok"),
    ]
    assert steps[1]["command"] == "contribkit repro --example"
    assert steps[2]["command"] == "contribkit run repros/issue-4242 --expect reproduced"
    assert steps[2]["result"].startswith("REPRODUCED on cpu at ")
    assert "repros/issue-4242/repro.py  REPRODUCED" in steps[2]["output"]  # run's own table
    assert steps[3]["command"] == "contribkit test --from-repro repros/issue-4242"
    assert "stands in for a change to aten/" in steps[4]["note"]
    assert steps[5]["command"] == "contribkit run"
    assert steps[5]["result"].startswith("NOT_REPRODUCED on cpu at ")
    assert steps[6]["command"] == "contribkit pr --offline -o .contribkit/pr-body.md"
    # the fix is under aten/src/ATen/native/: the title gets PyTorch's [area] prefix
    assert steps[6]["result"] == (
        "wrote .contribkit/pr-body.md (title: [aten] Cast a source of another dtype in index_add_)"
    )
    body = result["body"]
    assert body == (scratch / ".contribkit/pr-body.md").read_text()
    assert body.startswith("Fixes #4242\n\nindex_add_ refused a float source")
    assert "## Root cause\n\nThe kernel checked" in body and "## Solution\n\nCast the" in body
    assert "# before: REPRODUCED [signature] RuntimeError: index_add_(): self (Long)" in body
    assert "# after:  NOT_REPRODUCED [signature] completed on cpu" in body
    assert "- CUDA: not run (no GPU available)" in body  # the CPU wheel: the truth here
    # the label's bot command goes to the terminal, not the body; the template's lines stay
    assert "@pytorchbot" not in body
    assert "\n[ ] I ran `lintrunner -a`, and fixed all errors relevant to this change.\n" in body
    assert body.endswith("\ncc @contribkit-maintainers\n")
    # the scratch fork is left, clean, with the fix committed on the branch
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=scratch) == result["branch"]
    assert git("log", "--format=%s", "upstream/main..HEAD", cwd=scratch) == (
        "Cast a source of another dtype in index_add_"
    )
    assert git("status", "--porcelain", cwd=scratch) == ""


def test_demo_prints_each_step(demo_run: DemoRun) -> None:
    proc, scratch = demo_run
    out = proc.stderr  # with --json, the progress is on stderr
    assert out.startswith(
        "contribkit demo: the whole workflow on the bundled example issue, offline\n"
        f"scratch fork: {scratch}\n"
    )
    for header in (
        "\n1. repro: turn the issue into a runnable repro script\n   $ contribkit repro --example\n",
        "\n2. run: confirm the bug before fixing it\n",
        "\n4. fix: commit the fix\n",
        "\n6. pr: write the PR title and body\n",
        f"The scratch fork is left for you: {scratch}\n",
    ):
        assert header in out
    assert "   -> REPRODUCED on cpu at " in out and "   -> NOT_REPRODUCED on cpu at " in out
    assert "--- the PR body ---" not in out  # the body is in the JSON


def test_demo_refuses_bad_input(run_cli: RunCli, tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "file").write_text("mine\n")
    proc = run_cli("demo", "--dir", str(busy))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"contribkit: error: {busy} exists and is not an empty folder\n")
    assert (busy / "file").read_text() == "mine\n"
    # an interpreter that cannot import torch (site-packages switched off)
    no_torch = tmp_path / "python-without-torch"
    no_torch.write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')
    no_torch.chmod(0o755)
    proc = run_cli("demo", "--dir", str(tmp_path / "new"), "--python", str(no_torch))
    assert proc.returncode == 2
    assert "cannot import torch" in proc.stderr and "hint: pass --python" in proc.stderr
    assert not (tmp_path / "new").exists()
