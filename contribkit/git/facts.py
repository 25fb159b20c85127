"""Facts about the branch under work: HEAD, branch, dirty state and a stable
hash of uncommitted changes, the merge-base with upstream, the commits and changed files since it
(and the lines each file gained), and the issue the branch is for (its name, else its commits).

Pure functions returning frozen dataclasses, shared by ``run`` (record and default paths),
``submit`` (the gate) and ``pr`` (the body). GitPython's object model answers what it models
well (the repository, HEAD, an unborn branch), imported inside the functions that need it; logs
and diffs go through the one git CLI wrapper (:mod:`contribkit.git.cmd`), whose base-branch
policy and ``--numstat`` reader the hooks share. :func:`tree_state`, on the hot path of every
``run``, is one plain ``git status``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from contribkit.conventions.branches import issue_from_branch
from contribkit.conventions.commitmsg import split_trailers
from contribkit.conventions.issuelinks import FIXES_RE
from contribkit.core.errors import BadInput
from contribkit.git.cmd import git as run_git

if TYPE_CHECKING:
    import git

# Field and record separators for `git log --format` (never in commit text).
_FS, _RS = "\x1f", "\x1e"
_LOG_FORMAT = f"%H{_FS}%s{_FS}%b{_RS}"
# GitHub's closing keywords, with "#N", "OWNER/NAME#N" or an issue URL after them.
_CLOSING_RE = FIXES_RE
_ISSUE_REF_RE = re.compile(r"(?<![\w/&])#(\d+)\b")


@dataclass(frozen=True)
class TreeState:
    """HEAD and what is uncommitted on top of it."""

    head: str
    branch: str | None  # None on a detached HEAD
    dirty: bool  # tracked changes, or untracked files that are not ignored
    diff_hash: str  # sha256 over uncommitted changes; equal for an unchanged tree
    uncommitted: tuple[str, ...]  # the paths that make the tree dirty, sorted

    @property
    def short_head(self) -> str:
        return self.head[:7]


@dataclass(frozen=True)
class MergeBase:
    sha: str
    ref: str  # what it was taken against, e.g. "upstream/main"
    note: str | None = None  # set when the configured upstream ref was missing


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    body: str  # the message after the subject, trailers included, as git stores it

    @property
    def trailers(self) -> tuple[tuple[str, str], ...]:
        """``("Signed-off-by", "A <a@b>")``, in order: read by :func:`split_trailers`, not git's
        ``%(trailers)``, which refuses a block with PyTorch's ``Test Plan:`` in it."""
        return split_trailers(self.body)[1]


@dataclass(frozen=True)
class ChangedFile:
    path: str  # relative to the repository root, with forward slashes
    status: str  # "A" added, "M" modified, "D" deleted, "T" type change, "?" untracked
    added: int | None  # lines; None for a binary file
    deleted: int | None


@dataclass(frozen=True)
class BranchFacts:
    state: TreeState
    merge_base: MergeBase | None
    base_ref: str  # what the merge-base was wanted with, e.g. "upstream/main"
    commits: tuple[Commit, ...]  # merge-base..HEAD, newest first
    changed_files: tuple[ChangedFile, ...]
    issue_number: int | None
    issue_origin: str | None = None  # where the number came from, e.g. "branch name"


def open_repo(root: Path) -> git.Repo:
    import git

    try:
        return git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise BadInput(f"{root} is not a git repository", hint="cd into your fork first") from exc


def _head_sha(root: Path) -> str:
    """HEAD's commit, from git itself: GitPython reads only SHA-1 object names, and would take a
    SHA-256 repository for one with no commits."""
    from contribkit.git.cmd import git as run_git

    sha = run_git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", cwd=root, check=False)
    if not sha:  # an unborn branch: no commit yet
        raise BadInput("the repository has no commits yet", hint="commit your work, then try again")
    return sha


