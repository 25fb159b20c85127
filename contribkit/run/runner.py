"""The device-matrix runner behind ``contribkit run``.

A *leg* is one (file, device, interpreter). Each leg is a child process started by
:func:`contribkit.core.proc.run_child` (scrubbed environment, closed stdin, own process group, timeout,
capped log under ``.contribkit/runs/<id>/``), and its outcome becomes a :class:`~record.Cell`:

- a repro script runs as ``python repro.py --device D`` with ``CONTRIBKIT_DEVICE=D``; its last line
  is the verdict (docs/architecture.md, "Contracts"), checked against its exit code;
- a PyTorch device-generic test file runs through pytest with ``PYTORCH_TESTING_DEVICE_ONLY_FOR=D``
  and ``--junitxml``; per-test outcomes come from the XML, never from pytest's text;
- a plain pytest file runs once, in the cpu column.

CPU legs run in parallel up to ``jobs``; CUDA legs are serialised per GPU (one leg per GPU at a
time, pinned with ``CUDA_VISIBLE_DEVICES``). Devices an interpreter lacks become NOT_AVAILABLE
cells without running anything. With a remote CUDA host, CUDA legs run there over ssh
(:mod:`contribkit.run.remote`); with ``--engine ray|slurm`` every leg runs on that engine's
workers. Each leg becomes an engine task (:mod:`contribkit.run.engine`), dispatched by
:mod:`contribkit.run.dispatch`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from contribkit.core.errors import BadInput, warn
from contribkit.core.sandbox import Sandbox
from contribkit.core.verdict import RUNTIME_FILE, parse_evidence, parse_verdict
from contribkit.run.engine import JUNIT_SLOT, Engine, InPlace, LegResult, LegTask
from contribkit.run.record import (
    Cell,
    Interpreter,
    TestCounts,
    TestOutcome,
)
from contribkit.run.remote import LegOutput
from contribkit.run.testdeps import error_cause
from contribkit.target.reprojudge import signal_name
from contribkit.target.reprolib import VERDICT_EXIT, VERDICT_PREFIX
from contribkit.target.reprotrace import EVIDENCE_ENV

if TYPE_CHECKING:
    from contribkit.core.config import Settings
    from contribkit.git.facts import BranchFacts
    from contribkit.run.probe import TorchInfo
    from contribkit.run.remote import RemoteHost

DEVICES = ("cpu", "cuda", "mps")
DEVICE_TEST_MARKER = "instantiate_device_type_tests"
PYTEST_EXITS = {2: "interrupted", 3: "internal error", 4: "usage error", 5: "no tests collected"}
_MESSAGE_CHARS = 500


# -- what to run ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    path: Path  # absolute path of the file that runs
    kind: str  # "repro", "device-test" or "pytest"
    devices_needed: tuple[str, ...] = ()  # from a repro's meta.json; empty: any device


def relpath(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _devices_needed(meta_path: Path) -> tuple[str, ...]:
    if not meta_path.is_file():
        return ()
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        needed = meta.get("devices_needed") or []
        if not isinstance(needed, list) or not all(isinstance(d, str) for d in needed):
            raise ValueError("'devices_needed' is not a list of device names")
    except (OSError, ValueError, AttributeError) as exc:
        warn(f"{meta_path}: ignored ({exc})")
        return ()
    return tuple(d.split(":", 1)[0] for d in needed)


def is_test_file_name(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def classify(path: Path) -> Target:
    """What kind of file ``path`` is: a repro (folder or script), a device-generic test, a test."""
    if not path.exists():
        raise BadInput(f"{path} does not exist", hint="pass a repro folder, a repro or a test file")
    path = path.resolve()
    if path.is_dir():
        script = path / "repro.py"
        if not script.is_file():
            raise BadInput(
                f"{path} has no repro.py", hint="pass a repro folder made by `contribkit repro`"
            )
        return Target(script, "repro", _devices_needed(path / "meta.json"))
    if path.suffix != ".py":
        raise BadInput(f"{path} is not a Python file", hint="pass a repro or a test file")
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.name == "repro.py":
        return Target(path, "repro", _devices_needed(path.parent / "meta.json"))
    if DEVICE_TEST_MARKER in text:
        return Target(path, "device-test")
    if VERDICT_PREFIX in text:
        return Target(path, "repro", _devices_needed(path.parent / "meta.json"))
    if is_test_file_name(path.name) or re.search(r"^\s*def test_", text, re.MULTILINE):
        return Target(path, "pytest")
    raise BadInput(
        f"{path} is neither a repro (it prints no `{VERDICT_PREFIX}` line) nor a test file",
        hint="repros come from `contribkit repro`; tests are test_*.py files",
    )


def default_paths(
    root: Path, settings: Settings, facts: BranchFacts | None = None
) -> tuple[list[Path], list[str]]:
    """The branch's own work: its issue's repro folder, and the test files changed since the
    merge-base with upstream (committed or not, unless ``facts`` say otherwise). Returns the paths
    and notes on how they were found.
    """
    from contribkit.git import facts as gitfacts

    if facts is None:
        facts = gitfacts.branch_facts(
            root,
            settings.text("upstream_remote"),
            settings.text("base_branch"),
            include_worktree=True,
        )
    notes: list[str] = []
    paths: list[Path] = []
    if facts.issue_number is not None:
        folder = root / settings.text("repros_dir") / f"issue-{facts.issue_number}"
        if (folder / "repro.py").is_file():
            paths.append(folder)
        else:
            notes.append(f"no repro for issue {facts.issue_number} in {relpath(folder, root)}")
    else:
        notes.append(f"branch '{facts.state.branch or 'HEAD'}' names no issue number")
    base = facts.merge_base
    if base is None:
        notes.append(f"no merge-base with {facts.base_ref}: changed test files were not looked for")
    else:
        if base.note:
            notes.append(base.note)
        for changed in facts.changed_files:
            full = root / changed.path
            if is_test_file_name(full.name) and changed.status != "D" and full.is_file():
                paths.append(full)
    return paths, notes


# -- interpreters and devices -----------------------------------------------------------------
@dataclass
class Column:
    """An interpreter that legs run with: local, on a remote CUDA host, or on an engine's
    workers (its path is then a path there)."""

    interpreter: Interpreter
    devices: tuple[str, ...]  # the devices this interpreter runs in this matrix
    remote: RemoteHost | None = None  # ssh: its CUDA legs run on this host
    engine: Engine | None = None  # ray, slurm: every leg runs there (None: local or ssh)


def interpreter_from_probe(index: int, path: str, info: TorchInfo, host: str | None) -> Interpreter:
    return Interpreter(
        index=index,
        path=path,
        host=host,
        python_version=info.python_version,
        torch_version=info.torch_version,
        git_version=info.git_version,
        cuda_available=info.cuda_available,
        device_count=info.device_count,
        device_names=list(info.device_names),
        mps_available=info.mps_available,
        error=None if info.torch else info.error,
    )


def unavailable_reason(interp: Interpreter, device: str) -> str | None:
    """Why ``device`` cannot run with ``interp``, or None when it can."""
    if device == "cpu":
        return None
    if interp.torch_version is None:
        return "torch is not importable"
    if device == "cuda" and not (interp.cuda_available and interp.device_count):
        return "no CUDA device"
    if device == "mps" and not interp.mps_available:
        return "no MPS device"
    return None


# -- legs -------------------------------------------------------------------------------------
@dataclass
class Leg:
    target: Target
    device: str
    column: Column


@dataclass
class RunOptions:
    devices: list[str]
    require: list[str] = field(default_factory=list)
    expect: str = "not-reproduced"
    timeout: float = 900.0
    jobs: int = 1
    keyword: str | None = None  # pytest -k
    scrub: list[str] = field(default_factory=list)  # extra secret patterns
    sandbox: Sandbox = field(default_factory=lambda: Sandbox("none", "not asked for"))
    oracle: str | None = None  # --oracle: the repros decide by it (their --expect), not their own


def leg_env(device: str, kind: str, gpu: str | None) -> dict[str, str]:
    """What a leg adds to its (scrubbed) environment."""
    env = {
        "CONTRIBKIT_DEVICE": device,
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ in the tree: the diff hash stays put
    }
    if kind == "device-test":
        env["PYTORCH_TESTING_DEVICE_ONLY_FOR"] = device
    if kind == "repro":  # the script prints its execution evidence for the record
        env[EVIDENCE_ENV] = "1"
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
    return env


def leg_argv(
    python: str,
    kind: str,
    file: str,
    device: str,
    junit: str | None,
    keyword: str | None,
    oracle: str | None = None,
) -> list[str]:
    """The command of a leg; ``file`` and ``junit`` are paths as the running host sees them;
    ``oracle`` (``run --oracle``) is the repro's ``--expect``."""
    if kind == "repro":
        return [python, file, "--device", device, *(["--expect", oracle] if oracle else [])]
    argv = [python, "-m", "pytest", file, "-q", "-p", "no:cacheprovider", "--color=no"]
    argv.append(f"--junitxml={junit}")
    if keyword:
        argv += ["-k", keyword]
    return argv


