"""The attack suite for issue code (issue 13, point 1): under bubblewrap, issue code cannot read
contribkit's environment, the user's credentials or the network, nor write outside its folder,
and no secret value reaches a log, a record, a verdict detail, a PR body or the terminal; without
a sandbox the token is still redacted everywhere."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from contribkit.core import redact, sandbox
from contribkit.core.errors import BadInput
from contribkit.core.proc import is_secret, run_child, scrubbed_env
from contribkit.target import reproconfine
from contribkit.target.reprolib import VERDICT_PREFIX
from tests.conftest import Ck, RunCli
from tests.runhelpers import alive, cells, run_json, write

HAS_BWRAP = sandbox.available()[0] is not None
needs_bwrap = pytest.mark.skipif(
    not HAS_BWRAP, reason=f"no bubblewrap sandbox here: {sandbox.available()[1]}"
)

# Shaped unlike GitHub's tokens, so only redaction by value can hide them.
TOKEN = "tok-sandbox-secret-1234567"
HOSTS_TOKEN = "hostsfile-secret-5678"
SSH_KEY = "ssh-private-secret-9999"
NETRC_PASSWORD = "netrc-secret-4242"
DB_PASSWORD = "dbpass-secret-31337"
PAT = "pat-secret-27182818"


# -- the redactor and the patterns -------------------------------------------------------------
def test_widened_patterns_cover_the_names_that_escaped() -> None:
    for name in ("GITHUB_PAT", "TOKEN", "GH_TOKEN_2", "DATABASE_URL", "MY_TOKEN_FILE", "token"):
        assert is_secret(name), name
    assert is_secret("HTTPS_PROXY", value="http://me:hunter2@proxy:3128")
    assert not is_secret("HTTPS_PROXY", value="http://proxy:3128")
    assert not is_secret("PATH") and not is_secret("TORCH_LOGS")
    env = scrubbed_env({"GITHUB_PAT": "x", "TOKEN": "x", "GH_TOKEN_2": "x", "PATH": "/bin"})
    assert env == {"PATH": "/bin"}


def test_the_redactor_masks_values_credentials_and_token_shapes() -> None:
    r = redact.Redactor([TOKEN, "short"])
    text = (
        f"token {TOKEN} and short, url https://user:{DB_PASSWORD}@db.example/x, "
        "remote https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/a/b, "
        "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnop"
    )
    out = r.text(text)
    assert TOKEN not in out and DB_PASSWORD not in out and "ghp_abc" not in out
    assert "github_pat_11" not in out and "short" in out  # too short to redact by value
    assert "https://***@db.example/x" in out and "https://***@github.com/a/b" in out
    assert r.value({"a": [TOKEN, 3], TOKEN: None}) == {"a": ["***", 3], "***": None}


def test_a_secret_cut_by_a_chunk_boundary_is_still_redacted() -> None:
    stream = redact.StreamRedactor(redact.Redactor([TOKEN]))
    data = f"one {TOKEN} two\nthree {TOKEN}".encode()
    out = b"".join(stream.feed(data[i : i + 5]) for i in range(0, len(data), 5)) + stream.flush()
    assert out == b"one *** two\nthree ***"


def test_known_secrets_come_from_the_environment_files_and_registration(tmp_path: Path) -> None:
    (tmp_path / "hosts.yml").write_text(
        f"github.com:\n    oauth_token: {HOSTS_TOKEN}\n    user: me\n"
    )
    (tmp_path / ".netrc").write_text(f"machine x login me password {NETRC_PASSWORD}\n")
    env = {"GH_TOKEN": TOKEN, "CORP_THING": PAT, "GH_CONFIG_DIR": str(tmp_path), "X": "visible"}
    env["HOME"] = str(tmp_path)
    redact.register("registered-secret-1")
    found = redact.known_secrets(env, extra_patterns=["CORP_*"])
    assert {TOKEN, PAT, HOSTS_TOKEN, NETRC_PASSWORD, "registered-secret-1"} <= found
    assert "visible" not in found


def test_everything_printed_is_redacted(run_cli: RunCli, tmp_path: Path) -> None:
    """The print boundary: an error message that quotes a secret shows ***."""
    proc = run_cli("run", str(tmp_path / TOKEN), env={"GH_TOKEN": TOKEN})
    assert proc.returncode == 2 and "***" in proc.stderr
    assert TOKEN not in proc.stderr + proc.stdout


# -- choosing the sandbox ----------------------------------------------------------------------
def test_modes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert sandbox.choose("none").kind == "none"
    with pytest.raises(BadInput, match=r"run\.sandbox is 'maybe'"):
        sandbox.choose("maybe")
    monkeypatch.setattr(sandbox, "available", lambda: (None, "no bwrap in this test"))
    monkeypatch.setattr(sandbox, "_warned", set())
    with pytest.raises(BadInput, match=r"run\.sandbox is bwrap, but no bwrap in this test"):
        sandbox.choose("bwrap")
    for _ in range(2):
        chosen = sandbox.choose("auto")
        assert (chosen.kind, chosen.reason) == ("none", "no bwrap in this test")
    assert capsys.readouterr().err.count("no sandbox: no bwrap in this test") == 1  # said once


def test_the_view_binds_no_home_no_secret_and_no_git(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The view is built from what a leg needs: a home folder, a folder above one and a secret
    place are never bound; a bound tree's .git and the secret places inside it are hidden."""
    home = tmp_path / "home"
    for rel in (".ssh", ".config/gh", "venv/lib", "tree/.git", "tree/src", "tree/ghconf"):
        (home / rel).mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    wanted = [tmp_path, home, home / ".config", home / ".ssh", home / "venv", home / "venv/lib"]
    environ = {"HOME": str(home), "GH_CONFIG_DIR": str(home / "tree/ghconf")}
    args = reproconfine.view_args([*map(str, wanted)], str(home / "tree"), environ, [str(home)])
    binds = [
        args[i + 1] for i, a in enumerate(args) if a == "--ro-bind" and args[i + 1] != "/dev/null"
    ]
    hidden = [args[i + 1] for i, a in enumerate(args) if a == "--tmpfs"]
    assert [b for b in binds if b.startswith(str(tmp_path))] == [
        str(home / "tree"),
        str(home / "venv"),
    ]
    assert hidden == [str(home / "tree/.git"), str(home / "tree/ghconf")]
    assert "/usr" in binds and "/etc/ld.so.cache" in args and "/etc" not in binds


