"""What a PR body is made from, read from disk and GitHub: the first step of ``contribkit pr``.

:func:`gather` reads what is on disk and asks GitHub (through the issue cache) for what the body
needs: the branch's facts, the issue's title, labels and ``cc`` line, the latest run record for
HEAD (and an earlier one that reproduced the bug), a bench record, the fork's PR template and
labeler.yml. :func:`contribkit.pr.draft.draft` then turns those :class:`PrInputs` into the PR.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contribkit.bench.record import BenchRecord, bench_for_head
from contribkit.conventions.issuelinks import CLOSING_WORDS
from contribkit.core.errors import BadInput, ContribkitError
from contribkit.git.facts import BranchFacts
from contribkit.pr.labels import LabelSuggestion, suggest_labels
from contribkit.run.record import Cell, RunRecord, records_newest_first
from contribkit.run.runner import is_test_file_name, relpath

if TYPE_CHECKING:
    from contribkit.core.workspace import Workspace

PR_TEMPLATE_PATHS = (
    ".github/PULL_REQUEST_TEMPLATE.md",
    ".github/pull_request_template.md",
    "PULL_REQUEST_TEMPLATE.md",
    "pull_request_template.md",
    "docs/PULL_REQUEST_TEMPLATE.md",
    "docs/pull_request_template.md",
)
_CHECKLIST_RE = re.compile(r"^\s*(?:[-*+]\s+)?\[[ xX]\]\s+\S")  # PyTorch's: "[ ] …"
_TEMPLATE_FIXES_RE = re.compile(rf"^\s*({CLOSING_WORDS})\b", re.IGNORECASE)
_HEADING_RE = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_AI_HEADING_RE = re.compile(r"\bagent details\b|\bai\b", re.IGNORECASE)
_CC_RE = re.compile(r"^[ \t]*cc:?((?:[ \t,]+@[\w.-]+(?:/[\w.-]+)?)+)[ \t]*$", re.IGNORECASE | re.M)


# -- inputs -------------------------------------------------------------------------------------
@dataclass
class IssueFacts:
    number: int
    repo: str | None = None
    title: str | None = None
    url: str | None = None
    labels: list[str] = field(default_factory=list)
    cc: str | None = None  # "cc @a @b", as the issue ends
    source: str = "unknown"  # "github", "cache (offline)", "repros/issue-N/meta.json", …


# PyTorch's own .github/PULL_REQUEST_TEMPLATE.md (pytorch/pytorch@074a3a6), for forks without one.
PYTORCH_TEMPLATE = (
    "Fixes #ISSUE_NUMBER\n"
    "\n"
    "[ ] I am familiar with [CONTRIBUTING.md](CONTRIBUTING.md).\n"
    "[ ] I ran `lintrunner -a`, and fixed all errors relevant to this change.\n"
)


@dataclass
class PrTemplate:
    """The fork's PR template: its lines, which every body keeps as written, and what is read
    from them."""

    path: str | None  # None: PyTorch's own template (PYTORCH_TEMPLATE)
    lines: list[str] = field(default_factory=list)  # the template's lines, as written
    closing_word: str = "Fixes"  # as the template's "Fixes #ISSUE_NUMBER" line has it
    fixes_index: int | None = None  # which line is that "Fixes #ISSUE_NUMBER" line
    checklist: list[str] = field(default_factory=list)  # "[ ] …", "- [ ] …" lines, as written
    ai_heading: str | None = None  # the template's own AI section heading, if it has one
    ai_index: int | None = None  # which line is that heading


def parse_pr_template(path: str | None, text: str) -> PrTemplate:
    """A template's lines, its ``Fixes #…`` line, its checklist items and its AI heading."""
    template = PrTemplate(path, lines=text.splitlines())
    for index, line in enumerate(template.lines):
        fixes = _TEMPLATE_FIXES_RE.match(line)
        if fixes and "#" in line and template.fixes_index is None:
            template.closing_word = fixes.group(1)
            template.fixes_index = index
        elif _CHECKLIST_RE.match(line):
            template.checklist.append(line.rstrip())
        else:
            heading = _HEADING_RE.match(line)
            if heading and _AI_HEADING_RE.search(heading.group(1)) and template.ai_index is None:
                template.ai_heading, template.ai_index = heading.group(1), index
    return template


