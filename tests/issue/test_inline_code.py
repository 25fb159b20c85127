"""Issues whose only code is inline: torch statements written in the prose's backticks.

The bodies are invented here, in the shapes such reports take ("`torch.arange(0, 1, 0.1)`
returns 11 values"); each refusal is a class the reader must not run: a block beside the
prose, bare names, signatures, the wanted behaviour, code the prose calls right, the
environment section, spans that run no torch.
"""

from __future__ import annotations

import pytest

from contribkit.issue.model import Comment, Issue
from contribkit.issue.parse import parse_issue
from contribkit.issue.parse.program import INLINE_MODULES, MAX_INLINE_SPANS
from contribkit.repro.edits import KNOWN_IMPORTS, edit_code
from tests.issue.test_issueparse import md, parse


def test_an_expression_in_the_prose_is_the_code() -> None:
    parsed = parse(
        md("""
        ### 🐛 Describe the bug

        Calling `torch.tensor([1, 2, 3, 4]).float().median()` gives `tensor(2.)` of
        `torch.Size([])`, where numpy gives `array(2.5)`.
        """)
    )
    assert parsed.code == "torch.tensor([1, 2, 3, 4]).float().median()\n"
    assert parsed.inline_spans == 1
    assert parsed.code_source == "body"
    assert not any("no Python code" in w for w in parsed.warnings)


def test_spans_run_in_document_order_and_bind_names_for_later_ones() -> None:
    """An assignment binds ``x`` and ``m`` for the calls after it (`m(x)` runs a built model);
    a span said twice runs once; a call under ``nn``/``F`` counts as torch; the subject of a
    should clause is reported."""
    parsed = parse(
        md("""
        Make `x = torch.linspace(0, 1, 5)` and `m = nn.Linear(5, 1)` first.

        Then `x.cumsum(0)` and `F.softmax(x, dim=0)` differ from numpy; `x.cumsum(0)` again,
        and `m(x)` too.

        `torch.arange(0, 1, 0.1)` should return 10 values, but it returns 11.
        """)
    )
    assert parsed.code.splitlines() == [
        "x = torch.linspace(0, 1, 5)",
        "m = nn.Linear(5, 1)",
        "x.cumsum(0)",
        "F.softmax(x, dim=0)",
        "m(x)",
        "torch.arange(0, 1, 0.1)",
    ]
    assert parsed.inline_spans == 6


def test_a_traceback_or_an_output_block_is_no_code() -> None:
    parsed = parse(
        md("""
        `torch.zeros(2).index_add_(0, torch.tensor([5]), torch.ones(1))` fails:

        '''
        Traceback (most recent call last):
          File "<stdin>", line 1, in <module>
        IndexError: index out of range in self
        '''
        """)
    )
    assert parsed.code == "torch.zeros(2).index_add_(0, torch.tensor([5]), torch.ones(1))\n"
    assert str(parsed.signature) == "IndexError: index out of range in self"


@pytest.mark.parametrize(
    "block",
    [
        "'''python\nimport torch\nprint(torch.ones(2))\n'''",
        "'''\n>>> import torch\n>>> torch.ones(2).sum()\ntensor(2.)\n'''",
        "    import torch\n    y = torch.ones(2)\n",
        "'''bash\npython -c 'import torch; torch.ones(2)'\n'''",
    ],
    ids=["fenced", "repl", "indented", "shell"],
)
def test_inline_code_never_mixes_with_a_code_block(block: str) -> None:
    body = md("Here `torch.arange(0, 1, 0.1)` returns 11 values.\n\n" + block + "\n")
    parsed = parse(body)
    assert "torch.arange(0, 1, 0.1)" not in parsed.code
    assert parsed.inline_spans == 0


def test_a_block_the_program_leaves_out_still_rules_inline_code_out() -> None:
    """A block under a workaround heading is no program, but the issue has block code."""
    parsed = parse(
        md("""
        `torch.arange(0, 1, 0.1)` returns 11 values.

        ### Workaround

        '''python
        torch.arange(0, 1, 0.1, dtype=torch.float64)
        '''
        """)
    )
    assert (parsed.code, parsed.inline_spans) == ("", 0)


