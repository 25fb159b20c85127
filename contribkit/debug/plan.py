"""``contribkit debug``'s core: presets, the debug plan, the generated script, and running it.

A *plan* is what one debug session sets: TORCH_LOGS (checked against the target interpreter's
registry), the presets' environment variables, whether the script runs through the runner
wrapper (``wrappers/debug_runner.py``: autograd anomaly mode, or one run per compile backend),
and where each artefact goes. Artefacts sit beside the generated script and share its stem::

    debug_issue.sh                 the script          debug_issue.log       combined output
    debug_issue.torch_logs.txt     TORCH_LOGS_OUT      debug_issue.trace/    TORCH_TRACE
    debug_issue.debug/             TORCH_COMPILE_DEBUG_DIR (inductor debug dirs, minifier)
    debug_issue.<backend>.log      one per backend in an ablation
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from contribkit.conventions.branches import issue_from_branch
from contribkit.core.errors import BadInput
from contribkit.core.proc import SECRET_PATTERNS
from contribkit.core.render import render
from contribkit.debug.torchlogs import LogEntry, LogSpec, Registry, parse_spec

DEFAULT_SCRIPT_NAME = "debug_issue.sh"


@dataclass(frozen=True)
class EnvSetting:
    """One exported variable, in a preset's declaration and in a plan."""

    name: str
    value: str  # literal; for a path, the suffix added to the artefact stem (".trace")
    comment: str  # one line, written above the export in the script
    path: bool = False

    def resolved(self, stem: Path) -> str:
        return f"{stem}{self.value}" if self.path else self.value


@dataclass(frozen=True)
class Preset:
    name: str
    summary: str
    logs: tuple[str, ...] = ()  # TORCH_LOGS names
    env: tuple[EnvSetting, ...] = ()
    # Printed after a run. {NAME} stands for the value of shell variable NAME in the script
    # (PYTHON, TARGET, LOG, or one of the exported variables).
    notes: tuple[str, ...] = ()
    warning: str = ""  # said when the plan is made, and again by the script
    runner: str = ""  # "anomaly" or "ablation": run through wrappers/debug_runner.py


DEBUG_DIR = EnvSetting(
    "TORCH_COMPILE_DEBUG_DIR",
    ".debug",
    "debug dirs land in $TORCH_COMPILE_DEBUG_DIR/torch_compile_debug/run_<time>-pid_<pid>/",
    path=True,
)

