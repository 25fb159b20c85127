"""Branch names: the issue a branch is for, and the naming rules the branch-name hook enforces.

Standard library only (and light contribkit modules): the hooks import this on every commit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from contribkit.conventions.rules import RULES, Violation
from contribkit.core.errors import BadInput

# The issue a branch is for (README, "Which issue a branch is for"). The one parser of branch
# names: the hooks, `pr` and `submit` use it.
# 1. after the word issue/issues/gh at the start of a name part: issue-123, issue_123, issue123,
#    issue#123, gh-123, fix/relu-issue-123 (not "tissue-5");
_BRANCH_ISSUE_WORD = re.compile(r"(?:^|[/_.-])(?:issues?|gh)[-_#]?(\d+)(?![0-9A-Za-z])", re.I)
# 2. else a path segment that starts with a number of two or more digits, then "-", "_" or its
#    end: 123-relu, fix/123, fix/123_relu (not "fix/2.1-regression", "python-312", "3-way-merge").
_BRANCH_ISSUE_SEGMENT = re.compile(r"(?:^|/)(\d{2,})(?=[-_/]|$)")


# ghstack's branches: gh/<user>/<n>/head|base|orig (and next). ghstack names them and opens the
# PRs itself, one per commit, from the commit messages; the number is a stack index, not an issue.
GHSTACK_BRANCH = re.compile(r"^gh/[^/]+/\d+/(?:head|base|orig|next)$")
GHSTACK_NOTE = (
    "a ghstack branch: ghstack opens one PR per commit, with the commit message as its body"
)


def is_ghstack(branch: str | None) -> bool:
    return bool(branch) and GHSTACK_BRANCH.match(branch or "") is not None


def issue_from_branch(branch: str | None) -> int | None:
    """The issue number a branch name carries, e.g. 12345 for ``fix/12345-relu``, else None
    (always for a ghstack branch, whose number counts the stack)."""
    if not branch or is_ghstack(branch):
        return None
    m = _BRANCH_ISSUE_WORD.search(branch) or _BRANCH_ISSUE_SEGMENT.search(branch)
    return int(m.group(1)) if m else None


def check_branch(
    branch: str, pattern: str, protected: Sequence[str], pushing: bool = False
) -> list[Violation]:
    """Violations for a branch name against ``pattern`` (hooks.branch_pattern); pure.

    Pushing a protected branch is fine (that is how a fork's main is kept in sync); committing
    on one is not. ghstack's branches are named by ghstack: nothing to check.
    """
    if is_ghstack(branch):
        return []
    if branch in protected:
        if pushing:
            return []
        return [
            Violation(
                RULES["CK203"],
                f"'{branch}' is a protected branch: commit on a topic branch of your fork",
            )
        ]
    try:
        matcher = re.compile(pattern)
    except re.error as exc:
        raise BadInput(
            f"hooks.branch_pattern is not a valid regular expression: {exc}",
            hint="fix hooks.branch_pattern in .contribkit.toml",
        ) from exc
    found = []
    if not matcher.search(branch):
        found.append(
            Violation(
                RULES["CK201"],
                f"branch '{branch}' does not match {pattern}",
            )
        )
    if issue_from_branch(branch) is None:
        found.append(Violation(RULES["CK202"], f"branch '{branch}' carries no issue number"))
    return found
