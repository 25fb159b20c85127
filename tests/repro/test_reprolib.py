"""The repro runtime's signature matching: same failure vs a different one."""

from __future__ import annotations

import ast
from collections import Counter
from importlib import resources

import pytest

from contribkit.repro.plan import RUNTIME_FILES
from contribkit.target.reproerrors import classify_error, eager_only_error, signature_text
from contribkit.target.reprojudge import (
    judge_agreement,
    judge_recompiles,
    judge_runs,
    normalise_message,
    printed_signature,
    signature_matches,
)


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


def test_recompiles_beyond_what_the_issue_allows_reproduce() -> None:
    verdict, detail = judge_recompiles((3, 2, 0, "0/0: x size mismatch"), 0, True)
    assert verdict == "REPRODUCED" and detail.endswith(
        "the first guard failure: 0/0: x size mismatch"
    )
    assert judge_recompiles((3, 2, 0, "r"), 2, True)[0] == "NOT_REPRODUCED"  # the issue allows 2
    assert judge_recompiles((1, 0, 0, ""), 0, True) == (
        "NOT_REPRODUCED",
        "1 compile(s), 0 recompile(s) (the issue allows 0)",
    )


def test_recompiles_that_cannot_decide() -> None:
    dynamic = judge_recompiles((2, 1, 1, ""), 0, True)  # automatic dynamic shapes, by design
    assert dynamic[0] == "CANNOT_RUN" and "automatic dynamic shapes" in dynamic[1]
    once = judge_recompiles((1, 0, 0, ""), 0, False)  # one call cannot recompile
    assert once[0] == "CANNOT_RUN" and "only once" in once[1]
    assert judge_recompiles((0, 0, 0, ""), 0, True)[0] == "CANNOT_RUN"


def test_two_runs_are_compared_line_by_line() -> None:
    verdict, detail = judge_runs(["x tensor(1.5)", "done"], ["x tensor(1.25)", "done"])
    assert verdict == "REPRODUCED" and "line 1: 'x tensor(1.5)', then 'x tensor(1.25)'" in detail
    assert judge_runs(["a 1"], ["a 1", "a 1"])[0] == "REPRODUCED"
    same = judge_runs(["sum tensor(2.)", "took 0.31 s"], ["sum tensor(2.)", "took 0.29 s"])
    assert same == ("NOT_REPRODUCED", "two runs with the same seeds printed the same 1 line(s)")


def test_equal_runs_need_values_that_the_computation_gives() -> None:
    assert judge_runs(["done"], ["done"])[0] == "CANNOT_RUN"  # nothing computed is printed
    within = judge_runs(["out tensor(1.)", "out tensor(2.)"], ["out tensor(1.)", "out tensor(2.)"])
    assert within[0] == "CANNOT_RUN" and "within one run" in within[1]


def test_eager_running_out_of_memory_is_no_divergence() -> None:
    def eager() -> None:
        raise RuntimeError(
            "[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory"
        )

    def oom() -> None:
        raise MemoryError

    def rejects() -> None:
        raise RuntimeError("index 5 is out of bounds for dimension 0 with size 3")

    assert eager_only_error(lambda: 1, eager) is None
    assert eager_only_error(lambda: 1, oom) is None
    found = eager_only_error(lambda: 1, rejects)
    assert found is not None and "out of bounds" in found


class Unsupported(RuntimeError):  # torch._dynamo.exc.Unsupported, by name
    pass


SIG = {"exc_type": "RuntimeError", "message": "index 5 is out of bounds"}


@pytest.mark.parametrize(
    ("exc", "signature", "evidence", "expected"),
    [
        (
            RuntimeError("index 5 is out of bounds for dimension 0"),
            SIG,
            {},
            ("REPRODUCED", "RuntimeError: index 5 is out of bounds for dimension 0", "signature"),
        ),
        (
            ImportError("No module named 'scipy'"),
            SIG,
            {},
            ("CANNOT_RUN", "missing module: ImportError: No module named 'scipy'", ""),
        ),
        (
            AssertionError("bad sum"),
            None,
            {},
            ("REPRODUCED", "the issue's own check failed: AssertionError: bad sum", "assert"),
        ),
        (
            ValueError("nope"),
            None,
            {"check_raises": ["ValueError"]},
            ("REPRODUCED", "the issue's own check failed: ValueError: nope", "assert"),
        ),
        (
            Unsupported("call_function"),
            None,
            {"graph_break": True},
            (
                "REPRODUCED",
                "fullgraph compile hit a graph break: Unsupported: call_function",
                "graph-break",
            ),
        ),
        (
            ValueError("bad input"),
            None,
            {"crash": True},
            ("NOT_REPRODUCED", "raises ValueError: bad input instead of crashing", "crash"),
        ),
        (
            NameError("name 'x' is not defined"),
            None,
            {"crash": True},  # the snippet's own breakage says nothing of the crash
            (
                "CANNOT_RUN",
                "error, and the issue gives no signature to compare: NameError: name 'x' is not defined",
                "",
            ),
        ),
        (
            TypeError("wrong"),
            SIG,
            {},
            (
                "CANNOT_RUN",
                "different error: got TypeError: wrong; the issue reports RuntimeError: index 5 is out of bounds",
                "",
            ),
        ),
    ],
)
def test_an_error_the_code_raised_is_classified(
    exc: BaseException,
    signature: dict[str, str] | None,
    evidence: dict[str, object],
    expected: tuple[str, str, str],
) -> None:
    assert classify_error(exc, signature, evidence) == expected
    assert signature_text(signature) == (
        "RuntimeError: index 5 is out of bounds" if signature else ""
    )


