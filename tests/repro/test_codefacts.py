"""AST facts about issue code, and the span-exact device rewrite."""

from __future__ import annotations

import ast

import pytest

from contribkit.repro.codefacts import analyse, apply_edits


def rewritten(code: str) -> str:
    facts = analyse(code)
    assert facts.rewritable, facts
    return apply_edits(code, facts.edits)


def test_cuda_everywhere_is_rewritten_keeping_comments() -> None:
    code = (
        "import torch\n"
        'device = "cuda"  # the GPU\n'
        "x = torch.randn(3, device=device)\n"
        "y = torch.ones(3).cuda()\n"
        "z = x.to('cuda:0') + y\n"
        "w = torch.zeros(1, device=torch.device('cuda'))\n"
    )
    assert rewritten(code) == (
        "import torch\n"
        "device = DEVICE  # the GPU\n"
        "x = torch.randn(3, device=device)\n"
        "y = torch.ones(3).to(DEVICE)\n"
        "z = x.to(DEVICE) + y\n"
        "w = torch.zeros(1, device=torch.device(DEVICE))\n"
    )


def test_nested_cuda_calls_and_unicode_columns() -> None:
    code = 'label = "é"\nx = torch.ones(2).cuda().cuda()\n'
    out = rewritten(code)
    ast.parse(out)
    assert out.startswith('label = "é"\n') and "cuda" not in out


def test_cpu_vs_cuda_comparison_needs_cuda() -> None:
    facts = analyse(
        "import torch\na = torch.ones(3)\nb = a.cuda()\nprint(torch.allclose(a, b.cpu()))\n"
    )
    assert facts.compares_devices and facts.requires_cuda and not facts.rewritable
    assert (
        facts.comparison
        and facts.comparison.actual == "a"
        and facts.comparison.expected == "b.cpu()"
    )
    explicit = analyse("x = torch.ones(2, device='cpu')\ny = torch.ones(2, device='cuda')\n")
    assert explicit.compares_devices and explicit.requires_cuda


def test_unsafe_cuda_api_keeps_code_as_written() -> None:
    facts = analyse("import torch\nx = torch.ones(2).cuda()\ntorch.cuda.synchronize()\n")
    assert facts.unsafe_cuda == ["line 3: torch.cuda.synchronize()"]
    assert facts.requires_cuda and not facts.rewritable
    stray = analyse(
        "import torch\nx = torch.ones(2, device='cuda')\nif x.device.type == 'cuda':\n    pass\n"
    )
    assert stray.unsafe_cuda and not stray.rewritable
    safe = analyse("import torch\ntorch.cuda.manual_seed(0)\nprint(torch.cuda.is_available())\n")
    assert not safe.needs_cuda


def test_compile_backends_imports_and_downloads() -> None:
    code = (
        "import torch, numpy as np\n"
        "import torchvision\n"
        "from transformers import AutoModel\n"
        "import os.path\n"
        "m = AutoModel.from_pretrained('bert-base-uncased')\n"
        "ds = torchvision.datasets.MNIST('.', download=True)\n"
        "w = torch.load('weights.pt')\n"
        "url = 'https://example.com/x.bin'\n"
        "f = torch.compile(m, backend='aot_eager')\n"
        "@torch.compile(mode='max-autotune')\n"
        "def g(x):\n    return x\n"
    )
    facts = analyse(code)
    assert facts.third_party == ["numpy", "torchvision", "transformers"]
    assert facts.imports_numpy
    assert facts.uses_compile and facts.compile_backends == ["aot_eager", "inductor"]
    joined = " | ".join(facts.downloads)
    for needle in ("from_pretrained", "download=True", "weights.pt", "https://example.com"):
        assert needle in joined


def test_comparisons_found_for_check() -> None:
    eager_vs_compiled = analyse(
        "import torch\ndef f(x):\n    return x.sin()\nopt = torch.compile(f)\nx = torch.ones(3)\n"
        "expected = f(x)\nactual = opt(x)\n"
    )
    assert eager_vs_compiled.comparison is not None
    assert (eager_vs_compiled.comparison.actual, eager_vs_compiled.comparison.expected) == (
        "actual",
        "expected",
    )
    diff = analyse(
        "import torch\na = torch.ones(2)\nb = torch.ones(2)\nprint((a - b).abs().max())\n"
    )
    assert diff.comparison and (diff.comparison.actual, diff.comparison.expected) == ("a", "b")
    tol = analyse("import torch\na=torch.ones(1)\nb=a\nassert torch.allclose(a, b, atol=1e-3)\n")
    assert tol.comparison and tol.comparison.keywords == {"atol": "0.001"}
    local = analyse(
        "import torch\ndef t():\n    a = torch.ones(1)\n    b = a\n    return torch.equal(a, b)\n"
    )
    assert local.comparison is None  # check() cannot reach a function's locals


