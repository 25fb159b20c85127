"""What ``bisect`` and ``triage`` say about a repro: its issue, the oracle that decides its
verdict, and the command line that runs it, read from the folder's ``meta.json``.

The oracle is the one ``contribkit repro`` chose (``oracles``, with why) and, when the user
stated one, the ``expect`` oracle stored in ``meta.json`` (``repro --expect``): the script
itself honours it, so a copy of the folder carries it to every leg unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from contribkit.core.errors import warn
from contribkit.run.runner import Target, classify


@dataclass(frozen=True)
class ReproFacts:
    target: Target  # the script, as `run` classifies it
    name: str  # the folder's name (issue-170398), else the script's
    issue: int | None = None
    title: str | None = None
    url: str | None = None
    default_device: str = "cpu"
    oracles: tuple[str, ...] = ()  # what repro chose: signature, assert, quoted-output, …
    oracles_why: tuple[str, ...] = ()
    expect: str | None = None  # the user's `--expect` oracle, when meta.json holds one

    @property
    def folder(self) -> Path:
        return self.target.path.parent

    def command(self, device: str) -> str:
        """The command line a leg runs, as a reader can run it from the folder."""
        return f"python {self.target.path.name} --device {device}"

    @property
    def oracle(self) -> str:
        """``--expect error:ValueError`` when the user stated one, else what repro chose and
        why (``signature: the issue reports the error …``), else ``none recorded``."""
        if self.expect:
            return f"--expect {self.expect}"
        if self.oracles:
            why = f": {self.oracles_why[0]}" if len(self.oracles_why) == 1 else ""
            return ", ".join(self.oracles) + why
        return "none recorded"


def repro_facts(path: Path) -> ReproFacts:
    """The facts of the repro at ``path`` (a folder or a script); BadInput when it is none."""
    target = classify(path)
    if target.kind != "repro":
        from contribkit.core.errors import BadInput

        raise BadInput(
            f"{path} is a test file, not a repro",
            hint="pass a repro folder made by `contribkit repro`, e.g. repros/issue-170398",
        )
    folder = target.path.parent
    name = folder.name if target.path.name == "repro.py" else target.path.stem
    meta = _meta(folder / "meta.json")
    number = meta.get("number")
    devices = _texts(meta.get("devices_needed"))
    default = meta.get("default_device")
    return ReproFacts(
        target=target,
        name=name,
        issue=number if isinstance(number, int) and not isinstance(number, bool) else None,
        title=_text(meta.get("title")),
        url=_text(meta.get("url")),
        default_device=(
            str(default).split(":", 1)[0]
            if isinstance(default, str) and default
            else (devices[0].split(":", 1)[0] if devices else "cpu")
        ),
        oracles=_texts(meta.get("oracles")),
        oracles_why=_texts(meta.get("oracles_why")),
        expect=_expect(meta.get("expect")),
    )


def _meta(path: Path) -> dict[str, object]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        warn(f"{path}: ignored ({exc})")
        return {}
    return data if isinstance(data, dict) else {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _texts(value: object) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _expect(value: object) -> str | None:
    """The stored ``--expect`` oracle as the user wrote it: a string (``error:ValueError``), or
    an object with its kind and argument (``{"kind": "error", "text": "…"}``)."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict) and isinstance(value.get("kind"), str):
        arg = next((v for k, v in value.items() if k != "kind" and isinstance(v, str | int)), None)
        return f"{value['kind']}:{arg}" if arg not in (None, "") else str(value["kind"])
    return None
