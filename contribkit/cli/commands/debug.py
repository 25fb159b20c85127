"""``contribkit debug``: write (or, with --run, run) a debugging environment for torch.compile,
CUDA and dispatch issues."""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from contribkit.cli import options
from contribkit.core.errors import BadInput, warn
from contribkit.core.workspace import Workspace

if TYPE_CHECKING:
    from contribkit.debug.execute import BackendRun, DebugRun
    from contribkit.debug.plan import DebugPlan, Preset
    from contribkit.debug.torchlogs import Registry

REASON_WIDTH = 110


@click.command()
@click.option(
    "--logs",
    "logs",
    metavar="SPEC",
    help='TORCH_LOGS names, comma-separated [+|-]NAME, e.g. "+dynamo,graph_breaks". '
    "Checked against the target interpreter's torch.",
)
@click.option(
    "-p",
    "--preset",
    "presets",
    metavar="NAME",
    multiple=True,
    help="A ready-made set of settings; repeat or comma-separate (see --list-presets).",
)
@click.option(
    "-s",
    "--script",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The script to debug (default: repros/issue-N/repro.py of the branch's issue).",
)
@click.option(
    "-o",
    "--output",
    metavar="FILE",
    help="Where to write the bash script ('-' for stdout; default: debug_issue.sh beside the "
    "script). Artefacts go beside it.",
)
@click.option("--run", "run_now", is_flag=True, help="Run it now and print a summary.")
@click.option(
    "--timeout",
    type=float,
    metavar="SECONDS",
    help="With --run: stop a run after this long (default: the debug.timeout setting).",
)
@click.option(
    "--minify-after",
    type=click.Choice(["dynamo", "aot"]),
    default="dynamo",
    show_default=True,
    help="minify preset: which graphs the minifier works on (aot: inductor failures).",
)
@click.option(
    "--minify-level",
    type=click.Choice(["1", "2", "3", "4"]),
    default="2",
    show_default=True,
    help="minify preset: TORCHDYNAMO_REPRO_LEVEL (see the comment in the script).",
)
@click.option("--list-presets", is_flag=True, help="List the presets and exit.")
@click.option(
    "--list-logs", is_flag=True, help="List the target torch's TORCH_LOGS names and exit."
)
@options.python
@options.json_output
@options.force
@options.dry_run
@options.verbose
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- ARGS...]")
def debug(
    logs: str | None,
    presets: tuple[str, ...],
    script: Path | None,
    output: str | None,
    run_now: bool,
    timeout: float | None,
    minify_after: str,
    minify_level: str,
    list_presets: bool,
    list_logs: bool,
    python: str | None,
    as_json: bool,
    force: bool,
    dry_run: bool,
    script_args: tuple[str, ...],
) -> int:
    """Write (or --run) a debugging environment for torch.compile, CUDA and dispatch issues.

    Without --run, writes a bash script (default debug_issue.sh beside the script) that exports
    the chosen TORCH_LOGS and preset variables, each with a comment, runs the script with its
    output teed to a log, and prints where every artefact went. With --run, runs the same thing
    now and summarises graph breaks, recompilations, the final exception, generated code and
    debug dirs; the exit status is the script's.

    Log names are checked against the target interpreter's torch (cached after the first
    look); without torch there, against a list bundled with contribkit. Arguments after --
    go to the script.

    \b
    Examples:
      contribkit debug --preset graph-breaks,recompiles --script repro.py --run
      contribkit debug --logs "+dynamo,output_code" --preset trace
      contribkit debug --preset ablation --run --json
      contribkit debug --preset cuda-sync -- --device cuda
    """
    from contribkit.debug import plan as debugenv

    if list_presets:
        _print_presets(as_json)
        return 0
    ws = Workspace.load(python=python)
    interpreter = ws.python()
    if list_logs:
        _print_logs(_registry(ws, interpreter), as_json)
        return 0
    chosen = debugenv.select_presets(presets)
    if not chosen and not logs:
        raise BadInput(
            "nothing to debug: give --preset NAME or --logs SPEC",
            hint="see the presets with: contribkit debug --list-presets",
        )
    target = _target(ws, script)
    registry = _registry(ws, interpreter)
    if registry.fallback:
        warn(
            f"torch is not importable by {interpreter} ({registry.error}); checking log "
            f"names against the list bundled with contribkit (torch {registry.torch_version})"
        )
    to_stdout = output == "-"
    script_path = (
        target.parent / debugenv.DEFAULT_SCRIPT_NAME
        if output in (None, "-")
        else Path(output).expanduser().absolute()
    )
    plan = debugenv.build_plan(
        python=interpreter,
        registry=registry,
        target=target,
        script_args=script_args,
        output=script_path,
        presets=chosen,
        logs=logs,
        scrub=ws.settings.get("scrub_env"),
        minify_after=minify_after,
        minify_level=minify_level,
    )
    for message in plan.warnings:
        warn(message)
    if run_now and dry_run:
        _print_plan(plan, as_json, "would run")
        return 0
    if run_now:
        timeout = timeout if timeout is not None else ws.settings.get("debug.timeout") or None
        from contribkit.debug import execute as debugrun

        debugrun.check_runnable(plan)
        _exclude_artefacts(ws, plan)
        logs_at = plan.artefact(".<backend>.log") if plan.ablation else plan.log_path
        print(
            f"debug: running {plan.target} with {interpreter} "
            f"(TORCH_LOGS={str(plan.logs) or '(none)'}); log: {logs_at}",
            file=sys.stderr,
            flush=True,
        )
        result = debugrun.run_plan(plan, scrub=ws.settings.get("scrub_env"), timeout=timeout)
        _print_run(result, as_json)
        return result.exit_code
    from contribkit import __version__
    from contribkit.core.cache import cache_root

    text = debugenv.render_script(
        plan, _command_line(), __version__, bytecode_dir=cache_root(ws.settings) / "jinja"
    )
    if to_stdout or dry_run:
        if as_json:
            from contribkit.cli.output import print_json

            print_json({**plan.as_dict(), "written": None, "script_text": text})
            return 0
        if dry_run and not to_stdout:
            print(f"debug: would write {plan.output}", file=sys.stderr)
        sys.stdout.write(text)
        return 0
    from contribkit.core.fsutil import atomic_write

    atomic_write(plan.output, text, force=force, mode=0o755)
    _exclude_artefacts(ws, plan)
    _print_plan(plan, as_json, "wrote")
    return 0


