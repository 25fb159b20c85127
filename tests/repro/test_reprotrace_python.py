"""The evidence of errors raised by torch's own Python code, and torch's class names."""

from __future__ import annotations

import os

import pytest
import torch

from contribkit.target.reprotrace import explain_lines, raised_in_torch, torch_names

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
    found = torch_names(["Multinomial", "DataLoader", "Linear", "NoSuchThing", "Block"])
    assert found["Multinomial"] is torch.distributions.Multinomial
    assert found["DataLoader"] is torch.utils.data.DataLoader
    assert found["Linear"] is torch.nn.Linear
    assert "NoSuchThing" not in found and "Block" not in found  # Block: torch._C's binding
    assert "Graph" not in torch_names(["Graph"])  # torch.Graph and torch.fx.Graph: ambiguous
    # base classes: a bare Module() or Dataset() is the reporter's own class, cut out
    assert torch_names(["Module", "Function", "Dataset", "Distribution", "Optimizer"]) == {}


class Headless(torch.nn.Module):  # type: ignore[misc]  # the snippet left its forward out
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(2, 2)


def test_an_error_about_the_snippets_own_class_is_not_torchs() -> None:
    """torch's module call raising for a class the script defines (no forward) is the
    snippet's own breakage, not an operation's."""
    exc = _raised(lambda: Headless()(torch.randn(1, 2)))
    assert isinstance(exc, NotImplementedError)
    assert raised_in_torch(exc, HERE) is None


def test_an_error_of_torchs_infrastructure_is_not_an_operations() -> None:
    """Serialization, data loading and optimizers speak of the machine or of the snippet's
    use of them: no operation of the issue's raised those."""
    empty = torch.nn.Sequential()
    exc = _raised(lambda: torch.optim.SGD(empty.parameters(), lr=0.1))
    assert "empty parameter list" in str(exc) and raised_in_torch(exc, HERE) is None
    exc = _raised(lambda: torch.load("/nonexistent/dir/x.pt"))
    assert raised_in_torch(exc, HERE) is None
    exc = _raised(lambda: torch.utils.data.DataLoader([1, 2], batch_size=-1))
    assert raised_in_torch(exc, HERE) is None


def test_explain_names_the_op_the_error_came_from() -> None:
    doc = {
        "recorded": True,
        "ran_to_end": False,
        "ops": {},
        "op_calls": 0,
        "devices": ["cpu"],
        "functions": [],
        "raised_by": {"op": "GRU", "devices": ["cpu"]},
    }
    assert "the error came from: GRU [cpu]" in explain_lines(doc, "a rule")
