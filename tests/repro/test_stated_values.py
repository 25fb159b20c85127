"""Values an issue states in a sentence ("returns -1 instead of 0"), and how a run's printed
lines decide them."""

from __future__ import annotations

from pathlib import Path

import pytest

from contribkit.repro.statedvalues import StatedValue, section_pair, stated_values
from contribkit.target.reprojudge import judge_stated, value_tokens
from tests.repro.test_repro_evidence import run_json, write_script


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        ("`torch.div` returns -1 instead of 0 when rounding down", ("-1", "0")),
        ("expected 2.5 but got 2.0", ("2.0", "2.5")),
        ("It should be `True`, but it is `False`.", ("False", "True")),
        ("gives nan while the expected result is 0", ("nan", "0")),
        ("the dtype is torch.float64 instead of torch.float32", ("torch.float64", "torch.float32")),
        ("arange returns 11 elements instead of 10", ("11", "10")),
        (
            "Expected: `tensor([1., 2.])`, got: `tensor([1., 3.])`",
            ("tensor([1., 3.])", "tensor([1., 2.])"),
        ),
        ("The result is 4 but should be 3.", ("4", "3")),
    ],
)
def test_a_sentence_states_the_value_given_and_the_one_expected(
    text: str, pair: tuple[str, str]
) -> None:
    assert stated_values(text, "") == [StatedValue(pair[0], pair[1], "the title")]


@pytest.mark.parametrize(
    "text",
    [
        "returns wrong values instead of raising an error",  # no literal
        "I used 0.5 instead of 1.0 as the threshold",  # an input chosen, not a result
        "pip installs torch 2.1 instead of 2.0",  # a version
        "the loss is large",
    ],
)
def test_no_pair_without_two_different_stated_results(text: str) -> None:
    assert stated_values("", text) == []


def test_values_are_read_from_the_prose_after_the_title() -> None:
    found = stated_values("sum is wrong", "Running it:\nit returns 7 instead of 6. Odd.")
    assert found == [StatedValue("7", "6", "the prose")]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("tensor(-1.)", ["-1."]),
        ("tensor([1., 2.], dtype=torch.float64)", ["1.", "2."]),
        ("torch.double", ["torch.float64"]),
        ("torch.Size([2, 3])", None),  # a shape, not the values 2 and 3
        ("True", ["true"]),
        ("loss 3", None),
        ("torch.sum(x)", None),
    ],
)
def test_a_value_is_a_value_and_nothing_else(text: str, tokens: list[str] | None) -> None:
    assert value_tokens(text) == tokens


PAIR = [{"actual": "-1", "expected": "0", "where": "the title"}]


@pytest.mark.parametrize(
    ("printed", "verdict"),
    [
        (["tensor(-1.)"], "REPRODUCED"),
        (["result: -1"], "REPRODUCED"),
        (["tensor(0.)"], "NOT_REPRODUCED"),
        (["tensor([0., -1.])"], None),  # neither value alone on a line
        (["tensor(0.3000)"], None),  # 0.3 is not the 0 the issue states
        (["tensor(-1.)", "tensor(0.)"], None),  # both
        ([], None),
    ],
)
def test_a_stated_value_counts_only_when_a_line_shows_it_whole(
    printed: list[str], verdict: str | None
) -> None:
    judged = judge_stated(printed, PAIR)
    assert (judged[0] if judged else None) == verdict


def test_pairs_that_disagree_decide_nothing() -> None:
    pairs = [*PAIR, {"actual": "True", "expected": "False", "where": "the prose"}]
    assert judge_stated(["-1", "False"], pairs) is None
    assert judge_stated(["-1", "True"], pairs) == (
        "REPRODUCED",
        "the code still prints -1 where the title says 0",
    )


STATED = """
    ### 🐛 Describe the bug

    '''python
    import torch
    a = torch.tensor([-7.0])
    print(torch.div(a, 2, rounding_mode="floor"))
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("title", "verdict"),
    [
        ("torch.div with rounding_mode='floor' returns -3 instead of -4", "NOT_REPRODUCED"),
        ("torch.div with rounding_mode='floor' gives -3, but it should be -4", "NOT_REPRODUCED"),
        ("floor division: expected -3 but got -4", "REPRODUCED"),
        ("torch.div with rounding_mode='floor' returns 5 instead of 6", "CANNOT_RUN"),
    ],
)
def test_a_repro_decides_by_the_values_its_issue_states(
    tmp_path: Path, title: str, verdict: str
) -> None:
    """floor(-7 / 2) is -4 on every torch: each title's claim is held to what the code prints."""
    doc = run_json(write_script(tmp_path, STATED, title))
    assert doc["verdict"] == verdict, doc
    if verdict != "CANNOT_RUN":
        assert doc["oracle"] == "stated-value"
    else:
        assert "shows one value alone of those the issue states" in doc["detail"]


def test_a_value_torch_prints_short_is_exact_to_its_four_decimals() -> None:
    """``tensor(2.)`` is 2.0000 as torch prints it, not any value that rounds to 2."""
    pair = [{"actual": "2", "expected": "2.5", "where": "the prose"}]
    assert judge_stated(["tensor(2.)"], pair) == (
        "REPRODUCED",
        "the code still prints 2 where the prose says 2.5",
    )
    assert judge_stated(["tensor(2.5000)"], pair) is not None


@pytest.mark.parametrize(
    ("expected", "actual", "pair"),
    [
        ("The result should be `2.0`.", "It gives `0.0`.", ("0.0", "2.0")),
        ("`True`", "`False`", ("False", "True")),
        ("It should not crash.", "It crashes.", None),  # no value
        ("should be 5 for 3 elements", "gives 4", None),  # two values: which one?
    ],
)
def test_the_expected_and_actual_sections_state_a_pair(
    expected: str, actual: str, pair: tuple[str, str] | None
) -> None:
    found = section_pair(expected, actual)
    assert (found and (found.actual, found.expected)) == pair
