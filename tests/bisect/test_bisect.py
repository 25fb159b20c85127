"""``contribkit bisect`` on a real git history: a small pure-Python package (``tinyvec``) that a
commit in the middle breaks, with commits whose build fails, and a repro made by the real
``contribkit repro --from-file``. The interpreter is a venv with a stand-in torch whose
sys.path holds the checkout (a ``.pth`` file, as an editable install writes), so each step
runs the checked-out code, through the same leg runner as ``contribkit run``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from contribkit.bisect.gitbisect import estimated_steps, pr_number
from contribkit.bisect.step import BAD, GOOD, SKIP, classify
from contribkit.run.record import Cell
from tests import sweephelpers as sh
from tests.conftest import RunCli
from tests.runhelpers import wait_dead

COMMITS, BUG_AT, UNBUILDABLE = 16, 11, frozenset({3, 7, 8})


@dataclass
class History:
    repo: Path
    shas: list[str]
    python: str
    repro: Path  # repros/issue-7 inside the checkout, untracked, as `repro` leaves it
    env: dict[str, str]


@pytest.fixture
def history(tmp_path: Path, run_cli: RunCli, shared_cache: str) -> History:
    repo = tmp_path / "tinyvec"
    shas = sh.make_history(repo, COMMITS, BUG_AT, UNBUILDABLE)
    python = sh.venv(tmp_path / "venv", [str(repo)])
    sh.write_standin_torch(sh.site_packages(tmp_path / "venv"), "2.9.0")
    issue = tmp_path / "issue.md"
    issue.write_text(sh.TINYVEC_ISSUE)
    env = {"CONTRIBKIT_CACHE_DIR": shared_cache}
    made = run_cli("repro", "--from-file", str(issue), "-o", "repros/issue-7", cwd=repo, env=env)
    assert made.returncode == 0, made.stderr
    return History(repo, shas, str(python), repo / "repros" / "issue-7", env)


def bisect(run_cli: RunCli, h: History, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("bisect", "repros/issue-7", "--python", h.python, *args, cwd=h.repo, env=h.env)


def assert_restored(h: History, branch: str = "main") -> None:
    git = sh.git
    assert git(h.repo, "symbolic-ref", "--short", "HEAD") == branch
    assert git(h.repo, "rev-parse", "HEAD") == h.shas[-1]
    assert not (h.repo / ".git" / "BISECT_START").exists()
    assert git(h.repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert (h.repro / "repro.py").is_file()


def test_names_the_culprit_and_skips_unbuildable_commits(run_cli: RunCli, history: History) -> None:
    h = history
    before = (h.repro / "repro.py").read_text()
    proc = bisect(
        run_cli, h, "--good", h.shas[0], "--bad", "main", "--build-cmd", "sh build.sh", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    assert result["status"] == "found"
    culprit = result["culprit"]
    assert culprit["sha"] == h.shas[BUG_AT]
    assert culprit["subject"] == "Make tinyvec.norm faster"
    assert culprit["pr"] == 4242
    assert culprit["author"] == "Test Contributor <contributor@example.com>"
    order = {sha: k for k, sha in enumerate(h.shas)}
    for step in result["steps"]:  # every mark agrees with the history
        k = order[step["commit"]["sha"]]
        want = "skip" if k in UNBUILDABLE else ("bad" if k >= BUG_AT else "good")
        assert (k, MARK[step["code"]]) == (k, want), step
    skipped = {order[s["commit"]["sha"]] for s in result["skipped"]}
    assert skipped and skipped <= UNBUILDABLE
    assert all(s["why"] == "build failed (exit 1)" for s in result["skipped"])
    assert [c["role"] for c in result["checks"]] == ["bad", "good"]
    assert result["range_size"] == COMMITS - 1 and result["estimated_steps"] == 4
    assert proc.stderr == ""  # --json: nothing but the JSON
    assert_restored(h)
    assert (h.repro / "repro.py").read_text() == before
    record = json.loads((h.repo / result["record_path"]).read_text())
    assert record["culprit"]["sha"] == h.shas[BUG_AT]
    step_log = h.repo / result["steps"][-1]["log_path"]
    assert "contribkit-verdict:" in step_log.read_text()


MARK = {GOOD: "good", BAD: "bad", SKIP: "skip"}


def test_prints_each_step_then_the_culprit(run_cli: RunCli, history: History) -> None:
    h = history
    proc = bisect(run_cli, h, "--good", h.shas[4], "--bad", "HEAD", "--no-build")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0].startswith("bisect repros/issue-7: 11 commit(s) after good ")
    assert (
        out[1]
        == "oracle: signature: the issue reports the error ValueError: norm went negative: -5.0"
    )
    assert out[3].split()[:3] == ["bad", h.shas[-1][:10], "Change"]
    assert "REPRODUCED [signature] ValueError: norm went negative: -5.0" in out[3]
    assert out[4].split()[:2] == ["good", h.shas[4][:10]]
    assert f"first bad commit: {h.shas[BUG_AT]}" in out
    assert "  PR:      #4242" in out
    assert "  subject: Make tinyvec.norm faster" in out
    assert "restored: branch main at " + h.shas[-1][:10] in out
    # Not a terminal: one plain progress line per step on stderr, the ends included.
    lines = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert lines[0].startswith("[1/") and " steps, " in lines[0]
    assert len(lines) == sum(
        1 for line in out if line.split()[0] in ("bad", "good") or line.split()[0].isdigit()
    )
    assert_restored(h)


def test_dry_run_prints_the_range_and_checks_nothing_out(run_cli: RunCli, history: History) -> None:
    h = history
    proc = bisect(run_cli, h, "--good", h.shas[0], "--bad", "HEAD", "--no-build", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "15 commit(s) after good" in proc.stdout and "roughly 4 step(s)" in proc.stdout
    assert proc.stdout.rstrip().endswith("dry run: nothing was checked out")
    assert not (h.repo / ".contribkit" / "bisect").exists()
    assert_restored(h)


def test_refuses_a_dirty_tree_and_bad_options(run_cli: RunCli, history: History) -> None:
    h = history
    (h.repo / "history.txt").write_text("edited\n")
    proc = bisect(run_cli, h, "--good", h.shas[0], "--bad", "HEAD", "--no-build")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == (
        "contribkit: error: the working tree has uncommitted changes (history.txt); bisect "
        "checks out other commits"
    )
    sh.git(h.repo, "checkout", "--", "history.txt")
    for args, message in (
        (["--good", h.shas[0], "--bad", "HEAD"], "say how each commit is built"),
        (["--good", "HEAD", "--bad", h.shas[0], "--no-build"], "is not an ancestor of --bad"),
        (["--good", "nosuchrev", "--bad", "HEAD", "--no-build"], "names no commit here"),
    ):
        proc = bisect(run_cli, h, *args)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    assert_restored(h)


def test_stops_when_an_end_is_not_as_stated(run_cli: RunCli, history: History) -> None:
    """--good at a commit that reproduces: the reason, exit 1, the branch back."""
    h = history
    proc = bisect(run_cli, h, "--good", h.shas[BUG_AT + 1], "--bad", "HEAD", "--no-build", "--json")
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert result["status"] == "ends"
    assert result["reason"].startswith(
        f"--good {h.shas[BUG_AT + 1][:10]} does not pass: REPRODUCED"
    )
    assert result["steps"] == []
    assert_restored(h)


def test_restores_a_detached_head(run_cli: RunCli, history: History) -> None:
    h = history
    sh.git(h.repo, "checkout", "-q", "--detach", h.shas[-1])
    proc = bisect(run_cli, h, "--good", h.shas[9], "--bad", "HEAD", "--no-build")
    assert proc.returncode == 0, proc.stderr
    assert f"first bad commit: {h.shas[BUG_AT]}" in proc.stdout
    assert sh.git(h.repo, "rev-parse", "HEAD") == h.shas[-1]
    assert sh.git(h.repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert (
        subprocess.run(
            ["git", "symbolic-ref", "-q", "HEAD"], cwd=h.repo, capture_output=True
        ).returncode
        == 1
    )  # still detached


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_bisect_restores_the_branch(
    history: History, tmp_path: Path, signum: int, code: int
) -> None:
    """The third build (the first step after the two ends) hangs; the signal comes while it
    does, inside `git bisect`: the build's process group dies and the branch comes back."""
    h = history
    ready, pidfile, count = tmp_path / "ready", tmp_path / "build.pid", tmp_path / "count"
    hang = tmp_path / "hang.sh"
    hang.write_text(
        f'n=$(cat "{count}" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "{count}"\n'
        f'if [ "$n" -ge 3 ]; then echo $$ > "{pidfile}"; touch "{ready}"; exec sleep 300; fi\n'
    )
    env = {**os.environ, **h.env}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "contribkit",
            "bisect",
            "repros/issue-7",
            "--python",
            h.python,
            "--good",
            h.shas[0],
            "--bad",
            "HEAD",
            "--build-cmd",
            f"sh build.sh && sh {hang}",
        ],
        cwd=h.repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists(), proc.communicate()
        assert (h.repo / ".git" / "BISECT_START").exists()  # mid-bisect
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert wait_dead(int(pidfile.read_text()))
    assert err.splitlines()[-1].startswith(
        ("contribkit: error: interrupted", "contribkit: error: terminated by SIGTERM")
    )
    assert "restored:" not in out
    assert_restored(h)


