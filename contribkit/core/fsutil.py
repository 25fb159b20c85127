"""Atomic, no-clobber file writes. Every generated file goes through here."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from contribkit.core.errors import DISK_FULL, BadInput, ContribkitError, ExitCode

if TYPE_CHECKING:
    from collections.abc import Sequence


class WriteFailed(ContribkitError):
    """The disk refused a write (full, over quota, read-only): nothing was left behind."""

    exit_code = ExitCode.FAILED


def current_umask() -> int:
    """The process's umask (read by setting it, as nothing else reads it portably)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(
    path: Path, data: str | bytes, *, force: bool = False, mode: int | None = None
) -> None:
    """Write ``data`` to ``path`` atomically; refuse to replace an existing file unless ``force``.

    The file gets ``mode`` (default 0o666) less the user's umask, as ``open()`` would give it;
    a file that holds a secret passes ``mode=0o600``."""
    import tempfile  # here: reading the cache (core.cache imports this module) needs none

    if path.exists() and not force:
        raise BadInput(f"{path} already exists", hint="pass --force to overwrite it")
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, (0o666 if mode is None else mode) & ~current_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and not exc.filename:  # a full disk: named by its target
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise


def check_writable(path: Path) -> None:
    """BadInput unless a file can be written at ``path`` (making its folder if missing): checked
    before long work whose result goes there."""
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise BadInput(
            f"cannot write {path}: {exc.strerror or exc}",
            hint="pass a path in a folder you can write to",
        ) from exc


def encode_text(path: Path, data: str | bytes) -> bytes:
    """``data`` as UTF-8; BadInput naming the file when it cannot be (a lone surrogate)."""
    if isinstance(data, bytes):
        return data
    try:
        return data.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadInput(
            f"cannot write {path}: its text holds {exc.object[exc.start : exc.end]!r}, which is "
            "not valid Unicode (a lone surrogate)",
            hint="fix that character in the input; nothing was written",
        ) from exc


def write_all(
    files: Sequence[tuple[Path, str | bytes, int | None]], *, force: bool = False
) -> None:
    """Write ``(path, data, mode)`` files all-or-nothing.

    Every text is encoded before anything touches the disk. Files that all go to one folder that
    does not exist yet are written to a temporary folder beside it, which is renamed into place:
    the folder appears whole, or not at all (another writer that got there first wins, and this
    one reports it). Otherwise each file is first written to a temporary file beside its target
    and only once all of them are written are they renamed over their targets.
    """
    if not files:
        return
    staged = [(path, encode_text(path, data), mode) for path, data, mode in files]
    if not force:
        for path, _, _ in staged:
            if path.exists():
                raise BadInput(f"{path} already exists", hint="pass --force to overwrite it")
    folders = {path.parent for path, _, _ in staged}
    folder = next(iter(folders))
    whole = len(folders) == 1 and not folder.exists()
    target = folder if whole or len(staged) > 1 else staged[0][0]
    try:
        if whole:
            _write_new_folder(folder, staged)
        else:
            _write_beside(staged)
    except OSError as exc:
        if exc.errno not in DISK_FULL:  # named by its target, not a temporary name
            raise OSError(exc.errno, exc.strerror, str(target)) from exc
        raise WriteFailed(
            f"cannot write {target}: {exc.strerror or exc}",
            hint="free some space or pick another folder (-o); nothing was written",
        ) from exc


def _write_new_folder(folder: Path, staged: list[tuple[Path, bytes, int | None]]) -> None:
    import shutil
    import tempfile

    if folder.parent.exists() and not folder.parent.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.", suffix=".tmp"))
    try:
        os.chmod(tmp, 0o777 & ~current_umask())
        for path, raw, mode in staged:
            _write_file(tmp / path.name, raw, mode)
        try:
            os.rename(tmp, folder)  # fails when the folder appeared meanwhile: never merged
        except OSError as exc:
            if not folder.exists():
                raise
            raise BadInput(
                f"{folder} already exists (written by another process meanwhile)",
                hint="pass --force to overwrite it",
            ) from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _write_beside(staged: list[tuple[Path, bytes, int | None]]) -> None:
    import tempfile

    temps: list[tuple[str, Path]] = []
    try:
        for path, raw, mode in staged:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            os.close(fd)
            temps.append((tmp, path))
            _write_file(Path(tmp), raw, mode)
        for tmp, path in temps:
            os.replace(tmp, path)
    finally:
        for tmp, _ in temps:
            Path(tmp).unlink(missing_ok=True)


def _write_file(path: Path, raw: bytes, mode: int | None) -> None:
    with open(path, "wb") as fh:
        fh.write(raw)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(path, (0o666 if mode is None else mode) & ~current_umask())


def open_new(path: Path, *, replace: bool = False) -> BinaryIO:
    """``path`` opened for writing as a new file, never through a link and never into a file
    that is there (``O_EXCL | O_NOFOLLOW``); with ``replace``, an old entry of that name (a file,
    or a link a child planted) is removed first, not followed.

    For what contribkit writes beside code it ran (leg logs, JUnit reports, debug logs): those
    folders are not writable from inside the sandbox, and without one this still never writes
    through a link, e.g. ``leg.log -> ~/.bashrc``."""
    if replace:
        with contextlib.suppress(FileNotFoundError):
            if path.is_dir() and not path.is_symlink():
                raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
            path.unlink()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o644)
    return os.fdopen(fd, "wb")


def read_untrusted(path: Path, cap: int) -> bytes | None:
    """At most ``cap`` bytes of ``path``, a file code wrote: never through a link, never a
    fifo or device (which could block); None when it is missing or not a plain file."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return fh.read(cap)


def refuse_links(root: Path, out_dir: Path) -> None:
    """BadInput when ``out_dir`` is inside the repository but a symbolic link there leads the
    write elsewhere: the folder itself or any folder between it and the root (a committed
    ``repros -> /home/me`` or ``repros/issue-5 -> ../../.ssh``), or a path that resolves outside
    the repository. A folder named outside the repository (``-o /tmp/x``) is the user's choice."""
    base = Path(os.path.abspath(root))
    target = Path(os.path.abspath(out_dir))
    if not target.is_relative_to(base):
        return
    here = base
    for part in target.relative_to(base).parts:
        here = here / part
        if here.is_symlink():
            raise BadInput(
                f"{here} is a symbolic link (to {os.readlink(here)}); contribkit does not write "
                "through links inside the repository",
                "remove the link, or pass -o with a folder that is not one",
            )
    if not target.resolve().is_relative_to(base.resolve()):
        raise BadInput(
            f"{target} leads outside the repository ({target.resolve()})",
            "pass -o with a folder inside the repository, or outside it by its own path",
        )
