"""contribkit-no-scratch-files: no debugging scratch, oversized or conflicted files in a commit (pre-commit).

Refuses repros/ (the repros_dir setting), .contribkit/, .contribkit.toml, debug_issue.sh,
torch_compile_debug/, tl_out/, minifier_launcher.py, *.log files, any path matching
hooks.scratch_patterns, files larger than hooks.max_file_kb, and files that still hold a merge
conflict marker (a line starting "<<<<<<< " or ">>>>>>> "). `contribkit init` also puts the
scratch paths in .git/info/exclude, so `git add -A` skips them; this hook catches `git add -f`.

Example: contribkit-no-scratch-files repros/issue-123/repro.py
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import SimpleNamespace

from contribkit.conventions.globs import ignore_regex
from contribkit.conventions.report import Findings
from contribkit.conventions.rules import RULES, Violation
from contribkit.git.cmd import SCRATCH_EXCLUDES
from contribkit.hooks._common import HookContext, HookSpec, run_hook

HOOK_ID = "contribkit-no-scratch-files"
DEBUG_LOGS = ("*.log",)


def scratch_patterns(repros_dir: str, extra: Sequence[str]) -> list[str]:
    repros = "/" + repros_dir.strip("/") + "/"
    return list(dict.fromkeys((*SCRATCH_EXCLUDES, repros, *DEBUG_LOGS, *extra)))


def check_paths(paths: Sequence[str], patterns: Sequence[str], max_kb: int) -> list[Violation]:
    """Violations for staged paths (repo-relative); reads only their sizes."""
    compiled = [(pattern, ignore_regex(pattern)) for pattern in patterns]
    found = []
    for path in paths:
        normal = path.replace(os.sep, "/").removeprefix("./")
        pattern = next((p for p, regex in compiled if regex.search(normal)), None)
        if pattern:
            found.append(
                Violation(
                    RULES["CK401"],
                    f"scratch output (matches {pattern})",
                    path=path,
                    hint=f"unstage it: git restore --staged {path}",
                )
            )
            continue
        try:
            size = os.stat(path).st_size
        except OSError:
            continue
        if size > max_kb * 1024:
            found.append(
                Violation(
                    RULES["CK402"],
                    f"file is {size // 1024} KiB, limit {max_kb} KiB",
                    path=path,
                )
            )
    return found


_MARKERS = (b"<<<<<<< ", b">>>>>>> ")


def conflict_marker_line(data: bytes) -> int | None:
    """The 1-based line of the first merge conflict marker in ``data``; None in a binary file.

    Only the ``<<<<<<< ``/``>>>>>>> `` lines count: a bare ``=======`` underlines headings."""
    if b"\0" in data[:8000]:
        return None
    for marker in _MARKERS:
        if data.startswith(marker):
            return 1
        at = data.find(b"\n" + marker)
        if at != -1:
            return data.count(b"\n", 0, at) + 2
    return None


def check_conflicts(paths: Sequence[str], max_kb: int) -> list[Violation]:
    """CK403 for each file (up to ``max_kb``) that still holds a conflict marker."""
    found = []
    for path in paths:
        try:
            if os.stat(path).st_size > max_kb * 1024:
                continue
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        line = conflict_marker_line(data)
        if line is not None:
            found.append(
                Violation(RULES["CK403"], "merge conflict marker left", line=line, path=path)
            )
    return found


def check(args: SimpleNamespace, ctx: HookContext) -> Findings:
    patterns = scratch_patterns(
        str(ctx.settings.text("repros_dir")), ctx.get_list("scratch_patterns")
    )
    max_kb = ctx.get_int("max_file_kb")
    violations = check_paths(args.files, patterns, max_kb)
    if ctx.enabled("CK403"):
        flagged = {v.path for v in violations}
        violations += check_conflicts([p for p in args.files if p not in flagged], max_kb)
    return Findings(
        violations, recovery="git restore --staged <path> or fix the file, then commit again"
    )


SPEC = HookSpec(HOOK_ID, __doc__, "CK4", files="many", files_help="staged files to check")


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(SPEC, check, argv)


if __name__ == "__main__":
    raise SystemExit(main())
