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
from contribkit.repro.missingerror import claimed_statement, claims_error
from tests.repro.test_repro_generality import assert_verdict, run, write_script


@pytest.mark.parametrize(
    ("comment", "claim"),
    [
        ("# this line should fail yet it doesn't", True),
        ("# must throw here", True),
        ("# should be rejected", True),
        ("# should not raise", False),  # the error is the bug
        ("# shouldn't fail", False),
        ("# nothing should fail here", False),  # turned round
        ("# no reason why this should raise", False),
        ("# should raise a UserWarning", False),  # a warning wanted
        ("# lr should be raised to 0.1 by now", False),  # not an error
        ("# should throw away the old buffers", False),
        ("# should fail only on ROCm", False),
        ("# should raise ValueError", False),  # a class named: a complaint about the class
        ("# should fail early, not with NotImplementedError", False),
        ("# should fail, and it does", False),  # the behaviour met: a control
        ("# should fail?", False),  # a question
        ("# mypy should error here, but it does not", False),  # a static checker's
        ("# y = x.view(4, 2)  # should fail, but returns a tensor", False),  # commented out
    ],
)
def test_which_comments_say_their_line_should_raise(comment: str, claim: bool) -> None:
    assert claims_error(comment) is claim


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
    claim = claimed_statement(ast.parse(code), lines, {4: "# this should raise"})
    assert claim is not None and claim.stmt.lineno == 5
    assert claim.control is False  # only the comments given are read
    edited = edit_code(code)
    assert edited.raises == {"unit": 1, "control": True, "call": "view"}
    assert "    _repro.mark(1); x.view(3, 1); _repro.mark(-2)\n" in edited.text


@pytest.mark.parametrize(
    "code",
    [
        # the code catches errors, or asserts they are raised: an error may be raised and caught
        "try:\n    y = x.view(4, 2)  # should raise\nexcept RuntimeError:\n    pass\n",
        "with pytest.raises(RuntimeError):\n    x.view(4, 2)  # should raise\n",
        "with contextlib.suppress(RuntimeError):\n    x.view(4, 2)  # should raise\n",
        # the line holds a lambda: it may never run
        "f = lambda: x.view(4, 2)  # should raise\n",
        # two comments say so: which error is the fix is unclear
        "x.view(4, 2)  # should raise\nx.view(2, 4)  # should raise too\n",
        # a comment on its own line about several lines
        "# both of these should raise\nx.view(4, 2)\nx.view(2, 4)\n",
        # a return: the mark after it never runs; a comprehension runs the call many times
        "def f(x):\n    return x.view(4, 2)  # should raise\nf(x)\n",
        "ys = [v.view(4, 2) for v in [x, x]]  # should raise\n",
    ],
)
def test_no_claimed_statement_where_an_error_may_hide(code: str) -> None:
    assert edit_code("import torch\nx = torch.ones(3)\n" + code).raises == {}


def test_a_constant_assert_checks_nothing_unless_false() -> None:
    code = "import torch\ndef test_it():\n    torch.ones(2)\n    assert True\ntest_it()\n"
    assert not edit_code(code).own_checks
    assert edit_code(code.replace("assert True", "assert torch.ones(2).sum() == 2")).own_checks
    assert edit_code(code.replace("assert True", "assert False, 'did not raise'")).own_checks


