"""``contribkit debug``: write (or, with --run, run) a debugging environment for torch.compile,
CUDA and dispatch issues."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from contribkit.cli import options
from contribkit.cli.output import say
from contribkit.core.errors import warn
from contribkit.core.termsafe import clean

if TYPE_CHECKING:
    from contribkit.debug.execute import BackendRun, DebugRun
    from contribkit.debug.plan import DebugPlan, Preset
    from contribkit.debug.session import DebugOutcome
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
@options.timeout("a --run is stopped", default="debug.timeout")
@options.allow_network("With --run: let the script")
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
    allow_network: bool,
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
    from contribkit.debug import session

    if list_presets:
        _print_presets(as_json)
        return 0
    if list_logs:
        _print_logs(session.list_logs(python), as_json)
        return 0
    request = session.DebugRequest(
        logs=logs,
        presets=presets,
        script=script,
        output=output,
        run_now=run_now,
        timeout=timeout,
        allow_network=allow_network,
        minify_after=minify_after,
        minify_level=minify_level,
        python=python,
        force=force,
        dry_run=dry_run,
        script_args=script_args,
        command_line=_command_line(),
    )
    outcome = session.debug_session(request, on_start=_print_start)
    if outcome.action == "would run":
        _print_plan(outcome.plan, as_json, "would run")
    elif outcome.run is not None:
        _print_run(outcome.run, as_json)
    elif outcome.action == "show":
        _print_script(outcome, as_json, to_stdout=request.to_stdout)
    else:
        _print_plan(outcome.plan, as_json, "wrote")
    return outcome.exit_code


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


def _print_start(plan: DebugPlan) -> None:
    """Before a run: what runs, and where its output goes."""
    logs_at = plan.artefact(".<backend>.log") if plan.ablation else plan.log_path
    say(
        f"debug: running {plan.target} with {plan.python} "
        f"(TORCH_LOGS={str(plan.logs) or '(none)'}); log: {logs_at}",
        err=True,
    )


def _print_script(outcome: DebugOutcome, as_json: bool, to_stdout: bool) -> None:
    """The script that --dry-run or ``-o -`` shows instead of writing it."""
    text = outcome.text or ""
    if as_json:
        from contribkit.cli.output import print_json

        print_json({**outcome.plan.as_dict(), "written": None, "script_text": text})
        return
    if not to_stdout:  # --dry-run
        say(f"debug: would write {outcome.plan.output}", err=True)
    sys.stdout.write(text)


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
    say(
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
    say(f"{done} {plan.output if done == 'wrote' else plan.target}")
    say(f"  TORCH_LOGS={str(plan.logs) or '(none)'}")
    for var in plan.env:
        if var.name != "TORCH_LOGS":
            say(f"  {var.name}={var.resolved(plan.stem)}")
    if plan.anomaly or plan.ablation:
        runs = ", ".join(BACKENDS) if plan.ablation else "once"
        mode = " with anomaly detection" if plan.anomaly else ""
        say(f"  through contribkit's runner{mode}: {runs}")
    if done != "wrote":
        return
    say(f"\nrun it with: bash {shlex.quote(str(plan.output))}")
    say(f"its output goes to {plan.log_path}" + (" (one log per backend)" if plan.ablation else ""))
    say(f"or run it now, with a summary: {_command_line(run=True)}")


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
        say()
        print_table(["artefact", "path"], result.artefacts, title="Artefacts")
    for note in result.plan.notes:
        say(f"next: {result.plan.note_text(note)}")


def _print_backend_run(run: BackendRun) -> None:
    from contribkit.debug.execute import signal_name

    s = run.summary
    sig = signal_name(run.exit_code)
    state = "timed out" if run.timed_out else f"exit {run.exit_code}" + (f" ({sig})" if sig else "")
    say(f"{run.status}: {state} after {run.duration_s:.1f}s; log: {run.log}")
    if run.log_truncated:
        say("  (the log was truncated; the summary covers its first part)")
    dynamo = (run.report or {}).get("dynamo")
    if run.report is not None and not (dynamo or {}).get("frames", {}).get("total"):
        say("  torch.compile was not reached: Dynamo compiled nothing")
    elif dynamo:
        frames = dynamo.get("frames", {})
        say(
            f"  Dynamo compiled {frames.get('total', 0)} frame(s) into "
            f"{dynamo.get('unique_graphs', 0)} graph(s)"
        )
    section = s.graph_break_section
    if s.graph_breaks:
        total = sum(g.count for g in s.graph_breaks)
        say(f"\nGraph breaks: {total} ({len(s.graph_breaks)} unique)")
        for g in s.graph_breaks:
            code = f" [{g.code}]" if g.code else ""
            say(f"  {g.count}x  {_shown(g.location)}  {g.reason}{code}")
            if g.explanation:
                say(f"        {_short(g.explanation)}")
    elif not section.recognised:
        say(f"\nGraph breaks: format not recognised: {section.note}; see the log")
    elif section.logged:
        say("\nGraph breaks: none")
    else:
        say(f"\nGraph breaks: not logged ({section.note or 'add --preset graph-breaks'})")
    rsection = s.recompile_section
    if s.recompiles:
        say(f"\nRecompilations: {len(s.recompiles)}")
        for r in s.recompiles:
            say(f"  {r.compile_id}  {r.function} ({_shown(r.location)})")
            for reason in r.reasons or ["(no reason logged)"]:
                say(f"        guard failed: {_short(reason)}")
    elif not rsection.recognised:
        say(f"\nRecompilations: format not recognised: {rsection.note}; see the log")
    elif rsection.logged:
        say("\nRecompilations: none")
    else:
        say("\nRecompilations: not logged (add --preset recompiles)")
    for limit in s.recompile_limits:
        say(f"  warning: {limit}")
    if run.exit_code != 0 and s.exception:
        say("\nFinal exception:")
        for line in clean(s.exception).splitlines():  # the child's output
            say(f"  {line}")
    if s.verdict:
        say(f"\nRepro verdict: {clean(' '.join(s.verdict), single_line=True)}")


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

    runs = result.runs
    never_compiled = all(
        r.report is not None and not r.report.get("compile_calls") and r.status != "CANNOT_RUN"
        for r in runs
    )  # (a repro that could not run here stopped before its code: it says nothing of compile)
    if runs and never_compiled:
        # The backends only replace torch.compile's: without a call, every run is the same run.
        say(
            f"the script never called torch.compile: the {len(runs)} backends ran the same"
            " eager code, so one row stands for all (the ablation is for torch.compile issues;"
            " try `contribkit debug --preset anomaly --run` or another preset)"
        )
        runs = runs[:1]
    rows = [
        (run.backend or "", run.status, str(run.exit_code), _short(_failure_detail(run), 90))
        for run in runs
    ]
    print_table(
        ["backend", "result", "exit", "detail"],
        rows,
        title="Ablation: every torch.compile call forced to each backend",
    )
    first = result.first_failure
    if first and len(runs) < len(result.runs):
        say("\nit fails without torch.compile: the cause is in eager PyTorch or the script")
        say(f"its log: {first.log}")
    elif first and first.backend:
        say(f"\nfirst failure: {first.backend} -> points at {BACKENDS[first.backend]}")
        say(f"its log: {first.log}")
    else:
        say("\nno backend failed")
    could_not = [r.backend or "" for r in result.runs if r.status == "CANNOT_RUN"]
    if could_not:
        say(f"the repro could not run (CANNOT_RUN) on: {', '.join(could_not)}; see their logs")
