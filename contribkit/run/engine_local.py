"""The engines that run legs from this process's threads: ``local`` and ``ssh``.

Legs that need no GPU run up to ``jobs`` at a time; GPU legs one per GPU, pinned with
``CUDA_VISIBLE_DEVICES`` (the ids come from the caller: the probed device count under the user's
mask). ``local`` runs a leg in place (``LegTask.in_place``, with its confinement), else through
the bootstrap under this machine's sandbox; ``ssh`` sends the bootstrap and the payload to a host
(:mod:`contribkit.run.remote`). Cancelling kills every running leg's process tree.
"""

from __future__ import annotations

import queue
import socket
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING

from contribkit.core.errors import BadInput
from contribkit.core.proc import kill_running, run_child, scrubbed_env
from contribkit.run.engine import (
    Engine,
    LegResult,
    LegTask,
    bootstrap_output,
    error_result,
)
from contribkit.run.remote import LegOutput

if TYPE_CHECKING:
    from contribkit.core.sandbox import Sandbox
    from contribkit.run.remote import RemoteHost


class ThreadEngine(Engine):
    """Legs run by this process's threads: ``jobs`` at a time, GPU legs one per GPU id."""

    def __init__(self, jobs: int, gpus: Sequence[str] = ()) -> None:
        super().__init__(jobs)
        self.gpus = list(gpus)
        self._stopping = threading.Event()

    def run_one(self, task: LegTask, gpu: str | None) -> LegResult:
        raise NotImplementedError

    def submit(self, tasks: Sequence[LegTask]) -> Iterator[LegResult]:
        cpu_pool = ThreadPoolExecutor(self.jobs, thread_name_prefix=f"leg-{self.name}")
        gpu_pool = ThreadPoolExecutor(max(1, len(self.gpus)), thread_name_prefix="leg-gpu")
        free: queue.Queue[str] = queue.Queue()
        for gpu in self.gpus:
            free.put(gpu)

        def one(task: LegTask) -> LegResult | None:
            if self._stopping.is_set():
                return None
            gpu = free.get() if task.gpu and self.gpus else None
            try:
                return self.run_one(task, gpu)
            finally:
                if gpu is not None:
                    free.put(gpu)

        futures: list[Future[LegResult | None]] = [
            (gpu_pool if task.gpu else cpu_pool).submit(one, task) for task in tasks
        ]
        try:
            pending = set(futures)
            while pending:
                # A timeout keeps the consuming thread waking up, so Ctrl-C is seen promptly.
                done, pending = wait(pending, timeout=0.5, return_when="FIRST_COMPLETED")
                for fut in done:
                    result = fut.result()
                    if result is not None:
                        yield result
        except BaseException:
            self._stop(futures)
            raise
        finally:
            if not all(fut.done() for fut in futures):  # closed early
                self._stop(futures)
            for pool in (cpu_pool, gpu_pool):
                pool.shutdown(wait=True, cancel_futures=True)

    def _stop(self, futures: Sequence[Future[LegResult | None]]) -> None:
        self._stopping.set()
        for fut in futures:
            fut.cancel()
        # Until every worker has returned: a leg may start between two kills.
        while not all(fut.done() for fut in futures):
            kill_running()
            wait(futures, timeout=0.1)

    def cancel(self) -> None:
        self._stopping.set()
        kill_running()


class LocalEngine(ThreadEngine):
    """Legs on this machine, confined by this machine's sandbox."""

    name = "local"

    def __init__(self, jobs: int, gpus: Sequence[str] = (), sandbox: Sandbox | None = None) -> None:
        super().__init__(jobs, gpus)
        self.sandbox = sandbox
        self.host = socket.gethostname()

    def run_one(self, task: LegTask, gpu: str | None) -> LegResult:
        env = {**task.env, **({"CUDA_VISIBLE_DEVICES": gpu} if gpu is not None else {})}
        place = task.in_place
        if place is None:
            return self._bootstrap(task, env)
        kind = place.confine.sandbox.kind if place.confine is not None else "none"
        reason = place.confine.sandbox.reason if place.confine is not None else "not asked for"
        if place.junit_path is not None:
            place.junit_path.unlink(missing_ok=True)
        try:
            result = run_child(
                list(place.argv),
                env=scrubbed_env(extra_patterns=task.scrub, overrides=env),
                cwd=place.cwd,
                timeout=task.timeout,
                log_path=task.log_path,
                confine=place.confine,
            )
        except OSError as exc:  # the interpreter vanished or is not executable
            why = f"could not start {place.argv[0]}: {exc}"
            output = LegOutput(None, False, "", 0.0, error=why)
        else:
            output = LegOutput.from_child(result, place.junit_path)
        return LegResult(
            task.key, output, self.name, self.host, kind, "" if kind != "none" else reason
        )

    def _bootstrap(self, task: LegTask, env: dict[str, str]) -> LegResult:
        """A leg given only as a payload (``triage``'s): the bootstrap runs it, confined here."""
        from dataclasses import replace

        from contribkit.core.sandbox import Confinement
        from contribkit.run.probe import probe_source

        task = replace(task, env=env)
        confine = None
        if self.sandbox is not None:
            confine = Confinement(self.sandbox, python=task.python, gpu=task.gpu)
        try:
            packed = task.packed()
        except BadInput as exc:  # too large: this leg fails, the others run
            return error_result(task, self.name, exc.message)
        try:
            result = run_child(
                [task.python, "-c", probe_source("remote_leg.py"), packed],
                env=scrubbed_env(extra_patterns=task.scrub),
                timeout=task.timeout + 30,
                confine=confine,
            )
        except OSError as exc:
            why = f"could not start {task.python}: {exc}"
            return LegResult(
                task.key, LegOutput(None, False, "", 0.0, error=why), self.name, self.host, "none"
            )
        output = bootstrap_output(result.output, None, result.duration_s, task.log_path)
        kind = self.sandbox.kind if self.sandbox is not None and self.sandbox.active else "none"
        reason = (
            "" if kind == "bwrap" else (self.sandbox.reason if self.sandbox else "not asked for")
        )
        return LegResult(task.key, output, self.name, self.host, kind, reason)


class SshEngine(ThreadEngine):
    """Legs on one host over ssh, unconfined there (the bootstrap has no sandbox)."""

    name = "ssh"

    def __init__(self, host: RemoteHost, jobs: int, gpus: Sequence[str] = ()) -> None:
        super().__init__(jobs, gpus)
        self.host = host

    @property
    def label(self) -> str:
        return self.host.host

    def run_one(self, task: LegTask, gpu: str | None) -> LegResult:
        env = {**task.env, **({"CUDA_VISIBLE_DEVICES": gpu} if gpu is not None else {})}
        output = self.host.run_files(
            dict(task.files), list(task.argv), env, task.timeout, task.log_path
        )
        return LegResult(task.key, output, self.name, self.host.host, "none", "remote host")