# -- the attacks -------------------------------------------------------------------------------
ATTACK = """\
import glob, os, socket, sys

found = []

def attempt(name, fn):
    try:
        got = fn()
    except Exception as exc:
        print(f"ATTACK {name}: blocked ({type(exc).__name__})", flush=True)
        return
    print(f"ATTACK {name}: got {got!r}", flush=True)
    found.append(f"{name}={got!r}")

def environ_tokens(paths):
    leaked = []
    for path in paths:
        try:
            data = open(path, "rb").read().decode(errors="replace")
        except OSError:
            continue
        leaked += [v for v in data.split("\\0") if v.startswith(("GH_TOKEN=", "GITHUB_PAT="))]
    if not leaked:
        raise LookupError("no token in any /proc/*/environ")
    return sorted(set(leaked))

def read(path):
    return open(path).read().strip()

def connect():
    with socket.create_connection(("127.0.0.1", PORT), timeout=3) as conn:
        conn.sendall(b"hello")
    return "connected"

def write(path):
    with open(path, "w") as fh:
        fh.write("pwned")
    return "wrote " + path

attempt("parent-environ", lambda: environ_tokens([f"/proc/{os.getppid()}/environ"]))
attempt("proc-environ", lambda: environ_tokens(glob.glob("/proc/[0-9]*/environ")))
for home in (os.path.expanduser("~"), HOME):
    attempt("gh-hosts", lambda: read(os.path.join(home, ".config/gh/hosts.yml")))
    attempt("ssh", lambda: read(os.path.join(home, ".ssh/id_ed25519")))
    attempt("netrc", lambda: read(os.path.join(home, ".netrc")))
attempt("socket", connect)
for path in OUTSIDE:
    attempt("write", lambda: write(path))
attempt("env-token", lambda: os.environ["GH_TOKEN"])
print("PREFIX NOT_REPRODUCED leaked: " + ("; ".join(found) or "nothing"))
"""


@pytest.fixture
def fake_home(tmp_path: Path) -> Path:
    """A home folder holding credentials: gh's login, an ssh key, a netrc."""
    home = tmp_path / "home-with-secrets"
    write(home, ".config/gh/hosts.yml", f"github.com:\n    oauth_token: {HOSTS_TOKEN}\n")
    write(home, ".ssh/id_ed25519", SSH_KEY)
    write(home, ".netrc", f"machine github.com login me password {NETRC_PASSWORD}\n")
    return home


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A loopback TCP server on the host: the port, and what each connection sent."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    got: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                got.append(conn.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], got
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()


