"""Pasted characters that stop an issue's code parsing are replaced, and only then."""

from __future__ import annotations

from contribkit.issue.model import Issue
from contribkit.issue.parse import parse_issue
from contribkit.repro.plan import plan_repro
from contribkit.repro.unpaste import unpaste


def test_typographic_quotes_and_spaces_are_replaced_when_they_stop_parsing() -> None:
    code = "import torch\nx = torch.ones(2, device=\u201ccpu\u201d)\nif x.sum() > 0:\n\u00a0\u00a0\u00a0\u00a0print(x \u2212 1)\n"
    fixed = unpaste(code)
    assert fixed is not None
    text, edit = fixed
    assert (
        text == 'import torch\nx = torch.ones(2, device="cpu")\nif x.sum() > 0:\n    print(x - 1)\n'
    )
    assert edit == (
        "replace pasted characters that stop the code parsing: \u201c x1, \u201d x1,"
        " no-break space x4, minus sign \u2212 x1"
    )


def test_code_that_parses_or_would_still_not_is_left_alone() -> None:
    # In a string literal the quotes are the reporter's data: the code parses, nothing changes.
    assert unpaste('print("he said \u201chi\u201d")\n') is None
    # A real typo stays for the human: the replacement alone does not make it parse.
    assert unpaste("print(\u201ca\u201d))\n") is None
    assert unpaste("print(1\n") is None


def test_the_repro_runs_the_unpasted_code_and_records_the_edit() -> None:
    body = (
        "### Bug\n\n```python\nimport torch\n"
        "x = torch.tensor([1.0, 2.0], dtype=torch.float32, device=\u2018cpu\u2019)\n"
        "print(x.sum())\n```\n"
    )
    issue = Issue(title="sum is wrong", body=body, number=9, repo="o/r", url="https://x/9")
    plan = plan_repro(issue, parse_issue(issue))
    script = plan.files["repro.py"]
    assert "device='cpu')" in script and "incomplete=None" in script
    assert (
        "Edit: replace pasted characters that stop the code parsing: \u2018 x1, \u2019 x1" in script
    )
