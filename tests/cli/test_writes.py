"""Multi-file outputs are written all-or-nothing, with the user's umask: a lone surrogate or a
full disk leaves nothing behind, and a retry works."""

from __future__ import annotations

import os
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from contribkit.core.errors import BadInput
from contribkit.core.fsutil import atomic_write, write_all


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_lone_surrogate_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "repros" / "issue-1"
    files = [(target / "repro.py", "print(1)\n", 0o755), (target / "issue.md", "\ud800", None)]
    with pytest.raises(BadInput, match=r"issue.md: its text holds '\\ud800'"):
        write_all(files)
    assert leftovers(tmp_path) == []
    write_all([*files[:1], (target / "issue.md", "fine\n", None)])  # the retry works
    assert leftovers(target) == ["issue.md", "repro.py"]


def test_an_existing_folder_keeps_its_files_when_a_write_fails(tmp_path: Path) -> None:
    (tmp_path / "repro.py").write_text("old\n")
    files = [(tmp_path / "repro.py", "new\n", None), (tmp_path / "meta.json", "\udfff", None)]
    with pytest.raises(BadInput):
        write_all(files, force=True)
    assert (tmp_path / "repro.py").read_text() == "old\n"
    assert leftovers(tmp_path) == ["repro.py"]


def test_a_surrogate_in_an_issue_still_makes_a_repro(run_cli_env: None, tmp_path: Path) -> None:
    saved = tmp_path / "issue.json"
    saved.write_text('{"title": "bad \\ud800 title", "body": "text \\udc00 here", "number": 3}')
    proc = _cli("repro", "--from-file", str(saved), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "\ufffd" in (tmp_path / "repros/issue-3/issue.md").read_text(encoding="utf-8")


def _cli(*args: str, cwd: Path, fsize: int | None = None, umask: int | None = None) -> Completed:
    def limit() -> None:
        if fsize is not None:  # a full disk: writes past fsize bytes fail with EFBIG
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        if umask is not None:
            os.umask(umask)

    return subprocess.run(
        [sys.executable, "-m", "contribkit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=300,
    )


Completed = subprocess.CompletedProcess[str]


@pytest.fixture
def run_cli_env() -> None:
    """The autouse isolation (conftest) is all these subprocesses need."""


def test_a_full_disk_leaves_nothing_behind_and_a_retry_works(
    run_cli_env: None, tmp_path: Path
) -> None:
    probe = tmp_path / "probe"
    assert _cli("repro", "--example", "-o", str(probe), cwd=probe.parent).returncode == 0
    sizes = sorted(p.stat().st_size for p in probe.iterdir())
    assert len(sizes) >= 3 and sizes[0] < sizes[-1]
    disk = tmp_path / "disk"
    disk.mkdir()
    out = disk / "out"
    # the smaller files fit, the largest does not: the disk fills up half-way
    proc = _cli("repro", "--example", "-o", str(out), cwd=disk, fsize=sizes[-1] - 1)
    assert proc.returncode == 1, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("contribkit: error:")]
    assert len(errors) == 1 and f"cannot write {out}" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert leftovers(disk) == [], "nothing left behind, not even a temporary folder"
    retry = _cli("repro", "--example", "-o", str(out), cwd=disk)
    assert retry.returncode == 0, retry.stderr
    assert {"repro.py", "issue.md", "meta.json"} <= set(leftovers(out))


@pytest.mark.parametrize(
    ("umask", "plain", "script"), [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700)]
)
def test_files_get_the_users_umask(
    run_cli_env: None, tmp_path: Path, umask: int, plain: int, script: int
) -> None:
    proc = _cli("repro", "--example", "-o", "out", cwd=tmp_path, umask=umask)
    assert proc.returncode == 0, proc.stderr
    mode = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "out").iterdir()}
    assert mode["repro.py"] == script and mode["issue.md"] == plain
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o777 & ~umask


def test_a_secret_is_written_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o002)
    try:
        atomic_write(tmp_path / "public", "x")
        atomic_write(tmp_path / "secret", "x", mode=0o600)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "public").stat().st_mode) == 0o664
    assert stat.S_IMODE((tmp_path / "secret").stat().st_mode) == 0o600
