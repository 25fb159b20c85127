"""An issue whose only code is inline, end to end: the script runs the backticked statements
and the error the prose quotes decides, with real CPU torch (issues invented here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.repro.test_repro_evidence import run_json, write_script

MATMUL = """
    ### 🐛 Describe the bug

    Multiplying matrices whose inner sizes differ fails: `a = torch.ones(2, 3)`, then
    `torch.mm(a, torch.ones(2, 3))` raises
    `RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)`.
    `torch.mm(a, torch.ones(3, 2))` works fine.

    ### Versions

    `torch.ones(1).sum()` prints fine here; torch 2.13, Linux.
"""

SUM = """
    ### 🐛 Describe the bug

    Summing along the second dimension fails: with `x = torch.ones(2, 3)`, the call
    `x.sum(dim=1)` raises
    `IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)`.
"""


@pytest.mark.slow
def test_inline_code_reproduces_the_error_its_prose_quotes(tmp_path: Path) -> None:
    script = write_script(tmp_path, MATMUL, "torch.mm raises on mismatched shapes")
    text = script.read_text()
    assert "a = torch.ones(2, 3)\n_repro.echo(torch.mm(a, torch.ones(2, 3)))\n" in text
    assert "torch.ones(3, 2)" not in text and "torch.ones(1).sum()" not in text
    meta = json.loads((script.parent / "meta.json").read_text())
    assert meta["edits"][0] == (
        "the issue's code is inline: ran its 2 backticked expression(s), in the order the"
        " prose gives them"
    )
    assert "#   Edit: the issue's code is inline: ran its 2 backticked" in text
    doc = run_json(script)
    assert (doc["verdict"], doc["oracle"]) == ("REPRODUCED", "signature"), doc
    assert "mat1 and mat2 shapes cannot be multiplied" in doc["detail"]


@pytest.mark.slow
def test_inline_code_that_runs_clean_is_not_reproduced(tmp_path: Path) -> None:
    """The statements ran, the quoted error did not come, and the expression's value was
    echoed for the reader."""
    script = write_script(tmp_path, SUM, "sum over dim 1 raises IndexError")
    doc = run_json(script)
    assert doc["verdict"] == "NOT_REPRODUCED", doc
    assert "without IndexError: Dimension out of range" in doc["detail"]
    assert doc["evidence"]["ran_to_end"] is True and doc["evidence"]["op_calls"] >= 2
    shown = subprocess.run(
        [sys.executable, str(script), "--device", "cpu"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=script.parent,
    )
    assert shown.stdout.splitlines()[0] == "tensor([3., 3.])", shown.stdout


SHAPED = """
    ### 🐛 Describe the bug

    With `a` a float tensor of shape (2, 3), `torch.mm(a, torch.ones(2, 3))` raises
    `RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)`.
"""


@pytest.mark.slow
def test_a_name_the_spans_leave_undefined_is_the_existing_edits_business(
    tmp_path: Path,
) -> None:
    """The prose states `a`'s shape: the free-tensor edit defines it; where it does not, the
    run stops at the name, CANNOT_RUN, and never says NOT_REPRODUCED."""
    script = write_script(tmp_path / "shaped", SHAPED, "torch.mm raises on mismatched shapes")
    assert "a = torch.ones(2, 3, dtype=torch.float32)\n" in script.read_text()
    assert run_json(script)["verdict"] == "REPRODUCED"
    unstated = SHAPED.replace("With `a` a float tensor of shape (2, 3), ", "")
    doc = run_json(write_script(tmp_path / "bare", unstated, "torch.mm raises"))
    assert doc["verdict"] == "CANNOT_RUN", doc
    assert "uses a name it never defines (NameError: name 'a' is not defined)" in doc["detail"]
