"""Running a debug plan (``contribkit debug --run``): the same runs the generated script makes,
through the runner wrapper, each confined (:mod:`contribkit.core.confine`); each run's log is
summarised."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contribkit.core.confine import leg_space, run_code, working_tree
from contribkit.core.errors import BadInput
from contribkit.core.fsutil import open_new
from contribkit.core.sandbox import Sandbox
from contribkit.debug.logsummary import RunSummary, read_log, summarise
from contribkit.debug.plan import BACKENDS, DebugPlan, runner_source
from contribkit.run.probe import install_torch_hint
from contribkit.target.reprolib import CHILD_ENV, VERDICT_EXIT

DEBUG_LOG_CAP = 64 * 1024 * 1024
TIMEOUT_EXIT = 124  # as GNU timeout
ARTEFACT_FILES = ("TORCH_LOGS_OUT",)  # path settings that name a file (the others: folders)


@dataclass
class BackendRun:
    """One run of the target: the whole run, or one backend of an ablation."""

    backend: str | None
    exit_code: int
    timed_out: bool
    duration_s: float
    log: Path
    summary: RunSummary
    report: dict[str, Any] | None  # what the runner counted (compile calls, Dynamo counters)
    log_truncated: bool = False

    @property
    def status(self) -> str:
        """PASS/FAIL from the exit code, or the repro's own verdict when it printed one."""
        if self.timed_out:
            return "TIMEOUT"
        verdict = self.summary.verdict[0] if self.summary.verdict else None
        if verdict in VERDICT_EXIT:
            return verdict
        return "PASS" if self.exit_code == 0 else "FAIL"

    @property
    def failed(self) -> bool:
        return self.status in ("FAIL", "REPRODUCED", "TIMEOUT")

    def as_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "status": self.status,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "duration_s": round(self.duration_s, 3),
            "log": str(self.log),
            "log_truncated": self.log_truncated,
            # counted only where the runner wraps torch.compile (an ablation)
            "compile_calls": (self.report or {}).get("compile_calls") if self.backend else None,
            "dynamo": (self.report or {}).get("dynamo"),
            **self.summary.as_dict(),
        }


@dataclass
class DebugRun:
    plan: DebugPlan
    runs: list[BackendRun] = field(default_factory=list)
    artefacts: list[tuple[str, str]] = field(default_factory=list)
    sandbox: Sandbox | None = None  # how the runs were confined

    @property
    def first_failure(self) -> BackendRun | None:
        return next((r for r in self.runs if r.failed), None)

    @property
    def exit_code(self) -> int:
        """The script's exit code. For an ablation: that of the first failing backend; else 125
        (the repro contract's CANNOT_RUN) when some backend could not run the repro; else 0."""
        if not self.plan.ablation:
            return self.runs[0].exit_code
        first = self.first_failure
        if first:
            return first.exit_code
        return VERDICT_EXIT["CANNOT_RUN"] if any(r.status == "CANNOT_RUN" for r in self.runs) else 0

    def as_dict(self) -> dict[str, Any]:
        first = self.first_failure
        data: dict[str, Any] = {
            "script": str(self.plan.target),
            "python": self.plan.python,
            "torch_version": self.plan.registry.torch_version,
            "torch_logs": str(self.plan.logs),
            "presets": self.plan.presets,
            "exit_code": self.exit_code,
            "artefacts": [{"kind": k, "path": p} for k, p in self.artefacts],
            "notes": [self.plan.note_text(n) for n in self.plan.notes],
            "warnings": self.plan.warnings,
            "sandbox": self.sandbox.kind if self.sandbox else "none",
            "sandbox_reason": self.sandbox.reason if self.sandbox else "",
        }
        if self.plan.ablation:
            data["ablation"] = [r.as_dict() for r in self.runs]
            data["first_failure"] = first.backend if first else None
            data["first_failure_points_at"] = (
                BACKENDS[first.backend] if first and first.backend else None
            )
        else:
            data["run"] = self.runs[0].as_dict()
        return data


def check_runnable(plan: DebugPlan) -> None:
    """A run needs torch in the target interpreter: say so clearly when it is missing."""
    if plan.registry.fallback:
        raise BadInput(
            f"cannot run: torch is not importable by {plan.python} ({plan.registry.error})",
            hint=install_torch_hint(plan.python),
        )


def exit_code_of(returncode: int | None) -> int:
    if returncode is None:
        return TIMEOUT_EXIT
    return 128 + abs(returncode) if returncode < 0 else returncode


