"""The rules a PR title and body must follow (``contribkit pr --check`` and the ``submit`` gate).

Pure and standard library only, like the hooks: a body text and a :class:`CheckContext` in, a
list of :class:`~contribkit.conventions.rules.Violation` out (rules ``CKP01``-``CKP06`` of the shared
catalog). The title rules are the commit-msg hook's
(:func:`~contribkit.conventions.commitmsg.check_message`), since the PR title becomes the landed
commit's subject. Also here, because the body generator needs the same
answers: what a placeholder looks like, and which commit trailers say that an AI helped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from contribkit.conventions.commitmsg import AI_TRAILER_KEYS, check_message
from contribkit.conventions.issuelinks import FIXES_RE
from contribkit.conventions.rules import ERROR, RULES, Violation

if TYPE_CHECKING:
    from contribkit.git.facts import Commit

PLACEHOLDER_RE = re.compile(r"<!--\s*contribkit:\s*(.*?)\s*-->", re.DOTALL)
# PyTorch's own template placeholder ("Fixes #ISSUE_NUMBER"), left when a template is pasted.
TEMPLATE_PLACEHOLDER_RE = re.compile(r"\bISSUE_NUMBER\b")
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# "## Test plan", and the headings real PRs name their tests under ("Test Result", "Testing").
_TEST_PLAN_HEADING = re.compile(
    r"^(?:test(?:ing|s)?(?:[\s_-]*(?:plan|results?))?|unit[\s_-]*tests?)\b", re.IGNORECASE
)
_TEST_PLAN_LINE = re.compile(r"^\s*test[\s_-]*plan\s*:", re.IGNORECASE)
_PERFORMANCE_HEADING = re.compile(r"^(?:perf(?:ormance)?|benchmarks?)\b", re.IGNORECASE)
_AI_HEADING = re.compile(
    r"\bagent details\b|\bai[\s-]+(?:assist\w*|disclosure|usage|use|generated)\b"
    r"|\b(?:assisted|generated) by (?:an? )?ai\b",
    re.IGNORECASE,
)
# A test named the way PyTorch's target determination matches it: a file or a test function.
_TEST_NAME_RE = re.compile(r"\btest/[\w./-]+|\btest_\w+|\b\w+_test\.py\b")

_AI_NAMES = re.compile(
    r"\b(?:claude|anthropic|copilot|chatgpt|openai|gpt-?\d\w*|codex|cursor|gemini|devin|aider"
    r"|codeium|windsurf|tabnine|codewhisperer|amazon q)\b",
    re.IGNORECASE,
)


def placeholder(what: str) -> str:
    """A marked placeholder: an HTML comment GitHub hides, which ``pr --check`` finds (CKP03)."""
    return f"<!-- contribkit: {what} -->"


def placeholders_in(text: str) -> list[tuple[int, str]]:
    """``(line, what)`` for every placeholder left in ``text``: contribkit's, and PyTorch
    template's ``ISSUE_NUMBER``."""
    found = [
        (text.count("\n", 0, m.start()) + 1, " ".join(m.group(1).split()))
        for m in PLACEHOLDER_RE.finditer(text)
    ]
    found += [
        (text.count("\n", 0, m.start()) + 1, "the issue number (ISSUE_NUMBER)")
        for m in TEMPLATE_PLACEHOLDER_RE.finditer(text)
    ]
    return sorted(found)


def is_ai_trailer(key: str, value: str) -> bool:
    """``Assisted-by:``/``Generated-by:`` anything, or ``Co-authored-by:`` an AI tool."""
    name = key.lower()
    return name in AI_TRAILER_KEYS or (
        name == "co-authored-by" and _AI_NAMES.search(value) is not None
    )


def ai_trailers(commits: Sequence[Commit]) -> list[str]:
    """``abc1234 Co-authored-by: Claude <…>`` for each AI trailer of ``commits``."""
    return [
        f"{commit.sha[:7]} {key}: {value}"
        for commit in commits
        for key, value in commit.trailers
        if is_ai_trailer(key, value)
    ]


@dataclass
class CheckContext:
    """What the rules need besides the body: the branch's facts and the title settings."""

    issue_number: int | None = None  # the branch's issue; the body must link it
    ai_evidence: list[str] = field(default_factory=list)  # why AI disclosure is required
    has_bench: bool = False  # a bench record exists for HEAD
    title: str | None = None  # None: the title is not checked
    title_style: str = "pytorch"
    title_max_length: int = 100
    conventional_types: Sequence[str] = ()
    allow_wip: bool = False


@dataclass
class Section:
    line: int  # 1-based line of the heading
    title: str
    text: str  # the lines under it, up to the next heading of the same or a higher level