def test_code_that_does_not_parse() -> None:
    facts = analyse("import torch\nx = torch.ones(2.cuda()\n")
    assert not facts.parses and facts.syntax_error_line == 2
    assert facts.requires_cuda


def test_printed_eager_and_compiled_results_are_compared() -> None:
    inline = analyse(
        "import torch\ndef func(x, y):\n    return x + y\nx = torch.zeros(2)\ny = torch.ones(2)\n"
        "print(func(x, y))\nprint(torch.compile(func)(x, y))\n"
    )
    assert inline.comparison is not None
    assert (inline.comparison.actual, inline.comparison.expected) == (
        "torch.compile(func)(x, y)",
        "func(x, y)",
    )
    named = analyse(
        "import torch\ndef f(x):\n    return x.sin()\nopt = torch.compile(f)\nx = torch.ones(3)\n"
        "print(f(x), opt(x))\n"
    )
    assert named.comparison and (named.comparison.actual, named.comparison.expected) == (
        "opt(x)",
        "f(x)",
    )
    random_inputs = analyse(
        "import torch\ndef f(x):\n    return x\nprint(f(torch.randn(2)))\n"
        "print(torch.compile(f)(torch.randn(2)))\n"
    )
    assert random_inputs.comparison is None  # fresh random inputs cannot be compared


def test_compile_vs_eager_calls_are_kept_for_when_the_code_raises() -> None:
    """The calls that compute both sides, compiled first, and only for the same arguments."""
    named = analyse(
        "import torch\ndef f(x):\n    return x.cos()\nfast = torch.compile(f)\n"
        "x = torch.ones(4)\nref = f(x)\nout = fast(x)\ntorch.testing.assert_close(out, ref)\n"
    )
    assert named.comparison and named.comparison.calls == ("fast(x)", "f(x)")
    printed = analyse(
        "import torch\ndef g(a, k):\n    return a * k\na = torch.ones(2)\n"
        "print(g(a, k=3))\nprint(torch.compile(g)(a, k=3))\n"
    )
    assert printed.comparison and printed.comparison.calls == (
        "torch.compile(g)(a, k=3)",
        "g(a, k=3)",
    )
    other_inputs = analyse(
        "import torch\ndef f(x):\n    return x\nfast = torch.compile(f)\nx = torch.ones(2)\n"
        "y = torch.zeros(2)\nref = f(x)\nout = fast(y)\ntorch.testing.assert_close(out, ref)\n"
    )
    assert other_inputs.comparison and other_inputs.comparison.calls is None
    no_compile = analyse(
        "import torch\na = torch.ones(2)\nb = torch.ones(2)\nassert torch.allclose(a, b)\n"
    )
    assert no_compile.comparison and no_compile.comparison.calls is None


def test_import_aliases_are_resolved() -> None:
    """`import torch as th`, `from torch import compile`: the same facts as the plain names."""
    facts = analyse(
        "import torch as th\n"
        "from torch import compile as tc\n"
        "from torch.testing import assert_close\n"
        "def f(x):\n    return x.sin()\n"
        "opt = th.compile(f, backend='aot_eager')\n"
        "g = tc(f)\n"
        "x = th.ones(3, device='cuda')\n"
        "a = f(x)\nb = opt(x)\n"
        "print(th.allclose(a, b))\n"
        "th.cuda.synchronize()\n"
    )
    assert facts.uses_compile and facts.compile_backends == ["aot_eager", "inductor"]
    assert facts.comparison and (facts.comparison.actual, facts.comparison.expected) == ("a", "b")
    assert facts.unsafe_cuda == ["line 12: torch.cuda.synchronize()"]
    direct = analyse("from torch.testing import assert_close as ac\nimport torch\n"
                     "a = torch.ones(1)\nb = a\nac(a, b)\n")  # fmt: skip
    assert direct.comparison and direct.comparison.style == "assert_close"


def test_every_comparison_is_kept_and_measured_differences_are_marked() -> None:
    # A CPU-vs-CUDA contrast measured against one reference: the side the issue calls right
    # (cpu - ref) comes first in the code, the side it calls wrong (gpu - ref) second; check()
    # must assert both, never only the first.
    contrast = analyse(
        "import torch\nx = torch.randn(8)\nref = x.double().cumsum(0).float()\n"
        "cpu = x.cumsum(0)\ngpu = x.cuda().cumsum(0).cpu()\n"
        "print((cpu - ref).norm().item())\nprint((gpu - ref).abs().max())\n"
    )
    pairs = [(c.actual, c.expected, c.measured) for c in contrast.comparisons]
    assert pairs == [("cpu", "ref", True), ("gpu", "ref", True)]
    assert contrast.comparison is contrast.comparisons[0]
    # A call states its tolerance (or its default): not a measured difference; one pair once.
    stated = analyse(
        "import torch\na = torch.ones(2)\nb = torch.ones(2)\n"
        "print(torch.allclose(a, b, atol=1e-3))\nassert torch.allclose(a, b, atol=1e-3)\n"
    )
    assert [(c.actual, c.expected, c.measured) for c in stated.comparisons] == [("a", "b", False)]