def attack_env(home: Path, **extra: str) -> dict[str, str]:
    return {
        "HOME": str(home),
        "GH_CONFIG_DIR": str(home / ".config/gh"),
        "GH_TOKEN": TOKEN,
        "GITHUB_PAT": PAT,
        "DATABASE_URL": f"postgres://app:{DB_PASSWORD}@db.internal/app",
        **extra,
    }


def write_attack(fork: Path, home: Path, port: int, outside: list[Path]) -> None:
    source = (
        ATTACK.replace("PREFIX", VERDICT_PREFIX)
        .replace("PORT", str(port))
        .replace("HOME)", f"{str(home)!r})")
        .replace("OUTSIDE", repr([str(p) for p in outside]))
    )
    write(fork, "repros/attack/repro.py", source)


def everything_written(fork: Path, record: dict[str, object], stdout: str, body: str) -> str:
    logs = "".join(p.read_text() for p in (fork / ".contribkit/runs").rglob("*.log"))
    records = "".join(p.read_text() for p in (fork / ".contribkit/runs").glob("*.json"))
    return "\n".join([logs, records, json.dumps(record), stdout, body])


@needs_bwrap
@pytest.mark.slow
def test_issue_code_under_bwrap_reaches_no_secret(
    ck: Ck, fork_repo: Path, fake_home: Path, tmp_path: Path, listener: tuple[int, list[bytes]]
) -> None:
    port, connections = listener
    outside = [fork_repo / "pwned.txt", fork_repo / ".git/hooks/pre-commit", tmp_path / "pwned"]
    write_attack(fork_repo, fake_home, port, outside)
    env = attack_env(fake_home, CONTRIBKIT_RUN_SANDBOX="bwrap")
    code, record = run_json(ck, "repros/attack", "--devices", "cpu", env=env)
    cell = cells(record)[("repros/attack/repro.py", "cpu", 1)]
    assert (code, cell["status"]) == (0, "NOT_REPRODUCED"), cell["detail"]
    assert (record["sandbox"], record["sandbox_reason"]) == ("bwrap", "bubblewrap")
    log = (fork_repo / cell["log_path"]).read_text()
    for name in ("parent-environ", "proc-environ", "gh-hosts", "ssh", "netrc", "socket"):
        lines = [line for line in log.splitlines() if line.startswith(f"ATTACK {name}:")]
        assert lines and all(": blocked (" in line for line in lines), lines
    assert connections == []  # nothing reached the host's loopback
    assert not any(p.exists() for p in outside[::2]), "a write escaped the leg's folder"
    assert not (fork_repo / ".git/hooks/pre-commit").exists()
    body = ck("pr", "--offline", env=env).stdout
    assert "NOT_REPRODUCED" in body
    seen = everything_written(fork_repo, record, "", body)
    for secret in (TOKEN, HOSTS_TOKEN, SSH_KEY, NETRC_PASSWORD, DB_PASSWORD, PAT):
        assert secret not in seen, secret


@pytest.mark.slow
def test_without_a_sandbox_the_token_is_still_redacted_everywhere(
    ck: Ck, fork_repo: Path, fake_home: Path, tmp_path: Path, listener: tuple[int, list[bytes]]
) -> None:
    port, _ = listener
    write_attack(fork_repo, fake_home, port, [tmp_path / "scratch.txt"])
    env = attack_env(fake_home, CONTRIBKIT_RUN_SANDBOX="none")
    proc = ck("run", "--json", "repros/attack", "--devices", "cpu", env=env)
    record = json.loads(proc.stdout)
    cell = cells(record)[("repros/attack/repro.py", "cpu", 1)]
    assert record["sandbox"] == "none" and cell["status"] == "NOT_REPRODUCED"
    # Unconfined, the attack works: it read gh's login and /proc's environments (where
    # contribkit blanked the token's value: tests/test_attacks.py) …
    assert "proc-environ=['GH_TOKEN=', " in cell["detail"] and "gh-hosts=" in cell["detail"]
    assert "netrc=" in cell["detail"]
    body = ck("pr", "--offline", env=env).stdout
    shown = ck("run", "--last", env=env).stdout
    seen = everything_written(fork_repo, record, proc.stdout + proc.stderr + shown, body)
    # … but the token, and every value contribkit knows to be secret, shows as ***.
    for secret in (TOKEN, HOSTS_TOKEN, NETRC_PASSWORD, DB_PASSWORD, PAT):
        assert secret not in seen, secret
    assert "***" in body


