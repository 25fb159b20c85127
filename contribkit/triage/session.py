"""``contribkit triage`` behind its options: probe the interpreters, run every repro on each
interpreter and device, read the boundary and the states, and record it all.

The legs are ``run``'s: :func:`contribkit.run.runner.plan` makes one per (repro, device,
interpreter) and :func:`contribkit.run.runner.execute` runs them through
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

from contribkit.core.errors import BadInput
from contribkit.core.workspace import Workspace
from contribkit.run.record import Cell
from contribkit.run.runner import Target
from contribkit.triage.model import TriageRecord, TriageRepro
from contribkit.triage.sources import Wanted

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
    from contribkit.run import runner
    from contribkit.run.record import new_record_id, utc_now_iso
    from contribkit.run.session import RunRequest, options_for, remote_host
    from contribkit.triage import sources

    ws = Workspace.load()
    root = ws.root or Path.cwd()
    pythons = list(request.pythons)
    if request.venvs_dir is not None:
        pythons += sources.venv_pythons(request.venvs_dir)
    interpreters = list(dict.fromkeys(resolve_python(p) for p in pythons)) or [ws.python()]
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
    run_request = RunRequest(
        devices=request.devices,
        jobs=request.jobs,
        timeout=request.timeout,
        allow_network=request.allow_network,
        cuda_host=request.cuda_host,
        cuda_python=request.cuda_python,
    )
    options = options_for(run_request, ws.settings)
    remote = remote_host(run_request, ws.settings)
    repros, targets = _repros(wanted, root)
    if not targets:
        more = f" (and {len(repros) - 1} more)" if len(repros) > 1 else ""
        raise BadInput(
            f"nothing to run: {repros[0].missing}{more}",
            hint="make the repros first: contribkit repro N",
        )
    columns = runner.local_columns(interpreters, options.devices, ws.settings, remote)
    if ws.root is not None:
        from contribkit.git.cmd import ensure_excluded

        ensure_excluded(ws.root)  # the logs and the record go under .contribkit/
    record_id = new_record_id("triage")
    logs_dir = root / TRIAGE_DIR / record_id
    logs_dir.mkdir(parents=True, exist_ok=True)
    planned = runner.plan(root, targets, columns)
    legs = [p for p in planned if isinstance(p, runner.Leg)]
    ran = runner.execute(legs, runner.LegRunner(root, logs_dir, options), options.jobs, on_leg)
    ran_iter = iter(ran[i] for i in range(len(legs)))
    cells = [next(ran_iter) if isinstance(p, runner.Leg) else p for p in planned]
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