def test_a_negated_comparison_is_not_one_to_assert() -> None:
    # `assert not torch.equal(a, b)`: the code wants the values to differ (dropout changed
    # them); check() asserting them close would call the wanted behaviour the bug.
    facts = analyse(
        "import torch\na = torch.ones(4)\nb = torch.nn.functional.dropout(a, 0.5)\n"
        "assert not torch.equal(a, b)\nprint(torch.allclose(a.clone(), b))\n"
    )
    assert [(c.actual, c.expected) for c in facts.comparisons] == [("a.clone()", "b")]


def test_a_difference_measured_with_functions_is_a_comparison() -> None:
    # numpy's and torch's function forms of ``(a - b).abs().max()``, through a conversion.
    facts = analyse(
        "import numpy as np\nimport torch\nx = torch.rand(8)\n"
        "ref = np.cumprod(x.numpy().astype(np.float64))\ncpu = torch.cumprod(x, 0).numpy()\n"
        "gpu = torch.cumprod(x.cuda(), 0).cpu().numpy()\n"
        "print(float(np.max(np.abs(cpu.astype(np.float64) - ref))))\n"
        "print(torch.norm(torch.from_numpy(gpu) - torch.from_numpy(cpu)))\n"
        "print(np.linalg.norm(gpu - ref), abs(gpu - cpu).max())\n"
    )
    pairs = [(c.actual, c.expected, c.measured) for c in facts.comparisons]
    # torch.from_numpy(gpu) is a call check() would have to repeat: not a value it names.
    assert pairs == [
        ("cpu.astype(np.float64)", "ref", True),
        ("gpu", "ref", True),
        ("gpu", "cpu", True),
    ]
    # A conversion with a computed argument is not a value check() can name.
    assert (
        analyse(
            "import torch\na = torch.ones(2)\nb = a\nprint((a.to(b.dtype + 1) - b).abs())\n"
        ).comparisons
        == []
    )


@pytest.mark.parametrize(
    "code",
    [
        # a clamp, not a size
        "k = 3\ns = 2\npad = max(k - s, 0)\nprint(pad)\n",
        # an L1 loss the code goes on to use
        "import torch\npred = torch.ones(2, requires_grad=True)\ny = torch.zeros(2)\n"
        "loss = (pred - y).abs().mean()\nloss.backward()\nprint(loss)\n",
        # a hand-computed reference from the inputs of the call the issue is about
        "import torch\na = torch.rand(3, 2)\nb = torch.rand(3, 2)\n"
        "print(torch.cdist(a, b))\nprint((a - b).norm(dim=-1))\n",
        # a measure nobody reports
        "import torch\na = torch.rand(3)\nb = torch.rand(3)\nd = (a - b).abs().max()\n",
    ],
    ids=["clamp", "l1-loss", "cdist-reference", "unreported"],
)
def test_a_reduced_difference_that_is_not_reported_is_no_comparison(code: str) -> None:
    assert analyse(code).comparisons == []


def test_reported_differences_and_stated_tolerances() -> None:
    # Reported through a name, an f-string, a ratio, an assert or a comparison with a number.
    facts = analyse(
        "import torch\nx = torch.rand(4)\nref = x.double().cumsum(0).float()\nout = x.cumsum(0)\n"
        "other = x.flip(0).cumsum(0).flip(0)\n"
        "err = (out - ref).norm().item()\nbase = 1e-9\nratio = err / base\n"
        'print(f"{ratio:.2e}")\nassert (other - ref).abs().max() < 1e-3\n'
    )
    assert [(c.actual, c.expected) for c in facts.comparisons] == [("out", "ref"), ("other", "ref")]
    # `if not allclose(...)` still wants equal values; the tolerance it states wins over a
    # difference measured before it.
    facts = analyse(
        "import torch\na = torch.rand(3)\nb = a + 1e-4\nprint((a - b).abs().max())\n"
        "if not torch.allclose(a, b, atol=1e-3):\n    print('mismatch')\n"
    )
    assert [(c.actual, c.expected, c.measured, c.keywords) for c in facts.comparisons] == [
        ("a", "b", False, {"atol": "0.001"})  # ast.unparse writes the number so
    ]


def test_the_compiled_pair_is_found_behind_another_comparison() -> None:
    facts = analyse(
        "import torch\na = torch.ones(2)\nb = a.clone()\nprint((a - b).abs().max())\n"
        "def f(x):\n    return x * 2\nopt = torch.compile(f)\nx = torch.ones(2)\n"
        "out = opt(x)\nref = f(x)\nprint(torch.allclose(out, ref))\n"
    )
    assert [(c.actual, c.expected) for c in facts.comparisons] == [("a", "b"), ("out", "ref")]
    assert facts.compiled_pair == ("opt(x)", "f(x)")
