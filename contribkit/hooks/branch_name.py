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
from collections.abc import Sequence
from types import SimpleNamespace

from contribkit.conventions.branches import check_branch
from contribkit.conventions.report import Findings
from contribkit.hooks._common import HookContext, HookSpec, Option, run_hook

HOOK_ID = "contribkit-branch-name"


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
