"""How a commit message or a PR body says which issue it closes: GitHub's closing keywords.

Stdlib only: the hooks, ``git.facts`` (a commit's linked issue) and ``pr`` (the body's rules and
its writer) all read the same two definitions from here.
"""

from __future__ import annotations

import re

# GitHub's closing keywords (fix, fixes, fixed, close, …).
CLOSING_WORDS = r"fix(?:e[sd])?|close[sd]?|resolve[sd]?"
# "Fixes #123", "closes owner/repo#123", "Resolves https://github.com/owner/repo/issues/123".
FIXES_RE = re.compile(
    rf"\b(?:{CLOSING_WORDS})\b:?\s+"
    r"(?:[\w.-]+/[\w.-]+#|https?://\S+?/issues/|#)(\d+)\b",
    re.IGNORECASE,
)
