"""The git side of a bisect: the range, ``git bisect start|good|bad|skip``, the commit facts of
the culprit, and putting the checkout back as it was.

contribkit drives ``git bisect`` one mark at a time (not ``git bisect run``), so that it decides
each step itself, prints it, and restores the branch on every way out. git's own state is read
back from ``git bisect log``, whose comment lines (``# first bad commit: [SHA] …``, ``# possible
first bad commit: [SHA] …``) say how the bisect ended.
"""

from __future__ import annotations

import contextlib
import math
import re
import signal
import subprocess
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from contribkit.core.errors import BadInput
from contribkit.git.cmd import GitError, git, git_path

# Fields of one `git log` record (never in commit text).
_FS = "\x1f"
_ROUGHLY_RE = re.compile(r"roughly (\d+) steps?")
_FIRST_BAD_RE = re.compile(r"^# first bad commit: \[([0-9a-f]{7,64})\]", re.MULTILINE)
_POSSIBLE_RE = re.compile(r"^# possible first bad commit: \[([0-9a-f]{7,64})\]", re.MULTILINE)
# Where a landed PyTorch commit names its pull request: ghstack and the merge bot write
# "Pull Request resolved: https://github.com/pytorch/pytorch/pull/169001"; GitHub's squash merge
# ends the subject with "(#169001)".
_PR_RESOLVED_RE = re.compile(r"^Pull Request resolved:\s*\S*/pull/(\d+)\b", re.MULTILINE)
_PR_SUBJECT_RE = re.compile(r"\(#(\d+)\)\s*$")


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    author: str  # "Name <email>"
    date: str  # author date, ISO 8601
    pr: int | None  # the pull request that landed it, when the message says

    @property
    def short(self) -> str:
        return self.sha[:10]


@dataclass(frozen=True)
class Checkout:
    """Where the checkout was before the bisect: a branch, else a detached commit."""

    branch: str | None
    sha: str

    @property
    def ref(self) -> str:
        return self.branch or self.sha

    def describe(self) -> str:
        return f"branch {self.branch}" if self.branch else f"detached HEAD {self.sha[:10]}"


@dataclass(frozen=True)
class BisectState:
    """Where a running bisect stands after a mark."""

    done: bool
    culprit: str | None  # the first bad commit, once git names one
    candidates: tuple[str, ...]  # only skipped commits left: the first bad is one of these
    steps_left: int | None  # git's "roughly N steps"


def pr_number(message: str) -> int | None:
    """The PR a commit message names: ``Pull Request resolved: …/pull/N``, else a subject
    ending in ``(#N)``."""
    found = _PR_RESOLVED_RE.search(message)
    if found:
        return int(found.group(1))
    subject = message.split("\n", 1)[0]
    found = _PR_SUBJECT_RE.search(subject)
    return int(found.group(1)) if found else None


def commit_info(root: Path, rev: str) -> Commit:
    out = git("log", "-1", f"--format=%H{_FS}%s{_FS}%an <%ae>{_FS}%aI{_FS}%B", rev, cwd=root)
    sha, subject, author, date, message = out.split(_FS, 4)
    return Commit(sha, subject, author, date, pr_number(message))


def resolve(root: Path, rev: str, option: str) -> str:
    """The full sha of the commit ``rev`` names; BadInput when it names none."""
    if not rev or rev.startswith("-"):
        raise BadInput(f"{option} '{rev}' is not a revision", hint=f"e.g. {option} v2.8.0")
    try:
        return git(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", cwd=root
        )
    except GitError:
        raise BadInput(
            f"{option} '{rev}' names no commit here",
            hint="fetch it first (git fetch upstream --tags), or pass a sha",
        ) from None


def is_ancestor(root: Path, older: str, newer: str) -> bool:
    return bool(
        subprocess.run(
            ["git", "merge-base", "--is-ancestor", older, newer],
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
        ).returncode
        == 0
    )


def range_size(root: Path, good: str, bad: str, first_parent: bool, paths: Sequence[str]) -> int:
    """The commits a bisect chooses among: reachable from ``bad``, not from ``good``."""
    args = ["rev-list", "--count", *(["--first-parent"] if first_parent else []), bad, f"^{good}"]
    return int(git(*args, "--", *paths, cwd=root) or 0)


def estimated_steps(size: int) -> int:
    """Steps a bisect takes on ``size`` candidate commits (the bad end among them): each step
    halves what is left, so ceil(log2(size))."""
    return math.ceil(math.log2(size)) if size > 1 else 0


