"""The CLI shell: lazy start-up, the error contract, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from contribkit import __version__
from contribkit.cli.app import COMMANDS
from tests.conftest import RunCli

HEAVY = ("github", "git", "jinja2", "yaml", "torch", "rich", "markdown_it", "requests")

GUARD = """
import sys, runpy
sys.argv = ["contribkit", *{argv!r}]
try:
    runpy.run_module("contribkit", run_name="__main__")
except SystemExit:
    pass
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & set({heavy!r}))
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["doctor", "--help"],
        ["debug", "--help"],
        ["pr", "--help"],
        ["demo", "--help"],
        ["op", "--help"],
        ["gaps", "--help"],
        ["bisect", "--help"],
        ["triage", "--help"],
    ],
)
def test_startup_imports_nothing_heavy(argv: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", GUARD.format(argv=argv, heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "HEAVY=\n" in proc.stderr, proc.stderr


def test_version(run_cli: RunCli) -> None:
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert __version__ in proc.stdout


def test_help_lists_every_command_without_importing_it(run_cli: RunCli) -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0
    for name, (_, _, short) in COMMANDS.items():
        assert name in proc.stdout
        assert short.split()[0] in proc.stdout
    assert "Exit codes" in proc.stdout


def test_every_command_has_help(run_cli: RunCli) -> None:
    for name in COMMANDS:
        proc = run_cli(name, "--help")
        assert proc.returncode == 0, (name, proc.stderr)
        assert "--help" in proc.stdout


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["no-such-command"], "No such command 'no-such-command'"),
        # click 8.1 writes "No such option: --x", 8.2 "No such option '--x'"
        (["doctor", "--no-such-option"], "--no-such-option"),
    ],
)
def test_usage_errors_are_one_line_with_hint(run_cli: RunCli, argv: list[str], needle: str) -> None:
    proc = run_cli(*argv)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2, proc.stderr
    assert lines[0].startswith("contribkit: error: ") and needle in lines[0]
    assert lines[1].startswith("hint: ")
    assert "Traceback" not in proc.stderr


def test_bad_config_value_is_exit_2_without_traceback(run_cli: RunCli, fork_repo: Path) -> None:
    (fork_repo / ".contribkit.toml").write_text('http_timeout = "soon"\n')
    proc = run_cli("config", cwd=fork_repo)
    assert proc.returncode == 2
    assert proc.stderr.startswith("contribkit: error: ")
    assert "http_timeout" in proc.stderr and "Traceback" not in proc.stderr


def test_verbose_shows_traceback(run_cli: RunCli, fork_repo: Path) -> None:
    (fork_repo / ".contribkit.toml").write_text("http_timeout = [\n")  # invalid TOML
    quiet = run_cli("config", cwd=fork_repo)
    loud = run_cli("-v", "config", cwd=fork_repo)
    assert quiet.returncode == loud.returncode == 2
    assert "Traceback" not in quiet.stderr
    assert "Traceback" in loud.stderr
    assert "invalid TOML" in loud.stderr


def test_python_dash_m_works(run_cli: RunCli) -> None:
    proc = run_cli("config", "--list", "--json")
    assert proc.returncode == 0
    keys = {row["key"] for row in json.loads(proc.stdout)}
    assert {"repo", "github_url", "python", "scrub_env"} <= keys


def test_no_arguments_print_the_help_and_exit_2_on_every_click(run_cli: RunCli) -> None:
    # click 8.2 raises NoArgsIsHelpError for a bare group, 8.1 prints the help and exits 0 by
    # itself (and has no such exception): contribkit answers the same on both (CI's floor lane
    # runs this on click 8.1).
    proc = run_cli()
    assert proc.returncode == 2
    assert proc.stdout.startswith("Usage: contribkit [OPTIONS] COMMAND [ARGS]...")
    assert "Traceback" not in proc.stderr
