"""``contribkit demo``: the whole workflow, offline, on the bundled example issue.

A scratch git repository shaped like a PyTorch fork is made in a temporary folder (or ``--dir``),
and each step runs the real command in it, as a subprocess of this interpreter
(``python -m contribkit …``), so the demo exercises the same code paths as a user does:

1. ``repro --example``: the issue (``index_add_`` refuses a float source for a long tensor; its
   code is written for CUDA, so repro rewrites it to ``--device``) becomes ``repros/issue-4242``;
2. ``run --expect reproduced``: REPRODUCED on cpu;
3. ``test --from-repro``: a regression test;
4. a fix commit. The bug is in torch itself, which the demo cannot rebuild, so the commit adds
   a ``sitecustomize.py`` (from ``wrappers/demo_index_add_fix.py``) under
   ``aten/src/ATen/native/``, on the PYTHONPATH of the demo's runs, that really changes
   ``index_add`` in the processes they start; the demo says that it stands in for a change to aten/;
5. ``run``: NOT_REPRODUCED, and the new test passes;
6. ``pr``: the PR body.

The children get a scrubbed environment (no tokens), no user config (so no remote CUDA host or
other setting changes what the demo does), and the interpreter whose torch runs the code.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from contribkit.core.errors import BadInput
from contribkit.core.proc import ChildResult, run_child, scrubbed_env
from contribkit.git.cmd import git
from contribkit.run.record import RunRecord, latest_record

ISSUE = 4242  # contribkit/data/example_issue.json
BRANCH = "fix/issue-4242-index-add-float-source"
REPRO_DIR = "repros/issue-4242"
SHIM_DIR = "aten/src/ATen/native/demo_shim"
BODY_PATH = ".contribkit/pr-body.md"
STEP_TIMEOUT_S = 600.0
IDENTITY = {"user.name": "contribkit demo", "user.email": "demo@contribkit.invalid"}

# The scratch fork: the layout of a PyTorch fork, small. No torch/__init__.py, so the folder
# never shadows the installed torch.
FORK_FILES = {
    "README.md": "A scratch fork made by `contribkit demo`. Nothing here is real PyTorch code.\n",
    "torch/nn/functional.py": "def relu(input):\n    return input.clamp(min=0)\n",
    "aten/src/ATen/native/TensorAdvancedIndexing.cpp": (
        "// index_add_ lives here in PyTorch; the demo cannot build ATen.\n"
    ),
    "test/test_torch.py": '# Owner(s): ["module: tests"]\n',
    ".github/PULL_REQUEST_TEMPLATE.md": (  # PyTorch's, as written
        "Fixes #ISSUE_NUMBER\n\n"
        "[ ] I am familiar with [CONTRIBUTING.md](CONTRIBUTING.md).\n"
        "[ ] I ran `lintrunner -a`, and fixed all errors relevant to this change.\n"
    ),
    ".github/labeler.yml": '"module: nn":\n- torch/nn/**\n"module: dynamo":\n- torch/_dynamo/**\n',
}
FIX_MESSAGE = """\
Cast a source of another dtype in index_add_

index_add_ refused a float source for an integer destination, although
copy_ and the indexing assignment cast between these dtypes.

Root cause: the kernel checked that self and source have the same scalar
type before anything else, so a source that could be cast never was.

Solution: cast the source to the destination's dtype first, as copy_
does. (In this demo the change is a sitecustomize.py that patches
index_add in the processes the runs start, standing in for the change to
aten/src/ATen/native/TensorAdvancedIndexing.cpp.)

