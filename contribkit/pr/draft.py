"""PR titles and bodies in PyTorch's conventions, for ``contribkit pr`` and ``contribkit submit``.

Two steps. :func:`contribkit.pr.gather.gather` reads what is on disk and asks GitHub for what
the body needs. :func:`draft` is pure: it turns those inputs into a title, a body rendered from
``templates/pr_body.md.j2`` (or ``--template``), the suggested label and the placeholders left.
Also here: what ``pr --check`` and the submit gate check a body against (:func:`check_context`).

The body follows what PyTorch's mergebot, CI and reviewers read, around the fork's PR template
(else PyTorch's), whose lines it keeps as written: the template's ``Fixes #ISSUE_NUMBER`` line
first, filled in (the landed commit message is the title and body); prose from the commit
bodies, not a list of changes; a Test plan naming the test files and commands (target
determination runs tests named in the body first); the device matrix that was really run; a
Performance section only from a bench record; the rest of the template (its checklist); an
"Agent details" section when an AI helped (AI_POLICY.md); and the issue's ``cc`` line. What
cannot be known is a marked placeholder. Nothing in it is addressed to a bot or the author (the
landed commit message would carry it): the label's ``@pytorchbot`` comment is in ``comments``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contribkit.bench.record import bench_for_head, markdown_table, measured_on
from contribkit.conventions.branches import GHSTACK_NOTE, is_ghstack
from contribkit.conventions.commitmsg import LANDED_SUFFIX, TRAILER_LINE, split_trailers
from contribkit.conventions.issuelinks import CLOSING_WORDS
from contribkit.git.facts import BranchFacts, Commit
from contribkit.pr.check import (
    CheckContext,
    ai_trailers,
    check_title,
    placeholder,
    placeholders_in,
)
from contribkit.pr.gather import (
    PYTORCH_TEMPLATE,
    IssueFacts,
    PrInputs,
    PrTemplate,
    parse_pr_template,
)
from contribkit.pr.title import make_title
from contribkit.run.record import SKIPPED, Cell, RunRecord, markdown_matrix

if TYPE_CHECKING:
    from contribkit.core.config import Settings

TEMPLATE = "pr_body.md.j2"
AI_HEADING = "Agent details"  # the section AI_POLICY.md names
# Where the fork template's lines go: these stand-ins survive tidy(), then the lines replace them.
_TEMPLATE_SLOT = "@@contribkit-pr-template-{}@@"
MAX_K_NAMES = 6  # more new tests than this: name the file, not each test

_SECTION_LABEL_RE = re.compile(
    r"^(root[ -]cause|cause|solution|the fix|test[ _-]?plan|testing)\s*:\s*", re.IGNORECASE
)
_LABEL_KEYS = {
    "root cause": "root_cause",
    "root-cause": "root_cause",
    "cause": "root_cause",
    "solution": "solution",
    "the fix": "solution",
}
_TEST_DEF_RE = re.compile(r"^\s*(?:async\s+)?def\s+(test_\w+)\s*\(")


@dataclass
class PrDraft:
    title: str
    body: str
    labels: list[str]  # the suggested release-notes label (none when it is a placeholder)
    label_reason: str
    bot_command: str | None
    comments: list[str]  # to post on the PR once it is open (the label's @pytorchbot line)
    instructions: list[str]  # what the author still has to do besides the body
    placeholders: list[str]
    title_problems: list[str]
    warnings: list[str]
    issue: IssueFacts | None
    record_path: str | None
    bench_path: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- the commits' text --------------------------------------------------------------------------
_ISSUE_LINK = r"(?:[\w.-]+/[\w.-]+#\d+|#\d+|https?://\S+?/(?:issues|pull)/\d+)"
# A line that only points at issues: "Fixes #1", "Closes #2 and #3", "Refs: o/r#4", "See #5.".
_REFERENCE_LINE = re.compile(
    rf"^\s*(?:(?P<closing>{CLOSING_WORDS})|refs?|references?|see(?: also)?"
    r"|related(?: to)?|part of|xref|follow[- ]up (?:to|of))?:?\s*"
    rf"{_ISSUE_LINK}(?:\s*(?:,|and)\s*{_ISSUE_LINK})*\s*\.?\s*$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\S")
_LOWER_WORD = re.compile(r"^[a-z](?=[a-z]*(?:[\s,;:!?]|\.(?!\w)|$))")  # a word, not code


@dataclass
class CommitText:
    summary: list[str] = field(default_factory=list)  # paragraphs
    root_cause: list[str] = field(default_factory=list)
    solution: list[str] = field(default_factory=list)
    test_plan: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)  # "Refs #12": they go by the Fixes line
    bullet_lists: list[str] = field(default_factory=list)  # commits whose lists were left out


def _sentence(text: str) -> str:
    """``the kernel …`` -> ``The kernel …``; a first word that looks like code is kept."""
    return _LOWER_WORD.sub(lambda m: m.group(0).upper(), text, count=1)


def _without_lists(paragraph: str) -> tuple[str, bool]:
    """A paragraph without its bullet items (with their indented continuations, and the
    ``…:`` line that leads into them), and whether it had any. Code fences are kept whole."""
    kept: list[str] = []
    in_item = fenced = found = False
    for line in paragraph.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and _BULLET.match(line):
            if not found and kept and kept[-1].rstrip().endswith(":"):
                kept.pop()  # "This PR:" leads into the list
            in_item = found = True
        elif not (in_item and not fenced and line[:1] in (" ", "\t")):
            in_item = False
            kept.append(line)
    return "\n".join(kept).strip(), found


def commit_text(commits: Sequence[Commit], issue: int | None) -> CommitText:
    """The commit bodies (oldest first) split into prose, ``Root cause:``, ``Solution:`` and
    ``Test Plan:`` paragraphs (as paragraphs or trailers); trailers dropped.

    Lines that only point at issues leave the prose: those closing the PR's issue are dropped
    (the body's Fixes line says it), others go in ``references``. The summary is prose, as
    PyTorch asks: bullet lists are left out of it (``bullet_lists`` names their commits).
    Section text starts with a capital, as a sentence.
    """
    out = CommitText()
    for commit in reversed(commits):
        body, plans = _lift_test_plans(commit.body)
        out.test_plan += plans
        text, trailers = split_trailers(body)
        for key, value in trailers:  # "Solution: …" or "Test Plan: …" as the last paragraph
            _file_section(out, f"{key}: {value}")
        kept = []
        for line in text.splitlines():
            ref = _REFERENCE_LINE.match(line)
            if ref is None:
                kept.append(line)
                continue
            numbers = {int(n) for n in re.findall(r"(?:#|/issues/|/pull/)(\d+)", line)}
            if not (ref.group("closing") and numbers == {issue}):
                reference = " ".join(line.split())
                if reference not in out.references:
                    out.references.append(reference)
        for paragraph in re.split(r"\n\s*\n", "\n".join(kept)):
            para = paragraph.strip()
            if _file_section(out, para):
                continue
            para, had_list = _without_lists(para)
            if had_list and commit.sha[:7] not in out.bullet_lists:
                out.bullet_lists.append(commit.sha[:7])
            if para:
                out.summary.append(para)
    return out


_PLAN_LABEL_ALONE = re.compile(r"^\s*(?:test[ _-]?plan|testing)\s*:\s*$", re.IGNORECASE)


def _lift_test_plans(body: str) -> tuple[str, list[str]]:
    """``body`` without each ``Test Plan:`` line whose plan follows on the next lines (a code
    block, or lines up to a blank line or a trailer), and those plans. Left in, the label would
    read as an empty trailer and its plan as prose."""
    lines = body.splitlines()
    kept: list[str] = []
    plans: list[str] = []
    i = 0
    while i < len(lines):
        if not _PLAN_LABEL_ALONE.match(lines[i]):
            kept.append(lines[i])
            i += 1
            continue
        end = i + 1
        if end < len(lines) and lines[end].lstrip().startswith("```"):
            end += 1
            while end < len(lines) and not lines[end].lstrip().startswith("```"):
                end += 1
            end = min(end + 1, len(lines))
        else:
            while end < len(lines) and lines[end].strip() and not TRAILER_LINE.match(lines[end]):
                end += 1
        plan = "\n".join(lines[i + 1 : end]).strip()
        if plan:
            plans.append(plan)
        else:
            kept.append(lines[i])
        i = end if plan else i + 1
    return "\n".join(kept), plans


def _file_section(out: CommitText, text: str) -> bool:
    """File ``Root cause: …``, ``Solution: …`` or ``Test Plan: …`` text (a paragraph or a
    trailer) under its section; False when ``text`` has no such label."""
    label = _SECTION_LABEL_RE.match(text)
    if label is None:
        return False
    key = label.group(1).lower()
    rest = text[label.end() :].strip()
    if key in _LABEL_KEYS:
        getattr(out, _LABEL_KEYS[key]).append(_sentence(rest))
    elif rest:
        out.test_plan.append(rest)
    return True


# -- the title ----------------------------------------------------------------------------------
# -- the body -----------------------------------------------------------------------------------
PLACEHOLDERS = {
    "issue": placeholder("the issue number this PR fixes"),
    "summary": placeholder(
        "describe the change in prose: what was wrong, why, and how this fixes it "
        "(no bullet list of the changes)"
    ),
    "tests": placeholder(
        "name the test that covers this change, e.g. python test/test_nn.py -k test_relu"
    ),
    "matrix": placeholder("run `contribkit run` and regenerate, for the device matrix"),
    "label": placeholder(
        'pick one label: "release notes: <area>", or "topic: not user facing"; '
        "see https://github.com/pytorch/pytorch/labels?q=release+notes"
    ),  # for --template bodies; contribkit's own prints LABEL_INSTRUCTION instead
    "ai": placeholder(
        "say what the AI tool did, and what you reviewed, tested and changed yourself"
    ),
}


LABEL_INSTRUCTION = (
    'pick one label, "release notes: <area>" or "topic: not user facing" '
    "(https://github.com/pytorch/pytorch/labels?q=release+notes), and comment on the PR: "
    '@pytorchbot label "<label>"'
)


def _test_entries(inputs: PrInputs) -> list[dict[str, Any]]:
    entries = []
    for path, lines in inputs.added.items():
        names = list(dict.fromkeys(m.group(1) for m in map(_TEST_DEF_RE.match, lines) if m))
        command = f"python {path}"
        if names and len(names) <= MAX_K_NAMES:
            command += "".join(f" -k {name}" for name in names)
        entries.append({"path": path, "names": names, "command": command})
    return entries


_COMMAND_RE = re.compile(
    r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:python3?|pytest|\./|bash\s|sh\s|ctest|lintrunner)"
)
_K_COMMAND_RE = re.compile(r"^(python3?|pytest)\s+(\S+)((?:\s+-k\s+\S+)*)\s*$")


def _plan_commands(note: str) -> list[str] | None:
    """The commands of a commit's test plan when it is only commands (bare, ``$ ``-prompted or
    in a code block), else None (prose, kept as written)."""
    lines = [line.strip().removeprefix("$ ") for line in note.splitlines()]
    commands = [line for line in lines if line and not line.startswith("```")]
    if commands and all(_COMMAND_RE.match(line) for line in commands):
        return [" ".join(line.split()) for line in commands]
    return None


def _covered(command: str, commands: Sequence[str]) -> bool:
    """Whether one of ``commands`` already runs ``command``: the same, or the same file with
    every one of its ``-k`` names (or no ``-k`` at all)."""
    mine = _K_COMMAND_RE.match(command)
    for other in commands:
        if other == command:
            return True
        theirs = _K_COMMAND_RE.match(other)
        if mine and theirs and mine.group(1, 2) == theirs.group(1, 2):
            names, their_names = set(mine.group(3).split()), set(theirs.group(3).split())
            if not their_names or (names and names <= their_names):
                return True
    return False


def split_test_plans(
    tests: Sequence[dict[str, Any]], notes: Sequence[str]
) -> tuple[list[str], list[str]]:
    """The commits' test plans, each said once: commands the test block does not already run
    (they join it), and the prose plans."""
    commands = [test["command"] for test in tests]
    extra: list[str] = []
    prose: list[str] = []
    for note in notes:
        found = _plan_commands(note)
        if found is None:
            if note not in prose:
                prose.append(note)
            continue
        extra += [c for c in found if not _covered(c, commands + extra)]
    return extra, prose


def _verdict(record: RunRecord, cell: Cell) -> str:
    detail = f" {cell.detail}" if cell.detail else ""
    return f"{cell.status}{detail} ({cell.device}, {record.short_head})"


def _repro_entries(inputs: PrInputs) -> list[dict[str, Any]]:
    """Each repro the record ran: its command, and its verdict before and after the fix."""
    record = inputs.record
    files: dict[str, list[Cell]] = {}
    for cell in record.cells if record else []:
        if cell.kind == "repro":
            files.setdefault(cell.file, []).append(cell)
    entries = []
    for path, cells in files.items():
        ran = [c for c in cells if c.status not in SKIPPED] or cells
        device = "cpu" if any(c.device == "cpu" for c in ran) else ran[0].device
        after = next((c for c in ran if c.device == device), ran[0])
        earlier = inputs.before.get(path)
        entries.append(
            {
                "path": path,
                "command": f"python {path} --device {device}",
                "before": _verdict(*earlier) if earlier else None,
                "after": _verdict(record, after) if record else None,
            }
        )
    return entries


def environment_lines(record: RunRecord) -> tuple[list[str], str]:
    """One line per interpreter (Python, torch, its git version), and the CUDA line."""
    lines = []
    for interp in record.interpreters:
        torch = f"torch {interp.torch_version}" if interp.torch_version else "no torch"
        git = f" (git {interp.git_version[:12]})" if interp.git_version else ""
        where = f" on {interp.host}" if interp.host else ""
        index = f"[{interp.index}] " if len(record.interpreters) > 1 else ""
        lines.append(f"{index}Python {interp.python_version or '?'}, {torch}{git}{where}")
    cuda = [c for c in record.cells if c.device == "cuda"]
    ran = [c for c in cuda if c.status not in SKIPPED]
    if not cuda:
        cuda_line = "CUDA: not run (the run's devices did not include cuda)"
    elif ran:
        names = sorted({n for i in record.interpreters if i.cuda_available for n in i.device_names})
        cuda_line = f"CUDA: ran on {', '.join(names) or 'a CUDA device'}"
    elif all(c.status == "NOT_AVAILABLE" for c in cuda):
        cuda_line = "CUDA: not run (no GPU available)"
    elif all(c.detail.startswith("n/a (") for c in cuda):  # "n/a (the repro is cpu-only)"
        cuda_line = f"CUDA: not run ({cuda[0].detail[len('n/a (') :].removesuffix(')')})"
    else:
        cuda_line = f"CUDA: skipped ({cuda[0].detail or 'no reason given'})"
    return lines, cuda_line


@dataclass
class TemplateParts:
    """The fork template's lines, cut where contribkit's sections go: ``top`` (up to its
    ``Fixes #…`` line, filled in) comes first; ``rest`` after the test plan; when the AI text
    goes under the template's own AI heading, ``rest`` ends with that heading and ``after_ai``
    follows the text. Each is the template's lines as written, blank lines at its ends aside."""

    top: str = ""
    rest: str = ""
    after_ai: str = ""
    ai_inline: bool = False

    def slots(self) -> dict[str, str]:
        """The stand-in for each non-empty part (what the body template renders)."""
        return {
            name: _TEMPLATE_SLOT.format(name) if getattr(self, name) else ""
            for name in ("top", "rest", "after_ai")
        }

    def fill(self, body: str) -> str:
        """``body`` with each stand-in replaced by the template's lines."""
        for name, slot in self.slots().items():
            if slot:
                body = body.replace(slot, getattr(self, name))
        return body


def _block(lines: Sequence[str]) -> str:
    """``lines`` as written, without the blank lines at either end."""
    kept = list(lines)
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept)


