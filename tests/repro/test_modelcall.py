"""The model-call edit: a snippet that only defines a model is built and called on the input
the issue's prose states, and only then."""

from __future__ import annotations

import ast
import textwrap

import pytest

from contribkit.repro.modelcall import model_call, stated_shapes

MODEL = textwrap.dedent("""\
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(8, 8, 3, padding=1)

        def forward(self, x):
            return self.conv(x)

    class Net(nn.Module):
        def __init__(self, width=8):
            super().__init__()
            self.block = Block()

        def forward(self, x, scale=1.0):
            return self.block(x) * scale
    """)


def call_for(code: str, prose: str) -> str | None:
    tree = ast.parse(code)
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    found = model_call(tree, loaded, prose)
    return None if found is None else found.lines[-1]


@pytest.mark.parametrize(
    ("prose", "shapes"),
    [
        ("The input is a tensor of shape (2, 8, 16, 16).", [(2, 8, 16, 16)]),
        ("Feed it `torch.randn(1, 3, 224, 224)` and it fails.", [(1, 3, 224, 224)]),
        ("x has size [4, 10] and y is shaped 4x10, then x again: shape (4, 10)", [(4, 10)]),
        ("Inputs of shape (2, 3) and shape (3,)", [(2, 3), (3,)]),
        ("x.shape = torch.Size([4, 5]), x.size() == (4, 5), y shape: [2, 3]", [(4, 5), (2, 3)]),
        ("It fails for large batches.", []),
    ],
)
def test_stated_shapes(prose: str, shapes: list[tuple[int, ...]]) -> None:
    assert stated_shapes(prose) == shapes


def test_the_outer_model_is_called_on_the_stated_input() -> None:
    call = call_for(MODEL, "With an input of shape (2, 8, 16, 16) the output is wrong.")
    assert call == "_contribkit_output = Net().to(DEVICE)(torch.randn(2, 8, 16, 16, device=DEVICE))"


@pytest.mark.parametrize(
    ("code", "prose"),
    [
        (MODEL, "The output is wrong for some inputs."),  # no input stated
        (MODEL, "Inputs of shape (2, 8, 16, 16) and shape (2, 8)."),  # two inputs, one argument
        (MODEL, "An input of shape (2, 0, 16)."),  # an empty dimension
        (MODEL, "An input of shape (4096, 4096, 4096)."),  # past what a repro builds
        (MODEL.replace("width=8", "width"), "Shape (2, 8, 16, 16)."),  # a constructor argument
        (MODEL + "\nnet = Net()\n", "Shape (2, 8, 16, 16)."),  # the code uses the model itself
        (MODEL.replace("Block()", "None"), "Shape (2, 8, 16, 16)."),  # two unused models
    ],
)
def test_no_call_where_it_would_be_a_guess(code: str, prose: str) -> None:
    assert call_for(code, prose) is None
