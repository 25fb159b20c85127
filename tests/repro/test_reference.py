"""The float64 recomputation a changed printed value is held to (contribkit.repro.reference),
and how the runtime judges a unit by it."""

from __future__ import annotations

from pathlib import Path

import pytest

from contribkit.repro.reference import recomputed_reference
from contribkit.target.reprojudge import against_reference, judge_outputs
from tests.repro.test_repro_evidence import run_json, write_script

NORMS = "import torch\na = torch.rand(20, 30)\nb = torch.norm(a)\nc = torch.norm(a.to(DEVICE))\n"


@pytest.mark.parametrize(
    ("code", "expr", "reference"),
    [
        (NORMS, "b", "torch.norm(f64(a))"),
        (NORMS, "(b, c)", "(torch.norm(f64(a)), torch.norm(f64(a).to(DEVICE)))"),
        (NORMS, "b / 2", "torch.norm(f64(a)) / 2"),
        ("import torch\nx = torch.ones(3, dtype=torch.half)\n", "x.sum()", "f64(x).sum()"),
    ],
)
def test_a_printed_value_is_computed_again_from_the_inputs(
    code: str, expr: str, reference: str
) -> None:
    line = len(code.splitlines()) + 1
    assert recomputed_reference(code, expr, line, "f64") == reference


@pytest.mark.parametrize(
    ("code", "expr"),
    [
        (NORMS, "a"),  # an input: nothing is computed again
        ("import torch\nx = torch.ones(3)\nx.add_(1)\n", "x.sum()"),  # changed in place
        ("import torch\nx = torch.ones(3)\nx[0] = 2\n", "x.sum()"),  # assigned into
        ("import torch\nx = torch.ones(3)\ny = f(x)\n", "y"),  # not torch's
        ("import torch\n", "torch.rand(3).sum()"),  # randomness drawn again
        ("import torch\nx = torch.ones(3)\nx = x * 2\n", "x.sum()"),  # bound twice
        ("import torch\nx = torch.ones(3)\n", "len(x)"),  # a builtin
        ("import torch\np = torch.ones(9) / 2\n", "torch.bernoulli(p).mean()"),  # drawn
        (
            "import torch.nn.functional as F\nimport torch\nx = torch.ones(9)\n",
            "F.dropout(x).sum()",
        ),
        ("import torch\nx = torch.empty(9)\n", "x.sum()"),  # uninitialised
    ],
)
def test_no_reference_where_the_code_does_not_say_how_the_value_was_made(
    code: str, expr: str
) -> None:
    assert recomputed_reference(code, expr, len(code.splitlines()) + 1, "f64") is None


F32 = 2.0**-23


@pytest.mark.parametrize(
    ("statuses", "reference", "after"),
    [
        (["changed"], (0.024, F32), ["wrong"]),  # dev 20551's CPU norm, 2.4% off
        (
            ["changed"],
            (1e-7, F32),
            ["changed"],
        ),  # close decides nothing: a formula's bug is in float64 too
        (["changed"], (1e-5, F32), ["changed"]),  # between: undecided
        (["changed"], (0.02, 2.0**-10), ["changed"]),  # half: 2% is within its noise
        (["changed"], (0.2, 2.0**-10), ["wrong"]),
        (["same"], (0.5, F32), ["same"]),  # only a changed value is held to the reference
        (["changed"], None, ["changed"]),
    ],
)
def test_a_changed_value_is_held_to_its_float64_recomputation(
    statuses: list[str], reference: tuple[float, float] | None, after: list[str]
) -> None:
    assert against_reference(statuses, reference) == after


def test_the_reference_decides_only_with_the_other_lines() -> None:
    assert judge_outputs(["wrong"], False) is not None
    assert judge_outputs(["wrong", "same"], False)[0] == "REPRODUCED"  # type: ignore[index]
    assert judge_outputs(["wrong", "fixed"], False) is None


CANCELLING = """
    ### 🐛 Describe the bug

    Adding a large offset and taking it away again loses the small values.

    '''python
    >>> import torch
    >>> x = torch.rand(1000)
    >>> y = x + 1e8
    >>> y.sum() - 1e11
    tensor(-4096.)
    '''
"""

ACCURATE = """
    ### 🐛 Describe the bug

    The sum of these values is far off.

    '''python
    >>> import torch
    >>> x = torch.rand(1000)
    >>> x.sum()
    tensor(20.1250)
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "verdict"), [(CANCELLING, "REPRODUCED"), (ACCURATE, "CANNOT_RUN")]
)
def test_a_changed_random_value_is_decided_by_its_float64_recomputation(
    tmp_path: Path, body: str, verdict: str
) -> None:
    """Random inputs print other values than the issue's: the same computation in float64 on
    the inputs of this run says the value is still wrong; close to it, nothing is decided."""
    doc = run_json(write_script(tmp_path, body, "sum is inaccurate"))
    assert doc["verdict"] == verdict, doc
    if verdict == "REPRODUCED":  # close to float64 is no fix: a formula's bug is there too
        assert doc["oracle"] == "quoted-output" and "float64" in doc["detail"]
    assert doc["evidence"]["ops"].keys() >= {"sum"}
    assert "float64" not in doc["evidence"]["ops"]["sum"]["dtypes"]  # the reference is unrecorded
