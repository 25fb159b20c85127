"""Legs to engines: ``runner.execute``'s dispatch of one matrix's legs, each engine in a thread.

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
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contribkit.run.engine import Engine
    from contribkit.run.record import Cell
    from contribkit.run.runner import Column, Leg, LegRunner, RunOptions

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
