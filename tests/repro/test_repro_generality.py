"""Verdicts on report shapes common in PyTorch's tracker, with real CPU torch running the scripts.

The issues here are written for these tests, in the shapes real reports take.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from contribkit.core.render import write_outputs
from contribkit.issue.model import Issue
from contribkit.issue.parse import parse_issue
from contribkit.repro.edits import edit_code
from contribkit.repro.errorclaims import message_wants
from contribkit.repro.plan import plan_repro

FENCE = "`" * 3
EXIT = {"NOT_REPRODUCED": 0, "REPRODUCED": 1, "CANNOT_RUN": 125}

# A stand-in for a library whose eager path validates its input and whose compiled path may not.
# ROWLIB_BUG: "compiled" (only eager raises), "both" (both raise), "typo" (eager hits a NameError).
ROWLIB = """\
import os

import torch


def take_rows(x, n):
    bug = os.environ.get("ROWLIB_BUG", "")
    if bug == "typo" and not torch.compiler.is_compiling():
        return undefined_helper(x)  # noqa: F821
    if n > x.shape[0] and not (bug == "compiled" and torch.compiler.is_compiling()):
        raise RuntimeError(f"take_rows(): asked for {n} rows of a tensor with {x.shape[0]}")
    return x[:n] * 2
"""


def md(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n").replace("'''", FENCE)


def write_script(tmp_path: Path, body: str, title: str = "A bug") -> Path:
    issue = Issue(title=title, body=md(body), number=7, repo="pytorch/pytorch", labels=[])
    plan = plan_repro(issue, parse_issue(issue))
    folder = tmp_path / "issue-7"
    write_outputs(plan.output_files(folder))
    (folder / "rowlib.py").write_text(ROWLIB)
    return folder / "repro.py"


def run(script: Path, bug: str = "") -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, str(script), "--device", "cpu"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=script.parent,
        env={**os.environ, "ROWLIB_BUG": bug},
    )
    lines = proc.stdout.strip().splitlines()
    return proc.returncode, lines[-1] if lines else ""


def assert_verdict(script: Path, verdict: str) -> None:
    """The script's verdict line starts with ``verdict`` and its exit code is the verdict's."""
    code, line = run(script)
    assert line.startswith(f"contribkit-verdict: {verdict}"), line
    assert code == EXIT[verdict.split()[0]]


COMPILE_MISMATCH = """
    ### 🐛 Describe the bug

    `torch.compile` returns something other than eager for `take_rows`.

    '''python
    import torch
    import rowlib

    def fn(x):
        return rowlib.take_rows(x, 4)

    x = torch.arange(6.0).reshape(3, 2)
    print(fn(x))
    print(torch.compile(fn, backend="eager")(x))
    '''

    ### Versions
    PyTorch version: 2.1.0
"""


@pytest.mark.slow
def test_eager_error_with_a_compiled_value_reproduces_a_compile_mismatch(tmp_path: Path) -> None:
    """Eager now rejects the input and the compiled call still returns: they still disagree."""
    script = write_script(tmp_path, COMPILE_MISMATCH)
    assert "_repro.differential(lambda: torch.compile(fn" in script.read_text()
    code, line = run(script, "compiled")
    assert code == 1, line
    assert line.startswith("contribkit-verdict: REPRODUCED [compile-vs-eager] eager raises")
    assert "take_rows(): asked for 4 rows" in line


@pytest.mark.slow
def test_both_sides_raising_or_a_code_error_stays_cannot_run(tmp_path: Path) -> None:
    script = write_script(tmp_path, COMPILE_MISMATCH)
    code, line = run(script, "both")  # the inputs are invalid for both: no mismatch to see
    assert code == 125 and "CANNOT_RUN" in line and "take_rows()" in line, line
    code, line = run(script, "typo")  # the snippet's own NameError, whatever compile does
    assert code == 125 and "CANNOT_RUN" in line and "NameError" in line, line


@pytest.mark.slow
def test_no_differential_when_the_issue_reports_an_error_of_its_own(tmp_path: Path) -> None:
    """An issue that quotes a traceback complains about that error: another one is not its bug."""
    traceback = (
        "'''\n"
        "    Traceback (most recent call last):\n"
        '      File "t.py", line 9, in <module>\n'
        "    ValueError: take_rows(): negative count\n"
        "    '''\n\n"
        "    ### Versions"
    )
    body = COMPILE_MISMATCH.replace("### Versions", traceback)
    script = write_script(tmp_path, body)
    assert "_repro.differential(" not in script.read_text()
    code, line = run(script, "compiled")
    assert code == 125 and "different error" in line, line


# -- REPL transcripts pasted without a fence ---------------------------------------------------

UNFENCED_REPL = """
    ## 🐛 Bug

    `round` sends halves to the even neighbour; I expected them to go up.

    ## To Reproduce
    >>> import torch
    >>> x = torch.tensor([0.5, 1.5, 2.5])
    >>> r = x.round()
    >>> r, r.dtype
    (tensor([0., 2., 2.]), torch.float32)

    ## Environment

    PyTorch version: 1.0.0
