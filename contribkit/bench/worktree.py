"""The baseline's tree: a ``git worktree`` at the baseline revision, always removed afterwards.

The worktree is made in a fresh temporary folder outside the checkout, detached at the
revision, and removed (``git worktree remove --force``, then the folder, then ``git worktree
prune``) on every way out: success, an error, Ctrl-C, SIGTERM or SIGHUP (``cli`` turns those
into exceptions that unwind through here); a second Ctrl-C during the removal is ignored.

Python-only changes are measured by putting the worktree's root ahead of everything on the
baseline's path. Compiled parts are not rebuilt: the checkout's build outputs that git ignores
inside its package folders are linked into the worktree, so that its packages import (e.g.
``torch/_C.cpython-312-x86_64-linux-gnu.so``, ``torch/lib/``, ``torch/version.py``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from contribkit.core.errors import BadInput
from contribkit.git.cmd import GitError, git

# Sources of compiled code: a change to one is not measured by a Python-path baseline, as both
# sides share the checkout's build (e.g. aten/src/ATen/native/Loss.cpp, c10/core/Device.h,
# native_functions.yaml, which generates code).
COMPILED_SUFFIXES = (
    ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh", ".mm", ".m", ".pyx",
    ".pxd", ".yaml", ".S", ".asm", ".metal", ".hip",
)  # fmt: skip


@dataclass(frozen=True)
class BaselineTree:
    path: Path
    sha: str
    rev: str  # as the user gave it
    linked: tuple[str, ...]  # build outputs linked in from the checkout
    compiled_changes: tuple[str, ...]  # changed files a Python-path baseline cannot measure


def resolve_rev(root: Path, rev: str) -> str:
    """The commit ``rev`` names, or BadInput."""
    if rev.startswith("-"):
        raise BadInput(f"--baseline {rev!r} is not a revision", hint="pass e.g. --baseline HEAD~1")
    try:
        return git(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", cwd=root
        )
    except GitError as exc:
        raise BadInput(
            f"--baseline {rev}: no such commit",
            hint="pass a commit, branch or tag, e.g. --baseline HEAD~1 or --baseline upstream/main",
        ) from exc


def build_outputs(root: Path) -> list[str]:
    """Files and folders that git ignores inside the checkout's top-level package folders
    (those with an ``__init__.py``), less bytecode caches."""
    listed = git(
        "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", cwd=root
    )
    found = []
    for entry in filter(None, listed.split("\0")):
        top = entry.split("/", 1)[0]
        if "/" not in entry.rstrip("/") or not (root / top / "__init__.py").is_file():
            continue
        if "__pycache__" in entry.split("/") or entry.endswith((".pyc", ".pyo")):
            continue
        found.append(entry.rstrip("/"))
    return found


def compiled_changes(root: Path, sha: str) -> list[str]:
    """Changed files between ``sha`` and the working tree that hold compiled code's sources."""
    names = git("diff", "--name-only", "-z", sha, cwd=root).split("\0")
    return [n for n in names if n and n.endswith(COMPILED_SUFFIXES)]


@contextlib.contextmanager
def _no_interrupt() -> Iterator[None]:
    """Ctrl-C ignored while the worktree is removed (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def remove_tree(root: Path, folder: Path, tree: Path) -> None:
    with _no_interrupt():
        git("worktree", "remove", "--force", str(tree), cwd=root, check=False)
        shutil.rmtree(folder, ignore_errors=True)
        git("worktree", "prune", cwd=root, check=False)


@contextlib.contextmanager
def baseline_tree(root: Path, rev: str) -> Iterator[BaselineTree]:
    """A worktree of ``root`` at ``rev`` for as long as the block runs; removed afterwards."""
    sha = resolve_rev(root, rev)
    folder = Path(tempfile.mkdtemp(prefix="contribkit-bench-"))
    tree = folder / "baseline"
    try:
        try:
            git("worktree", "add", "--detach", "--quiet", str(tree), sha, cwd=root)
        except GitError as exc:
            raise BadInput(f"could not make a worktree at {rev}: {exc}") from exc
        linked = []
        for entry in build_outputs(root):
            target = tree / entry
            if target.exists() or target.is_symlink():
                continue  # tracked at the baseline: the baseline's own
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(root / entry, target)
            linked.append(entry)
        yield BaselineTree(tree, sha, rev, tuple(linked), tuple(compiled_changes(root, sha)))
    finally:
        remove_tree(root, folder, tree)