def filled_fixes_line(line: str, number: int | None) -> str:
    """The template's ``Fixes #ISSUE_NUMBER`` line with the issue's number; without one it
    stays ``#ISSUE_NUMBER``, visible, which ``pr --check`` flags."""
    value = f"#{number}" if number else "#ISSUE_NUMBER"
    return re.sub(r"#(?:<[^>\n]*>|\w*)", lambda _: value, line, count=1)


def template_parts(template: PrTemplate, number: int | None, *, ai: bool) -> TemplateParts:
    """Cut ``template`` where contribkit's sections go (see :class:`TemplateParts`)."""
    lines = template.lines
    start = 0
    parts = TemplateParts()
    if template.fixes_index is not None:
        start = template.fixes_index + 1
        filled = filled_fixes_line(lines[template.fixes_index], number)
        parts.top = _block([*lines[: template.fixes_index], filled])
    if ai and template.ai_index is not None and template.ai_index >= start:
        parts.rest = _block(lines[start : template.ai_index + 1])
        parts.after_ai = _block(lines[template.ai_index + 1 :])
        parts.ai_inline = True
    else:
        parts.rest = _block(lines[start:])
    return parts


def pr_template(inputs: PrInputs) -> PrTemplate:
    """The fork's PR template, else PyTorch's own."""
    return inputs.template or parse_pr_template(None, PYTORCH_TEMPLATE)