def artefact_places(plan: DebugPlan, backend: str | None) -> list[Path]:
    """The files and folders the run itself writes (torch's log file, the trace and debug
    folders), made afresh: a link or file an earlier run left there is removed, not followed.
    These alone are writable from inside the sandbox; the logs contribkit writes are not."""
    names = {v.name for v in plan.env if v.path}
    places = []
    for name, value in plan.env_values(backend).items():
        if name not in names:
            continue
        path = Path(value)
        if name in ARTEFACT_FILES:
            open_new(path, replace=True).close()
        else:
            if path.is_symlink() or path.is_file():
                path.unlink()
            path.mkdir(parents=True, exist_ok=True)
        places.append(path)
    return places


def run_plan(
    plan: DebugPlan,
    *,
    scrub: Sequence[str] = (),
    timeout: float | None = None,
    sandbox: Sandbox | None = None,
) -> DebugRun:
    """Run the target as the script would, each run (each backend of an ablation) confined in
    a scratch folder of its own (:func:`contribkit.core.confine.run_code`), and summarise it."""
    check_runnable(plan)
    sandbox = sandbox or Sandbox("none", "not asked for")
    result = DebugRun(plan, sandbox=sandbox)
    started = time.time()
    runner = runner_source()
    backends: list[str | None] = list(BACKENDS) if plan.ablation else [None]
    for backend in backends:
        log = plan.artefact(f".{backend}.log") if backend else plan.log_path
        log.parent.mkdir(parents=True, exist_ok=True)
        with leg_space() as space:
            flags = ["--report", str(space.path("report.json"))]
            if plan.anomaly:
                flags.append("--anomaly")
            if backend:
                flags += ["--backend", backend]
            child = run_code(
                [plan.python, "-c", runner, *flags, "--", str(plan.target), *plan.script_args],
                space=space,
                sandbox=sandbox,
                python=plan.python,
                readable=working_tree(plan.target),
                cwd=plan.target.parent,
                # CHILD_ENV: a repro runs in this process (its runner wraps torch.compile here)
                # rather than re-running itself in a child under its own time limit.
                env={**plan.env_values(backend), CHILD_ENV: "1"},
                scrub=scrub,
                writable=artefact_places(plan, backend),
                gpu=True,  # a debug session is often about a CUDA failure
                timeout=timeout,
                log_path=log,
                log_cap=DEBUG_LOG_CAP,
            )
            report = _parse_json(space.read("report.json"))
        summary = summarise(
            read_log(log),
            graph_breaks_logged=plan.logs_named("graph_breaks"),
            recompiles_logged=plan.logs_named("recompiles")
            or plan.logs_named("recompiles_verbose"),
            dynamo=(report or {}).get("dynamo"),
        )
        result.runs.append(
            BackendRun(
                backend=backend,
                exit_code=exit_code_of(child.returncode),
                timed_out=child.timed_out,
                duration_s=child.duration_s,
                log=log,
                summary=summary,
                report=report,
                log_truncated=child.log_truncated,
            )
        )
    result.artefacts = collect_artefacts(plan, result.runs, since=started)
    return result


def _parse_json(text: str | None) -> dict[str, Any] | None:
    try:
        data = json.loads(text) if text is not None else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def collect_artefacts(
    plan: DebugPlan, runs: Sequence[BackendRun], since: float
) -> list[tuple[str, str]]:
    """Where this run's outputs went: logs, trace, debug dirs and generated code."""
    found: list[tuple[str, str]] = []

    def add(kind: str, path: Path | str) -> None:
        p = Path(path)
        empty_file = p.is_file() and p.stat().st_size == 0
        if (kind, str(path)) not in found and p.exists() and not empty_file:
            found.append((kind, str(path)))

    for run in runs:
        add("combined output" + (f" ({run.backend})" if run.backend else ""), run.log)
    env = plan.env_values()
    for backend in [r.backend for r in runs]:
        add("torch logs", plan.env_values(backend)["TORCH_LOGS_OUT"])
    if "TORCH_TRACE" in env:
        add("trace dir (TORCH_TRACE)", env["TORCH_TRACE"])
    if "TORCH_COMPILE_DEBUG_DIR" in env:
        root = Path(env["TORCH_COMPILE_DEBUG_DIR"], "torch_compile_debug")
        for run_dir in sorted(root.glob("run_*")):
            if run_dir.stat().st_mtime >= since - 1:
                add("debug dir", run_dir)
                for launcher in sorted(run_dir.glob("minifier/minifier_launcher.py")):
                    add("minifier launcher", launcher)
    for run in runs:
        for kind, path in run.summary.artefacts:
            add(kind, path)
    return found


def signal_name(exit_code: int) -> str | None:
    if exit_code > 128:
        try:
            return signal.Signals(exit_code - 128).name
        except ValueError:
            return None
    return None
