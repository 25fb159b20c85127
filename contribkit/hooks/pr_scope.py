"""contribkit-pr-scope: warn when the pushed range is broad or large (pre-push; never fails).

Warns when the range touches more than hooks.max_areas top-level folders, or changes more than
hooks.max_changed_lines lines (added + deleted). Small, focused PRs are reviewed and landed
faster. The range is found as for contribkit-tests-required.

Example: contribkit-pr-scope --from-ref upstream/main
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

from contribkit.conventions.report import Findings
from contribkit.conventions.rules import RULES, Violation
from contribkit.git import cmd as gitcmd
from contribkit.hooks._common import (
    RANGE_OPTIONS,
    HookContext,
    HookSpec,
    push_range,
    run_hook,
)

HOOK_ID = "contribkit-pr-scope"


def areas_of(files: Sequence[str]) -> list[str]:
    """Top-level folders the files are in; files at the top count as "(root)"."""
    return sorted({f.split("/", 1)[0] if "/" in f else "(root)" for f in files})


def check_scope(
    rows: Sequence[tuple[str, int | None, int | None]], max_areas: int, max_changed_lines: int
) -> list[Violation]:
    """Warnings for ``(path, added, deleted)`` rows (:func:`contribkit.git.cmd.numstat`); pure."""
    files = [path for path, _, _ in rows]
    changed = sum((added or 0) + (deleted or 0) for _, added, deleted in rows)  # None: binary
    found = []
    areas = areas_of(files)
    if len(areas) > max_areas:
        found.append(
            Violation(
                RULES["CK701"],
                f"touches {len(areas)} areas ({', '.join(areas)}), more than {max_areas}",
            )
        )
    if changed > max_changed_lines:
        found.append(
            Violation(
                RULES["CK702"],
                f"changes {changed} lines in {len(files)} files, more than {max_changed_lines}",
            )
        )
    return found


def check(args: SimpleNamespace, ctx: HookContext) -> Findings:
    root = ctx.require_root()
    pushed = push_range(args, ctx)
    if pushed is None:
        return Findings()
    rows = gitcmd.numstat(root, *pushed)
    return Findings(check_scope(rows, ctx.get_int("max_areas"), ctx.get_int("max_changed_lines")))


SPEC = HookSpec(HOOK_ID, __doc__, "CK7", RANGE_OPTIONS)


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(SPEC, check, argv)


if __name__ == "__main__":
    raise SystemExit(main())
