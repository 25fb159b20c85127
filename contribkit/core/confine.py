"""The one way issue and test code runs: :func:`run_code`.

Every path that runs such code (``run``'s legs, ``debug --run`` and each backend of an
ablation, ``test --from-repro``'s verdict gate, and ``bisect`` and ``triage`` through ``run``'s
legs) calls :func:`run_code` with a :class:`LegSpace`. The child gets:

- an environment without secrets (:data:`contribkit.core.proc.SECRET_PATTERNS`, ``scrub_env``,
  credentials in values) nor the variables that reach a socket, an agent or a config folder
  (:data:`contribkit.target.reproconfine.REACH_NAMES`: ``SSH_AUTH_SOCK``, ``GH_CONFIG_DIR``, ...);
- a scratch folder of its own (a :class:`LegSpace`, made for this child and removed after it)
  holding its ``HOME``, ``TMPDIR`` and compile caches (``TORCHINDUCTOR_CACHE_DIR``,
  ``TRITON_CACHE_DIR``): never the user's, never shared with another leg;
- the sandbox and limits of :mod:`contribkit.core.sandbox`;
- a parent whose own ``/proc`` files (its environment, with the token) it cannot read, sandbox
  or not (Linux: contribkit makes itself non-dumpable before it starts such a child);
- no survivor: under bwrap its PID namespace dies with it; without, contribkit is the child
  subreaper of what it leaves and kills those processes once no child runs
  (:func:`contribkit.core.proc.end_orphans`).

What the child writes is read back through :meth:`LegSpace.read` (no link followed, capped),
and contribkit's own files beside it (logs) are opened by :func:`contribkit.core.fsutil.open_new`
in folders the child cannot write.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from contribkit.core.fsutil import read_untrusted
from contribkit.core.proc import (
    DEFAULT_LOG_CAP,
    ChildResult,
    end_orphans,
    run_child,
    scrubbed_env,
)
from contribkit.core.sandbox import Confinement, Sandbox
from contribkit.target import reproconfine

READ_BACK_CAP = 64 * 1024 * 1024  # the most of one file a leg wrote that contribkit reads


@dataclass(frozen=True)
class LegSpace:
    """One child's scratch folder: its home, temporary folder, compile caches and the files it
    hands back (a JUnit report, a debug runner's report)."""

    scratch: Path

    def path(self, name: str) -> Path:
        return self.scratch / "out" / name

    def read(self, name: str, cap: int = READ_BACK_CAP) -> str | None:
        """What the child wrote to :meth:`path` ``name``: never through a link, at most ``cap``
        bytes; None when it wrote no plain file there."""
        raw = read_untrusted(self.path(name), cap)
        return None if raw is None else raw.decode("utf-8", errors="replace")


@contextmanager
def leg_space() -> Iterator[LegSpace]:
    """A fresh scratch folder (outside the working tree, private to the user), removed after."""
    folder = Path(tempfile.mkdtemp(prefix="contribkit-leg-"))
    try:
        (folder / "out").mkdir()
        yield LegSpace(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def working_tree(script: Path) -> tuple[Path, ...]:
    """What a script's run reads besides the interpreter: its folder and the working tree that
    holds it (bound without .git), as ``run``'s legs do."""
    tree = reproconfine.tree_root(str(script.parent))
    return (script.parent, *([Path(tree)] if tree else []))


def code_env(space: LegSpace, scrub: Sequence[str], overrides: Mapping[str, str]) -> dict[str, str]:
    """The environment of a child that runs code in ``space``."""
    base = scrubbed_env(extra_patterns=scrub)
    env = reproconfine.code_env(base, str(space.scratch))
    env.update(overrides)
    return env


def run_code(
    cmd: Sequence[str],
    *,
    space: LegSpace,
    sandbox: Sandbox,
    python: str,
    readable: Sequence[Path],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    scrub: Sequence[str] = (),
    writable: Sequence[Path] = (),
    gpu: bool = False,
    timeout: float | None = None,
    log_path: Path | None = None,
    log_cap: int = DEFAULT_LOG_CAP,
) -> ChildResult:
    """Run ``cmd`` (issue or test code, run by ``python``) confined: see the module's doc.

    ``readable``: the files and folders it runs (the working tree is bound without .git);
    ``writable``: artefact folders besides its scratch folder (never where ``log_path`` is);
    ``env``: what it adds to its environment."""
    reproconfine.hide_environ()
    if not sandbox.active:  # under bwrap, its PID namespace ends what the child leaves
        reproconfine.become_subreaper()
    confine = Confinement(
        sandbox,
        python=python,
        readable=tuple(readable),
        writable=(space.scratch, *writable),
        gpu=gpu,
    )
    try:
        return run_child(
            cmd,
            env=code_env(space, scrub, env or {}),
            cwd=cwd,
            timeout=timeout,
            log_path=log_path,
            log_cap=log_cap,
            confine=confine,
        )
    finally:
        marker = f"{reproconfine.SANDBOX_ENV}={'bwrap' if sandbox.active else 'none'}"
        end_orphans(marker.encode())
