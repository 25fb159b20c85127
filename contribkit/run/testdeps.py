"""What PyTorch's test files need in the target interpreter besides torch, and the one line
that installs what is missing.

``torch.testing._internal`` imports numpy and expecttest, pytest runs the files, and some test
files import hypothesis. ``doctor``, ``test`` and ``run`` all name a missing module with the same
``PYTHON -m pip install …`` line (:func:`install_line`), for the interpreter that lacks it.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from contribkit.core.cache import JsonCache

# Needed by every PyTorch-style test file (pytest runs them; common_utils imports the others).
TEST_MODULES = ("pytest", "numpy", "expecttest")
# Needed where the fork's tests import it (test_*.py files with `import hypothesis`).
OPTIONAL_MODULES = ("hypothesis",)
KNOWN = (*TEST_MODULES, *OPTIONAL_MODULES)  # each module's pip name is its own name

# Python's one wording of a failed import, in both forms: "No module named 'numpy'" (since 3.3)
# and "No module named numpy" (python -m with a missing module, e.g. `-m pytest`).
_NO_MODULE = re.compile(r"No module named '?([A-Za-z_][\w.]*)'?")


@dataclass(frozen=True)
class TestDeps:
    python: str
    missing: tuple[str, ...]  # in KNOWN's order
    checked: tuple[str, ...] = TEST_MODULES

    @property
    def fix(self) -> str:
        """The one command that installs every missing module; empty when none is."""
        return install_line(self.python, self.missing) if self.missing else ""


def install_line(python: str, modules: Sequence[str]) -> str:
    return f"{shlex.quote(python)} -m pip install {' '.join(modules)}"


def missing_module(text: str) -> str | None:
    """The top-level module an import error names (``numpy`` for ``numpy.core``), or None."""
    found = _NO_MODULE.findall(text)
    return found[-1].split(".")[0] if found else None


def uses_hypothesis(root: Path | None) -> bool:
    """Whether the fork's tests import hypothesis (``git grep`` over test/: fast on PyTorch)."""
    if root is None or not (root / "test").is_dir():
        return False
    pattern = r"^\s*(import|from) hypothesis\b"
    try:
        found = subprocess.run(
            ["git", "grep", "-q", "-E", pattern, "--", "test/"],
            cwd=root,
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return found.returncode == 0


def check_test_deps(
    python: str,
    cache: JsonCache | None,
    *,
    scrub: Sequence[str],
    also: Sequence[str] = (),
    root: Path | None = None,
) -> TestDeps:
    """The modules of :data:`TEST_MODULES` (and ``also``, and hypothesis where the fork's tests
    use it) that ``python`` cannot import. Cached per interpreter until site-packages changes."""
    from contribkit.core.workspace import resolve_python
    from contribkit.run.probe import cached_probe

    python = resolve_python(python)
    found = cached_probe(python, "test_deps.py", cache, scrub=scrub).get("found", {})
    wanted = {*TEST_MODULES, *also, *(OPTIONAL_MODULES if uses_hypothesis(root) else ())}
    checked = tuple(m for m in KNOWN if m in wanted)
    return TestDeps(python, tuple(m for m in checked if not found.get(m, False)), checked)


# The last line of a Python traceback: "ModuleNotFoundError: No module named 'x'", "ImportError:
# cannot import name 'y' from 'z'", "torch.AcceleratorError: …" (a dotted exception name too).
_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Za-z_]\w*(?:Error|Exception|Exit): ")


def error_cause(output: str) -> str:
    """Why a child died, cause first: the module it could not import, else the last exception
    line its traceback printed, else its last line. Never a path cut short: the cause is what
    a person reads, and the full text stays in the log."""
    module = missing_module(output)
    if module is not None:
        return f"No module named {module!r}"
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in reversed(lines):
        if _EXCEPTION_LINE.match(line):
            return line
    return lines[-1] if lines else ""