@dataclass
class PrInputs:
    """Everything :func:`~contribkit.pr.draft.draft` turns into a PR, read by :func:`gather`."""

    facts: BranchFacts
    issue: IssueFacts | None
    record: RunRecord | None  # the latest run record for HEAD (after the fix)
    record_path: str | None
    before: dict[str, tuple[RunRecord, Cell]]  # repro file -> an earlier REPRODUCED cell
    bench: BenchRecord | None
    bench_path: str | None
    template: PrTemplate | None
    labels: LabelSuggestion
    added: dict[str, list[str]]  # changed test file -> the lines it gained
    warnings: list[str] = field(default_factory=list)
    tests_only: set[str] = field(default_factory=set)  # SHAs of commits that change only tests


def read_pr_template(root: Path) -> tuple[PrTemplate | None, list[str]]:
    """The fork's PR template: the first of GitHub's locations, else the only file in a
    ``PULL_REQUEST_TEMPLATE/`` folder (with several, the first by name, with a warning)."""
    candidates = [root / p for p in PR_TEMPLATE_PATHS]
    warnings: list[str] = []
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        for folder in (".github", "", "docs"):
            many = sorted((root / folder / "PULL_REQUEST_TEMPLATE").glob("*.md"))
            if many:
                path = many[0]
                if len(many) > 1:
                    warnings.append(
                        f"{len(many)} PR templates in {relpath(path.parent, root)}; "
                        f"kept the lines of {path.name}"
                    )
                break
    if path is None:
        return None, warnings
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [*warnings, f"{relpath(path, root)}: unreadable ({exc}); ignored"]
    template = parse_pr_template(relpath(path, root), text)
    return template, warnings


def cc_line(text: str) -> str | None:
    """The last ``cc @a @b`` line of an issue body, normalised."""
    found = _CC_RE.findall(text)
    if not found:
        return None
    return "cc " + " ".join(re.findall(r"@[\w.-]+(?:/[\w.-]+)?", found[-1]))