def artefact_stem(rel: str) -> str:
    """A file name for ``rel``'s logs: readable, and unique even where two slugs meet
    (``test/a/b.py`` and ``test/a_b.py``) or the path is cut short."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", rel).strip("_")[-100:]
    return f"{slug}-{hashlib.sha256(rel.encode()).hexdigest()[:10]}"


class LegRunner:
    """Turns the legs of one matrix into engine tasks, and their results into cells."""

    def __init__(self, root: Path, logs_dir: Path, options: RunOptions) -> None:
        self.root = root
        self.logs_dir = logs_dir
        self.options = options
        self.unconfined: dict[str, str] = {}  # "ray on node-1" -> why it ran without a sandbox

    def paths_for(self, leg: Leg) -> tuple[Path, Path]:
        stem = artefact_stem(relpath(leg.target.path, self.root))
        name = f"{stem}.{leg.device}.{leg.column.interpreter.index}"
        return self.logs_dir / f"{name}.log", self.logs_dir / f"{name}.xml"

    def task(self, key: int, leg: Leg) -> LegTask:
        """The leg as any engine runs it: shipped (its file, argv after the interpreter) and,
        for the local engine, in place (the checkout's file, its folder, its confinement)."""
        log_path, junit_path = self.paths_for(leg)
        kind = leg.target.kind
        junit = junit_path if kind != "repro" else None
        python = leg.column.interpreter.path
        name = leg.target.path.name
        shipped = leg_argv(
            "", kind, name, leg.device, "junit.xml", self.options.keyword, self.options.oracle
        )[1:]
        in_place = None
        if leg.column.remote is None and leg.column.engine is None:
            argv = leg_argv(
                python,
                kind,
                str(leg.target.path),
                leg.device,
                JUNIT_SLOT if junit else None,
                self.options.keyword,
                self.options.oracle,
            )
            cwd = leg.target.path.parent if kind == "repro" else self.root
            readable = (self.root, leg.target.path.parent)
            in_place = InPlace(
                tuple(argv),
                cwd,
                python,
                readable,
                self.options.sandbox,
                gpu=leg.device == "cuda",
                junit_path=junit,
            )
        return LegTask(
            key,
            python,
            tuple(shipped),
            _LazyFiles(name, leg.target.path, kind),
            leg_env(leg.device, kind, None),
            self.options.timeout,
            log_path=log_path,
            gpu=leg.device == "cuda",
            scrub=tuple(self.options.scrub),
            in_place=in_place,
        )

    def cell(self, leg: Leg, result: LegResult) -> Cell:
        log_path, _ = self.paths_for(leg)
        output = result.output
        kind = leg.target.kind
        cell = Cell(
            file=relpath(leg.target.path, self.root),
            kind=kind,
            device=leg.device,
            interpreter=leg.column.interpreter.index,
            status="ERROR",
            exit_code=output.returncode,
            duration_s=round(output.duration_s, 3),
            log_path=relpath(log_path, self.root),
            engine=result.engine,
            worker=result.worker,
            sandbox=result.sandbox,
        )
        if result.sandbox != "bwrap" and result.engine != "local":
            self.unconfined[f"{result.engine} on {result.worker}"] = result.sandbox_reason
        if output.error is not None:
            cell.detail = output.error
        elif output.timed_out:
            cell.status, cell.detail = "TIMEOUT", f"killed after {self.options.timeout:g}s"
        elif output.returncode is not None and output.returncode < 0:
            cell.detail = f"killed by {signal_name(-output.returncode)}"
        elif kind == "repro":
            read_repro_cell(cell, output)
        else:
            read_test_cell(cell, output, leg.device, self.options.keyword)
        return cell


class _LazyFiles(Mapping[str, bytes]):
    """A leg's files, read when an engine ships them (the local engine never does): the file,
    and for a repro the runtime module it loads from its own folder."""

    def __init__(self, name: str, path: Path, kind: str) -> None:
        self.paths = {name: path}
        runtime = path.with_name(RUNTIME_FILE)
        if kind == "repro" and runtime.is_file():
            self.paths[RUNTIME_FILE] = runtime

    def __getitem__(self, key: str) -> bytes:
        return self.paths[key].read_bytes()

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)


