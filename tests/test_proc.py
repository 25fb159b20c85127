"""Child processes: scrubbed environments, process-group kills, capped logs."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from contribkit.core.proc import is_secret, run_child, scrubbed_env
from tests.runhelpers import alive


def test_scrubbed_env_removes_documented_secrets() -> None:
    base = {
        "GH_TOKEN": "x",
        "GITHUB_TOKEN": "x",
        "NPM_TOKEN": "x",
        "MY_SECRET_THING": "x",
        "DB_PASSWORD_2": "x",
        "OPENAI_API_KEY": "x",
        "AWS_PROFILE": "x",
        "CORP_VAR": "x",
        "PATH": "/bin",
        "HOME": "/home/me",
        "KEYBOARD": "us",
        "TORCH_LOGS": "dynamo",
    }
    env = scrubbed_env(base, extra_patterns=["CORP_*"], overrides={"CONTRIBKIT_DEVICE": "cpu"})
    assert env == {
        "PATH": "/bin",
        "HOME": "/home/me",
        "KEYBOARD": "us",
        "TORCH_LOGS": "dynamo",
        "CONTRIBKIT_DEVICE": "cpu",
    }
    assert is_secret("gh_token")


def test_child_sees_no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GH_TOKEN", "ghp_supersecret")
    result = run_child(
        [sys.executable, "-c", "import os; print(sorted(os.environ))"], env=scrubbed_env()
    )
    assert result.returncode == 0
    assert "GH_TOKEN" not in result.output and "ghp_supersecret" not in result.output


def test_stdin_is_closed() -> None:
    result = run_child(
        [sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"], env=scrubbed_env()
    )
    assert result.output.strip() == "''"


def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(600)\n"
    )
    start = time.monotonic()
    result = run_child([sys.executable, "-c", script], env=scrubbed_env(), timeout=2)
    assert result.timed_out and result.returncode is None
    assert time.monotonic() - start < 30
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)


def test_log_is_capped(tmp_path: Path) -> None:
    log = tmp_path / "leg.log"
    result = run_child(
        [sys.executable, "-c", "print('x' * 100000)"],
        env=scrubbed_env(),
        log_path=log,
        log_cap=1000,
    )
    assert result.returncode == 0 and result.log_truncated
    text = log.read_text()
    assert text.startswith("x" * 1000) and "log truncated at 1000 bytes" in text
    assert len(result.output.strip()) == 100000
