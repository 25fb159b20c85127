"""Helpers shared by the run and submit tests (fixtures `ck` and `shared_cache` are in conftest)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from tests.conftest import Ck


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run_json(ck: Ck, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    """``contribkit run --json ARGS`` in the fork: the exit code and the record."""
    proc = ck("run", "--json", *args, env=env)
    assert proc.stdout.strip(), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def cells(record: dict[str, Any]) -> dict[tuple[str, str, int], dict[str, Any]]:
    return {(c["file"], c["device"], c["interpreter"]): c for c in record["cells"]}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False


def wait_dead(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)
