"""The README's quoted outputs are what the commands print.

Every ```console block under a ``<!-- quoted -->`` marker (``<!-- quoted: after CMD -->`` runs
CMD first) is run for real, in a scratch git repository with the suite's interpreter first on
PATH: each ``$ command`` line runs in bash, and the lines quoted under it must appear in its
output, in order (``…`` stands for lines left out). Timings, record names and commit ids are
normalised; everything else must match.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import commit_files

README = Path(__file__).resolve().parent.parent.parent / "README.md"
_BLOCK = re.compile(
    r"^<!-- quoted(?:: after (?P<setup>[^>]+?))? -->\n```console\n(?P<body>.*?)^```$", re.M | re.S
)
_GAP = "…"


@dataclass
class Step:
    command: str
    expected: list[str] = field(default_factory=list)


@dataclass
class Quoted:
    line: int  # where the block starts in the README
    setup: str | None
    steps: list[Step]


def quoted_blocks(text: str) -> list[Quoted]:
    blocks = []
    for match in _BLOCK.finditer(text):
        steps: list[Step] = []
        for line in match["body"].splitlines():
            if line.startswith("$ "):
                # "$ cmd            # a remark": the remark is for the reader, not the shell
                steps.append(Step(re.split(r"\s{2,}#", line[2:], maxsplit=1)[0].strip()))
            elif steps:
                steps[-1].expected.append(line)
        blocks.append(Quoted(text[: match.start()].count("\n") + 1, match["setup"], steps))
    return blocks


def normalise(line: str) -> str:
    """A line with what changes between runs masked: durations, record ids, commit ids, widths."""
    line = re.sub(r"\b\d+(?:\.\d+)?s\b", "<t>s", line)
    line = re.sub(r"\.contribkit/runs/\S+\.json", ".contribkit/runs/<id>.json", line)
    line = re.sub(r"\bat [0-9a-f]{7,40}\b", "at <sha>", line)
    return " ".join(line.split())


def missing_line(expected: list[str], output: str) -> str | None:
    """The first quoted line that the output does not show in order, or None."""
    actual = [normalise(line) for line in output.splitlines()]
    at = 0
    for want in (normalise(line) for line in expected):
        if want == _GAP or not want:
            continue
        try:
            at = actual.index(want, at) + 1
        except ValueError:
            return want
    return None


def test_the_readme_has_quoted_blocks_for_the_first_hour() -> None:
    commands = [s.command for b in quoted_blocks(README.read_text()) for s in b.steps]
    assert "contribkit run repros/issue-4242 --expect reproduced" in commands
    assert "contribkit repro --example" in commands


def test_a_quoted_line_must_appear_in_order() -> None:
    output = "a 1.2s\nrecord: .contribkit/runs/20261123T090049.295237Z-53cf130.json\nb at 53cf130\n"
    quoted = ["a 9.9s", _GAP, "record: .contribkit/runs/x.json", "b at ebb6d5b"]
    assert missing_line(quoted, output) is None
    assert missing_line(["b at 1234567", "a 1s"], output) == "a <t>s"  # order counts


@pytest.mark.slow
@pytest.mark.parametrize(
    "block", quoted_blocks(README.read_text()), ids=lambda b: f"README.md:{b.line}"
)
def test_readme_quoted_output_is_what_the_commands_print(block: Quoted, tmp_path: Path) -> None:
    repo = tmp_path / "work"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    commit_files(repo, {"README.md": "scratch\n"}, "Initial commit")
    # `contribkit` and `python` are this suite's, as after the README's set-up command
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    if block.setup:
        subprocess.run(
            ["bash", "-c", block.setup], cwd=repo, env=env, check=True, capture_output=True
        )
    for step in block.steps:
        proc = subprocess.run(
            ["bash", "-c", step.command],
            cwd=repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
        )
        gone = missing_line(step.expected, proc.stdout)
        assert gone is None, (
            f"README.md:{block.line}: `{step.command}` did not print {gone!r}:\n{proc.stdout}"
        )
