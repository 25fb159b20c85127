"""Light git access through the git CLI (standard library only).

The hooks and the CLI's start-up path use this; richer history queries live in
:mod:`contribkit.git.facts` (GitPython). ``subprocess`` and ``pathlib`` are imported by the
functions that need them: the commit-msg hook runs on every commit and usually needs neither.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence
    from pathlib import Path

# Scratch outputs that must never be committed by accident (docs/architecture.md, "Contracts").
SCRATCH_EXCLUDES = (
    "/repros/",
    "/.contribkit/",
    "/.contribkit.toml",
    "debug_issue.sh",
    "torch_compile_debug/",
    "tl_out/",
    "minifier_launcher.py",
)

EXCLUDE_HEADER = "# added by contribkit (scratch outputs; never committed)"


class GitError(Exception):
    pass


def _not_found(cwd: Path | str | None) -> str:
    """What a FileNotFoundError from starting git means: the folder it was to run in is
    missing, or git is."""
    if cwd is not None and not os.path.isdir(cwd):
        return f"no such folder: {cwd}"
    return "git is not installed (or not on PATH)"


def git(*args: str, cwd: Path | str | None = None, check: bool = True) -> str:
    """Run ``git args`` and return stdout without the trailing newline."""
    import subprocess

    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    except FileNotFoundError as exc:
        raise GitError(_not_found(cwd)) from exc
    except NotADirectoryError as exc:
        raise GitError(f"{cwd} is not a folder") from exc
    if check and proc.returncode != 0:
        raise GitError(proc.stderr.strip() or f"git {' '.join(args)} failed")
    return proc.stdout.rstrip("\n")


def git_lean(*args: str) -> str:
    """``git args``'s stdout (its stderr shown), started without the subprocess module, whose
    import costs more than the checks of a typical commit: for the hooks' stage runner. Runs in
    the current folder; GitError when git fails."""
    return git_lean_bytes(*args).decode("utf-8", errors="replace").rstrip("\n")


def git_lean_bytes(*args: str) -> bytes:
    """:func:`git_lean`'s stdout as git wrote it (a binary patch, say)."""
    if not hasattr(os, "posix_spawnp"):  # Windows
        import subprocess

        try:
            proc = subprocess.run(["git", *args], stdin=subprocess.DEVNULL, capture_output=True)
        except FileNotFoundError as exc:
            raise GitError("git is not installed") from exc
        if proc.returncode != 0:
            raise GitError(
                proc.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed"
            )
        return proc.stdout
    read_fd, write_fd = os.pipe()
    try:
        pid = os.posix_spawnp(
            "git",
            ["git", *args],
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, write_fd, 1),
                (os.POSIX_SPAWN_CLOSE, read_fd),
            ],
        )
    except OSError as exc:
        os.close(read_fd)
        raise GitError(f"cannot run git: {exc}") from exc
    finally:
        os.close(write_fd)
    with os.fdopen(read_fd, "rb") as fh:
        data = fh.read()
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if status != 0:
        raise GitError(f"git {' '.join(args)} failed (exit {status})")
    return data


# characters of paths on one command line: Windows allows 32,767 in all
PATHS_PER_CALL = 30_000


def git_on_paths(*args: str, paths: Sequence[str]) -> None:
    """``git --literal-pathspecs ARGS -- PATHS``: each path as it is named, never a pattern
    (``a[1].py`` does not match ``a1.py``), in as many calls as keep each command line within
    any system's limit. GitError when one fails."""
    batch: list[str] = []
    size = 0
    for path in paths:
        if batch and size + len(path) + 1 > PATHS_PER_CALL:
            git("--literal-pathspecs", *args, "--", *batch)
            batch, size = [], 0
        batch.append(path)
        size += len(path) + 1
    if batch:
        git("--literal-pathspecs", *args, "--", *batch)


def repo_root(cwd: Path | str | None = None) -> Path | None:
    """The top of the work tree containing ``cwd``, or None outside a repository."""
    from pathlib import Path

    if not _may_be_in_work_tree(os.path.abspath(cwd if cwd is not None else os.curdir)):
        return None  # no .git here or above: git would say so too, after starting
    try:
        out = git("rev-parse", "--show-toplevel", cwd=cwd)
    except GitError:
        return None
    return Path(out) if out else None