"""


def test_an_unfenced_transcript_is_read_as_code_and_output() -> None:
    """`>>>` lines outside a fence are a blockquote to markdown, but a transcript to a reader."""
    parsed = parse_issue(Issue(title="round", body=md(UNFENCED_REPL), number=7, labels=[]))
    assert parsed.code.startswith("import torch\nx = torch.tensor([0.5, 1.5, 2.5])\n")
    assert "r, r.dtype\n#: (tensor([0., 2., 2.]), torch.float32)" in parsed.transcript


def test_a_tuple_echo_is_one_echo(tmp_path: Path) -> None:
    script = write_script(tmp_path, UNFENCED_REPL)
    assert "_repro.echo((r, r.dtype))" in script.read_text()


@pytest.mark.slow
def test_a_tuple_echo_prints_one_tuple_as_the_repl_did(tmp_path: Path) -> None:
    code, line = run(write_script(tmp_path, UNFENCED_REPL))
    assert code == 1, line
    assert line.startswith("contribkit-verdict: REPRODUCED [quoted-output]"), line


# A transcript whose loop prints several lines: the `...` line that ends the loop is blank in
# the code, and the loop's output is quoted under it.
REPL_LOOP = """
    `torch.cumsum` of ints gives {values}

    '''pycon
    >>> import torch
    >>> t = torch.tensor([1, 2, 3])
    >>> for dim in [0, -1]:
    ...     print(dim, t.cumsum(dim))
    ...
    0 tensor([{values}])
    -1 tensor([{values}])
    '''
"""


def test_a_transcript_loop_is_one_quoted_unit(tmp_path: Path) -> None:
    script = write_script(tmp_path, REPL_LOOP.format(values="1, 3, 6"))
    text = script.read_text()
    assert "_repro.mark(1)\nfor dim in [0, -1]:" in text
    compile(text, str(script), "exec")  # a compound statement cannot follow `mark(1);`


@pytest.mark.slow
@pytest.mark.parametrize(
    ("values", "verdict"),
    [("1, 3, 6", "REPRODUCED [quoted-output]"), ("1, 2, 3", "NOT_REPRODUCED [quoted-output]")],
)
def test_a_transcript_loop_is_judged_on_its_quoted_lines(
    tmp_path: Path, values: str, verdict: str
) -> None:
    assert_verdict(write_script(tmp_path, REPL_LOOP.format(values=values)), verdict)


# Lines written as a REPL session without prompts, each value in a comment: the reference
# library's value and torch's.
VALUE_COMMENTS = """
    `torch.var` of one element is {torch_says}

    import numpy as np
    np.var(np.array([4.0]))  # returns 0

    import torch
    torch.var(torch.tensor([4.0]), correction={correction})  # returns {torch_says}
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("correction", "torch_says", "verdict"),
    [
        (1, "NaN", "REPRODUCED [quoted-output]"),
        (0, "0", "REPRODUCED [quoted-output]"),
        # one quoted line still shows and one does not: which one is the bug is not said
        (0, "NaN", "CANNOT_RUN completed on cpu, but what it printed neither matches"),
    ],
)
def test_a_value_in_the_comment_of_a_bare_expression_is_its_quoted_output(
    tmp_path: Path, correction: int, torch_says: str, verdict: str
) -> None:
    body = VALUE_COMMENTS.format(correction=correction, torch_says=torch_says)
    assert_verdict(write_script(tmp_path, body), verdict)


# torch.compile's own error, quoted as an older torch worded it: dynamo now says "missing
# tp_iter ... iterate over `UserDefinedObjectVariable(dict_values)`".
DYNAMO_REWORDED = """
    Dynamo and dict values

    '''python
    import torch

    @torch.compile(backend="eager", fullgraph=True)
    def f(x, items):
        it = iter(items)
        return next(it), x.sin()

    f(torch.randn(3), {{"a": 3}}.values())
    '''

    '''
    torch._dynamo.exc.Unsupported: {message}
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("message", "verdict"),
    [
        (
            "call_method UserDefinedObjectVariable(dict_values) __iter__ () {{}}",
            "REPRODUCED [error]",
        ),
        ("generator functions are not supported", "CANNOT_RUN different error"),
    ],
)
def test_torch_compiles_own_error_reworded_is_the_same_failure(
    tmp_path: Path, message: str, verdict: str
) -> None:
    assert_verdict(write_script(tmp_path, DYNAMO_REWORDED.format(message=message)), verdict)


# torch.compile's own error, where the issue quotes none: the title says the compile fails.
COMPILE_FAILS = """
    My comparison with eager below fails.

    '''python
    import torch

    @torch.compile(backend="eager")
    def fn(x):
        return x + torch.ones(8)

    x = torch.randn(8)
    torch._dynamo.{mark}(x, 0)
    print(fn(x).shape)
    '''
