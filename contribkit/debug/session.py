"""``contribkit debug`` behind its options: plan a debug session, then write its script, print
it, or run it now.

:func:`debug_session` takes a :class:`DebugRequest` (the command's options) and returns a
:class:`DebugOutcome`; the command only prints it. Warnings go to stderr as they arise, before a
run starts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from contribkit.core.errors import BadInput, warn
from contribkit.core.workspace import Workspace

if TYPE_CHECKING:
    from contribkit.debug.execute import DebugRun
    from contribkit.debug.plan import DebugPlan
    from contribkit.debug.torchlogs import Registry


@dataclass(frozen=True)
class DebugRequest:
    logs: str | None = None  # a TORCH_LOGS spec
    presets: tuple[str, ...] = ()  # preset names, each possibly comma-separated
    script: Path | None = None  # the script to debug (default: the branch's issue's repro)
    output: str | None = None  # where to write the bash script; '-' for stdout
    run_now: bool = False
    timeout: float | None = None  # with run_now (default: the debug.timeout setting)
    allow_network: bool = False  # with run_now: the run may use the network
    minify_after: str = "dynamo"
    minify_level: str = "2"
    python: str | None = None
    force: bool = False
    dry_run: bool = False
    script_args: tuple[str, ...] = ()
    command_line: str = "contribkit debug"  # this invocation, for the script's header

    @property
    def to_stdout(self) -> bool:
        return self.output == "-"


@dataclass
class DebugOutcome:
    plan: DebugPlan
    action: str  # "would run", "ran", "show" (the script is printed, not written) or "wrote"
    run: DebugRun | None = None  # for "ran"
    text: str | None = None  # the script, for "show" and "wrote"

    @property
    def exit_code(self) -> int:
        return self.run.exit_code if self.run is not None else 0


def log_registry(ws: Workspace, interpreter: str) -> Registry:
    """The TORCH_LOGS names ``interpreter``'s torch knows (cached), or the bundled list."""
    from contribkit.core.cache import JsonCache, cache_root
    from contribkit.debug.torchlogs import load_registry

    return load_registry(
        interpreter,
        JsonCache(cache_root(ws.settings), "torch-logs"),
        scrub=ws.settings.names("scrub_env"),
    )


def list_logs(python: str | None) -> Registry:
    """``--list-logs``: the registry of the target interpreter."""
    ws = Workspace.load(python=python)
    return log_registry(ws, ws.python())


def target_script(ws: Workspace, script: Path | None) -> Path:
    from contribkit.debug import plan as debugenv
    from contribkit.git import cmd as gitcmd

    if script is None:
        branch = gitcmd.current_branch(ws.root) if ws.root else None
        if ws.root is not None:
            from contribkit.core.workspace import repros_path

            repros_path(ws.root, ws.settings)  # inside the repository, or bad input
        return debugenv.default_script(ws.root, branch, ws.settings.text("repros_dir"))
    path = script.expanduser().absolute()
    if not path.is_file():
        raise BadInput(f"script {script} not found", hint="pass --script PATH to a Python file")
    return path


def exclude_artefacts(ws: Workspace, plan: DebugPlan) -> None:
    """Keep the script and its artefacts out of commits (.git/info/exclude)."""
    from contribkit.git import cmd as gitcmd

    if ws.root is None:
        return
    try:
        rel = Path(os.path.realpath(plan.stem)).relative_to(os.path.realpath(ws.root))
    except ValueError:  # written outside the repository
        return
    pattern = re.sub(r"([\\*?\[])", r"\\\1", rel.as_posix())  # gitignore glob characters
    gitcmd.ensure_excluded(ws.root, (f"/{pattern}.*",))


