"""The user cache: small JSON documents written atomically (issues, torch probes, renders).

Each kind is one folder kept to :data:`MAX_ENTRIES` documents and :data:`MAX_BYTES`: a write
that passes either removes the least recently used documents (a read touches a document's
mtime), so no cache grows without bound however many issues are rendered.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contribkit.core.config import Settings
from contribkit.core.fsutil import atomic_write


def cache_root(settings: Settings) -> Path:
    configured = settings.optional_text("cache_dir")
    if configured:
        return Path(configured).expanduser()
    platform = sys.platform  # a variable: the answer differs by platform, mypy must see both
    if platform.startswith("linux"):
        # platformdirs' answer on Linux, without its import (and tempfile's) on a warm command
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        return Path(xdg if os.path.isabs(xdg) else os.path.expanduser("~/.cache"), "contribkit")
    import platformdirs

    return platformdirs.user_cache_path("contribkit")


def _builtin_sha256() -> Callable[[bytes], Any]:
    """CPython's own SHA-256 (``_sha2`` from 3.12, ``_sha256`` before), else hashlib's.

    ``import hashlib`` loads OpenSSL (``_hashlib``): about 2.5 ms, a tenth of what a warm
    ``op`` or ``gaps`` costs beyond ``--help``, for one digest of a short key. The built-in module
    gives the same digest; an interpreter built without it falls back to hashlib."""
    import importlib

    for name in ("_sha2", "_sha256"):
        try:
            found: Callable[[bytes], Any] = importlib.import_module(name).sha256
        except (ImportError, AttributeError):
            continue
        return found
    import hashlib

    return hashlib.sha256


_sha256 = _builtin_sha256()


def sha256_hex(text: str) -> str:
    """The SHA-256 hex digest of ``text`` (UTF-8): cache keys and the probes' script hashes."""
    return str(_sha256(text.encode()).hexdigest())


MAX_ENTRIES = 512  # per kind
MAX_BYTES = 128 * 1024 * 1024  # per kind: an op index of a fork is a few MB


class JsonCache:
    """One folder of JSON documents named by a hashed key, bounded (least recently used out)."""

    def __init__(
        self, root: Path, kind: str, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES
    ) -> None:
        self.dir = root / kind
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    def path(self, key: str) -> Path:
        return self.dir / (sha256_hex(key)[:32] + ".json")

    def get(self, key: str) -> dict[str, Any] | None:
        path = self.path(key)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not (isinstance(doc, dict) and doc.get("key") == key):
            return None
        with contextlib.suppress(OSError):  # used now: the last to go
            os.utime(path)
        return doc

    def put(self, key: str, doc: dict[str, Any]) -> None:
        """Store ``doc``; a cache that cannot be written (full disk, read-only) only costs the
        next command the work again."""
        with contextlib.suppress(OSError):
            atomic_write(self.path(key), json.dumps({**doc, "key": key}, indent=1), force=True)
            self.prune()

    def prune(self) -> int:
        """Remove the least recently used documents until the folder holds at most
        ``max_entries`` of them and ``max_bytes``; return how many went."""
        entries: list[tuple[float, int, str]] = []
        with os.scandir(self.dir) as found:
            for entry in found:
                if entry.name.endswith(".json") and entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):  # gone meanwhile
                        info = entry.stat(follow_symlinks=False)
                        entries.append((info.st_mtime, info.st_size, entry.path))
        total = sum(size for _, size, _ in entries)
        count = len(entries)
        removed = 0
        for _, size, path in sorted(entries):  # oldest first
            if count <= self.max_entries and total <= self.max_bytes:
                break
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
                removed += 1
            count -= 1
            total -= size
        return removed
