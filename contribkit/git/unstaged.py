"""Unstaged changes set aside while the pre-commit-stage checks run, so that they see what is
being committed (as pre-commit and prek do for their hooks).

Not every check can be given the staged content instead of the file: contribkit-lintrunner runs
lintrunner, whose linters read the work tree. So, as pre-commit does: the unstaged changes are
written as a binary patch under the git dir (``.git/contribkit/unstaged-*.patch``), the files the
patch holds, and only those, are checked out from the index, the checks run, and the patch is
applied again, on every way out (an exception, Ctrl-C, SIGTERM or SIGHUP; after the first signal
the others are ignored, so none can cut the putting back short). When a check edited a file the
patch touches, the check's edits in those files are undone and the patch applied again; its
edits elsewhere stay. No other file is touched: a local edit git is told not to see
(``update-index --assume-unchanged`` or ``--skip-worktree``) is in no patch, and ``checkout -- .``
would destroy it. Paths are given to git literally (``--literal-pathspecs``: ``a[1].py`` is not
a pattern). The patch is removed only once applied; if it cannot be, it stays, the runner says
where and how to apply it, and the commit is refused. Intent-to-add files (``git add -N``) are
taken out of the index meanwhile and put back after. When nothing is unstaged (the usual commit),
this costs two git commands and starts no others. Standard library only.
"""

from __future__ import annotations

import os
import sys

from contribkit.git import cmd as gitcmd

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType
    from typing import Any

    Handler = Callable[[int, FrameType | None], Any] | int | None

PATCH_FOLDER = "contribkit"  # under the git dir, with init's other files
PATCH_PREFIX = "unstaged-"
# as pre-commit: a submodule.recurse=1 setting would make checkout discard nested changes; the
# paths (the patch's) follow, literally (cmd.git_on_paths)
CHECKOUT = ("-c", "submodule.recurse=0", "checkout")
SIGNALS = ("SIGTERM", "SIGHUP")  # SIGINT raises KeyboardInterrupt already


def unstaged_patch() -> bytes:
    """The work tree's changes to the files in the index, as a binary patch (empty: none)."""
    tree = gitcmd.git_lean("write-tree")
    return gitcmd.git_lean_bytes(
        "diff-index", "--ignore-submodules", "--binary", "--no-color", "--no-ext-diff", tree, "--"
    )


def intent_to_add() -> list[str]:
    out = gitcmd.git_lean_bytes(
        "diff", "--no-ext-diff", "--ignore-submodules", "--diff-filter=A", "--name-only", "-z"
    )
    return [os.fsdecode(name) for name in out.split(b"\0") if name]


def patch_paths(patch: str) -> list[str]:
    """The paths the saved patch changes, as git reads them from it (no quoting to undo; names
    that are not UTF-8 survive, as ``os.fsdecode`` gives them)."""
    out = gitcmd.git_lean_bytes("apply", "--numstat", "-z", patch)
    fields = [os.fsdecode(field) for field in out.split(b"\0")]
    paths: dict[str, None] = {}  # in order, once each
    i = 0
    while i < len(fields):
        parts = fields[i].split("\t", 2)  # added, deleted, path
        i += 1
        if len(parts) < 3:
            continue
        if parts[2]:
            paths[parts[2]] = None
        else:  # a rename (diff-index finds none unless asked): the old path, the new one
            paths.update(dict.fromkeys(name for name in fields[i : i + 2] if name))
            i += 2
    return list(paths)


def checkout(paths: list[str]) -> None:
    """The index's versions of ``paths``, and of no other file, into the work tree."""
    gitcmd.git_on_paths(*CHECKOUT, paths=paths)


def _say(message: str) -> None:
    sys.stdout.flush()
    print(f"contribkit: {message}", file=sys.stderr, flush=True)


def _interrupted(signum: int, frame: FrameType | None) -> None:
    """One signal stops the checks; any after it are ignored, so that none can cut short the
    putting back that the first one started."""
    import signal

    _handle_signals(signal.SIG_IGN)
    raise KeyboardInterrupt


def _handle_signals(handler: Handler) -> dict[int, Handler]:
    """Set ``handler`` for SIGINT, SIGTERM and SIGHUP (those there are); the previous ones."""
    import signal

    previous: dict[int, Handler] = {}
    for name in ("SIGINT", *SIGNALS):
        number = getattr(signal, name, None)
        if number is not None:
            previous[number] = signal.signal(number, handler)
    return previous


