"""Issue shapes that once drew a misleading definite verdict: each now ends CANNOT_RUN (with
what to add) or in the verdict a careful human reaches on CPU torch.

The issues here are written for these tests, in the shapes real reports take; their scripts
run with the real CPU torch.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from contribkit.issue.parse import parse_issue
from contribkit.repro.errorclaims import reports_error
from contribkit.repro.evidence import unseen_frame
from contribkit.target.reprojudge import compare_unit, judge_outputs, volatile_line
from tests.repro.test_repro_verdicts import issue, run, script_for


def verdict_of(tmp_path: Path, body: str, title: str = "A bug") -> tuple[int, str]:
    return run(script_for(tmp_path, issue(body, title=title)))


# -- the no-error oracle: only an error the issue reports ---------------------------------------


def test_reports_error_reads_exceptions_not_sizes_absences_or_slowness() -> None:
    assert reports_error("Calling it fails with an error about strides.", "")
    assert reports_error("A title", "f(x)  # raises here")
    assert not reports_error("The max error against numpy is 0.5.", "")
    assert not reports_error("There is no error, just the wrong value.", "")
    assert not reports_error("It should raise an error for mixed dtypes.", "")
    assert not reports_error("It silently promotes; no error is raised.", "")
    assert not reports_error("Backward is slow: CI fails with a timeout error.", "")
    assert not reports_error("Wrong value", 'print("max error:", err)')
    # an error wanted, not met: a fix that adds the check must not read as the bug
    assert not reports_error(
        "It returns garbage for out-of-bounds indices instead of an error.", ""
    )
    assert not reports_error("I would expect an error to be raised here.", "")
    assert not reports_error("It would be better to raise an error.", "")
    # an error that should not be raised is the bug: "should not" is no error wanted
    assert reports_error("unfold should not raise such an error.", "")
    assert not reports_error("unfold should also raise such an error.", "")


def test_reports_error_reads_the_prose_not_the_code_it_quotes() -> None:
    """An error word that names a variable of the code is no report of an error."""
    losses = "errors = torch.tensor([0.3, 0.1])\nbest = errors.topk(1).indices"
    body = f"topk returns an unexpected index.\n\n{losses}\n\nIt prints 1, not 0."
    assert not reports_error(body, losses)
    handler = "try:\n    f(x)\nexcept ValueError as error:\n    print(error)"
    transcript = "\n".join(">>> " + line for line in handler.splitlines())
    assert not reports_error(f"Odd output.\n{transcript}", handler)
    assert reports_error(f"It fails with an error.\n{losses}", losses)  # the prose still counts


@pytest.mark.slow
def test_a_missing_error_is_not_cleared_by_a_clean_run(tmp_path: Path) -> None:
    """A clean run shows the error still missing: never NOT_REPRODUCED. The prose alone does
    not decide (the missing-error oracle reads a comment on the line that should raise)."""
    code, line = verdict_of(
        tmp_path,
        """
        torch.cat should raise an error for inputs of different dtypes, but it promotes:

        '''python
        import torch
        out = torch.cat([torch.ones(2, dtype=torch.int32), torch.ones(2, dtype=torch.float64)])
        '''
        """,
    )
    assert code == 125 and "CANNOT_RUN" in line, line


@pytest.mark.slow
def test_a_numerical_error_is_not_an_exception(tmp_path: Path) -> None:
    code, line = verdict_of(
        tmp_path,
        """
        '''python
        import torch
        x = torch.tensor([1.0, 2.0, 3.0, 4.0])
        print("max error:", abs(torch.median(x).item() - 2.5))
        '''

        The error against numpy is 0.5, far too large.
        """,
    )
    assert code == 125 and "CANNOT_RUN" in line, line


# -- quoted output: lines that cannot decide -------------------------------------------------


def test_volatile_lines_and_missing_lines_do_not_decide() -> None:
    assert volatile_line("0x55d5c1a2b2c0") and volatile_line("1.13.1+cu117")
    assert volatile_line("backward took 3.2 s") and not volatile_line("tensor([1., 2.])")
    assert compare_unit([], ["UserWarning: noisy"], None) == ["missing"]
    assert judge_outputs(["missing"], True) is None
    assert judge_outputs(compare_unit([], None, ["tensor(1)"]), True) is None
    assert compare_unit(["0x1", "0x2"], ["0x55d5c1a2b2c0", "0x55d5c1a2f100"], None) == ["volatile"]
    assert judge_outputs(["volatile"], True) is None


@pytest.mark.slow
def test_a_version_line_is_skipped_and_the_value_still_decides(tmp_path: Path) -> None:
    code, line = verdict_of(
        tmp_path,
        """
        '''python
        import torch
        print(torch.__version__)
        print(torch.median(torch.tensor([1.0, 2.0, 3.0, 4.0])))
        '''

        '''
        1.13.1+cu117
        tensor(2.)
        '''
        """,
    )
    assert code == 1 and "REPRODUCED [quoted-output]" in line, line


@pytest.mark.slow
def test_timings_from_deterministic_code_are_not_compared(tmp_path: Path) -> None:
    code, line = verdict_of(
        tmp_path,
        """
        '''python
        import time
        import torch
        x = torch.ones(1000)
        start = time.perf_counter()
        torch.cumsum(x, 0)
        print(time.perf_counter() - start)
        '''

        Output:
        '''
        0.4123
        '''
        """,
    )
    assert code == 125 and "CANNOT_RUN" in line, line


@pytest.mark.slow
def test_a_quoted_warning_is_not_cleared_by_empty_stdout(tmp_path: Path) -> None:
    code, line = verdict_of(
        tmp_path,
        """
        '''python
        import torch
        b = torch.tensor(torch.ones(3))
        '''

        prints

        '''
        t.py:3: UserWarning: To copy construct from a tensor, it is recommended to use clone()
          b = torch.tensor(torch.ones(3))
        '''
        """,
    )
    assert code == 125 and "CANNOT_RUN" in line, line


# -- the signature: a clean run must have been able to show the error ---------------------------


SWALLOWED = """
'''python
import torch
try:
    torch.nn.Conv1d(1, 1, 3, stride=2, padding="same")
    print("ok")
except Exception:
    print("failed")
'''

