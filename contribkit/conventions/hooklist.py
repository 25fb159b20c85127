"""contribkit's pre-commit hooks: the one declaration of their ids and modules.

Each hook id maps to its module in ``contribkit/hooks/``, which has ``main(argv) -> int``. The
other places that list the hooks follow this map, and ``tests/test_hooks_manifest.py`` keeps them
in step: ``.pre-commit-hooks.yaml`` (published for pre-commit), the console scripts of the same
names in ``pyproject.toml``, the config and snippet that ``contribkit init`` writes or prints
(``hooks/pre-commit-config.yaml``, ``hooks/pre-commit-snippet.yaml``, filled in by
``contribkit.setup.hookinstall``), and the README's hook table and snippet.
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