def _hash_path(digest: hashlib._Hash, root: Path, rel: str) -> None:
    path = root / rel
    digest.update(rel.encode() + b"\0")
    if path.is_symlink():
        digest.update(b"link\0" + os.readlink(path).encode() + b"\0")
    elif path.is_dir():  # a submodule: its checked-out commit stands for its content
        digest.update(b"submodule\0" + run_git("rev-parse", "HEAD", cwd=path).encode() + b"\0")
    elif path.is_file():
        digest.update(b"file\0" + (b"x" if os.access(path, os.X_OK) else b"-") + b"\0")
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    else:
        digest.update(b"deleted\0")


def tree_state(root: Path) -> TreeState:
    """HEAD, branch, and a content hash of every uncommitted change (tracked or untracked).

    The hash reads the current bytes of each changed path, so it does not depend on the user's
    diff settings, and it is the same for the same tree whenever it is taken. This runs on every
    `run` and `submit`, so it is one plain `git status` (no GitPython import, no index lock).
    """
    from contribkit.git.cmd import GitError, git

    try:
        out = git(
            "--no-optional-locks",
            "status",
            "--porcelain=v2",
            "--branch",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules=none",
            cwd=root,
        )
    except GitError as exc:
        raise BadInput(f"git status failed in {root}: {exc}", hint="cd into your fork") from exc
    head, branch, paths = "", None, set()
    for entry in out.split("\0"):
        if entry.startswith("# branch.oid "):
            head = entry.split(" ", 2)[2]
        elif entry.startswith("# branch.head "):
            name = entry.split(" ", 2)[2]
            branch = None if name == "(detached)" else name
        elif entry.startswith("1 "):  # changed: XY sub mH mI mW hH hI path
            paths.add(entry.split(" ", 8)[8])
        elif entry.startswith("u "):  # unmerged: XY sub m1 m2 m3 mW h1 h2 h3 path
            paths.add(entry.split(" ", 10)[10])
        elif entry.startswith("? "):
            paths.add(entry[2:])
    if not head or head == "(initial)":
        raise BadInput("the repository has no commits yet", hint="commit your work, then try again")
    digest = hashlib.sha256()
    ordered = sorted(paths)
    for rel in ordered:
        _hash_path(digest, root, rel)
    return TreeState(head, branch, bool(ordered), digest.hexdigest(), tuple(ordered))


def find_merge_base(
    root: Path, upstream_remote: str = "upstream", base_branch: str = "main"
) -> MergeBase | None:
    """The merge-base of HEAD with the branch's base (:func:`contribkit.git.cmd.merge_base`: the
    hooks' policy too), with a note when it was not ``upstream_remote/base_branch``; None when
    no base exists."""
    from contribkit.git.cmd import merge_base

    _head_sha(root)
    found = merge_base(root, upstream_remote, base_branch)
    if found is None:
        return None
    sha, ref = found
    wanted = f"{upstream_remote}/{base_branch}"
    note = (
        None
        if ref == wanted
        else f"no '{wanted}' ref (run `git fetch {upstream_remote}`); used '{ref}' instead"
    )
    return MergeBase(sha, ref, note)


def commits_between(root: Path, base: str, head: str = "HEAD") -> list[Commit]:
    """Commits reachable from ``head`` but not ``base``, newest first (merges included)."""
    out = run_git("log", f"--format={_LOG_FORMAT}", f"{base}..{head}", cwd=root)
    commits = []
    for record in out.split(_RS):
        fields = record.strip("\n").split(_FS)
        if len(fields) != 3:
            continue
        sha, subject, body = fields
        commits.append(Commit(sha, subject, body.strip()))
    return commits