def read_repro_cell(cell: Cell, output: LegOutput) -> None:
    verdict = parse_verdict(output.output)
    if verdict is None:
        cause = error_cause(output.output)
        cell.detail = (
            f"{cause} " if cause else ""
        ) + f"(no verdict line, exit {output.returncode})"
        return
    word, detail = verdict
    cell.verdict = word
    cell.evidence = parse_evidence(output.output)
    if VERDICT_EXIT[word] != output.returncode:
        cell.detail = f"verdict {word} but exit {output.returncode} (expected {VERDICT_EXIT[word]})"
    elif word == "CANNOT_RUN":
        cell.detail = f"CANNOT_RUN: {detail}"
    else:
        cell.status, cell.detail = word, detail


def generic_test_name(classname: str, name: str, device: str) -> str:
    """``TestFoo.test_bar_float32`` for ``test_x.TestFooCPU`` / ``test_bar_cpu_float32``."""
    cls = classname.rsplit(".", 1)[-1]
    cls = re.sub(rf"{re.escape(device.upper())}$", "", cls)
    name = re.sub(rf"_{re.escape(device)}(?=_|$)", "", name)
    return f"{cls}.{name}" if cls else name


def parse_junit(xml_text: str, device: str) -> tuple[TestCounts, list[TestOutcome]]:
    """Per-test outcomes from a pytest JUnit report."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(xml_text)
    counts = TestCounts()
    tests = []
    for case in root.iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        outcome, message = "passed", ""
        for tag, word in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
            found = case.find(tag)
            if found is not None:
                outcome, message = word, found.get("message") or (found.text or "").strip()
                cause = error_cause(found.text or "") if word == "error" else ""
                if cause and cause not in message:  # "collection failure": say what failed
                    message = f"{cause} ({message})"
                break
        counted = "errors" if outcome == "error" else outcome
        counts.total += 1
        setattr(counts, counted, getattr(counts, counted) + 1)
        tests.append(
            TestOutcome(
                name=generic_test_name(classname, name, device),
                test_id=f"{classname}::{name}" if classname else name,
                outcome=outcome,
                message=" ".join(message.split())[:_MESSAGE_CHARS],
                duration_s=round(float(case.get("time") or 0.0), 3),
            )
        )
    return counts, tests


def read_test_cell(cell: Cell, output: LegOutput, device: str, keyword: str | None) -> None:
    code = output.returncode
    if output.junit_xml is None:
        cause = error_cause(output.output)
        cell.detail = (
            f"{cause} " if cause else ""
        ) + f"(pytest wrote no JUnit report, exit {code})"
        return
    try:
        counts, tests = parse_junit(output.junit_xml, device)
    except (SyntaxError, ValueError) as exc:  # ElementTree's ParseError, or odd attributes
        cell.detail = f"unreadable JUnit report: {exc}"
        return
    cell.counts, cell.tests = counts, tests
    bad = [t for t in tests if t.outcome in ("failed", "error")]
    if code in (2, 3, 4):
        exit_text = f"pytest exit {code}, {PYTEST_EXITS[code]}"
        cell.detail = (  # the cause first: a collection error's import, say
            f"{bad[0].message} ({exit_text}: {bad[0].test_id})" if bad else exit_text
        )
    elif bad:
        cell.status = "FAIL"
        cell.detail = f"{bad[0].test_id}: {bad[0].message}"
    elif code == 5 or counts.total == 0:
        # Nothing ran on a device that is there (a -k typo, a device torch does not see): ERROR.
        cell.detail = "no tests collected" + (f" for -k {keyword!r}" if keyword else "")
    elif code != 0:
        cell.status, cell.detail = "FAIL", f"pytest exit {code}"
    elif counts.passed == 0:
        reasons = [t.message for t in tests if t.outcome == "skipped" and t.message]
        cell.status, cell.detail = "SKIP", reasons[0] if reasons else "every test was skipped"
    else:
        cell.status = "PASS"


# -- the matrix -------------------------------------------------------------------------------
def plan(root: Path, targets: Sequence[Target], columns: Sequence[Column]) -> list[Leg | Cell]:
    """One entry per (file, device, interpreter): a leg to run, or a cell decided without running."""
    planned: list[Leg | Cell] = []
    for target in targets:
        file = relpath(target.path, root)
        for column in columns:
            interp = column.interpreter
            for device in column.devices:
                if target.kind == "pytest" and device != "cpu":
                    continue  # a plain test file runs once, in the cpu column
                if target.devices_needed and device not in target.devices_needed:
                    needed = "/".join(target.devices_needed)
                    status, detail = "SKIP", f"n/a (the repro is {needed}-only)"
                else:
                    reason = unavailable_reason(interp, device)
                    if reason is None:
                        planned.append(Leg(target, device, column))
                        continue
                    status, detail = "NOT_AVAILABLE", reason
                planned.append(Cell(file, target.kind, device, interp.index, status, detail))
    return planned


def gpu_ids(count: int, environ: dict[str, str] | None = None) -> list[str]:
    """The values of CUDA_VISIBLE_DEVICES that pin a leg to one of ``count`` GPUs (as probed under
    the same environment), taken only from the user's mask when there is one; set but empty, it
    hides every GPU."""
    env = os.environ if environ is None else environ
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [v.strip() for v in visible.split(",") if v.strip()][:count]
    return [str(i) for i in range(count)]


ProgressFn = Callable[[int, int, Cell], None]


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def local_columns(
    pythons: Sequence[str], devices: Sequence[str], settings: Settings, remote: RemoteHost | None
) -> list[Column]:
    """Probe each interpreter (cached) and give it the devices it runs in this matrix."""
    from contribkit.core.cache import JsonCache, cache_root
    from contribkit.run.probe import probe_torch

    cache = JsonCache(cache_root(settings), "probes")
    local_devices = tuple(d for d in devices if not (remote is not None and d == "cuda"))
    columns = []
    for index, python in enumerate(dict.fromkeys(pythons), start=1):
        info = probe_torch(python, cache, scrub=settings.names("scrub_env"))
        columns.append(Column(interpreter_from_probe(index, python, info, None), local_devices))
    if remote is not None and "cuda" in devices:
        info = remote.probe()
        interp = interpreter_from_probe(len(columns) + 1, remote.python, info, remote.host)
        columns.append(Column(interp, ("cuda",), remote))
    return columns


def engine_columns(pythons: Sequence[str], devices: Sequence[str], engine: Engine) -> list[Column]:
    """Probe each interpreter on ``engine``'s workers (a GPU one when the matrix has cuda and
    the engine has GPUs) and give it every device of the matrix."""
    gpu = "cuda" in devices and engine.gpus_available()
    columns = []
    for index, python in enumerate(dict.fromkeys(pythons), start=1):
        info = engine.probe(python, gpu=gpu)
        interp = interpreter_from_probe(index, python, info, engine.label)
        columns.append(Column(interp, tuple(devices), engine=engine))
    return columns


def default_jobs() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def parse_devices(value: str | Sequence[str]) -> list[str]:
    items = (
        value.split(",")
        if isinstance(value, str)
        else [v for part in value for v in part.split(",")]
    )
    devices = list(dict.fromkeys(d.strip().lower() for d in items if d.strip()))
    unknown = [d for d in devices if d not in DEVICES]
    if unknown or not devices:
        raise BadInput(
            f"unknown device '{unknown[0]}'" if unknown else "no device given",
            hint=f"devices are {', '.join(DEVICES)}, e.g. --devices cpu,cuda",
        )
    return devices


def progress_line(done: int, total: int, cell: Cell) -> None:
    from contribkit.core.termsafe import clean
    from contribkit.run.record import cell_text

    line = f"[{done}/{total}] {cell.file} {cell.device} [{cell.interpreter}]: {cell_text(cell)}"
    print(
        clean(line, single_line=True),  # a skip reason is the child's text
        file=sys.stderr,
        flush=True,
    )
