# contribkit repro runtime, part 3: confinement. Embedded verbatim in every generated repro
# script after reprojudge.py and before reprolib.py, so it is standard-library only, runs on
# Python 3.9+, and has no __future__ imports. contribkit itself imports its constants (the
# secret and socket variable names): one list for the script and for contribkit's children.
#
# A repro run directly (`python repros/issue-N/repro.py`, `git bisect run ...`) runs the
# issue's code in a child process. That child gets the environment without secrets (tokens,
# passwords, credentials in URLs) nor the variables that lead to a socket or a config folder
# (SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS, GH_CONFIG_DIR, ...), a home, temporary folder and
# compile caches of its own, its own session (killed whole at the end: no daemon outlives the
# script), and, where bubblewrap works, a sandbox built from what it needs: the interpreter, its
# packages, the repro folder and the working tree without .git, no network, no other process.
# Where there is no bubblewrap, one line on stderr says so.
import contextlib
import fnmatch
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Dict, Iterable, List, Optional, Tuple

# contribkit:judge-import (the runtime module holds the other files' text above instead)
from contribkit.target.reprosecrets import SECRET_NAMES

# contribkit:end-judge-import
# Variables that lead issue code to a socket, an agent, a credential or a config folder of the
# user's (an ssh agent: SSH_AUTH_SOCK; a session bus: DBUS_SESSION_BUS_ADDRESS; gh's login:
# GH_CONFIG_DIR), dropped for every child that runs issue or test code.
REACH_NAMES = (
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "*_ASKPASS",
    "GPG_AGENT_INFO",
    "GNUPGHOME",
    "DBUS_*",
    "*_SOCK",
    "*_SOCKET",
    "DOCKER_*",
    "KRB5CCNAME",
    "NETRC",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XDG_*",
    "GH_CONFIG_DIR",
    "GIT_*",
)
# A value that holds credentials (scheme://user:password@, a token in a URL) or a GitHub token
# is a secret whatever its variable's name (contribkit.core.redact: the same two shapes).
_URL_CREDENTIALS = re.compile(
    r"[a-z][a-z0-9+.-]*://(?:[^/\s:@'\"]+:[^/\s@'\"]+|gh[pousr]_[A-Za-z0-9_]+|github_pat_[A-Za-z0-9_]+)@",
    re.I,
)
_TOKEN_SHAPE = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")
SANDBOX_ENV = "CONTRIBKIT_SANDBOX"  # set by contribkit for a child it runs: "bwrap" or "none"
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# /etc as the dynamic loader, user lookups and the clock need it; nothing else of it.
ETC_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "passwd",
    "group",
    "nsswitch.conf",
    "localtime",
    "os-release",
)
# Below a home folder: where credentials live (never bound, hidden inside a bound folder).
SECRET_HOME_PATHS = (
    ".ssh",
    ".netrc",
    ".config",
    ".git-credentials",
    ".gitconfig",
    ".aws",
    ".docker",
    ".gnupg",
    ".kube",
    ".pypirc",
    ".azure",
    ".local/share/keyrings",
)
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36


def is_secret_name(name: str, extra: "Tuple[str, ...]" = ()) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, p.upper()) for p in SECRET_NAMES + tuple(extra))


def holds_secret(value: str) -> bool:
    return bool(_URL_CREDENTIALS.search(value) or _TOKEN_SHAPE.search(value))


def reaches_out(name: str) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, p) for p in REACH_NAMES)


def code_env(environ: Dict[str, str], scratch: str) -> Dict[str, str]:
    """The environment of a child that runs issue code: no secret, nothing that reaches out,
    and a home, temporary folder and compile caches inside ``scratch`` (its own)."""
    env = {
        k: v
        for k, v in environ.items()
        if not (is_secret_name(k) or holds_secret(v) or reaches_out(k))
    }
    return dict(env, **scratch_env(scratch))


