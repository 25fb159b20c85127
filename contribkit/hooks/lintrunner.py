"""contribkit-lintrunner: run lintrunner on the staged files (pre-commit; optional).

Does nothing unless the repository has a .lintrunner.toml (PyTorch does). Fails with a fix when
lintrunner is not installed or `lintrunner init` was never run (or .lintrunner.toml changed since),
the most common reason why local lint differs from CI. Otherwise runs `lintrunner FILES…` and
fails when it reports problems. `contribkit init --lintrunner` enables this hook.

Example: contribkit-lintrunner torch/nn/functional.py
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

from contribkit.conventions.report import Findings
from contribkit.conventions.rules import RULES, Violation
from contribkit.hooks._common import HookContext, HookSpec, run_hook

HOOK_ID = "contribkit-lintrunner"


def check(args: SimpleNamespace, ctx: HookContext) -> Findings:
    import shutil
    from pathlib import Path

    from contribkit.core.proc import run_child, scrubbed_env
    from contribkit.setup import lintrunner

    root = Path(ctx.require_root())
    if not (root / lintrunner.CONFIG_NAME).is_file() or not args.files:
        return Findings()
    exe = shutil.which("lintrunner")
    if exe is None:
        return Findings(
            [
                Violation(
                    RULES["CK801"],
                    "the repository has .lintrunner.toml, but lintrunner is not installed",
                )
            ],
            recovery="install it, then commit again",
        )
    state = lintrunner.initialised(root)
    if state is not True:
        why = (
            "`lintrunner init` was never run"
            if state is None
            else ".lintrunner.toml changed since `lintrunner init`"
        )
        return Findings(
            [Violation(RULES["CK802"], f"{why}: linters would be missing or stale")],
            recovery="lintrunner init, then commit again",
        )
    env = scrubbed_env(extra_patterns=ctx.settings.names("scrub_env"))
    result = run_child([exe, *args.files], env=env, cwd=root)
    if result.returncode == 0:
        return Findings()
    if "lintrunner init" in result.output:
        rule, message = RULES["CK802"], "lintrunner asks for `lintrunner init`"
    else:
        rule, message = RULES["CK803"], f"lintrunner reported problems (exit {result.returncode})"
    return Findings(
        [Violation(rule, message)],
        recovery="fix what it reports (lintrunner -a applies the automatic fixes), git add, commit",
        output=result.output,
    )


SPEC = HookSpec(HOOK_ID, __doc__, "CK8", files="many", files_help="staged files to lint")


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(SPEC, check, argv)


if __name__ == "__main__":
    raise SystemExit(main())
