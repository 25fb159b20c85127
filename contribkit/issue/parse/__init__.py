"""Read a GitHub issue's markdown into a :class:`~contribkit.issue.model.ParsedIssue`.

Each source text (the body; comments when the body has no code) goes through the same steps:

1. ``markdown.clean``: a missing body becomes ""; CRLF and CR become LF; NULs and unpaired
   surrogates become U+FFFD; text past ``MAX_SOURCE_CHARS`` is dropped with a warning. Line numbers
   stay those of the text as given.
2. ``markdown._unwrap_details``: ``<details>`` and ``<summary>`` tags at the start or end of a line
   are blanked, and the summary text labels the lines the details element encloses. GitHub shows
   these tags as a fold, but CommonMark ends an HTML block only at a blank line, so a fence written
   right under ``<summary>`` would otherwise be swallowed into the HTML block.
3. markdown-it (CommonMark) splits the text into headings, fences, indented code and paragraphs
   (``markdown``). The nearest heading, or an enclosing ``<summary>``, gives what follows a *role*:
   env, expected, actual, errors, workaround or other.
4. ``classify.classify`` decides each code block's kind from its content first and its tag second
   (REPL transcripts and printed values: ``transcripts``), and splits a block holding code and then
   its traceback (or a shell command and its traceback) in two.
5. Issue-level facts come from the classified blocks and the prose: the program
   (``program.program``; where the issue has no code block, the torch statements its prose
   writes in backticks: ``program.inline_program``), failure signatures (``signature``), the
   reporter's environment (``env``), expected and actual behaviour (``expectations``).

Every step is total: ``parse_issue`` returns a well-typed result for any ``str`` input and never
raises. Heuristics are conservative and documented where they live.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from contribkit.issue.model import Comment, Issue, ParsedIssue, QuotedOutput
from contribkit.issue.parse.env import reporter_env
from contribkit.issue.parse.expectations import behaviour, contrasts_devices
from contribkit.issue.parse.markdown import MAX_SOURCE_CHARS, NOT_PROGRAM_ROLES, clean, read_source
from contribkit.issue.parse.nature import issue_nature
from contribkit.issue.parse.program import inline_program, program
from contribkit.issue.parse.scan import Scan, parsing_once
from contribkit.issue.parse.signature import signatures
from contribkit.issue.parse.transcripts import strip_output_comments

__all__ = ["MAX_SOURCE_CHARS", "parse_issue"]


def parse_issue(issue: Issue) -> ParsedIssue:
    """Extract code, failure signatures, reporter env and expected/actual behaviour from ``issue``.

    - The program comes from the body; when the body has none, from the first comment with code,
      the issue author's comments first, then everyone else's in order (bots skipped); when no
      text has a code block, from the torch statements the body's prose writes in backticks
      (``inline_spans`` counts them; never for a docs issue, whose backticks quote the docs).
    - ``blocks`` holds the code blocks of the body and of that comment, in document order.
    - ``signatures`` lists the tracebacks of the body and of that comment (when neither has one:
      of the author's first comment with a traceback), then mentions in prose and in code
      comments (origin "text"), then a mention in the title.
    - The reporter's env comes from the body, then from the author's comments.

    Never raises; what was odd about the input is said in ``warnings``. Each distinct code text
    is parsed once (``scan.parsing_once``), however many steps look at it.
    """
    with parsing_once():
        return _parse_issue(issue)


def _parse_issue(issue: Issue) -> ParsedIssue:
    body = read_source("body", "the issue body", issue.body)
    warnings = list(body.warnings)
    if not body.text.strip():
        warnings.append("the issue body is empty")
    comments = _CommentScans(issue)

    code_scan = body
    code, skipped = program(body)
    if not code:
        for scan in comments.by_priority():
            candidate, candidate_skipped = program(scan)
            if candidate:
                warnings.extend(scan.warnings)
                code_scan, code, skipped = scan, candidate, candidate_skipped
                break
    warnings.extend(skipped)
    nature, nature_why = issue_nature(issue, body.text)
    inline = 0
    if not code and nature != "docs":  # a docs issue's backticks quote the docs
        code, inline = inline_program(body)  # the body: code_scan is still it
    if not code:
        warnings.append("no Python code found in the issue body or its comments")

    scans = [body] if code_scan is body else [body, code_scan]
    traceback_scans = scans
    if not any(_has_traceback(scan) for scan in scans):
        traceback_scans = scans + [s for s in comments.authors() if _has_traceback(s)][:1]
    expected, actual = behaviour(body)
    return ParsedIssue(
        code=strip_output_comments(code),
        transcript=code,
        outputs=quoted_outputs(code_scan) if code else [],
        nature=nature,
        nature_why=nature_why,
        code_source=code_scan.source if code else "",
        blocks=[b.code for scan in scans for b in scan.blocks],
        signatures=signatures(traceback_scans, scans, clean(issue.title, "the title", [])),
        env=reporter_env([body, *comments.authors()]),
        expected=expected,
        actual=actual,
        warnings=_unique(warnings),
        contrasts_devices=contrasts_devices(clean(issue.title, "the title", []), body),
        body=body.text,
        inline_spans=inline,
    )


class _CommentScans:
    """The issue's comments, each read once and only when asked for."""

    def __init__(self, issue: Issue) -> None:
        humans = [c for c in issue.comments if isinstance(c.author, str) and not _is_bot(c.author)]
        self.own = [c for c in humans if issue.author and c.author == issue.author]
        self.others = [c for c in humans if c not in self.own]
        self.read: dict[int, Scan] = {}

    def _scan(self, comment: Comment) -> Scan:
        if id(comment) not in self.read:
            label = f"comment by @{comment.author}"
            self.read[id(comment)] = read_source(label, f"the {label}", comment.body)
        return self.read[id(comment)]

    def authors(self) -> Iterator[Scan]:
        """The issue author's comments, in order."""
        return (self._scan(c) for c in self.own)

    def by_priority(self) -> Iterator[Scan]:
        """The author's comments, then the others, each group in order; no bots."""
        return (self._scan(c) for c in [*self.own, *self.others])


def quoted_outputs(scan: Scan) -> list[QuotedOutput]:
    """Output blocks after the first program block: "expected" under an expected heading or
    after prose that introduces the expected result ("Expected:"), else "actual"."""
    program_lines = [b.code.line for b in scan.blocks if b.code.kind in ("python", "repl")]
    if not program_lines:
        return []
    found = []
    for block in scan.blocks:
        code = block.code
        if code.kind != "output" or code.line < program_lines[0] or not code.text.strip():
            continue
        if block.role == "expected" or block.after_expected:
            found.append(QuotedOutput(code.text, "expected", code.line))
        elif block.role not in NOT_PROGRAM_ROLES or block.role == "actual":
            found.append(QuotedOutput(code.text, "actual", code.line))
    return found


def _is_bot(login: str) -> bool:
    """GitHub apps end in "[bot]"; PyTorch's own bots in "bot" (pytorchmergebot, pytorch-bot)."""
    return login.lower().endswith(("bot", "[bot]"))


def _has_traceback(scan: Scan) -> bool:
    return any(b.code.kind == "traceback" for b in scan.blocks)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
