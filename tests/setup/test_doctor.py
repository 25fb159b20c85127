from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import RunCli, git


def test_doctor_inside_fork(run_cli: RunCli, fork_repo: Path, bare_python: str) -> None:
    """Checked against an interpreter without torch (a warning): the real torch is the slow
    test below."""
    proc = run_cli("doctor", "--json", "--python", bare_python, cwd=fork_repo)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["upstream remote"]["status"] == "OK"
    assert "pytorch/pytorch" in checks["upstream remote"]["detail"]
    assert checks["fork remote"]["detail"] == "'origin' -> contributor/pytorch"
    assert checks["torch"]["status"] == "WARN" and "not importable by" in checks["torch"]["detail"]
    assert (
        checks["git hooks"]["status"] == "WARN" and "contribkit init" in checks["git hooks"]["hint"]
    )
    assert checks["GitHub auth"]["status"] == "WARN"


@pytest.mark.slow
def test_doctor_finds_the_real_torch(run_cli: RunCli, fork_repo: Path) -> None:
    proc = run_cli("doctor", "--json", cwd=fork_repo)
    assert proc.returncode == 0, proc.stderr
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["torch"]["status"] == "OK" and "2." in checks["torch"]["detail"]


def test_doctor_with_an_interpreter_that_is_not_executable(run_cli: RunCli, tmp_path: Path) -> None:
    data = tmp_path / "python"
    data.write_text("#!/bin/sh\n")
    proc = run_cli("doctor", "--python", str(data), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"contribkit: error: interpreter '{data}' is not executable",
        "hint: pass a path to a python executable, e.g. ~/pytorch/venv/bin/python",
    ]


def test_doctor_outside_repo(run_cli: RunCli, tmp_path: Path, bare_python: str) -> None:
    proc = run_cli("doctor", "--python", bare_python, cwd=tmp_path)
    assert proc.returncode == 0
    assert "not inside a git repository" in proc.stdout
    assert "failure(s)" in proc.stdout


def test_doctor_never_prints_the_token(run_cli: RunCli, fork_repo: Path, bare_python: str) -> None:
    proc = run_cli(
        "doctor",
        "--python",
        bare_python,
        "--json",
        cwd=fork_repo,
        env={"GH_TOKEN": "ghp_doctor_secret"},
    )
    assert "ghp_doctor_secret" not in proc.stdout + proc.stderr
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert "GH_TOKEN" in checks["GitHub auth"]["detail"]


def test_doctor_fails_when_lintrunner_never_initialised(
    run_cli: RunCli, fork_repo: Path, tmp_path: Path, bare_python: str
) -> None:
    (fork_repo / ".lintrunner.toml").write_text("[[linter]]\ncode = 'FLAKE8'\n")
    git("add", "-A", cwd=fork_repo)
    git("commit", "-qm", "Add lint config", cwd=fork_repo)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "lintrunner").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "lintrunner").chmod(0o755)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    proc = run_cli("doctor", "--python", bare_python, cwd=fork_repo, env=env)
    assert proc.returncode == 1
    assert "lintrunner init" in proc.stdout
    # after an init (lintrunner saves a copy of the config), the check passes
    saved = tmp_path / "data" / "lintrunner" / "abc123"
    saved.mkdir(parents=True)
    (saved / ".lintrunner.toml").write_bytes((fork_repo / ".lintrunner.toml").read_bytes())
    proc = run_cli("doctor", "--python", bare_python, "--json", cwd=fork_repo, env=env)
    assert proc.returncode == 0
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["lintrunner"]["status"] == "OK"


def test_doctor_reads_remotes_by_name_whatever_their_url(
    run_cli: RunCli, fork_repo: Path, bare_python: str
) -> None:
    # A local mirror as upstream (common for mirrors and tests): it exists, so no "add" hint.
    git("remote", "set-url", "upstream", "/srv/pytorch.git", cwd=fork_repo)
    git("remote", "set-url", "origin", "git@github.com:contributor/pytorch.git", cwd=fork_repo)
    proc = run_cli("doctor", "--python", bare_python, "--json", cwd=fork_repo)
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["upstream remote"]["status"] == "OK"
    assert checks["upstream remote"]["detail"].startswith("'upstream' -> /srv/pytorch.git (not a")
    assert checks["fork remote"]["detail"] == "'origin' -> contributor/pytorch"
    # upstream on GitHub but not pytorch/pytorch: the fix changes the URL of the existing remote
    git("remote", "set-url", "upstream", "https://github.com/someone/pytorch.git", cwd=fork_repo)
    checks = {
        c["name"]: c
        for c in json.loads(
            run_cli("doctor", "--python", bare_python, "--json", cwd=fork_repo).stdout
        )["checks"]
    }
    assert checks["upstream remote"]["status"] == "WARN"
    assert checks["upstream remote"]["hint"].startswith("git remote set-url upstream ")
    git("remote", "remove", "upstream", cwd=fork_repo)
    checks = {
        c["name"]: c
        for c in json.loads(
            run_cli("doctor", "--python", bare_python, "--json", cwd=fork_repo).stdout
        )["checks"]
    }
    assert checks["upstream remote"]["hint"].startswith("git remote add upstream ")
