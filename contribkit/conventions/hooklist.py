"""contribkit's pre-commit hooks: the one declaration of their ids and modules.

Each hook id maps to its module in ``contribkit/hooks/``, which has ``main(argv) -> int``. The
other places that list the hooks follow this map, and ``tests/test_hooks_manifest.py`` keeps them
in step: ``.pre-commit-hooks.yaml`` (published for pre-commit), the console scripts of the same
names in ``pyproject.toml``, the config and snippet that ``contribkit init`` writes or prints
(``hooks/pre-commit-config.yaml``, ``hooks/pre-commit-snippet.yaml``, filled in by
``contribkit.setup.hookinstall``), and the README's hook table and snippet. :data:`HOOK_RUNS`
says when each runs and on which files, for the native stage runner
(:mod:`contribkit.hooks.stage`), as the manifest says it for pre-commit.
"""

from __future__ import annotations

HOOK_MODULES: dict[str, str] = {
    "contribkit-commit-msg": "commit_msg",
    "contribkit-branch-name": "branch_name",
    "contribkit-no-debug-leftovers": "no_debug_leftovers",
    "contribkit-no-scratch-files": "no_scratch_files",
    "contribkit-test-conventions": "test_conventions",
    "contribkit-tests-required": "tests_required",
    "contribkit-pr-scope": "pr_scope",
    "contribkit-lintrunner": "lintrunner",
}


class HookRun:
    """When a hook runs and what it is given, with the keys and defaults of pre-commit's
    ``.pre-commit-hooks.yaml`` (``tests/test_hooks_manifest.py`` keeps the two in step).

    ``files`` and ``exclude`` are regexes searched in the repo-relative path; ``types`` are
    identify's tags, of which the stage runner knows ``file`` and ``python``. ``opt_in`` hooks
    run at commit time only when ``contribkit init`` was asked for them (``--lintrunner``).
    A plain class, not a dataclass: the stage runner imports this on every commit."""

    __slots__ = ("always_run", "exclude", "files", "opt_in", "pass_filenames", "stages", "types")

    def __init__(
        self,
        stages: tuple[str, ...],
        *,
        files: str = "",
        exclude: str = "^$",
        types: tuple[str, ...] = ("file",),
        always_run: bool = False,
        pass_filenames: bool = True,
        opt_in: bool = False,
    ) -> None:
        self.stages = stages
        self.files = files
        self.exclude = exclude
        self.types = types
        self.always_run = always_run
        self.pass_filenames = pass_filenames
        self.opt_in = opt_in


HOOK_RUNS: dict[str, HookRun] = {
    "contribkit-commit-msg": HookRun(("commit-msg",), always_run=True),
    "contribkit-branch-name": HookRun(
        ("pre-commit", "pre-push"), always_run=True, pass_filenames=False
    ),
    "contribkit-no-debug-leftovers": HookRun(("pre-commit",), types=("python",)),
    "contribkit-no-scratch-files": HookRun(("pre-commit",)),
    "contribkit-test-conventions": HookRun(
        ("pre-commit",), files=r"^test/.*test_.*\.py$", types=("python",)
    ),
    "contribkit-tests-required": HookRun(("pre-push",), always_run=True, pass_filenames=False),
    "contribkit-pr-scope": HookRun(("pre-push",), always_run=True, pass_filenames=False),
    "contribkit-lintrunner": HookRun(("pre-commit",), opt_in=True),
}
