"""The issue parser on bodies shaped like PyTorch's bug-report forms (all content invented here)."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contribkit.issue.model import BLOCK_KINDS, CodeBlock, Comment, Issue, ParsedIssue, ReporterEnv
from contribkit.issue.parse import MAX_SOURCE_CHARS, parse_issue

FENCE = "```"


def md(text: str) -> str:
    """Test bodies are written indented, with ''' standing for a code fence."""
    return textwrap.dedent(text).lstrip("\n").replace("'''", FENCE)


def parse(body: str | None, title: str = "a bug", **fields: object) -> ParsedIssue:
    return parse_issue(Issue(title=title, body=body, **fields))  # type: ignore[arg-type]


def kinds(parsed: ParsedIssue) -> list[str]:
    return [b.kind for b in parsed.blocks]


def sigs(parsed: ParsedIssue) -> list[str]:
    return [f"{s.origin}: {s}" for s in parsed.signatures]


COLLECT_ENV = """\
Collecting environment information...
PyTorch version: 2.13.0+cu128
Is debug build: False
CUDA used to build PyTorch: 12.8
ROCM used to build PyTorch: N/A

OS: Ubuntu 24.04.1 LTS (x86_64)
GCC version: (Ubuntu 13.2.0-23ubuntu4) 13.2.0
Libc version: glibc-2.39

Python version: 3.12.7 | packaged by conda-forge | (main, Oct  4 2024, 16:05:46) [GCC 13.3.0] (64-bit runtime)
Python platform: Linux-6.8.0-45-generic-x86_64-with-glibc2.39
Is CUDA available: True
CUDA runtime version: 12.8.61
GPU models and configuration:
GPU 0: NVIDIA L4
GPU 1: NVIDIA L4

Nvidia driver version: 570.86.10
cuDNN version: Could not collect
Is XNNPACK available: True

Versions of relevant libraries:
[pip3] numpy==2.1.2
[pip3] torch==2.13.0
"""

L4_ENV = ReporterEnv(
    torch_version="2.13.0+cu128",
    cuda_build="12.8",
    os="Ubuntu 24.04.1 LTS (x86_64)",
    python="3.12.7",
    gpu_models="GPU 0: NVIDIA L4; GPU 1: NVIDIA L4",
    cuda_available=True,
)


# -- the issue forms ---------------------------------------------------------------------------


def test_bug_report_form_gives_code_signature_and_env() -> None:
    body = md(
        """
        ### 🐛 Describe the bug

        `torch.flip` on a channels-last tensor loses the memory format.

        '''python
        import torch

        x = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
        y = torch.flip(x, dims=[1])
        assert y.is_contiguous(memory_format=torch.channels_last), y.stride()
        '''

        ### Error logs

        '''
        Traceback (most recent call last):
          File "/home/me/flip.py", line 5, in <module>
            assert y.is_contiguous(memory_format=torch.channels_last), y.stride()
        AssertionError: (60, 20, 5, 1)
        '''

        ### Versions

        '''
        """
    )
    body += COLLECT_ENV + FENCE + "\n"
    parsed = parse(body)
    assert parsed.code == (
        "import torch\n\n"
        "x = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)\n"
        "y = torch.flip(x, dims=[1])\n"
        "assert y.is_contiguous(memory_format=torch.channels_last), y.stride()\n"
    )
    assert parsed.code_source == "body"
    assert kinds(parsed) == ["python", "traceback", "collect_env"]
    assert [b.line for b in parsed.blocks] == [6, 16, 25]
    assert sigs(parsed) == ["traceback: AssertionError: (60, 20, 5, 1)"]
    assert parsed.env == L4_ENV
    assert parsed.warnings == []


def test_old_markdown_template_sections() -> None:
    body = md(
        """
        ## 🐛 Bug

        `torch.cumsum` gives the wrong result for bool input on CPU.

        ## To Reproduce

        '''python
        import torch
        print(torch.cumsum(torch.tensor([True, True, True]), 0))
        '''

        ## Expected behavior

        The output should be `tensor([1, 2, 3])`.

        ## Environment

        - PyTorch Version (e.g., 1.0): 1.4.0
        - OS (e.g., Linux): macOS 10.15
        - How you installed PyTorch (`conda`, `pip`, source): pip
        - Python version: 3.7.6
        - CUDA/cuDNN version: None
        - GPU models and configuration: N/A
        """
    )
    parsed = parse(body)
    assert parsed.code == "import torch\nprint(torch.cumsum(torch.tensor([True, True, True]), 0))\n"
    assert parsed.expected == "The output should be `tensor([1, 2, 3])`."
    assert parsed.env == ReporterEnv(torch_version="1.4.0", os="macOS 10.15", python="3.7.6")


def test_only_headings_that_name_the_env_hide_code() -> None:
    body = md(
        """
        ### Works in older versions

        '''python
        import torch
        torch.nn.functional.interpolate(torch.randn(1, 1, 4), scale_factor=0.3)
        '''

        ### Versions

        '''python
        print("this is not the program")
        '''
        """
    )
    parsed = parse(body)
    assert parsed.code == (
        "import torch\ntorch.nn.functional.interpolate(torch.randn(1, 1, 4), scale_factor=0.3)\n"
    )
    assert parsed.warnings == [
        "left out the python block at line 11 of the body: its heading or summary says it is environment details"
    ]