@pytest.mark.parametrize(
    ("exc", "by_torch", "verdict"),
    [
        (RuntimeError("shape '[2, 3]' is invalid for input of size 5"), True, "REPRODUCED"),
        (IndexError("index 4 is out of bounds"), True, "REPRODUCED"),
        (RuntimeError("boom"), False, "CANNOT_RUN"),  # not from a torch operation
        (FileNotFoundError(2, "No such file or directory"), True, "CANNOT_RUN"),  # the machine's
        (TypeError("ones() got an unexpected keyword argument 'volatile'"), True, "CANNOT_RUN"),
        (MemoryError(), True, "CANNOT_RUN"),
        (
            RuntimeError("Cannot access accelerator device when none is available."),
            True,
            "CANNOT_RUN",
        ),
    ],
)
def test_an_error_the_issue_reports_without_quoting_it_is_any_torch_error(
    exc: BaseException, by_torch: bool, verdict: str
) -> None:
    """The issue says its code fails with an error and quotes none: an error a torch operation
    raised reproduces it, unless it speaks of the machine or of an API that changed since."""
    got = classify_error(exc, None, {"reports_error": True}, by_torch)
    assert got[0] == verdict
    if verdict == "REPRODUCED":
        assert got[2] == "error" and "the issue reports an error and quotes none" in got[1]
    assert classify_error(exc, None, {}, by_torch)[0] == "CANNOT_RUN"


def test_an_error_from_inputs_the_repro_made_reproduces_nothing() -> None:
    """A tensor the repro defined from a stated shape (random floats) can break an op the
    reporter fed other values (indices): its error is no evidence of the issue's."""
    exc = RuntimeError("Expected tensor for argument #1 'indices' to have scalar type Long")
    evidence = {"reports_error": True, "inputs_made": True}
    assert classify_error(exc, None, evidence, True)[0] == "CANNOT_RUN"


UNWANTED = {"failure_unwanted": True, "named_ops": ["interpolate"]}
OLD_PAD = {"exc_type": "NotImplementedError", "message": "Only 3D and 4D input is supported"}
OLD_SHAPE = {"exc_type": "RuntimeError", "message": "invalid sizes: the output size is too small"}


@pytest.mark.parametrize(
    ("exc", "signature", "evidence", "op", "verdict"),
    [
        # a specific class, reworded: any torch op that raised it
        (NotImplementedError("Got 3D input"), OLD_PAD, UNWANTED, "pad", "REPRODUCED"),
        # a generic class, reworded: only from the op the issue names
        (
            RuntimeError("output size 0 is too small"),
            OLD_SHAPE,
            UNWANTED,
            "interpolate",
            "REPRODUCED",
        ),
        (RuntimeError("output size 0 is too small"), OLD_SHAPE, UNWANTED, "cat", "CANNOT_RUN"),
        # torch's RuntimeError check that now raises the class it means, from the named op
        (
            ValueError("output size 0 is too small"),
            OLD_SHAPE,
            UNWANTED,
            "interpolate",
            "REPRODUCED",
        ),
        (ValueError("output size 0 is too small"), OLD_SHAPE, UNWANTED, "cat", "CANNOT_RUN"),
        (KeyError("output size 0 is too small"), OLD_SHAPE, UNWANTED, "interpolate", "CANNOT_RUN"),
        # a message that shares one word, or says the API changed since
        (RuntimeError("output must be 2D"), OLD_SHAPE, UNWANTED, "interpolate", "CANNOT_RUN"),
        (
            RuntimeError("size was deprecated and is now removed: output too small"),
            OLD_SHAPE,
            UNWANTED,
            "interpolate",
            "CANNOT_RUN",
        ),
        # another class, no torch op, the complaint about the message, inputs the repro made
        (ValueError("Got 3D input"), OLD_PAD, UNWANTED, "pad", "CANNOT_RUN"),
        (NotImplementedError("Got 3D input"), OLD_PAD, UNWANTED, "", "CANNOT_RUN"),
        (NotImplementedError("Got 3D input"), OLD_PAD, {"named_ops": []}, "pad", "CANNOT_RUN"),
        (
            NotImplementedError("Got 3D input"),
            OLD_PAD,
            {**UNWANTED, "inputs_made": True},
            "pad",
            "CANNOT_RUN",
        ),
    ],
)
def test_the_reported_error_reworded_since_still_reproduces(
    exc: BaseException,
    signature: dict[str, str],
    evidence: dict[str, object],
    op: str,
    verdict: str,
) -> None:
    """The issue's complaint is that the code fails: the same class of error from the
    operation it names (any operation, for a specific class), reworded, still shows it."""
    got = classify_error(exc, signature, evidence, bool(op), op)
    assert got[0] == verdict, got
    if verdict == "REPRODUCED":
        assert got[2] == "error" and got[1].endswith(
            "the same error from the same operation, reworded"
        )
    else:
        assert got[1].startswith("different error: got ")


