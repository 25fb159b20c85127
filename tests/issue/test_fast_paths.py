"""The shortcuts that keep `repro` fast on an issue of many blocks give what the full rule
gives: prose without the code's lines (prompts or none), the "should raise" prose, env fields
among blocks without any."""

from __future__ import annotations

import pytest

from contribkit.issue.model import Issue
from contribkit.issue.parse import parse_issue
from contribkit.issue.parse.transcripts import prose_only
from contribkit.repro.expect import WANTS_ERROR

FENCE = "```"
CODE = "x = torch.ones(2)\ny = x.sum()\n"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # no prompt anywhere: a line of the code goes, whatever its indentation
        (
            "It fails.\n  x = torch.ones(2)\ny = x.sum()\nThe sum is wrong.",
            "It fails.\nThe sum is wrong.",
        ),
        # prompts: a transcript's lines go with their prompt
        (">>> x = torch.ones(2)\n... y = x.sum()\nIn [3]: y = x.sum()\nok", "ok"),
        # a prompt mark in one line only: the others are compared as they are
        ("see >>> here\nx = torch.ones(2)\nmore", "see >>> here\nmore"),
    ],
)
def test_prose_only_drops_the_code_lines(text: str, kept: str) -> None:
    assert prose_only(text, CODE) == kept


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("It should raise a ValueError here.", True),
        ("the op SILENTLY returns garbage", True),
        ("it is ſilently wrong", True),  # re.I folds the long s, lookahead and branch alike
        ("torch.add doesn't throw", True),
        ("Expected to fail with an error", True),
        ("It ought to   really  error", True),
        ("it should work and it does", False),
        ("nothing to see " * 1000, False),
    ],
)
def test_wants_error_reads_the_prose(text: str, wanted: bool) -> None:
    assert bool(WANTS_ERROR.search(text)) is wanted


def test_env_fields_are_found_among_blocks_that_hold_none() -> None:
    blocks = "".join(f"{FENCE}\nv{i}\n{FENCE}\n" for i in range(50))
    body = (
        f"{FENCE}python\nimport torch\ntorch.ones(2)[5]\n{FENCE}\n\n### Versions\n\n"
        f"{blocks}{FENCE}\nPyTorch version: 2.12.0\nIs CUDA available: False\n{FENCE}\n"
    )
    env = parse_issue(Issue(title="a bug", body=body)).env
    assert env is not None
    assert (env.torch_version, env.cuda_available) == ("2.12.0", False)
