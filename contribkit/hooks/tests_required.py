"""contribkit-tests-required: a pushed change to library source comes with a test (pre-push).

When the branch changes files under hooks.source_globs (torch/, aten/, c10/) and nothing under
hooks.test_globs (test/), the push is refused. A "Test Plan:" (or "Test-Plan:") line in a
commit message of the range is an accepted justification, e.g. "Test Plan: covered by
test_nn.py::TestNN::test_relu, no behaviour change". The range is the whole branch:
--from-ref if given, else the merge-base of the pushed commit (PRE_COMMIT_TO_REF, --to-ref, HEAD)
with the base branch (upstream's, else the local one, else origin's), else pre-commit's pushed
range.

Example: contribkit-tests-required --from-ref upstream/main
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from types import SimpleNamespace

from contribkit.conventions.globs import fnmatch_matcher
from contribkit.conventions.report import Findings
from contribkit.conventions.rules import RULES, Violation
from contribkit.git import cmd as gitcmd
from contribkit.hooks._common import (
    RANGE_OPTIONS,
    HookContext,
    HookSpec,
    branch_range,
    changed_files,
    push_range,
    run_hook,
)

HOOK_ID = "contribkit-tests-required"
TEST_PLAN = re.compile(r"^\s*Test[- ]Plan:", re.I | re.M)


def has_test_plan(messages: str) -> bool:
    return bool(TEST_PLAN.search(messages))


def check_change(
    files: Sequence[str],
    source_globs: Sequence[str],
    test_globs: Sequence[str],
    messages: str,
) -> list[Violation]:
    """A CK601 violation when source changed without tests or a Test Plan; pure."""
    is_test, is_source = fnmatch_matcher(test_globs), fnmatch_matcher(source_globs)
    tests = [f for f in files if is_test(f)]
    source = [f for f in files if is_source(f) and not is_test(f)]
    if not source or tests or has_test_plan(messages):
        return []
    shown = ", ".join(source[:3]) + (f" and {len(source) - 3} more" if len(source) > 3 else "")
    return [
        Violation(
            RULES["CK601"],
            f"{len(source)} source file(s) changed ({shown}) but no test under "
            f"{', '.join(test_globs)}",
        )
    ]


def check(args: SimpleNamespace, ctx: HookContext) -> Findings:
    root = ctx.require_root()
    # The whole branch, not only this push: a fix pushed after its tests still has its tests.
    # An explicit --from-ref wins; pre-commit's pushed range is the last resort.
    to_ref = str(args.to_ref or os.environ.get("PRE_COMMIT_TO_REF") or "HEAD")
    pushed = None if args.from_ref else branch_range(ctx, to_ref)
    pushed = pushed or push_range(args, ctx)
    if pushed is None:
        print(f"{HOOK_ID}: no upstream base to compare with; skipped", file=sys.stderr)
        return Findings()
    from_ref, to_ref = pushed
    files = changed_files(root, from_ref, to_ref)
    messages = gitcmd.git("log", "--format=%B", f"{from_ref}..{to_ref}", cwd=root)
    violations = check_change(
        files, ctx.get_list("source_globs"), ctx.get_list("test_globs"), messages
    )
    return Findings(
        violations,
        recovery="commit a test, or add a 'Test Plan:' line (git commit --amend), then push again",
    )


SPEC = HookSpec(HOOK_ID, __doc__, "CK6", RANGE_OPTIONS)


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(SPEC, check, argv)


if __name__ == "__main__":
    raise SystemExit(main())