@pytest.mark.parametrize(
    "span",
    [
        "torch.sum",  # a bare name
        "torch.Tensor.median",
        "torch.sum()",  # a name written as a call: nothing to sum
        "torch.Tensor.median()",
        "dim=None",  # a fragment of a signature
        "torch.sum(input, dim)",  # a signature: builtins that name parameters
        "torch.stack(tensors, ...)",
        "torch.zeros(...)",
        "RuntimeError: index out of range",  # error text (parses: an annotation)
        'RuntimeError("index out of range")',
        "np.median(np.array([1, 2, 3, 4]))",  # no torch
        "scipy.special.gamma(2.5)",
        "time.time()",
        "len([1, 2])",
        "torch.tensor([1.0, 2.0])",  # a value, as torch prints it: no operation
        "torch.Size([2, 3])",
        "torch.cuda.is_available()",  # asks about the machine
        "torch.cuda.get_device_name(0)",
        "torch.backends.mps.is_built()",
        "[torch.ones(i) for i in range(3)]",  # names of its own
        "if torch.ones(1): pass",  # not a simple statement
        "torch.ones(2); torch.zeros(2)",  # two statements
    ],
)
def test_spans_that_are_no_complete_torch_statement_are_refused(span: str) -> None:
    parsed = parse(f"The call `{span}` is what I mean here.\n")
    assert (parsed.code, parsed.inline_spans) == ("", 0), parsed.code


@pytest.mark.parametrize(
    "sentence",
    [
        "It gives 2.0, but it should be `torch.tensor(2.5).item()`.",
        "Expected: `torch.tensor([2.5]).sum()`",
        "I expected `torch.arange(0, 1, 0.25)` to be used here.",
        "The expected result is `torch.full((2,), 2.5)`.",
        "Casting first, `torch.arange(0, 1, 0.1, dtype=torch.float64)` works fine.",
        "A workaround is `torch.arange(0, 10) / 10`.",
        "Use `torch.linspace(0, 0.9, 10)` instead.",
        "With `torch.use_deterministic_algorithms(False)` there is no error.",
    ],
    ids=["should-be", "label", "i-expected", "expected-is", "works", "workaround", "instead", "ok"],
)
def test_spans_the_prose_calls_right_are_refused(sentence: str) -> None:
    parsed = parse(f"Some values are off.\n\n{sentence}\n")
    assert (parsed.code, parsed.inline_spans) == ("", 0), parsed.code


def test_only_the_clause_that_calls_code_right_is_refused() -> None:
    """A works, but B fails: B is the report; a clause that denies working is no claim."""
    parsed = parse(
        md("""
        `torch.arange(0, 1, 0.5, dtype=torch.float64)` works, but `torch.arange(0, 1, 0.1)` gives 11 values.

        And `torch.ones(3).median()` doesn't work as I hoped.
        """)
    )
    assert parsed.code.splitlines() == ["torch.arange(0, 1, 0.1)", "torch.ones(3).median()"]


@pytest.mark.parametrize(
    "partial",
    [
        "`torch.sum(input, dim)`",  # a signature whose function no span calls
        "`Tensor.add_(other, alpha=1)`",
        "`torch.zeros(...)`",
        "`y = torch.ones(2); y.sum()`",  # two statements in one span
        "`torch.cat(*pieces)`",
    ],
)
def test_one_span_that_cannot_run_as_written_leaves_the_rest_out(partial: str) -> None:
    """Running the rest would be a partial program: its clean run says nothing of the bug."""
    parsed = parse(f"Make `x = torch.randn(3, 3)` and then {partial} throws an error.\n")
    assert (parsed.code, parsed.inline_spans) == ("", 0)


def test_a_name_no_span_defines_stays_for_the_repro_edits() -> None:
    """`a` (its shape stated or not) and `loss` are left to the edits or to their NameError;
    a signature whose function a span calls is documentation beside the code."""
    parsed = parse(
        md("""
        With `a` of shape (2, 3), `torch.mm(a, torch.ones(2, 3))` raises; `a.sum(dim=1)` too,
        and `loss.backward()` after it. The docs say `torch.mm(input, mat2)`.
        """)
    )
    assert parsed.code.splitlines() == [
        "torch.mm(a, torch.ones(2, 3))",
        "a.sum(dim=1)",
        "loss.backward()",
    ]


def test_spans_that_are_no_code_leave_the_rest_in() -> None:
    """Fragments, error text, dtypes, classes and other libraries' calls are prose, not a
    missing part; a function named bare is one a span calls."""
    parsed = parse(
        "With `x = torch.randn(3, 3, dtype=torch.float64)`, `torch.linalg.inv` (its `out=None`,"
        " or numpy's `np.linalg.inv(np.eye(3))`) raises `RuntimeError: singular` in"
        " `torch.linalg.inv(x)`; `x` is a `torch.Tensor` of `torch.float64` (see `torch.linalg`).\n"
    )
    assert parsed.code.splitlines() == [
        "x = torch.randn(3, 3, dtype=torch.float64)",
        "torch.linalg.inv(x)",
    ]


