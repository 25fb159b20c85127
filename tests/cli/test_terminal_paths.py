"""No escape sequence or bidi override from an issue reaches stdout or stderr, piped or not, on
any path that prints issue-derived text: repro's summary (and --dry-run), run's matrix, verdict
details and progress, debug's summary, test --from-repro's summary, pr's body and report, and
errors that quote the issue. One hostile issue goes through every command.

The files a command prints on request (``repro --stdout``, ``test --stdout``) are the files as
written, and are left out: a terminal still gets them filtered (test_termsafe.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Ck, RunCli

SGR = "\x1b[31mRED\x1b[0m"
OSC = "\x1b]0;owned\x07"  # retitles the window
C1 = "\u009b2J"  # an 8-bit CSI
RLO = "\u202e"  # right-to-left override: "exe.txt" shows as "txt.exe"
ISOLATE = "\u2066"
HOSTILE = f"{SGR}{OSC}{C1}{RLO}{ISOLATE}"
RAW = ("\x1b", "\x07", "\u009b", RLO, ISOLATE)


def hostile_issue(where: Path) -> Path:
    body = (
        f"Broken {HOSTILE} here\n\n"
        "```python\nimport torch\n"
        f"raise RuntimeError({'bad ' + HOSTILE + ' value'!r})\n```\n\n"
        f'```\nTraceback (most recent call last):\n  File "x.py", line 2\n'
        f"RuntimeError: bad {HOSTILE} value\n```\n\ncc @someone {HOSTILE}\n"
    )
    issue = {
        "number": 77,
        "title": f"relu {HOSTILE} wrong",
        "body": body,
        "labels": [f"module: {HOSTILE}nn"],
        "html_url": "https://github.com/pytorch/pytorch/issues/77",
        "comments": [{"user": {"login": "a"}, "body": f"also {HOSTILE}"}],
    }
    path = where / "hostile.json"
    path.write_text(json.dumps(issue))
    return path


def clean_output(proc: subprocess.CompletedProcess[str], what: str) -> str:
    """stdout and stderr together, once none of RAW is in either."""
    for name, text in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        found = [repr(ch) for ch in RAW if ch in text]
        assert not found, f"{what}: {name} has {', '.join(found)}:\n{text}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout + proc.stderr


def test_repro_summary_and_errors(run_cli: RunCli, fork_repo: Path, tmp_path: Path) -> None:
    issue = str(hostile_issue(tmp_path))
    shown = clean_output(run_cli("repro", "--from-file", issue, cwd=fork_repo), "repro")
    assert "relu RED wrong" in shown and "RuntimeError: bad RED" in shown
    shown = clean_output(
        run_cli("repro", "--from-file", issue, "--dry-run", cwd=fork_repo), "repro --dry-run"
    )
    assert "would write" in shown
    clean_output(run_cli("repro", "--from-file", issue, "--json", "-o", "j", cwd=fork_repo), "json")
    again = run_cli("repro", "--from-file", issue, cwd=fork_repo)  # exists: an error
    assert again.returncode == 2
    clean_output(again, "repro's error")
    meta = json.loads((fork_repo / "repros" / "issue-77" / "meta.json").read_text())
    assert HOSTILE in meta["title"]  # the file keeps the issue's text; only the terminal is spared


def test_pr_body_and_report(run_cli: RunCli, fork_repo: Path, tmp_path: Path) -> None:
    assert run_cli("repro", "--from-file", str(hostile_issue(tmp_path))).returncode == 0
    proc = run_cli("pr", "--issue", "77", "--offline", cwd=fork_repo)
    shown = clean_output(proc, "pr")
    assert proc.returncode == 0, proc.stderr
    assert "relu RED wrong" in shown


def test_debug_summary(ck: Ck, fork_repo: Path, tmp_path: Path) -> None:
    assert ck("repro", "--from-file", str(hostile_issue(tmp_path))).returncode == 0
    script = "repros/issue-77/repro.py"
    proc = ck("debug", "--script", script, "-o", "dbg.sh", "--preset", "trace")
    clean_output(proc, "debug")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
def test_run_and_debug_run_and_test_from_repro(ck: Ck, fork_repo: Path, tmp_path: Path) -> None:
    """The child prints the issue's error, escapes and all: the verdict detail, the matrix, the
    progress line, the failure lines and debug's final exception all quote it."""
    assert ck("repro", "--from-file", str(hostile_issue(tmp_path))).returncode == 0
    unconfined = {"CONTRIBKIT_RUN_SANDBOX": "none"}  # the same output either way; faster
    proc = ck("run", "repros/issue-77", "--devices", "cpu", env=unconfined)
    shown = clean_output(proc, "run")
    assert proc.returncode == 1 and "REPRODUCED" in shown and "RuntimeError: bad RED" in shown
    script = "repros/issue-77/repro.py"
    proc = ck("debug", "--script", script, "-o", "dbg.sh", "--preset", "trace", "--run",
              env=unconfined)  # fmt: skip
    shown = clean_output(proc, "debug --run")
    assert "bad RED" in shown
    proc = ck("test", "--from-repro", "repros/issue-77", "--dry-run")
    clean_output(proc, "test --from-repro")
    # the test file itself (to be committed) escapes the title's controls and overrides
    written = ck("test", "--from-repro", "repros/issue-77", "--stdout")
    assert "Regression test for" in written.stdout
    assert not any(ch in written.stdout for ch in RAW), written.stdout
    assert "\\u202e" in written.stdout  # escaped, so a reader sees it


def test_the_filter_is_not_only_for_terminals(tmp_path: Path) -> None:
    """A file that captures stdout (a CI log, `| tee`) is later shown by a terminal: the
    summary is filtered there too, not only when stdout is a terminal."""
    out = tmp_path / "captured.txt"
    with open(out, "w") as fh:
        subprocess.run(
            [sys.executable, "-m", "contribkit", "repro", "--from-file",
             str(hostile_issue(tmp_path)), "-o", str(tmp_path / "r")],
            stdout=fh,
            stderr=subprocess.STDOUT,
            env=os.environ,
            check=True,
        )  # fmt: skip
    text = out.read_text()
    assert "relu RED wrong" in text and not any(ch in text for ch in RAW)
