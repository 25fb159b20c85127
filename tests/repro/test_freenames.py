"""The free-tensor edit: a snippet that uses a tensor it never defines gets a definition from
the shape the issue states for that name (in a comment or in the prose), and only then.

The fixtures are written for these tests in the shapes real reports take: ``# x: (2, 3, 8)``
on the use line, ``# t.shape = torch.Size([4, 5])`` above it, "where `x` is a tensor of shape
(2, 3)" and ``w = torch.ones(3, 4)`` in the prose."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from contribkit.repro.edits import EditedCode, edit_code
from tests.repro.test_repro_evidence import run_json, write_script


def edited(code: str, prose: str = "") -> EditedCode:
    return edit_code(textwrap.dedent(code).lstrip("\n"), prose)


def definitions(result: EditedCode) -> list[str]:
    """The definitions the free-tensor edit lists (at most one such edit), or [] for none."""
    found = [e for e in result.edits if " as the input" in e]
    assert len(found) <= 1, found
    return found[0].split(" states: ", 1)[1].split("; ") if found else []


SOFTMAX = """
    import torch
    y = torch.softmax(x, dim=-1)  # x: (2, 3, 8)
    print(y.sum())
"""


def test_a_shape_in_a_comment_on_the_use_line_defines_the_name() -> None:
    result = edited(SOFTMAX)
    assert (
        "define the undefined name x as the input the issue states: x = torch.randn(2, 3, 8)"
        in result.edits
    )
    # defined before the code runs, after the import it needs; seeded by the runtime
    lines = result.text.splitlines()
    assert lines.index("x = torch.randn(2, 3, 8)") < lines.index(
        "y = torch.softmax(x, dim=-1)  # x: (2, 3, 8)"
    )
    assert lines.index("import torch") < lines.index("x = torch.randn(2, 3, 8)")
    assert result.uses_random and not result.deterministic


@pytest.mark.parametrize(
    ("code", "prose", "expected"),
    [
        (  # a comment line above the use, as torch prints a size
            "import torch\n# t.shape = torch.Size([4, 5])\nprint(t.sum(dim=0))\n",
            "",
            ["t = torch.randn(4, 5)"],
        ),
        (  # "has shape" in a comment, a name that is not x
            "import torch\n# inp has shape [2, 3]\nout = torch.cumsum(inp, 1)\n",
            "",
            ["inp = torch.randn(2, 3)"],
        ),
        (  # a prose sentence, the name in backticks, wrapped over two lines
            "import torch\nprint(torch.linalg.inv(x))\n",
            "It fails where `x` is a tensor\nof shape (2, 3).",
            ["x = torch.randn(2, 3)"],
        ),
        (  # a factory call written in the prose keeps its factory
            "import torch\nprint(torch.log(a).mean())\n",
            "With a = torch.rand(4, 5) the mean is nan.",
            ["a = torch.rand(4, 5)"],
        ),
        (  # two names, each with its own shape and dtype, in one sentence
            "import torch\nprint(x @ w)\n",
            "Here `x` is a float64 tensor of shape (2, 3) and w = torch.ones(3, 4, dtype=torch.float64).",
            [
                "w = torch.ones(3, 4, dtype=torch.float64)",
                "x = torch.randn(2, 3, dtype=torch.float64)",
            ],
        ),
        (  # integer and bool dtypes, in the XTensor and "dtype" spellings
            "import torch\nprint(src[idx], mask.any())\n",
            "idx is a LongTensor of size [4]. mask has shape (2, 2) and dtype bool.",
            [
                "idx = torch.randint(0, 10, (4,), dtype=torch.int64)",
                "mask = torch.rand(2, 2) > 0.5",
            ],
        ),
        (  # a half tensor, in a comment
            "import torch\ny = torch.nn.functional.gelu(h)  # h: (8, 16) fp16\n",
            "",
            ["h = torch.randn(8, 16, dtype=torch.float16)"],
        ),
    ],
)
def test_accepted_forms(code: str, prose: str, expected: list[str]) -> None:
    result = edited(code, prose)
    assert definitions(result) == expected
    for line in expected:
        assert line in result.text.splitlines()


def test_the_definition_goes_to_the_scripts_device_where_the_code_uses_it() -> None:
    result = edited("import torch\ny = torch.relu(x.to(device))  # x: (3, 4)\n")
    assert definitions(result) == ["x = torch.randn(3, 4, device=DEVICE)"]
    lines = result.text.splitlines()
    assert lines.index("device = torch.device(DEVICE)") < lines.index(
        "x = torch.randn(3, 4, device=DEVICE)"
    )


def test_a_dtype_name_alone_keeps_the_default_device() -> None:
    result = edited("import torch\ny = torch.relu(x.to(dtype))  # x: (3, 4)\n")
    assert definitions(result) == ["x = torch.randn(3, 4)"]


def test_the_name_gets_import_torch_when_the_code_has_none() -> None:
    result = edited("y = x.sum()  # x: (2, 3)\nprint(y)\n")
    lines = result.text.splitlines()
    assert lines[:2] == ["import torch", "x = torch.randn(2, 3)"]


@pytest.mark.parametrize(
    ("code", "prose"),
    [
        ("import torch\nprint(torch.linalg.inv(x))\n", "It fails for some inputs."),  # no shape
        (  # two shapes for one name (the comment and the prose disagree)
            "import torch\nprint(torch.linalg.inv(x))  # x: (2, 3)\n",
            "`x` has shape (3, 2).",
        ),
        (  # bound in the code (later, or in a function): not free
            "import torch\nprint(x)  # x: (2, 3)\nx = torch.zeros(2)\n",
            "",
        ),
        (  # a shape that names no one while two names are free
            "import torch\nprint(x @ w)\n",
            "A tensor of shape (2, 3) fails.",
        ),
        (  # a shape in a comment without the name, on the line that uses it
            "import torch\ny = model(x)  # (2, 3, 8)\n",
            "",
        ),
        ("import torch\nprint(x(3))\n", "`x` has shape (2, 3)."),  # called: no tensor
        (  # a module's method: no tensor
            "import torch\nmodel.eval()\n",
            "`model` has shape (2, 3).",
        ),
        (  # a class from it: a module (an import the span left out), not a tensor
            "import torch\nd = D.dirichlet.Dirichlet(torch.ones(3))\n",
            "`D` has shape (3,).",
        ),
        ("import torch\nprint(x.sum())\n", "x is a numpy array of shape (2, 3)."),  # not a tensor
        ("import torch\nprint(x.sum())\n", "x has shape (4096, 4096, 4096)."),  # too large
        ("import torch\nprint(x.sum())\n", "x has shape (2, 0)."),  # an empty dimension
        (  # the English article, not the name a
            "import torch\nprint(a.sum())\n",
            "It fails on a tensor of shape (2, 3).",
        ),
        (  # the x of "3 x 4" is a times sign, not the name x
            "import torch\nprint(x.sum())\n",
            "It fails on a 3 x 4 matrix of shape (3, 4).",
        ),
        (  # two dtypes for the name
            "import torch\nprint(x.sum())\n",
            "x of shape (2, 3) works in float32 but fails in float16.",
        ),
        (  # a dtype before every name of two
            "import torch\nprint(x @ w)\n",
            "a half tensor `x` of shape (2, 3) and w: (3, 4)",
        ),
        (  # the shape is the output the issue quotes: defining x from it would echo it
            "import torch\nprint(x.shape)\n#: torch.Size([4, 5])\n",
            "`x.shape` is torch.Size([4, 5]) and x has shape (4, 5).",
        ),
    ],
)
def test_refused_forms(code: str, prose: str) -> None:
    result = edited(code, prose)
    assert definitions(result) == []
    assert "torch.randn(" not in result.text and "torch.rand(" not in result.text


def test_a_name_with_a_stated_shape_beside_one_without() -> None:
    """Only the name whose shape is stated is defined: the other still stops at NameError."""
    result = edited("import torch\nprint(x + y)  # x: (2, 3)\n")
    assert definitions(result) == ["x = torch.randn(2, 3)"]
    assert "y = " not in result.text


CUT_SNIPPET = """
    ### 🐛 Describe the bug

    `torch.linalg.inv` gives an unclear error when `x` is a tensor of shape (2, 3):

    '''python
    import torch
    y = torch.linalg.inv(x)
    print(y)
    '''

    '''
    RuntimeError: linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices
    '''
