"""Engines: where legs run (``contribkit run --engine local|ray|slurm``, and ``triage``'s legs).

A leg is a :class:`LegTask`: the files it needs, the command after the interpreter, what it adds
to the environment, its timeout and whether it needs a GPU. An :class:`Engine` takes a list of
them and yields a :class:`LegResult` for each as it finishes::

    with make_engine(EngineConfig("ray"), jobs=8) as engine:
        for result in engine.submit(tasks):
            ...  # result.key is the task's key; result.output is its LegOutput
    # engine.cancel() (from any thread) stops every outstanding leg; leaving the ``with``
    # block, normally or by an exception (Ctrl-C, SIGTERM), cancels what is still running.

Every engine but ``local`` runs a leg through the standard-library bootstrap
(``target/probes/remote_leg.py``) with the task's payload, so the scrubbed environment, the
process group and the timeout are contribkit's on every worker; the worker wraps the bootstrap
in contribkit's sandbox (:mod:`contribkit.core.sandbox`) where contribkit is importable and
bubblewrap works there, and says which (:mod:`contribkit.run.worker`). ``local`` runs a leg in
place when the task says how (``in_place``: today's ``run``), else through the same bootstrap.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from contribkit.core.errors import BadInput
from contribkit.core.proc import SECRET_PATTERNS, is_secret
from contribkit.run.remote import LegOutput, read_result

if TYPE_CHECKING:
    from contribkit.core.sandbox import Sandbox
    from contribkit.run.probe import TorchInfo
    from contribkit.run.worker import WorkerReply

ENGINES = ("local", "ray", "slurm")
MARKER = "CONTRIBKIT_REMOTE "  # the bootstrap's last line (as in run/remote.py)
MAX_PAYLOAD = 120 * 1024  # the packed payload is one argument of a command line
GRACE_S = 60.0  # on top of a leg's timeout: starting a worker, copying files back


@dataclass(frozen=True)
class InPlace:
    """How the local engine runs a leg where its files are (``run``'s local legs; other engines
    ship ``LegTask.files`` instead): the whole command, run by ``core.confine.run_code`` in a
    scratch folder of its own, with the files it reads and its sandbox. ``JUNIT_SLOT`` in
    ``argv`` becomes the report's path in that scratch folder; contribkit keeps the redacted
    report at ``junit_path``, a new file the leg cannot reach."""

    argv: tuple[str, ...]
    cwd: Path
    python: str
    readable: tuple[Path, ...]
    sandbox: Sandbox | None = None
    gpu: bool = False
    junit_path: Path | None = None


JUNIT_SLOT = "{contribkit-junit}"  # in InPlace.argv: the leg's report, in its scratch folder


@dataclass(frozen=True)
class LegTask:
    """One leg, as any engine runs it."""

    key: int  # the caller's id for the leg; its LegResult carries it back
    python: str  # the interpreter: a path where the leg runs (on the worker)
    argv: tuple[str, ...]  # after the interpreter; files by their names in ``files``
    files: Mapping[str, bytes]  # the leg's folder, written on the worker
    env: Mapping[str, str]  # added to the worker's scrubbed environment; never a secret
    timeout: float
    log_path: Path | None = None  # where the leg's (redacted) log is written, locally
    gpu: bool = False  # the leg needs a GPU of its own
    scrub: tuple[str, ...] = ()  # secret patterns on top of SECRET_PATTERNS
    in_place: InPlace | None = None

    def __post_init__(self) -> None:
        # A rule for every variable, not one name: GH_TOKEN, AWS_SECRET_ACCESS_KEY or a
        # DATABASE_URL with a password never travels to a worker, whoever built the task.
        leaked = [k for k, v in self.env.items() if is_secret(k, self.scrub, v)]
        if leaked:
            raise BadInput(f"a leg's environment may not carry the secret {leaked[0]}")

    def payload(self) -> dict[str, Any]:
        """What the bootstrap reads (docs/architecture.md, "Engines")."""
        return {
            "python": self.python,
            "files": {name: base64.b64encode(data).decode() for name, data in self.files.items()},
            "argv": list(self.argv),
            "env": dict(self.env),
            "scrub": [*SECRET_PATTERNS, *self.scrub],
            "timeout": self.timeout,
        }

    def packed(self) -> str:
        """The payload as the bootstrap's one argument; BadInput when it is too large."""
        packed = base64.b64encode(zlib.compress(json.dumps(self.payload()).encode(), 9)).decode()
        if len(packed) > MAX_PAYLOAD:
            raise BadInput(
                f"a leg's files are too large to send ({len(packed) // 1024} KiB packed)",
                hint="see docs/scale-out.md for the size limit",
            )
        return packed


@dataclass
class LegResult:
    key: int
    output: LegOutput
    engine: str  # "local", "ssh", "ray", "slurm"
    worker: str  # the machine that ran it (a host name)
    sandbox: str  # "bwrap" or "none": how the leg was confined there
    sandbox_reason: str = ""  # why none, when none