Fixes #4242
"""
STAND_IN_NOTE = (
    f"This commit stands in for a change to aten/: the demo cannot rebuild torch, so it adds "
    f"{SHIM_DIR}/sitecustomize.py, which casts index_add's source to the destination's dtype "
    f"in every process the demo's runs start (they run with PYTHONPATH={SHIM_DIR})."
)


@dataclass
class Step:
    number: int
    name: str
    purpose: str
    command: str | None = None  # as a user would type it
    status: str = "ok"  # "ok" or "failed"
    result: str = ""  # the one-line outcome
    output: str = ""  # what the command printed
    note: str | None = None
    duration_s: float = 0.0


@dataclass
class DemoResult:
    dir: str
    branch: str
    python: str
    steps: list[Step] = field(default_factory=list)
    body: str | None = None
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return all(step.status != "failed" for step in self.steps)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


class StepFailed(Exception):
    def __init__(self, result: str) -> None:
        super().__init__(result)
        self.result = result


def build_fork(root: Path) -> None:
    """A git repository shaped like a PyTorch fork, with ``upstream/main`` at its first commit
    (as after ``git fetch upstream``), on a fix branch for the example issue."""
    root.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main", cwd=root)
    for key, value in {**IDENTITY, "commit.gpgsign": "false"}.items():
        git("config", key, value, cwd=root)
    for rel, text in FORK_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git("add", "-A", cwd=root)
    git("commit", "-q", "--no-verify", "-m", "Import a PyTorch-shaped tree", cwd=root)
    git("remote", "add", "origin", "https://github.com/contributor/pytorch.git", cwd=root)
    git("remote", "add", "upstream", "https://github.com/pytorch/pytorch.git", cwd=root)
    git("update-ref", "refs/remotes/upstream/main", "HEAD", cwd=root)
    git("switch", "-q", "-c", BRANCH, cwd=root)


def child_env(root: Path, python: str) -> dict[str, str]:
    """The steps' environment: no secrets, no user config or CONTRIBKIT_* overrides (except the
    cache), the interpreter to use, and the shim folder first on PYTHONPATH."""
    env = {
        k: v
        for k, v in scrubbed_env().items()
        if not k.startswith("CONTRIBKIT_") or k == "CONTRIBKIT_CACHE_DIR"
    }
    existing = env.get("PYTHONPATH")
    shim = str(root / SHIM_DIR)
    env.update(
        CONTRIBKIT_CONFIG=str(root / ".git" / "no-user-config.toml"),
        CONTRIBKIT_PYTHON=python,
        PYTHONPATH=shim + (os.pathsep + existing if existing else ""),
        PYTHONDONTWRITEBYTECODE="1",  # no __pycache__ in the scratch tree
        NO_COLOR="1",
    )
    return env


def _repro_cell(record: RunRecord, device: str = "cpu") -> str:
    cells = [c for c in record.cells if c.kind == "repro" and c.device == device]
    return cells[0].status if cells else "no cell"


def _matrix_summary(record: RunRecord) -> str:
    return ", ".join(f"{c.file} on {c.device}: {c.status}" for c in record.cells)


class Demo:
    def __init__(self, root: Path, python: str) -> None:
        self.root = root
        self.env = child_env(root, python)
        self.test_files: list[str] = []

    def contribkit(self, *args: str) -> tuple[str, ChildResult]:
        argv = [sys.executable, "-m", "contribkit", *args]
        result = run_child(argv, env=self.env, cwd=self.root, timeout=STEP_TIMEOUT_S)
        if result.timed_out:
            raise StepFailed(f"timed out after {STEP_TIMEOUT_S:g}s")
        return shlex.join(["contribkit", *args]), result

    def latest(self) -> RunRecord:
        found = latest_record(self.root)
        if found is None:
            raise StepFailed("run wrote no record")
        return found[1]

    def repro(self, step: Step) -> None:
        step.command, result = self.contribkit("repro", "--example")
        step.output = result.output
        if result.returncode != 0 or not (self.root / REPRO_DIR / "repro.py").is_file():
            raise StepFailed(f"exit {result.returncode}: no {REPRO_DIR}/repro.py")
        step.result = f"wrote {REPRO_DIR}/repro.py, _contribkit_runtime.py, issue.md and meta.json"

    def run_before(self, step: Step) -> None:
        step.command, result = self.contribkit("run", REPRO_DIR, "--expect", "reproduced")
        step.output = result.output
        record = self.latest()
        if _repro_cell(record) != "REPRODUCED":
            raise StepFailed(f"expected REPRODUCED on cpu: {_matrix_summary(record)}")
        step.result = f"REPRODUCED on cpu at {record.short_head}: the bug is real"

    def test(self, step: Step) -> None:
        step.command, result = self.contribkit("test", "--from-repro", REPRO_DIR)
        step.output = result.output
        status = git("status", "--porcelain", "--untracked-files=all", "--", "test", cwd=self.root)
        self.test_files = [line[3:] for line in status.splitlines()]  # new, or added to a file
        if result.returncode != 0 or not self.test_files:
            raise StepFailed(f"exit {result.returncode}; no new test file under test/")
        step.result = f"wrote {', '.join(self.test_files)}"

    def fix(self, step: Step) -> None:
        shim = self.root / SHIM_DIR / "sitecustomize.py"
        shim.parent.mkdir(parents=True, exist_ok=True)
        text = (
            resources.files("contribkit.target.wrappers")
            .joinpath("demo_index_add_fix.py")
            .read_text(encoding="utf-8")
        )
        shim.write_text(text, encoding="utf-8")
        paths = [f"{SHIM_DIR}/sitecustomize.py", *self.test_files]
        git("add", "--", *paths, cwd=self.root)
        git("commit", "-q", "--no-verify", "-m", FIX_MESSAGE, cwd=self.root)
        subject = FIX_MESSAGE.splitlines()[0]
        step.command = f"git add {shlex.join(paths)} && git commit -m {shlex.quote(subject)}"
        step.note = STAND_IN_NOTE
        head = git("rev-parse", "--short=7", "HEAD", cwd=self.root)
        step.result = f"committed {head} {subject}"

    def run_after(self, step: Step) -> None:
        step.command, result = self.contribkit("run")
        step.output = result.output
        record = self.latest()
        if _repro_cell(record) != "NOT_REPRODUCED" or result.returncode != 0:
            raise StepFailed(f"expected NOT_REPRODUCED and green: {_matrix_summary(record)}")
        passed = sorted({c.file for c in record.cells if c.kind != "repro" and c.status == "PASS"})
        step.result = f"NOT_REPRODUCED on cpu at {record.short_head}" + (
            f"; {', '.join(passed)} passes" if passed else ""
        )

    def pr(self, step: Step) -> str:
        step.command, result = self.contribkit("pr", "--offline", "-o", BODY_PATH)
        step.output = result.output
        body_file = self.root / BODY_PATH
        if result.returncode != 0 or not body_file.is_file():
            raise StepFailed(f"exit {result.returncode}; no {BODY_PATH}")
        title = next(
            (line[7:] for line in result.output.splitlines() if line.startswith("title: ")), "?"
        )
        step.result = f"wrote {BODY_PATH} (title: {title})"
        return body_file.read_text(encoding="utf-8")


STEPS = (
    ("repro", "turn the issue into a runnable repro script"),
    ("run", "confirm the bug before fixing it"),
    ("test", "write a regression test from the repro"),
    ("fix", "commit the fix"),
    ("run", "check the fix: the repro no longer reproduces, the test passes"),
    ("pr", "write the PR title and body"),
)


def scratch_dir(requested: Path | None) -> Path:
    """``requested`` (created; it must be empty) or a new temporary folder."""
    if requested is None:
        return Path(tempfile.mkdtemp(prefix="contribkit-demo-"))
    if requested.exists() and (not requested.is_dir() or any(requested.iterdir())):
        raise BadInput(f"{requested} exists and is not an empty folder", "pass a new --dir")
    requested.mkdir(parents=True, exist_ok=True)
    return requested.resolve()


def run_demo(root: Path, python: str, progress: Callable[[Step], None] | None = None) -> DemoResult:
    """Build the scratch fork in ``root`` and run the steps; stop at the first that fails."""
    start = time.monotonic()
    build_fork(root)
    demo = Demo(root, python)
    result = DemoResult(dir=str(root), branch=BRANCH, python=python)
    actions: list[Callable[[Step], Any]] = [
        demo.repro,
        demo.run_before,
        demo.test,
        demo.fix,
        demo.run_after,
        demo.pr,
    ]
    for number, ((name, purpose), action) in enumerate(zip(STEPS, actions, strict=True), 1):
        step = Step(number, name, purpose)
        began = time.monotonic()
        try:
            body = action(step)
        except StepFailed as exc:
            step.status, step.result = "failed", exc.result
        else:
            if isinstance(body, str):
                result.body = body
        step.duration_s = round(time.monotonic() - began, 2)
        result.steps.append(step)
        if progress is not None:
            progress(step)
        if step.status == "failed":
            break
    result.duration_s = round(time.monotonic() - start, 2)
    return result
