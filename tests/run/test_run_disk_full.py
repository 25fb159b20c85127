"""A full disk during `run` ends the run at once, on one line, exit 1: the leg's log cannot be
written (ENOSPC on a full file system, EFBIG past a file size limit; EDQUOT is the same path).
Before, the output pump died with a raw traceback and the leg blocked on its full pipe until its
timeout. Real `contribkit run`, a real leg, a real full disk: a 1 MB tmpfs where one can be
mounted (root), and RLIMIT_FSIZE, which any process may lower, everywhere."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from contribkit.target.reprolib import VERDICT_PREFIX
from tests.github.test_github_limits import one_error
from tests.runhelpers import write

# Prints 3 MB, then would wait an hour: only a killed leg ends the run before its --timeout.
LOUD = textwrap.dedent(f"""\
    import sys, time
    for i in range(3 * 1024):
        sys.stdout.write(("%05d " % i) + "x" * 1018 + "\\n")
    sys.stdout.flush()
    time.sleep(3600)
    print("{VERDICT_PREFIX} NOT_REPRODUCED never")
""")
LIMIT = 1024 * 1024
RUN_OPTIONS = ("--devices", "cpu", "--timeout", "120")


def fsize_limit() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))  # Python ignores SIGXFSZ: EFBIG


@pytest.fixture
def small_disk(fork_repo: Path) -> Iterator[Path]:
    """The run's log folder on a 1 MB tmpfs (needs root, or CAP_SYS_ADMIN)."""
    runs = fork_repo / ".contribkit" / "runs"
    runs.mkdir(parents=True)
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(runs)],
        capture_output=True,
        text=True,
    )
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mount.stderr.strip() or mount.returncode}")
    try:
        yield runs
    finally:
        subprocess.run(["umount", "-l", str(runs)], check=False)


def run_loud(fork_repo: Path, shared_cache: str, preexec: Callable[[], None] | None) -> str:
    """``contribkit run`` of the loud repro, unconfined so that the leg is a plain child; the
    leg's own --timeout (120 s) stops a run the fault does not end; returns its stderr."""
    write(fork_repo, "repros/loud/repro.py", LOUD)
    proc = subprocess.run(
        [sys.executable, "-m", "contribkit", "run", "repros/loud", *RUN_OPTIONS],
        cwd=fork_repo,
        env={
            **os.environ,
            "CONTRIBKIT_CACHE_DIR": shared_cache,
            "CONTRIBKIT_RUN_SANDBOX": "none",
        },
        capture_output=True,
        text=True,
        preexec_fn=preexec,
        timeout=400,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "TIMEOUT" not in proc.stdout, proc.stdout
    return proc.stderr


def check_one_line(root: Path, stderr: str, why: str) -> None:
    error = one_error(stderr)
    assert "cannot write the log " in error and "repros_loud_repro.py" in error, stderr
    assert f": {why}; its child was stopped" in error, stderr
    assert not list((root / ".contribkit" / "runs").glob("*.json"))  # nothing half-done recorded


@pytest.mark.slow
def test_a_file_size_limit_ends_the_run_on_one_line(fork_repo: Path, shared_cache: str) -> None:
    stderr = run_loud(fork_repo, shared_cache, fsize_limit)
    check_one_line(fork_repo, stderr, "File too large")


@pytest.mark.slow
def test_a_full_disk_ends_the_run_on_one_line(
    fork_repo: Path, shared_cache: str, small_disk: Path
) -> None:
    stderr = run_loud(fork_repo, shared_cache, None)
    check_one_line(fork_repo, stderr, "No space left on device")


@pytest.mark.slow
def test_a_record_the_disk_refuses_is_one_line_naming_it(
    fork_repo: Path, shared_cache: str
) -> None:
    """The leg's log fits, the run record (a few KB) does not: no internal error, no record."""
    write(fork_repo, "repros/quiet/repro.py", f'print("{VERDICT_PREFIX} NOT_REPRODUCED quiet")\n')

    def tiny() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    proc = subprocess.run(
        [sys.executable, "-m", "contribkit", "run", "repros/quiet", *RUN_OPTIONS],
        cwd=fork_repo,
        env={**os.environ, "CONTRIBKIT_CACHE_DIR": shared_cache, "CONTRIBKIT_RUN_SANDBOX": "none"},
        capture_output=True,
        text=True,
        preexec_fn=tiny,
        timeout=400,
    )
    assert proc.returncode == 1, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("contribkit: error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "cannot write " in errors[0] and ".json: File too large" in errors[0]
    assert "internal error" not in proc.stderr
    assert not list((fork_repo / ".contribkit" / "runs").glob("*.json"))
