"""The user cache: small JSON documents written atomically (issues, torch probes)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
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


class JsonCache:
    """One folder of JSON documents named by a hashed key."""

    def __init__(self, root: Path, kind: str) -> None:
        self.dir = root / kind

    def path(self, key: str) -> Path:
        return self.dir / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".json")

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            doc = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return doc if isinstance(doc, dict) and doc.get("key") == key else None

    def put(self, key: str, doc: dict[str, Any]) -> None:
        """Store ``doc``; a cache that cannot be written (full disk, read-only) only costs the
        next command the work again."""
        with contextlib.suppress(OSError):
            atomic_write(self.path(key), json.dumps({**doc, "key": key}, indent=1), force=True)
