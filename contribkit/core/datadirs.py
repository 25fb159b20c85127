"""Where the data folders shipped with contribkit are: the one lookup for ``templates/`` and
``hooks/``.

The wheel carries them inside the package (``contribkit/templates``, ``contribkit/hookdata``; see
the force-include in pyproject.toml). A source checkout or an editable install has them at the
top of the tree, beside the package.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # contribkit/, above core/
# top-level folder in the source tree -> its name inside the installed package
PACKAGED_AS = {"templates": "templates", "hooks": "hookdata"}


def data_dir(name: str) -> Path:
    """The folder holding the shipped data ``name`` ("templates" or "hooks")."""
    for candidate in (PACKAGE_DIR / PACKAGED_AS[name], PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"contribkit's data folder '{name}' is missing from {PACKAGE_DIR}: reinstall contribkit"
    )