def test_a_build_that_changes_tracked_files_does_not_stop_the_bisect(
    run_cli: RunCli, history: History
) -> None:
    """A build that rewrites a tracked file (a generated header, a version file) would make
    every later checkout refuse; what the build changed is put back before each checkout, said
    in a note, and the tree ends as clean as it started."""
    h = history
    proc = bisect(
        run_cli,
        h,
        "--good",
        h.shas[0],
        "--bad",
        "main",
        "--build-cmd",
        "sh build.sh; echo built >> history.txt",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    assert result["culprit"]["sha"] == h.shas[BUG_AT]
    assert any("history.txt" in note for note in result["notes"]), result["notes"]
    assert_restored(h)


def test_a_checkout_that_git_refuses_is_one_error_line(run_cli: RunCli, history: History) -> None:
    """An untracked file where a commit of the range tracks one (git: "untracked working tree
    files would be overwritten"): one error line naming it, exit 2, the branch back."""
    h = history
    git = sh.git
    (h.repo / "extra.txt").write_text("tracked here\n")
    git(h.repo, "add", "extra.txt")
    git(h.repo, "commit", "-q", "-m", "Add extra.txt")
    with_extra = git(h.repo, "rev-parse", "HEAD")
    git(h.repo, "rm", "-q", "extra.txt")
    git(h.repo, "commit", "-q", "-m", "Drop extra.txt")
    (h.repo / "extra.txt").write_text("mine, untracked\n")
    h.shas.append(git(h.repo, "rev-parse", "HEAD"))  # where assert_restored expects main
    proc = bisect(
        run_cli, h, "--good", h.shas[0], "--bad", with_extra, "--build-cmd", "sh build.sh"
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("contribkit: error: git checkout"), proc.stderr
    assert "extra.txt" in proc.stderr and "internal error" not in proc.stderr
    assert (h.repo / "extra.txt").read_text() == "mine, untracked\n"
    assert_restored(h)


def test_a_different_exception_is_skipped_unless_crash_is_bad(
    run_cli: RunCli, tmp_path: Path, shared_cache: str
) -> None:
    """Commits 5 and 6 raise an unrelated TypeError before the bug lands at 7: skipped, the
    culprit is one of 5, 6, 7 (exit 1, the candidates listed); with --crash-is-bad, 5."""
    repo = tmp_path / "tinyvec"
    shas = sh.make_history(repo, 10, 7, raising=frozenset({5, 6}))
    python = sh.venv(tmp_path / "venv", [str(repo)])
    sh.write_standin_torch(sh.site_packages(tmp_path / "venv"), "2.9.0")
    (tmp_path / "issue.md").write_text(sh.TINYVEC_ISSUE)
    env = {"CONTRIBKIT_CACHE_DIR": shared_cache}
    made = run_cli(
        "repro", "--from-file", str(tmp_path / "issue.md"), "-o", "repros/x", cwd=repo, env=env
    )
    assert made.returncode == 0, made.stderr
    args = [
        "bisect",
        "repros/x",
        "--python",
        str(python),
        "--good",
        shas[0],
        "--bad",
        "HEAD",
        "--no-build",
    ]
    proc = run_cli(*args, "--json", cwd=repo, env=env)
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "ambiguous" and result["culprit"] is None
    assert {c["sha"] for c in result["candidates"]} == {shas[5], shas[6], shas[7]}
    assert all("different error: got TypeError" in s["why"] for s in result["skipped"])
    text = run_cli(*args, cwd=repo, env=env)
    assert "the first bad commit is one of 3 (skipped) commits:" in text.stdout
    crash = run_cli(*args, "--crash-is-bad", "--json", cwd=repo, env=env)
    assert crash.returncode == 0, crash.stderr
    assert json.loads(crash.stdout)["culprit"]["sha"] == shas[5]
    assert sh.git(repo, "symbolic-ref", "--short", "HEAD") == "main"


def test_step_codes() -> None:
    """The map from a repro leg's cell to git bisect's codes (the table in bisect/step.py)."""

    def cell(status: str, detail: str, verdict: str | None = None) -> Cell:
        return Cell("repro.py", "repro", "cpu", 1, status, detail, verdict=verdict)

    other = "CANNOT_RUN: different error: got KeyError: 'x'; the issue reports ValueError: y"
    crash = "CANNOT_RUN: the process was killed by SIGSEGV; the issue reports no crash"
    module = "CANNOT_RUN: different error: got ModuleNotFoundError: No module named 'torch._C'"
    cases = [
        (cell("NOT_REPRODUCED", "completed"), False, GOOD),
        (cell("REPRODUCED", "ValueError: y"), False, BAD),
        (cell("ERROR", other, "CANNOT_RUN"), False, SKIP),
        (cell("ERROR", other, "CANNOT_RUN"), True, BAD),
        (cell("ERROR", crash, "CANNOT_RUN"), True, BAD),
        (cell("ERROR", module, "CANNOT_RUN"), True, SKIP),
        (
            cell("ERROR", "CANNOT_RUN: torch is not importable: ImportError: x", "CANNOT_RUN"),
            True,
            SKIP,
        ),
        (cell("ERROR", "CANNOT_RUN: timed out after 300 s", "CANNOT_RUN"), True, SKIP),
        (cell("TIMEOUT", "killed after 900s"), True, SKIP),
        (cell("ERROR", "no verdict line (exit 2)"), True, SKIP),
    ]
    for given, crash_is_bad, want in cases:
        assert classify(given, crash_is_bad)[0] == want, (given.detail, crash_is_bad)


def test_pr_numbers_and_estimates() -> None:
    assert pr_number("Fix x (#170398)\n\nbody") == 170398
    ghstack = "Fix x\n\nPull Request resolved: https://github.com/pytorch/pytorch/pull/169001\n"
    assert pr_number(ghstack) == 169001
    assert pr_number("Fix x (#1) in the middle of (#2) nothing\n") is None
    assert [estimated_steps(n) for n in (1, 2, 3, 4, 15, 16, 17, 1000)] == [0, 1, 2, 2, 4, 4, 5, 10]
