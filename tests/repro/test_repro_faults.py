"""`repro` leaves no half state and writes only where it says: the exclude edit comes before the
write (a locked exclude file stops it first; a failed write takes the lines back), links inside
the repository are never written through, and the caches it fills stay bounded."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from contribkit.core.cache import JsonCache
from tests.conftest import RunCli
from tests.github.test_github_limits import one_error

ISSUE = {
    "number": 12,
    "title": "relu is wrong",
    "body": "```python\nimport torch\nprint(torch.relu(torch.ones(2)))\n```\n",
}


def saved_issue(where: Path) -> Path:
    path = where / "issue-12.json"
    path.write_text(json.dumps(ISSUE))
    return path


def git_status(root: Path) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


# -- the exclude edit and the write, both or neither ----------------------------------------------
def test_a_held_exclude_lock_stops_repro_before_it_writes(
    run_cli: RunCli, fork_repo: Path, tmp_path: Path
) -> None:
    """A lock another process holds (fresh: not a dead writer's) is waited for, then the
    command fails with nothing written; once it is gone the same command writes and excludes."""
    lock = fork_repo / ".git" / "info" / "exclude.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("held\n")
    issue = saved_issue(tmp_path)
    proc = run_cli("repro", "--from-file", str(issue), cwd=fork_repo)
    assert proc.returncode == 1, proc.stderr
    assert "info/exclude is locked by another process" in one_error(proc.stderr)
    assert not (fork_repo / "repros").exists()
    assert git_status(fork_repo) == ""
    lock.unlink()
    proc = run_cli("repro", "--from-file", str(issue), cwd=fork_repo)
    assert proc.returncode == 0, proc.stderr
    assert (fork_repo / "repros" / "issue-12" / "repro.py").is_file()
    assert git_status(fork_repo) == ""  # written, and excluded


def test_a_failed_write_takes_its_exclude_lines_back(
    run_cli: RunCli, fork_repo: Path, tmp_path: Path
) -> None:
    """An existing file without --force, or a folder where a file should be: no new line stays
    in .git/info/exclude, and what was there is untouched."""
    exclude = fork_repo / ".git" / "info" / "exclude"
    before = exclude.read_bytes() if exclude.exists() else b""
    target = fork_repo / "test" / "issue12"
    target.mkdir(parents=True)
    (target / "repro.py").write_text("# mine\n")
    proc = run_cli("repro", "--from-file", str(saved_issue(tmp_path)), "-o", str(target))
    assert proc.returncode == 2 and "already exists" in one_error(proc.stderr)
    assert (exclude.read_bytes() if exclude.exists() else b"") == before
    blocked = fork_repo / "test" / "afile"
    blocked.write_text("a file where a folder would go\n")  # the write itself fails (ENOTDIR)
    out = blocked / "issue12"
    proc = run_cli("repro", "--from-file", str(saved_issue(tmp_path)), "-o", str(out))
    assert proc.returncode == 2, proc.stderr
    one_error(proc.stderr)
    assert (exclude.read_bytes() if exclude.exists() else b"") == before
    assert (target / "repro.py").read_text() == "# mine\n"


# -- links inside the repository ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("link", "force"),
    [
        ("repros/issue-12", True),  # the folder itself, overwritten with --force
        ("repros", False),  # a folder above it: a new folder would land outside
    ],
)
def test_repro_never_writes_through_a_link_in_the_repository(
    run_cli: RunCli, fork_repo: Path, tmp_path: Path, link: str, force: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "repro.py").write_text("# the user's own file\n")
    linked = fork_repo / link
    linked.parent.mkdir(parents=True, exist_ok=True)
    linked.symlink_to(outside, target_is_directory=True)
    args = ["repro", "--from-file", str(saved_issue(tmp_path)), *(["--force"] if force else [])]
    proc = run_cli(*args, cwd=fork_repo)
    assert proc.returncode == 2, proc.stderr
    assert f"{linked} is a symbolic link" in one_error(proc.stderr)
    assert sorted(p.name for p in outside.rglob("*")) == ["repro.py"]
    assert (outside / "repro.py").read_text() == "# the user's own file\n"


def test_a_link_that_stays_inside_is_refused_too(
    run_cli: RunCli, fork_repo: Path, tmp_path: Path
) -> None:
    """The rule is "no link on the way", not "no link out": a link's target can change."""
    (fork_repo / "elsewhere").mkdir()
    (fork_repo / "repros").mkdir()
    (fork_repo / "repros" / "issue-12").symlink_to("../elsewhere", target_is_directory=True)
    proc = run_cli("repro", "--from-file", str(saved_issue(tmp_path)), "--force", cwd=fork_repo)
    assert proc.returncode == 2 and "is a symbolic link" in one_error(proc.stderr)
    assert list((fork_repo / "elsewhere").iterdir()) == []


def test_a_folder_named_outside_the_repository_is_written(
    run_cli: RunCli, fork_repo: Path, tmp_path: Path
) -> None:
    out = tmp_path / "mine"
    proc = run_cli("repro", "--from-file", str(saved_issue(tmp_path)), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert (out / "repro.py").is_file()


# -- bounded caches -------------------------------------------------------------------------------
def test_a_cache_keeps_its_most_recently_used_entries(tmp_path: Path) -> None:
    cache = JsonCache(tmp_path, "renders", max_entries=3)
    for i in range(3):
        cache.put(f"k{i}", {"i": i})
        os.utime(cache.path(f"k{i}"), (1000 + i, 1000 + i))  # k0 oldest
    assert cache.get("k0") == {"i": 0, "key": "k0"}  # a read makes it the newest
    cache.put("k3", {"i": 3})
    kept = {k for k in ("k0", "k1", "k2", "k3") if cache.get(k) is not None}
    assert kept == {"k0", "k2", "k3"}  # k1, the least recently used, went
    assert len(list(cache.dir.iterdir())) == 3


def test_a_cache_keeps_under_its_byte_bound(tmp_path: Path) -> None:
    cache = JsonCache(tmp_path, "renders", max_bytes=10_000)
    for i in range(20):
        cache.put(f"k{i}", {"text": "x" * 1000})
    sizes = [p.stat().st_size for p in cache.dir.iterdir()]
    assert sum(sizes) <= 10_000 and len(sizes) >= 5
    assert cache.get("k19") is not None  # the newest stays
    huge = JsonCache(tmp_path, "huge", max_bytes=100)
    huge.put("big", {"text": "x" * 1000})  # larger than the bound: not kept
    assert huge.get("big") is None


def test_the_renders_cache_of_repro_is_bounded(run_cli: RunCli, tmp_path: Path) -> None:
    """repro's renders go through the bounded cache: the default bound holds however many
    issues are rendered (here: pre-filled past it with stale entries, then one more render)."""
    from contribkit.core import cache as cache_mod

    renders = Path(os.environ["CONTRIBKIT_CACHE_DIR"]) / "renders"
    renders.mkdir(parents=True, exist_ok=True)
    for i in range(cache_mod.MAX_ENTRIES + 20):
        stale = renders / f"{i:032x}.json"
        stale.write_text('{"key": "stale"}')
        os.utime(stale, (1000, 1000))
    proc = run_cli("repro", "--from-file", str(saved_issue(tmp_path)), "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(list(renders.iterdir())) == cache_mod.MAX_ENTRIES
    assert sum(1 for p in renders.iterdir() if p.stat().st_mtime > 1000) == 1  # the new one
