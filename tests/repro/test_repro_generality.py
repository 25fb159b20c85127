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
from contribkit.repro.plan import plan_repro

FENCE = "`" * 3

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
