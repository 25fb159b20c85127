"""A sandbox for the children that run issue or test code: bubblewrap (``bwrap``) on Linux.

A :class:`Sandbox` is chosen once per command (:func:`choose`, from the ``run.sandbox`` setting:
``auto``, ``bwrap`` or ``none``); each child that runs code passes a :class:`Confinement` to
:func:`contribkit.core.proc.run_child`. Under bwrap the child gets:

- a new PID namespace (no other process's ``/proc``, so not contribkit's environment), a new
  session, and it dies with contribkit (so does every process it started, ``setsid`` or not);
- no network unless asked for (``--allow-network``);
- the file system read-only, with the home folders, ``/tmp``, ``/var/tmp`` and ``/run/user``
  hidden behind empty private folders, except what the interpreter needs (its prefix, its
  ``sys.path``, torch's folder: wherever they live) and the files it runs;
- write access only to the leg's own folders, a private ``/tmp`` and the persistent compile
  caches (``TORCHINDUCTOR_CACHE_DIR``, ``TRITON_CACHE_DIR`` under contribkit's cache);
- a minimal ``/dev``, plus the GPU device nodes for CUDA legs.

Where there is no sandbox (no bwrap, no user namespaces, not Linux), ``auto`` says so once on
stderr and the child runs as before, with a scrubbed environment; ``bwrap`` is then an error.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from contribkit.core.errors import BadInput, warn
from contribkit.core.shebang import shebang_words

MODES = ("auto", "bwrap", "none")
HIDDEN_ROOTS = ("/home", "/root", "/tmp", "/var/tmp", "/run/user")
# Below a home folder: never bound back, even when an interpreter's path lies above them.
SECRET_HOME_PATHS = (
    ".ssh",
    ".netrc",
    ".config/gh",
    ".git-credentials",
    ".aws",
    ".docker",
    ".gnupg",
    ".kube",
    ".pypirc",
    ".config/gcloud",
    ".azure",
)
GPU_NODES = ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/dri")
_PATHS_MARKER = "CONTRIBKIT_PATHS "
_PATHS_SCRIPT = f"""\
import importlib.util, json, os, sys
paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *sys.path,
         os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))]
try:
    spec = importlib.util.find_spec("torch")
except Exception:
    spec = None
for location in (spec and spec.submodule_search_locations) or []:
    paths.append(os.path.dirname(location))
print({_PATHS_MARKER!r} + json.dumps([p for p in paths if p]))
"""
_warned: set[str] = set()


@dataclass(frozen=True)
class Sandbox:
    """How this command's children that run code are confined."""

    kind: str  # "bwrap" or "none"
    reason: str  # why this kind: for the run record and the one-line notice
    bwrap: str | None = None  # the bwrap executable, for kind "bwrap"
    network: bool = False  # --allow-network
    cache: Path | None = None  # the persistent compile caches live under it

    @property
    def active(self) -> bool:
        return self.kind == "bwrap" and self.bwrap is not None


@dataclass(frozen=True)
class Confinement:
    """What one child may see and write, inside ``sandbox``."""

    sandbox: Sandbox
    python: str  # the interpreter: its prefix and sys.path stay readable
    readable: tuple[Path, ...] = ()  # the files it runs (the checkout, the repro folder)
    writable: tuple[Path, ...] = ()  # its own folders (logs, JUnit report, debug artefacts)
    gpu: bool = False  # bind the GPU device nodes (CUDA legs)

    def wrap(
        self, cmd: Sequence[str], env: Mapping[str, str], cwd: Path | str | None
    ) -> tuple[list[str], dict[str, str]]:
        """The command and environment that run ``cmd`` confined (unchanged without bwrap)."""
        if not self.sandbox.active:
            return list(cmd), dict(env)
        return bwrap_command(self, cmd, env, cwd)


