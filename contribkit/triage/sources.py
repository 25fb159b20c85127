"""What a triage runs: the repros (folders, folders of repro folders, an ``--issues`` list) and
the interpreters (``--python``, ``--venvs-dir``)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from contribkit.core.errors import BadInput
from contribkit.issue.model import issue_number

# An issue named on one line of an --issues list: 170398, #170398, pytorch/pytorch#170398,
# https://github.com/pytorch/pytorch/issues/170398 (what `gh issue list` and a browser give).
_ISSUE_RE = re.compile(
    r"^(?:#?(\d+)|[\w.-]+/[\w.-]+#(\d+)|https?://[^\s/]+/[\w.-]+/[\w.-]+/(?:issues|pull)/(\d+)\S*)$"
)


@dataclass(frozen=True)
class Wanted:
    """A repro to run: its folder, or an issue whose repro folder is missing."""

    path: Path
    issue: int | None = None
    missing: str | None = None


def repro_paths(paths: Sequence[Path]) -> list[Wanted]:
    """Each path a repro (folder or script), or a folder of repro folders (``repros/``)."""
    found: list[Wanted] = []
    for path in paths:
        if not path.exists():
            raise BadInput(
                f"{path} does not exist", hint="pass repro folders, e.g. repros/issue-170398"
            )
        if path.is_dir() and not (path / "repro.py").is_file():
            inner = sorted(p for p in path.iterdir() if (p / "repro.py").is_file())
            if not inner:
                raise BadInput(
                    f"{path} holds no repro folder",
                    hint="pass repro folders made by `contribkit repro`",
                )
            found += [Wanted(p) for p in inner]
        else:
            found.append(Wanted(path))
    return found


def read_issue_list(source: str) -> list[int]:
    """Issue numbers from a file (``-``: stdin): the first word of each line (``170398``,
    ``#170398``, ``OWNER/NAME#170398``, an issue URL: what ``gh issue list`` prints; blank lines
    and ``# comments`` skipped), or the JSON that ``gh issue list --json number`` prints."""
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{source} is not UTF-8 text", hint="pass a list of issues") from exc
    if text.lstrip().startswith("["):
        return _from_json(text, source)
    numbers = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or (line.startswith("#") and not line[1:2].isdigit()):
            continue
        first = line.split()[0]
        found = _ISSUE_RE.match(first)
        number = issue_number(next(g for g in found.groups() if g)) if found else None
        if number is None:  # not a reference, or a number GitHub cannot have (0, 10**40)
            raise BadInput(
                f"{source}, line {n}: '{first[:60]}' is not an issue",
                hint="one issue per line: 170398, #170398, OWNER/NAME#170398 or its URL",
            )
        numbers.append(number)
    return list(dict.fromkeys(numbers))


def _from_json(text: str, source: str) -> list[int]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BadInput(
            f"{source} is not valid JSON ({exc})", hint="e.g. gh issue list --json number"
        ) from exc
    numbers = []
    for item in data if isinstance(data, list) else []:
        number = item.get("number") if isinstance(item, dict) else item
        if isinstance(number, int) and issue_number(number) is not None:  # not True, 0, 10**40
            numbers.append(number)
        else:
            raise BadInput(
                f"{source}: {str(item)[:60]} is not an issue",
                hint="a JSON list of numbers, or of objects with a number (gh issue list --json number)",
            )
    return list(dict.fromkeys(numbers))


def issue_repros(numbers: Sequence[int], repros_dir: Path) -> list[Wanted]:
    """The repro folder of each issue (``repros/issue-N``); a missing one is kept, with why."""
    wanted = []
    for number in numbers:
        folder = repros_dir / f"issue-{number}"
        if (folder / "repro.py").is_file():
            wanted.append(Wanted(folder, number))
        else:
            why = f"no repro in {folder.name}: make it with `contribkit repro {number}`"
            wanted.append(Wanted(folder, number, why))
    return wanted


def venv_pythons(folder: Path) -> list[str]:
    """The interpreter of each virtual environment in ``folder`` (``DIR/*/bin/python``)."""
    if not folder.is_dir():
        raise BadInput(f"{folder} is not a folder", hint="pass a folder of virtual environments")
    found = sorted(str(p) for p in folder.glob("*/bin/python") if p.is_file())
    if not found:
        raise BadInput(
            f"{folder} holds no virtual environment (no */bin/python)",
            hint="make one per version, e.g. python -m venv DIR/torch-2.8 && DIR/torch-2.8/bin/pip install torch==2.8.0",
        )
    return found