def _issue_md_body(path: Path) -> str | None:
    """The issue body kept in a repro folder's issue.md (between '## Body' and the comments)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    _, found, body = text.partition("\n## Body\n")
    return body.split("\n## Comment by @", 1)[0] if found else None


def issue_facts(
    ws: Workspace, root: Path, number: int, *, offline: bool
) -> tuple[IssueFacts, list[str]]:
    """The issue's title, labels and cc line: from GitHub through the issue cache (offline: the
    cache only), else from the repro folder ``contribkit repro`` wrote. Never fails."""
    from contribkit.core.redact import registered
    from contribkit.core.workspace import repros_path
    from contribkit.github.auth import resolve_token
    from contribkit.github.sources import fetch_issue

    settings = ws.settings
    meta: dict[str, Any] = {}
    try:
        folder = repros_path(root, settings) / f"issue-{number}"
        loaded = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        meta = loaded if isinstance(loaded, dict) else {}
    except (OSError, ValueError, BadInput):  # BadInput: repros_dir is outside the repository
        pass
    configured = settings.optional_text("repo")
    repo = configured or meta.get("repo") or ws.repo()[0]
    facts = IssueFacts(number, repo=repo)
    warnings: list[str] = []
    try:
        github = settings.text("github_url")
        fetched = fetch_issue(
            settings,
            repo,
            number,
            registered(resolve_token(github, use_gh=not offline)),
            offline=offline,
        )
    except ContribkitError as exc:
        if not offline:
            warnings.append(f"issue #{number}: {exc.message}; the body uses what is on disk")
    else:
        item = fetched.issue
        warnings += fetched.warnings
        facts.title, facts.url, facts.labels = item.title or None, item.url, list(item.labels)
        facts.cc, facts.source = cc_line(item.body), fetched.origin
        return facts, warnings
    if meta:
        facts.title = meta.get("title") if isinstance(meta.get("title"), str) else None
        facts.url = meta.get("url") if isinstance(meta.get("url"), str) else None
        labels = meta.get("labels")
        facts.labels = [str(x) for x in labels] if isinstance(labels, list) else []
        body = _issue_md_body(folder / "issue.md")
        facts.cc = cc_line(body) if body else None
        facts.source = relpath(folder / "meta.json", root)
    else:
        warnings.append(
            f"issue #{number} is not cached and has no repro folder: its title and cc line are "
            f"unknown (run `contribkit repro {number}` once online)"
        )
    return facts, warnings


def _record_for_head(
    root: Path, head: str
) -> tuple[tuple[Path, RunRecord] | None, dict[str, tuple[RunRecord, Cell]]]:
    """The newest after-the-fix record for ``head``, and for each repro an earlier cell that
    REPRODUCED it (the "before" of the test plan)."""
    chosen: tuple[Path, RunRecord] | None = None
    before: dict[str, tuple[RunRecord, Cell]] = {}
    for path, record in records_newest_first(root):
        if chosen is None and record.head == head and record.expect == "not-reproduced":
            chosen = (path, record)
            continue
        for cell in record.cells:
            if cell.kind == "repro" and cell.status == "REPRODUCED" and cell.file not in before:
                before[cell.file] = (record, cell)
        if chosen is not None and {c.file for c in chosen[1].cells if c.kind == "repro"} <= set(
            before
        ):
            break  # every repro of the record has its "before": older records add nothing
    return chosen, before


def gather(
    ws: Workspace,
    facts: BranchFacts,
    *,
    issue: int | None = None,
    offline: bool = False,
) -> PrInputs:
    """Read everything the PR needs. ``issue`` overrides the branch's issue number."""
    root = ws.require_root()
    warnings: list[str] = []
    if facts.merge_base is None:
        warnings.append(
            f"no merge-base with {facts.base_ref} (nor with its local or origin branch): no "
            "commits or changed files to describe"
        )
    elif facts.merge_base.note:
        warnings.append(facts.merge_base.note)
    if facts.merge_base is not None and not facts.commits:
        warnings.append(f"no commits since {facts.merge_base.ref}: the body describes nothing yet")
    if facts.state.dirty:
        warnings.append("uncommitted changes are not described: commit them first")
    number = facts.issue_number
    if issue is not None:
        if number is not None and number != issue:
            warnings.append(f"--issue {issue} overrides #{number} (from the {facts.issue_origin})")
        number = issue
    found_issue = None
    if number is not None:
        found_issue, issue_warnings = issue_facts(ws, root, number, offline=offline)
        warnings += issue_warnings
    chosen, before = _record_for_head(root, facts.state.head)
    record = chosen[1] if chosen else None
    if record is None:
        warnings.append(
            f"no run record for HEAD ({facts.state.short_head}): run `contribkit run` for the "
            "device matrix"
        )
    elif record.dirty or record.diff_hash != facts.state.diff_hash:
        warnings.append(
            "the run record for HEAD was made on a different working tree (uncommitted "
            "changes): run `contribkit run` again"
        )
    bench, bench_warnings = bench_for_head(root, facts.state.head)
    warnings += bench_warnings
    template, template_warnings = read_pr_template(root)
    warnings += template_warnings
    weighed = [
        (f.path, (f.added or 0) + (f.deleted or 0)) for f in facts.changed_files if f.status != "D"
    ]
    labels = suggest_labels(weighed, root)
    tests = [f.path for f in facts.changed_files if f.status != "D" and _is_test(f.path)]
    added = {}
    tests_only: set[str] = set()
    if facts.merge_base is not None and facts.commits:
        from contribkit.git.facts import added_lines, files_of_commits

        if tests:
            added = added_lines(root, facts.merge_base.sha, tests)
        tests_only = {
            sha
            for sha, paths in files_of_commits(root, facts.merge_base.sha).items()
            if paths and all(is_test_path(path) for path in paths)
        }
    return PrInputs(
        facts=facts,
        issue=found_issue,
        record=record,
        record_path=relpath(chosen[0], root) if chosen else None,
        before=before,
        bench=bench[1] if bench else None,
        bench_path=relpath(bench[0], root) if bench else None,
        template=template,
        labels=labels,
        added={path: added.get(path, []) for path in tests},
        warnings=warnings,
        tests_only=tests_only,
    )


def _is_test(path: str) -> bool:
    return is_test_file_name(path.rsplit("/", 1)[-1])


def is_test_path(path: str) -> bool:
    """A test file, or anything under a top-level ``test/`` or ``tests/`` (helpers, expect
    files): what a tests-only commit changes."""
    return _is_test(path) or path.split("/", 1)[0] in ("test", "tests")
