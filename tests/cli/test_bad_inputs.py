"""Hostile input is bad input: exit 2 and one line, never an internal error; the issue parser
stays linear in the body's size; a SHA-256 repository has commits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from contribkit.issue.model import Issue
from contribkit.issue.parse import parse_issue
from tests.conftest import RunCli, commit_files, git


def one_line_error(proc: subprocess.CompletedProcess[str], code: int, needle: str) -> None:
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("contribkit: error: ")]
    assert len(errors) == 1 and needle in errors[0], proc.stderr


def program(terms: int) -> str:
    return "```python\nimport torch\ny = " + " + ".join(["1"] * terms) + "\nprint(y)\n```\n"


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("[" * 100_000 + "]" * 100_000, "invalid JSON (nested too deeply)"),
        ('{"body": "' + "x" * 10 + '", "number": "\u00b2"}', "'number' must be an issue number"),
        (json.dumps({"title": "t", "body": program(3000)}), "nested too deeply for Python"),
        ("[]", "a JSON list, not an object"),
    ],
    ids=["json-100000-deep", "superscript-number", "3000-term-expression", "json-list"],
)
def test_hostile_issue_files(run_cli: RunCli, tmp_path: Path, content: str, needle: str) -> None:
    saved = tmp_path / "issue.json"
    saved.write_text(content)
    one_line_error(run_cli("repro", "--from-file", str(saved), cwd=tmp_path), 2, needle)
    assert not (tmp_path / "repros").exists()


def test_superscript_issue_number(run_cli: RunCli, tmp_path: Path) -> None:
    one_line_error(run_cli("repro", "\u00b2", cwd=tmp_path), 2, "is not an issue number")


def test_long_expressions_that_compile_still_make_a_repro(run_cli: RunCli, tmp_path: Path) -> None:
    """2,000 terms compile (3,000 do not): walking its tree must not run out of recursion."""
    saved = tmp_path / "issue.json"
    saved.write_text(json.dumps({"title": "t", "body": program(2000), "number": 5}))
    proc = run_cli("repro", "--from-file", str(saved), "--stdout", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    compile(proc.stdout, "repro.py", "exec")


@pytest.mark.parametrize("content", ["[]", "{}", '{"schema": 1, "cells": 5}', "[" * 50_000])
def test_a_run_record_that_is_no_record(run_cli: RunCli, fork_repo: Path, content: str) -> None:
    git("switch", "-q", "-c", "fix/issue-3-x", cwd=fork_repo)
    runs = fork_repo / ".contribkit" / "runs"
    runs.mkdir(parents=True)
    (runs / "20260101T000000.000000Z-aaaaaaa.json").write_text(content)
    one_line_error(run_cli("submit", "--dry-run", cwd=fork_repo), 2, "not a readable run record")


def test_sha256_repository_has_commits(run_cli: RunCli, tmp_path: Path) -> None:
    repo = tmp_path / "sha256"
    made = subprocess.run(
        ["git", "init", "-q", "--object-format=sha256", str(repo)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip("this git cannot make SHA-256 repositories")
    commit_files(repo, {"torch/nn/functional.py": "x = 1\n"}, "Initial import")
    git("switch", "-q", "-c", "fix/issue-12-relu", cwd=repo)
    commit_files(repo, {"torch/nn/functional.py": "x = 2\n"}, "Fix relu")
    proc = run_cli("pr", "--offline", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "no commits yet" not in proc.stderr
    assert proc.stdout.startswith("Fixes #12\n")


def _calls(body: str) -> int:
    """Python function calls made while parsing ``body``: deterministic, unlike a timing."""
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        count += event == "call"

    sys.setprofile(profile)
    try:
        parse_issue(Issue(title="t", body=body))
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize(
    "unit",
    [
        "Prose about a crash.\n```python\nimport torch\nprint(torch.ones(3))\n```\n"
        'Traceback (most recent call last):\n  File "a.py", line 3, in <module>\n'
        "RuntimeError: boom\n>>> torch.ones(2)\ntensor([1., 1.])\nPyTorch version: 2.5\n",
        "```\n",
        "```python\nx = 1\n",
        ">>> x = 1\n",
        'Traceback (most recent call last):\n  File "x", line 1\n',
        "**Key:** value\n",
    ],
    ids=["mixed", "fences", "unclosed", "prompts", "tracebacks", "env-lines"],
)
def test_the_parser_is_linear_in_the_body(unit: str) -> None:
    small, large = _calls(unit * 200), _calls(unit * 800)
    assert large <= 4.5 * small + 2000, (small, large)