def scratch_env(scratch: str) -> Dict[str, str]:
    """HOME, TMPDIR and the compile caches inside ``scratch`` (made here)."""
    places = {
        "HOME": "home",
        "TMPDIR": "tmp",
        "TORCHINDUCTOR_CACHE_DIR": "inductor",
        "TRITON_CACHE_DIR": "triton",
    }
    env = {}
    for name, sub in places.items():
        env[name] = os.path.join(scratch, sub)
        os.makedirs(env[name], exist_ok=True)
    return env


def hide_environ() -> bool:
    """Keep this process's environment (it holds the token its children do not get) from
    other processes of the user (Linux; False elsewhere): its /proc files become unreadable
    (not dumpable), and for a reader that may read them all the same (root), the values of
    secrets and of the variables that reach out (an agent's socket) in the environment block
    the kernel shows as /proc/PID/environ are blanked."""
    hidden = _prctl(_PR_SET_DUMPABLE, 0)
    if hidden:
        _blank_secrets()
    return hidden


def _blank_secrets() -> None:
    """Overwrite the secret values in this process's initial environment block (what
    /proc/PID/environ reads), then set them again with putenv, on the heap, so that this
    process and children that inherit its environment still see them."""
    import ctypes

    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # env_start, env_end (fields 50, 51)
        block = ctypes.string_at(start, end - start)
    except (OSError, ValueError, IndexError):
        return
    offset = 0
    for entry in block.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        text = value.decode("utf-8", "replace")
        key = name.decode("utf-8", "replace")
        if sep and value and (is_secret_name(key) or reaches_out(key) or holds_secret(text)):
            os.putenv(name, value)  # a new copy first: libc's environ points at it from now on
            ctypes.memset(start + offset + len(name) + 1, 0, len(value))
        offset += len(entry) + 1


