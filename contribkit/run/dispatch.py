"""Legs to engines: one matrix's legs dispatched, each engine in a thread (``execute``); the
engine a name picks (``make_engine``); a whole matrix run and recorded (``run_matrix``).

The local legs go to one :class:`~engine_local.LocalEngine` (this machine's GPUs), the CUDA legs
of an ssh column to one :class:`~engine_local.SshEngine` per host, and a ray or slurm column's
legs to that column's engine. Each engine's ``submit`` runs in a thread of its own; the main
thread turns results into cells as they come, and Ctrl-C, SIGTERM or SIGHUP (``Terminated``)
cancel every engine's outstanding legs before re-raising.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from contribkit.core.errors import BadInput
from contribkit.run.engine import ENGINES, Engine, EngineConfig

if TYPE_CHECKING:
    from contribkit.core.sandbox import Sandbox
    from contribkit.run.record import Cell, RunRecord
    from contribkit.run.runner import Column, Leg, LegRunner, RunOptions, Target

ProgressFn = Callable[[int, int, "Cell"], None]


def engines_for(legs: Sequence[Leg], options: RunOptions) -> dict[str, Engine]:
    """The engine of each column's label: local (this machine's GPUs), ssh per host, the
    column's own (ray, slurm)."""
    from contribkit.run.engine_local import LocalEngine, SshEngine
    from contribkit.run.runner import gpu_ids

    engines: dict[str, Engine] = {}
    for leg in legs:
        label = column_label(leg.column)
        if label in engines:
            continue
        if leg.column.engine is not None:
            engines[label] = leg.column.engine
        elif leg.column.remote is not None:
            count = leg.column.interpreter.device_count
            engines[label] = SshEngine(leg.column.remote, options.jobs, gpu_ids(count, {}))
        else:
            count = max(
                lg.column.interpreter.device_count for lg in legs if not column_label(lg.column)
            )
            engines[label] = LocalEngine(options.jobs, gpu_ids(count), options.sandbox)
    return engines


def column_label(column: Column) -> str:
    if column.engine is not None:
        return column.engine.label
    return f"ssh:{column.remote.host}" if column.remote is not None else ""


def execute(
    legs: Sequence[Leg], runner: LegRunner, jobs: int, progress: ProgressFn | None = None
) -> dict[int, Cell]:
    """Run ``legs`` on their engines, each engine in a thread of its own; returns cells by leg
    index. Ctrl-C, SIGTERM or SIGHUP (``Terminated``) cancels every engine's outstanding legs
    and re-raises."""
    engines = engines_for(legs, replace(runner.options, jobs=jobs))
    done: queue.Queue[tuple[int, Cell] | BaseException | None] = queue.Queue()
    cells: dict[int, Cell] = {}

    def feed(label: str, engine: Engine) -> None:
        mine = [i for i, leg in enumerate(legs) if column_label(leg.column) == label]
        try:
            tasks = [runner.task(i, legs[i]) for i in mine]
            for result in engine.submit(tasks):
                done.put((result.key, runner.cell(legs[result.key], result)))
        except BaseException as exc:  # handed to the main thread, which re-raises it
            done.put(exc)
        finally:
            done.put(None)

    threads = [
        threading.Thread(target=feed, args=item, name=f"engine-{item[0] or 'local'}", daemon=True)
        for item in engines.items()
    ]
    for thread in threads:
        thread.start()
    try:
        running = len(threads)
        while running:
            try:
                item = done.get(timeout=0.5)  # wakes up, so Ctrl-C is seen promptly
            except queue.Empty:
                continue
            if item is None:
                running -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                cells[item[0]] = item[1]
                if progress is not None:
                    progress(len(cells), len(legs), item[1])
    except BaseException:
        for engine in engines.values():
            engine.cancel()
        for thread in threads:
            thread.join(timeout=30)
        raise
    finally:
        for thread in threads:
            thread.join()
    return cells


