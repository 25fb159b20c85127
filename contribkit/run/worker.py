"""What a Ray task or a Slurm job runs on the worker: the bootstrap, confined where it can be.

:func:`run_bootstrap` starts ``PYTHON -c <bootstrap> <payload>`` (``target/probes/remote_leg.py``:
files written to a temporary folder, environment scrubbed, the leg in its own process group under
its timeout) and returns what it printed. Where contribkit is importable on the worker and
bubblewrap works there, the bootstrap runs inside contribkit's sandbox
(:mod:`contribkit.core.sandbox`); elsewhere it runs unconfined and the reply says why, so that
the record never claims a sandbox that was not there.

Standard library only at import time: Ray ships this module by value, so a worker needs Ray and
the interpreters, not contribkit (without it there is no sandbox, and the reply says so). When
the worker process dies (``ray.cancel(force=True)``, a cancelled job), the bootstrap sees its
parent change and kills the leg's process group.
"""

from __future__ import annotations

import fnmatch
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass


@dataclass
class WorkerReply:
    output: bytes  # what the bootstrap printed, its result line last
    returncode: int | None  # the bootstrap's own exit (None: killed past its grace)
    worker: str  # the host name
    sandbox: str  # "bwrap" or "none"
    sandbox_reason: str  # why "none"
    duration_s: float


# Between the worker and the bootstrap. Ray kills a worker's direct children with it, and a
# Slurm or submitit job may die without a word: either way this guard goes (it leaves when its
# parent does), and the bootstrap under it, seeing its parent change, kills the leg's group.
GUARD = """\
import os, subprocess, sys, time
parent = os.getppid()
child = subprocess.Popen(sys.argv[1:])
while child.poll() is None:
    if os.getppid() != parent:
        os._exit(1)
    time.sleep(0.1)
sys.exit(child.returncode)
"""


def _scrubbed(patterns: list[str]) -> dict[str, str]:
    upper = [p.upper() for p in patterns]
    return {
        k: v
        for k, v in os.environ.items()
        if not any(fnmatch.fnmatchcase(k.upper(), p) for p in upper)
    }


def _confined(
    cmd: list[str], env: dict[str, str], python: str, mode: str, network: bool, gpu: bool
) -> tuple[list[str], dict[str, str], str, str]:
    """``cmd`` wrapped in contribkit's sandbox where it can be, with the kind and the reason."""
    if mode == "none":
        return cmd, env, "none", "run.sandbox is none"
    try:
        from contribkit.core.sandbox import Confinement, choose
    except ImportError:
        return cmd, env, "none", "contribkit is not installed on the worker"
    try:
        sandbox = choose(mode, network=network, announce=False)
    except Exception as exc:  # BadInput: run.sandbox = bwrap and none here
        return cmd, env, "none", f"{exc}"
    if not sandbox.active:
        return cmd, env, "none", sandbox.reason
    wrapped, new_env = Confinement(sandbox, python=python, gpu=gpu).wrap(cmd, env, None)
    return wrapped, new_env, "bwrap", ""


def run_bootstrap(
    python: str,
    bootstrap: str,
    packed: str,
    scrub: list[str],
    timeout: float,
    sandbox_mode: str,
    network: bool,
    gpu: bool,
) -> WorkerReply:
    """Run one leg's bootstrap here; ``timeout`` covers the bootstrap (the leg's own timeout
    and a grace for writing its files and sending the report back)."""
    start = time.monotonic()
    env = _scrubbed(scrub)
    cmd = [os.path.expanduser(python), "-c", bootstrap, packed]
    cmd, env, kind, reason = _confined(cmd, env, python, sandbox_mode, network, gpu)
    # A session of its own: a group kill of the worker's does not reach past the guard.
    proc = subprocess.Popen(
        [sys.executable, "-c", GUARD, *cmd],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)  # the bootstrap kills its leg when it loses the guard
        out, _ = proc.communicate()
        code = None
    except BaseException:  # a cancelled task (KeyboardInterrupt), a job told to stop
        proc.send_signal(signal.SIGKILL)
        raise
    return WorkerReply(out, code, socket.gethostname(), kind, reason, time.monotonic() - start)
