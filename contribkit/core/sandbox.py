"""The one confinement of the children that run issue or test code: bubblewrap (``bwrap``) on
Linux, with resource limits (``prlimit``) everywhere it exists.

A :class:`Sandbox` is chosen once per command (:func:`from_settings`: the ``run.sandbox``
setting, ``auto``, ``bwrap`` or ``none``, and the ``run.*_limit*`` settings); each child that
runs code goes through :func:`contribkit.core.confine.run_code` with a :class:`Confinement`.
Under bwrap the child's file system is built up from nothing (the view is
:func:`contribkit.target.reproconfine.view_args`, the same one a repro script builds for
itself):

- ``/usr`` and the ``/bin``, ``/lib*`` links, the few ``/etc`` files the loader and user lookups
  read, the interpreter (its prefix, ``sys.path``, torch's folder, ``LD_LIBRARY_PATH``), the
  files it runs and the working tree, all read-only, with every ``.git`` and secret place
  (``~/.ssh``, ``~/.config``, ``GH_CONFIG_DIR``, ``XDG_CONFIG_HOME``, ...) inside them hidden;
  never a home folder, a folder above one, ``/run``, ``/var`` or the host's ``/tmp``;
- write access to its own scratch folder only (its home, ``TMPDIR`` and compile caches), plus
  the artefact folders a caller names, never where contribkit writes its logs;
- a new PID namespace (no other process's ``/proc``), a new session, and it dies with
  contribkit (so does every process it started, ``setsid`` or not); no network unless asked for
  (``--allow-network``); a minimal ``/dev``, plus the GPU device nodes and ``/sys`` for GPU legs.

Where there is no sandbox (no bwrap, no user namespaces, not Linux), ``auto`` says so once on
stderr and the child runs with a scrubbed environment and its limits only; ``bwrap`` is then an
error.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from contribkit.core.errors import BadInput, warn
from contribkit.core.shebang import shebang_words
from contribkit.target.reproconfine import (
    SANDBOX_ENV,
    dies_with_parent,
    toolchain_places,
    view_args,
)

if TYPE_CHECKING:
    from contribkit.core.config import Settings

MODES = ("auto", "bwrap", "none")
GPU_NODES = ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/dri")
TMP_SIZE = 256 * 1024 * 1024  # the sandbox's own /tmp (a tmpfs: memory); TMPDIR is on disk
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
class Limits:
    """What one leg may use: address space (MiB; 0: half the machine's memory), processes of
    its user inside the sandbox's user namespace, and the size of one file it writes (MiB).
    Wall time is each command's own timeout."""

    memory_mb: int = 0
    processes: int = 1024
    file_size_mb: int = 4096

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            settings.integer("run.memory_limit_mb"),
            settings.integer("run.process_limit"),
            settings.integer("run.file_size_limit_mb"),
        )

    def memory_bytes(self) -> int:
        if self.memory_mb > 0:
            return self.memory_mb * 1024 * 1024
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
        except (ValueError, OSError, AttributeError):  # no sysconf names: macOS, Windows
            return 0

    def argv(self, *, gpu: bool, namespace: bool) -> list[str]:
        """``prlimit`` and its options, to put before a leg's command; empty without prlimit.

        No address-space limit for a GPU leg (CUDA maps far more address space than memory),
        no process limit outside a user namespace of the sandbox's own (it would count every
        process of the user on the machine)."""
        prlimit = _prlimit()
        if prlimit is None:
            return []
        args = [
            prlimit,
            f"--fsize={_within(_hard('RLIMIT_FSIZE'), self.file_size_mb * 1024 * 1024)}",
        ]
        memory = self.memory_bytes()
        if memory and not gpu:
            args.append(f"--as={_within(_hard('RLIMIT_AS'), memory)}")
        if namespace and self.processes > 0:
            args.append(f"--nproc={_within(_hard('RLIMIT_NPROC'), self.processes)}")
        return [*args, "--"]


def _within(hard: int | None, wanted: int) -> int:
    """``wanted``, or the hard limit contribkit itself runs under when that is lower: a leg gets
    no more than its parent has (``prlimit`` cannot raise a hard limit without privilege)."""
    return wanted if hard is None else min(hard, wanted)


def _hard(which: str) -> int | None:
    import resource

    _, hard = resource.getrlimit(getattr(resource, which))
    return None if hard == resource.RLIM_INFINITY else int(hard)


@functools.lru_cache(maxsize=1)
def _prlimit() -> str | None:
    return shutil.which("prlimit") if sys.platform.startswith("linux") else None


