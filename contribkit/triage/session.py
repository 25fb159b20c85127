"""``contribkit triage`` behind its options: probe the interpreters, run every repro on each
interpreter and device, read the boundary and the states, and record it all.

The legs are ``run``'s: :func:`contribkit.run.runner.plan` makes one per (repro, device,
interpreter) and :func:`contribkit.run.dispatch.execute` runs them through
:class:`~contribkit.run.runner.LegRunner` (scrubbed environment, own process group, timeout,
capped and redacted log, bubblewrap where there is one; CPU legs ``-j`` at a time, CUDA legs one
per GPU). Whatever runs a ``run`` leg (a local child, the ssh host's payload, an engine) runs a
triage leg the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from contribkit.core.errors import BadInput
from contribkit.core.workspace import Workspace
from contribkit.run.record import Cell
from contribkit.run.runner import Target
from contribkit.triage.model import TriageRecord, TriageRepro
from contribkit.triage.sources import Wanted

if TYPE_CHECKING:
    from contribkit.core.config import Settings
    from contribkit.run.engine import EngineConfig
    from contribkit.run.remote import RemoteHost
    from contribkit.run.runner import Column, RunOptions

TRIAGE_DIR = Path(".contribkit") / "triage"
LegFn = Callable[[int, int, Cell], None]  # legs done, legs in all, the cell that just finished


@dataclass(frozen=True)
class TriageRequest:
    repros: tuple[Path, ...] = ()
    issues: str | None = None  # --issues FILE ('-': stdin)
    pythons: tuple[str, ...] = ()
    venvs_dir: Path | None = None
    devices: str | None = None  # comma-separated (default: run.devices)
    jobs: int | None = None
    timeout: float | None = None
    allow_network: bool = False
    cuda_host: str | None = (
        None  # CUDA legs over ssh, as `run --cuda-host` (default: run.cuda_host)
    )
    cuda_python: str | None = None
    engine: str | None = None  # local, ray, slurm (default: the run.engine setting)


@dataclass
class TriageOutcome:
    root: Path | None
    record: TriageRecord
    record_path: str
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 0 if self.record.decided else 1


def triage_session(request: TriageRequest, on_leg: LegFn | None = None) -> TriageOutcome:
    from contribkit import __version__
    from contribkit.core.workspace import resolve_python
    from contribkit.run.record import new_record_id, utc_now_iso
    from contribkit.run.session import RunRequest, engine_config, options_for, remote_host
    from contribkit.triage import sources

    ws = Workspace.load()
    root = ws.root or Path.cwd()
    pythons = list(request.pythons)
    if request.venvs_dir is not None:
        pythons += sources.venv_pythons(request.venvs_dir)
    run_request = RunRequest(
        devices=request.devices,
        jobs=request.jobs,
        timeout=request.timeout,
        allow_network=request.allow_network,
        cuda_host=request.cuda_host,
        cuda_python=request.cuda_python,
        engine=request.engine,
    )
    config = engine_config(run_request, ws.settings, root)
    if config.name == "local":
        interpreters = list(dict.fromkeys(resolve_python(p) for p in pythons)) or [ws.python()]
    else:  # paths on the workers: nothing to resolve here
        interpreters = list(dict.fromkeys(pythons)) or [ws.python()]
    wanted = sources.repro_paths(request.repros)
    if request.issues is not None:
        numbers = sources.read_issue_list(request.issues)
        if not numbers:
            raise BadInput(f"{request.issues} names no issue", hint="one issue number per line")
        wanted += sources.issue_repros(numbers, root / ws.settings.text("repros_dir"))
    if not wanted:
        raise BadInput(
            "nothing to triage",
            hint="pass repro folders (e.g. repros/issue-170398 or repros/), or --issues FILE",
        )
    options = options_for(run_request, ws.settings)
    remote = remote_host(run_request, ws.settings)
    if remote is not None and config.name != "local":
        raise BadInput(
            f"--cuda-host sends CUDA legs over ssh; --engine {config.name} sends every leg there",
            hint="drop --cuda-host (or unset run.cuda_host) with --engine " + config.name,
        )
    repros, targets = _repros(wanted, root)
    if not targets:
        more = f" (and {len(repros) - 1} more)" if len(repros) > 1 else ""
        raise BadInput(
            f"nothing to run: {repros[0].missing}{more}",
            hint="make the repros first: contribkit repro N",
        )
    if ws.root is not None:
        from contribkit.git.cmd import ensure_excluded

        ensure_excluded(ws.root)  # the logs and the record go under .contribkit/
    record_id = new_record_id("triage")
    logs_dir = root / TRIAGE_DIR / record_id
    logs_dir.mkdir(parents=True, exist_ok=True)
    columns, cells = _run_legs(
        _Matrix(root, logs_dir, targets, interpreters, options, remote, config, ws.settings),
        on_leg,
    )
    record = TriageRecord(
        id=record_id,
        created=utc_now_iso(),
        devices=list(options.devices),
        interpreters=[c.interpreter for c in columns],
        repros=repros,
        cells=cells,
        jobs=options.jobs,
        sandbox=options.sandbox.kind,
        sandbox_reason=options.sandbox.reason,
        contribkit_version=__version__,
    )
    _note_interpreters(record)
    hosts = [c.interpreter.host for c in columns if c.remote is not None and c.devices]
    if options.sandbox.active and hosts:
        record.notes.append(f"the CUDA legs on {hosts[0]} ran without a sandbox (remote host)")
    from contribkit.triage.report import analyse

    analyse(record)
    return TriageOutcome(ws.root, record, _write(root, record))


@dataclass(frozen=True)
class _Matrix:
    """What the legs of one triage need: where they run, on what, and where their logs go."""

    root: Path
    logs_dir: Path
    targets: list[Target]
    interpreters: list[str]
    options: RunOptions
    remote: RemoteHost | None
    config: EngineConfig
    settings: Settings


def _run_legs(matrix: _Matrix, on_leg: LegFn | None) -> tuple[list[Column], list[Cell]]:
    """Probe the interpreters and run every leg: on this machine (ssh for --cuda-host), or on
    the engine that ``--engine`` names, exactly as ``run`` would; the cells in plan order."""
    import contextlib

    from contribkit.run import dispatch, runner
    from contribkit.run.dispatch import make_engine

    m = matrix
    with contextlib.ExitStack() as stack:
        if m.config.name == "local":
            columns = runner.local_columns(m.interpreters, m.options.devices, m.settings, m.remote)
        else:
            engine = stack.enter_context(make_engine(m.config, m.options.jobs))
            columns = runner.engine_columns(m.interpreters, m.options.devices, engine)
        planned = runner.plan(m.root, m.targets, columns)
        legs = [p for p in planned if isinstance(p, runner.Leg)]
        leg_runner = runner.LegRunner(m.root, m.logs_dir, m.options)
        ran = dispatch.execute(legs, leg_runner, m.options.jobs, on_leg)
    ran_iter = iter(ran[i] for i in range(len(legs)))
    return columns, [next(ran_iter) if isinstance(p, runner.Leg) else p for p in planned]


def _repros(wanted: list[Wanted], root: Path) -> tuple[list[TriageRepro], list[Target]]:
    """A row per repro (an issue without one too), and the scripts to run."""
    from contribkit.run.reprofacts import repro_facts
    from contribkit.run.runner import relpath

    repros: list[TriageRepro] = []
    targets: list[Target] = []
    for item in wanted:
        if item.missing:
            file = relpath(item.path / "repro.py", root)
            repros.append(TriageRepro(item.path.name, file, item.issue, "", "", item.missing))
            continue
        facts = repro_facts(item.path)
        file = relpath(facts.target.path, root)
        if any(r.file == file for r in repros):
            continue  # named twice (a folder and an --issues line)
        name = facts.name if all(r.name != facts.name for r in repros) else file
        command = facts.command("DEVICE")
        repros.append(TriageRepro(name, file, facts.issue or item.issue, command, facts.oracle))
        targets.append(facts.target)
    return repros, targets


def _note_interpreters(record: TriageRecord) -> None:
    for interp in record.interpreters:
        if interp.torch_version is None:
            why = f": {interp.error}" if interp.error else ""
            record.notes.append(f"[{interp.index}] {interp.path} cannot import torch{why}")
    versions = [i.torch_version for i in record.interpreters if i.torch_version]
    if len(record.interpreters) > 1 and len(set(versions)) == 1:
        record.notes.append(f"every interpreter has torch {versions[0]}: no boundary to find")


def _write(root: Path, record: TriageRecord) -> str:
    from contribkit.core.fsutil import atomic_write
    from contribkit.core.redact import current

    rel = TRIAGE_DIR / f"{record.id}.json"
    atomic_write(root / rel, json.dumps(current().value(record.as_dict()), indent=2) + "\n")
    return rel.as_posix()