"""


FAILS = "mark_dynamic hard fails the compile when the code makes the dimension static"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("title", "mark", "verdict"),
    [
        (FAILS, "mark_dynamic", "REPRODUCED [error]"),
        (FAILS, "maybe_mark_dynamic", "NOT_REPRODUCED [no-error]"),
        (
            "torch.compile crashes with mark_dynamic on a static dimension",
            "mark_dynamic",
            "REPRODUCED [error]",
        ),
        # the complaint is values: a compile failing otherwise says nothing of them
        ("torch.compile returns other values than eager", "mark_dynamic", "CANNOT_RUN"),
        ("compiled output fails to match eager with mark_dynamic", "mark_dynamic", "CANNOT_RUN"),
    ],
)
def test_torch_compiles_own_error_is_torchs_where_the_title_says_it_fails(
    tmp_path: Path, title: str, mark: str, verdict: str
) -> None:
    script = write_script(tmp_path, COMPILE_FAILS.format(mark=mark), title=title)
    assert_verdict(script, verdict)


OWN_EXCEPTION = """
    It fails with an error. Eager works fine.

    '''python
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            if x.dim() == 2:
                raise ValueError("expected a 3-d input")
            return x * 2

    print(torch.compile(M(), fullgraph=True, backend="eager")(torch.randn(2, 3)))
    '''
"""


@pytest.mark.slow
def test_the_codes_own_exception_traced_by_dynamo_is_no_error_of_torch(tmp_path: Path) -> None:
    title = "torch.compile fails on a model with a shape check"
    assert_verdict(write_script(tmp_path, OWN_EXCEPTION, title=title), "CANNOT_RUN")


VALUE_ABOVE_THE_BUG = """
    The default is right, but a correction above the count gives a negative variance.

    '''python
    import torch
    x = torch.tensor([1.0, 2.0])
    x.var()  # returns tensor(0.5000)
    x.var(correction=3)
    '''
"""


@pytest.mark.slow
def test_a_value_comment_only_above_the_bug_line_decides_nothing(tmp_path: Path) -> None:
    assert_verdict(write_script(tmp_path, VALUE_ABOVE_THE_BUG), "CANNOT_RUN")


BACKEND_MISSING = """
    torch.compile with backend={backend!r} fails on a Linear model

    '''python
    import torch

    model = torch.compile(torch.nn.Linear(4, 4), backend={backend!r})
    print(model(torch.randn(2, 4)).shape)
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["tensorrt", "tvm"])
def test_a_compile_backend_not_installed_here_is_no_error_of_torch(
    tmp_path: Path, backend: str
) -> None:
    """``InvalidBackend`` (not registered here), ``BackendCompilerFailed`` from an ImportError
    (registered, its package missing): the machine's, not the issue's."""
    assert_verdict(write_script(tmp_path, BACKEND_MISSING.format(backend=backend)), "CANNOT_RUN")


OPTIMIZE_FAILS = """
    dynamo.optimize with nopython=True fails on sin + cos

    This fails with an error.

    '''python
    import torch
    import torch._dynamo

    def f(x):
        return torch.sin(x) + torch.cos(x)

    print(torch._dynamo.optimize("eager", nopython=True)(f)(torch.randn(4)).shape)
    '''
"""


@pytest.mark.slow
def test_the_recording_is_not_traced_by_dynamo_entries_other_than_torch_compile(
    tmp_path: Path,
) -> None:
    """The recording mode stays on the stack under ``torch._dynamo.optimize``; dynamo must not
    trace it (it would fail on the recorder's frame inspection and call that the bug)."""
    assert_verdict(write_script(tmp_path, OPTIMIZE_FAILS), "NOT_REPRODUCED [no-error]")


# A comment that may hold the value wanted, or a shape: it decides only while it still shows.
WEAK_COMMENT = """
    {title}

    {prose}

    '''python
    import torch
    torch.std(torch.tensor([4.0]), correction={correction})  {comment}
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("title", "prose", "correction", "comment", "verdict"),
    [
        ("std of one element", "", 0, "# returns nan", "CANNOT_RUN"),  # changed: no NR
        ("std of one element", "", 1, "# -> nan", "REPRODUCED [quoted-output]"),
        ("std of one element", "", 1, "# tensor(nan), expected tensor(0.)", "CANNOT_RUN"),
        (
            "std of one element should be 0 like numpy",
            "The comments show what it should return. Instead it returns nan.",
            1,
            "# returns 0",
            "REPRODUCED [quoted-output]",
        ),
    ],
)
def test_a_value_comment_decides_only_while_it_shows(
    tmp_path: Path, title: str, prose: str, correction: int, comment: str, verdict: str
) -> None:
    body = WEAK_COMMENT.format(title=title, prose=prose, correction=correction, comment=comment)
    assert_verdict(write_script(tmp_path, body), verdict)