@pytest.mark.parametrize(
    ("lines", "agreed"),
    [
        # eager and compiled quoted apart, both print the eager value now
        ([("line 4", "0.5000", "0.5000"), ("line 5", "0.7000", "0.5000")], True),
        # both changed (fresh random inputs), and now equal to each other
        (
            [
                ("line 4", "tensor([0.1, 0.2])", "tensor([0.9, 0.3])"),
                ("line 5", "tensor([0.1, 0.4])", "tensor([0.9, 0.3])"),
            ],
            True,
        ),
        # a flag read through a wrapper, labelled in the print, bare in the quote
        ([("line 8", "False", "m.training=False"), ("line 9", "True", "w.training=False")], True),
        # the changed line agrees with nothing it differed from
        ([("line 4", "0.5000", "0.5000"), ("line 5", "0.7000", "0.6000")], False),
        # it now agrees with one neighbour and breaks its agreement with the other
        ([("line 4", "1", "1"), ("line 5", "1", "2"), ("line 6", "2", "2")], False),
        # a changed line that still differs from a neighbour: which one is the bug?
        (
            [
                ("l1", "tensor(1.7500)", "tensor(1.7500)"),
                ("l2", "tensor(1)", "tensor(1.7500)"),
                ("l3", "tensor(-1)", "tensor(-1)"),
            ],
            False,
        ),
        ([("l1", "2.0", "2.0"), ("l2", "0.0", "2.0"), ("l3", "1.0", "1.0")], False),
        # a line with no neighbour of its kind compares with nothing
        (
            [("l1", "True", "True"), ("l2", "False", "True"), ("l3", "tensor(2.)", "tensor(2.)")],
            False,
        ),
        # the partner must be beside it, not anywhere in the output
        ([("line 4", "2", "2"), ("line 5", "3", "3"), ("line 6", "1", "2")], False),
        # nothing changed, or a line that is no single value
        ([("line 4", "0.5000", "0.5000"), ("line 5", "0.7000", "0.7000")], False),
        ([("line 4", "sum is 1", "sum is 1"), ("line 5", "0.7000", "1")], False),
        ([("line 4", "0.5000", "0.5000")], False),
    ],
)
def test_values_quoted_as_disagreeing_that_now_agree(
    lines: list[tuple[str, str, str]], agreed: bool
) -> None:
    """The disagreement the issue quotes is its bug: every changed line now printing the value
    of a line it differed from is NOT_REPRODUCED; anything else decides nothing."""
    found = judge_agreement(lines)
    assert (found is not None) is agreed
    if found is not None:
        assert found.startswith("the values the issue quotes as disagreeing now agree (line")
        assert "line 5" in found or "line 9" in found


def test_an_unquoted_error_whose_wording_is_the_complaint_reproduces_nothing() -> None:
    """ "Fails with a weird error deep in the kernel": a clear error raised now may be the fix,
    so no error counts for the issue's."""
    exc = ValueError("scale_factor must be positive")
    assert classify_error(exc, None, {"reports_error": True}, True)[0] == "REPRODUCED"
    evidence = {"reports_error": True, "about_message": True}
    assert classify_error(exc, None, evidence, True)[0] == "CANNOT_RUN"


def test_whole_values_of_fresh_random_draws_may_agree_by_chance() -> None:
    """Code that draws random values at each call (dropout) and prints whole values: two
    lines printing 0.0 may be chance; values with decimals, or from seeded code, decide."""
    flags = [("line 8", "False", "False"), ("line 9", "True", "False")]
    dropped = [("line 4", "2.0", "0.0"), ("line 5", "0.0", "0.0")]
    fractions = [("line 4", "0.5123", "0.5123"), ("line 5", "0.7001", "0.5123")]
    assert judge_agreement(flags) is not None and judge_agreement(flags, draws=True) is None
    assert judge_agreement(dropped) is not None and judge_agreement(dropped, draws=True) is None
    assert judge_agreement(fractions, draws=True) is not None


def test_the_runtime_files_define_each_name_once() -> None:
    """The runtime joins its files into one module (repro.plan.runtime_source): a name two of
    them define would be the later file's everywhere, unlike in the package the tests import."""
    names: Counter[str] = Counter()
    for name in RUNTIME_FILES:
        tree = ast.parse(resources.files("contribkit.target").joinpath(name).read_text())
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names[node.name] += 1
            elif isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    assert [name for name, count in names.items() if count > 1] == []