@dataclass(frozen=True)
class EngineConfig:
    """Where legs go, from flags and settings (``run.engine``, ``[ray]``, ``[slurm]``)."""

    name: str = "local"
    ray_address: str | None = None  # None: RAY_ADDRESS, else a local cluster
    ray_num_cpus: int = 2  # the local cluster's size
    ray_num_gpus: int | None = None  # None: Ray counts them
    slurm_cluster: str = "auto"  # "auto" (Slurm where sbatch is, else local), "slurm", "local"
    slurm_folder: Path | None = None  # shared by the submitting machine and the nodes
    slurm_partition: str | None = None
    max_parallel: int = 0  # legs in flight at once (0: the engine's default)
    sandbox_mode: str = "auto"  # run.sandbox, applied on the workers
    network: bool = False  # --allow-network


class Engine(ABC):
    """Runs legs; see the module docstring for the contract."""

    name = "engine"

    def __init__(self, jobs: int) -> None:
        self.jobs = max(1, jobs)

    @abstractmethod
    def submit(self, tasks: Sequence[LegTask]) -> Iterator[LegResult]:
        """Start ``tasks`` (as many at once as the engine allows) and yield their results as
        they finish. Closing the iterator early cancels the tasks still outstanding."""

    @abstractmethod
    def cancel(self) -> None:
        """Stop every outstanding task (callable from any thread); idempotent."""

    def close(self) -> None:
        """Give back what the engine started (a local Ray cluster)."""
        return None

    def gpus_available(self) -> bool:
        """Whether a leg asking for a GPU can be placed (a probe then asks for one)."""
        return False

    @property
    def label(self) -> str:
        """Where the legs go, for the record's interpreter labels: ``ray``, ``ssh:gpu-box``."""
        return self.name

    def probe(self, python: str, gpu: bool = False) -> TorchInfo:
        """The torch facts of ``python`` where this engine runs legs (one leg, not cached)."""
        from contribkit.run.probe import PROBE_MARKER, PROBE_TIMEOUT_S, TorchInfo, probe_source

        task = LegTask(
            0,
            python,
            ("probe.py",),
            {"probe.py": probe_source("torch_info.py").encode()},
            {},
            PROBE_TIMEOUT_S,
            gpu=gpu,
        )
        result = next(iter(self.submit([task])))
        for line in result.output.output.splitlines():
            if line.startswith(PROBE_MARKER):
                return TorchInfo.from_dict(json.loads(line[len(PROBE_MARKER) :]))
        out = result.output
        tail = out.error or (out.output.strip().splitlines() or [f"exit {out.returncode}"])[-1]
        raise BadInput(
            f"could not probe {python} on {self.label}: {tail}",
            hint="--python names an interpreter on the workers (see docs/scale-out.md)",
        )

    def __enter__(self) -> Engine:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if exc is not None:
                self.cancel()
        finally:
            self.close()


@contextlib.contextmanager
def secrets_withheld(extra_patterns: Sequence[str] = ()) -> Iterator[None]:
    """``os.environ`` without secrets while engine processes are started (a local Ray cluster,
    a submitit job inherit the driver's environment): no token reaches a task's environment."""
    removed = {k: v for k, v in os.environ.items() if is_secret(k, extra_patterns, v)}
    for name in removed:
        os.environ.pop(name, None)
    try:
        yield
    finally:
        os.environ.update(removed)


def bootstrap_output(
    text: str, worker_error: str | None, duration: float, log_path: Path | None
) -> LegOutput:
    """A LegOutput from what the bootstrap printed on a worker: the log written (redacted,
    capped) without the result line, the exit code and JUnit report read from that line."""
    from contribkit.core.proc import DEFAULT_LOG_CAP
    from contribkit.core.redact import redact

    text = redact(text)
    lines = text.splitlines()
    found = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].startswith(MARKER)), None)
    shown = "\n".join(lines[:found] if found is not None else lines)
    if log_path is not None:
        data = shown.encode()
        note = f"\n[contribkit: log truncated at {DEFAULT_LOG_CAP} bytes]\n".encode()
        log_path.write_bytes(
            data if len(data) <= DEFAULT_LOG_CAP else data[:DEFAULT_LOG_CAP] + note
        )
    if found is None:
        tail = (shown.strip().splitlines() or ["no output"])[-1]
        why = worker_error or f"the worker sent no result line; last output: {tail[:200]}"
        return LegOutput(None, False, shown, duration, error=why)
    try:
        returncode, timed_out, junit = read_result(lines[found][len(MARKER) :])
    except ValueError as exc:
        return LegOutput(None, False, shown, duration, error=f"malformed result line ({exc})")
    return LegOutput(returncode, timed_out, shown, duration, redact(junit) if junit else None)


def reply_result(task: LegTask, engine: str, reply: WorkerReply, killer: str) -> LegResult:
    """A leg's result from the worker's reply (Ray's task, Slurm's job); ``killer`` (the worker,
    the job) is what killed a leg that outlived its grace."""
    text = reply.output.decode("utf-8", "replace")
    error = None if reply.returncode is not None else f"{killer} killed the leg past its grace"
    output = bootstrap_output(text, error, reply.duration_s, task.log_path)
    return LegResult(task.key, output, engine, reply.worker, reply.sandbox, reply.sandbox_reason)


def error_result(task: LegTask, engine: str, why: str) -> LegResult:
    """The result of a leg the engine could not run (a lost worker, a refused job)."""
    if task.log_path is not None:
        task.log_path.write_text(f"[contribkit: {why}]\n", encoding="utf-8")
    return LegResult(task.key, LegOutput(None, False, "", 0.0, error=why), engine, "?", "none")
