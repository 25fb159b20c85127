"""``--engine ray``: legs as Ray tasks (the ``contribkit[ray]`` extra).

Each leg is one task of :func:`contribkit.run.worker.run_bootstrap`, shipped by value (a worker
needs Ray and the interpreters; contribkit only for the sandbox): its files travel in the task's
arguments and its output comes back as the task's value, so no shared file system is assumed.
A leg that needs a GPU asks ``num_gpus=1`` (Ray pins it with ``CUDA_VISIBLE_DEVICES``); at most
``jobs`` tasks are in flight. The cluster is ``ray.address``, else ``RAY_ADDRESS``, else a local
one started here with ``ray.num_cpus`` CPUs (and ``ray.num_gpus``), from an environment without
secrets, and stopped at the end. Cancelling is ``ray.cancel(force=True)`` on every outstanding
task: the worker process dies, and the bootstrap under it kills its leg's process group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from contribkit.core.errors import BadInput
from contribkit.core.proc import SECRET_PATTERNS
from contribkit.run.engine import (
    GRACE_S,
    Engine,
    EngineConfig,
    LegResult,
    LegTask,
    error_result,
    reply_result,
    secrets_withheld,
)

EXTRA_HINT = "install the extra: pip install 'contribkit[ray]'"


def import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise BadInput(f"--engine ray needs Ray ({exc})", hint=EXTRA_HINT) from None
    return ray


HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _handlers_kept() -> Iterator[None]:
    """Ray's core installs its own SIGTERM handler and C-level handlers that swallow Ctrl-C;
    contribkit's own (cli/app.py: unwind, cancel, kill) are put back, at the C level too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in HANDLED}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            if handler is not None:
                signal.signal(sig, handler)


def reachable(address: str, timeout: float = 10.0) -> None:
    """BadInput unless ``address`` (``HOST:PORT``, ``ray://HOST:PORT``) answers: Ray itself
    keeps retrying an address that is down for minutes. ``auto`` and ``local`` are Ray's."""
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if address in ("auto", "local") or not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise BadInput(
            f"could not reach Ray at {address} ({exc.strerror or exc})",
            hint="check ray.address (or RAY_ADDRESS): the head node's GCS or ray:// port",
        ) from None


class RayEngine(Engine):
    name = "ray"

    def __init__(self, config: EngineConfig, jobs: int) -> None:
        super().__init__(jobs)
        self.config = config
        self.ray = import_ray()
        self.address = config.ray_address or os.environ.get("RAY_ADDRESS") or None
        self._started = False
        self._pending: dict[Any, LegTask] = {}
        self._remote: Any = None

    @property
    def label(self) -> str:
        return f"ray:{self.address}" if self.address else "ray"

    def _connect(self) -> Any:
        if self._remote is not None:
            return self._remote
        ray = self.ray
        if not ray.is_initialized():
            local = self.address is None
            options: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": "ERROR",
                "configure_logging": True,
            }
            if local:
                options["num_cpus"] = self.config.ray_num_cpus
                if self.config.ray_num_gpus is not None:
                    options["num_gpus"] = self.config.ray_num_gpus
            if self.address is not None:
                reachable(self.address)
            with secrets_withheld(), _handlers_kept():
                try:
                    ray.init(address=self.address, **options)
                except (ConnectionError, RuntimeError, ValueError) as exc:
                    where = self.address or "a local cluster"
                    raise BadInput(
                        f"could not start Ray on {where}: {str(exc).splitlines()[0]}",
                        hint="check ray.address (or RAY_ADDRESS); see docs/scale-out.md",
                    ) from None
            self._started = True
        from contribkit.run import worker

        if self.config.max_parallel <= 0:
            self.jobs = max(1, int(ray.cluster_resources().get("CPU", 1)))
        ray.cloudpickle.register_pickle_by_value(worker)
        self._remote = ray.remote(worker.run_bootstrap)
        return self._remote

    def gpus_available(self) -> bool:
        self._connect()
        return bool(self.ray.cluster_resources().get("GPU", 0))

    def submit(self, tasks: Sequence[LegTask]) -> Iterator[LegResult]:
        from contribkit.run.probe import probe_source

        remote = self._connect()
        ray = self.ray
        bootstrap = probe_source("remote_leg.py")
        waiting = list(tasks)
        mine: dict[Any, LegTask] = {}
        try:
            while waiting or mine:
                while waiting and len(mine) < self.jobs:
                    task = waiting.pop(0)
                    try:
                        packed = task.packed()
                    except BadInput as exc:  # too large: this leg fails, the others run
                        yield error_result(task, self.name, exc.message)
                        continue
                    ref = remote.options(
                        num_cpus=1, num_gpus=1 if task.gpu else 0, max_retries=0
                    ).remote(
                        task.python,
                        bootstrap,
                        packed,
                        [*SECRET_PATTERNS, *task.scrub],
                        task.timeout + GRACE_S,
                        self.config.sandbox_mode,
                        self.config.network,
                        task.gpu,
                    )
                    mine[ref] = task
                    self._pending[ref] = task
                if not mine:
                    continue
                done, _ = ray.wait(list(mine), num_returns=1, timeout=0.5)
                for ref in done:
                    task = mine.pop(ref)
                    self._pending.pop(ref, None)
                    yield self._result(task, ref)
        finally:
            if mine:  # closed early, or an exception (Ctrl-C, SIGTERM) came through here
                self._cancel(list(mine))

    def _result(self, task: LegTask, ref: Any) -> LegResult:
        try:
            reply = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:  # a lost worker, a cancelled task
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return error_result(task, self.name, f"the Ray task failed: {why[:300]}")
        return reply_result(task, self.name, reply, "the worker")

    def _cancel(self, refs: list[Any]) -> None:
        for ref in refs:
            self._pending.pop(ref, None)
            try:
                self.ray.cancel(ref, force=True)
            except Exception:  # finished meanwhile, or the cluster is gone: nothing to stop
                continue

    def cancel(self) -> None:
        if self._remote is not None:
            self._cancel(list(self._pending))

    def close(self) -> None:
        if self._started:
            self._started = False
            self.ray.shutdown()