def _may_be_in_work_tree(here: str) -> bool:
    """False only when git cannot find a work tree from ``here``: no ``.git`` in it or any parent,
    and no environment variable pointing git elsewhere."""
    if any(os.environ.get(v) for v in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")):
        return True
    here = os.path.realpath(here)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return True
        parent = os.path.dirname(here)
        if parent == here:
            return False
        here = parent


def git_path(root: Path, name: str) -> Path:
    """Resolve a path inside the git dir (works for worktrees), e.g. ``info/exclude``."""
    from pathlib import Path

    out = git("rev-parse", "--git-path", name, cwd=root)
    path = Path(out)
    return path if path.is_absolute() else root / path


def root_and_branch(cwd: Path | str | None = None) -> tuple[str | None, str | None]:
    """The work-tree top (a string) and the checked-out branch (None when detached).

    When ``cwd`` is the top of a repository's main work tree, as it is for git's own hooks,
    this reads ``.git/HEAD`` instead of starting git; otherwise it asks git, once.
    """
    from_files = _head_from_files(os.path.abspath(cwd if cwd is not None else os.curdir))
    if from_files is not None:
        return from_files
    lines = git(
        "rev-parse", "--show-toplevel", "--symbolic-full-name", "HEAD", cwd=cwd, check=False
    )
    top, _, ref = lines.partition("\n")
    if not top:
        return None, None
    if ref.startswith("refs/heads/"):
        return top, ref.removeprefix("refs/heads/")
    return top, current_branch(top)  # detached, or a branch with no commit yet


def _head_from_files(top: str) -> tuple[str, str | None] | None:
    """``(top, branch)`` from ``top/.git/HEAD``, or None whenever git must be asked: the
    environment points git elsewhere, ``top`` is no repository top, or HEAD is not a plain
    file (the reftable backend keeps a placeholder there)."""
    if any(os.environ.get(v) for v in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")):
        return None
    try:
        with open(os.path.join(top, ".git", "HEAD"), encoding="utf-8") as fh:
            head = fh.read().strip()
    except OSError:  # no .git folder here (a subfolder, a linked worktree, not a repository)
        return None
    if head.startswith("ref: refs/heads/"):
        branch = head.removeprefix("ref: refs/heads/")
        return None if branch == ".invalid" else (top, branch)
    if len(head) in (40, 64) and all(c in "0123456789abcdef" for c in head):
        return top, None  # detached
    return None


def current_branch(root: Path | str) -> str | None:
    """The checked-out branch, or None on a detached HEAD."""
    out = git("symbolic-ref", "--quiet", "--short", "HEAD", cwd=root, check=False)
    return out or None


# Edits of .git/info/exclude take git's own lock: ``info/exclude.lock``, created with O_EXCL.
# The new text is written to the lock file, which is then renamed over the file, so a reader
# sees the old file or the new one, and two writers never lose each other's lines.
LOCK_WAIT_S = 5.0  # how long an edit waits for another writer's lock
STALE_LOCK_S = 30.0  # a lock this old was left by a writer that died: it is taken over


def _read_lines(path: Path) -> list[str]:
    """The file's lines, bytes that are not UTF-8 kept as they are (surrogateescape), so that
    a Latin-1 exclude file is neither an error nor rewritten."""
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return []
    lines = text.split("\n")  # not splitlines(): a form feed or U+2028 is no line break here
    return lines[:-1] if lines and lines[-1] == "" else lines


def _exclude_file(root: Path) -> tuple[Path, list[str]]:
    exclude = git_path(root, "info/exclude")
    return exclude, _read_lines(exclude)


def _acquire(lock: Path) -> int:
    import time

    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            return os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            try:
                if time.time() - os.stat(lock).st_mtime > STALE_LOCK_S:
                    os.unlink(lock)  # its writer died; a live one holds it for milliseconds
                    continue
            except FileNotFoundError:
                continue  # released meanwhile
            if time.monotonic() > deadline:
                from contribkit.core.errors import CheckFailed

                raise CheckFailed(
                    f"{lock.parent / lock.stem} is locked by another process ({lock})",
                    f"if no git or contribkit is running, delete {lock}",
                ) from None
            time.sleep(0.01)


def _edit_excludes(root: Path, change: Callable[[list[str]], list[str]]) -> None:
    """Replace the lines of ``.git/info/exclude`` with ``change(lines)``, under git's lock."""
    exclude = git_path(root, "info/exclude")
    exclude.parent.mkdir(parents=True, exist_ok=True)
    lock = exclude.with_name(exclude.name + ".lock")
    fd = _acquire(lock)
    try:
        lines = _read_lines(exclude)
        new = change(list(lines))
        if new != lines:
            data = "".join(line + "\n" for line in new).encode("utf-8", "surrogateescape")
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
            if exclude.exists():
                os.chmod(lock, exclude.stat().st_mode & 0o7777)
            os.close(fd)
            fd = -1
            os.replace(lock, exclude)
    finally:
        if fd != -1:
            os.close(fd)
            os.unlink(lock)


def missing_excludes(root: Path, patterns: tuple[str, ...] = SCRATCH_EXCLUDES) -> list[str]:
    """The ``patterns`` not yet in ``.git/info/exclude``."""
    _, existing = _exclude_file(root)
    return [p for p in patterns if p not in existing]


def ensure_excluded(root: Path, patterns: tuple[str, ...] = SCRATCH_EXCLUDES) -> list[str]:
    """Append missing ``patterns`` to ``.git/info/exclude``, under contribkit's header; return
    the lines appended (a blank separator and the header included), for
    :func:`remove_excluded`."""
    if not missing_excludes(root, patterns):  # the common case: read, no lock
        return []
    added: list[str] = []

    def append(existing: list[str]) -> list[str]:
        missing = [p for p in patterns if p not in existing]
        if missing:
            added.extend([] if EXCLUDE_HEADER in existing else [EXCLUDE_HEADER])
            if added and existing and existing[-1].strip():
                added.insert(0, "")
            added.extend(missing)
        return [*existing, *added]

    _edit_excludes(root, append)
    return added


def remove_excluded(
    root: Path, added: Sequence[str], keep: Collection[str] = ()
) -> tuple[list[str], list[str]]:
    """Undo :func:`ensure_excluded`: remove the ``added`` lines it returned, but for the
    patterns in ``keep``; its header (and the blank line it put before it) goes only once no
    pattern is left under it. Lines that were there before it ran are never touched.

    Returns the patterns removed, and the ``added`` lines still in the file.
    """
    removed: list[str] = []
    left: list[str] = []

    def drop(lines: list[str]) -> list[str]:
        for line in added:
            if line and line != EXCLUDE_HEADER and line not in keep and line in lines:
                del lines[len(lines) - 1 - lines[::-1].index(line)]  # the last: it was appended
                removed.append(line)
        if EXCLUDE_HEADER in added and EXCLUDE_HEADER in lines:
            at = len(lines) - 1 - lines[::-1].index(EXCLUDE_HEADER)
            if at + 1 == len(lines) or not lines[at + 1].strip():  # nothing left under it
                del lines[at]
                if "" in added and at > 0 and not lines[at - 1].strip():
                    del lines[at - 1]
        kept = [line for line in added if line and line not in removed and line in lines]
        left.extend(([""] if "" in added and EXCLUDE_HEADER in kept else []) + kept)
        return lines

    _edit_excludes(root, drop)
    return removed, left


# The one policy for "what is this branch's base" (hooks, pr, submit, run): the upstream remote's
# base branch, else the local base branch, else origin's. The first that exists and shares
# history with HEAD wins; callers that show the result say when it was a fallback.
def base_refs(upstream_remote: str, base_branch: str) -> tuple[str, ...]:
    return tuple(
        dict.fromkeys((f"{upstream_remote}/{base_branch}", base_branch, f"origin/{base_branch}"))
    )


def merge_base(
    root: Path | str, upstream_remote: str, base_branch: str, head: str = "HEAD"
) -> tuple[str, str] | None:
    """``(sha, ref)``: the merge base of ``head`` with the first of :func:`base_refs` that has
    one; None when none of them exists or shares history with ``head``."""
    for ref in base_refs(upstream_remote, base_branch):
        found = git("merge-base", head, ref, cwd=root, check=False)
        if found:
            return found, ref
    return None


def numstat(root: Path | str, *span: str) -> list[tuple[str, int | None, int | None]]:
    """``(path, added, deleted)`` per changed file of ``git diff <span>`` (counts are None for a
    binary file): the one reader of ``--numstat -z``."""
    out = git(
        "diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", *span, cwd=root
    )
    rows = []
    for entry in out.split("\0"):
        parts = entry.split("\t", 2)
        if len(parts) == 3:
            added, deleted, path = parts
            rows.append((path, _count(added), _count(deleted)))
    return rows


def _count(value: str) -> int | None:
    return None if value == "-" else int(value)
