"""Branch-name, pre-push range and lintrunner hooks: main() in a real fork repository."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from contribkit.hooks import branch_name, lintrunner, pr_scope, tests_required
from tests.conftest import commit_files, git


def run(
    capsys: pytest.CaptureFixture[str], main: Callable[[list[str]], int], *argv: str
) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def rule_ids(output: str) -> list[str]:
    return re.findall(r"\bCK\d{3}\b(?= )", output)


# --- contribkit-branch-name ---------------------------------------------------------------------


def test_commits_on_main_are_warned_about_and_refused_under_strict(
    capsys: pytest.CaptureFixture[str], fork_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = run(capsys, branch_name.main)
    assert code == 0 and rule_ids(out) == ["CK203"]  # advice in the default profile
    assert "warning CK203 protected-branch: 'main' is a protected branch" in out
    assert "git switch -c fix/<issue>-<what>" in out
    monkeypatch.setenv("CONTRIBKIT_HOOKS_STRICT", "1")
    code, out = run(capsys, branch_name.main)
    assert code == 1 and "error CK203 protected-branch" in out


def test_pushing_main_to_sync_a_fork_is_fine(
    capsys: pytest.CaptureFixture[str], fork_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/main")
    assert run(capsys, branch_name.main) == (0, "")
    # the pushed branch is checked, not the checked-out one
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/my-feature")
    assert rule_ids(run(capsys, branch_name.main)[1]) == ["CK201", "CK202"]
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "HEAD")  # git push origin HEAD:x, detached
    assert run(capsys, branch_name.main) == (0, "")


@pytest.mark.parametrize(
    ("branch", "code", "ids"),
    [
        ("fix/12345-relu-grad", 0, []),
        ("docs/12345", 0, []),
        ("fix/relu-grad", 0, ["CK202"]),  # a warning: printed, never fails
        ("my-feature", 0, ["CK201", "CK202"]),  # warnings too, in the default profile
        ("viable/strict", 0, ["CK203"]),
        ("gh/alice/12/head", 0, []),  # ghstack names its branches: nothing to check
    ],
)
def test_branch_names(
    capsys: pytest.CaptureFixture[str], fork_repo: Path, branch: str, code: int, ids: list[str]
) -> None:
    git("switch", "-q", "-c", branch, cwd=fork_repo)
    got, out = run(capsys, branch_name.main)
    assert (got, rule_ids(out)) == (code, ids)
    if "CK202" in ids:
        assert "warning CK202 branch-no-issue" in out and f"{len(ids)} warning" in out
    if branch.startswith("gh/"):
        assert "is a ghstack branch: ghstack opens one PR per commit" in out


def test_branch_pattern_is_configurable(
    capsys: pytest.CaptureFixture[str], fork_repo: Path
) -> None:
    (fork_repo / ".contribkit.toml").write_text('[hooks]\nbranch_pattern = "^me/"\n')
    assert run(capsys, branch_name.main, "--branch", "me/12345-x") == (0, "")
    (fork_repo / ".contribkit.toml").write_text('[hooks]\nbranch_pattern = "^(me/"\n')
    code, out = run(capsys, branch_name.main, "--branch", "me/12345-x")
    assert code == 2 and "hooks.branch_pattern is not a valid regular expression" in out


def test_detached_head_is_not_checked(capsys: pytest.CaptureFixture[str], fork_repo: Path) -> None:
    git("checkout", "-q", "--detach", cwd=fork_repo)
    assert run(capsys, branch_name.main) == (0, "")


# --- contribkit-tests-required ------------------------------------------------------------------


@pytest.fixture
def topic_branch(fork_repo: Path) -> Path:
    git("switch", "-q", "-c", "fix/12345-relu", cwd=fork_repo)
    return fork_repo


def test_source_change_without_test_is_refused(
    capsys: pytest.CaptureFixture[str], topic_branch: Path
) -> None:
    commit_files(
        topic_branch, {"torch/nn/functional.py": "def relu(x):\n    return max(x, 0)\n"}, "Fix relu"
    )
    code, out = run(capsys, tests_required.main, "--from-ref", "main")
    assert code == 1 and rule_ids(out) == ["CK601"]
    assert "1 source file(s) changed (torch/nn/functional.py) but no test under test/**" in out
    assert "contribkit test --from-repro" in out and "'Test Plan:'" in out


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"torch/nn/functional.py": "x = 1\n", "test/test_nn.py": "# more\n"}, "Fix relu"),
        ({"torch/nn/functional.py": "x = 1\n"}, "Fix relu\n\nTest Plan: covered by test_nn.py"),
        ({"torch/nn/functional.py": "x = 1\n"}, "Fix relu\n\nTest-Plan: no behaviour change"),
        ({"docs/source/index.rst": "Docs\n"}, "Fix the docs"),
    ],
)
def test_accepted_changes(
    capsys: pytest.CaptureFixture[str], topic_branch: Path, files: dict[str, str], message: str
) -> None:
    commit_files(topic_branch, files, message)
    assert run(capsys, tests_required.main, "--from-ref", "main") == (0, "")


def test_range_from_pre_commit_and_from_upstream(
    capsys: pytest.CaptureFixture[str], topic_branch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = git("rev-parse", "HEAD", cwd=topic_branch)
    git("branch", "-q", "-m", "main", "old-main", cwd=topic_branch)  # no base branch anywhere
    commit_files(
        topic_branch, {"aten/src/ATen/native/Activation.cpp": "// fixed\n"}, "Fix relu kernel"
    )
    # no base known: the hook cannot judge, and says so
    code, out = run(capsys, tests_required.main)
    assert code == 0 and "no upstream base to compare with; skipped" in out
    # the merge-base with upstream/main
    git("update-ref", "refs/remotes/upstream/main", base, cwd=topic_branch)
    assert rule_ids(run(capsys, tests_required.main)[1]) == ["CK601"]
    # pre-commit's range is only part of the branch: the whole branch is judged
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", git("rev-parse", "HEAD", cwd=topic_branch))
    monkeypatch.setenv("PRE_COMMIT_TO_REF", git("rev-parse", "HEAD", cwd=topic_branch))
    assert rule_ids(run(capsys, tests_required.main)[1]) == ["CK601"]


def test_a_fix_pushed_after_its_tests_passes(
    capsys: pytest.CaptureFixture[str], topic_branch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit_files(topic_branch, {"test/test_nn.py": "# a test for relu\n"}, "Add a test for relu")
    pushed_before = git("rev-parse", "HEAD", cwd=topic_branch)
    commit_files(topic_branch, {"torch/nn/functional.py": "x = 1\n"}, "Fix relu")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", pushed_before)  # this push: the fix alone
    monkeypatch.setenv("PRE_COMMIT_TO_REF", git("rev-parse", "HEAD", cwd=topic_branch))
    assert run(capsys, tests_required.main) == (0, "")


def test_source_and_test_globs_are_configurable(
    capsys: pytest.CaptureFixture[str], topic_branch: Path
) -> None:
    (topic_branch / ".contribkit.toml").write_text(
        '[hooks]\nsource_globs = ["docs/**"]\ntest_globs = ["docs/tests/**"]\n'
    )
    commit_files(topic_branch, {"docs/source/index.rst": "Docs\n"}, "Reword the docs")
    code, out = run(capsys, tests_required.main, "--from-ref", "main")
    assert code == 1 and "no test under docs/tests/**" in out


# --- contribkit-pr-scope -------------------------------------------------------------------------


def test_pr_scope_warns_but_never_fails(
    capsys: pytest.CaptureFixture[str], topic_branch: Path
) -> None:
    commit_files(topic_branch, {"torch/a.py": "x = 1\n", "test/test_a.py": "y = 2\n"}, "Fix a")
    assert run(capsys, pr_scope.main, "--from-ref", "main") == (0, "")
    big = "\n".join(f"line {i}" for i in range(600)) + "\n"
    commit_files(
        topic_branch,
        {"aten/a.cpp": big, "c10/a.h": "z\n", "docs/a.rst": "d\n", "tools/a.py": "t\n"},
        "Touch everything",
    )
    code, out = run(capsys, pr_scope.main, "--from-ref", "main")
    assert code == 0 and rule_ids(out) == ["CK701", "CK702"]
    assert "touches 6 areas (aten, c10, docs, test, tools, torch), more than 4" in out
    assert "changes 605 lines in 6 files, more than 500" in out
    assert "2 warnings." in out
    (topic_branch / ".contribkit.toml").write_text(
        "[hooks]\nmax_areas = 6\nmax_changed_lines = 1000\n"
    )
    assert run(capsys, pr_scope.main, "--from-ref", "main") == (0, "")


# --- contribkit-lintrunner -----------------------------------------------------------------------

FAKE_LINTRUNNER = """#!/bin/sh
# A stand-in for lintrunner: reports a problem in any file that contains BAD.
status=0
for f in "$@"; do
  if grep -q BAD "$f"; then echo "  Error (FLAKE8) $f:1: BAD found"; status=1; fi