def choose(
    mode: str, *, network: bool = False, cache: Path | None = None, announce: bool = True
) -> Sandbox:
    """The sandbox for ``mode`` (``run.sandbox``); with ``auto`` and none available, say so once
    on stderr (``announce``) and go on without one."""
    if mode not in MODES:
        raise BadInput(
            f"run.sandbox is {mode!r}", hint=f"set run.sandbox to one of {', '.join(MODES)}"
        )
    if mode == "none":
        return Sandbox("none", "run.sandbox is none", network=network)
    bwrap, why_not = available()
    if bwrap is not None:
        return Sandbox("bwrap", "bubblewrap", bwrap, network, cache)
    if mode == "bwrap":
        raise BadInput(
            f"run.sandbox is bwrap, but {why_not}",
            hint="install bubblewrap (apt-get install bubblewrap), or set run.sandbox = auto",
        )
    if announce and why_not not in _warned:
        _warned.add(why_not)
        warn(
            f"no sandbox: {why_not}; issue and test code runs unconfined, with a scrubbed "
            "environment only (set run.sandbox = none to silence this)"
        )
    return Sandbox("none", why_not, network=network)


@functools.lru_cache(maxsize=1)
def available() -> tuple[str | None, str]:
    """The bwrap executable when it can make a sandbox here, else None and why not."""
    if not sys.platform.startswith("linux"):
        return None, f"bubblewrap needs Linux, and this is {sys.platform}"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, "bubblewrap (bwrap) is not installed"
    from contribkit.core.proc import run_child, scrubbed_env

    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid"]
    try:
        result = run_child([*argv, "--unshare-net", "true"], env=scrubbed_env(), timeout=20)
    except OSError as exc:
        return None, f"bwrap cannot start ({exc})"
    if result.returncode != 0:
        lines = result.output.strip().splitlines()
        why = lines[-1] if lines else f"exit {result.returncode}"
        return None, f"bwrap cannot make a sandbox here, as user namespaces are off? ({why})"
    return bwrap, ""


_paths_cache: dict[tuple[str, str | None], tuple[str, ...]] = {}


def interpreter_paths(python: str, env: Mapping[str, str]) -> tuple[str, ...]:
    """Where ``python`` reads its standard library, packages and torch from, asked once per
    interpreter and ``PYTHONPATH`` (with ``env``: the child's own, scrubbed, environment)."""
    key = (python, env.get("PYTHONPATH"))
    if key not in _paths_cache:
        _paths_cache[key] = _ask_paths(python, env)
    return _paths_cache[key]


def _ask_paths(python: str, env: Mapping[str, str]) -> tuple[str, ...]:
    from contribkit.core.proc import run_child

    found: list[str] = [os.path.dirname(os.path.dirname(os.path.abspath(python)))]
    try:
        result = run_child([python, "-c", _PATHS_SCRIPT], env=env, timeout=60)
    except OSError:
        return tuple(found)
    for line in result.output.splitlines():
        if line.startswith(_PATHS_MARKER):
            try:
                listed = json.loads(line[len(_PATHS_MARKER) :])
            except ValueError:
                break
            found += [p for p in listed if isinstance(p, str)]
    shebang = script_interpreter(python)
    if shebang is not None and shebang != python:  # a wrapper script: what it runs, too
        found.append(shebang)
        if os.path.basename(shebang).startswith("python"):
            found += interpreter_paths(shebang, env)
    return tuple(found)


def script_interpreter(path: str) -> str | None:
    """The interpreter named by ``path``'s ``#!`` line, when it is a script (a wrapper, a
    stand-in) rather than a binary."""
    words = shebang_words(path)
    if words and os.path.basename(words[0]) == "env" and len(words) > 1:
        return shutil.which(words[1])
    return words[0] if words and os.path.isabs(words[0]) else None


def _home_dirs() -> list[str]:
    homes = [os.path.expanduser("~")]
    return [os.path.realpath(h) for h in homes if h and h != "/"]


