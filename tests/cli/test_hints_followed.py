"""Each hint of the first hour, followed literally: the command it names succeeds.

A hint is read from what the command printed (never from the source), split into the commands
it names (in backticks, or after "then:"), and run as printed; only a placeholder the hint
spells as such (``N``) is filled in.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import RunCli, commit_files, git

SAVED_BODY = "# index_add_ casting\n\n```python\nimport torch\nprint(torch.ones(2))\n```\n"


def hint_of(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.startswith("hint: ")]
    assert len(lines) == 1, proc.stderr
    return lines[0][len("hint: ") :]


def named_commands(hint: str) -> list[list[str]]:
    """The ``contribkit …`` commands a hint names, as argument lists (``contribkit`` dropped)."""
    found = re.findall(r"`(contribkit [^`]+)`", hint) or re.findall(
        r"(contribkit [^,;`]+?)(?:,|;|$)", hint
    )
    return [shlex.split(command)[1:] for command in found]


def test_a_saved_body_without_a_number_is_refused_with_a_hint_that_works(
    run_cli: RunCli, fork_repo: Path
) -> None:
    (fork_repo / "issue.md").write_text(SAVED_BODY)
    proc = run_cli("repro", "--from-file", "issue.md", cwd=fork_repo)
    assert proc.returncode == 2 and "issue.md holds no issue number" in proc.stderr
    assert not (fork_repo / "repros").exists()  # no repros/issue-issue/
    [command] = named_commands(hint_of(proc))
    followed = run_cli(*[arg if arg != "N" else "170398" for arg in command], cwd=fork_repo)
    assert followed.returncode == 0, followed.stderr
    meta = json.loads((fork_repo / "repros" / "issue-170398" / "meta.json").read_text())
    assert meta["number"] == 170398


def test_a_saved_file_named_by_its_number_names_the_folder(
    run_cli: RunCli, fork_repo: Path
) -> None:
    (fork_repo / "issue-4321.md").write_text(SAVED_BODY)
    proc = run_cli("repro", "--from-file", "issue-4321.md", cwd=fork_repo)
    assert proc.returncode == 0, proc.stderr
    assert (fork_repo / "repros" / "issue-4321" / "repro.py").is_file()
    assert "next:       contribkit run repros/issue-4321 --expect reproduced" in proc.stdout


def test_number_goes_with_from_file(run_cli: RunCli, fork_repo: Path) -> None:
    proc = run_cli("repro", "--example", "--number", "5", cwd=fork_repo)
    assert proc.returncode == 2 and "--number goes with --from-file" in proc.stderr


@pytest.mark.parametrize("ref", ["0", "#0", "pytorch/pytorch#0"])
def test_issue_zero_is_refused_before_any_request(
    run_cli: RunCli, fork_repo: Path, ref: str
) -> None:
    # an address where nothing listens: a request would fail as "cannot reach GitHub"
    proc = run_cli("repro", ref, "--github-url", "http://127.0.0.1:9", cwd=fork_repo)
    assert proc.returncode == 2, proc.stderr
    assert "is not an issue number" in proc.stderr and "cannot reach" not in proc.stderr


def test_offline_hints_name_what_works_offline(run_cli: RunCli, fork_repo: Path) -> None:
    proc = run_cli("repro", "170398", "--github-url", "http://127.0.0.1:9", cwd=fork_repo)
    assert proc.returncode == 1 and "cannot reach GitHub" in proc.stderr
    hint = hint_of(proc)
    assert "--offline" not in hint  # nothing is cached: it would fail too
    commands = named_commands(hint)
    assert ["repro", "--example"] in commands
    assert ["repro", "--from-file", "issue.md", "--number", "170398"] in commands
    (fork_repo / "issue.md").write_text(SAVED_BODY)
    for command in commands:
        followed = run_cli(*command, "--force", cwd=fork_repo)
        assert followed.returncode == 0, followed.stderr


@pytest.mark.slow
def test_outside_a_repository_next_is_the_script_itself(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli("repro", "--example", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("next:")]
    command = shlex.split(line[len("next:") :])
    assert command[0] == "python"  # never `contribkit run`: it needs a git repository
    ran = subprocess.run(
        [sys.executable, *command[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert ran.stdout.splitlines()[-1].startswith("contribkit-verdict: REPRODUCED "), ran.stdout
    assert ran.returncode == 1


def test_submits_body_hint_leaves_the_tree_clean(run_cli: RunCli, fork_repo: Path) -> None:
    """The hint `submit` prints when the body breaks a PR rule: `pr -o FILE` writes where git
    does not look, so that the next `submit` does not refuse a dirty tree."""
    from contribkit.cli.commands.submit import BODY_FILE

    commit_files(fork_repo, {"torch/nn/functional.py": "def relu(x):\n    return abs(x)\n"}, "Fix")
    proc = run_cli("pr", "--offline", "-o", BODY_FILE, "--force", cwd=fork_repo)
    assert proc.returncode == 0, proc.stderr
    assert (fork_repo / BODY_FILE).is_file()
    assert git("status", "--porcelain", cwd=fork_repo) == ""
    again = run_cli("pr", "--offline", "-o", BODY_FILE, "--force", cwd=fork_repo)
    assert again.returncode == 0, again.stderr  # the hint can be pasted twice


def test_stdout_needs_no_folder_name(run_cli: RunCli, fork_repo: Path) -> None:
    (fork_repo / "issue.md").write_text(SAVED_BODY)
    proc = run_cli("repro", "--from-file", "issue.md", "--stdout", cwd=fork_repo)
    assert proc.returncode == 0, proc.stderr
    compile(proc.stdout, "repro.py", "exec")
    assert not (fork_repo / "repros").exists()