# The presets, in the order --list-presets shows them. Keep every preset's settings here.
PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "graph-breaks",
            "Why Dynamo splits the graph: every graph break with its reason and user frame.",
            logs=("graph_breaks",),
            env=(
                EnvSetting(
                    "TORCHDYNAMO_VERBOSE",
                    "1",
                    "full internal stack traces for graph breaks and compile errors",
                ),
            ),
        ),
        Preset(
            "recompiles",
            "Why a function is compiled again: the guard that failed, and all guards.",
            logs=("recompiles", "recompiles_verbose", "guards"),
        ),
        Preset(
            "inductor-codegen",
            "The code Inductor generates, and a debug dir with FX graphs and IR per graph.",
            logs=("output_code", "kernel_code"),
            env=(
                EnvSetting(
                    "TORCH_COMPILE_DEBUG",
                    "1",
                    "write fx_graph_readable.py, fx_graph_runnable.py, output_code.py and IR dumps per graph",
                ),
                DEBUG_DIR,
            ),
            notes=(
                "generated code: {TORCH_COMPILE_DEBUG_DIR}/torch_compile_debug/run_*/torchinductor/*/output_code.py",
            ),
        ),
        Preset(
            "trace",
            "A TORCH_TRACE structured log for tlparse (the report torch.compile issues ask for).",
            env=(
                EnvSetting(
                    "TORCH_TRACE",
                    ".trace",
                    "structured compile trace for tlparse (one log per process)",
                    path=True,
                ),
            ),
            notes=(
                "pip install tlparse && tlparse {TORCH_TRACE} --latest  (writes tl_out/; attach the raw trace log or a zip of tl_out/, not only index.html)",
            ),
            warning="the trace contains your model's code (not its weights): review it before attaching it to a public issue",
        ),
        Preset(
            "minify",
            "The minifier: on a compile failure, dump minifier_launcher.py that shrinks the graph.",
            env=(
                EnvSetting(
                    "TORCHDYNAMO_REPRO_AFTER",
                    "{minify_after}",
                    '"dynamo": minify the Dynamo graph (any backend); "aot": minify the AOTAutograd graph (inductor failures)',
                ),
                EnvSetting(
                    "TORCHDYNAMO_REPRO_LEVEL",
                    "{minify_level}",
                    "1: dump the original graph as repro.py on a compile failure; 2: dump minifier_launcher.py on a failure; 3: always dump it (segfaults); 4: dump it on an accuracy failure",
                ),
                DEBUG_DIR,
            ),
            notes=(
                "minifier_launcher.py appears in {TORCH_COMPILE_DEBUG_DIR}/torch_compile_debug/run_*/minifier/; run it with {PYTHON} to get a minimal repro.py",
            ),
        ),
        Preset(
            "cuda-sync",
            "Synchronous CUDA launches, so an error points at the kernel that failed; C++ stacks.",
            env=(
                EnvSetting(
                    "CUDA_LAUNCH_BLOCKING",
                    "1",
                    "launch CUDA kernels synchronously, so errors surface at the failing call",
                ),
                EnvSetting(
                    "TORCH_SHOW_CPP_STACKTRACES",
                    "1",
                    "add C++ stack traces to errors raised from C++",
                ),
            ),
            notes=(
                "for illegal memory accesses, run it under NVIDIA's compute-sanitizer: compute-sanitizer --tool memcheck {PYTHON} {TARGET}",
            ),
        ),
        Preset(
            "dispatch",
            "Print every dispatcher call (needs a debug build of PyTorch).",
            env=(
                EnvSetting(
                    "TORCH_SHOW_DISPATCH_TRACE",
                    "1",
                    "print each operator call as the dispatcher routes it (debug builds only)",
                ),
            ),
            notes=(
                "TORCH_SHOW_DISPATCH_TRACE prints only in a debug build (DEBUG=1 python setup.py develop)",
            ),
        ),
        Preset(
            "anomaly",
            "Autograd anomaly detection: the forward op behind a NaN or a failing backward.",
            runner="anomaly",
        ),
        Preset(
            "ablation",
            "Run once per backend: eager, aot_eager, aot_eager_decomp_partition, inductor.",
            runner="ablation",
        ),
    )
}

# The ablation ladder (PyTorch's "Reporting Issues" docs), and what a first failure points at.
BACKENDS: dict[str, str] = {
    "eager": "Dynamo's tracing (or eager PyTorch itself: try it without torch.compile)",
    "aot_eager": "AOTAutograd (tracing the joint graph, functionalization)",
    "aot_eager_decomp_partition": "decompositions or the min-cut partitioner",
    "inductor": "Inductor (lowering or code generation)",
}

MINIFY_AFTER = ("dynamo", "aot")
MINIFY_LEVELS = ("1", "2", "3", "4")


def select_presets(names: Sequence[str]) -> list[Preset]:
    """Presets by name (each argument may be comma-separated); unknown names are BadInput."""
    chosen: list[Preset] = []
    for raw in names:
        for name in (n.strip() for n in raw.split(",")):
            if not name:
                continue
            if name not in PRESETS:
                import difflib

                close = difflib.get_close_matches(name, list(PRESETS), n=1)
                raise BadInput(
                    f"unknown preset '{name}'",
                    hint=(f"did you mean '{close[0]}'? " if close else "")
                    + "see them with: contribkit debug --list-presets",
                )
            if PRESETS[name] not in chosen:
                chosen.append(PRESETS[name])
    return chosen


