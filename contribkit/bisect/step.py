"""One bisect step: build the checked-out commit, run the repro as a ``run`` leg, and map what
came out onto git bisect's codes.

| outcome | code |
|---|---|
| ``NOT_REPRODUCED`` | 0 (good) |
| ``REPRODUCED`` | 1 (bad) |
| ``CANNOT_RUN``, a failed ``--build-cmd``, torch or a module not importable, a timeout | 125 (skip) |
| a different exception, or a crash the issue does not report | 125, or 1 with ``--crash-is-bad`` |
| Ctrl-C, or a leg that exits 130 | abort (KeyboardInterrupt) |

Raw exit codes would mislead here: an import error, a build failure or an unrelated exception
each exit non-zero, and ``git bisect run`` would blame that commit.

The repro runs through :class:`contribkit.run.runner.LegRunner`, as every ``run`` leg does
(scrubbed environment, own process group, timeout, capped and redacted log, bubblewrap where
there is one). The build command is the user's own, run in the checkout with a scrubbed
environment in its own process group (not sandboxed: a build writes the tree and its caches).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from contribkit.bisect.gitbisect import Commit
from contribkit.core.proc import run_child, scrubbed_env
from contribkit.run import dispatch
from contribkit.run.record import Cell
from contribkit.run.runner import Column, Leg, LegRunner, RunOptions, Target, relpath

GOOD, BAD, SKIP = 0, 1, 125
MARKS = {GOOD: "good", BAD: "bad", SKIP: "skip"}
INTERRUPTED_EXIT = 130
# CANNOT_RUN details that say the code raised something other than the reported error,
# or the process died of a signal the issue does not report: "different error: got KeyError:
# 'x'; the issue reports ValueError: …", "the process was killed by SIGSEGV; the issue reports
# no crash", "error, and the issue gives no signature to compare: …", "check() raised …".
_CRASH_RE = re.compile(
    r"^(?:different error: got |error, and the issue gives no signature|"
    r"the process was killed by |check\(\) raised )"
)
# …unless what was raised says the commit is not usable (an import that fails): "missing
# module: ModuleNotFoundError: No module named 'torch._C'", "torch is not importable: …".
_UNUSABLE_RE = re.compile(r"ModuleNotFoundError|ImportError|missing module|not importable")


@dataclass(frozen=True)
class StepSetup:
    """What every step of one bisect shares."""

    root: Path  # the checkout
    target: Target  # the repro, copied outside the checkout
    column: Column  # the interpreter that runs it
    device: str
    options: RunOptions  # timeout, sandbox, scrub patterns
    logs_dir: Path  # one folder per step below it
    build_cmd: str | None = None
    build_timeout: float | None = None
    crash_is_bad: bool = False


@dataclass
class Step:
    role: str  # "bad", "good" (checking the ends) or "step"
    number: int  # 1-based among the bisect's steps; 0 for the ends
    commit: Commit
    code: int  # GOOD, BAD or SKIP
    verdict: str | None  # the repro's verdict word, when it printed one
    why: str  # one line: the verdict and its detail, or why the step was skipped
    duration_s: float
    log_path: str | None = None  # the repro leg's log (or the build's, when it failed)

    @property
    def mark(self) -> str:
        return MARKS[self.code]


def run_step(setup: StepSetup, commit: Commit, role: str, number: int) -> Step:
    """Build and run the checked-out ``commit``; KeyboardInterrupt when the step says abort."""
    started = time.monotonic()
    folder = setup.logs_dir / (f"{number:03d}-{commit.sha[:10]}" if number else role)
    folder.mkdir(parents=True, exist_ok=True)

    def done(code: int, verdict: str | None, why: str, log: Path | None) -> Step:
        duration = round(time.monotonic() - started, 3)
        shown = relpath(log, setup.root) if log is not None else None
        return Step(role, number, commit, code, verdict, why, duration, shown)

    if setup.build_cmd:
        failed = build(setup, folder / "build.log")
        if failed:
            return done(SKIP, None, failed, folder / "build.log")
    leg = Leg(setup.target, setup.device, setup.column)
    cell = dispatch.execute([leg], LegRunner(setup.root, folder, setup.options), 1)[0]
    if cell.exit_code == INTERRUPTED_EXIT:
        raise KeyboardInterrupt
    code, why = classify(cell, setup.crash_is_bad)
    log = setup.root / cell.log_path if cell.log_path else None
    return done(code, cell.verdict, why, log)


def build(setup: StepSetup, log_path: Path) -> str | None:
    """Run ``--build-cmd`` in the checkout; None when it succeeded, else why it did not."""
    assert setup.build_cmd is not None
    result = run_child(
        ["/bin/sh", "-c", setup.build_cmd],
        env=scrubbed_env(extra_patterns=setup.options.scrub),
        cwd=setup.root,
        timeout=setup.build_timeout,
        log_path=log_path,
    )
    if result.timed_out:
        return f"build timed out after {setup.build_timeout:g}s"
    if result.returncode == INTERRUPTED_EXIT:
        raise KeyboardInterrupt
    if result.returncode != 0:
        return f"build failed (exit {result.returncode})"
    return None


def classify(cell: Cell, crash_is_bad: bool) -> tuple[int, str]:
    """The bisect code of a repro leg's cell, and one line saying why."""
    detail = " ".join(cell.detail.split())
    if cell.status == "REPRODUCED":
        return BAD, f"REPRODUCED {detail}".strip()
    if cell.status == "NOT_REPRODUCED":
        return GOOD, f"NOT_REPRODUCED {detail}".strip()
    if cell.status == "TIMEOUT":
        return SKIP, f"timed out ({detail})"
    if cell.verdict == "CANNOT_RUN":
        reason = detail.removeprefix("CANNOT_RUN: ")
        reason = re.sub(r"^\[\w[\w-]*\] ", "", reason)  # an oracle's tag
        crash = _CRASH_RE.match(reason) is not None and not _UNUSABLE_RE.search(reason)
        if crash and crash_is_bad:
            return BAD, f"CANNOT_RUN {reason} (bad: --crash-is-bad)"
        return SKIP, f"CANNOT_RUN {reason}"
    return SKIP, f"{cell.status} {detail}".strip()
