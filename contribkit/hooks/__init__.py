"""contribkit's pre-commit hooks: one small stdlib-only module per hook, each with ``main(argv)``.

The hook ids (published in ``.pre-commit-hooks.yaml``, and the console scripts of the same names in
``pyproject.toml``) map to their modules here; ``contribkit init`` writes its config from this map.
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
