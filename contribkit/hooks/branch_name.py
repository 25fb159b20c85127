"""contribkit-branch-name: the branch follows the naming pattern, and is not main (pre-commit, pre-push).

The default pattern is (fix|feat|docs|test|perf|refactor|ci)/…, and an issue number in the name
is encouraged (fix/12345-relu-grad): the commit-msg hook then checks that messages reference it.
Commits directly on main, master or viable/strict are warned about: in a fork they only diverge
from upstream (pushing them, to keep a fork in sync, is fine). A detached HEAD (rebase, bisect) is
not checked. All of this is advice (warnings) unless hooks.strict = true. What blocks is a push
that carries a WIP, fixup!, squash! or amend! commit (CK204): fine while you work, not in a PR.

Example: contribkit-branch-name --branch fix/12345-relu-grad
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from types import SimpleNamespace

from contribkit.conventions.branches import GHSTACK_NOTE, check_branch, is_ghstack
from contribkit.conventions.commitmsg import unfinished_commits
from contribkit.conventions.report import Findings
from contribkit.git import cmd as gitcmd
from contribkit.hooks._common import (
    RANGE_OPTIONS,
    HookContext,
    HookSpec,
    Option,
    push_range,
    run_hook,
)

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
    if is_ghstack(branch):
        print(f"{HOOK_ID}: {branch} is {GHSTACK_NOTE}; its name is not checked", file=sys.stderr)
    protected = ctx.get_list("protected_branches")
    violations = check_branch(
        branch,
        ctx.get_str("branch_pattern"),
        protected,
        pushing=bool(pushed) and not args.branch,
    )
    if ctx.enabled("CK204") and branch not in protected:
        unfinished = unfinished_commits(pushed_subjects(args, ctx, pushing=bool(pushed)))
        if unfinished:
            return Findings(
                violations + unfinished,
                recovery="git rebase -i --autosquash <base>, then push again",
            )
    suggestion = "fix/<issue>-<what>"
    return Findings(
        violations,
        recovery=f"git switch -c {suggestion}  (or rename: git branch -m {suggestion})",
    )


def pushed_subjects(
    args: SimpleNamespace, ctx: HookContext, pushing: bool
) -> list[tuple[str, str]]:
    """``(short sha, subject)`` of the commits being pushed: pre-commit's pre-push range, or
    --from-ref/--to-ref, or (a new branch pushed to an empty fork, for which pre-commit names no
    range) the merge-base with the upstream base branch; none at commit time."""
    if ctx.root is None:
        return []
    if not (pushing or args.from_ref or os.environ.get("PRE_COMMIT_FROM_REF")):
        return []
    found = push_range(args, ctx)
    if found is None:
        return []
    from_ref, to_ref = found
    out = gitcmd.git(
        "log", "--no-merges", "--format=%h %s", f"{from_ref}..{to_ref}", cwd=ctx.root, check=False
    )
    return [
        (sha, subject) for sha, _, subject in (line.partition(" ") for line in out.splitlines())
    ]


SPEC = HookSpec(
    HOOK_ID,
    __doc__,
    "CK2",
    [
        Option(
            "--branch",
            "the branch to check (default: the one being pushed, else the checked-out one)",
            metavar="NAME",
        ),
        *RANGE_OPTIONS,
    ],
)


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(SPEC, check, argv)


if __name__ == "__main__":
    raise SystemExit(main())