done
exit $status
"""


@pytest.fixture
def lint_env(fork_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH with git but no lintrunner, and a private lintrunner data dir."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git_exe = shutil.which("git")
    assert git_exe
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{Path(git_exe).parent}")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return bin_dir


def test_lintrunner_does_nothing_without_lintrunner_toml(
    capsys: pytest.CaptureFixture[str], lint_env: Path
) -> None:
    assert run(capsys, lintrunner.main, "torch/nn/functional.py") == (0, "")


def test_lintrunner_missing_uninitialised_failing_and_passing(
    capsys: pytest.CaptureFixture[str], fork_repo: Path, lint_env: Path, tmp_path: Path
) -> None:
    (fork_repo / ".lintrunner.toml").write_text("[[linter]]\ncode = 'FLAKE8'\n")
    code, out = run(capsys, lintrunner.main, "torch/nn/functional.py")
    assert code == 1 and rule_ids(out) == ["CK801"]
    assert "pip install lintrunner && lintrunner init" in out

    script = lint_env / "lintrunner"
    script.write_text(FAKE_LINTRUNNER)
    script.chmod(0o755)
    code, out = run(capsys, lintrunner.main, "torch/nn/functional.py")
    assert code == 1 and rule_ids(out) == ["CK802"]
    assert "`lintrunner init` was never run" in out

    saved = tmp_path / "data" / "lintrunner" / "0123abcd"
    saved.mkdir(parents=True)
    shutil.copy(fork_repo / ".lintrunner.toml", saved / ".lintrunner.toml")
    assert run(capsys, lintrunner.main, "torch/nn/functional.py") == (0, "")

    (fork_repo / "torch" / "bad.py").write_text("BAD = 1\n")
    code, out = run(capsys, lintrunner.main, "torch/nn/functional.py", "torch/bad.py")
    assert code == 1 and rule_ids(out) == ["CK803"]
    assert "Error (FLAKE8) torch/bad.py:1: BAD found" in out  # lintrunner's own output is shown
    assert "lintrunner -a" in out

    (fork_repo / ".lintrunner.toml").write_text("[[linter]]\ncode = 'RUFF'\n")
    code, out = run(capsys, lintrunner.main, "torch/nn/functional.py")
    assert rule_ids(out) == ["CK802"] and "changed since `lintrunner init`" in out


# --- contribkit-branch-name: unfinished commits block the push, not the commit ----------------


def test_wip_and_fixup_commits_block_the_push_not_the_commit(
    capsys: pytest.CaptureFixture[str], fork_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git("switch", "-q", "-c", "fix/12345-relu", cwd=fork_repo)
    commit_files(fork_repo, {"torch/nn/functional.py": "x = 1\n"}, "WIP: relu")
    commit_files(fork_repo, {"torch/nn/functional.py": "x = 2\n"}, "fixup! WIP: relu")
    assert run(capsys, branch_name.main) == (0, "")  # at commit time: not this hook's business
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", "main")  # as pre-commit's pre-push stage sets them
    monkeypatch.setenv("PRE_COMMIT_TO_REF", "HEAD")
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/fix/12345-relu")
    code, out = run(capsys, branch_name.main)
    assert code == 1 and rule_ids(out) == ["CK204", "CK204"]
    assert re.search(r"^error CK204 wip-pushed: [0-9a-f]{7,} is a fixup commit", out, re.M)
    assert re.search(r"^error CK204 wip-pushed: [0-9a-f]{7,} is work in progress", out, re.M)
    assert "git rebase -i --autosquash" in out
    # squashed and reworded: the push goes through
    git("reset", "-q", "--soft", "main", cwd=fork_repo)
    git("commit", "-q", "-m", "[nn] Fix relu", cwd=fork_repo)
    assert run(capsys, branch_name.main) == (0, "")
    # --from-ref outside pre-commit does the same; a protected branch (syncing a fork) is not checked
    monkeypatch.delenv("PRE_COMMIT_FROM_REF")
    commit_files(fork_repo, {"torch/x.py": "y = 1\n"}, "[WIP] more")
    assert rule_ids(run(capsys, branch_name.main, "--from-ref", "main")[1]) == ["CK204"]
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", "main")
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/main")
    assert run(capsys, branch_name.main) == (0, "")
