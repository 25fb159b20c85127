"""gitcmd.root_and_branch: reading .git/HEAD gives exactly what git says, or defers to git; edits
of .git/info/exclude are locked, atomic and keep bytes they do not understand."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contribkit.core.errors import CheckFailed
from contribkit.git import cmd as gitcmd
from tests.conftest import Ck, git


def git_answer(cwd: Path) -> tuple[str, str | None]:
    top = git("rev-parse", "--show-toplevel", cwd=cwd)
    return top, gitcmd.current_branch(Path(top))


def test_main_work_tree_branch_detached_and_unborn(fork_repo: Path, tmp_path: Path) -> None:
    assert gitcmd.root_and_branch(fork_repo) == git_answer(fork_repo) == (str(fork_repo), "main")
    assert gitcmd._head_from_files(str(fork_repo)) == (str(fork_repo), "main")
    git("checkout", "-q", "--detach", cwd=fork_repo)
    assert gitcmd.root_and_branch(fork_repo) == (str(fork_repo), None)
    fresh = tmp_path / "fresh"
    git("init", "-q", "-b", "fix/1-x", str(fresh), cwd=tmp_path)
    assert gitcmd.root_and_branch(fresh) == git_answer(fresh) == (str(fresh), "fix/1-x")


def test_git_is_asked_where_the_files_do_not_say(
    fork_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = fork_repo / "torch"
    assert gitcmd._head_from_files(str(sub)) is None
    assert gitcmd.root_and_branch(sub) == (str(fork_repo), "main")
    linked = tmp_path / "linked"
    git("worktree", "add", "-q", "-b", "fix/2-y", str(linked), cwd=fork_repo)
    assert gitcmd._head_from_files(str(linked)) is None  # .git is a file there
    assert gitcmd.root_and_branch(linked) == (str(linked), "fix/2-y")
    monkeypatch.setenv("GIT_DIR", str(fork_repo / ".git"))
    assert gitcmd._head_from_files(str(fork_repo)) is None
    monkeypatch.delenv("GIT_DIR")
    outside = tmp_path / "outside"
    outside.mkdir()
    assert gitcmd.root_and_branch(outside) == (None, None)


@pytest.mark.parametrize(
    "before",
    [
        "# git ls-files --others --exclude-from=.git/info/exclude\n# *~\n",
        "# *~\n\n",  # ends with a blank line: no separator is added
        "",
        "tl_out/\n",  # a pattern of contribkit's that was already there stays
    ],
)
def test_excludes_added_are_removed_exactly(fork_repo: Path, before: str) -> None:
    exclude = fork_repo / ".git" / "info" / "exclude"
    exclude.write_text(before)
    added = gitcmd.ensure_excluded(fork_repo)
    assert "tl_out/" not in added or "tl_out/" not in before
    assert gitcmd.ensure_excluded(fork_repo) == []  # nothing missing now
    assert gitcmd.remove_excluded(fork_repo, added) == (
        [a for a in added if a and a != gitcmd.EXCLUDE_HEADER],
        [],
    )
    assert exclude.read_text() == before


def test_kept_excludes_keep_their_header(fork_repo: Path) -> None:
    exclude = fork_repo / ".git" / "info" / "exclude"
    exclude.write_text("# *~\n")
    added = gitcmd.ensure_excluded(fork_repo, ("/repros/", "tl_out/"))
    assert added == ["", gitcmd.EXCLUDE_HEADER, "/repros/", "tl_out/"]
    removed, left = gitcmd.remove_excluded(fork_repo, added, keep=["/repros/"])
    assert removed == ["tl_out/"] and left == ["", gitcmd.EXCLUDE_HEADER, "/repros/"]
    assert exclude.read_text() == f"# *~\n\n{gitcmd.EXCLUDE_HEADER}\n/repros/\n"
    assert gitcmd.remove_excluded(fork_repo, left) == (["/repros/"], [])
    assert exclude.read_text() == "# *~\n"


# -- locked, atomic edits ---------------------------------------------------------------------
WORKER = """
import sys
from pathlib import Path
from contribkit.git import cmd
root, name, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for i in range(count):
    added = cmd.ensure_excluded(root, (f"/{name}-{i}/", f"/{name}-tmp-{i}/"))
    cmd.remove_excluded(root, added, keep=[f"/{name}-{i}/"])