@pytest.mark.slow
@pytest.mark.parametrize("confinement", ["bwrap", "none"])
def test_a_grandchild_that_calls_setsid_dies_on_ctrl_c(
    fork_repo: Path, shared_cache: str, tmp_path: Path, confinement: str
) -> None:
    """Issue 13, point 9: a new session escapes a process-group kill, but neither the PID
    namespace (bwrap) nor the kill of the leg's whole process tree (no sandbox)."""
    if confinement == "bwrap" and not HAS_BWRAP:
        pytest.skip(f"no bubblewrap sandbox here: {sandbox.available()[1]}")
    marker = f"contribkit-setsid-{os.getpid()}-{time.monotonic_ns()}"
    write(
        fork_repo,
        "repros/escape/repro.py",
        textwrap.dedent(f"""\
            import subprocess, sys, time
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", {marker!r}],
                             start_new_session=True)
            print("started", flush=True)
            time.sleep(600)
        """),
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "contribkit", "run", "repros/escape", "--devices", "cpu"],
        cwd=fork_repo,
        env={
            **os.environ,
            "CONTRIBKIT_CACHE_DIR": shared_cache,
            "CONTRIBKIT_RUN_SANDBOX": confinement,
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    found: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not found:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            found = pids_with(marker)
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        deadline = time.monotonic() + 10
        while any(map(alive, found)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(map(alive, found)), "the setsid grandchild outlived Ctrl-C"
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in pids_with(marker):
            os.kill(pid, signal.SIGKILL)


def pids_with(marker: str) -> list[int]:
    """Host pids of live processes whose command line holds ``marker``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes() and alive(int(entry.name)):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


@needs_bwrap
def test_run_child_confined_sees_no_parent_and_no_network(tmp_path: Path) -> None:
    """The core function on its own: a new PID namespace, no network, a read-only tree, its
    folder writable."""
    chosen = sandbox.choose("bwrap")
    leg = tmp_path / "leg"
    confine = sandbox.Confinement(chosen, python=sys.executable, writable=(leg,))
    code = textwrap.dedent(f"""\
        import os, socket
        print("ppid", os.getppid(), "pids", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
        try:
            socket.create_connection(("1.1.1.1", 53), timeout=2)
        except OSError as exc:
            print("network", type(exc).__name__)
        open({str(leg / "ok")!r}, "w").write("ok")
        try:
            open({str(tmp_path / "escape")!r}, "w")
        except OSError as exc:
            print("outside", type(exc).__name__)
    """)
    result = run_child(
        [sys.executable, "-c", code], env=scrubbed_env(), cwd=leg, confine=confine, timeout=60
    )
    assert result.returncode == 0, result.output
    assert "ppid 1 pids [1, 2]" in result.output
    assert "network OSError" in result.output or "network gaierror" in result.output
    assert (leg / "ok").read_text() == "ok"
    assert not (tmp_path / "escape").exists()


@pytest.mark.slow
def test_the_debug_script_run_by_hand_logs_no_token(
    run_cli: RunCli, fork_repo: Path, tmp_path: Path
) -> None:
    target = write(
        tmp_path,
        "case/show_env.py",
        "import os\nfor k in sorted(os.environ):\n    print(k + '=' + os.environ[k])\n",
    )
    made = run_cli("debug", "--preset", "graph-breaks", "--script", str(target), cwd=fork_repo)
    assert made.returncode == 0, made.stderr
    secrets = {
        "GH_TOKEN": TOKEN,
        "GITHUB_PAT": PAT,
        "gh_token_2": "lowercase-secret-77",
        "SERVICE_URL": f"https://bot:{DB_PASSWORD}@svc.example/",
    }
    env = {**os.environ, **secrets, "HARMLESS_SETTING": "visible"}
    script = target.parent / "debug_issue.sh"
    ran = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True)
    log = (target.parent / "debug_issue.log").read_text()
    assert "HARMLESS_SETTING=visible" in log, ran.stderr
    for name, value in secrets.items():
        assert f"{name}=" not in log and value not in log + ran.stdout + ran.stderr


@needs_bwrap
@pytest.mark.slow
def test_debug_run_confines_the_script_too(
    run_cli: RunCli,
    fork_repo: Path,
    fake_home: Path,
    tmp_path: Path,
    shared_cache: str,
    listener: tuple[int, list[bytes]],
) -> None:
    port, connections = listener
    outside = [fork_repo / "pwned.txt"]
    write_attack(fork_repo, fake_home, port, outside)
    target = fork_repo / "repros/attack/repro.py"
    env = attack_env(fake_home, CONTRIBKIT_RUN_SANDBOX="bwrap", CONTRIBKIT_CACHE_DIR=shared_cache)
    proc = run_cli(
        "debug", "-p", "graph-breaks", "-s", str(target), "--run", "--json", cwd=fork_repo, env=env
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["sandbox"] == "bwrap" and result["run"]["status"] == "NOT_REPRODUCED"
    log = Path(result["run"]["log"]).read_text()
    for name in ("parent-environ", "proc-environ", "gh-hosts", "ssh", "netrc", "socket"):
        lines = [line for line in log.splitlines() if line.startswith(f"ATTACK {name}:")]
        assert lines and all(": blocked (" in line for line in lines), lines
    assert connections == [] and not outside[0].exists()
    for secret in (TOKEN, HOSTS_TOKEN, SSH_KEY, NETRC_PASSWORD, DB_PASSWORD, PAT):
        assert secret not in log + proc.stdout + proc.stderr, secret


def test_the_view_holds_the_toolchain_the_environment_names(tmp_path: Path) -> None:
    """CXX, CC and the CUDA toolkit outside /usr (a conda or /opt toolchain) are bound: the
    compiler and its install's program and library folders, never the install folder whole;
    a bare name or a missing path binds nothing."""
    compiler = tmp_path / "opt/gcc-13/bin/g++"
    for sub in ("bin", "lib", "libexec", "share/secrets"):
        (tmp_path / "opt/gcc-13" / sub).mkdir(parents=True, exist_ok=True)
    compiler.write_text("#!/bin/sh\n")
    cuda = tmp_path / "opt/cuda-12"
    for sub in ("lib64", "nvvm", "samples"):
        (cuda / sub).mkdir(parents=True)
    environ = {
        "CXX": str(compiler),
        "CC": "gcc -m64",
        "CUDA_HOME": str(cuda),
        "CUDA_PATH": str(tmp_path / "missing"),
    }
    gcc = tmp_path / "opt/gcc-13"
    assert reproconfine.toolchain_places(environ) == [
        str(compiler),
        str(gcc / "bin"),
        str(gcc / "lib"),
        str(gcc / "libexec"),
        str(cuda / "lib64"),
        str(cuda / "nvvm"),
    ]


def test_a_toolchain_in_a_home_binds_its_tools_not_the_home(tmp_path: Path) -> None:
    """CC=~/.local/bin/clang: ~/.local/bin and ~/.local/lib, never ~/.local (keyrings under
    share/) nor the home; CUDA_HOME=$HOME binds nothing of it."""
    home = tmp_path / "home"
    for rel in (".local/bin", ".local/lib", ".local/share/keyrings", ".ssh"):
        (home / rel).mkdir(parents=True)
    (home / ".local/bin/clang").write_text("#!/bin/sh\n")
    environ = {"HOME": str(home), "CC": str(home / ".local/bin/clang"), "CUDA_HOME": str(home)}
    places = reproconfine.toolchain_places(environ)
    args = reproconfine.view_args(places, None, environ, [str(home)])
    binds = [args[i + 1] for i, a in enumerate(args) if a == "--ro-bind"]
    mine = sorted(b for b in binds if b.startswith(str(tmp_path)))
    assert mine == [str(home / ".local/bin"), str(home / ".local/lib")]


@pytest.mark.slow
@needs_bwrap
def test_inductor_finds_a_compiler_outside_usr_inside_the_sandbox(tmp_path: Path, ck: Ck) -> None:
    """Seen on a GPU machine whose image names its compiler in CXX: the sandbox hid it, and
    inductor found "no working C++ compiler". A wrapper outside /usr stands for it here."""
    compiler = tmp_path / "toolchain/bin/g++"
    compiler.parent.mkdir(parents=True)
    compiler.write_text('#!/bin/sh\nexec g++ "$@"\n')
    compiler.chmod(0o755)
    issue = tmp_path / "issue.md"
    issue.write_text(
        "# compiled sin raises\n\n```python\nimport torch\n"
        "print(torch.compile(torch.sin)(torch.ones(3)))\n```\n"
    )
    out = tmp_path / "repro"
    made = ck("repro", "--from-file", str(issue), "--number", "5", "-o", str(out))
    assert made.returncode == 0, made.stderr
    env = {**os.environ, "CXX": str(compiler)}
    proc = subprocess.run(
        [sys.executable, str(out / "repro.py"), "--device", "cpu"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert "tensor([0.8415, 0.8415, 0.8415])" in proc.stdout, proc.stderr[-2000:]
    assert "build tool" not in proc.stdout
    # `contribkit run` builds its own sandbox for the leg: the compiler is seen there too.
    ran = ck("run", str(out), "--devices", "cpu", "--json", env={"CXX": str(compiler)})
    cell = json.loads(ran.stdout)["cells"][0]
    assert cell["verdict"] != "CANNOT_RUN" or "build tool" not in cell["detail"], cell
