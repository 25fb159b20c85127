"""Facts about lintrunner, PyTorch's linter driver: where it keeps its state, and whether
``lintrunner init`` has been run for a repository's ``.lintrunner.toml``.

Standard library only (the contribkit-lintrunner hook uses it). lintrunner keeps a copy of the
config it was initialised with in its data directory, which is the Rust ``directories`` crate's
``ProjectDirs::from("", "", "lintrunner").data_dir()``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

CONFIG_NAME = ".lintrunner.toml"


def data_dir() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "lintrunner"
    if os.name == "nt":
        return Path(os.environ.get("APPDATA") or Path.home()) / "lintrunner" / "data"
    xdg = os.environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "lintrunner"


def initialised(root: Path) -> bool | None:
    """True if lintrunner's saved init config matches this repo's, False if stale, None if never run."""
    config = (root / CONFIG_NAME).read_bytes()
    state = data_dir()
    saved = list(state.glob(f"*/{CONFIG_NAME}")) if state.is_dir() else []
    if not saved:
        return None
    return any(p.read_bytes() == config for p in saved)