@pytest.mark.parametrize("name", ["`torch.linalg.inv`", "`torch.linalg.inv()`", "`Tensor.inverse`"])
def test_a_function_named_bare_that_no_span_calls_leaves_all_out(name: str) -> None:
    """The human would write the call; the spans alone would run without the reported one."""
    parsed = parse(f"With `x = torch.randn(3, 3)`, {name} raises `RuntimeError: singular`.\n")
    assert (parsed.code, parsed.inline_spans) == ("", 0)


def test_a_paragraph_introduced_as_expected_or_as_a_workaround_is_refused() -> None:
    parsed = parse(
        md("""
        `torch.arange(0, 1, 0.1)` returns 11 values.

        Expected output:

        `torch.arange(0, 1, 0.25)`

        As a workaround I use:

        `torch.linspace(0, 0.9, 10)`
        """)
    )
    assert parsed.code == "torch.arange(0, 1, 0.1)\n"


def test_spans_under_env_expected_and_workaround_headings_are_refused() -> None:
    parsed = parse(
        md("""
        ### 🐛 Describe the bug

        Medians of even-length tensors are off.

        ### Expected behavior

        `torch.tensor([1.0, 2.0]).median()` gives 1.5.

        ### Versions

        `torch.ones(1).numpy()` works; torch 2.13.
        """)
    )
    assert (parsed.code, parsed.inline_spans) == ("", 0)


def test_a_docs_issue_and_a_discussion_of_many_calls_take_no_inline_code() -> None:
    docs = parse("The example `torch.ones(2).sum()` in the docs is odd.\n", labels=["module: docs"])
    assert (docs.code, docs.nature) == ("", "docs")
    many = " ".join(f"`torch.ones({n})`" for n in range(1, MAX_INLINE_SPANS + 2))
    assert parse(f"All of {many} differ.\n").code == ""


def test_comments_inline_code_is_not_read() -> None:
    """Spans in comments are suggestions as often as reports: only the body's are code."""
    issue = Issue(
        title="median is off",
        body="The median of an even-length tensor is off.\n",
        author="reporter",
        comments=[Comment("reporter", "Try `torch.ones(4).median()`.\n")],
    )
    assert parse_issue(issue).code == ""


def test_the_edit_echoes_every_inline_expression_and_says_so() -> None:
    edited = edit_code("x = torch.ones(3)\nx.cumsum(0)\ntorch.arange(0, 1, 0.1)\n", "", inline=3)
    assert edited.edits[0] == (
        "the issue's code is inline: ran its 3 backticked expression(s), in the order the"
        " prose gives them"
    )
    assert "add imports for the free names torch: import torch" in edited.edits
    lines = edited.text.splitlines()
    assert lines[0] == "import torch"
    assert lines[1:] == [
        "x = torch.ones(3)",
        "_repro.echo(x.cumsum(0))",
        "_repro.echo(torch.arange(0, 1, 0.1))",
    ]


def test_inline_names_are_those_the_import_edit_adds() -> None:
    assert INLINE_MODULES.issubset(KNOWN_IMPORTS)


def test_words_inside_a_span_are_code_not_claims() -> None:
    """The words "works" or "expected" inside backticks are code, not the prose's claim."""
    span = "torch.testing.assert_close(torch.ones(2), torch.zeros(2), msg='works as expected')"
    parsed = parse(f"`{span}` raises where it should not.\n")
    assert parsed.code == span + "\n"


def test_an_import_span_goes_first_and_is_no_program_alone() -> None:
    parsed = parse(
        md("""
        With `d = D.normal.Normal(0.0, 2.0)` then `d.log_prob(torch.tensor(1.0))`, it gives a
        positive value. I import it as `import torch.distributions as D`.
        """)
    )
    assert parsed.code.splitlines() == [
        "import torch.distributions as D",
        "d = D.normal.Normal(0.0, 2.0)",
        "d.log_prob(torch.tensor(1.0))",
    ]
    alone = parse(md("I use `import torch.nn as nn` and `from torch import optim`."))
    assert alone.inline_spans == 0