def _registry(ws: Workspace, interpreter: str) -> Registry:
    from contribkit.core.cache import JsonCache, cache_root
    from contribkit.debug.torchlogs import load_registry

    return load_registry(
        interpreter,
        JsonCache(cache_root(ws.settings), "torch-logs"),
        scrub=ws.settings.get("scrub_env"),
    )


def _target(ws: Workspace, script: Path | None) -> Path:
    from contribkit.debug import plan as debugenv
    from contribkit.git import cmd as gitcmd

    if script is None:
        branch = gitcmd.current_branch(ws.root) if ws.root else None
        return debugenv.default_script(ws.root, branch, ws.settings.get("repros_dir"))
    path = script.expanduser().absolute()
    if not path.is_file():
        raise BadInput(f"script {script} not found", hint="pass --script PATH to a Python file")
    return path


def _exclude_artefacts(ws: Workspace, plan: DebugPlan) -> None:
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


def _command_line(run: bool = False) -> str:
    """This invocation as a command line (for the script's header), optionally with --run."""
    argv = list(sys.argv[1:]) or ["debug"]
    if run:
        at = argv.index("debug") + 1 if "debug" in argv else len(argv)
        end = argv.index("--") if "--" in argv else len(argv)  # the script's own arguments
        flags = [a for a in argv[at:end] if a not in ("-f", "--force")]
        argv = [*argv[:at], "--run", *flags, *argv[end:]]
    return "contribkit " + shlex.join(argv)