def files_of_commits(root: Path, base: str, head: str = "HEAD") -> dict[str, list[str]]:
    """The paths each commit of ``base..head`` changes (renames by their new path), by SHA."""
    repo = open_repo(root)
    try:
        out = repo.git.log("--format=%x00%H", "--name-only", "--no-renames", f"{base}..{head}")
    finally:
        repo.close()
    files: dict[str, list[str]] = {}
    for record in out.split("\x00")[1:]:
        sha, *paths = record.strip("\n").splitlines()
        files[sha] = [path for path in paths if path]
    return files


def _text_lines(path: Path) -> int | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def changed_files(root: Path, base: str, *, include_worktree: bool = False) -> list[ChangedFile]:
    """Files that differ between ``base`` and HEAD, with added/deleted line counts.

    With ``include_worktree``, compare ``base`` with the working tree instead, and list untracked
    (not ignored) files too: what the branch will contain once everything is committed.
    """
    from contribkit.git.cmd import numstat

    span = [base] if include_worktree else [base, "HEAD"]
    common = ["-z", "--no-renames", "--no-ext-diff", "--no-textconv"]
    statuses = run_git("diff", "--name-status", *common, *span, cwd=root).split("\0")
    untracked = (
        run_git("ls-files", "--others", "--exclude-standard", "-z", cwd=root).split("\0")
        if include_worktree
        else []
    )
    top = Path(run_git("rev-parse", "--show-toplevel", cwd=root) or root)
    status_of = {statuses[i + 1]: statuses[i][:1] for i in range(0, len(statuses) - 1, 2)}
    files = [
        ChangedFile(path, status_of.get(path, "M"), added, deleted)
        for path, added, deleted in numstat(root, *span)
    ]
    for path in untracked:
        if path:
            files.append(ChangedFile(path, "?", _text_lines(top / path), 0))
    return sorted(files, key=lambda f: f.path)


def issue_number_from_commits(commits: Sequence[Commit]) -> tuple[int, str] | None:
    """The issue the commits close (``Fixes #N``, ``Closes owner/repo#N``, an issue URL), else
    the first ``#N`` they mention; oldest commit first. Returns the number and which commit."""
    oldest_first = list(reversed(commits))
    for pattern in (_CLOSING_RE, _ISSUE_REF_RE):
        for commit in oldest_first:
            m = pattern.search(f"{commit.subject}\n{commit.body}")
            if m:
                return int(m.group(1)), f"commit {commit.sha[:7]}"
    return None


def added_lines(root: Path, base: str, paths: Sequence[str]) -> dict[str, list[str]]:
    """The lines each of ``paths`` gained between ``base`` and HEAD (without the ``+``)."""
    if not paths:
        return {}
    out = run_git(
        "diff",
        "-U0",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        base,
        "HEAD",
        "--",
        *paths,
        cwd=root,
    )
    added: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in out.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            current = added.setdefault(name[2:], []) if name.startswith("b/") else None
        elif line.startswith("+") and current is not None:
            current.append(line[1:])
    return added


def branch_facts(
    root: Path,
    upstream_remote: str = "upstream",
    base_branch: str = "main",
    *,
    include_worktree: bool = False,
) -> BranchFacts:
    """Everything above in one call: what ``pr`` and ``submit`` describe, what ``run`` tests.

    The issue number comes from the branch name, else from the commits (see
    :func:`issue_number_from_commits`).
    """
    state = tree_state(root)
    base = find_merge_base(root, upstream_remote, base_branch)
    commits: list[Commit] = []
    files: list[ChangedFile] = []
    if base is not None:
        commits = commits_between(root, base.sha)
        files = changed_files(root, base.sha, include_worktree=include_worktree)
    number = issue_from_branch(state.branch)
    origin = f"branch {state.branch}" if number is not None else None
    if number is None:
        from_commits = issue_number_from_commits(commits)
        if from_commits is not None:
            number, origin = from_commits
    return BranchFacts(
        state=state,
        merge_base=base,
        base_ref=f"{upstream_remote}/{base_branch}",
        commits=tuple(commits),
        changed_files=tuple(files),
        issue_number=number,
        issue_origin=origin,
    )