def make_engine(
    config: EngineConfig, jobs: int, gpus: Sequence[str] = (), sandbox: Sandbox | None = None
) -> Engine:
    """The engine ``config`` names; BadInput when its extra is not installed. ``gpus`` and
    ``sandbox`` are the local engine's (CUDA_VISIBLE_DEVICES ids; how its legs are confined)."""
    if config.name == "local":
        from contribkit.run.engine_local import LocalEngine

        return LocalEngine(jobs, gpus, sandbox)
    if config.name == "ray":
        from contribkit.run.engine_ray import RayEngine

        return RayEngine(config, config.max_parallel)  # 0: the cluster's CPU count
    if config.name == "slurm":
        from contribkit.run.engine_slurm import SlurmEngine

        return SlurmEngine(config, config.max_parallel or jobs)
    raise BadInput(
        f"unknown engine '{config.name}'",
        hint=f"engines are {', '.join(ENGINES)}, e.g. --engine ray",
    )


@dataclass
class RunResult:
    record: RunRecord
    path: Path


def run_matrix(
    root: Path,
    targets: Sequence[Target],
    columns: Sequence[Column],
    options: RunOptions,
    *,
    notes: Sequence[str] = (),
    progress: ProgressFn | None = None,
) -> RunResult:
    """Run every leg, then write the record (atomically) and return it."""
    from contribkit import __version__
    from contribkit.git import cmd as gitcmd
    from contribkit.git import facts as gitfacts
    from contribkit.run.record import (
        RunRecord,
        evaluate,
        is_required,
        new_record_id,
        redacted,
        runs_dir,
        utc_now_iso,
        write_record,
    )
    from contribkit.run.runner import Leg, LegRunner, file_digest, plan, relpath

    gitcmd.ensure_excluded(root)  # before anything is written under .contribkit/
    before = gitfacts.tree_state(root)
    run_id = new_record_id(before.head)
    logs_dir = runs_dir(root) / run_id
    logs_dir.mkdir(parents=True, exist_ok=True)
    files = {relpath(t.path, root): file_digest(t.path) for t in targets}
    planned = plan(root, targets, columns)
    legs = [p for p in planned if isinstance(p, Leg)]
    leg_runner = LegRunner(root, logs_dir, options)
    ran = execute(legs, leg_runner, options.jobs, progress)
    ran_iter = iter(ran[i] for i in range(len(legs)))
    cells = [next(ran_iter) if isinstance(p, Leg) else p for p in planned]
    all_notes = list(notes)
    for target in targets:
        if target.kind == "pytest" and not any(c.file == relpath(target.path, root) for c in cells):
            all_notes.append(
                f"{relpath(target.path, root)} is a plain test file: it runs only in the cpu "
                "column, which --devices leaves out"
            )
    for cell in cells:
        cell.required = is_required(cell, options.require)
    remote = [c.interpreter.host for c in columns if c.remote is not None and c.devices]
    if options.sandbox.active and remote:
        all_notes.append(f"the CUDA legs on {remote[0]} ran without a sandbox (remote host)")
    for where, why in sorted(leg_runner.unconfined.items()):
        if not where.startswith("ssh "):  # said above, as before
            all_notes.append(f"legs on {where} ran without a sandbox ({why})")
    after = gitfacts.tree_state(root)
    dirty = before.dirty
    if (after.head, after.diff_hash) != (before.head, before.diff_hash):
        dirty = True
        all_notes.append("the tree changed while the run was going; the record counts as dirty")
    ok, reason = evaluate(cells, options.expect)
    record = RunRecord(
        id=run_id,
        created=utc_now_iso(),
        head=before.head,
        branch=before.branch,
        dirty=dirty,
        diff_hash=before.diff_hash,
        expect=options.expect,
        devices=list(options.devices),
        require=list(options.require),
        interpreters=[c.interpreter for c in columns],
        cells=cells,
        files=files,
        ok=ok,
        reason=reason,
        uncommitted=list(before.uncommitted[:200]),
        notes=all_notes,
        keyword=options.keyword,
        contribkit_version=__version__,
        sandbox=options.sandbox.kind,
        sandbox_reason=options.sandbox.reason,
        oracle=options.oracle,
    )
    record = redacted(record)
    return RunResult(record, write_record(root, record))