# --- printing -----------------------------------------------------------------------------


def _print_presets(as_json: bool) -> None:
    from contribkit.cli.output import print_json, print_table
    from contribkit.debug.plan import PRESETS

    if as_json:
        print_json(
            [
                {
                    "name": p.name,
                    "summary": p.summary,
                    "logs": list(p.logs),
                    "env": [{"name": e.name, "comment": e.comment} for e in p.env],
                    "runner": p.runner or None,
                }
                for p in PRESETS.values()
            ]
        )
        return
    print_table(
        ["preset", "what it is for", "sets"],
        [(p.name, p.summary, _preset_settings(p)) for p in PRESETS.values()],
    )


def _preset_settings(preset: Preset) -> str:
    parts = [f"TORCH_LOGS={','.join(preset.logs)}"] if preset.logs else []
    parts += [e.name for e in preset.env]
    if preset.runner:
        parts.append(f"runner: {preset.runner}")
    return "; ".join(parts)


def _print_logs(registry: Registry, as_json: bool) -> None:
    from contribkit.cli.output import print_json, print_table

    rows = [
        (
            name,
            "all"
            if name == "all"
            else ("component" if name in registry.components else "artifact"),
            registry.describe(name),
        )
        for name in registry.names()
    ]
    if as_json:
        print_json(
            {
                "source": registry.source(),
                "fallback": registry.fallback,
                "torch_version": registry.torch_version,
                "names": [dict(zip(("name", "kind", "description"), r, strict=True)) for r in rows],
            }
        )
        return
    if registry.fallback:
        warn(f"torch is not importable by {registry.python}: showing {registry.source()}")
    print_table(
        ["name", "kind", "description"], rows, title=f"TORCH_LOGS names from {registry.source()}"
    )
    print(
        "\nPrefix a component or module with + for DEBUG or - for ERROR; artifacts are on or off. "
        "Qualified module names (+torch._dynamo.guards) are accepted too."
    )


def _print_plan(plan: DebugPlan, as_json: bool, done: str) -> None:
    """What was written ("wrote") or would be run ("would run")."""
    from contribkit.debug.plan import BACKENDS

    if as_json:
        from contribkit.cli.output import print_json

        written = str(plan.output) if done == "wrote" else None
        print_json({**plan.as_dict(), "written": written})
        return
    print(f"{done} {plan.output if done == 'wrote' else plan.target}")
    print(f"  TORCH_LOGS={str(plan.logs) or '(none)'}")
    for var in plan.env:
        if var.name != "TORCH_LOGS":
            print(f"  {var.name}={var.resolved(plan.stem)}")
    if plan.anomaly or plan.ablation:
        runs = ", ".join(BACKENDS) if plan.ablation else "once"
        mode = " with anomaly detection" if plan.anomaly else ""
        print(f"  through contribkit's runner{mode}: {runs}")
    if done != "wrote":
        return
    print(f"\nrun it with: bash {shlex.quote(str(plan.output))}")
    print(
        f"its output goes to {plan.log_path}" + (" (one log per backend)" if plan.ablation else "")
    )
    print(f"or run it now, with a summary: {_command_line(run=True)}")