'''
ValueError: padding='same' is not supported for strided convolutions
'''
"""


@pytest.mark.slow
def test_code_that_catches_the_error_is_not_a_clean_run(tmp_path: Path) -> None:
    code, line = verdict_of(tmp_path, SWALLOWED)
    assert code == 125 and "catches errors" in line, line


@pytest.mark.slow
def test_a_traceback_line_missing_from_the_code_is_not_a_clean_run(tmp_path: Path) -> None:
    body = """
    '''python
    import torch
    net = torch.nn.Linear(10, 10)
    '''

    '''
    Traceback (most recent call last):
      File "train.py", line 88, in <module>
        loss.backward()
      File "/usr/lib/python3.10/site-packages/torch/_tensor.py", line 487, in backward
        torch.autograd.backward(
    RuntimeError: one of the variables needed for gradient computation has been modified
    '''
    """
    parsed = parse_issue(issue(body))
    assert unseen_frame(issue(body).body or "", parsed.code) == "loss.backward()"
    code, line = verdict_of(tmp_path, body)
    assert code == 125 and "'loss.backward()'" in line, line


# -- the issue's own checks ------------------------------------------------------------------


@pytest.mark.slow
def test_passing_preconditions_do_not_clear_a_printed_bug(tmp_path: Path) -> None:
    code, line = verdict_of(
        tmp_path,
        """
        '''python
        import torch
        x = torch.tensor([0.5, 1.5, 2.5])
        assert x.dtype == torch.float32
        y = torch.round(x)
        print(y)  # tensor([0., 2., 2.])
        '''
        """,
    )
    assert code == 125 and "own checks passed, but" in line, line


@pytest.mark.slow
def test_an_assert_the_issue_says_passes_checks_nothing(tmp_path: Path) -> None:
    code, line = verdict_of(
        tmp_path,
        """
        '''python
        import torch
        out = torch.nanmean(torch.tensor([[float("nan"), float("nan")]]), dim=1)
        assert torch.isnan(out[0])  # passes, but numpy warns "Mean of empty slice"
        '''

        torch should warn like numpy does.
        """,
    )
    assert code == 125 and "CANNOT_RUN" in line, line


@pytest.mark.slow
def test_a_skipped_unittest_is_not_a_pass(tmp_path: Path) -> None:
    code, line = verdict_of(
        tmp_path,
        """
        '''python
        import unittest
        import torch

        class TestDigamma(unittest.TestCase):
            @unittest.skipIf(True, "requires scipy")
            def test_near_pole(self):
                self.assertTrue(torch.isfinite(torch.special.digamma(torch.tensor(-0.999))))

        if __name__ == "__main__":
            unittest.main()
        '''

        The assertion fails near the poles.
        """,
    )
    assert code == 125 and "skipped here: test_near_pole (requires scipy)" in line, line


@pytest.mark.slow
@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("F.one_hot(torch.tensor([-1, 0]), num_classes=3)", 0),  # raises: NOT_REPRODUCED
        ("torch.cat([torch.ones(1, dtype=torch.int32), torch.ones(1)])", 1),  # DID NOT RAISE
    ],
)
def test_pytest_raises_is_the_issues_own_check(tmp_path: Path, call: str, expected: int) -> None:
    code, line = verdict_of(
        tmp_path,
        f"""
        '''python
        import pytest
        import torch
        import torch.nn.functional as F

        def test_it():
            with pytest.raises(RuntimeError):
                {call}
        '''
        """,
    )
    assert code == expected and "[assert]" in line, line


# -- what a reader sees -------------------------------------------------------------------------


def test_no_escape_sequence_or_bidi_mark_hides_a_line_of_the_written_files(
    tmp_path: Path,
) -> None:
    """Escape sequences in the issue (a comment that clears the screen, a title that retitles the
    window, a bidi override: "Trojan Source") are written as their escapes, so `cat repro.py`
    shows every line; inside a string literal the escape means the same character."""
    body = (
        "Bug \x1b]0;pwned\x07 here, \u202eevil\u202c.\n\n```python\nimport os\n"
        'MARK = "\x1b[31mred"\n'
        "os.getcwd()  # \x1b[2K\x1b[1A hides the line above\rprint('shown')\n```\n"
    )
    script = script_for(tmp_path, issue(body, title="ones \x1b[5m blinks"))
    for path in script.parent.iterdir():
        text = path.read_text()
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text)
    source = script.read_text()
    assert "# \\x1b[2K\\x1b[1A hides the line above\nprint('shown')" in source
    literals = [n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant)]
    assert "\x1b[31mred" in literals


def test_an_error_met_and_wished_away_is_still_reported() -> None:
    """ "Warn instead of error" wishes the error away: the error is what the issue met."""
    assert reports_error("Recompiles cause an error. The fix: warn instead of error.", "")
