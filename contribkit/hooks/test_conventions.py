"""contribkit-test-conventions: staged test files follow PyTorch's conventions (pre-commit).

Checks test/**/test_*.py for an "# Owner(s): [...]" line with well-formed labels, an
'if __name__ == "__main__": run_tests()' block, that a class whose tests take `device` is passed
to instantiate_device_type_tests, and that those tests do not hard-code "cuda". The rules live in
contribkit.conventions.testfiles and are shared with the test scaffold. A "# contribkit: allow" comment on the
reported line silences it.

Example: contribkit-test-conventions test/nn/test_relu.py
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

from contribkit.conventions.report import Findings
from contribkit.conventions.rules import Violation
from contribkit.conventions.testfiles import check_test_source
from contribkit.hooks._common import (
    HookContext,
    HookSpec,
    allowed_by_pragma,
    read_source,
    run_hook,
)

HOOK_ID = "contribkit-test-conventions"


def check_file(path: str, ctx: HookContext) -> list[Violation]:
    source = read_source(path)
    if source is None:
        return []
    lines = source.splitlines()
    return [
        v
        for v in check_test_source(source, path)
        if ctx.enabled(v.rule.id)
        and not (v.line and allowed_by_pragma(lines, v.line, v.line, v.rule.id))
    ]


def check(args: SimpleNamespace, ctx: HookContext) -> Findings:
    violations = [v for path in args.files for v in check_file(path, ctx)]
    return Findings(violations, recovery="fix the files, git add them, and commit again")


SPEC = HookSpec(HOOK_ID, __doc__, "CK5", files="many", files_help="test files to check")


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(SPEC, check, argv)


if __name__ == "__main__":
    raise SystemExit(main())
