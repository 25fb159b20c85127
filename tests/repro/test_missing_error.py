"""The missing-error oracle: an error the issue says its code should raise.

The issues here are written for these tests, in the shapes real reports take (a comment "this
should fail, yet it doesn't" on the call; "it should throw an error" in the prose); the
scripts run with real CPU torch.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from contribkit.repro.edits import edit_code
from contribkit.repro.missingerror import SHOULD_RAISE, claimed_statement
from tests.repro.test_repro_generality import assert_verdict, write_script


@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("this line should fail yet it doesn't", True),
        ("It runs fine, but it should throw an error.", True),
        ("I'd expect an error here", True),
        ("It returns garbage instead of raising.", True),
        ("This should not raise an error.", False),  # the error is the bug
        ("it shouldn't fail", False),
        ("The values are silently wrong.", False),  # a wrong value, not a missing error
        ("It should raise a deprecation warning.", False),
    ],
)
def test_which_words_say_an_error_is_missing(text: str, claimed: bool) -> None:
    assert bool(SHOULD_RAISE.search(text)) is claimed


def test_the_statement_a_comment_says_should_raise_is_marked() -> None:
    code = (
        "import torch\n"
        "def check():\n"
        "    x = torch.ones(3)\n"
        "    # this should raise\n"
        "    x.view(3, 1)\n"
        "    x.view(-1, 5)  # fails as expected\n"
        "check()\n"
    )
    lines = code.splitlines(keepends=True)
    stmt, control = claimed_statement(ast.parse(code), lines, {4: "# this should raise"})
    assert stmt is not None and stmt.lineno == 5
    assert control is False  # only the comments given are read
    edited = edit_code(code)
    assert edited.raises_unit == 1 and edited.fails_as_expected
    assert "    _repro.mark(1); x.view(3, 1); _repro.mark(-1)\n" in edited.text


def test_a_constant_assert_checks_nothing() -> None:
    code = "import torch\ndef test_it():\n    torch.ones(2)\n    assert True\ntest_it()\n"
    assert not edit_code(code).own_checks
    assert edit_code(code.replace("assert True", "assert torch.ones(2).sum() == 2")).own_checks


COMMENTED = """
    ### 🐛 Describe the bug

    The second call should fail, like the first does.

    '''python
    import torch

    def test_view():
        x = torch.ones(3)
        {control}
        {claimed}  # this line should fail yet it doesn't

    test_view()
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("control", "claimed", "verdict"),
    [
        # the line raises now: the error is no longer missing
        ("x.sum()", "x.view(-1, 5)", "NOT_REPRODUCED [missing-error]"),
        # it still runs clean
        ("x.sum()", "x.view(3, 1)", "REPRODUCED [missing-error]"),
        # the control raises first: its error is the one wanted, not the fix
        ("x.view(-1, 5)  # fails as expected", "x.view(-1, 7)", "CANNOT_RUN"),
    ],
)
def test_a_line_the_issue_says_should_raise(
    tmp_path: Path, control: str, claimed: str, verdict: str
) -> None:
    body = COMMENTED.format(control=control, claimed=claimed)
    assert_verdict(write_script(tmp_path, body, "view accepts a bad shape"), verdict)


PROSE = """
    ### 🐛 Describe the bug

    {prose}

    '''python
    import torch
    x = torch.ones(3)
    y = {call}
    print(y.shape)
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("prose", "call", "verdict"),
    [
        ("It runs fine, but it should throw an error.", "x.view(3, 1)", "REPRODUCED"),
        ("It runs fine, but it should throw an error.", "x.view(-1, 5)", "NOT_REPRODUCED"),
        # the error is the complaint: no missing-error oracle (and no other)
        ("This should not raise an error.", "x.view(3, 1)", "CANNOT_RUN"),
    ],
)
def test_code_the_prose_says_should_raise(
    tmp_path: Path, prose: str, call: str, verdict: str
) -> None:
    body = PROSE.format(prose=prose, call=call)
    assert_verdict(write_script(tmp_path, body, "view with a bad shape"), verdict)