@dataclass(frozen=True)
class Sandbox:
    """How this command's children that run code are confined."""

    kind: str  # "bwrap" or "none"
    reason: str  # why this kind: for the run record and the one-line notice
    bwrap: str | None = None  # the bwrap executable, for kind "bwrap"
    network: bool = False  # --allow-network
    limits: Limits = field(default_factory=Limits)

    @property
    def active(self) -> bool:
        return self.kind == "bwrap" and self.bwrap is not None


@dataclass(frozen=True)
class Confinement:
    """What one child may see and write, inside ``sandbox``."""

    sandbox: Sandbox
    python: str  # the interpreter: its prefix and sys.path stay readable
    readable: tuple[Path, ...] = ()  # the files it runs (the working tree, the repro folder)
    writable: tuple[Path, ...] = ()  # its scratch folder and artefact folders, never a log's
    gpu: bool = False  # bind the GPU device nodes (CUDA legs)

    def wrap(
        self, cmd: Sequence[str], env: Mapping[str, str], cwd: Path | str | None
    ) -> tuple[list[str], dict[str, str]]:
        """The command and environment that run ``cmd`` confined and limited."""
        new_env = dict(env)
        new_env[SANDBOX_ENV] = "bwrap" if self.sandbox.active else "none"
        limited = [*self.sandbox.limits.argv(gpu=self.gpu, namespace=self.sandbox.active), *cmd]
        if not self.sandbox.active:  # no --die-with-parent: a kill -9 of contribkit ends it too
            return dies_with_parent(limited), new_env
        return bwrap_command(self, limited, new_env, cwd), new_env


def choose(
    mode: str, *, network: bool = False, limits: Limits | None = None, announce: bool = True
) -> Sandbox:
    """The sandbox for ``mode`` (``run.sandbox``); with ``auto`` and none available, say so once
    on stderr (``announce``) and go on without one."""
    limits = limits or Limits()
    if mode not in MODES:
        raise BadInput(
            f"run.sandbox is {mode!r}", hint=f"set run.sandbox to one of {', '.join(MODES)}"
        )
    if mode == "none":
        return Sandbox("none", "run.sandbox is none", network=network, limits=limits)
    bwrap, why_not = available()
    if bwrap is not None:
        return Sandbox("bwrap", "bubblewrap", bwrap, network, limits)
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
    return Sandbox("none", why_not, network=network, limits=limits)


def from_settings(settings: Settings, *, network: bool = False) -> Sandbox:
    """The sandbox every command that runs code uses: ``run.sandbox`` and the limits."""
    return choose(
        settings.text("run.sandbox"), network=network, limits=Limits.from_settings(settings)
    )


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


def gpu_nodes() -> list[str]:
    return sorted({node for pattern in GPU_NODES for node in glob.glob(pattern)})


def bwrap_command(
    confine: Confinement, cmd: Sequence[str], env: Mapping[str, str], cwd: Path | str | None
) -> list[str]:
    """The bwrap command line that runs ``cmd`` as ``confine`` says (``env``: the child's)."""
    sandbox = confine.sandbox
    assert sandbox.bwrap is not None
    args = [sandbox.bwrap, "--unshare-user-try", "--unshare-pid", "--unshare-ipc"]
    args += ["--unshare-uts", "--unshare-cgroup-try", "--new-session", "--die-with-parent"]
    if not sandbox.network:
        args.append("--unshare-net")
    args += ["--dev", "/dev", "--proc", "/proc", "--size", str(TMP_SIZE), "--tmpfs", "/tmp"]
    if confine.gpu:
        for node in gpu_nodes():
            args += ["--dev-bind", node, node]
        args += ["--ro-bind-try", "/sys", "/sys"]
    interp = interpreter_paths(confine.python, env)
    libs = [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]
    readable = [*interp, *libs, confine.python, *map(str, confine.readable)]
    readable += toolchain_places(dict(env))  # the compilers torch.compile runs (CC, CXX, …)
    if cwd is not None:
        readable.append(str(cwd))
    homes = [os.path.expanduser("~"), os.environ.get("HOME", "")]
    args += view_args(readable, None, dict(os.environ), homes)
    for place in confine.writable:  # folders, or files made by the caller
        if not place.exists():
            place.mkdir(parents=True)
        real = os.path.realpath(place)
        args += ["--bind", real, real]
    if cwd is not None:
        args += ["--chdir", os.path.abspath(cwd)]
    return [*args, "--", *cmd]