def _restore_signals(previous: dict[int, Handler]) -> None:
    import signal

    for number, handler in previous.items():
        signal.signal(number, handler)


def _apply(patch: str) -> str | None:
    """Apply ``patch`` to the work tree; None, or git's complaint."""
    try:
        gitcmd.git("apply", "--whitespace=nowarn", patch)
        return None
    except gitcmd.GitError:  # as pre-commit: again without CRLF conversion
        try:
            gitcmd.git("-c", "core.autocrlf=false", "apply", "--whitespace=nowarn", patch)
            return None
        except gitcmd.GitError as exc:
            return str(exc)


def put_back(patch: str, shown: str, paths: list[str]) -> bool:
    """Apply the saved patch again (undoing the checks' edits in ``paths``, the patch's, if they
    are in its way) and remove it; if it cannot be applied, keep it and say how to apply it by
    hand."""
    problem = _apply(patch)
    if problem is not None:
        _say("the checks changed files that have unstaged changes; their edits to those are undone")
        try:
            checkout(paths)
        except gitcmd.GitError as exc:
            problem = str(exc)
        else:
            problem = _apply(patch)
    if problem is not None:
        said = "\n    ".join(problem.splitlines())
        _say(
            f"could not put back your unstaged changes; they are kept in {shown}\n"
            f"  git apply said:\n    {said}\n"
            f"  to get them back: git apply --reject {shown} (hunks that do not apply are left\n"
            "  in *.rej files beside the files), then delete it; the commit is refused meanwhile"
        )
        return False
    os.unlink(patch)
    _say("unstaged changes put back")
    return True


def _save(git_dir: str, patch: bytes) -> str:
    import time

    folder = os.path.join(git_dir, PATCH_FOLDER)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{PATCH_PREFIX}{int(time.time())}-{os.getpid()}.patch")
    with open(path, "wb") as fh:
        fh.write(patch)
        fh.flush()
        os.fsync(fh.fileno())
    return path


def left_behind(git_dir: str) -> list[str]:
    """Patches an earlier run left (it was killed outright, or could not apply them): those
    whose process is gone. The folder usually does not exist: one failed listdir."""
    folder = os.path.join(git_dir, PATCH_FOLDER)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    stale = []
    for name in names:
        if not (name.startswith(PATCH_PREFIX) and name.endswith(".patch")):
            continue
        pid = name[: -len(".patch")].rsplit("-", 1)[-1]
        try:
            os.kill(int(pid), 0)
        except (ValueError, ProcessLookupError):
            stale.append(os.path.join(folder, name))
        except OSError:  # alive, someone else's: not left behind
            pass
    return stale


def on_staged_content(git_dir: str, run: Callable[[], int]) -> int:
    """``run()`` with the unstaged changes set aside; its exit code, at least 1 when they could
    not be put back. KeyboardInterrupt (Ctrl-C, SIGTERM, SIGHUP) propagates once they are.
    Patches an earlier run left behind are named first, so that no change stays forgotten."""
    for stale in left_behind(git_dir):
        shown = os.path.relpath(stale)
        _say(
            f"an earlier run left unstaged changes in {shown}: get them back with"
            f" git apply --reject {shown}, then delete it"
        )
    patch = unstaged_patch()
    if not patch:
        return run()
    import signal

    previous = _handle_signals(_interrupted)
    restored = True
    try:
        added = intent_to_add()
        if added:
            gitcmd.git_on_paths("rm", "--cached", "-q", paths=added)
            patch = unstaged_patch()
        try:
            if not patch:
                return run()
            path = _save(git_dir, patch)
            try:
                paths = patch_paths(path)
            except BaseException:
                os.unlink(path)  # nothing is set aside yet
                raise
            shown = os.path.relpath(path)
            _say(f"unstaged changes set aside in {shown}: the checks see what is staged")
            try:
                checkout(paths)
                code = run()
                _handle_signals(signal.SIG_IGN)  # from here no signal may skip putting back
            finally:
                _handle_signals(signal.SIG_IGN)  # (after an exception too)
                restored = put_back(path, shown, paths)
        finally:
            if added:
                gitcmd.git_on_paths("add", "--intent-to-add", paths=added)
    finally:
        _restore_signals(previous)
    return code if restored else max(code, 1)
