"""Print the lowest versions ``pyproject.toml`` declares, as a pip constraints file.

CI installs contribkit with these constraints (``pip install -c FILE -e .[test]``) and runs the
fast test lane, so a floor that the code has outgrown fails there instead of on a user's
machine. Only the runtime dependencies are pinned; the test tools stay free.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # tomli is a dependency on 3.10, as in contribkit.core.config
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROOT = Path(__file__).resolve().parent.parent
_REQUIREMENT = re.compile(
    r"^\s*([A-Za-z0-9._-]+)\s*>=\s*([0-9][A-Za-z0-9.]*)\s*(?:,[^;]*)?(?:;\s*(.*))?$"
)


def floors(pyproject: Path) -> list[str]:
    """``name==floor`` for each runtime dependency that has a ``>=`` floor and applies here."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    out = []
    for requirement in data["project"]["dependencies"]:
        match = _REQUIREMENT.match(requirement)
        if match is None:
            raise SystemExit(f"dependency_floors: no '>=' floor in {requirement!r}")
        name, version, marker = match.groups()
        if marker and not _marker_holds(marker):
            continue
        out.append(f"{name}=={version}")
    return out


def _marker_holds(marker: str) -> bool:
    """The only markers pyproject.toml uses: ``python_version < 'X.Y'``."""
    match = re.fullmatch(r"python_version\s*<\s*['\"](\d+)\.(\d+)['\"]", marker.strip())
    if match is None:
        raise SystemExit(f"dependency_floors: cannot evaluate the marker {marker!r}")
    return sys.version_info[:2] < (int(match.group(1)), int(match.group(2)))


if __name__ == "__main__":
    print("\n".join(floors(ROOT / "pyproject.toml")))
