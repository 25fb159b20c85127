"""The pre-commit-stage checks judge what is being committed, not the work tree: real commits in a
real fork, through the hooks ``contribkit init`` installs (native engine, and pre-commit's and
prek's, which set unstaged changes aside themselves)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import RunCli, git

CLEAN = "def relu(x):\n    return max(x, 0)\n"
LEFTOVER = "def relu(x):\n    breakpoint()\n    return max(x, 0)\n"
ENGINES = ["native", "pre-commit"] + (["prek"] if shutil.which("prek") else [])


@pytest.fixture(autouse=True)
def private_pre_commit_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))


def init(run_cli: RunCli, fork: Path, *options: str) -> Path:
    proc = run_cli("init", *options, cwd=fork)
    assert proc.returncode == 0, proc.stderr
    git("switch", "-q", "-c", "fix/12345-relu", cwd=fork)
    return fork


def commit(fork: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "commit", "-m", "[nn] Fix relu", "-m", "Fixes #12345"],
        cwd=fork,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def staged(fork: Path, rel: str) -> str:
    return git("show", f":{rel}", cwd=fork)


def committed(fork: Path, rel: str) -> str:
    return git("show", f"HEAD:{rel}", cwd=fork)


def patches_left(fork: Path) -> list[str]:
    folder = fork / ".git" / "contribkit"
    return sorted(p.name for p in folder.glob("*.patch")) if folder.is_dir() else []


@pytest.mark.parametrize("engine", ENGINES)
def test_the_staged_content_decides_not_the_work_tree(
    run_cli: RunCli, fork_repo: Path, engine: str
) -> None:
    fork = init(run_cli, fork_repo, "--engine", engine)
    target = fork / "torch" / "nn" / "functional.py"
    rel = "torch/nn/functional.py"
    # staged clean, a leftover in the work tree only: the commit goes through, the edit stays
    target.write_text(CLEAN)
    git("add", rel, cwd=fork)
    target.write_text(LEFTOVER)
    proc = commit(fork)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "CK301" not in out
    assert committed(fork, rel) + "\n" == CLEAN
    assert target.read_text() == LEFTOVER
    assert git("diff", "--name-only", cwd=fork) == rel
    # the reverse: a leftover staged, the work tree clean: refused, and nothing changes
    git("add", rel, cwd=fork)
    target.write_text(CLEAN + "\n")
    head = git("rev-parse", "HEAD", cwd=fork)
    proc = commit(fork)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "torch/nn/functional.py:2: error CK301" in out
    assert git("rev-parse", "HEAD", cwd=fork) == head
    assert staged(fork, rel) + "\n" == LEFTOVER
    assert target.read_text() == CLEAN + "\n"
    # a staged file deleted from the work tree (not staged as deleted) is still checked
    target.unlink()
    proc = commit(fork)
    assert proc.returncode == 1 and "CK301" in proc.stdout + proc.stderr
    assert not target.exists() and staged(fork, rel) + "\n" == LEFTOVER
    assert patches_left(fork) == []


def test_partially_staged_files_are_checked_as_staged(run_cli: RunCli, fork_repo: Path) -> None:
    fork = init(run_cli, fork_repo)
    rel = "torch/nn/activation.py"
    path = fork / rel
    body = [f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(12)]
    path.write_text("".join(body))
    git("add", rel, cwd=fork)
    git("commit", "-q", "--no-verify", "-m", "[nn] Add activations", cwd=fork)
    edited = [*body]
    edited[0] = "def f0(x):\n    return x + 100\n\n\n"  # first hunk: fine
    edited[11] = "def f11(x):\n    import pdb\n    return x\n"  # last hunk: a leftover
    path.write_text("".join(edited))
    # git add -p: stage the first hunk only
    subprocess.run(
        ["git", "add", "-p", rel], cwd=fork, input="y\nn\n", text=True, check=True,
        capture_output=True,
    )  # fmt: skip
    assert "import pdb" not in staged(fork, rel)
    proc = commit(fork)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "x + 100" in committed(fork, rel) and "pdb" not in committed(fork, rel)
    assert path.read_text() == "".join(edited)
    # now stage only the leftover's hunk, with a fine edit left unstaged
    edited[0] = "def f0(x):\n    return x + 200\n\n\n"
    path.write_text("".join(edited))
    subprocess.run(
        ["git", "add", "-p", rel], cwd=fork, input="n\ny\n", text=True, check=True,
        capture_output=True,
    )  # fmt: skip
    proc = commit(fork)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "torch/nn/activation.py:46: error CK302" in proc.stdout + proc.stderr
    assert path.read_text() == "".join(edited)
    assert "x + 100" in staged(fork, rel) and "import pdb" in staged(fork, rel)


def test_untracked_intent_to_add_binary_and_renamed_files(run_cli: RunCli, fork_repo: Path) -> None:
    fork = init(run_cli, fork_repo)
    (fork / ".contribkit.toml").write_text("[hooks]\nmax_file_kb = 1\n")
    # untracked: not committed, not checked, left alone
    (fork / "torch" / "scratch.py").write_text(LEFTOVER)
    # intent to add (git add -N): not committed either, and still intended afterwards
    (fork / "torch" / "later.py").write_text(LEFTOVER)
    git("add", "-N", "torch/later.py", cwd=fork)
    # binary: a small file staged, a large one in the work tree
    small, large = bytes(range(256)) * 2, b"\0\xff" * 4096
    (fork / "torch" / "weights.bin").write_bytes(small)
    git("add", "torch/weights.bin", cwd=fork)
    (fork / "torch" / "weights.bin").write_bytes(large)
    # renamed: staged as a rename, a leftover added to it afterwards
    git("mv", "torch/nn/functional.py", "torch/nn/functions.py", cwd=fork)
    renamed = fork / "torch" / "nn" / "functions.py"
    renamed.write_text(renamed.read_text() + "\nimport pdb\n")
    proc = commit(fork)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "CK30" not in out and "CK402" not in out
    files = git("show", "--name-status", "--format=", "-M", "HEAD", cwd=fork).splitlines()
    assert sorted(line.split("\t")[0][:1] for line in files) == ["A", "R"]
    assert git("cat-file", "-s", "HEAD:torch/weights.bin", cwd=fork) == str(len(small))
    assert (fork / "torch" / "weights.bin").read_bytes() == large
    assert (fork / "torch" / "scratch.py").read_text() == LEFTOVER
    assert (fork / "torch" / "later.py").read_text() == LEFTOVER
    assert "torch/later.py" in git("ls-files", cwd=fork).splitlines()  # still intent-to-add
    assert git("diff", "--cached", "--name-only", cwd=fork) == ""
    assert renamed.read_text().endswith("\nimport pdb\n")
    assert patches_left(fork) == []
    # the reverse for a binary file: a large one staged is refused, though small in the tree
    git("add", "torch/weights.bin", cwd=fork)
    (fork / "torch" / "weights.bin").write_bytes(small)
    proc = commit(fork)
    assert proc.returncode == 1 and "torch/weights.bin: error CK402" in proc.stdout + proc.stderr
    assert (fork / "torch" / "weights.bin").read_bytes() == small


def stage_clean_then_edit(fork: Path) -> Path:
    """torch/nn/functional.py staged clean, with an unstaged edit of yours on top."""
    target = fork / "torch" / "nn" / "functional.py"
    target.write_text(CLEAN)
    git("add", "torch/nn/functional.py", cwd=fork)
    target.write_text(CLEAN + "# mine, unstaged\n")
    return target


def lintrunner_that(fork: Path, tmp_path: Path, script: str) -> dict[str, str]:
    """A committed .lintrunner.toml, a saved `lintrunner init`, and a fake lintrunner running
    ``script`` (sh): the environment that finds it."""
    (fork / ".lintrunner.toml").write_text("[[linter]]\ncode = 'FLAKE8'\n")
    git("add", ".lintrunner.toml", cwd=fork)
    git("commit", "-q", "--no-verify", "-m", "Add lintrunner config", cwd=fork)
    saved = tmp_path / "data" / "lintrunner" / "0123abcd"
    saved.mkdir(parents=True)
    (saved / ".lintrunner.toml").write_text((fork / ".lintrunner.toml").read_text())
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "lintrunner").write_text(f"#!/bin/sh\n{script}\n")
    (bin_dir / "lintrunner").chmod(0o755)
    return {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }


def test_edits_made_by_the_checks_give_way_to_yours(
    run_cli: RunCli, fork_repo: Path, tmp_path: Path
) -> None:
    fork = init(run_cli, fork_repo, "--lintrunner")
    env = lintrunner_that(fork, tmp_path, 'echo "# reformatted" > "$1"; exit 0')
    target = stage_clean_then_edit(fork)
    proc = commit(fork, env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "the checks changed files that have unstaged changes" in out
    assert out.rstrip().endswith("contribkit: unstaged changes put back")
    assert target.read_text() == CLEAN + "# mine, unstaged\n"
    assert committed(fork, "torch/nn/functional.py") + "\n" == CLEAN
    assert patches_left(fork) == []


def test_changes_that_cannot_be_put_back_are_kept_and_named(
    run_cli: RunCli, fork_repo: Path, tmp_path: Path
) -> None:
    fork = init(run_cli, fork_repo, "--lintrunner")
    # a check that stages something else: the unstaged change no longer applies
    env = lintrunner_that(fork, tmp_path, 'echo "other" > "$1"; git add "$1"; exit 0')
    stage_clean_then_edit(fork)
    head = git("rev-parse", "HEAD", cwd=fork)
    proc = commit(fork, env)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert git("rev-parse", "HEAD", cwd=fork) == head  # refused: your changes need you first
    [name] = patches_left(fork)
    patch = fork / ".git" / "contribkit" / name
    assert "+# mine, unstaged" in patch.read_text()
    assert (
        f"could not put back your unstaged changes; they are kept in .git/contribkit/{name}" in out
    )
    assert f"git apply --reject .git/contribkit/{name}" in out


@pytest.mark.parametrize("signal_name", ["INT", "TERM", "HUP"])
def test_an_interrupted_check_puts_the_changes_back(
    run_cli: RunCli, fork_repo: Path, tmp_path: Path, signal_name: str
) -> None:
    """Ctrl-C (or a kill) while the checks run: the stage runner gets the signal, here sent by
    the check itself so that nothing depends on timing."""
    fork = init(run_cli, fork_repo, "--lintrunner")
    env = lintrunner_that(fork, tmp_path, f"kill -{signal_name} $PPID; exit 0")
    target = fork / "torch" / "nn" / "functional.py"
    target.write_text(CLEAN)
    git("add", "torch/nn/functional.py", cwd=fork)
    target.write_text(LEFTOVER)
    head = git("rev-parse", "HEAD", cwd=fork)
    proc = commit(fork, env)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert git("rev-parse", "HEAD", cwd=fork) == head
    assert target.read_text() == LEFTOVER
    assert staged(fork, "torch/nn/functional.py") + "\n" == CLEAN
    assert patches_left(fork) == []
    assert "Traceback" not in out


def test_a_commit_of_named_paths_checks_what_it_commits(run_cli: RunCli, fork_repo: Path) -> None:
    """``git commit PATH``: git commits PATH as in the work tree, from an index of its own."""
    fork = init(run_cli, fork_repo)
    other = fork / "torch" / "other.py"
    other.write_text(LEFTOVER)
    git("add", "torch/other.py", cwd=fork)
    other.write_text(CLEAN)
    (fork / "torch" / "nn" / "functional.py").write_text(CLEAN)
    proc = subprocess.run(
        ["git", "commit", "-m", "[nn] Fix relu", "-m", "Fixes #12345", "torch/nn/functional.py"],
        cwd=fork, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git("show", "--name-only", "--format=", "HEAD", cwd=fork) == "torch/nn/functional.py"
    assert staged(fork, "torch/other.py") + "\n" == LEFTOVER  # still staged, not committed
    assert other.read_text() == CLEAN
    proc = subprocess.run(
        ["git", "commit", "-m", "[nn] Fix relu", "torch/other.py"],
        cwd=fork, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the work tree's clean copy
    assert committed(fork, "torch/other.py") + "\n" == CLEAN
    assert patches_left(fork) == []


def test_nothing_is_set_aside_when_nothing_is_unstaged(run_cli: RunCli, fork_repo: Path) -> None:
    fork = init(run_cli, fork_repo)
    (fork / "torch" / "nn" / "functional.py").write_text(CLEAN)
    (fork / "torch" / "untracked.py").write_text(LEFTOVER)
    git("add", "torch/nn/functional.py", cwd=fork)
    proc = commit(fork)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "set aside" not in proc.stdout + proc.stderr
    assert not (fork / ".git" / "contribkit").exists() or patches_left(fork) == []


def test_files_git_is_told_not_to_look_at_keep_their_edits(
    run_cli: RunCli, fork_repo: Path
) -> None:
    """Local edits in files marked --assume-unchanged or --skip-worktree are in no patch, so
    setting the unstaged changes aside must not check them out."""
    fork = init(run_cli, fork_repo)
    hidden = {"torch/_dynamo/eval_frame.py": "--assume-unchanged", "c10/core/Device.h": ""}
    hidden["c10/core/Device.h"] = "--skip-worktree"
    for rel, flag in hidden.items():
        git("update-index", flag, rel, cwd=fork)
        (fork / rel).write_text(f"# a local edit git is told to ignore ({flag})\n")
    target = fork / "torch" / "nn" / "functional.py"
    target.write_text(CLEAN)
    git("add", "torch/nn/functional.py", cwd=fork)
    target.write_text(LEFTOVER)
    proc = commit(fork)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "set aside" in out and "CK301" not in out
    for rel, flag in hidden.items():
        assert (fork / rel).read_text() == f"# a local edit git is told to ignore ({flag})\n"
    assert target.read_text() == LEFTOVER
    assert committed(fork, "torch/nn/functional.py") + "\n" == CLEAN
    assert patches_left(fork) == []


def test_a_checks_edits_elsewhere_survive_putting_your_changes_back(
    run_cli: RunCli, fork_repo: Path, tmp_path: Path
) -> None:
    """A check rewrites the file you have unstaged changes in (so the patch must be applied again
    over the staged version) and also edits another file: only the first gives way."""
    fork = init(run_cli, fork_repo, "--lintrunner")
    env = lintrunner_that(
        fork,
        tmp_path,
        'echo "# reformatted" > "$1"; echo "# the check\'s edit" >> torch/_dynamo/eval_frame.py',
    )
    target = stage_clean_then_edit(fork)
    proc = commit(fork, env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "the checks changed files that have unstaged changes" in out
    assert out.rstrip().endswith("contribkit: unstaged changes put back")
    assert target.read_text() == CLEAN + "# mine, unstaged\n"
    other = (fork / "torch" / "_dynamo" / "eval_frame.py").read_text()
    assert other == "def optimize():\n    return None\n# the check's edit\n"
    assert patches_left(fork) == []


def test_file_names_that_look_like_patterns_are_taken_literally(
    run_cli: RunCli, fork_repo: Path
) -> None:
    """As a pathspec, ``a[1].py`` also matches ``a1.py``: names are taken as they are."""
    fork = init(run_cli, fork_repo)
    body = "def f():\n    return 1\n"
    for rel in ("torch/a[1].py", "torch/a1.py", "torch/*.py"):
        (fork / rel).write_text(body)
    git("add", "torch", cwd=fork)
    git("commit", "-q", "--no-verify", "-m", "[nn] Add files", cwd=fork)
    # a[1].py and *.py: staged, with unstaged edits (in the patch); a1.py: an edit git ignores
    for rel in ("torch/a[1].py", "torch/*.py"):
        (fork / rel).write_text(body + "\n\ndef g():\n    return 2\n")
        git("--literal-pathspecs", "add", rel, cwd=fork)
        (fork / rel).write_text(body + "\n\ndef g():\n    return 3\n")
    git("update-index", "--assume-unchanged", "torch/a1.py", cwd=fork)
    (fork / "torch" / "a1.py").write_text(body + "# local\n")
    # functiona[l].py: intent to add, beside the staged file its pattern matches
    (fork / "torch" / "nn" / "functiona[l].py").write_text(body)
    git("--literal-pathspecs", "add", "-N", "torch/nn/functiona[l].py", cwd=fork)
    (fork / "torch" / "nn" / "functional.py").write_text(CLEAN)
    git("add", "torch/nn/functional.py", cwd=fork)
    proc = commit(fork)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "set aside" in out
    shown = git("show", "--name-status", "--format=", "HEAD", cwd=fork).splitlines()
    assert sorted(shown) == ["M\ttorch/*.py", "M\ttorch/a[1].py", "M\ttorch/nn/functional.py"]
    assert committed(fork, "torch/nn/functional.py") + "\n" == CLEAN
    for rel in ("torch/a[1].py", "torch/*.py"):
        assert committed(fork, rel).endswith("return 2")
        assert (fork / rel).read_text() == body + "\n\ndef g():\n    return 3\n"
    assert (fork / "torch" / "a1.py").read_text() == body + "# local\n"
    assert (fork / "torch" / "nn" / "functiona[l].py").read_text() == body
    assert "torch/nn/functiona[l].py" in git("ls-files", cwd=fork).splitlines()  # still -N
    assert git("diff", "--cached", "--name-only", cwd=fork) == ""
    assert patches_left(fork) == []


def test_a_patch_an_earlier_run_left_behind_is_named(run_cli: RunCli, fork_repo: Path) -> None:
    fork = init(run_cli, fork_repo)
    folder = fork / ".git" / "contribkit"
    folder.mkdir(parents=True, exist_ok=True)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    left = folder / f"unstaged-1700000000-{int(dead.stdout)}.patch"
    left.write_text("diff --git a/x b/x\n")
    (folder / f"unstaged-1700000000-{os.getpid()}.patch").write_text("")  # a live process's
    (fork / "torch" / "nn" / "functional.py").write_text(CLEAN)
    git("add", "torch/nn/functional.py", cwd=fork)
    proc = commit(fork)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert f"an earlier run left unstaged changes in .git/contribkit/{left.name}" in out
    assert out.count("an earlier run left") == 1
    assert left.exists()  # named, never deleted: it holds someone's work
