"""Branch names and the issue each is for: one table for every place that reads it.

``conventions.branches.issue_from_branch`` is the one parser; the tests run this table through each of
its call sites (the commit-msg hook, ``gitfacts.branch_facts`` for ``pr``), so they cannot drift.
"""

from __future__ import annotations

BRANCH_ISSUES: tuple[tuple[str, int | None], ...] = (
    # the word issue/issues/gh at the start of a name part, then the number
    ("fix/issue-170398-kernel-name", 170398),
    ("issue170398", 170398),
    ("issue_170398_relu", 170398),
    ("Fix-Issue-77", 77),
    ("user/issue_5", 5),
    ("fix/issues-5", 5),
    ("fix/issue#5-x", 5),
    ("me/gh-4242-docs", 4242),
    ("feat/relu-issue12345", 12345),
    # a path segment that starts with a number of two or more digits
    ("170398-kernel-name", 170398),
    ("fix/170398", 170398),
    ("fix/12345_relu", 12345),
    ("docs/12/typo", 12),
    # no issue
    ("main", None),
    ("release/2.1", None),
    ("fix/2.1-regression", None),
    ("fix/tissue-5", None),
    ("fix/python-312-support", None),
    ("fix-cuda12-build", None),
    ("fix/3-way-merge", None),
    ("fix/relu-12345", None),
    ("fix/gh-actions", None),
    # ghstack's branches: the number counts the stack, it is no issue
    ("gh/alice/12/head", None),
    ("gh/alice/12/base", None),
    ("gh/alice/3/orig", None),
)
