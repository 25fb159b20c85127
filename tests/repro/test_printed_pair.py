"""The printed-pair oracle: two results the code prints last, which the prose says differ.

The issues here are written for these tests, in the shapes real reports take ("X is not equal
to Y" over ``print(X)`` / ``print(Y)``); the scripts run with real CPU torch.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contribkit.repro.edits import edit_code
from contribkit.repro.printedpair import claims_disagreement, other_quantity
from contribkit.target.reprojudge import judge_printed_pair
from tests.repro.test_repro_generality import assert_verdict, write_script


@pytest.mark.parametrize(
    ("prose", "claimed"),
    [
        ("The loss is not equal to `(a - b).abs().mean()` for large inputs.", True),
        ("These two should be the same, but they aren't.", True),
        ("round() gives a different result from floor(x + 0.5).", True),
        ("The results are different on CPU.", True),
        ("The outputs don't match.", True),
        ("I tried it with different inputs and it crashes.", False),  # inputs, not results
        ("The two results should be different, since the seeds differ.", False),  # wants it
        ("It returns the wrong dtype.", False),
        ("The gradients are not equal.", False),  # a gradient, not the printed values
        ("The channels_last version should be the same speed.", False),
        ("The two generators produce the same values, but they should differ.", False),
        ("It should give different results for different seeds.", False),
    ],
)
def test_which_prose_claims_two_results_disagree(prose: str, claimed: bool) -> None:
    assert claims_disagreement(prose) is claimed


@pytest.mark.parametrize(
    ("first", "second", "verdict"),
    [
        (["tensor(0.5000)"], ["tensor(0.5000)"], "NOT_REPRODUCED"),
        (["tensor([2., 4.])"], ["tensor([3., 4.])"], "REPRODUCED"),
        (["loss: tensor(0.2500)"], ["tensor(0.5000)"], None),  # a label apart: abstain
        (["0.5"], ["tensor(0.5400)"], None),  # printed otherwise
        (["tensor(0.5000)"], ["0.50001234"], None),
        (["tensor(1.5000, dtype=torch.float64)"], ["tensor(1.5000)"], None),  # a dtype apart
        (["tensor([-0., -0.])"], ["tensor([0., 0.])"], None),  # a sign of zero apart
        (["tensor(2)"], ["tensor(2.)"], None),
        (["50027.62109375"], ["50027.625"], None),  # a float's rounding
        (["409.6000671"], ["409.5"], "REPRODUCED"),
        (["tensor(nan)"], ["tensor(1.)"], "REPRODUCED"),
        (["tensor([1., 2.])"], ["tensor(1.)"], None),  # not one kind of value
        (
            ["tensor([[0.1, 0.2],", "        [0.3, 0.4]])"],
            ["tensor([[0.1, 0.2], [0.3, 0.4]])"],
            "NOT_REPRODUCED",
        ),  # a tensor printed on two lines
        (["torch.Size([2, 3])"], ["torch.Size([3, 2])"], None),  # a shape is no value here
        ([], ["tensor(1.)"], None),  # the first print never ran
    ],
)
def test_the_two_printed_values_decide(
    first: list[str], second: list[str], verdict: str | None
) -> None:
    judged = judge_printed_pair({1: first, 2: second}, [1, 2])
    assert (judged[0] if judged else None) == verdict


def test_only_the_two_prints_that_end_the_code_are_marked() -> None:
    code = "import torch\nx = torch.ones(2)\nprint(x.sum())\nprint('mean', x.mean())\n"
    edited = edit_code(code, "x.sum() is not equal to the mean times two")
    assert edited.pair == [1, 2]
    assert "_repro.mark(1); print(x.sum()); _repro.mark(-1)" in edited.text
    assert "_repro.mark(2); print('mean', x.mean()); _repro.mark(-1)" in edited.text
    assert edit_code(code + "y = 1\n", "x.sum() is not equal to the mean").pair == []
    assert edit_code(code, "x.sum() crashes").pair == []
    claim = "these are not equal"
    assert edit_code("print(1)\n" + code, claim).pair == []  # a third print
    shapes = code.replace("x.sum()", "x.sum().shape").replace("x.mean()", "x.mean().shape")
    assert edit_code(shapes, claim).pair == []  # shapes are no printed values
    fallback = code.replace(
        "torch.ones(2)", "torch.ones(2, device='xpu' if torch.xpu.is_available() else 'cpu')"
    )
    assert edit_code(fallback, claim).pair == []  # a device taken by fallback


@pytest.mark.parametrize(
    ("code", "prose"),
    [
        # timings are no values of a computation
        (
            "import timeit, torch\nx = torch.ones(3)\nprint(timeit.timeit(lambda: x + 1, number=5))"
            "\nprint(timeit.timeit(lambda: x * 1, number=5))\n",
            "The two numbers printed are not the same.",
        ),
        # an input printed beside its result: the claim compares with numpy, which never runs
        (
            "import torch\nx = torch.tensor([0.5, 1.5])\nprint(x)\nprint(torch.round(x))\n",
            "torch.round gives different results from numpy.round for halves.",
        ),
        (
            "import torch\nx = torch.tensor([0.5, 1.5])\nprint(torch.round(x))\nprint(torch.round(x + 0))\n",
            "torch.round gives different results from numpy.round for halves.",
        ),
        # two random draws: the two results are of other inputs
        (
            "import torch\nprint(torch.mean(torch.randn(1000)))\nprint(torch.randn(1000).mean())\n",
            "The two results should be the same, but they are different.",
        ),
        # memory no one wrote: equal or not by chance
        (
            "import torch\na = torch.empty(100).sum()\nb = torch.empty(100).sum()\nprint(a)\nprint(b)\n",
            "The two outputs should be the same, but they are different.",
        ),
        # two outputs of one call
        (
            "import torch\nx = torch.tensor([3, 1, 2])\nout, inv = torch.unique(x, return_inverse=True)"
            "\nprint(out)\nprint(inv)\n",
            "The output is different from what the documentation describes.",
        ),
    ],
)
def test_no_pair_where_the_prints_are_not_the_two_results_compared(code: str, prose: str) -> None:
    assert edit_code(code, prose).pair == []


def test_a_pair_that_holds_what_the_claim_compares_with() -> None:
    code = "import numpy as np\nimport torch\nx = torch.ones(3)\nprint(x.sum())\nprint(np.sum(x.numpy()))\n"
    assert edit_code(code, "torch.sum is not equal to numpy's sum here.").pair == [1, 2]
    assert other_quantity("conv2d with channels_last is much slower than contiguous")
    assert not other_quantity("nn.L1Loss works incorrectly with CPU")


PAIR = """
    ### 🐛 Describe the bug

    {prose}

    '''python
    import torch
    x = torch.tensor([0.5, 1.5, 2.5, 3.5])
    print({first})
    print({second})
    '''
    {output}
    ### Versions
    PyTorch version: 1.4.0
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("prose", "first", "second", "output", "verdict"),
    [
        # round() rounds half to even: the two still differ
        (
            "torch.round gives a different result from torch.floor(x + 0.5).",
            "torch.round(x)",
            "torch.floor(x + 0.5)",
            "",
            "REPRODUCED [printed-pair]",
        ),
        # two computations of one mean that agree now
        (
            "x.mean() is not equal to x.sum() / 4 here.",
            "x.mean()",
            "x.sum() / 4",
            "",
            "NOT_REPRODUCED [printed-pair]",
        ),
        # torch's 4 decimals beside Python's full float: agree only as far as the coarser shows
        (
            "x.mean() is not equal to the mean in float64.",
            "x.mean() / 3",
            "(x.double().mean() / 3).item()",
            "",
            "CANNOT_RUN",
        ),
        # the prose wants them to differ: no such oracle
        (
            "x.mean() and x.sum() / 4 should be different, but they print the same.",
            "x.mean()",
            "x.sum() / 4",
            "",
            "CANNOT_RUN",
        ),
        # quoted output decides first
        (
            "x.mean() is not equal to x.sum() / 4 here.",
            "x.mean()",
            "x.sum() / 4",
            "Output:\n    '''\n    tensor(2.2500)\n    tensor(2.7500)\n    '''",
            "NOT_REPRODUCED [quoted-output]",
        ),
    ],
)
def test_two_printed_results_the_prose_says_differ(
    tmp_path: Path, prose: str, first: str, second: str, output: str, verdict: str
) -> None:
    body = PAIR.format(prose=prose, first=first, second=second, output=output)
    assert_verdict(write_script(tmp_path, body, "two results disagree"), verdict)