def body_context(
    inputs: PrInputs, title: str, ai_text: str | None, text: CommitText
) -> tuple[dict[str, Any], TemplateParts]:
    """The variables a PR body template gets (documented in the README, ``--template``), and
    the template's lines that replace the stand-ins of ``template`` after rendering."""
    facts = inputs.facts
    issue = inputs.issue
    template = pr_template(inputs)
    number = issue.number if issue else None
    evidence = ai_trailers(facts.commits)
    parts = template_parts(template, number, ai=bool(ai_text or evidence))
    ai = None
    if ai_text or evidence:
        ai = {
            "heading": template.ai_heading or AI_HEADING,
            "text": ai_text,
            "evidence": evidence,
        }
    record = inputs.record
    environment, cuda = environment_lines(record) if record else ([], None)
    label = inputs.labels
    closing = template.closing_word
    tests = _test_entries(inputs)
    plan_commands, plan_notes = split_test_plans(tests, text.test_plan)
    context = {
        "title": title,
        "fixes_line": f"{closing} #{number}" if number else f"{closing} #{PLACEHOLDERS['issue']}",
        "references": text.references,
        "issue": asdict(issue) if issue else None,
        "summary": "\n\n".join(text.summary) or None,
        "root_cause": "\n\n".join(text.root_cause) or None,
        "solution": "\n\n".join(text.solution) or None,
        "tests": tests,
        "plan_commands": plan_commands,
        "commit_test_plans": plan_notes,
        "repros": _repro_entries(inputs),
        "record": (
            {"path": inputs.record_path, "head": record.head, "short_head": record.short_head}
            if record
            else None
        ),
        "matrix": markdown_matrix(record) if record else None,
        "environment": environment,
        "cuda_line": cuda,
        "performance": (
            {
                "table": markdown_table(inputs.bench),
                "command": inputs.bench.command,
                "device": inputs.bench.device,
                "baseline": inputs.bench.baseline,
                "environment": measured_on(inputs.bench) + list(inputs.bench.notes),
                "path": inputs.bench_path,
            }
            if inputs.bench
            else None
        ),
        "pr_template": {**parts.slots(), "ai_inline": parts.ai_inline},
        "checklist": template.checklist,
        "template_path": template.path,
        "ai": ai,
        "label": (
            {"name": label.label, "reason": label.reason, "bot_command": label.bot_command}
            if label.label
            else None
        ),
        "label_reason": label.reason,
        "cc_line": issue.cc if issue else None,
        "ph": PLACEHOLDERS,
    }
    return context, parts


