"""Issues of our own for the stated oracles (``contribkit repro N --expect KIND``): each a real
behaviour of CPU torch 2.13 that the oracle decides, in a broken and a fixed variant. Their prose
names no oracle (no traceback, crash word, quoted output or "recompile"), so that only the
stated one can decide."""

from __future__ import annotations

from typing import Any

ENV = "\n\n## Versions\n\nPyTorch version: 2.13.0+cpu\n"

# A backend that adds one to what the graph returns: compiled differs from eager; the fixed
# variant returns the graph as it is.
COMPILE_CODE = (
    "import torch\n"
    "def backend(gm, example_inputs):\n"
    "    def run(*args):\n"
    "        return [o {op} for o in gm(*args)]\n"
    "    return run\n"
    "def f(x):\n"
    "    return x * 2\n"
    "cf = torch.compile(f, backend=backend)\n"
    "print(cf(torch.arange(3.0)))\n"
)
# Three shapes under dynamic=False: two recompiles; the fixed variant calls with one shape.
RECOMPILE_CODE = (
    "import torch\n"
    "@torch.compile(backend='eager', dynamic=False)\n"
    "def f(x):\n"
    "    return x + 1\n"
    "for n in {sizes}:\n"
    "    f(torch.ones(n))\n"
)
BREAK_CODE = (
    "import torch\n"
    "@torch.compile(backend='eager')\n"
    "def f(x):\n"
    "    x = x + 1\n"
    "{line}"
    "    return x * 2\n"
    "print(f(torch.ones(2)))\n"
)
# A value that differs between runs whatever the seeds; the fixed variant prints a constant.
RANDOM_CODE = "import uuid\nimport torch\nprint(torch.tensor(float({value})))\n"
# SIGFPE in NNPACK's convolution with a zero stride (torch 2.13, CPU); stride 1 runs.
CRASH_CODE = (
    "import torch\n"
    "x = torch.ones(1, 2, 6, 6)\n"
    "w = torch.ones(1, 2, 6, 6)\n"
    "b = torch.ones(1)\n"
    "torch._nnpack_spatial_convolution(x, w, b, [0, 0], {stride})\n"
)
INDEX_CODE = "import torch\nx = torch.ones(3)\nprint(x[torch.tensor([{index}])])\n"
DEVICE_CODE = "import torch\nx = torch.arange(4.0).cuda()\nprint(x.cumsum(0))\n"


def issue(
    number: int, title: str, code: str, prose: str = "This looks wrong to me.", after: str = ""
) -> dict[str, Any]:
    body = f"## 🐛 Describe the bug\n\n{prose}\n\n```python\n{code}```\n{after}"
    return {
        "number": number,
        "repo": "pytorch/pytorch",
        "html_url": f"https://github.com/pytorch/pytorch/issues/{number}",
        "title": title,
        "state": "open",
        "labels": [],
        "user": {"login": "reporter"},
        "created_at": "2025-01-01T00:00:00Z",
        "body": body + ENV,
        "comments": [],
        "body_complete": True,
    }


# kind -> (the --expect value, the title, the broken code, the fixed code)
CASES: dict[str, tuple[str, str, str, str]] = {
    "error": (
        "error:out of bounds",
        "indexing past the end",
        INDEX_CODE.format(index=5),
        INDEX_CODE.format(index=1),
    ),
    "no-error": (
        "no-error",
        "indexing past the end is accepted",
        INDEX_CODE.format(index=1),
        INDEX_CODE.format(index=5),
    ),
    "output": (
        "output:tensor([1.])",
        "the value printed",
        INDEX_CODE.format(index=1),
        "import torch\nprint(torch.zeros(1) + 2)\n",
    ),
    "compile-vs-eager": (
        "compile-vs-eager",
        "a backend's output",
        COMPILE_CODE.format(op="+ 1"),
        COMPILE_CODE.format(op=""),
    ),
    "recompiles": (
        "recompiles:1",
        "shapes under dynamic=False",
        RECOMPILE_CODE.format(sizes="(2, 3, 4)"),
        RECOMPILE_CODE.format(sizes="(2, 2, 2)"),
    ),
    "graph-breaks": (
        "graph-breaks",
        "an explicit break",
        BREAK_CODE.format(line="    torch._dynamo.graph_break()\n"),
        BREAK_CODE.format(line=""),
    ),
    "determinism": (
        "determinism",
        "a value that moves",
        RANDOM_CODE.format(value="uuid.uuid4().int % 1000"),
        RANDOM_CODE.format(value="7"),
    ),
    "crash": (
        "crash",
        "a zero stride",
        CRASH_CODE.format(stride="[0, 0]"),
        CRASH_CODE.format(stride="[1, 1]"),
    ),
}
# Cancellation in float32: 1e8 + 1 rounds to 1e8, so the difference prints 0 where float64 gives
# 1; the fixed variant adds 64, which float32 holds at 1e8.
CANCEL_CODE = "import torch\na = torch.tensor([1e8])\nb = torch.tensor([{b}])\nprint((a + b) - a)\n"
CANCEL_OUTPUT = "\nThe output is\n```\ntensor([0.])\n```\n"
