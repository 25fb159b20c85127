"""A newcomer's first hour, as the README lays it out: the set-up command, then its "Next"
commands, the Quickstart (`contribkit demo`), `test --op` and `run` of the test it writes, each
in the venv the set-up command made, and each exiting 0.

The venv is built once per session, exactly as the README's set-up command builds it (the
command is read from README.md, as .ci/run reads it), in a copy of this working tree committed
as a fresh clone would be. pip takes torch from the local wheel, as the pin makes it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import commit_files, isolated_environ, make_fork

ROOT = Path(__file__).resolve().parent.parent.parent
README = (ROOT / "README.md").read_text()


def readme_block(marker: str) -> str:
    """The fenced block right after ``<!-- marker -->`` (what .ci/run extracts)."""
    match = re.search(rf"^<!-- {marker} -->\n```\w*\n(.*?)^```$", README, re.M | re.S)
    assert match, f"README.md has no {marker} block"
    return match[1].strip()


def next_commands() -> list[str]:
    """The commands the set-up section's "Next:" names (in backticks, joined across lines)."""
    setup = README[README.index("<!-- main-command -->") : README.index("<!-- test-command -->")]
    after = setup[setup.index("Next:") :].split("\n\n", 1)[0]
    return [" ".join(c.split()) for c in re.findall(r"`(contribkit [^`]+)`", after)]


def quoted_cuda_line() -> str:
    """The CUDA line of the README's PR body example."""
    section = README[README.index("### `contribkit pr`") :]
    return next(line[2:] for line in section.splitlines() if line.startswith("- CUDA: "))


@dataclass
class FirstHour:
    clone: Path
    env: dict[str, str]  # the venv's bin first on PATH, as after `. .venv/bin/activate`
    setup: subprocess.CompletedProcess[str]

    def run(self, command: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", command],
            cwd=cwd or self.clone,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=900,
        )


def copy_tree(dest: Path) -> None:
    """This working tree's files (tracked, and new ones git does not ignore), as a clone has."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)


@pytest.fixture(scope="session")
def first_hour(tmp_path_factory: pytest.TempPathFactory) -> FirstHour:
    clone = tmp_path_factory.mktemp("first-hour") / "contribkit"
    clone.mkdir()
    copy_tree(clone)
    env = isolated_environ(tmp_path_factory.mktemp("home"))
    subprocess.run(["git", "init", "-q"], cwd=clone, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=clone, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "clone"], cwd=clone, check=True, env=env)
    # The newcomer's shell: no venv active (not this suite's either).
    ours = str(Path(sys.executable).parent)
    path = [p for p in env["PATH"].split(os.pathsep) if p != ours]
    env = {k: v for k, v in env.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = os.pathsep.join(path)
    setup = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", readme_block("main-command")],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=1800,
    )
    env["PATH"] = os.pathsep.join([str(clone / ".venv" / "bin"), *path])
    env["VIRTUAL_ENV"] = str(clone / ".venv")
    return FirstHour(clone, env, setup)


@pytest.mark.slow
def test_the_setup_command_exits_0_and_ends_with_the_verdict(first_hour: FirstHour) -> None:
    proc = first_hour.setup
    assert proc.returncode == 0, proc.stdout[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("repros/issue-4242/repro.py on cpu: contribkit-verdict: REPRODUCED ")
    assert "[signature] RuntimeError: index_add_(): self (Long) and source (Float)" in last
    assert "Failed to initialize NumPy" not in proc.stdout  # numpy came with the extra
    # the extra never pulled another torch than the pinned CPU wheel
    version = first_hour.run("python -c 'import torch; print(torch.__version__)'")
    assert version.stdout.strip().startswith("2.13.0"), version.stdout


@pytest.mark.slow
def test_the_next_commands_exit_0(first_hour: FirstHour) -> None:
    commands = next_commands()
    assert commands, "the set-up section names no Next command"
    for command in commands:
        if command == "contribkit demo":
            continue  # the Quickstart, below
        proc = first_hour.run(command)
        assert proc.returncode == 0, f"{command}:\n{proc.stdout[-3000:]}"


@pytest.mark.slow
def test_the_quickstart_runs_in_that_venv(first_hour: FirstHour, tmp_path: Path) -> None:
    proc = first_hour.run(f"contribkit demo --dir {tmp_path / 'demo'} --json 2>/dev/null")
    assert proc.returncode == 0, proc.stdout[-3000:]
    body = proc.stdout[proc.stdout.index("{") :]
    assert f"- {quoted_cuda_line()}" in json.loads(body)["body"].splitlines()


@pytest.mark.slow
def test_doctor_test_op_and_run_of_the_test_in_that_venv(
    first_hour: FirstHour, tmp_path: Path
) -> None:
    doctor = first_hour.run("contribkit doctor")
    assert re.search(r"^test deps\s+OK\s+pytest, numpy, expecttest importable", doctor.stdout, re.M)
    fork = make_fork(tmp_path / "pytorch")
    test = first_hour.run(
        "contribkit test --op index_add --check 'result.shape == sample.input.shape'"
        " --path test/test_first_hour.py",
        cwd=fork,
    )
    assert test.returncode == 0, test.stdout[-3000:]
    commit_files(fork, {}, "Add the test")
    run = first_hour.run("contribkit run test/test_first_hour.py --devices cpu", cwd=fork)
    assert run.returncode == 0, run.stdout[-3000:]
    assert re.search(r"test/test_first_hour\.py\s+PASS", run.stdout), run.stdout
