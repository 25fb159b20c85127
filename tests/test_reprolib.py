"""The repro runtime's signature matching: same failure vs a different one."""

from __future__ import annotations

import pytest

from contribkit.target.reprolib import normalise_message, printed_signature, signature_matches


class BackendCompilerFailed(RuntimeError):
    pass


def test_normalise_masks_addresses_paths_and_ids() -> None:
    text = "tensor at 0x7f3a2b1c on /tmp/torchinductor_me/ab/cd.py id 140234567 failed\nsecond line"
    assert normalise_message(text) == "tensor at <addr> on <path> id <n> failed"
    wrapped = "backend='inductor' raised:\nRuntimeError: boom\n\nSet TORCH_LOGS"
    assert normalise_message(wrapped) == "backend='inductor' raised: RuntimeError: boom"


@pytest.mark.parametrize(
    ("exc", "exc_type", "message"),
    [
        (RuntimeError("Expected size 5 but got 6"), "RuntimeError", "Expected size 3 but got 4"),
        (
            RuntimeError("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
            "RuntimeError",
            "mat1 and mat2 shapes cannot be multiplied",
        ),  # the issue quoted a prefix
        (
            BackendCompilerFailed("backend='inductor' raised:\nRuntimeError: boom"),
            "torch._dynamo.exc.BackendCompilerFailed",
            "backend='inductor' raised: RuntimeError: boom",
        ),
        (KeyError("x"), "LookupError", ""),  # matched by a base class name, no message given
    ],
)
def test_same_failure_matches(exc: BaseException, exc_type: str, message: str) -> None:
    assert signature_matches(exc, exc_type, message)


@pytest.mark.parametrize(
    ("exc", "exc_type", "message"),
    [
        (ValueError("bad"), "RuntimeError", "bad"),
        (
            RuntimeError("Given output_size=(4, 5), kernel_size=(2, 2), which is too small"),
            "RuntimeError",
            "Given input with spatial size (4, 4), kernel_size=(2, 2), which is too small",
        ),
        (
            BackendCompilerFailed("backend='inductor' raised:\nTypeError: other"),
            "BackendCompilerFailed",
            "backend='inductor' raised: RuntimeError: boom",
        ),
        (RuntimeError(""), "RuntimeError", "something specific"),
    ],
)
def test_different_failure_does_not_match(exc: BaseException, exc_type: str, message: str) -> None:
    assert not signature_matches(exc, exc_type, message)


def test_printed_signature_finds_the_error_line_only() -> None:
    message = "index_add_(): self (Long) and source (Float) must have the same scalar type"
    out = "tensor([0, 0])\nRuntimeError: index_add_(): self (Long) and source (Float) must have the same scalar type\n"
    assert printed_signature(out, "RuntimeError", message).startswith("index_add_(): self")
    assert printed_signature(out.split("\n", 1)[1][14:], "RuntimeError", message)  # bare message
    assert not printed_signature("tensor([0, 0])\nall good\n", "RuntimeError", message)
    assert not printed_signature(out, "RuntimeError", "expected a different failure entirely")
