"""Git facts from real repositories: HEAD, dirty state, diff hash, merge-base, commits, files."""

from __future__ import annotations

from pathlib import Path

import pytest

from contribkit.core.errors import BadInput
from contribkit.git import facts as gitfacts
from tests.branchcases import BRANCH_ISSUES
from tests.conftest import git


def _commit(root: Path, message: str, **files: str) -> str:
    for rel, text in files.items():
        path = root / rel.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", message, cwd=root)
    return git("rev-parse", "HEAD", cwd=root)


def test_clean_tree_state(fork_repo: Path) -> None:
    state = gitfacts.tree_state(fork_repo)
    assert state.head == git("rev-parse", "HEAD", cwd=fork_repo)
    assert state.branch == "main" and not state.dirty and state.uncommitted == ()
    assert gitfacts.tree_state(fork_repo).diff_hash == state.diff_hash


def test_diff_hash_follows_content_not_time(fork_repo: Path) -> None:
    clean = gitfacts.tree_state(fork_repo)
    target = fork_repo / "torch/nn/functional.py"
    original = target.read_text()
    target.write_text(original + "# change\n")
    changed = gitfacts.tree_state(fork_repo)
    assert changed.dirty and changed.uncommitted == ("torch/nn/functional.py",)
    assert changed.diff_hash != clean.diff_hash
    assert gitfacts.tree_state(fork_repo).diff_hash == changed.diff_hash  # stable
    git("add", "-A", cwd=fork_repo)  # staging does not change what the tree holds
    assert gitfacts.tree_state(fork_repo).diff_hash == changed.diff_hash
    target.write_text(original)
    git("add", "-A", cwd=fork_repo)
    assert gitfacts.tree_state(fork_repo) == clean


def test_untracked_counts_and_ignored_does_not(fork_repo: Path) -> None:
    clean = gitfacts.tree_state(fork_repo)
    (fork_repo / ".git/info/exclude").write_text("/scratch/\n")
    (fork_repo / "scratch").mkdir()
    (fork_repo / "scratch/notes.txt").write_text("ignored\n")
    assert gitfacts.tree_state(fork_repo).diff_hash == clean.diff_hash
    (fork_repo / "test/test_new.py").write_text("def test_x():\n    pass\n")
    state = gitfacts.tree_state(fork_repo)
    assert state.dirty and state.uncommitted == ("test/test_new.py",)
    (fork_repo / "test/test_new.py").write_text("def test_y():\n    pass\n")
    assert gitfacts.tree_state(fork_repo).diff_hash != state.diff_hash


def test_deleted_file_is_dirty(fork_repo: Path) -> None:
    (fork_repo / "c10/core/Device.h").unlink()
    state = gitfacts.tree_state(fork_repo)
    assert state.dirty and state.uncommitted == ("c10/core/Device.h",)


def test_detached_head_has_no_branch(fork_repo: Path) -> None:
    git("checkout", "-q", "--detach", cwd=fork_repo)
    assert gitfacts.tree_state(fork_repo).branch is None


def test_empty_repository_is_bad_input(tmp_path: Path) -> None:
    git("init", "-q", cwd=tmp_path)
    with pytest.raises(BadInput, match="no commits"):
        gitfacts.tree_state(tmp_path)


def test_merge_base_prefers_upstream_and_notes_fallback(fork_repo: Path) -> None:
    base = git("rev-parse", "HEAD", cwd=fork_repo)
    git("switch", "-q", "-c", "fix/issue-170398-relu", cwd=fork_repo)
    _commit(
        fork_repo,
        "Fix relu\n\nLonger text.\n\nFixes #170398\nSigned-off-by: A <a@b.c>",
        **{"torch__nn__functional.py": "def relu(x):\n    return x.clamp(min=0)\n"},
    )
    fallback = gitfacts.find_merge_base(fork_repo)
    assert fallback is not None and fallback.sha == base and fallback.ref == "main"
    assert (
        fallback.note and "upstream/main" in fallback.note and "git fetch upstream" in fallback.note
    )
    git("update-ref", "refs/remotes/upstream/main", base, cwd=fork_repo)
    exact = gitfacts.find_merge_base(fork_repo)
    assert exact == gitfacts.MergeBase(base, "upstream/main", None)


def test_no_merge_base_at_all(fork_repo: Path) -> None:
    git("branch", "-q", "-m", "main", "trunk", cwd=fork_repo)
    assert gitfacts.find_merge_base(fork_repo) is None


