"""Real repro folders for the test scaffold's tests, written by contribkit's own repro planner.

The markdown parser is not needed: a ParsedIssue is built by hand, as `contribkit repro` would
have parsed it. ``BUGGY_OPS`` is a small stand-in for a buggy library function; the env var
``BUGGY_OPS_BUG`` switches its bug on (``1``: the issue's crash; ``other``: a different error;
``wrong``: a wrong result; ``nan``: rows of NaN; ``drift``: each call's rows differ from the
last call's, as a device that disagrees with the CPU would).
"""

from __future__ import annotations

from pathlib import Path

from contribkit.core.render import write_outputs
from contribkit.issue.model import Issue, ParsedIssue, Signature
from contribkit.repro.plan import plan_repro
from contribkit.target.reprojudge import normalise_message

BUGGY_OPS = """\
import itertools
import os

import torch

_calls = itertools.count()


def pick_rows(x, index):
    bug = os.environ.get("BUGGY_OPS_BUG")
    if bug == "1":
        raise RuntimeError(
            f"pick_rows(): index {index.tolist()} is out of bounds for the tensor at {hex(id(x))}"
        )
    if bug == "other":
        raise ValueError("an unrelated failure")
    rows = x.index_select(0, index)
    if bug == "nan":
        return rows * float("nan")
    if bug == "drift":
        return rows + next(_calls)
    return rows


def row_means(x):
    if os.environ.get("BUGGY_OPS_BUG") == "wrong":
        return x.sum(dim=1) / (x.shape[1] + 1)
    return x.mean(dim=1)
"""

CRASH_CODE = (
    "import torch\n"
    "import buggy_ops\n"
    "\n"
    'x = torch.arange(6.0, device="cuda").reshape(3, 2)\n'
    'rows = buggy_ops.pick_rows(x, torch.tensor([2, 0], device="cuda"))\n'
    "print(rows)\n"
)
# The same crash, written for no device in particular: the bug shows wherever the code runs.
ANY_DEVICE_CRASH_CODE = CRASH_CODE.replace(', device="cuda"', "")
CRASH_SIGNATURE = Signature(
    "RuntimeError",
    normalise_message(
        "pick_rows(): index [2, 0] is out of bounds for the tensor at 0x7f3a2b1c9e10"
    ),
    "traceback",
)
# Random numbers drawn on the CPU (a module's weights, randn without device=), then moved.
RANDOM_CRASH_CODE = (
    "import torch\n"
    "import buggy_ops\n"
    'layer = torch.nn.Linear(2, 3).to("cuda")\n'
    "x = torch.randn(3, 2).cuda()\n"
    'print(buggy_ops.pick_rows(layer(x), torch.tensor([2, 0], device="cuda")))\n'
)
WRONG_CODE = (
    "import torch\n"
    "import buggy_ops\n"
    "x = torch.rand(4, 3)\n"
    "actual = buggy_ops.row_means(x)\n"
    "expected = x.mean(dim=1)\n"
    "print(torch.allclose(actual, expected))\n"
)
COMPILE_CODE = (
    "import torch\n"
    "import buggy_ops\n"
    "\n"
    "def pick_first_two(x):\n"
    "    return buggy_ops.pick_rows(x, torch.tensor([0, 1])) * 2\n"
    "\n"
    'if __name__ == "__main__":\n'
    '    opt = torch.compile(pick_first_two, backend="eager")\n'
    "    x = torch.ones(3, 2)\n"
    "    out = opt(x)\n"
)
CUDA_COMPARE_CODE = (
    "import torch\n"
    "x = torch.linspace(-2, 2, 7)\n"
    "on_gpu = torch.erf(x.cuda())\n"
    "expected = torch.erf(x)\n"
    "print(torch.allclose(on_gpu.cpu(), expected))\n"
)


def make_repro(
    repros: Path,
    number: int | None,
    code: str,
    signature: Signature | None = None,
    title: str = "pick_rows rejects rows in range",  # names no device: the bug is on any
    labels: list[str] | None = None,
) -> Path:
    issue = Issue(
        title=title,
        body="(body)",
        number=number,
        repo="pytorch/pytorch",
        url=f"https://github.com/pytorch/pytorch/issues/{number}" if number else None,
        labels=labels or [],
    )
    parsed = ParsedIssue(
        code=code,
        code_source="body",
        blocks=[],
        signatures=[signature] if signature else [],
        env=None,
        expected=None,
        actual=None,
    )
    folder = repros / f"issue-{number}"
    write_outputs(plan_repro(issue, parsed).output_files(folder))
    return folder


def write_buggy_ops(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "buggy_ops.py").write_text(BUGGY_OPS)
    return folder