def test_a_decorated_def_in_a_transcript_is_marked_before_its_decorator(tmp_path: Path) -> None:
    body = """
        '''pycon
        >>> import torch
        >>> @torch.jit.script
        ... def f(x: torch.Tensor):
        ...     return x.sum()
        ...
        UserWarning: a warning printed here
        >>> f(torch.ones(2))
        tensor(2.)
        '''
    """
    text = write_script(tmp_path, body).read_text()
    assert "_repro.mark(1)\n@torch.jit.script\ndef f" in text
    compile(text, "repro.py", "exec")


@pytest.mark.parametrize(
    ("code", "quoted"),
    [
        # a dict's keys are data, not words: `{'res': tensor(0.27)}` is a printed value
        ("print(r)  # {'res': tensor(0.2700)}\n", [["{'res': tensor(0.2700)}"]]),
        ("print(r)  # tensor(nan), expected tensor(0.)\n", []),  # words: not only a value
        (
            "print(r)  # tensor([1.], grad_fn=<AddBackward0>)\n",
            [["tensor([1.], grad_fn=<AddBackward0>)"]],
        ),
        ("r.sum()  # returns 6\n", [["6"]]),
        ("r.sum()  # 6\n", []),  # no result word: maybe the value wanted
        ("r.shape  # (N, 3)\n", []),
    ],
)
def test_which_comments_are_quoted_output(code: str, quoted: list[list[str]]) -> None:
    edited = edit_code("import torch\nr = torch.ones(2)\n" + code)
    assert [unit["actual"] for unit in edited.units] == quoted


@pytest.mark.parametrize(
    ("prose", "oracle"),
    [
        ("With fullgraph=True it fails with an error.", True),
        ("The max abs error against eager is 0.3 with fullgraph=True.", False),  # numerical
        ("There is no error with fullgraph=True, but the values differ.", False),
        ("It is slow from graph breaks, and with fullgraph=True it fails.", True),
        ("A confusing error message with fullgraph=True.", False),  # its wording
    ],
)
def test_the_graph_break_oracle_needs_a_reported_failure(
    tmp_path: Path, prose: str, oracle: bool
) -> None:
    body = f"""
        {prose}

        '''python
        import torch

        @torch.compile(fullgraph=True, backend="eager")
        def f(x):
            print("here")
            return x * 2

        print(f(torch.ones(2)))
        '''
    """
    text = write_script(tmp_path, body).read_text()
    assert ('"graph_break": True' in text) is oracle


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        (
            "Bad error message for huge sizes\nI'd expect it to tell me overflow happened.",
            ["overflow"],
        ),
        ("Confusing error\nThe error should mention the dtype of the input.", ["dtype"]),
        ("Unclear error message\nIt should tell me what went wrong.", []),  # no word it names
        ("It fails with an error.\nI expect it to say which argument.", []),  # not its wording
        ("Unclear error message\nIt should mention both shapes.", ["shapes"]),  # a quantifier
        ("Confusing error message\nIt should not mention CUDA.", []),  # negated
    ],
)
def test_what_an_issue_about_wording_wants_the_message_to_say(text: str, wanted: list[str]) -> None:
    assert message_wants(text, "") == wanted


WORDING = """
    {prose}

    '''python
    import torch
    torch.zeros(2 * 10 ** 20)
    '''

    '''
    Traceback (most recent call last):
      File "<stdin>", line 1, in <module>
    TypeError: {message}
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("prose", "message", "verdict"),
    [
        # the message now names the overflow the issue asks for
        (
            "I'd expect the error to mention overflow.",
            "zeros(): argument 'size' must be tuple of ints, but found element of type int",
            "NOT_REPRODUCED [message]",
        ),
        # it names no limit: the reworded message decides nothing
        (
            "I'd expect the error to mention the limit.",
            "zeros(): argument 'size' must be tuple of ints, but found element of type int",
            "CANNOT_RUN",
        ),
        # the message the issue quotes already said it: no change answers the complaint
        (
            "I'd expect the error to mention overflow.",
            "zeros(): argument 'size' overflow when unpacking",
            "CANNOT_RUN",
        ),
    ],
)
def test_an_issue_about_an_errors_wording_is_answered_by_the_word_it_wants(
    tmp_path: Path, prose: str, message: str, verdict: str
) -> None:
    body = WORDING.format(prose=prose, message=message)
    assert_verdict(write_script(tmp_path, body, "Unhelpful error message for huge sizes"), verdict)
