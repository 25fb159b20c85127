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
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING

from contribkit.core.confine import leg_space, run_code
from contribkit.core.errors import BadInput
from contribkit.core.proc import kill_running
from contribkit.core.sandbox import Sandbox
from contribkit.run.engine import (
    JUNIT_SLOT,
    Engine,
    LegResult,
    LegTask,
    bootstrap_output,
    error_result,
)
from contribkit.run.remote import LegOutput

if TYPE_CHECKING:
    from contribkit.run.remote import RemoteHost


class ThreadEngine(Engine):
    """Legs run by this process's threads: ``jobs`` at a time, GPU legs one per GPU id."""

    def __init__(self, jobs: int, gpus: Sequence[str] = ()) -> None:
        super().__init__(jobs)
        self.gpus = list(gpus)
        self._stopping = threading.Event()
        self._active = 0  # workers inside run_one
        self._active_lock = threading.Lock()

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
            with self._active_lock:
                self._active += 1
            try:
                return self.run_one(task, gpu)
            finally:
                with self._active_lock:
                    self._active -= 1
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

    def cancel(self, patience: float = 30.0) -> None:
        """Stop every leg: until no worker is inside a leg, for a leg whose child started
        between the stop and a kill (it would run to its own timeout, and the caller waits)."""
        self._stopping.set()
        deadline = time.monotonic() + patience
        while True:
            kill_running()
            with self._active_lock:
                if self._active == 0:
                    return
            if time.monotonic() > deadline:
                return
            time.sleep(0.1)


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
        sandbox = place.sandbox or self.sandbox or Sandbox("none", "not asked for")
        with leg_space() as space:
            junit = space.path("junit.xml") if place.junit_path is not None else None
            argv = (
                [a.replace(JUNIT_SLOT, str(junit)) for a in place.argv] if junit else [*place.argv]
            )
            try:
                result = run_code(
                    argv,
                    space=space,
                    sandbox=sandbox,
                    python=place.python,
                    readable=place.readable,
                    cwd=place.cwd,
                    env=env,
                    scrub=task.scrub,
                    gpu=place.gpu,
                    timeout=task.timeout,
                    log_path=task.log_path,
                )
            except OSError as exc:  # the interpreter vanished or is not executable
                why = f"could not start {argv[0]}: {exc}"
                output = LegOutput(None, False, "", 0.0, error=why)
            else:
                report = space.read("junit.xml") if junit is not None else None
                output = LegOutput.from_child(result, report, place.junit_path)
        kind = "bwrap" if sandbox.active else "none"
        return LegResult(
            task.key, output, self.name, self.host, kind, "" if sandbox.active else sandbox.reason
        )

    def _bootstrap(self, task: LegTask, env: dict[str, str]) -> LegResult:
        """A leg given only as a payload: the bootstrap runs it in a scratch folder, confined
        here as every local leg is (``core.confine.run_code``)."""
        from contribkit.run.probe import probe_source

        sandbox = self.sandbox or Sandbox("none", "not asked for")
        try:
            packed = task.packed()
        except BadInput as exc:  # too large: this leg fails, the others run
            return error_result(task, self.name, exc.message)
        with leg_space() as space:
            try:
                result = run_code(
                    [task.python, "-c", probe_source("remote_leg.py"), packed],
                    space=space,
                    sandbox=sandbox,
                    python=task.python,
                    readable=(),
                    cwd=space.scratch,
                    env=env,
                    scrub=task.scrub,
                    gpu=task.gpu,
                    timeout=task.timeout + 30,
                )
            except OSError as exc:
                why = f"could not start {task.python}: {exc}"
                return LegResult(
                    task.key,
                    LegOutput(None, False, "", 0.0, error=why),
                    self.name,
                    self.host,
                    "none",
                )
        output = bootstrap_output(result.output, None, result.duration_s, task.log_path)
        kind = "bwrap" if sandbox.active else "none"
        return LegResult(
            task.key, output, self.name, self.host, kind, "" if sandbox.active else sandbox.reason
        )


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