def test_no_code_at_all() -> None:
    body = md(
        """
        ### 🐛 Describe the bug

        The docs of `torch.nn.functional.pad` do not say what happens with negative padding.

        ### Versions

        nightly
        """
    )
    parsed = parse(body)
    assert parsed.code == ""
    assert parsed.code_source == ""
    assert parsed.blocks == []
    assert parsed.signature is None
    assert parsed.env is None
    assert parsed.warnings == ["no Python code found in the issue body or its comments"]


# -- REPL transcripts --------------------------------------------------------------------------


def test_repl_transcript_strips_prompts_and_output() -> None:
    body = md(
        """
        '''
        >>> import torch
        >>> t = torch.arange(6).view(2, 3)
        >>> t.T.view(6)
        Traceback (most recent call last):
          File "<stdin>", line 1, in <module>
        RuntimeError: view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.
        >>> for row in t:
        ...     print(row.sum())
        ...
        tensor(3)
        tensor(12)
        '''
        """
    )
    parsed = parse(body)
    assert kinds(parsed) == ["repl", "traceback"]
    assert parsed.code == (
        "import torch\nt = torch.arange(6).view(2, 3)\nt.T.view(6)\n"
        "for row in t:\n    print(row.sum())\n"
    )
    assert parsed.blocks[1].line == 5
    assert parsed.signature is not None
    assert parsed.signature.exc_type == "RuntimeError"
    assert parsed.signature.message.startswith("view size is not compatible with input tensor's")


def test_ipython_transcript() -> None:
    body = md(
        """
        '''ipython
        In [1]: import torch

        In [2]: torch.tensor([1, 2]).bitwise_left_shift(70)
        Out[2]: tensor([0, 0])

        In [3]: def shift(x):
           ...:     return x << 70
           ...:
        '''
        """
    )
    parsed = parse(body)
    assert kinds(parsed) == ["repl"]
    assert parsed.code == (
        "import torch\ntorch.tensor([1, 2]).bitwise_left_shift(70)\n"
        "def shift(x):\n    return x << 70\n"
    )


# -- several blocks ----------------------------------------------------------------------------


