"""Whether an issue reports a bug at all: feature requests, RFCs and docs issues get no repro."""

from __future__ import annotations

import re

from contribkit.issue.model import Issue

_FEATURE_LABELS = re.compile(r"^(?:feature|enhancement|feature request|rfc|module: rfc)$", re.I)
_DOCS_LABELS = re.compile(r"^(?:module: docs|docs|documentation)$", re.I)
_FEATURE_TITLE = re.compile(
    r"^\s*(?:\[\s*(?:feature(?:\s+request)?|rfc|proposal|enhancement)\s*\]|rfc\s*[:#-]"
    r"|feature\s+request\s*:)|\bfeature\s+request\b",
    re.I,
)
_DOCS_TITLE = re.compile(r"^\s*\[\s*(?:docs?|documentation)\s*\]", re.I)
# The headings of PyTorch's issue templates.
_FEATURE_HEADING = re.compile(r"^#+\s*\W*\s*the feature, motivation and pitch", re.I | re.M)
_DOCS_HEADING = re.compile(r"^#+\s*\W*\s*the doc(?:s|umentation)? issue", re.I | re.M)


def issue_nature(issue: Issue, body: str) -> tuple[str, str]:
    """("bug" | "feature" | "docs", why): what the issue asks for, from its labels, title and
    template headings (in ``body``, the body as the parser read it: cut at MAX_SOURCE_CHARS).
    Anything not clearly a feature request or docs issue is a bug."""
    labels = [label for label in issue.labels if isinstance(label, str)]
    title = issue.title if isinstance(issue.title, str) else ""
    for label in labels:
        if _FEATURE_LABELS.match(label.strip()):
            return "feature", f"it is labelled {label!r}"
    if _FEATURE_TITLE.search(title):
        return "feature", "its title asks for a feature"
    if _FEATURE_HEADING.search(body):
        return "feature", "it uses the feature-request template"
    for label in labels:
        if _DOCS_LABELS.match(label.strip()):
            return "docs", f"it is labelled {label!r}"
    if _DOCS_TITLE.search(title):
        return "docs", "its title marks it as a docs issue"
    if _DOCS_HEADING.search(body):
        return "docs", "it uses the docs-issue template"
    return "bug", ""