def _short(text: str, width: int = REASON_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _shown(location: str) -> str:
    """``/home/me/pytorch/repro.py:7`` -> ``repro.py:7`` when it lies below the working dir."""
    rel = os.path.relpath(location) if os.path.isabs(location) else location
    return location if rel.startswith("..") else rel


def _print_run(result: DebugRun, as_json: bool) -> None:
    from contribkit.cli.output import print_json, print_table

    if as_json:
        print_json(result.as_dict())
        return
    if result.plan.ablation:
        _print_ablation(result)
    else:
        _print_backend_run(result.runs[0])
    if result.artefacts:
        print()
        print_table(["artefact", "path"], result.artefacts, title="Artefacts")
    for note in result.plan.notes:
        print(f"next: {result.plan.note_text(note)}")


def _print_backend_run(run: BackendRun) -> None:
    from contribkit.debug.execute import signal_name

    s = run.summary
    sig = signal_name(run.exit_code)
    state = "timed out" if run.timed_out else f"exit {run.exit_code}" + (f" ({sig})" if sig else "")
    print(f"{run.status}: {state} after {run.duration_s:.1f}s; log: {run.log}")
    if run.log_truncated:
        print("  (the log was truncated; the summary covers its first part)")
    dynamo = (run.report or {}).get("dynamo")
    if run.report is not None and not (dynamo or {}).get("frames", {}).get("total"):
        print("  torch.compile was not reached: Dynamo compiled nothing")
    elif dynamo:
        frames = dynamo.get("frames", {})
        print(
            f"  Dynamo compiled {frames.get('total', 0)} frame(s) into "
            f"{dynamo.get('unique_graphs', 0)} graph(s)"
        )
    section = s.graph_break_section
    if s.graph_breaks:
        total = sum(g.count for g in s.graph_breaks)
        print(f"\nGraph breaks: {total} ({len(s.graph_breaks)} unique)")
        for g in s.graph_breaks:
            code = f" [{g.code}]" if g.code else ""
            print(f"  {g.count}x  {_shown(g.location)}  {g.reason}{code}")
            if g.explanation:
                print(f"        {_short(g.explanation)}")
    elif not section.recognised:
        print(f"\nGraph breaks: format not recognised: {section.note}; see the log")
    elif section.logged:
        print("\nGraph breaks: none")
    else:
        print(f"\nGraph breaks: not logged ({section.note or 'add --preset graph-breaks'})")
    rsection = s.recompile_section
    if s.recompiles:
        print(f"\nRecompilations: {len(s.recompiles)}")
        for r in s.recompiles:
            print(f"  {r.compile_id}  {r.function} ({_shown(r.location)})")
            for reason in r.reasons or ["(no reason logged)"]:
                print(f"        guard failed: {_short(reason)}")
    elif not rsection.recognised:
        print(f"\nRecompilations: format not recognised: {rsection.note}; see the log")
    elif rsection.logged:
        print("\nRecompilations: none")
    else:
        print("\nRecompilations: not logged (add --preset recompiles)")
    for limit in s.recompile_limits:
        print(f"  warning: {limit}")
    if run.exit_code != 0 and s.exception:
        print("\nFinal exception:")
        for line in s.exception.splitlines():
            print(f"  {line}")
    if s.verdict:
        print(f"\nRepro verdict: {s.verdict[0]} {s.verdict[1]}")


def _failure_detail(run: BackendRun) -> str:
    if run.summary.verdict:
        return run.summary.verdict[1]
    if run.exit_code != 0 and run.summary.exception:
        lines = run.summary.exception.splitlines()
        # "BackendCompilerFailed: backend='inductor' raised:" is followed by the real error.
        return " ".join(lines[:2]) if lines[0].endswith(":") else lines[0]
    if run.report and not run.report.get("compile_calls"):
        return "torch.compile was never called"
    return ""


def _print_ablation(result: DebugRun) -> None:
    from contribkit.cli.output import print_table
    from contribkit.debug.plan import BACKENDS

    rows = [
        (run.backend or "", run.status, str(run.exit_code), _short(_failure_detail(run), 90))
        for run in result.runs
    ]
    print_table(
        ["backend", "result", "exit", "detail"],
        rows,
        title="Ablation: every torch.compile call forced to each backend",
    )
    first = result.first_failure
    if first and first.backend:
        print(f"\nfirst failure: {first.backend} -> points at {BACKENDS[first.backend]}")
        print(f"its log: {first.log}")
    else:
        print("\nno backend failed")
    could_not = [r.backend or "" for r in result.runs if r.status == "CANNOT_RUN"]
    if could_not:
        print(f"the repro could not run (CANNOT_RUN) on: {', '.join(could_not)}; see their logs")
