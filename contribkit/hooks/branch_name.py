"""contribkit-branch-name: the branch follows the naming pattern, and is not main (pre-commit, pre-push).

The default pattern is (fix|feat|docs|test|perf|refactor|ci)/…, and an issue number in the name
is encouraged (fix/12345-relu-grad): the commit-msg hook then checks that messages reference it.
Commits directly on main, master or viable/strict are refused: in a fork they only diverge from
upstream (pushing them, to keep a fork in sync, is fine). A detached HEAD (rebase, bisect) is
not checked.

Example: contribkit-branch-name --branch fix/12345-relu-grad
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from types import SimpleNamespace

from contribkit.conventions.rules import RULES, Violation
from contribkit.core.errors import BadInput
from contribkit.hooks._common import (
    Findings,
    HookContext,
    HookSpec,
    Option,
    issue_from_branch,
    run_hook,
)

HOOK_ID = "contribkit-branch-name"


def check_branch(
    branch: str, pattern: str, protected: Sequence[str], pushing: bool = False
) -> list[Violation]:
    """Violations for a branch name; pure.

    Pushing a protected branch is fine (that is how a fork's main is kept in sync); committing
    on one is not.
    """
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


def check(args: SimpleNamespace, ctx: HookContext) -> Findings:
    # pre-commit names the pushed branch in pre-push hooks (it need not be the checked-out one)
    local_ref = os.environ.get("PRE_COMMIT_LOCAL_BRANCH", "")
    pushed = local_ref.removeprefix("refs/heads/") if local_ref.startswith("refs/heads/") else ""
    if local_ref and not pushed:
        return Findings()  # pushing a detached HEAD or a tag: no branch to name
    branch = args.branch or pushed or ctx.branch
    if not branch:
        return Findings()  # detached HEAD: a rebase or bisect in progress
    violations = check_branch(
        branch,
        ctx.get_str("branch_pattern"),
        ctx.get_list("protected_branches"),
        pushing=bool(pushed) and not args.branch,
    )
    suggestion = "fix/<issue>-<what>"
    return Findings(
        violations,
        recovery=f"git switch -c {suggestion}  (or rename: git branch -m {suggestion})",
    )


SPEC = HookSpec(
    HOOK_ID,
    __doc__,
    "CK2",
    [
        Option(
            "--branch",
            "the branch to check (default: the one being pushed, else the checked-out one)",
            metavar="NAME",
        )
    ],
)


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(SPEC, check, argv)


if __name__ == "__main__":
    raise SystemExit(main())
