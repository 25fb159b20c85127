"""gitcmd.root_and_branch: reading .git/HEAD gives exactly what git says, or defers to git."""

from __future__ import annotations

from pathlib import Path

import pytest

from contribkit.git import cmd as gitcmd
from tests.conftest import git


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