def tidy(text: str) -> str:
    """No trailing spaces, at most one blank line in a row (outside code), one final newline."""
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    fenced = False
    for line in lines:
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not line and out and not out[-1] and not fenced:
            continue
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"


@dataclass
class TitleRules:
    """The title settings of the commit-msg hook (``[hooks]``), which PR titles follow too."""

    style: str = "pytorch"
    max_length: int = 100  # the title as it lands, with the " (#N)" the merge appends
    conventional_types: Sequence[str] = ()
    allow_wip: bool = False

    @classmethod
    def from_settings(cls, settings: Settings, style: str | None = None) -> TitleRules:
        """``style`` (a --title-style) or hooks.title_style; its "none" checks no style, and
        titles are then written in the pytorch style."""
        return cls(
            style=style or settings.text("hooks.title_style"),
            max_length=settings.integer("hooks.title_max_length"),
            conventional_types=settings.names("hooks.conventional_types"),
            allow_wip=settings.flag("hooks.allow_wip"),
        )


def check_context(
    root: Path | None,
    facts: BranchFacts | None,
    rules: TitleRules,
    *,
    title: str | None,
    ai_text: str | None = None,
) -> CheckContext:
    """What ``pr --check`` and the submit gate check a body against: the branch's issue, the
    AI trailers of its commits, whether a bench record exists for HEAD, and the title rules."""
    evidence = (["--ai-assisted was given"] if ai_text else []) + (
        ai_trailers(facts.commits) if facts else []
    )
    has_bench = False
    if root is not None and facts is not None:
        has_bench = bench_for_head(root, facts.state.head)[0] is not None
    return CheckContext(
        issue_number=facts.issue_number if facts else None,
        ai_evidence=evidence,
        has_bench=has_bench,
        title=title,
        title_style=rules.style,
        title_max_length=rules.max_length,
        conventional_types=rules.conventional_types,
        allow_wip=rules.allow_wip,
    )