"""


def test_concurrent_edits_never_lose_a_line(fork_repo: Path) -> None:
    """Eight processes add and remove lines at once: the user's lines and every line a worker
    kept are all there at the end, and no lock is left behind."""
    exclude = fork_repo / ".git" / "info" / "exclude"
    user = [f"user-line-{i}" for i in range(20)]
    exclude.write_text("\n".join(user) + "\n")
    workers, rounds = 8, 12
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(fork_repo), f"w{n}", str(rounds)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(workers)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    lines = exclude.read_text().splitlines()
    assert lines[: len(user)] == user
    kept = {f"/w{n}-{i}/" for n in range(workers) for i in range(rounds)}
    assert kept <= set(lines)
    assert not any("-tmp-" in line for line in lines)
    assert not (exclude.parent / "exclude.lock").exists()


def test_a_non_utf8_exclude_file_is_kept_byte_for_byte(fork_repo: Path) -> None:
    exclude = fork_repo / ".git" / "info" / "exclude"
    before = b"caf\xe9/\n# \x0c form feed kept\n\xff\xfe odd\n"
    exclude.write_bytes(before)
    assert gitcmd.missing_excludes(fork_repo, ("/repros/",)) == ["/repros/"]
    added = gitcmd.ensure_excluded(fork_repo, ("/repros/",))
    assert exclude.read_bytes().startswith(before)
    assert gitcmd.missing_excludes(fork_repo, ("/repros/",)) == []
    gitcmd.remove_excluded(fork_repo, added)
    assert exclude.read_bytes() == before


def test_a_stale_lock_is_taken_over_and_a_live_one_waited_for(
    fork_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = fork_repo / ".git" / "info" / "exclude.lock"
    lock.write_text("left by a writer that died\n")
    old = time.time() - gitcmd.STALE_LOCK_S - 5
    os.utime(lock, (old, old))
    assert gitcmd.ensure_excluded(fork_repo, ("/a/",))[-1] == "/a/"
    assert not lock.exists()
    lock.write_text("held\n")  # fresh: someone is writing
    monkeypatch.setattr(gitcmd, "LOCK_WAIT_S", 0.2)
    with pytest.raises(CheckFailed, match=r"info/exclude is locked by another process") as info:
        gitcmd.ensure_excluded(fork_repo, ("/b/",))
    assert f"delete {lock}" in (info.value.hint or "")
    assert gitcmd.missing_excludes(fork_repo, ("/a/", "/b/")) == ["/b/"]


def test_run_init_and_debug_work_with_a_latin1_exclude(ck: Ck, fork_repo: Path) -> None:
    exclude = fork_repo / ".git" / "info" / "exclude"
    exclude.write_bytes(b"# r\xe9pertoire de travail\n")
    (fork_repo / "scratch.py").write_text("print('hi')\n")
    (fork_repo / "test_scratch.py").write_text("def test_ok():\n    assert True\n")
    for args in (
        ["init", "--dry-run"],
        ["debug", "--script", "scratch.py", "-o", "dbg.sh", "--preset", "trace"],
        ["run", "test_scratch.py", "--devices", "cpu"],
    ):
        proc = ck(*args)
        assert proc.returncode in (0, 1), (args, proc.stderr)
        assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    data = exclude.read_bytes()
    assert data.startswith(b"# r\xe9pertoire de travail\n")
    assert b"/dbg.*" in data and b"/.contribkit/" in data


def test_paths_are_literal_and_split_over_calls(
    fork_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git_on_paths: ``a[1].py`` names that file alone, and a long list takes several calls."""
    monkeypatch.setattr(gitcmd, "PATHS_PER_CALL", 40)
    names = [f"torch/file_{i:02}.py" for i in range(9)] + ["torch/a[1].py", "torch/*.py"]
    for name in [*names, "torch/a1.py", "torch/b.py"]:
        (fork_repo / name).write_text("committed\n")
    git("add", "torch", cwd=fork_repo)
    git("commit", "-q", "-m", "files", cwd=fork_repo)
    for name in [*names, "torch/a1.py", "torch/b.py"]:
        (fork_repo / name).write_text("edited\n")
    gitcmd.git_on_paths("checkout", paths=names)
    assert [(fork_repo / name).read_text() for name in names] == ["committed\n"] * len(names)
    assert (fork_repo / "torch" / "a1.py").read_text() == "edited\n"
    assert (fork_repo / "torch" / "b.py").read_text() == "edited\n"
    with pytest.raises(gitcmd.GitError):
        gitcmd.git_on_paths("checkout", paths=["torch/a?.py"])  # no such file: not a pattern


def test_a_missing_folder_is_not_called_a_missing_git(tmp_path: Path) -> None:
    with pytest.raises(gitcmd.GitError, match="no such folder"):
        gitcmd.git("status", cwd=tmp_path / "gone")
    (tmp_path / "file").write_text("")
    with pytest.raises(gitcmd.GitError, match="is not a folder"):
        gitcmd.git("status", cwd=tmp_path / "file")
