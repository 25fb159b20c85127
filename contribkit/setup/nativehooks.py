"""``contribkit init``'s native engine: git hook scripts that run all of a stage's checks in one
process (:mod:`contribkit.hooks.stage`), with the interpreter that installed them.

A hook of your own already at ``.git/hooks/<stage>`` is kept beside it as
``<stage>.contribkit-chained`` and run first (with the same arguments, and for pre-push the same
refs on stdin); ``init --uninstall`` puts it back. The script is rendered from
``hooks/native-hook.sh`` (a ``string.Template``).
"""

from __future__ import annotations

import os
import shlex
import string
import sys
from pathlib import Path

from contribkit import __version__
from contribkit.core.datadirs import data_dir
from contribkit.core.fsutil import atomic_write

TEMPLATE = "native-hook.sh"
CHAINED_SUFFIX = ".contribkit-chained"
LEGACY_SUFFIX = ".legacy"  # where pre-commit and prek keep a hook they replaced


def render_script(hook_type: str, lintrunner: bool, python: str | None = None) -> str:
    """The hook script for ``hook_type`` (pre-commit, commit-msg or pre-push)."""
    template = string.Template((data_dir("hooks") / TEMPLATE).read_text(encoding="utf-8"))
    return template.substitute(
        version=__version__,
        stage=hook_type,
        python=shlex.quote(python or sys.executable),
        options="--lintrunner " if lintrunner and hook_type == "pre-commit" else "",
    )


def chained_path(hook: Path) -> Path:
    return hook.with_name(hook.name + CHAINED_SUFFIX)


def legacy_path(hook: Path) -> Path:
    return hook.with_name(hook.name + LEGACY_SUFFIX)


def install(hook: Path, text: str, chain: Path | None) -> None:
    """Write contribkit's script at ``hook``, first moving ``chain`` (a hook of yours: the one at
    ``hook``, or the ``.legacy`` one pre-commit kept) to ``<hook>.contribkit-chained``."""
    if chain is not None and chain.exists():
        os.replace(chain, chained_path(hook))
    atomic_write(hook, text, force=True, mode=0o755)


def uninstall(hook: Path) -> None:
    """Remove contribkit's script at ``hook`` and put back the hook it chained, if any."""
    hook.unlink(missing_ok=True)
    chained = chained_path(hook)
    if chained.exists():
        os.replace(chained, hook)


def remove_runner_hook(hook: Path) -> None:
    """Remove a pre-commit or prek script of contribkit's config and put back the ``.legacy``
    hook it kept, as ``pre-commit uninstall`` and ``prek uninstall`` do."""
    hook.unlink(missing_ok=True)
    legacy = legacy_path(hook)
    if legacy.exists():
        os.replace(legacy, hook)
