"""``contribkit bisect`` behind its options: check the ends, drive ``git bisect`` one step at a
time, name the culprit, and always put the checkout back.

:func:`bisect_session` takes a :class:`BisectRequest` and returns a :class:`BisectOutcome`; the
command prints it. Before anything is checked out: the tree must be clean (tracked files), no
other bisect may be running, and the repro is copied outside the working tree (checkouts change
the files under it). Then ``--bad`` must reproduce and ``--good`` must not, or the bisect stops
with the reason. Every way out (the culprit, an error, Ctrl-C, SIGTERM) ends with ``git bisect
reset`` and the original branch checked out again.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from contribkit.bisect import gitbisect
from contribkit.bisect.gitbisect import Commit
from contribkit.bisect.step import BAD, GOOD, SKIP, Step, StepSetup, run_step
from contribkit.core.errors import BadInput, warn
from contribkit.core.workspace import Workspace

if TYPE_CHECKING:
    from contribkit.run.reprofacts import ReproFacts

BISECT_DIR = Path(".contribkit") / "bisect"


class Reporter(Protocol):
    """What the command shows while a bisect runs."""

    def started(self, outcome: BisectOutcome) -> None:
        """The range is known; nothing has been checked out yet."""

    def step(self, step: Step, done: int, total: int) -> None:
        """A step finished: ``done`` steps so far (the ends included) of about ``total``."""


@dataclass(frozen=True)
class BisectRequest:
    repro: Path
    good: str
    bad: str
    build_cmd: str | None = None
    no_build: bool = False
    first_parent: bool = False
    crash_is_bad: bool = False
    dry_run: bool = False
    paths: tuple[str, ...] = ()  # -- PATHSPEC: only commits that touch them
    python: str | None = None
    device: str | None = None  # default: the repro's own device
    timeout: float | None = None  # a repro leg's (default: run.timeout)
    build_timeout: float | None = None  # default: no limit
    allow_network: bool = False


@dataclass
class BisectOutcome:
    status: str  # "found", "ambiguous", "ends" (an end is not as stated), "dry-run"
    reason: str
    good: Commit
    bad: Commit
    range_size: int
    estimated_steps: int
    repro: str
    oracle: str
    device: str
    python: str
    build: str  # the build command, or "none (--no-build)"
    first_parent: bool = False
    paths: list[str] = field(default_factory=list)
    checks: list[Step] = field(default_factory=list)  # the two ends
    steps: list[Step] = field(default_factory=list)
    culprit: Commit | None = None
    candidates: list[Commit] = field(default_factory=list)  # only skipped commits left
    restored: str = ""  # the checkout as it was put back
    sandbox: str = "none"
    record_path: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def skipped(self) -> list[Step]:
        return [s for s in self.steps if s.code == SKIP]

    @property
    def exit_code(self) -> int:
        return 0 if self.status in ("found", "dry-run") else 1

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["skipped"] = [asdict(s) for s in self.skipped]
        return data


def bisect_session(request: BisectRequest, reporter: Reporter | None = None) -> BisectOutcome:
    from contribkit.core.workspace import resolve_python
    from contribkit.run.reprofacts import repro_facts

    ws = Workspace.load()
    root = ws.require_root()
    build_cmd = _build_choice(request)
    facts = repro_facts(request.repro)
    good = gitbisect.resolve(root, request.good, "--good")
    bad = gitbisect.resolve(root, request.bad, "--bad")
    if good == bad:
        raise BadInput("--good and --bad name the same commit", hint="pass an older --good")
    if not gitbisect.is_ancestor(root, good, bad):
        raise BadInput(
            f"--good {request.good} is not an ancestor of --bad {request.bad}",
            hint="pass the older commit, where the repro does not reproduce, as --good",
        )
    size = gitbisect.range_size(root, good, bad, request.first_parent, request.paths)
    if size == 0:
        raise BadInput(
            "no commit between --good and --bad touches the paths given",
            hint="drop or widen the PATHSPEC after --",
        )
    python = resolve_python(request.python) if request.python else ws.python()
    device = request.device or facts.default_device
    outcome = BisectOutcome(
        status="dry-run",
        reason="",
        good=gitbisect.commit_info(root, good),
        bad=gitbisect.commit_info(root, bad),
        range_size=size,
        estimated_steps=gitbisect.estimated_steps(size),
        repro=str(request.repro),
        oracle=facts.oracle,
        device=device,
        python=python,
        build=build_cmd or "none (--no-build)",
        first_parent=request.first_parent,
        paths=list(request.paths),
    )
    dirty = gitbisect.uncommitted(root)
    if request.dry_run:
        if dirty:
            outcome.notes.append(
                f"the tree has uncommitted changes ({dirty[0]}): commit them first"
            )
        outcome.reason = "nothing was checked out"
        return outcome
    if dirty:
        more = f" and {len(dirty) - 1} more" if len(dirty) > 1 else ""
        raise BadInput(
            f"the working tree has uncommitted changes ({dirty[0]}{more}); bisect checks out "
            "other commits",
            hint="commit them (or git stash them) first",
        )
    if gitbisect.in_progress(root):
        raise BadInput(
            "a git bisect is already running in this checkout",
            hint="end it with `git bisect reset` first",
        )
    return _run(root, ws, request, facts, outcome, build_cmd, reporter)


def _build_choice(request: BisectRequest) -> str | None:
    if request.build_cmd is not None and request.no_build:
        raise BadInput("--build-cmd and --no-build exclude each other", hint="pass one of them")
    if request.build_cmd is None and not request.no_build:
        raise BadInput(
            "say how each commit is built",
            hint="pass --build-cmd 'python setup.py develop', or --no-build for a checkout "
            "whose Python files are used directly (tools/nightly.py, an editable install)",
        )
    if request.build_cmd is not None and not request.build_cmd.strip():
        raise BadInput("--build-cmd is empty", hint="pass a command, or --no-build")
    return request.build_cmd


def _run(
    root: Path,
    ws: Workspace,
    request: BisectRequest,
    facts: ReproFacts,
    outcome: BisectOutcome,
    build_cmd: str | None,
    reporter: Reporter | None,
) -> BisectOutcome:
    from contribkit.git.cmd import ensure_excluded
    from contribkit.run.record import Interpreter, new_record_id
    from contribkit.run.runner import Column, Target
    from contribkit.run.session import RunRequest, options_for

    options = options_for(
        RunRequest(
            devices=outcome.device, timeout=request.timeout, allow_network=request.allow_network
        ),
        ws.settings,
    )
    outcome.sandbox = options.sandbox.kind
    if reporter:
        reporter.started(outcome)
    ensure_excluded(root)  # the logs go under .contribkit/, which no checkout may touch
    record_id = new_record_id(outcome.bad.sha)
    logs_dir = root / BISECT_DIR / record_id
    original = gitbisect.checkout_state(root)
    with tempfile.TemporaryDirectory(prefix="contribkit-bisect-") as scratch:
        script = _copy_repro(facts.target.path, Path(scratch) / facts.name)
        setup = StepSetup(
            root=root,
            target=Target(script, "repro", facts.target.devices_needed),
            column=Column(Interpreter(index=1, path=outcome.python), (outcome.device,)),
            device=outcome.device,
            options=options,
            logs_dir=logs_dir,
            build_cmd=build_cmd,
            build_timeout=request.build_timeout,
            crash_is_bad=request.crash_is_bad,
        )
        try:
            _bisect(root, setup, request, outcome, reporter)
        finally:
            problem = gitbisect.restore(root, original)
            if problem:
                warn(f"could not put back {original.describe()}: {problem}")
    outcome.restored = f"{original.describe()} at {original.sha[:10]}"
    outcome.record_path = _write_record(root, record_id, outcome)
    return outcome


def _copy_repro(script: Path, folder: Path) -> Path:
    """The repro script and the files beside it that belong to it (meta.json, issue.md), copied
    to ``folder``: a folder made by `repro` whole, a loose script with its meta.json."""
    if script.name == "repro.py":
        shutil.copytree(script.parent, folder, symlinks=True)
    else:
        folder.mkdir(parents=True)
        for name in (script.name, "meta.json", "issue.md"):
            if (script.parent / name).is_file():
                shutil.copy2(script.parent / name, folder / name)
    return folder / script.name


def _bisect(
    root: Path,
    setup: StepSetup,
    request: BisectRequest,
    outcome: BisectOutcome,
    reporter: Reporter | None,
) -> None:
    estimate = outcome.estimated_steps + 2
    for role, commit, wanted in (("bad", outcome.bad, BAD), ("good", outcome.good, GOOD)):
        gitbisect.checkout(root, commit.sha)
        step = run_step(setup, commit, role, 0)
        _put_back(root, outcome)
        outcome.checks.append(step)
        if reporter:
            reporter.step(step, len(outcome.checks), estimate)
        if step.code != wanted:
            outcome.status = "ends"
            verb = "does not reproduce" if role == "bad" else "does not pass"
            if step.code == SKIP:
                verb = "cannot decide"
            outcome.reason = f"--{role} {commit.short} {verb}: {step.why}"
            return
    state = gitbisect.start(
        root, outcome.bad.sha, outcome.good.sha, request.first_parent, request.paths
    )
    while not state.done:
        sha = gitbisect.checkout_state(root).sha
        step = run_step(setup, gitbisect.commit_info(root, sha), "step", len(outcome.steps) + 1)
        _put_back(root, outcome)
        outcome.steps.append(step)
        state = gitbisect.mark(root, step.mark)
        done = 2 + len(outcome.steps)
        left = 0 if state.done else (state.steps_left or 0) + 1
        if reporter:
            reporter.step(step, done, done + left)
    if state.culprit:
        outcome.status = "found"
        outcome.culprit = gitbisect.commit_info(root, state.culprit)
        outcome.reason = f"the first bad commit is {outcome.culprit.short}"
    else:
        outcome.status = "ambiguous"
        outcome.candidates = [gitbisect.commit_info(root, sha) for sha in state.candidates]
        outcome.reason = (
            f"only skipped commits are left: the first bad commit is one of "
            f"{len(outcome.candidates)}"
        )


def _put_back(root: Path, outcome: BisectOutcome) -> None:
    changed = gitbisect.put_back_tracked(root)
    note = "the build changes tracked files; they were put back after each step"
    if changed and not any(n.startswith(note) for n in outcome.notes):
        more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
        outcome.notes.append(f"{note} ({changed[0]}{more})")


def _write_record(root: Path, record_id: str, outcome: BisectOutcome) -> str:
    from contribkit.core.fsutil import atomic_write
    from contribkit.core.redact import current

    rel = BISECT_DIR / f"{record_id}.json"
    atomic_write(root / rel, json.dumps(current().value(outcome.as_dict()), indent=2) + "\n")
    return rel.as_posix()