def become_subreaper() -> bool:
    """Orphans of this process's children become its own (Linux), so a daemon stays findable."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes  # here: contribkit imports this module for its names, and needs no ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def descendants(roots: Iterable[int]) -> List[int]:
    """Every process below ``roots`` (parent links read from Linux's /proc; none elsewhere).
    contribkit's own children are found with it too (contribkit.core.proc)."""
    children: Dict[int, List[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/" + name + "/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    found, todo = [], list(roots)
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def end_all(group: int) -> None:
    """Kill ``group`` and every process left below this one (a daemon that called setsid and
    forked twice is ours as the subreaper), then reap them."""
    with contextlib.suppress(OSError):
        os.killpg(group, signal.SIGKILL)
    for _ in range(50):
        left = descendants([os.getpid()])
        if not left:
            return
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        time.sleep(0.01)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def tree_root(path: str) -> Optional[str]:
    """The working tree that holds ``path`` (a folder with a .git entry), if any."""
    here = os.path.realpath(path)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def secret_places(environ: Dict[str, str]) -> List[str]:
    """Where credentials live: each home's secret folders and files, and the config folders
    the environment names; never bound, and hidden where a bound folder holds them."""
    homes = [os.path.expanduser("~"), environ.get("HOME", "")]
    places = [os.path.join(h, r) for h in homes if h and h != "/" for r in SECRET_HOME_PATHS]
    for name in ("XDG_CONFIG_HOME", "GH_CONFIG_DIR", "GNUPGHOME", "XDG_RUNTIME_DIR"):
        if environ.get(name):
            places.append(environ[name])
    return [os.path.realpath(p) for p in places]


def view_args(
    readable: List[str], tree: Optional[str], environ: Dict[str, str], homes: List[str]
) -> List[str]:
    """bwrap arguments of a file system built up from nothing: the system's programs and
    libraries, the few /etc files they read, the folders in ``readable`` and the working tree
    ``tree`` without its .git; never a home folder or a folder above one, nor a secret place."""
    args: List[str] = []
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    for name in ETC_FILES:
        args += ["--ro-bind-try", "/etc/" + name, "/etc/" + name]
    secrets = secret_places(environ)
    homes = [os.path.realpath(h) for h in homes if h and h != "/"]
    binds: List[str] = []
    for raw in readable + ([tree] if tree else []):
        for path in {os.path.abspath(raw), os.path.realpath(raw)}:
            if not os.path.exists(path) or any(_within(path, s) for s in secrets):
                continue
            if path == "/" or any(_within(h, path) for h in homes):
                continue  # a home folder, or a folder above one
            if any(_within(path, s) for s in SYSTEM_DIRS) or path in binds:
                continue
            if "/.git/" in path + "/":
                continue
            binds.append(path)
    binds = [p for p in binds if not any(q != p and _within(p, q) for q in binds)]
    hide: List[str] = []
    for path in sorted(binds, key=lambda p: (p.count("/"), p)):
        args += ["--ro-bind", path, path]
        if os.path.isdir(path) and os.path.lexists(os.path.join(path, ".git")):
            hide.append(os.path.join(path, ".git"))
        hide += [s for s in secrets if _within(s, path) and os.path.lexists(s)]
    for path in dict.fromkeys(hide):
        args += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
    return args


def bwrap_available() -> "Tuple[Optional[str], str]":
    """The bwrap executable when it makes a sandbox here, else None and why not."""
    if not sys.platform.startswith("linux"):
        return None, "bubblewrap needs Linux, and this is " + sys.platform
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, "bubblewrap (bwrap) is not installed"
    argv = [bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--", "true"]
    try:
        code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    except OSError as exc:
        return None, "bwrap cannot start (" + str(exc) + ")"
    if code != 0:
        return None, "bwrap cannot make a sandbox here (are user namespaces off?)"
    return bwrap, ""


def interpreter_places() -> List[str]:
    """Where this interpreter reads its standard library, packages and torch from."""
    import importlib.util

    places = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    places += [p for p in sys.path if p]
    places.append(os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    for location in (spec and spec.submodule_search_locations) or []:
        places.append(os.path.dirname(location))
    for folder in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
        if folder:
            places.append(folder)
    return places + toolchain_places(dict(os.environ))


# The build tools torch.compile runs, where the environment names them: inductor's C++ compiler
# (CXX), triton's launcher compiler (CC), the CUDA toolkit (ptxas, nvcc, headers). Class: an
# image whose compilers live outside /usr (a conda or /opt toolchain): inductor then finds "no
# working C++ compiler" in the sandbox, and triton's build a FileNotFoundError.
TOOL_VARIABLES = ("CC", "CXX", "CUDA_HOME", "CUDA_PATH", "TRITON_PTXAS_PATH")
_TOOL_FOLDERS = ("bin", "lib", "lib64", "libexec", "include", "nvvm")


def toolchain_places(environ: Dict[str, str]) -> List[str]:
    """What a leg needs of the tools ``environ`` names: a compiler's own file and the program
    and library folders of its install (``bin``, ``lib``, ``lib64``, ``libexec``, ``include``
    beside the ``bin`` it sits in), a toolkit root's same folders (and ``nvvm``); never the
    install folder whole (``~/.local`` holds more than a compiler), never a bare name (PATH
    finds those in /usr). view_args still drops a home, a folder above one and secrets."""
    places = []
    for name in TOOL_VARIABLES:
        value = environ.get(name, "").split(" ")[0]  # CC="gcc -m64": the program
        if not os.path.isabs(value) or not os.path.exists(value):
            continue
        real = os.path.realpath(value)
        if os.path.isdir(real):
            root = real
        else:
            places.append(real)
            if os.path.basename(os.path.dirname(real)) != "bin":
                continue
            root = os.path.dirname(os.path.dirname(real))
        for sub in _TOOL_FOLDERS:
            if os.path.isdir(os.path.join(root, sub)):
                places.append(os.path.join(root, sub))
    return places


def dies_with_parent(cmd: List[str]) -> List[str]:
    """``cmd`` killed (SIGKILL) when the process that started it dies, however it dies: what
    bubblewrap's --die-with-parent gives a sandboxed child, here through util-linux's setpriv
    where it exists (Linux); unchanged elsewhere."""
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    return [setpriv, "--pdeathsig", "KILL", "--", *cmd] if setpriv else cmd


def confined_command(
    cmd: List[str], env: Dict[str, str], script: str, writable: List[str]
) -> "Tuple[List[str], str]":
    """``cmd`` inside bubblewrap (with the repro folder, its working tree without .git, the
    interpreter and ``writable``), or unchanged and why not."""
    bwrap, why_not = bwrap_available()
    if bwrap is None:
        return dies_with_parent(cmd), why_not
    folder = os.path.dirname(os.path.abspath(script))
    if len(cmd) > 1 and cmd[1] == script:  # the child may start in another folder (below)
        cmd = [cmd[0], os.path.abspath(script), *cmd[2:]]
    args = [bwrap, "--unshare-user-try", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-net", "--unshare-cgroup-try", "--new-session", "--die-with-parent"]
    args += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for node in ("/dev/nvidia*", "/dev/dri"):
        for path in sorted(glob.glob(node)):
            args += ["--dev-bind", path, path]
    homes = [os.path.expanduser("~"), os.environ.get("HOME", "")]
    readable = [*interpreter_places(), folder, os.path.abspath(sys.executable)]
    args += view_args(readable, tree_root(folder), dict(os.environ), homes)
    for path in writable:
        args += ["--bind", path, path]
    # The working folder only where the view holds it (the repro folder, its working tree, a
    # writable folder): run from elsewhere (a home folder), the code starts in the repro's.
    cwd = os.getcwd()
    tree = tree_root(folder)
    seen = [folder, *([tree] if tree else []), *writable]
    inside = any(cwd == p or cwd.startswith(p.rstrip(os.sep) + os.sep) for p in seen)
    args += ["--chdir", cwd if inside and os.path.isdir(cwd) else folder]
    env[SANDBOX_ENV] = "bwrap"
    return [*args, "--", *cmd], ""


class Confined:
    """The issue code's child, confined: ``start`` it; ``end`` kills every process it left;
    ``remove`` removes its scratch folder (its home, temporary folder and compile caches)."""

    def __init__(self) -> None:
        hide_environ()
        become_subreaper()
        self.scratch = tempfile.mkdtemp(prefix="contribkit-repro-")
        self.outer = os.environ.get(SANDBOX_ENV)  # set: contribkit already chose

    def exit_code(self, child: "subprocess.Popen[bytes]", code: int) -> int:
        """The child's exit code as if it ran unwrapped: bubblewrap exits 128+N when what it
        ran was killed by signal N (a SIGSEGV: 139), where a plain child reads -N."""
        wrapped = child.args[0] if isinstance(child.args, list) else ""
        if os.path.basename(str(wrapped)) == "bwrap" and 128 < code < 128 + 65:
            return -(code - 128)
        return code

    def start(self, cmd: List[str], env: Dict[str, str]) -> "subprocess.Popen[bytes]":
        env = code_env(env, self.scratch)
        if self.outer:  # contribkit confined (or, as the user asked, did not confine) the script
            env[SANDBOX_ENV] = self.outer
        else:
            cmd, why_not = confined_command(cmd, env, sys.argv[0], [self.scratch])
            if why_not:
                env[SANDBOX_ENV] = "none"
                print(
                    "contribkit: no sandbox: "
                    + why_not
                    + "; the issue's code runs unconfined, with a scrubbed environment",
                    file=sys.stderr,
                    flush=True,
                )
        return subprocess.Popen(cmd, env=env, start_new_session=os.name == "posix")

    def end(self, child: "subprocess.Popen[bytes]") -> None:
        if os.name == "posix":
            end_all(child.pid)
        else:
            child.kill()
        child.wait()

    def remove(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)
