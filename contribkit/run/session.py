"""``contribkit run`` behind its options: resolve the matrix, run it and record it, or read the
latest record back.

:func:`run_session` takes a :class:`RunRequest` (the command's options) and returns a
:class:`RunOutcome`; the command only prints it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from contribkit.core.errors import BadInput, warn
from contribkit.core.workspace import Workspace

if TYPE_CHECKING:
    from contribkit.core.config import Settings
    from contribkit.run.engine import EngineConfig
    from contribkit.run.record import RunRecord
    from contribkit.run.remote import RemoteHost
    from contribkit.run.runner import RunOptions


@dataclass(frozen=True)
class RunRequest:
    paths: tuple[Path, ...] = ()  # default: the branch's repro and changed test files
    devices: str | None = None  # comma-separated (default: the run.devices setting)
    pythons: tuple[str, ...] = ()  # one column group each (default: the python setting)
    timeout: float | None = None
    jobs: int | None = None
    require: tuple[str, ...] = ()
    expect: str = "not-reproduced"
    keyword: str | None = None
    oracle: str | None = None  # --oracle: the repros' --expect for this run
    cuda_host: str | None = None
    cuda_python: str | None = None
    junit_file: Path | None = None
    last: bool = False  # read the latest record back instead of running
    allow_network: bool = False  # legs may use the network (under the sandbox they may not)
    engine: str | None = None  # local, ray, slurm (default: the run.engine setting)


@dataclass
class RunOutcome:
    root: Path
    path: Path  # the record's file
    record: RunRecord
    hints: list[str] = field(default_factory=list)  # commands that fix what made cells ERROR

    @property
    def exit_code(self) -> int:
        return 0 if self.record.ok else 1


def run_session(request: RunRequest) -> RunOutcome:
    """Run the requested matrix and record it (``last``: the latest record, with a note when
    the tree moved on since)."""
    from contribkit.core.fsutil import atomic_write, check_writable
    from contribkit.core.workspace import resolve_python
    from contribkit.run import dispatch, runner
    from contribkit.run.dispatch import make_engine
    from contribkit.run.probe import install_torch_hint

    ws = Workspace.load()
    root = ws.require_root()
    if request.last:
        if request.paths:
            raise BadInput("--last shows a record; it takes no PATHS", hint="drop the PATHS")
        return last_outcome(root)
    settings = ws.settings
    run_options = options_for(request, settings)
    config = engine_config(request, settings, root)
    if config.name == "local":
        interpreters = [resolve_python(p) for p in request.pythons] or [ws.python()]
    else:  # paths on the workers: nothing to resolve here
        interpreters = list(request.pythons) or [ws.python()]
    if request.junit_file is not None:
        check_writable(request.junit_file)  # before the run, not after it
    remote = remote_host(request, settings)
    if remote is not None and config.name != "local":
        raise BadInput(
            f"--cuda-host sends CUDA legs over ssh; --engine {config.name} sends every leg there",
            hint="drop --cuda-host (or unset run.cuda_host) with --engine " + config.name,
        )
    notes: list[str] = []
    if request.paths:
        found = list(request.paths)
    else:
        found, notes = runner.default_paths(root, settings)
        if not found:
            raise BadInput(
                "nothing to run: " + "; ".join(notes),
                hint="pass PATHS, e.g. contribkit run repros/issue-170398 test/test_nn.py",
            )
    targets = list(dict.fromkeys(runner.classify(p) for p in found))
    with contextlib.ExitStack() as stack:
        if config.name == "local":  # its engines are made per column (ssh hosts too)
            columns = runner.local_columns(interpreters, run_options.devices, settings, remote)
        else:
            from contribkit.git import cmd as gitcmd

            gitcmd.ensure_excluded(root)  # before .contribkit/slurm holds a job's files
            engine = stack.enter_context(make_engine(config, run_options.jobs))
            columns = runner.engine_columns(interpreters, run_options.devices, engine)
        for column in columns:
            if column.remote is None and column.interpreter.torch_version is None:
                warn(
                    f"{column.interpreter.path} cannot import torch: its cells will say so; "
                    + install_torch_hint(column.interpreter.path)
                )
        result = dispatch.run_matrix(
            root, targets, columns, run_options, notes=notes, progress=runner.progress_line
        )
    if request.junit_file is not None:
        from contribkit.run.record import to_junit

        atomic_write(request.junit_file, to_junit(result.record), force=True)
    hints = missing_module_hints(result.record, settings, root)
    return RunOutcome(root, result.path, result.record, hints)


def missing_module_hints(record: RunRecord, settings: Settings, root: Path) -> list[str]:
    """For each local interpreter whose cells failed to import a test module (pytest, numpy,
    expecttest, hypothesis), the one line that installs every one it lacks, as doctor prints it."""
    from contribkit.core.cache import JsonCache, cache_root
    from contribkit.run.testdeps import KNOWN, check_test_deps, missing_module

    hints = []
    for interp in record.interpreters:
        named = {
            missing_module(cell.detail)
            for cell in record.cells
            if cell.status == "ERROR" and cell.interpreter == interp.index
        }
        wanted = sorted(m for m in named if m in KNOWN)
        if interp.host is not None or not wanted:
            continue
        deps = check_test_deps(
            interp.path,
            JsonCache(cache_root(settings), "probes"),
            scrub=settings.names("scrub_env"),
            also=wanted,
            root=root,
        )
        if deps.missing:
            hints.append(deps.fix)
    return hints


def options_for(request: RunRequest, settings: Settings) -> RunOptions:
    """The devices, requirements and limits of a run: the request's, else the settings'."""
    from contribkit.run import runner

    device_list = runner.parse_devices(request.devices or settings.names("run.devices"))
    required = runner.parse_devices(request.require) if request.require else []
    missing = [d for d in required if d not in device_list]
    if missing:
        raise BadInput(
            f"--require {missing[0]} needs {missing[0]} in --devices",
            hint=f"add it: --devices {','.join([*device_list, *missing])}",
        )
    from contribkit.core.sandbox import from_settings
    from contribkit.core.verdict import check_expect

    sandbox = from_settings(settings, network=request.allow_network)
    return runner.RunOptions(
        devices=device_list,
        require=required,
        expect=request.expect,
        timeout=request.timeout or settings.number("run.timeout"),
        jobs=request.jobs or settings.integer("run.jobs") or runner.default_jobs(),
        keyword=request.keyword,
        oracle=check_expect(request.oracle, "--oracle") if request.oracle else None,
        scrub=list(settings.names("scrub_env")),
        sandbox=sandbox,
    )


def engine_config(request: RunRequest, settings: Settings, root: Path) -> EngineConfig:
    """Where the legs go: ``--engine``, else ``run.engine``, with the engine's settings
    (a repository's own file chooses none of them until trusted: core/trust.py)."""
    from contribkit.run.engine import ENGINES, EngineConfig

    name = request.engine or settings.text("run.engine")
    if name not in ENGINES:
        raise BadInput(
            f"unknown engine '{name}'", hint=f"engines are {', '.join(ENGINES)}, e.g. --engine ray"
        )
    gpus = settings.integer("ray.num_gpus")
    folder = settings.optional_text("slurm.folder")
    parallel = settings.integer(f"{name}.max_parallel") if name != "local" else 0
    return EngineConfig(
        name=name,
        ray_address=settings.optional_text("ray.address"),
        ray_num_cpus=max(1, settings.integer("ray.num_cpus")),
        ray_num_gpus=None if gpus < 0 else gpus,
        slurm_cluster=settings.text("slurm.cluster"),
        slurm_folder=Path(folder).expanduser() if folder else root / ".contribkit" / "slurm",
        slurm_partition=settings.optional_text("slurm.partition"),
        max_parallel=request.jobs or max(0, parallel),
        sandbox_mode=settings.text("run.sandbox"),
        network=request.allow_network,
    )


def remote_host(request: RunRequest, settings: Settings) -> RemoteHost | None:
    """Where the CUDA legs run over ssh, when a host is asked for or configured."""
    host = request.cuda_host or settings.optional_text("run.cuda_host")
    if not host:
        return None
    from contribkit.run.remote import RemoteHost

    return RemoteHost(
        host,
        python=request.cuda_python or settings.text("run.cuda_python"),
        scrub=tuple(settings.names("scrub_env")),
    )


def last_outcome(root: Path) -> RunOutcome:
    """The latest record, noting when HEAD or the working tree changed since it was made."""
    from contribkit.git import facts as gitfacts
    from contribkit.run.record import latest_record

    latest = latest_record(root)
    if latest is None:
        raise BadInput("no run record in .contribkit/runs", hint="run `contribkit run` first")
    path, record = latest
    state = gitfacts.tree_state(root)
    stale = None
    if state.head != record.head:
        stale = f"the record is for {record.short_head}; HEAD is now {state.short_head}"
    elif state.diff_hash != record.diff_hash:
        stale = "the working tree changed since this record"
    if stale:
        record.notes.append(stale)
    return RunOutcome(root, path, record)