def test_branch_facts_commits_and_changed_files(fork_repo: Path) -> None:
    git("switch", "-q", "-c", "fix/issue-170398-relu", cwd=fork_repo)
    first = _commit(
        fork_repo,
        "Fix relu for negative zero\n\nThe kernel ignored the sign.\n\nFixes #170398\n\n"
        "Co-authored-by: B <b@c.d>\nSigned-off-by: A <a@b.c>",
        **{"torch__nn__functional.py": "def relu(x):\n    return x.clamp(min=0)\n    # sign\n"},
    )
    second = _commit(
        fork_repo, "Add a test", **{"test__test_relu.py": "def test_relu():\n    pass\n"}
    )
    (fork_repo / "test/test_more.py").write_text("a\nb\n")
    facts = gitfacts.branch_facts(fork_repo)
    assert facts.issue_number == 170398 and facts.issue_origin == "branch fix/issue-170398-relu"
    assert [c.sha for c in facts.commits] == [second, first]
    fix = facts.commits[1]
    assert fix.subject == "Fix relu for negative zero"
    assert fix.body.startswith("The kernel ignored the sign.") and "Fixes #170398" in fix.body
    assert fix.trailers == (("Co-authored-by", "B <b@c.d>"), ("Signed-off-by", "A <a@b.c>"))
    assert facts.commits[0].trailers == ()
    assert [(f.path, f.status, f.added, f.deleted) for f in facts.changed_files] == [
        ("test/test_relu.py", "A", 2, 0),
        ("torch/nn/functional.py", "M", 2, 1),
    ]
    with_tree = gitfacts.branch_facts(fork_repo, include_worktree=True)
    assert ("test/test_more.py", "?", 2, 0) in [
        (f.path, f.status, f.added, f.deleted) for f in with_tree.changed_files
    ]


def test_trailers_beside_a_test_plan_line(fork_repo: Path) -> None:
    """git's %(trailers) refuses a last paragraph with PyTorch's "Test Plan:" in it (a key with a
    space); contribkit reads the paragraph itself."""
    _commit(
        fork_repo,
        "Fix relu\n\nThe kernel ignored the sign.\n\n"
        "Test Plan: python test/test_nn.py -k test_relu\n"
        "Co-authored-by: Claude <noreply@anthropic.com>\n"
        "Reviewed-by: A Person\n  <a@b.c>",
        a="1",
    )
    assert git("log", "-1", "--format=%(trailers:only)", cwd=fork_repo) == ""
    (commit,) = gitfacts.commits_between(fork_repo, "HEAD~1")
    assert commit.trailers == (
        ("Test Plan", "python test/test_nn.py -k test_relu"),
        ("Co-authored-by", "Claude <noreply@anthropic.com>"),
        ("Reviewed-by", "A Person <a@b.c>"),
    )
    assert commit.body.startswith("The kernel ignored the sign.\n\nTest Plan: ")


def test_the_issue_a_branch_is_for(fork_repo: Path) -> None:
    """``pr`` reads the branch with the hooks' parser: the shared table holds for both."""
    for branch, number in BRANCH_ISSUES:
        git("switch", "-q", *(["-c"] if branch != "main" else []), branch, cwd=fork_repo)
        facts = gitfacts.branch_facts(fork_repo)
        assert (branch, facts.issue_number) == (branch, number)
        assert facts.issue_origin == (f"branch {branch}" if number is not None else None)
        git("switch", "-q", "main", cwd=fork_repo)


def test_issue_number_from_the_commits_when_the_branch_has_none(fork_repo: Path) -> None:
    git("switch", "-q", "-c", "fix/relu-sign", cwd=fork_repo)
    _commit(fork_repo, "Fix relu, see #12 for context\n\nCloses pytorch/pytorch#4242", a="1")
    later = _commit(fork_repo, "Add a test\n\nFixes #99", b="2")
    facts = gitfacts.branch_facts(fork_repo)
    # a closing keyword wins over a mention; the oldest commit first
    assert facts.issue_number == 4242
    assert facts.issue_origin == f"commit {facts.commits[1].sha[:7]}"
    commits = [c for c in facts.commits if c.sha != later]
    assert gitfacts.issue_number_from_commits(commits) == (4242, f"commit {commits[0].sha[:7]}")
    mention = [gitfacts.Commit("c" * 40, "Port the fix of #12 (and &#39; is no issue)", "")]
    assert gitfacts.issue_number_from_commits(mention) == (12, "commit ccccccc")
    url = "Fixes https://github.com/pytorch/pytorch/issues/777."
    assert gitfacts.issue_number_from_commits([gitfacts.Commit("d" * 40, "Fix", url)]) == (
        777,
        "commit ddddddd",
    )
    assert gitfacts.issue_number_from_commits([]) is None


def test_added_lines_per_file(fork_repo: Path) -> None:
    base = git("rev-parse", "HEAD", cwd=fork_repo)
    _commit(
        fork_repo,
        "Add tests",
        **{
            "test__test_nn.py": '# Owner(s): ["module: nn"]\n\ndef test_relu_sign():\n    pass\n',
            "test__test_new.py": "def test_new():\n    pass\n",
        },
    )
    git("config", "diff.noprefix", "true", cwd=fork_repo)  # a user setting that must not matter
    added = gitfacts.added_lines(fork_repo, base, ["test/test_nn.py", "test/test_new.py"])
    assert added == {
        "test/test_nn.py": ["", "def test_relu_sign():", "    pass"],
        "test/test_new.py": ["def test_new():", "    pass"],
    }
    assert gitfacts.added_lines(fork_repo, base, []) == {}