COMMENTED = """
    ### 🐛 Describe the bug

    The second call should fail, like the first does.

    '''python
    import torch

    def test_view():
        x = torch.ones(3)
        {control}
        {claimed}  # {comment}

    test_view()
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("control", "claimed", "comment", "verdict"),
    [
        # the line raises now: the error is no longer missing
        ("x.sum()", "x.view(-1, 5)", "this line should fail yet it doesn't", "NOT_REPRODUCED"),
        # it still runs clean
        ("x.sum()", "x.view(3, 1)", "this line should fail yet it doesn't", "REPRODUCED"),
        # the control raises first: its error is the one wanted, not the fix
        ("x.view(-1, 5)  # fails as expected", "x.view(-1, 7)", "should fail", "CANNOT_RUN"),
        # only a conversion of its result raises: the call itself still does not
        ("x.sum()", "x.view(3, 1).item()", "this should fail", "CANNOT_RUN"),
        # another op on the line raises before the one the comment means runs
        ("x.sum()", "torch.clamp(x.view(4, 2), min=2, max=1)", "should raise", "CANNOT_RUN"),
        # the last bare expression, which the REPL echoes: marked, not echoed
        ("x.sum()", "x.view(-1, 5)", "should raise", "NOT_REPRODUCED"),
    ],
)
def test_a_line_a_comment_says_should_raise(
    tmp_path: Path, control: str, claimed: str, comment: str, verdict: str
) -> None:
    body = COMMENTED.format(control=control, claimed=claimed, comment=comment)
    oracle = " [missing-error]" if verdict != "CANNOT_RUN" else ""
    assert_verdict(write_script(tmp_path, body, "view accepts a bad shape"), verdict + oracle)


@pytest.mark.slow
def test_the_prose_alone_decides_nothing(tmp_path: Path) -> None:
    """ "It should throw an error" in the prose: too loose to read (nothing should fail, raised
    to a power, instead of raising): no oracle."""
    body = """
        It runs fine, but it should throw an error.

        '''python
        import torch
        x = torch.ones(3)
        print(x.view(3, 1).shape)
        '''
    """
    assert_verdict(write_script(tmp_path, body, "view with a bad shape"), "CANNOT_RUN")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("code", "verdict"),
    [
        # the last line is a bare expression, which a notebook echoes: marked, not echoed
        ("x.view(4, 2)  # should raise", "NOT_REPRODUCED [missing-error]"),
        ("x.view(3, 2)  # should raise", "REPRODUCED [missing-error]"),
        # a warning made an error is no error of torch's (the call still only warns), and
        # the run ends on it: no verdict
        (
            "import warnings\nwarnings.simplefilter('error')\n"
            "m = torch.std_mean(torch.empty(0))  # should raise",
            "CANNOT_RUN",
        ),
    ],
)
def test_a_claimed_line_at_the_top_level(tmp_path: Path, code: str, verdict: str) -> None:
    body = "'''python\nimport torch\nx = torch.zeros(2, 3)\n" + code + "\n'''\n"
    script = write_script(tmp_path, body, "view and std_mean accept bad input")
    assert "_repro.echo(_repro.mark" not in script.read_text()
    assert_verdict(script, verdict)


THREADED = """
    '''python
    import threading
    import torch
    x = torch.zeros(2, 3)
    def work():
        y = x.view({shape})  # should raise
    t = threading.Thread(target=work)
    t.start()
    t.join()
    print("done")
    '''
"""
LOOPED = """
    '''python
    import torch
    for dtype in [torch.float32, torch.complex64]:
        y = torch.clamp(torch.ones(3, dtype=dtype), min=2, max=1)  # should raise
        print(dtype, y)
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "title", "verdict"),
    [
        # the line raised in a thread: it never ran through, and no error reached the script
        (THREADED.format(shape="4, 2"), "view accepts a wrong shape", "CANNOT_RUN"),
        (THREADED.format(shape="3, 2"), "view accepts a wrong shape", "REPRODUCED"),
        # a first pass ran clean (the bug), a later one raised another error: no fix shown
        (LOOPED, "clamp accepts min > max", "CANNOT_RUN"),
    ],
)
def test_a_claimed_line_that_ran_elsewhere_or_twice(
    tmp_path: Path, body: str, title: str, verdict: str
) -> None:
    assert_verdict(write_script(tmp_path, body, title), verdict)


@pytest.mark.slow
def test_os_exit_in_the_issues_code_still_ends_with_a_verdict(tmp_path: Path) -> None:
    body = """
        '''python
        import os
        import torch
        y = torch.clamp(torch.ones(3), min=2, max=1)  # should raise
        print(y)
        os._exit(0)
        '''
    """
    assert_verdict(write_script(tmp_path, body, "clamp accepts min > max"), "REPRODUCED")
    exits = body.replace("os._exit(0)", "os._exit(3)")
    assert_verdict(write_script(tmp_path / "b", exits, "clamp accepts min > max"), "CANNOT_RUN")


@pytest.mark.slow
def test_an_interrupt_is_still_read_as_one(tmp_path: Path) -> None:
    """The os._exit wrapper lets the runtime's own exits through: the child that runs the
    code ends with 130 on ^C, which the script reads as an interrupt, not as an exit code of
    the issue's code."""
    body = "'''python\nimport torch\ntorch.ones(2)\nraise KeyboardInterrupt\n'''\n"
    code, line = run(write_script(tmp_path, body, "interrupted"))
    assert code == 125 and "killed by SIGINT" in line, line


SPAWNED = """
    '''python
    import torch
    import torch.multiprocessing as mp

    def work(rank):
        t = torch.ones(2) * rank
        assert t.sum() == 2 * rank

    if __name__ == "__main__":
        mp.spawn(work, nprocs=2)
        print("ok")
    '''
"""


@pytest.mark.slow
def test_spawned_workers_run_their_target_and_leave_the_verdict_to_the_script(
    tmp_path: Path,
) -> None:
    """A spawned worker runs the script's top level again: it judges nothing (no verdict of
    its own, no exit 125 that the parent's spawn reports as a failed worker) and runs its
    target. The parent ran no torch operation itself, so it abstains."""
    code, line = run(write_script(tmp_path, SPAWNED, "spawn workers"))
    assert "terminated with exit code" not in line, line
    assert line.startswith("contribkit-verdict: CANNOT_RUN") and "no torch operation ran" in line
    assert code == 125