def hidden_roots() -> list[str]:
    """The folders that children see empty: home folders, temporary folders, runtime dirs."""
    roots = [*HIDDEN_ROOTS, *_home_dirs()]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        roots.append(runtime)
    real = {os.path.realpath(r) for r in roots if os.path.isdir(r)}
    real.discard("/")
    # A root inside another is hidden by it already, unless it must exist (a home folder).
    return sorted(real, key=lambda p: (p.count("/"), p))


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def exposed_paths(paths: Iterable[str | Path], hidden: Sequence[str]) -> list[str]:
    """Which of ``paths`` must be bound back into the sandbox: those below a hidden root, as
    given and resolved, never a hidden root itself, its parents, or a folder holding secrets."""
    secret_dirs = [os.path.join(h, s) for h in _home_dirs() for s in SECRET_HOME_PATHS]
    keep: list[str] = []
    for raw in paths:
        for candidate in {os.path.abspath(raw), os.path.realpath(raw)}:
            if not os.path.exists(candidate) or candidate in keep:
                continue
            if not any(_within(candidate, root) for root in hidden):
                continue  # visible already
            if any(_within(root, candidate) for root in hidden):
                continue  # a hidden root or a parent of one
            if any(
                _within(secret, candidate) or _within(candidate, secret) for secret in secret_dirs
            ):
                continue
            keep.append(candidate)
    # A path inside another one is bound with it (a symlink's target is listed on its own).
    return [p for p in keep if not any(q != p and _within(p, q) for q in keep)]


def gpu_nodes() -> list[str]:
    return sorted({node for pattern in GPU_NODES for node in glob.glob(pattern)})


def compile_cache_env(cache: Path, env: Mapping[str, str]) -> dict[str, str]:
    """The persistent inductor and triton caches (made if missing): the user's own, else
    contribkit's."""
    dirs = {
        "TORCHINDUCTOR_CACHE_DIR": env.get("TORCHINDUCTOR_CACHE_DIR") or str(cache / "inductor"),
        "TRITON_CACHE_DIR": env.get("TRITON_CACHE_DIR") or str(cache / "triton"),
    }
    for path in dirs.values():
        Path(path).mkdir(parents=True, exist_ok=True)
    return dirs


def bwrap_command(
    confine: Confinement, cmd: Sequence[str], env: Mapping[str, str], cwd: Path | str | None
) -> tuple[list[str], dict[str, str]]:
    """The bwrap command line that runs ``cmd`` as ``confine`` says."""
    sandbox = confine.sandbox
    assert sandbox.bwrap is not None
    new_env = dict(env)
    new_env["TMPDIR"] = "/tmp"
    writable = [Path(p) for p in confine.writable]
    if sandbox.cache is not None:
        caches = compile_cache_env(sandbox.cache, env)
        new_env.update(caches)
        writable += [Path(p) for p in caches.values()]
    hidden = hidden_roots()
    args = [sandbox.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for root in hidden:
        args += ["--tmpfs", root]
    if confine.gpu:
        for node in gpu_nodes():
            args += ["--dev-bind", node, node]
    interp = interpreter_paths(confine.python, env)
    readable = [*interp, confine.python, *map(str, confine.readable)]
    if cwd is not None:
        readable.append(str(cwd))
    binds = [(p, "--ro-bind") for p in exposed_paths(readable, hidden)]
    for folder in writable:
        folder.mkdir(parents=True, exist_ok=True)
        binds.append((os.path.realpath(folder), "--bind"))
    # Parents before children; for one path, the writable bind (sorted last) wins.
    for path, flag in sorted(binds, key=lambda b: (b[0].count("/"), b[0], b[1] == "--bind")):
        args += [flag, path, path]
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not sandbox.network:
        args.append("--unshare-net")
    args += ["--new-session", "--die-with-parent"]
    if cwd is not None:
        args += ["--chdir", os.path.abspath(cwd)]
    return [*args, "--", *cmd], new_env