def checkout_state(root: Path) -> Checkout:
    sha = git("rev-parse", "HEAD", cwd=root)
    branch = git("symbolic-ref", "--quiet", "--short", "HEAD", cwd=root, check=False) or None
    return Checkout(branch, sha)


def uncommitted(root: Path) -> list[str]:
    """Tracked files with changes, staged or not (untracked files stay: checkouts keep them,
    and the repro folder is often one)."""
    out = git("status", "--porcelain", "--untracked-files=no", "--ignore-submodules=none", cwd=root)
    return [line[3:] for line in out.splitlines() if line.strip()]


def put_back_tracked(root: Path) -> list[str]:
    """Undo what a build changed in tracked files, else the next checkout refuses (a generated
    header, a version file rewritten in place); returns the files. The tree was clean when the
    bisect began, so every such change is the build's own; untracked files stay."""
    changed = uncommitted(root)
    if changed:
        git("reset", "--hard", "--quiet", cwd=root)
    return changed


def in_progress(root: Path) -> bool:
    return git_path(root, "BISECT_START").exists()


def checkout(root: Path, sha: str) -> None:
    """Check ``sha`` out detached; BadInput when git refuses (an untracked file where the
    commit tracks one, a locked index), with git's reason in one line."""
    try:
        git("checkout", "--quiet", "--detach", sha, cwd=root)
    except GitError as exc:
        why = " ".join(line.strip() for line in str(exc).splitlines() if line.strip() != "Aborting")
        raise BadInput(
            f"git checkout {sha[:10]} failed: {why.removeprefix('error: ')}",
            hint="move the files git names out of the way (or commit them), then run it again",
        ) from None


def start(root: Path, bad: str, good: str, first_parent: bool, paths: Sequence[str]) -> BisectState:
    args = ["bisect", "start", *(["--first-parent"] if first_parent else []), bad, good]
    return _mark(root, [*args, "--", *paths])


def mark(root: Path, word: str) -> BisectState:
    """``git bisect good|bad|skip`` on the checked-out commit."""
    return _mark(root, ["bisect", word])


def _mark(root: Path, args: list[str]) -> BisectState:
    try:
        out, failed = git(*args, cwd=root), None
    except GitError as exc:  # the log below may still name the culprit
        out, failed = "", str(exc)
    log = git("bisect", "log", cwd=root, check=False)
    culprit = _FIRST_BAD_RE.search(log)
    if culprit:
        return BisectState(True, git("rev-parse", culprit.group(1), cwd=root), (), 0)
    possible = tuple(
        git("rev-parse", sha, cwd=root) for sha in dict.fromkeys(_POSSIBLE_RE.findall(log))
    )
    if possible:
        return BisectState(True, None, possible, 0)
    if failed is not None:
        raise BadInput(f"git {' '.join(args[:2])} failed: {failed.splitlines()[-1]}")
    roughly = _ROUGHLY_RE.search(out)
    return BisectState(False, None, (), int(roughly.group(1)) if roughly else None)


def restore(root: Path, original: Checkout) -> str | None:
    """End any bisect and check ``original`` out again; None when done, else what failed.

    Tracked files a build changed are put back first (see :func:`put_back_tracked`). Runs on
    every way out of a bisect (success, error, Ctrl-C, SIGTERM), so a second Ctrl-C
    must not cut it short: SIGINT is ignored meanwhile, and git runs in its own session, out of
    reach of the terminal's signals."""
    with _sigint_ignored():
        problems = []
        if uncommitted(root):  # a build stopped midway: its changes, as put_back_tracked
            code, why = _quiet_git(root, "reset", "--hard", "--quiet")
            if code != 0:
                problems.append(f"git reset --hard: {why}")
        if in_progress(root):
            code, why = _quiet_git(root, "bisect", "reset", original.ref)
            if code != 0:
                problems.append(f"git bisect reset: {why}")
        now = checkout_state(root)
        if now.sha != original.sha or now.branch != original.branch:
            target = ["checkout", "--quiet", original.ref]
            if original.branch is None:
                target.insert(2, "--detach")
            code, why = _quiet_git(root, *target)
            if code != 0:
                problems.append(f"git checkout {original.ref}: {why}")
        return "; ".join(problems) or None


def _quiet_git(root: Path, *args: str) -> tuple[int, str]:
    proc = subprocess.run(
        ["git", *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    lines = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
    return proc.returncode, lines[-1] if lines else f"exit {proc.returncode}"


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers, and only it gets signals
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
