"""What keeps `repro` linear on large issues: every step reads the body the parser cut, each code
text is parsed once, and the program's facts, edits and evidence share one parse.

The parses are counted by wrapping ``ast.parse`` (the standard library's, not contribkit's code);
nothing here times anything.
"""

from __future__ import annotations

import ast
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from contribkit.issue.model import Issue
from contribkit.issue.parse import MAX_SOURCE_CHARS, parse_issue
from contribkit.issue.parse.classify import classify
from contribkit.repro.plan import plan_repro
from contribkit.repro.spec import build_spec

FENCE = "```"


@pytest.fixture
def parsed_texts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Every source text ``ast.parse`` is given (in exec mode) while the test runs, counted."""
    seen: Counter[str] = Counter()
    real: Callable[..., Any] = ast.parse

    def counting(source: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("mode", args[1] if len(args) > 1 else "exec") == "exec":
            seen[str(source)] += 1
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    yield seen


def _blocks(count: int) -> str:
    """Blocks of every kind the classifier tells apart: Python (some repeated), untagged code,
    printed values, a REPL transcript, code with its traceback, code with output pasted under it."""
    shapes = [
        lambda i: f"{FENCE}python\nimport torch\nx{i} = torch.ones({i % 5 + 1})\n{FENCE}\n",
        lambda i: f"{FENCE}\nx{i} = x{i - 1} + 1\nprint(x{i})\n{FENCE}\n",
        lambda i: f"{FENCE}\ntensor([{i}., 1.])\n{FENCE}\n",
        lambda i: f"{FENCE}python\n>>> y = {i}\n>>> y\n{i}\n{FENCE}\n",
        lambda i: (
            f"{FENCE}python\nz = torch.ones({i})[99]\nTraceback (most recent call last):\n"
            f'  File "a.py", line 1, in <module>\nIndexError: index 99 is out of bounds\n{FENCE}\n'
        ),
        lambda i: f"{FENCE}python\nw = {i}\nprint(w)\ntensor([{i}.])\n{FENCE}\n",
        lambda i: f"{FENCE}python\nimport torch\nx0 = torch.ones(1)\n{FENCE}\n",  # repeated
    ]
    return "Some prose.\n\n" + "\n".join(shapes[i % len(shapes)](i) for i in range(count))


def test_each_distinct_code_text_is_parsed_once(parsed_texts: Counter[str]) -> None:
    parsed = parse_issue(Issue(title="a bug", body=_blocks(70)))
    assert parsed.code  # the blocks were read and merged into a program
    assert len(parsed_texts) > 30  # every block's text was looked at
    twice = {text: n for text, n in parsed_texts.items() if n > 1}
    assert twice == {}


# One-line blocks and their kinds under an untagged, a python, another and a shell fence.
NAME_LINES = {
    "v7": ("output", "output", "output", "shell"),  # a name: its printed value
    "torch.float32": ("output",) * 4,  # printed under a shell fence too
    "x.grad": ("output", "output", "output", "shell"),
    "π": ("output", "output", "output", "shell"),
    "RuntimeError": ("traceback",) * 4,  # an exception's name: a traceback's last line
    "torch._dynamo.exc.Unsupported": ("traceback",) * 4,
    "pass": ("python", "python", "output", "shell"),  # a keyword: a statement
    "None": ("output", "output", "output", "shell"),
    "x.if": ("output", "python", "output", "shell"),  # does not parse
    "a..b": ("output", "python", "output", "shell"),
}


@pytest.mark.parametrize(("line", "kinds"), NAME_LINES.items())
def test_a_block_that_only_names_a_value_is_output_without_a_parse(
    parsed_texts: Counter[str], line: str, kinds: tuple[str, ...]
) -> None:
    tags = ("", "python", "cpp", "bash")
    found = [[piece.kind for piece in classify(f"{line}\n\n", tag)] for tag in tags[:3]]
    # under any tag but a shell one, a name that is neither a keyword nor an exception's name is
    # known for output without ast.parse (an exception's name is a traceback without one too)
    assert (line in parsed_texts) == (line in {"pass", "None", "x.if", "a..b"})
    found.append([piece.kind for piece in classify(f"{line}\n\n", tags[3])])
    assert found == [[kind] for kind in kinds]


def test_the_program_is_parsed_once_for_its_facts_edits_and_evidence(
    parsed_texts: Counter[str],
) -> None:
    # A program that catches an error, loops and compiles: each evidence pass looks at its tree.
    marker = f"# {uuid.uuid4().hex}"  # a text no earlier test parsed (the last trees are kept)
    code = (
        f"{marker}\nimport torch\n\n@torch.compile\ndef f(x):\n    return x.sin()\n\n"
        "for i in range(3):\n    try:\n        print(f(torch.ones(i + 1)))\n"
        "    except RuntimeError:\n        pass\n"
    )
    body = f"The output differs between runs, and it recompiles.\n\n{FENCE}python\n{code}{FENCE}\n"
    issue = Issue(title="recompiles: RuntimeError: bad", body=body)
    parsed = parse_issue(issue)
    parsed_texts.clear()
    spec = build_spec(issue, parsed, "digest")
    assert spec.evidence.oracles  # the evidence read the program's tree
    assert {"recompiles", "determinism"} <= set(spec.evidence.runtime)
    twice = {text: n for text, n in parsed_texts.items() if n > 1}
    assert twice == {}
    assert any(marker in text for text in parsed_texts)


def _past_the_cap(head: str, tail: str) -> str:
    filler = "".join(f"Line {n} of a long log, nothing in it.\n" for n in range(6_000))
    assert len(head + filler) > MAX_SOURCE_CHARS
    return head + filler + tail


CODE = f"{FENCE}python\nimport torch\nx = torch.ones(3)\nprint(x)\n{FENCE}\n\n"


@pytest.mark.parametrize(
    ("tail", "near", "far"),
    [
        # the template heading of a feature request: a feature when read, a bug when cut off
        ("### The feature, motivation and pitch\n\nAdd it.\n", "feature", "bug"),
        ("### The doc issue\n\nThe docstring is wrong.\n", "docs", "bug"),
    ],
    ids=["feature-heading", "docs-heading"],
)
def test_the_nature_reads_the_cut_body(tail: str, near: str, far: str) -> None:
    assert parse_issue(Issue(title="t", body=CODE + tail)).nature == near
    assert parse_issue(Issue(title="t", body=_past_the_cap(CODE, tail))).nature == far


def test_the_evidence_reads_the_cut_body() -> None:
    """Words past the cap (a crash, a frame of the reporter's file) weigh nothing, as the code
    and tracebacks past it do not: the oracles come from the text the parser read."""
    tail = (
        "It crashed with a segmentation fault (core dumped).\n\n"
        'Traceback (most recent call last):\n  File "mine.py", line 9, in <module>\n'
        "    y = something_else(x)\nRuntimeError: bad\n"
    )
    title = "RuntimeError: bad"
    near_issue = Issue(title=title, body=CODE + tail)
    near = build_spec(near_issue, parse_issue(near_issue), "digest").evidence
    assert "crash" in near.oracles and near.runtime.get("path_unseen")
    far_issue = Issue(title=title, body=_past_the_cap(CODE, tail))
    far_parsed = parse_issue(far_issue)
    assert "segmentation fault" not in far_parsed.body
    far = build_spec(far_issue, far_parsed, "digest").evidence
    assert "crash" not in far.oracles and "path_unseen" not in far.runtime
    assert plan_repro(far_issue, far_parsed).summary.oracles == far.oracles


def test_the_stated_oracle_facts_read_the_cut_body() -> None:
    """Words past the cap ("it should raise") are not read: the runtime's ``wants_error`` (what
    the no-error hint decides from) comes from the text the parser read, as the oracles do."""
    tail = "It should raise an error for a float source, but it returns silently.\n"
    near_issue = Issue(title="index_add_ accepts a float source", body=CODE + tail)
    near = build_spec(near_issue, parse_issue(near_issue), "digest").evidence
    assert near.runtime["expect_facts"]["wants_error"] is True
    far_issue = Issue(title="index_add_ accepts a float source", body=_past_the_cap(CODE, tail))
    far = build_spec(far_issue, parse_issue(far_issue), "digest").evidence
    assert far.runtime["expect_facts"]["wants_error"] is False