@dataclass
class DebugPlan:
    python: str
    target: Path
    script_args: list[str]
    output: Path  # the generated script; artefacts share its stem
    presets: list[str]
    logs: LogSpec
    env: list[EnvSetting]
    notes: list[str]
    warnings: list[str]
    anomaly: bool
    ablation: bool
    registry: Registry
    scrub: list[str] = field(default_factory=list)  # the scrub_env setting's patterns

    @property
    def stem(self) -> Path:
        name = self.output.name
        return self.output.with_name(name[: -len(".sh")] if name.endswith(".sh") else name)

    def artefact(self, suffix: str) -> Path:
        return Path(f"{self.stem}{suffix}")

    @property
    def log_path(self) -> Path:
        return self.artefact(".log")

    def env_values(self, backend: str | None = None) -> dict[str, str]:
        values = {v.name: v.resolved(self.stem) for v in self.env}
        if backend:
            values["TORCH_LOGS_OUT"] = str(self.artefact(f".{backend}.torch_logs.txt"))
        return values

    def logs_named(self, artifact: str) -> bool:
        """Whether the spec turns ``artifact`` (a Dynamo artifact) on."""
        for entry in self.logs.entries:
            if entry.name == artifact:
                return True
            if entry.prefix == "+" and entry.name in ("dynamo", "all", "torch"):
                art = self.registry.artifacts.get(artifact)
                if art is not None and not art.off_by_default:
                    return True
        return False

    def note_text(self, note: str, backend: str | None = None) -> str:
        """A note with its {NAME} placeholders filled in with shell-quoted paths."""
        values = {
            "PYTHON": self.python,
            "TARGET": str(self.target),
            "LOG": str(self.log_path),
            **self.env_values(backend),
        }
        return re.sub(r"\{(\w+)\}", lambda m: shlex.quote(values[m.group(1)]), note)

    def as_dict(self) -> dict[str, Any]:
        return {
            "python": self.python,
            "torch_version": self.registry.torch_version,
            "registry": self.registry.source(),
            "fallback_registry": self.registry.fallback,
            "script": str(self.target),
            "script_args": self.script_args,
            "output": str(self.output),
            "presets": self.presets,
            "torch_logs": str(self.logs),
            "env": [
                {"name": v.name, "value": v.resolved(self.stem), "comment": v.comment}
                for v in self.env
            ],
            "runner": {"anomaly": self.anomaly, "ablation": self.ablation},
            "backends": list(BACKENDS) if self.ablation else [],
            "log": str(self.log_path),
            "notes": [self.note_text(n) for n in self.notes],
            "warnings": self.warnings,
        }


def build_plan(
    *,
    python: str,
    registry: Registry,
    target: Path,
    script_args: Sequence[str],
    output: Path,
    presets: Sequence[Preset],
    logs: str | None,
    scrub: Sequence[str],
    minify_after: str = "dynamo",
    minify_level: str = "2",
) -> DebugPlan:
    """Combine presets and a user log spec into a plan; raises BadInput on unknown log names."""
    spec = LogSpec()
    warnings: list[str] = []
    for preset in presets:
        for name in preset.logs:
            if name in registry.artifacts or name in registry.components:
                kind = "artifact" if name in registry.artifacts else "component"
                spec.add(LogEntry(name, "", kind))
            else:
                warnings.append(
                    f"preset {preset.name}: torch {registry.torch_version} has no log "
                    f"'{name}'; left out"
                )
    if logs:
        user = parse_spec(logs, registry, python=python, scrub=scrub)
        warnings.extend(user.warnings)
        for entry in user.entries:
            spec.add(entry)
    fill = {"minify_after": minify_after, "minify_level": minify_level}
    env: list[EnvSetting] = []
    if spec.entries:
        env.append(
            EnvSetting(
                "TORCH_LOGS",
                str(spec),
                f"which torch loggers and artifacts print (names checked against torch {registry.torch_version})",
            )
        )
    env.append(
        EnvSetting("TORCH_LOGS_OUT", ".torch_logs.txt", "torch's logs also go to this file", True)
    )
    notes: list[str] = []
    for preset in presets:
        for setting in preset.env:
            if all(v.name != setting.name for v in env):
                value = setting.value if setting.path else setting.value.format(**fill)
                env.append(replace(setting, value=value))
        notes.extend(preset.notes)
        if preset.warning:
            warnings.append(f"preset {preset.name}: {preset.warning}")
    names = {p.name for p in presets}
    warnings.extend(_build_warnings(names, registry))
    return DebugPlan(
        python=python,
        target=target,
        script_args=list(script_args),
        output=output,
        presets=[p.name for p in presets],
        logs=spec,
        env=env,
        notes=notes,
        warnings=warnings,
        anomaly="anomaly" in names,
        ablation="ablation" in names,
        registry=registry,
        scrub=list(scrub),
    )


