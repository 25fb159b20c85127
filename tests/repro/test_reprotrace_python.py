"""The evidence of errors raised by torch's own Python code, and torch's class names."""

from __future__ import annotations

import os

import pytest
import torch

from contribkit.target.reprotrace import raised_in_torch, torch_names

HERE = os.path.abspath(__file__)


def _raised(call: object) -> BaseException:
    with pytest.raises(Exception) as info:
        call()  # type: ignore[operator]
    return info.value


def test_an_error_a_module_raises_in_python_is_torchs() -> None:
    """An nn.Module's input check raises before any op runs: the module's class raised it."""
    rnn = torch.nn.GRU(4, 6)
    exc = _raised(lambda: rnn(torch.randn(5, 3, 4), torch.zeros(1, 1, 6)))
    assert raised_in_torch(exc, HERE) == ("GRU", ["cpu"])


def test_an_error_a_functional_raises_in_python_is_torchs() -> None:
    exc = _raised(
        lambda: torch.nn.functional.interpolate(
            torch.randn(1, 1, 4), scale_factor=2.0, mode="bilinear"
        )
    )
    assert raised_in_torch(exc, HERE) == ("interpolate", ["cpu"])


def test_an_error_the_code_raises_itself_is_not_torchs() -> None:
    def own() -> None:
        raise ValueError("the snippet's own check")

    assert raised_in_torch(_raised(own), HERE) is None
    # called from another file than the script: nothing the script called raised it
    exc = _raised(lambda: torch.nn.GRU(4, 6)(torch.randn(5, 3, 4), torch.zeros(1, 1, 6)))
    assert raised_in_torch(exc, "/elsewhere/repro.py") is None


def test_torch_names_defines_a_class_that_one_namespace_holds() -> None:
    found = torch_names(["Multinomial", "DataLoader", "Linear", "NoSuchThing", "Tensor"])
    assert found["Multinomial"] is torch.distributions.Multinomial
    assert found["DataLoader"] is torch.utils.data.DataLoader
    assert found["Linear"] is torch.nn.Linear
    assert found["Tensor"] is torch.Tensor  # torch.Tensor, also reachable elsewhere: one object
    assert "NoSuchThing" not in found
    assert "Graph" not in torch_names(["Graph"])  # torch.Graph and torch.fx.Graph: ambiguous