def repro_device_args(
    ws: Workspace, interpreter: str, target: Path, script_args: tuple[str, ...]
) -> tuple[str, ...]:
    """A contribkit repro without ``--device`` (nor ``CONTRIBKIT_DEVICE``) gets one that is
    available: cuda where the interpreter's torch sees a GPU, else cpu; said on stderr."""
    from contribkit.target.reprolib import VERDICT_PREFIX

    if any(a == "--device" or a.startswith("--device=") for a in script_args):
        return script_args
    if os.environ.get("CONTRIBKIT_DEVICE"):
        return script_args
    try:
        text = target.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return script_args
    if VERDICT_PREFIX not in text or "--device" not in text:
        return script_args
    from contribkit.core.cache import JsonCache, cache_root
    from contribkit.run.probe import probe_torch

    info = probe_torch(
        interpreter,
        JsonCache(cache_root(ws.settings), "probes"),
        scrub=ws.settings.names("scrub_env"),
    )
    device = "cuda" if info.cuda_available and info.device_count else "cpu"
    warn(
        f"the repro runs with --device {device}"
        + ("" if device == "cuda" else " (no CUDA device here)")
        + "; choose another with: -- --device NAME"
    )
    return (*script_args, "--device", device)


def plan_session(ws: Workspace, request: DebugRequest) -> DebugPlan:
    """The plan for ``request``; warns (stderr) about log names the target's torch lacks."""
    from contribkit.debug import plan as debugenv

    interpreter = ws.python()
    chosen = debugenv.select_presets(request.presets)
    if not chosen and not request.logs:
        raise BadInput(
            "nothing to debug: give --preset NAME or --logs SPEC",
            hint="see the presets with: contribkit debug --list-presets",
        )
    target = target_script(ws, request.script)
    script_args = repro_device_args(ws, interpreter, target, request.script_args)
    registry = log_registry(ws, interpreter)
    if registry.fallback:
        warn(
            f"torch is not importable by {interpreter} ({registry.error}); checking log "
            f"names against the list bundled with contribkit (torch {registry.torch_version})"
        )
    output = request.output
    plan = debugenv.build_plan(
        python=interpreter,
        registry=registry,
        target=target,
        script_args=script_args,
        output=target.parent / debugenv.DEFAULT_SCRIPT_NAME
        if output in (None, "-")
        else Path(output).expanduser().absolute(),
        presets=chosen,
        logs=request.logs,
        scrub=ws.settings.names("scrub_env"),
        minify_after=request.minify_after,
        minify_level=request.minify_level,
    )
    for message in plan.warnings:
        warn(message)
    return plan


def debug_session(
    request: DebugRequest, on_start: Callable[[DebugPlan], None] | None = None
) -> DebugOutcome:
    """Plan the session, then run it (``run_now``; ``on_start`` is called just before) or
    render its script and write it (unless ``dry_run`` or ``to_stdout``)."""
    ws = Workspace.load(python=request.python)
    plan = plan_session(ws, request)
    if request.run_now and request.dry_run:
        return DebugOutcome(plan, "would run")
    if request.run_now:
        from contribkit.debug import execute as debugrun

        timeout = request.timeout
        timeout = timeout if timeout is not None else ws.settings.number("debug.timeout") or None
        debugrun.check_runnable(plan)
        exclude_artefacts(ws, plan)
        if on_start is not None:
            on_start(plan)
        from contribkit.core.sandbox import from_settings

        sandbox = from_settings(ws.settings, network=request.allow_network)
        run = debugrun.run_plan(
            plan, scrub=ws.settings.names("scrub_env"), timeout=timeout, sandbox=sandbox
        )
        return DebugOutcome(plan, "ran", run=run)
    from contribkit import __version__
    from contribkit.core.cache import cache_root
    from contribkit.debug.plan import render_script

    text = render_script(
        plan, request.command_line, __version__, bytecode_dir=cache_root(ws.settings) / "jinja"
    )
    if request.to_stdout or request.dry_run:
        return DebugOutcome(plan, "show", text=text)
    from contribkit.core.fsutil import atomic_write

    atomic_write(plan.output, text, force=request.force, mode=0o755)
    exclude_artefacts(ws, plan)
    return DebugOutcome(plan, "wrote", text=text)
