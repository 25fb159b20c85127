"""``--engine slurm``: legs as Slurm jobs through submitit (the ``contribkit[slurm]`` extra).

Each leg is one job running :func:`contribkit.run.worker.run_bootstrap`, with its files in the
job's arguments and its output in the job's result. submitit pickles both into
``slurm.folder``, which the submitting machine and the nodes must share, and starts the job with
this interpreter: the nodes see this virtual environment (on the shared file system) and run the
column's interpreter (``--python``, a path on the nodes) for the leg. ``slurm.cluster`` is
``auto`` (Slurm where ``sbatch`` is, else submitit's local executor), ``slurm`` or ``local``. A
leg that needs a GPU asks ``gpus_per_node=1``; the job's time limit is the leg's timeout and a
grace; at most ``jobs`` jobs are in flight; cancelling is ``scancel`` (local: the job's process
dies, and the bootstrap under it kills its leg's process group). Jobs are submitted from an
environment without secrets: Slurm exports the submitter's environment to the job.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
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

CLUSTERS = ("auto", "slurm", "local")
EXTRA_HINT = "install the extra: pip install 'contribkit[slurm]'"


class SlurmEngine(Engine):
    name = "slurm"

    def __init__(self, config: EngineConfig, jobs: int) -> None:
        super().__init__(jobs)
        try:
            import submitit
        except ImportError as exc:
            raise BadInput(f"--engine slurm needs submitit ({exc})", hint=EXTRA_HINT) from None
        if config.slurm_cluster not in CLUSTERS:
            raise BadInput(
                f"slurm.cluster is {config.slurm_cluster!r}",
                hint=f"set slurm.cluster to one of {', '.join(CLUSTERS)}",
            )
        if config.slurm_folder is None:
            raise BadInput(
                "--engine slurm needs a folder shared with the nodes",
                hint="set slurm.folder, e.g. contribkit config slurm.folder ~/shared/contribkit",
            )
        self.config = config
        # A folder per run in the shared one: its jobs' pickles and logs, removed at the end.
        self.folder = Path(tempfile.mkdtemp(prefix="run-", dir=self._shared(config)))
        cluster = None if config.slurm_cluster == "auto" else config.slurm_cluster
        self.executor = submitit.AutoExecutor(folder=str(self.folder / "%j"), cluster=cluster)
        self.cluster: str = str(self.executor.cluster)
        self._pending: dict[str, Any] = {}

    @staticmethod
    def _shared(config: EngineConfig) -> Path:
        assert config.slurm_folder is not None
        shared = Path(config.slurm_folder).expanduser()
        try:
            shared.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(
                f"slurm.folder {shared} cannot be made ({exc.strerror})",
                hint="set slurm.folder to a folder shared with the nodes that you can write",
            ) from None
        return shared

    @property
    def label(self) -> str:
        return "slurm" if self.cluster == "slurm" else f"slurm:{self.cluster}"

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def gpus_available(self) -> bool:
        return self.cluster == "slurm"  # a partition with GPUs is the user's to name

    def _submit(self, task: LegTask, bootstrap: str, packed: str) -> Any:
        from contribkit.run import worker

        limit = task.timeout + GRACE_S
        params: dict[str, Any] = {
            "timeout_min": max(1, math.ceil(limit / 60) + 1),
            "gpus_per_node": 1 if task.gpu else 0,
            "cpus_per_task": 1,
            "name": f"contribkit-leg-{task.key}",
        }
        if self.config.slurm_partition:
            params["slurm_partition"] = self.config.slurm_partition
        self.executor.update_parameters(**params)
        with secrets_withheld():  # the job inherits (Slurm: exports) this environment
            return self.executor.submit(
                worker.run_bootstrap,
                task.python,
                bootstrap,
                packed,
                [*SECRET_PATTERNS, *task.scrub],
                limit,
                self.config.sandbox_mode,
                self.config.network,
                task.gpu,
            )

    def submit(self, tasks: Sequence[LegTask]) -> Iterator[LegResult]:
        from contribkit.run.probe import probe_source

        bootstrap = probe_source("remote_leg.py")
        waiting = list(tasks)
        mine: dict[str, tuple[Any, LegTask]] = {}
        try:
            while waiting or mine:
                while waiting and len(mine) < self.jobs:
                    task = waiting.pop(0)
                    try:
                        job = self._submit(task, bootstrap, task.packed())
                    except BadInput as exc:  # too large: this leg fails, the others run
                        yield error_result(task, self.name, exc.message)
                        continue
                    except Exception as exc:  # sbatch refused it (a partition, a limit)
                        raise BadInput(
                            f"Slurm refused a job: {str(exc).strip().splitlines()[-1][:300]}",
                            hint="check slurm.partition and slurm.folder (docs/scale-out.md)",
                        ) from None
                    mine[job.job_id] = (job, task)
                    self._pending[job.job_id] = job
                finished = [jid for jid, (job, _) in mine.items() if job.done()]
                if not finished:
                    time.sleep(0.2)
                for jid in finished:
                    job, task = mine.pop(jid)
                    self._pending.pop(jid, None)
                    yield self._result(job, task)
        finally:
            if mine:  # closed early, or an exception (Ctrl-C, SIGTERM) came through here
                self._cancel([job for job, _ in mine.values()])

    def _result(self, job: Any, task: LegTask) -> LegResult:
        try:
            reply = job.result()
        except Exception as exc:  # submitit's FailedJobError, UncompletedJobError
            lines = str(exc).strip().splitlines() or [type(exc).__name__]
            return error_result(task, self.name, f"Slurm job {job.job_id} failed: {lines[0][:300]}")
        finally:  # what the leg printed is in the record now; the job's pickles go
            shutil.rmtree(self.folder / str(job.job_id), ignore_errors=True)
        return reply_result(task, self.name, reply, "the job")

    def _cancel(self, jobs: list[Any]) -> None:
        for job in jobs:
            self._pending.pop(job.job_id, None)
            try:
                if not self._interrupt_local(job):
                    job.cancel(check=False)  # scancel
            except Exception:  # finished meanwhile, or scancel is gone: nothing to stop
                continue
        for job in jobs:  # the local executor's job: wait for its process to go
            process = getattr(job, "_process", None)
            if process is not None:
                try:
                    process.wait(timeout=10)
                except Exception:
                    process.kill()

    def _interrupt_local(self, job: Any) -> bool:
        """Ctrl-C to a local job's task itself: its leg goes (run_bootstrap kills the guard) and
        submitit's controller ends quietly (interrupted itself, it prints a traceback on
        contribkit's terminal). False where it is not a local job still running."""
        process = getattr(job, "_process", None)
        if self.cluster != "local" or process is None or process.poll() is not None:
            return False
        try:
            with open(f"/proc/{process.pid}/task/{process.pid}/children") as fh:
                tasks = [int(pid) for pid in fh.read().split()]
        except OSError:  # not Linux: submitit's own cancel
            return False
        for pid in tasks:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGINT)
        return bool(tasks)

    def cancel(self) -> None:
        self._cancel(list(self._pending.values()))