def sections(body: str) -> list[Section]:
    """The markdown headings of ``body`` (outside code fences) and the text under each."""
    lines = body.splitlines()
    heads: list[tuple[int, int, str]] = []  # (index, level, title)
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING_RE.match(line)
        if m:
            heads.append((i, len(m.group(1)), m.group(2)))
    found = []
    for n, (i, level, title) in enumerate(heads):
        end = next((j for j, lvl, _ in heads[n + 1 :] if lvl <= level), len(lines))
        found.append(Section(i + 1, title, "\n".join(lines[i + 1 : end])))
    return found


def _test_plan(body: str, found: list[Section]) -> tuple[int, str] | None:
    """The test plan's line and text: a '## Test plan' section, or a 'Test Plan:' paragraph."""
    for section in found:
        if _TEST_PLAN_HEADING.match(section.title):
            return section.line, section.text
    lines = body.splitlines()
    for i, line in enumerate(lines):
        if _TEST_PLAN_LINE.match(line):
            end = next((j for j in range(i + 1, len(lines)) if not lines[j].strip()), len(lines))
            return i + 1, "\n".join([line.split(":", 1)[1], *lines[i + 1 : end]])
    return None


def check_pr(body: str, ctx: CheckContext, path: str | None = None) -> list[Violation]:
    """Every rule ``body`` (and ``ctx.title``) breaks, in rule order."""
    found: list[Violation] = []
    heads = sections(body)
    links = {int(m.group(1)): m for m in FIXES_RE.finditer(PLACEHOLDER_RE.sub("", body))}
    if not links and ctx.issue_number is None:  # advice: refactors and docs fix no issue
        found.append(Violation(RULES["CKP01"], "no 'Fixes #N' (or Closes/Resolves) link", 1, path))
    elif not links:
        found.append(
            Violation(
                RULES["CKP01"],
                f"the branch is for #{ctx.issue_number}, but the body never links it",
                1,
                path,
                hint=f"add 'Fixes #{ctx.issue_number}' (or fix the branch name)",
                severity=ERROR,
            )
        )
    elif ctx.issue_number is not None and ctx.issue_number not in links:
        shown = ", ".join(f"#{n}" for n in links)
        found.append(
            Violation(
                RULES["CKP01"],
                f"the body links {shown}, but the branch is for #{ctx.issue_number}",
                1,
                path,
                hint=f"add 'Fixes #{ctx.issue_number}' (or fix the branch name)",
                severity=ERROR,
            )
        )
    plan = _test_plan(body, heads)
    if plan is None:
        if not _TEST_NAME_RE.search(PLACEHOLDER_RE.sub("", body)):  # CI reads the whole body
            found.append(
                Violation(RULES["CKP02"], "no Test plan section, and no test named", None, path)
            )
    elif not _TEST_NAME_RE.search(PLACEHOLDER_RE.sub("", plan[1])):
        found.append(
            Violation(RULES["CKP02"], "the Test plan names no test file or test", plan[0], path)
        )
    for line, what in placeholders_in(body):
        found.append(Violation(RULES["CKP03"], what, line, path))
    if not ctx.has_bench:
        for section in heads:
            if _PERFORMANCE_HEADING.match(section.title):
                found.append(
                    Violation(
                        RULES["CKP04"],
                        f"'{section.title}' section, but no bench record for HEAD",
                        section.line,
                        path,
                    )
                )
    if ctx.ai_evidence and not any(_AI_HEADING.search(s.title) for s in heads):
        evidence = ctx.ai_evidence[0] + (
            f" (and {len(ctx.ai_evidence) - 1} more)" if len(ctx.ai_evidence) > 1 else ""
        )
        found.append(
            Violation(RULES["CKP05"], f"AI helped ({evidence}), but no section says so", None, path)
        )
    found += check_title(ctx)
    return found


def check_title(ctx: CheckContext) -> list[Violation]:
    """The commit-msg hook's title rules (length, period, whitespace, WIP, mood, style) as CKP06:
    advice, like theirs; an empty title is an error."""
    if ctx.title is None:
        return []
    if not ctx.title.strip():
        return [Violation(RULES["CKP06"], "the title is empty", path="title", severity=ERROR)]
    return [
        Violation(
            RULES["CKP06"], f"{v.message} ({v.rule.id} {v.rule.slug})", path="title", hint=v.fix
        )
        for v in check_message(
            [ctx.title],
            title_max_length=ctx.title_max_length,
            title_style=ctx.title_style,
            conventional_types=ctx.conventional_types,
            allow_wip=ctx.allow_wip,
        )
    ]