def test_blocks_merge_in_order_with_imports_deduplicated() -> None:
    body = md(
        """
        ### 🐛 Describe the bug

        A model:

        '''python
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def forward(self, x):
                return torch.nn.functional.gelu(x, approximate="tanh")
        '''

        and the driver:

        '''python
        import torch
        from torch.nn import functional as F
        import torch.nn as nn  # again

        net = Net()
        print(net(torch.randn(3, dtype=torch.bfloat16)))
        '''
        """
    )
    parsed = parse(body)
    assert parsed.code == md(
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def forward(self, x):
                return torch.nn.functional.gelu(x, approximate="tanh")

        from torch.nn import functional as F

        net = Net()
        print(net(torch.randn(3, dtype=torch.bfloat16)))
        """
    )


def test_printed_output_block_and_repeated_block_are_left_out() -> None:
    body = md(
        """
        '''python
        import torch
        print(torch.linspace(0, 1, steps=3, dtype=torch.float16))
        '''

        prints

        '''python
        tensor([0.0000, 0.5000, 1.0000], dtype=torch.float16)
        '''

        '''python
        tensor([0.5000], grad_fn=<MulBackward0>)
        '''

        Same again:

        '''python
        print(torch.linspace(0, 1, steps=3, dtype=torch.float16))
        '''
        """
    )
    parsed = parse(body)
    assert kinds(parsed) == ["python", "output", "output", "python"]
    assert parsed.code == (
        "import torch\nprint(torch.linspace(0, 1, steps=3, dtype=torch.float16))\n"
    )
    assert "left out the python block at line 19 of the body: it repeats an earlier block" in (
        parsed.warnings
    )


def test_workaround_block_is_left_out() -> None:
    body = md(
        """
        ### 🐛 Describe the bug

        '''python
        import torch
        x = torch.zeros(3, dtype=torch.int8)
        x.bernoulli_(0.5)
        '''

        As a workaround, I cast first:

        '''python
        x = x.float().bernoulli_(0.5).to(torch.int8)
        '''
        """
    )
    parsed = parse(body)
    assert parsed.code == "import torch\nx = torch.zeros(3, dtype=torch.int8)\nx.bernoulli_(0.5)\n"
    assert parsed.warnings == [
        "left out the python block at line 12 of the body: the text calls it a workaround"
    ]


def test_trailing_printed_value_is_cut_from_a_python_block() -> None:
    body = md(
        """
        '''python
        import torch
        print(torch.tensor([3.5]).round())
        tensor([4.])
        '''
        """
    )
    assert parse(body).code == "import torch\nprint(torch.tensor([3.5]).round())\n"


# -- code in comments --------------------------------------------------------------------------


def test_code_only_in_comments_prefers_the_author() -> None:
    body = "### 🐛 Describe the bug\n\n`torch.lerp` is slow on MPS. I will post a repro below.\n"
    comments = [
        Comment(
            "maintainer", md("Try this:\n'''python\nimport torch\nprint(torch.__version__)\n'''")
        ),
        Comment("reporter", md("Repro:\n\n'''python\nimport torch\ntorch.lerp(a, b, 0.5)\n'''")),
        Comment("reporter", md("'''python\nimport torch\nsecond = 2\n'''")),
    ]
    parsed = parse(body, author="reporter", comments=comments)
    assert parsed.code == "import torch\ntorch.lerp(a, b, 0.5)\n"
    assert parsed.code_source == "comment by @reporter"
    assert [(b.kind, b.source, b.line) for b in parsed.blocks] == [
        ("python", "comment by @reporter", 4)
    ]


def test_code_from_other_commenters_in_order_skipping_bots() -> None:
    comments = [
        Comment("pytorch-bot[bot]", md("'''python\nimport torch\n'''")),
        Comment("reporter", "Same on 2.12."),
        Comment("helper", md("'''python\nimport torch\ntorch.ones(2).unique(dim=5)\n'''")),
        Comment("other", md("'''python\nimport torch\nother = 1\n'''")),
    ]
    parsed = parse("It fails.", author="reporter", comments=comments)
    assert parsed.code_source == "comment by @helper"
    assert parsed.code == "import torch\ntorch.ones(2).unique(dim=5)\n"


def test_traceback_from_the_authors_comment_when_the_body_has_none() -> None:
    traceback = md(
        """
        Full log:
        '''
        Traceback (most recent call last):
          File "s.py", line 2, in <module>
        RuntimeError: svd_cpu: the updating process of SBDSDC did not converge
        '''
        """
    )
    comments = [
        Comment("maintainer", traceback.replace("svd_cpu", "other")),
        Comment("reporter", "Also on 2.12."),
        Comment("reporter", traceback),
    ]
    body = md("'''python\nimport torch\ntorch.linalg.svd(torch.full((3, 3), float('nan')))\n'''")
    parsed = parse(body, author="reporter", comments=comments)
    assert sigs(parsed) == [
        "traceback: RuntimeError: svd_cpu: the updating process of SBDSDC did not converge"
    ]
    assert kinds(parsed) == ["python"]


def test_env_from_the_authors_comment() -> None:
    comments = [
        Comment("maintainer", "Please paste collect_env output."),
        Comment("reporter", FENCE + "\n" + COLLECT_ENV + FENCE),
    ]
    parsed = parse(md("'''python\nimport torch\n'''"), author="reporter", comments=comments)
    assert parsed.env == L4_ENV


# -- tracebacks inside code fences -------------------------------------------------------------


def test_python_fence_with_code_then_traceback_is_split() -> None:
    body = md(
        """
        '''python
        import torch
        idx = torch.tensor([5])
        torch.zeros(3).index_select(0, idx)

        Traceback (most recent call last):
          File "repro.py", line 3, in <module>
            torch.zeros(3).index_select(0, idx)
        IndexError: index out of range in self
        '''
        """
    )
    parsed = parse(body)
    assert kinds(parsed) == ["python", "traceback"]
    assert [b.line for b in parsed.blocks] == [2, 6]
    assert (
        parsed.code
        == "import torch\nidx = torch.tensor([5])\ntorch.zeros(3).index_select(0, idx)\n"
    )
    assert sigs(parsed) == ["traceback: IndexError: index out of range in self"]


def test_python_fence_holding_only_a_traceback() -> None:
    body = md(
        """
        '''python
        Traceback (most recent call last):
          File "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1773, in _wrapped_call_impl
            return self._call_impl(*args, **kwargs)
        ValueError: Expected input batch_size (8) to match target batch_size (4).
        '''
        """
    )
    parsed = parse(body)
    assert kinds(parsed) == ["traceback"]
    assert parsed.code == ""
    assert sigs(parsed) == [
        "traceback: ValueError: Expected input batch_size (8) to match target batch_size (4)."
    ]


def test_code_then_bare_error_line_in_one_fence() -> None:
    body = md(
        """
        '''py
        import torch
        torch.empty(2).masked_fill_(torch.tensor([True]), 1)
        RuntimeError: The size of tensor a (2) must match the size of tensor b (1) at non-singleton dimension 0
        '''
        """
    )
    parsed = parse(body)
    assert kinds(parsed) == ["python", "traceback"]
    assert parsed.code == "import torch\ntorch.empty(2).masked_fill_(torch.tensor([True]), 1)\n"
    assert parsed.signature is not None
    assert parsed.signature.message.startswith("The size of tensor a (2) must match")


def test_shell_command_then_traceback() -> None:
    body = md(
        """
        '''console
        $ TORCH_LOGS=+dynamo python repro.py
        Traceback (most recent call last):
          File "repro.py", line 9, in <module>
        KeyError: 'weight'
        '''
        """
    )
    parsed = parse(body)
    assert [(b.kind, b.text) for b in parsed.blocks] == [
        ("shell", "$ TORCH_LOGS=+dynamo python repro.py"),
        (
            "traceback",
            "Traceback (most recent call last):\n  File \"repro.py\", line 9, in <module>\nKeyError: 'weight'",
        ),
    ]
    assert sigs(parsed) == ["traceback: KeyError: 'weight'"]


# -- untagged blocks ---------------------------------------------------------------------------


def test_untagged_blocks_are_classified_by_content() -> None:
    body = md(
        """
        '''
        import torch
        torch.cdist(torch.randn(2, 3), torch.randn(4, 3), p=0)
        '''

        '''
        pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/cpu
        '''

        '''
        TORCH_LOGS="recompiles" python train.py --epochs 1
        '''

        '''
        python bench.py
        '''

        '''
        tensor([[0., 0., 0., 0.],
                [0., 0., 0., 0.]])
        '''

        '''
        W0301 12:00:01.000000 4242 torch/_dynamo/convert_frame.py:900] recompiling forward
        epoch 0 loss 0.6931
        '''

        '''
        Traceback (most recent call last):
          ...
        OverflowError: cannot convert float infinity to integer
        '''

        '''
        PyTorch version: 2.12.1+cpu
        Is debug build: False
        '''
        """
    )
    parsed = parse(body)
    assert kinds(parsed) == [
        "python",
        "shell",
        "shell",
        "shell",
        "output",
        "output",
        "traceback",
        "collect_env",
    ]
    assert parsed.code == "import torch\ntorch.cdist(torch.randn(2, 3), torch.randn(4, 3), p=0)\n"
    assert sigs(parsed) == ["traceback: OverflowError: cannot convert float infinity to integer"]


def test_untagged_program_that_does_not_parse_is_still_python() -> None:
    body = md(
        """
        '''
        import torch
        def f(x):
            return x.sum(
        '''
        """
    )
    parsed = parse(body)
    assert kinds(parsed) == ["python"]
    assert parsed.code == "import torch\ndef f(x):\n    return x.sum(\n"


def test_other_language_blocks_are_output() -> None:
    body = md(
        """
        '''cpp
        at::Tensor t = at::ones({2});
        '''

        '''yaml
        name: build
        '''
        """
    )
    assert kinds(parse(body)) == ["output", "output"]


# -- <details> ---------------------------------------------------------------------------------


def test_details_collect_env_with_blank_lines() -> None:
    body = (
        "### Versions\n\n<details>\n<summary>collect_env</summary>\n\n"
        + FENCE
        + "\n"
        + COLLECT_ENV
        + FENCE
        + "\n\n</details>\n"
    )
    parsed = parse(body)
    assert kinds(parsed) == ["collect_env"]
    assert parsed.blocks[0].line == 7
    assert parsed.env == L4_ENV


def test_details_collect_env_without_blank_lines() -> None:
    # CommonMark folds a fence that follows <summary> directly into the HTML block.
    body = (
        "### 🐛 Describe the bug\n\nSee below.\n<details><summary>Versions</summary>\n"
        + FENCE
        + "\n"
        + COLLECT_ENV
        + FENCE
        + "</details>\n\nThe end.\n"
    )
    parsed = parse(body)
    assert kinds(parsed) == ["collect_env"]
    assert parsed.blocks[0].line == 6
    assert parsed.blocks[0].text.startswith("Collecting environment information...\nPyTorch")
    assert parsed.env == L4_ENV
    assert parsed.warnings == ["no Python code found in the issue body or its comments"]


def test_details_with_plain_text_env_and_code_inside() -> None:
    body = md(
        """
        <details>
        <summary>Repro</summary>
        '''python
        import torch
        torch.fft.rfft(torch.randn(7), n=-1)
        '''
        </details>

        <details><summary>Environment</summary>
        PyTorch version: 2.11.0
        Is CUDA available: No
        OS: Windows 11 Pro (10.0.26100 64-bit)
        </details>
        """
    )
    parsed = parse(body)
    assert parsed.code == "import torch\ntorch.fft.rfft(torch.randn(7), n=-1)\n"
    assert parsed.env == ReporterEnv(
        torch_version="2.11.0", os="Windows 11 Pro (10.0.26100 64-bit)", cuda_available=False
    )


def test_versions_section_as_plain_text() -> None:
    body = "### 🐛 Describe the bug\n\nIt hangs.\n\n### Versions\n\n" + COLLECT_ENV
    parsed = parse(body)
    assert parsed.env == L4_ENV
    assert parsed.blocks == []


def test_fence_inside_another_html_block() -> None:
    body = md(
        """
        <div>
        '''python
        import torch
        torch.randperm(-1)
        '''
        </div>
        """
    )
    parsed = parse(body)
    assert parsed.code == "import torch\ntorch.randperm(-1)\n"
    assert parsed.blocks[0].line == 3


# -- torch.compile and CPU/CUDA issues ---------------------------------------------------------


def test_cpu_vs_cuda_comparison_keeps_both_devices() -> None:
    body = md(
        """
        ### 🐛 Describe the bug

        `torch.logcumsumexp` on CUDA disagrees with CPU for complex input.

        '''python
        import torch
        x = torch.randn(16, dtype=torch.complex64)
        cpu = torch.logcumsumexp(x, 0)
        gpu = torch.logcumsumexp(x.cuda(), 0).cpu()
        torch.testing.assert_close(cpu, gpu)
        '''

        I expected both devices to agree. Instead, the CUDA result has NaNs in the imaginary part.
        """
    )
    parsed = parse(body)
    assert "x.cuda()" in parsed.code and "cpu = torch.logcumsumexp(x, 0)" in parsed.code
    assert parsed.expected == "I expected both devices to agree."
    assert parsed.actual == "Instead, the CUDA result has NaNs in the imaginary part."
    assert parsed.signature is None


def test_dynamo_backend_compiler_failed_keeps_the_inner_error() -> None:
    body = md(
        """
        ### 🐛 Describe the bug

        '''python
        import torch

        @torch.compile(backend="inductor")
        def f(x):
            return torch.special.zeta(x, 2.0)

        f(torch.randn(4))
        '''

        ### Error logs

        '''
        Traceback (most recent call last):
          File "/work/zeta.py", line 7, in <module>
            f(torch.randn(4))
          File "/opt/torch/_dynamo/eval_frame.py", line 655, in _fn
            return fn(*args, **kwargs)
        torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
        LoweringException: AssertionError: zeta with a scalar exponent at 0x7f3a2c1b9e50
          target: aten.special_zeta.other

        Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information


        You can suppress this exception and fall back to eager by setting:
            import torch._dynamo
            torch._dynamo.config.suppress_errors = True
        '''
        """
    )
    parsed = parse(body)
    assert sigs(parsed) == [
        "traceback: torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:"
        " LoweringException: AssertionError: zeta with a scalar exponent at <addr>"
    ]
    assert '@torch.compile(backend="inductor")' in parsed.code


def test_dynamo_multiline_message_keeps_the_first_line() -> None:
    body = md(
        """
        '''
        Traceback (most recent call last):
          File "/tmp/g.py", line 12, in <module>
            g(x)
        torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped
          Explanation: Dynamo does not know how to trace the builtin `posix.getpid`.
          Hint: Avoid calling `os.getpid` in compiled code.

        from user code:
           File "/tmp/g.py", line 5, in g
            return x + os.getpid()
        '''
        """
    )
    assert sigs(parse(body)) == [
        "traceback: torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped"
    ]


def test_chained_tracebacks_give_one_signature_each() -> None:
    body = md(
        """
        '''
        Traceback (most recent call last):
          File "/srv/load.py", line 4, in load
            return torch.load(path, weights_only=True)
        _pickle.UnpicklingError: Weights only load failed. Unsupported global: GLOBAL numpy.dtype

        The above exception was the direct cause of the following exception:

        Traceback (most recent call last):
          File "/srv/main.py", line 10, in <module>
            load("/data/ckpt/model-123456789.pt")
        RuntimeError: could not load /data/ckpt/model-123456789.pt

        During handling of the above exception, another exception occurred:

        Traceback (most recent call last):
          File "/srv/main.py", line 12, in <module>
        SystemExit: 3
        '''
        """
    )
    parsed = parse(body)
    assert sigs(parsed) == [
        "traceback: _pickle.UnpicklingError: Weights only load failed. Unsupported global: GLOBAL numpy.dtype",
        "traceback: RuntimeError: could not load <path>",
        "traceback: SystemExit: 3",
    ]
    assert str(parsed.signature) == "SystemExit: 3"


def test_traceback_without_frames_and_distributed_rank_prefixes() -> None:
    body = md(
        """
        '''
        [rank1]: Traceback (most recent call last):
        [rank1]:   File "/job/train.py", line 88, in <module>
        [rank1]:     dist.all_reduce(t)
        [rank1]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3356, unhandled system error
        '''

        '''
        Traceback (most recent call last):
        TypeError: unsupported operand type(s) for +: 'Tensor' and 'NoneType'
        '''
        """
    )
    assert sigs(parse(body)) == [
        "traceback: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3356, unhandled system error",
        "traceback: TypeError: unsupported operand type(s) for +: 'Tensor' and 'NoneType'",
    ]


def test_headerless_error_with_frames_and_single_error_line() -> None:
    body = md(
        """
        '''
        Error:
          File "/tmp/torchinductor_me/ab/cabc.py", line 210, in call
            triton_poi_fused_0.run(buf0, 4096, stream=stream0)
        NameError: name 'triton_poi_fused_0' is not defined
        '''

        and later:

        '''
        torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.68 GiB
        '''
        """
    )
    parsed = parse(body)
    assert kinds(parsed) == ["traceback", "traceback"]
    assert sigs(parsed) == [
        "traceback: NameError: name 'triton_poi_fused_0' is not defined",
        "traceback: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.68 GiB",
    ]


def test_pytest_failure_output() -> None:
    body = md(
        """
        '''
            def test_cummax_nan(self):
                x = torch.tensor([1.0, float("nan"), 0.5])
        >       self.assertEqual(torch.cummax(x, 0).indices, torch.tensor([0, 1, 1]))
        E       AssertionError: Tensor-likes are not equal!
        E
        E       Mismatched elements: 1 / 3 (33.3%)

        test/test_reductions.py:1234: AssertionError
        '''
        """
    )
    parsed = parse(body)
    assert kinds(parsed) == ["traceback"]
    assert sigs(parsed) == ["traceback: AssertionError: Tensor-likes are not equal!"]


def test_traceback_pasted_as_plain_text() -> None:
    body = md(
        """
        Running it prints:

        Traceback (most recent call last):
          File "x.py", line 2, in <module>
        ZeroDivisionError: division by zero
        """
    )
    parsed = parse(body)
    assert kinds(parsed) == ["traceback"]
    assert parsed.blocks[0].line == 3
    assert sigs(parsed) == ["traceback: ZeroDivisionError: division by zero"]


# -- signatures from text ----------------------------------------------------------------------


def test_signatures_from_text() -> None:
    body = md(
        """
        ### 🐛 Describe the bug

        Calling `torch.linalg.inv` on a singular batch raises RuntimeError: linalg.inv: The diagonal element 2 is zero.
        With `out=` it throws `ValueError: out tensor has the wrong dtype`.
        On a 0-dim tensor I get the following error: IndexError: too many indices for tensor of dimension 0
        And an empty batch raises a `KeyError`.
        This is not a signature: Note: the docs say otherwise.
        """
    )
    parsed = parse(body)
    assert sigs(parsed) == [
        "text: RuntimeError: linalg.inv: The diagonal element 2 is zero.",
        "text: ValueError: out tensor has the wrong dtype",
        "text: IndexError: too many indices for tensor of dimension 0",
        "text: KeyError",
    ]
    assert str(parsed.signature) == "RuntimeError: linalg.inv: The diagonal element 2 is zero."


def test_traceback_signature_wins_over_text_and_duplicates_are_dropped() -> None:
    body = md(
        """
        It raises `RuntimeError: boom at 0xdeadbeef`, full log:

        '''
        Traceback (most recent call last):
          File "a.py", line 1, in <module>
        RuntimeError: boom at 0x7ffe01
        '''
        """
    )
    parsed = parse(body, title="ValueError: title mention")
    assert sigs(parsed) == [
        "traceback: RuntimeError: boom at <addr>",
        "text: ValueError: title mention",
    ]
    assert parsed.signature is not None and parsed.signature.origin == "traceback"


@pytest.mark.parametrize(
    ("title", "prose", "first"),
    [
        (
            'torch.tensor() throws "RuntimeError: Overflow when unpacking long" exception?!',
            "",
            "traceback: RuntimeError: Overflow when unpacking long",
        ),
        (
            "Overflow in torch.tensor",
            "It fails with `RuntimeError: Overflow when unpacking long`.",
            "traceback: RuntimeError: Overflow when unpacking long",
        ),
        (  # the prose may quote an error met before, not this one
            "Overflow in torch.tensor",
            "At first I got `RuntimeError: Overflow when unpacking long`, which I fixed.",
            "traceback: RuntimeError",
        ),
    ],
)
def test_a_traceback_cut_before_its_message_takes_the_quoted_one(
    title: str, prose: str, first: str
) -> None:
    body = md(
        f"""
        {prose}

        '''
        Traceback (most recent call last):
          File "a.py", line 3, in <module>
            t = torch.tensor([2**64])
        RuntimeError:
        '''
        """
    )
    parsed = parse(body, title=title)
    assert sigs(parsed)[0] == first


def test_a_quoted_message_in_a_title_ends_at_its_quote() -> None:
    parsed = parse(None, title="gather throws 'IndexError: index 5 is out of bounds' on CPU")
    assert sigs(parsed) == ["text: IndexError: index 5 is out of bounds"]
    parsed = parse(None, title="x throws 'TypeError: can't convert np.ndarray' on CPU")
    assert sigs(parsed) == ["text: TypeError: can't convert np.ndarray"]


def test_wanted_errors_are_not_signatures() -> None:
    parsed = parse(
        "`torch.arange(1, 0)` should raise `ValueError: upper bound must be greater`,"
        " but it returns an empty tensor.\n\n"
        "With `strict=True` it does not raise KeyError for missing keys either."
    )
    assert parsed.signatures == []
    assert (
        parsed.expected
        == "`torch.arange(1, 0)` should raise `ValueError: upper bound must be greater`"
    )
    assert parsed.actual == "but it returns an empty tensor."


@pytest.mark.parametrize(
    ("title", "found"),
    [
        ("IndexError in torch.gather with negative indices", ["text: IndexError"]),
        ("unfold: RuntimeError on a zero step", ["text: RuntimeError"]),
        (
            "`torch._dynamo.exc.Unsupported` on a dict subclass",
            ["text: torch._dynamo.exc.Unsupported"],
        ),
        (
            "internal assert in addmm on a sparse input",
            ["text: RuntimeError: INTERNAL ASSERT FAILED"],
        ),
        ("torch.cat raises ValueError on mixed dtypes", ["text: ValueError"]),
        ("torch.cat should give ValueError on mixed dtypes", []),
        ("max_pool2d returns garbage instead of a RuntimeError", []),
        ("No IndexError for an out-of-range index in take", []),
        ("A clearer error than KeyError for a missing buffer", []),
        ("take silently wraps around instead of IndexError", []),
        ("Exception when calling torch.foo", []),
        ("IndexError should be raised for negative indices", []),
        ("RuntimeError not raised for mismatched shapes", []),
        ("Raise ValueError instead of segfault in unfold", []),
        ("Add IndexError check to torch.gather", []),
        ("gather accepts negative index without IndexError", []),
        ("Confusing RuntimeError message for view", []),
        ("IndexError vs RuntimeError inconsistency", []),
    ],
)
def test_a_title_names_its_failure_bare(title: str, found: list[str]) -> None:
    """A failure the title names without a verb or message is a type-only signature, unless the
    title wants it or says it is missing."""
    assert sigs(parse("Calling it on these inputs misbehaves.", title=title)) == found


def test_signature_in_a_code_comment() -> None:
    body = md(
        """
        '''python
        import torch
        x = torch.randn(3, device="cuda")
        y = x.index_add(0, torch.tensor([0, 1]), torch.ones(2, 3))  # RuntimeError: source/destination slice sizes differ
        '''
        """
    )
    assert sigs(parse(body)) == ["text: RuntimeError: source/destination slice sizes differ"]


# -- expected and actual -----------------------------------------------------------------------


def test_expected_and_actual_sections() -> None:
    body = md(
        """
        ### 🐛 Describe the bug

        '''python
        import torch
        print(torch.tensor([-0.5]).round())
        '''

        #### Expected behavior

        '''
        tensor([-0.])
        '''

        #### Actual behavior

        The sign of zero is lost:

        '''
        tensor([0.])
        '''
        """
    )
    parsed = parse(body)
    assert parsed.expected == "tensor([-0.])"
    assert parsed.actual == "The sign of zero is lost:\ntensor([0.])"
    assert parsed.code == "import torch\nprint(torch.tensor([-0.5]).round())\n"


def test_expected_and_actual_labels_and_sentences() -> None:
    labels = parse("Expected: a tensor of shape (2, 3)\nActual: a tensor of shape (3, 2)")
    assert labels.expected == "a tensor of shape (2, 3)"
    assert labels.actual == "a tensor of shape (3, 2)"

    split = parse("I would expect `median` to ignore NaN, but it returns nan for every row.")
    assert split.expected == "I would expect `median` to ignore NaN"
    assert split.actual == "but it returns nan for every row."

    should = parse(
        "Should I use `amax` instead? The result of `torch.max(x, 0)` should match numpy here."
    )
    assert should.expected == "The result of `torch.max(x, 0)` should match numpy here."
    assert should.actual is None

    with_block = parse(md("I expected this output:\n\n'''\n[1, 2]\n'''"))
    assert with_block.expected == "I expected this output:\n[1, 2]"


def test_no_expected_or_actual_when_unclear() -> None:
    aside = parse("It should be noted that this only happens on Windows. Should it work there?")
    assert aside.expected is None
    parsed = parse("RuntimeError: expected scalar type Float but got Half when I call it. Thanks!")
    assert parsed.expected is None
    assert parsed.actual is None
    assert sigs(parsed) == [
        "text: RuntimeError: expected scalar type Float but got Half when I call it. Thanks!"
    ]


# -- bad input ---------------------------------------------------------------------------------


def test_empty_and_missing_body() -> None:
    for body in ("", "   \n\n", None):
        parsed = parse(body)
        assert parsed.code == ""
        assert parsed.blocks == []
        assert parsed.warnings == [
            "the issue body is empty",
            "no Python code found in the issue body or its comments",
        ]


def test_unclosed_fence_runs_to_the_end() -> None:
    body = md(
        """
        ### 🐛 Describe the bug

        '''python
        import torch
        torch.bucketize(torch.tensor([1.0]), torch.tensor([2.0, 1.0]))

        ### Versions
        """
    )
    parsed = parse(body)
    assert parsed.code == (
        "import torch\ntorch.bucketize(torch.tensor([1.0]), torch.tensor([2.0, 1.0]))\n\n"
        "### Versions\n"
    )
    assert parsed.warnings == [
        "the code block at line 3 of the body is never closed; it was read to the end of the text"
    ]


def test_crlf_body_parses_like_lf() -> None:
    body = md(
        """
        ### 🐛 Describe the bug

        '''python
        import torch
        torch.zeros(2).kthvalue(3)
        '''

        ### Error logs

        '''
        Traceback (most recent call last):
          File "k.py", line 2, in <module>
        IndexError: kthvalue(): selected number k out of range for dimension 0
        '''
        """
    )
    lf = parse(body)
    crlf = parse(body.replace("\n", "\r\n"))
    assert crlf == lf
    assert lf.code == "import torch\ntorch.zeros(2).kthvalue(3)\n"
    assert lf.signature is not None and lf.signature.exc_type == "IndexError"


def test_huge_body_is_capped_with_a_warning() -> None:
    log = "".join(f"step {n} loss 0.{n:04d}\n" for n in range(20_000))
    body = md("'''python\nimport torch\nprint(1)\n'''\n\n'''\n") + log + FENCE
    parsed = parse(body)
    assert parsed.code == "import torch\nprint(1)\n"
    assert parsed.warnings[0].startswith(f"the issue body is {len(body):,} characters long;")
    assert "the code block at line 6 of the body is never closed" in parsed.warnings[1]
    assert all(len(b.text) <= MAX_SOURCE_CHARS for b in parsed.blocks)


def test_nuls_surrogates_and_tabs() -> None:
    body = "### 🐛 Describe the bug\x00\n\n```python\nimport torch\nif True:\n\tx = 1\ud800\n```\n"
    parsed = parse(body)
    assert parsed.code == "import torch\nif True:\n\tx = 1\ufffd\n"
    assert parsed.warnings == [
        "the issue body had 2 NUL or invalid character(s); they were replaced"
    ]


def test_indented_code_in_a_list_and_tilde_fences() -> None:
    body = md(
        """
        1. Build the model:

            '''python
            import torch
            m = torch.nn.Linear(2, 2)
            '''
        2. Export it:
        ~~~python
        torch.export.export(m, (torch.randn(1, 2),))
        ~~~
        """
    )
    parsed = parse(body)
    assert parsed.code == (
        "import torch\nm = torch.nn.Linear(2, 2)\n\ntorch.export.export(m, (torch.randn(1, 2),))\n"
    )
    assert [b.line for b in parsed.blocks] == [4, 9]


def test_unfenced_code_in_an_old_issue() -> None:
    body = md(
        """
        Using torch 0.3.

        import torch
        a = torch.FloatTensor(2, 2).zero_()
        a.addmm_(a, a.t())

        gives

        Traceback (most recent call last):
          File "<stdin>", line 1, in <module>
        RuntimeError: size mismatch, m1: [2 x 2], m2: [2 x 2]
        """
    )
    parsed = parse(body)
    assert parsed.code == "import torch\na = torch.FloatTensor(2, 2).zero_()\na.addmm_(a, a.t())\n"
    assert kinds(parsed) == ["python", "traceback"]
    assert parsed.warnings == ["the body has no code fences; read Python from plain text at line 3"]


def test_prose_right_under_an_unfenced_transcript_is_not_its_output() -> None:
    """A sentence with no blank line before it joins the transcript's paragraph in markdown
    (a lazy continuation) but is the reporter talking, not what the REPL printed."""
    body = md(
        """
        Summing a bool tensor:

        >>> import torch
        >>> s = torch.tensor([True, False]).sum()
        >>> s.dtype
        torch.int64
        which is surprising to me, the result should stay bool.
        >>> s
        tensor(1)
        Same with a mask
        of three values.

        Thanks!
        """
    )
    parsed = parse(body)
    assert parsed.code == "import torch\ns = torch.tensor([True, False]).sum()\ns.dtype\ns\n"
    assert parsed.transcript == (
        "import torch\ns = torch.tensor([True, False]).sum()\n"
        "s.dtype\n#: torch.int64\ns\n#: tensor(1)\n"
    )


def test_output_that_only_looks_wordy_stays_under_an_unfenced_prompt() -> None:
    """Values, reprs, messages and tracebacks are output, however many words they hold."""
    body = md(
        """
        Some checks:

        >>> import torch
        >>> a, b = torch.ones(2), torch.zeros(2)
        >>> torch.equal(a, a), torch.equal(a, b)
        (True, False)
        >>> print(a.is_leaf, a.requires_grad, a.is_cuda)
        True False False
        >>> {"device": a.device, "dtype": a.dtype}
        {'device': device(type='cpu'), 'dtype': torch.float32}
        >>> torch.nn.Linear(2, 1)
        Linear(in_features=2, out_features=1, bias=True)
        >>> print("all done")
        all done
        >>> a @ torch.ones(3)
        Traceback (most recent call last):
          File "<stdin>", line 1, in <module>
        RuntimeError: inconsistent tensor size, expected tensor [2] and src [3] to have the
        same number of elements, but got 2 and 3 elements respectively
        """
    )
    parsed = parse(body)
    assert "#: (True, False)\n" in parsed.transcript
    assert "#: True False False\n" in parsed.transcript
    assert "#: {'device': device(type='cpu'), 'dtype': torch.float32}\n" in parsed.transcript
    assert "#: Linear(in_features=2, out_features=1, bias=True)\n" in parsed.transcript
    assert "#: all done\n" in parsed.transcript
    tracebacks = [b.text for b in parsed.blocks if b.kind == "traceback"]
    assert len(tracebacks) == 1
    assert tracebacks[0].endswith("same number of elements, but got 2 and 3 elements respectively")
    assert parsed.signature is not None
    assert parsed.signature.exc_type == "RuntimeError"


# -- fuzzing -----------------------------------------------------------------------------------

FRAGMENTS = [
    "```",
    "```python",
    "~~~",
    "    ",
    "\t",
    "### Versions",
    "## Expected behavior",
    "<details>",
    "<summary>Versions</summary>",
    "</details>",
    ">>> ",
    "... ",
    "In [1]: ",
    "Traceback (most recent call last):",
    '  File "x.py", line 1, in <module>',
    "RuntimeError: ",
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
    "The above exception was the direct cause of the following exception:",
    "PyTorch version: ",
    "Is CUDA available: Yes",
    "GPU models and configuration:",
    "import torch",
    "$ pip install torch",
    "I expected ",
    " but got ",
    "> ",
    "- ",
    "[rank0]: ",
    "`",
    "\r\n",
    "\n",
    "\x00",
]


def check_well_typed(parsed: ParsedIssue) -> None:
    assert isinstance(parsed.code, str)
    assert isinstance(parsed.code_source, str)
    assert (parsed.code_source == "") == (parsed.code == "")
    for block in parsed.blocks:
        assert isinstance(block, CodeBlock)
        assert block.kind in BLOCK_KINDS
        assert isinstance(block.text, str) and isinstance(block.info, str)
        assert isinstance(block.line, int) and block.line >= 1
    for signature in parsed.signatures:
        assert signature.origin in ("traceback", "text")
        assert isinstance(signature.exc_type, str) and signature.exc_type
        assert isinstance(signature.message, str)
    assert parsed.env is None or isinstance(parsed.env, ReporterEnv)
    assert parsed.expected is None or isinstance(parsed.expected, str)
    assert parsed.actual is None or isinstance(parsed.actual, str)
    assert all(isinstance(w, str) for w in parsed.warnings)


markdownish = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=20)), max_size=60
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.text(), title=st.text(max_size=50))
def test_fuzz_arbitrary_text_never_crashes(body: str, title: str) -> None:
    check_well_typed(parse_issue(Issue(title=title, body=body)))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=markdownish, comment=markdownish, lines=st.booleans())
def test_fuzz_markdownish_text_never_crashes(body: str, comment: str, lines: bool) -> None:
    if lines:
        body = body.replace(" ", "\n")
    issue = Issue(title="t", body=body, author="me", comments=[Comment("me", comment)])
    check_well_typed(parse_issue(issue))


def test_a_heading_that_only_mentions_expected_keeps_its_code() -> None:
    # "Larger than expected" names the bug, not the expected behaviour: its code is the repro.
    body = md(
        """
        ### Output is larger than expected

        '''python
        import torch
        print(torch.ones(2).sum())
        '''

        ### What I expected

        '''
        tensor(2.)
        '''
        """
    )
    parsed = parse(body)
    assert parsed.code == "import torch\nprint(torch.ones(2).sum())\n"
    assert [o.role for o in parsed.outputs] == ["expected"]
