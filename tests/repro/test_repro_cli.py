"""`contribkit repro` end to end: the real CLI in a subprocess, the loopback GitHub, real torch."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from contribkit.core.verdict import RUNTIME_FILE
from tests.conftest import RunCli
from tests.fakegithub import FakeGitHub

CRASH_BODY = """### 🐛 Describe the bug

Casting in `index_add_` does not follow the arithmetic ops.

```python
import torch
device = "cuda"
counts = torch.zeros(4, dtype=torch.long, device=device)
counts.index_add_(0, torch.tensor([1], device=device), torch.tensor([2.5], device=device))
```

```
Traceback (most recent call last):
  File "t.py", line 4, in <module>
RuntimeError: index_add_(): self (Long) and source (Float) must have the same scalar type
```

### Versions

PyTorch version: 2.12.0
Is CUDA available: True
"""


def one_line_error(proc: subprocess.CompletedProcess[str], code: int, needle: str) -> None:
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    errors = [ln for ln in lines if ln.startswith("contribkit: error: ")]
    assert len(errors) == 1 and needle in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_fetch_write_and_run(run_cli: RunCli, fork_repo: Path, fake_github: FakeGitHub) -> None:
    fake_github.add_issue(
        "pytorch/pytorch",
        321,
        title="index_add_ casting",
        body=CRASH_BODY,
        labels=["module: scatter & gather ops"],
    )
    proc = run_cli("repro", "321", "--github-url", fake_github.url, cwd=fork_repo)
    assert proc.returncode == 0, proc.stderr
    out = fork_repo / "repros" / "issue-321"
    assert {p.name for p in out.iterdir()} == {
        "repro.py",
        "_contribkit_runtime.py",
        "issue.md",
        "meta.json",
    }
    assert "signature:  RuntimeError: index_add_(): self (Long)" in proc.stdout
    assert "next:       contribkit run repros/issue-321" in proc.stdout
    assert "anonymous requests" in proc.stdout + proc.stderr  # the 60/hour warning
    meta = json.loads((out / "meta.json").read_text())
    assert (
        meta["number"] == 321
        and meta["kind"] == "crash"
        and meta["devices_needed"] == ["cpu", "cuda"]
    )
    assert meta["reporter_env"]["torch_version"] == "2.12.0"
    assert "/repros/" in (fork_repo / ".git" / "info" / "exclude").read_text()
    assert "CASTING IN".lower() in (out / "issue.md").read_text().lower()
    # never overwrite; --force does; --dry-run writes nothing
    again = run_cli("repro", "321", "--github-url", fake_github.url, cwd=fork_repo)
    one_line_error(again, 2, "already exists")
    assert "--force" in again.stderr
    dry = run_cli(
        "repro", "321", "--github-url", fake_github.url, "--dry-run", "--json", cwd=fork_repo
    )
    assert (
        dry.returncode == 0 and json.loads(dry.stdout)["files"][str(out / "repro.py")] == "exists"
    )
    forced = run_cli(
        "repro", "pytorch/pytorch#321", "--github-url", fake_github.url, "--force", cwd=fork_repo
    )
    assert forced.returncode == 0, forced.stderr
    offline = run_cli(
        "repro",
        "321",
        "--offline",
        "--stdout",
        cwd=fork_repo,
        env={"CONTRIBKIT_GITHUB_URL": fake_github.url},
    )
    assert offline.returncode == 0 and offline.stdout.startswith("#!/usr/bin/env python3")


@pytest.mark.slow
def test_a_fetched_repro_runs_on_cpu_through_the_device_switch(
    run_cli: RunCli, fork_repo: Path, fake_github: FakeGitHub
) -> None:
    """Never run at generation time: the script test_fetch_write_and_run writes, run on CPU."""
    fake_github.add_issue("pytorch/pytorch", 321, title="index_add_ casting", body=CRASH_BODY)
    proc = run_cli("repro", "321", "--github-url", fake_github.url, cwd=fork_repo)
    assert proc.returncode == 0, proc.stderr
    script = fork_repo / "repros" / "issue-321" / "repro.py"
    run = subprocess.run(
        [sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True
    )
    assert run.returncode == 1
    assert (
        run.stdout.strip()
        .splitlines()[-1]
        .startswith("contribkit-verdict: REPRODUCED [signature] RuntimeError")
    )


def test_from_stdin_and_example(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli(
        "repro",
        "--from-file",
        "-",
        "--json",
        "-o",
        str(tmp_path / "r"),
        input=CRASH_BODY,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["kind"] == "crash" and (tmp_path / "r" / "repro.py").is_file()
    example = run_cli("repro", "--example", "--stdout", cwd=tmp_path)
    assert example.returncode == 0 and "contribkit/example#4242" in example.stdout


def test_dry_run_writes_nothing(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli("repro", "--example", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0 and "would write" in proc.stdout
    assert not (tmp_path / "repros").exists()


def test_no_code_issue_says_incomplete(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli(
        "repro",
        "--from-file",
        "-",
        "-o",
        str(tmp_path / "r"),
        input="It is slow. Please fix.\n",
        cwd=tmp_path,
    )
    assert proc.returncode == 0
    assert "INCOMPLETE" in proc.stdout


@pytest.mark.slow
def test_a_no_code_repro_runs_to_incomplete(run_cli: RunCli, tmp_path: Path) -> None:
    """The script for an issue without code imports torch, then says it cannot run."""
    out = tmp_path / "r"
    proc = run_cli("repro", "--from-file", "-", "-o", str(out), input="It is slow. Please fix.\n")
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([sys.executable, str(out / "repro.py")], capture_output=True, text=True)
    assert run.returncode == 125 and "INCOMPLETE" in run.stdout


@pytest.mark.parametrize(
    ("setup", "args", "code", "needle"),
    [
        (lambda f: None, ["999"], 2, "issue #999 in pytorch/pytorch not found"),
        (
            lambda f: f.add_issue("pytorch/pytorch", 5, pull_request=True),
            ["5"],
            2,
            "is a pull request",
        ),
        (lambda f: f.rate_limit(), ["7"], 4, "rate limit exceeded"),
        (lambda f: None, ["abc"], 2, "'abc' is not an issue number"),
        (lambda f: None, ["https://github.com/pytorch/pytorch/pull/3"], 2, "is a pull request"),
        (lambda f: None, ["5", "--example"], 2, "exactly one of ISSUE"),
        (lambda f: None, [], 2, "exactly one of ISSUE"),
        (lambda f: None, ["5", "--offline"], 2, "not in the cache"),
    ],
)
def test_bad_input_one_line(
    run_cli: RunCli,
    tmp_path: Path,
    fake_github: FakeGitHub,
    setup: Callable[[FakeGitHub], object],
    args: list[str],
    code: int,
    needle: str,
) -> None:
    setup(fake_github)
    proc = run_cli("repro", *args, "--github-url", fake_github.url, cwd=tmp_path)
    one_line_error(proc, code, needle)
    assert not (tmp_path / "repros").exists()


def test_network_down_without_cache(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli("repro", "5", "--github-url", "http://127.0.0.1:9", cwd=tmp_path)
    one_line_error(proc, 1, "cannot reach GitHub")


def test_empty_input_is_bad_input(run_cli: RunCli, tmp_path: Path) -> None:
    empty = tmp_path / "empty.md"
    empty.write_text("\n  \n")
    one_line_error(run_cli("repro", "--from-file", str(empty), cwd=tmp_path), 2, "is empty")
    one_line_error(
        run_cli("repro", "--from-file", "-", input="", cwd=tmp_path), 2, "<stdin> is empty"
    )
    assert not (tmp_path / "repros").exists()


def test_bad_files(run_cli: RunCli, tmp_path: Path) -> None:
    latin = tmp_path / "latin.md"
    latin.write_bytes(b"caf\xe9 au lait\n")
    one_line_error(run_cli("repro", "--from-file", str(latin), cwd=tmp_path), 2, "not UTF-8")
    one_line_error(
        run_cli("repro", "--from-file", str(tmp_path / "nope.md"), cwd=tmp_path), 2, "no such file"
    )


def test_cached_render_never_mixes_up_issues(run_cli: RunCli, tmp_path: Path) -> None:
    """The render cache is keyed by the whole issue: same text, different identity or labels."""
    for number, labels in ((31, ["bug"]), (32, ["bug"]), (32, ["bug", "triaged"])):
        saved = tmp_path / f"{number}-{len(labels)}.json"
        saved.write_text(
            json.dumps(
                {
                    "number": number,
                    "repo": "o/r",
                    "title": "same",
                    "body": CRASH_BODY,
                    "labels": labels,
                }
            )
        )
        out = tmp_path / saved.stem
        proc = run_cli("repro", "--from-file", str(saved), "-o", str(out), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        meta = json.loads((out / "meta.json").read_text())
        assert (meta["number"], meta["labels"]) == (number, labels)
        assert f'issue="o/r#{number}"' in (out / "repro.py").read_text()


def test_output_inside_the_repo_hides_only_what_it_wrote(run_cli: RunCli, fork_repo: Path) -> None:
    """`-o` into a tracked folder excludes the written files, never the folder: a new test
    beside them must still show in `git status`."""
    assert run_cli("repro", "--example", "-o", "test/scratch", cwd=fork_repo).returncode == 0
    assert run_cli("repro", "--example", "-o", ".", cwd=fork_repo).returncode == 0
    assert run_cli("repro", "--example", cwd=fork_repo).returncode == 0
    exclude = (fork_repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert "/test/" not in exclude and "/" not in exclude
    assert {"/test/scratch/repro.py", "/repro.py", "/repros/"} <= set(exclude)
    (fork_repo / "test" / "test_new.py").write_text("x = 1\n")
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=fork_repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert status.splitlines() == ["?? test/test_new.py"], status


@pytest.mark.parametrize(
    ("output", "needle"),
    [("/dev/null/x", "Not a directory: /dev/null/x"), ("/proc/x", "/proc/x")],
)
def test_unwritable_output_is_bad_input(
    run_cli: RunCli, tmp_path: Path, output: str, needle: str
) -> None:
    one_line_error(run_cli("repro", "--example", "-o", output, cwd=tmp_path), 2, needle)


def test_repro_force_rewrites_both_files(run_cli: RunCli, fork_repo: Path) -> None:
    assert run_cli("repro", "--example", cwd=fork_repo).returncode == 0
    folder = fork_repo / "repros" / "issue-4242"
    written = {name: (folder / name).read_text() for name in ("repro.py", RUNTIME_FILE)}
    for name in written:
        (folder / name).write_text("# edited\n")
    refused = run_cli("repro", "--example", cwd=fork_repo)
    assert refused.returncode == 2 and "--force" in refused.stderr
    assert run_cli("repro", "--example", "--force", cwd=fork_repo).returncode == 0
    assert {name: (folder / name).read_text() for name in written} == written