"""


@pytest.mark.slow
def test_a_script_runs_past_the_undefined_name_to_a_verdict(tmp_path: Path) -> None:
    """The edit end to end: the script defines x from the prose, runs the issue's call and
    decides; without the stated shape it still stops at the NameError and says so."""
    script = write_script(tmp_path / "stated", CUT_SNIPPET, "linalg.inv error on a 2x3 input")
    assert "x = torch.randn(2, 3)" in script.read_text().splitlines()
    meta = json.loads((script.parent / "meta.json").read_text())
    assert (
        "define the undefined name x as the input the issue states: x = torch.randn(2, 3)"
        in meta["edits"]
    )
    doc = run_json(script)
    assert (doc["verdict"], doc["oracle"]) == ("REPRODUCED", "signature"), doc
    assert "2 by 3 matrices" in doc["detail"]
    assert doc["evidence"]["ops"]["linalg_inv"]["devices"] == ["cpu"]

    unstated = CUT_SNIPPET.replace(" when `x` is a tensor of shape (2, 3)", "")
    doc = run_json(write_script(tmp_path / "unstated", unstated, "linalg.inv error"))
    assert doc["verdict"] == "CANNOT_RUN", doc
    assert "uses a name it never defines (NameError: name 'x' is not defined)" in doc["detail"]
    assert "define it in repro.py" in doc["detail"]


def test_labels_and_indices_need_their_dtype_said() -> None:
    """A float tensor would be a wrong ``target``/``idx``: without a dtype it stays undefined."""
    code = "import torch\nprint(torch.nn.functional.cross_entropy(logits, target))\n"
    result = edited(code, "`logits` has shape (4, 10) and `target` has shape (4,).")
    assert definitions(result) == ["logits = torch.randn(4, 10)"]
    result = edited(code, "logits: (4, 10); target is a LongTensor of shape (4,).")
    assert definitions(result) == [
        "logits = torch.randn(4, 10)",
        "target = torch.randint(0, 10, (4,), dtype=torch.int64)",
    ]
