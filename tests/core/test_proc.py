"""Child processes: scrubbed environments, process-group kills, capped logs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contribkit.core.proc import is_secret, run_child, scrubbed_env
from tests.runhelpers import alive, wait_dead


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
    result = run_child([sys.executable, "-c", script], env=scrubbed_env(), timeout=2)
    assert result.timed_out and result.returncode is None  # killed, not waited for
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


# Each child signals its parent as soon as it runs, so the signal lands wherever the parent is:
# still inside Popen, registering the child, opening its log, starting the reader, or waiting.
_SIGNAL_AT_START = """
import os, sys, time
from pathlib import Path
from contribkit.core.proc import run_child, scrubbed_env
folder = Path(sys.argv[1])
for i in range(int(sys.argv[2])):
    pidfile = folder / f"{i}.pid"
    cmd = f"echo $$ > {pidfile}; kill -{sys.argv[3]} $PPID; exec sleep 300"
    try:
        run_child(["/bin/sh", "-c", cmd], env=scrubbed_env(), log_path=folder / f"{i}.log")
        print("returned", i)
    except BaseException as exc:
        print(type(exc).__name__, i)
"""


@pytest.mark.parametrize("signame", ["INT", "TERM"])
def test_a_signal_while_the_child_starts_still_kills_it(tmp_path: Path, signame: str) -> None:
    """Ctrl-C or SIGTERM that comes before run_child reaches its wait (a loaded machine makes
    that window long) must not leave the child running."""
    runs = 20
    script = (  # SIGTERM raises Terminated, as under the CLI (which does it once a process)
        "import signal\n"
        "from contribkit.core.errors import Terminated\n"
        "def terminate(signum, frame):\n    raise Terminated(signum)\n"
        "signal.signal(signal.SIGTERM, terminate)\n" + _SIGNAL_AT_START
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), str(runs), signame],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    expected = "KeyboardInterrupt" if signame == "INT" else "Terminated"
    assert proc.stdout.split() == [w for i in range(runs) for w in (expected, str(i))]
    survivors = [
        pid
        for pid in (int((tmp_path / f"{i}.pid").read_text()) for i in range(runs))
        if not wait_dead(pid, 5)
    ]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == []


# A leg that another thread is starting (inside Popen, not yet registered) is a marked child of
# contribkit's, like an orphan: ending orphans then must wait, not kill it.
_END_ORPHANS_WHILE_STARTING = """
import subprocess, threading
from contribkit.core import proc
started, go = threading.Event(), threading.Event()

class Paused(subprocess.Popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        started.set()
        go.wait(30)

subprocess.Popen = Paused
env = dict(proc.scrubbed_env(), CK_TEST_MARK="1")
results = []
cmd = ["/bin/sh", "-c", "sleep 0.3; echo alive"]
thread = threading.Thread(target=lambda: results.append(proc.run_child(cmd, env=env)))
thread.start()
started.wait(30)
print("ended", proc.end_orphans(b"CK_TEST_MARK=1"))
go.set()
thread.join()
print("leg", results[0].returncode, results[0].output.strip())
"""


def test_orphans_are_not_ended_while_another_leg_starts() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _END_ORPHANS_WHILE_STARTING],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["ended 0", "leg 0 alive"]