GHSTACK_INSTRUCTION = (
    "put this body in the commit message (git commit --amend), then run `ghstack`: it opens the "
    "stack's PRs itself, so `contribkit submit` does not"
)


def ghstack_instructions(facts: BranchFacts) -> list[str]:
    branch = facts.state.branch
    return [f"{branch} is {GHSTACK_NOTE}: {GHSTACK_INSTRUCTION}"] if is_ghstack(branch) else []


def draft(
    inputs: PrInputs,
    rules: TitleRules,
    *,
    ai_text: str | None = None,
    template_file: Path | None = None,
    title: str | None = None,
) -> PrDraft:
    """The title, the rendered body, the label and the placeholders left. Pure apart from
    reading ``template_file``."""
    from contribkit.core.redact import redact
    from contribkit.core.render import render, render_file

    facts = inputs.facts
    warnings = list(inputs.warnings)
    if title is None:
        made = make_title(
            facts.commits,
            issue=inputs.issue,
            areas=inputs.labels.areas,
            style=rules.style,
            limit=rules.max_length - len(LANDED_SUFFIX),
            branch=facts.state.branch,
            types=rules.conventional_types,
            tests_only=inputs.tests_only,
        )
        title = made.text
        if made.cut_from:
            warnings.append(
                f"the title was cut to {rules.max_length - len(LANDED_SUFFIX)} characters "
                f"({rules.max_length} as it lands with ' (#N)', hooks.title_max_length) "
                f'from "{made.cut_from}"; write a shorter one with --title'
            )
    problems = check_title(
        CheckContext(
            title=title,
            title_style=rules.style,
            title_max_length=rules.max_length,
            conventional_types=rules.conventional_types,
            allow_wip=rules.allow_wip,
        )
    )
    text = commit_text(facts.commits, inputs.issue.number if inputs.issue else None)
    if text.bullet_lists:
        many = len(text.bullet_lists) > 1
        warnings.append(
            f"the bullet list{'s' if many else ''} in commit{'s' if many else ''} "
            f"{', '.join(text.bullet_lists)} {'were' if many else 'was'} left out of the summary: "
            "PyTorch asks for prose, so say what changed and why in sentences"
        )
    context, parts = body_context(inputs, title, ai_text, text)
    if template_file is not None:
        body = render_file(template_file, **context)
    else:
        body = render(TEMPLATE, **context)
    # the template's lines as written, untouched by tidy; run records and commit text may
    # quote what a leg printed: no known secret is left in it
    body = redact(parts.fill(tidy(body)))
    label = inputs.labels
    return PrDraft(
        title=title,
        body=body,
        labels=[label.label] if label.label else [],
        label_reason=label.reason,
        bot_command=label.bot_command,
        comments=[label.bot_command] if label.bot_command else [],
        instructions=([] if label.bot_command else [LABEL_INSTRUCTION])
        + ghstack_instructions(facts),
        placeholders=[what for _, what in placeholders_in(body)],
        title_problems=[f"{v.message}; {v.fix}" for v in problems],
        warnings=warnings,
        issue=inputs.issue,
        record_path=inputs.record_path,
        bench_path=inputs.bench_path,
    )
