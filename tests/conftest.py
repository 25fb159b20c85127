from __future__ import annotations

import compileall
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import pytest

import contribkit
from tests.fakegithub import FakeGitHub

FORK_FILES = {
    # No torch/__init__.py: the folder must never shadow the real torch when code runs here.
    "torch/_dynamo/eval_frame.py": "def optimize():\n    return None\n",
    "torch/nn/functional.py": "def relu(x):\n    return x\n",
    "aten/src/ATen/native/Activation.cpp": "// activation kernels\n",
    "c10/core/Device.h": "// device\n",
    "test/test_nn.py": '# Owner(s): ["module: nn"]\n',
    "docs/source/index.rst": "PyTorch\n",
    # PyTorch's real template, as written (pytorch/pytorch@074a3a6): "[ ] …", not "- [ ] …".
    ".github/PULL_REQUEST_TEMPLATE.md": (
        "Fixes #ISSUE_NUMBER\n\n"
        "[ ] I am familiar with [CONTRIBUTING.md](CONTRIBUTING.md).\n"
        "[ ] I ran `lintrunner -a`, and fixed all errors relevant to this change.\n"
    ),
    ".github/labeler.yml": (
        '"module: dynamo":\n- torch/_dynamo/**\n'
        '"module: nn":\n- torch/nn/**\n'
        '"module: inductor":\n- torch/_inductor/**\n'
    ),
}


class RunCli(Protocol):
    """The ``run_cli`` fixture: ``contribkit ARGS`` in a subprocess."""

    def __call__(
        self,
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        input: str | None = None,
    ) -> subprocess.CompletedProcess[str]: ...


class Ck(Protocol):
    """The ``ck`` fixture: ``contribkit ARGS`` in the fork, with the shared probe cache."""

    def __call__(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]: ...


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def commit_files(repo: Path, files: dict[str, str], message: str) -> None:
    """Write ``files`` (path -> text) in ``repo`` and commit them all."""
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", message, cwd=repo)


# Variables no test may inherit from the developer (names; CONTRIBKIT_* go too).
_DROPPED = {
    "CI",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "NO_COLOR",
}


def isolated_environ(home: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: os.environ) without the developer's tokens, config, cache or gh login,
    pointed at a fresh ``home``.

    ``CI`` goes too: under it, torch's ``run_tests()`` saves XML reports through xmlrunner, a
    package of PyTorch's CI that a contributor's machine (which the suite plays) does not have.
    """
    env = {
        name: value
        for name, value in (os.environ if base is None else base).items()
        if not name.startswith("CONTRIBKIT_") and name not in _DROPPED
    }
    env.update(
        CONTRIBKIT_CONFIG=str(home / "config.toml"),
        CONTRIBKIT_CACHE_DIR=str(home / "cache"),
        CONTRIBKIT_TRUST_FILE=str(home / "trusted.json"),
        GH_CONFIG_DIR=str(home / "gh"),
        GIT_CONFIG_GLOBAL=str(home / "gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
    )
    (home / "gitconfig").write_text(
        "[user]\n\tname = Test Contributor\n\temail = contributor@example.com\n[init]\n\tdefaultBranch = main\n"
    )
    return env


def run_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder shared by the whole run: by every xdist worker (their base temps are siblings)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="session", autouse=True)
def contribkit_bytecode() -> None:
    """contribkit's own modules compiled once, beside their sources, for the children.

    Hundreds of tests start ``contribkit`` (or a hook, or a generated repro's runtime) in a
    child. Under ``PYTHONDONTWRITEBYTECODE=1`` (CI's setting, and many a developer's) each of
    them compiled every contribkit module it imported from source, every time; an installed
    wheel has its bytecode, as the stdlib and every dependency here do. Compiling writes only
    ``contribkit/**/__pycache__`` (ignored by git; both xdist workers may write at once: each
    file is written whole, then renamed); children still write no bytecode anywhere.
    """
    compileall.compile_dir(str(Path(contribkit.__file__).parent), quiet=2)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's tokens, config, cache or gh login (:func:`isolated_environ`)."""
    env = isolated_environ(tmp_path_factory.mktemp("home"))
    for name in set(os.environ) - set(env):
        monkeypatch.delenv(name)
    for name, value in env.items():
        if os.environ.get(name) != value:
            monkeypatch.setenv(name, value)


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An interpreter without torch (a venv without pip has nothing installed), one per run."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin" / "python")


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    server = FakeGitHub().start()
    try:
        yield server
    finally:
        server.stop()


def make_fork(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main", cwd=root)
    for rel, text in FORK_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", "Initial import", cwd=root)
    git("remote", "add", "origin", "git@github.com:contributor/pytorch.git", cwd=root)
    git("remote", "add", "upstream", "https://github.com/pytorch/pytorch.git", cwd=root)
    return root


@pytest.fixture
def fork_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real git repository shaped like a PyTorch fork; the test's cwd is its root."""
    root = make_fork(tmp_path / "pytorch")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """Run the real console entry point in a subprocess; returns CompletedProcess."""

    def run(
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        input: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "contribkit", *args],
            cwd=cwd,
            env={**os.environ, **(env or {})},
            input=input,
            capture_output=True,
            text=True,
            timeout=600,
        )

    return run


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A probe cache shared by the run's tests, every xdist worker's: the torch probe runs once
    per interpreter (the cache's writes are atomic)."""
    return str(run_dir(tmp_path_factory, "probe-cache"))


@pytest.fixture
def ck(run_cli: RunCli, fork_repo: Path, shared_cache: str) -> Ck:
    """Run ``contribkit ARGS`` in the fork, with the shared probe cache."""

    def call(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return run_cli(
            *args, cwd=fork_repo, env={"CONTRIBKIT_CACHE_DIR": shared_cache, **(env or {})}
        )

    return call
