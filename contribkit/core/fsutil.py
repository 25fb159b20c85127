"""Atomic, no-clobber file writes. Every generated file goes through here."""

from __future__ import annotations

import os
from pathlib import Path

from contribkit.core.errors import BadInput


def atomic_write(
    path: Path, data: str | bytes, *, force: bool = False, mode: int | None = None
) -> None:
    """Write ``data`` to ``path`` atomically; refuse to replace an existing file unless ``force``."""
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
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
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