def _build_warnings(presets: set[str], registry: Registry) -> list[str]:
    """What the probe can tell about presets that need a particular build."""
    warnings = []
    if "dispatch" in presets and registry.debug_build is False:
        warnings.append(
            f"preset dispatch: torch {registry.torch_version} in {registry.python} is a release "
            "build, where TORCH_SHOW_DISPATCH_TRACE prints nothing; use a debug build (DEBUG=1)"
        )
    if "cuda-sync" in presets and not registry.fallback and not registry.cuda_build:
        warnings.append(
            f"preset cuda-sync: torch {registry.torch_version} is a CPU-only build; the CUDA "
            "settings take effect on a CUDA build"
        )
    return warnings


# --- the current issue's repro ------------------------------------------------------------


def default_script(root: Path | None, branch: str | None, repros_dir: str) -> Path:
    """The repro of the current issue (``<repros_dir>/issue-<N>/repro.py``), or BadInput."""
    number = issue_from_branch(branch)
    if root is None or number is None:
        raise BadInput(
            "no --script given, and the current branch names no issue",
            hint="pass --script FILE, or work on a branch like fix/issue-123-short-name",
        )
    path = root / repros_dir / f"issue-{number}" / "repro.py"
    if not path.is_file():
        raise BadInput(
            f"no --script given, and issue {number}'s repro {path} does not exist",
            hint=f"create it with `contribkit repro {number}`, or pass --script FILE",
        )
    return path


# --- rendering the script -----------------------------------------------------------------


def runner_source() -> str:
    from importlib import resources

    return (
        resources.files("contribkit.target.wrappers")
        .joinpath("debug_runner.py")
        .read_text(encoding="utf-8")
    )


def case_patterns(patterns: Sequence[str]) -> str:
    """``fnmatch`` patterns as one bash ``case`` pattern list (``A|B*``): ``*``, ``?`` and
    brackets stay globs, every other character is matched as itself."""

    def one(pattern: str) -> str:
        return "".join(c if c.isalnum() or c in "_*?[]!" else "\\" + c for c in pattern)

    return "|".join(one(p) for p in dict.fromkeys(patterns) if p)


def render_script(
    plan: DebugPlan, command: str, version: str, bytecode_dir: Path | None = None
) -> str:
    """The bash script for ``plan``. Every path is relative to the script's own folder when it
    lies below it, so the script works from any working directory."""
    here = plan.output.parent

    def shell_path(path: Path) -> str:
        try:
            rel = path.relative_to(here)
        except ValueError:
            return shlex.quote(str(path))
        return '"$HERE"/' + shlex.quote(str(rel))

    runner = runner_source() if (plan.anomaly or plan.ablation) else ""
    if re.search(r"^CONTRIBKIT_RUNNER$", runner, re.MULTILINE):
        raise AssertionError("the runner source contains the heredoc delimiter")
    return render(
        "debug_issue.sh.j2",
        trim_blocks=False,
        bytecode_dir=bytecode_dir,
        **{
            "version": version,
            "command": command,
            "registry_source": plan.registry.source(),
            "presets": plan.presets,
            "python": plan.python,
            "target": shell_path(plan.target),
            "target_name": plan.target.name,
            "script_args": plan.script_args,
            "stem": shell_path(plan.stem),
            "script_name": plan.output.name,
            "env": plan.env,
            "notes": plan.notes,
            "warnings": plan.warnings,
            "anomaly": plan.anomaly,
            "ablation": plan.ablation,
            "backends": BACKENDS,
            "runner": runner,
            "secret_patterns": case_patterns((*SECRET_PATTERNS, *plan.scrub)),
            "debug_dir": any(v.name == "TORCH_COMPILE_DEBUG_DIR" for v in plan.env),
            "trace": any(v.name == "TORCH_TRACE" for v in plan.env),
        },
    )
