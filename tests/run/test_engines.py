"""``run --engine ray`` and ``--engine slurm`` (submitit's local executor) on one machine, real
parts only: a local Ray cluster (2 CPUs, 1 logical GPU), real legs, the real CLI.

They skip, with the reason, where the extras are not installed (``pip install -e '.[ray,slurm]'``);
CI runs them in a step of their own (README, "Development")."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from contribkit.target.reprolib import VERDICT_EXIT, VERDICT_PREFIX
from tests.conftest import Ck
from tests.runhelpers import cells, run_json, wait_dead, write

pytestmark = pytest.mark.slow

SENTINEL = "sentinel-8c1f3e-never-shown"


def needs(module: str, extra: str) -> pytest.MarkDecorator:
    try:
        __import__(module)
    except ImportError:
        missing = True
    else:
        missing = False
    why = f"{module} is not installed (pip install -e '.[{extra}]')"
    return pytest.mark.skipif(missing, reason=why)


needs_ray = needs("ray", "ray")
needs_submitit = needs("submitit", "slurm")


def repro(body: str, verdict: str = "NOT_REPRODUCED", detail: str = "done") -> str:
    """A repro script honouring the verdict contract, ``body`` run first."""
    return (
        "import os, sys, time\n"
        + textwrap.dedent(body)
        + f"\nprint({VERDICT_PREFIX!r} + ' {verdict} ' + {detail})\n"
        + f"sys.exit({VERDICT_EXIT[verdict]})\n"
    )


@pytest.fixture
def sweep(ck: Ck, fork_repo: Path, tmp_path: Path) -> list[str]:
    """The bundled example and a few repros of every verdict, and a plain test file."""
    made = ck("repro", "--example")
    assert made.returncode == 0, made.stderr
    example = sorted(p.name for p in (fork_repo / "repros").iterdir())[0]
    marker = tmp_path / "outside-marker"  # outside the checkout: a sandbox hides it
    marker.write_text("x")
    write(fork_repo, "repros/fixed/repro.py", repro("x = sum(range(10))", detail="'sum ok'"))
    write(fork_repo, "repros/broken/repro.py", repro("", "REPRODUCED", "'still broken'"))
    write(
        fork_repo,
        "repros/sees/repro.py",
        repro(f"seen = os.path.exists({str(marker)!r})", detail="f'marker-seen={seen}'"),
    )
    write(fork_repo, "test/test_plain.py", "def test_one():\n    assert 1 + 1 == 2\n")
    return [
        f"repros/{example}",
        "repros/fixed",
        "repros/broken",
        "repros/sees",
        "test/test_plain.py",
    ]


def same_cells(local: dict[str, Any], other: dict[str, Any], engine: str) -> None:
    """The cells, verdicts and test counts of ``other`` are ``local``'s, and say where they ran."""
    want, got = cells(local), cells(other)
    assert want.keys() == got.keys()
    for key, cell in want.items():
        theirs = got[key]
        assert (theirs["status"], theirs["verdict"], theirs["counts"]) == (
            cell["status"],
            cell["verdict"],
            cell["counts"],
        ), key
        assert cell["engine"] == "local" and theirs["engine"] == engine
        assert theirs["worker"] and theirs["sandbox"] in ("bwrap", "none")
        log = Path(theirs["log_path"])
        assert log.is_file() and "CONTRIBKIT_REMOTE" not in log.read_text()
    assert local["ok"] == other["ok"]


def sandbox_is_honest(record: dict[str, Any]) -> None:
    """A cell that says bwrap ran where the file outside the checkout was hidden, and one that
    says none ran where it was seen: the record never claims a sandbox that was not there."""
    cell = cells(record)[("repros/sees/repro.py", "cpu", 1)]
    assert cell["detail"] == f"marker-seen={cell['sandbox'] != 'bwrap'}"


ENV_DUMP = """\
    seen = dict(os.environ)
    pid = os.getppid()
    while pid > 1:  # the worker, the raylet or job runner, up to contribkit itself
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
            if b"contribkit" in cmd[:3] or cmd[:1] == [b"pytest"]:
                break
            seen.update({f"{pid}:{i}": v for i, v in enumerate(
                open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace").split("\\0"))})
            pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
    print(repr(seen))
"""


def no_sentinel_anywhere(proc: subprocess.CompletedProcess[str], root: Path) -> None:
    assert SENTINEL not in proc.stdout and SENTINEL not in proc.stderr
    dumped = False
    for path in (root / ".contribkit").rglob("*"):
        if path.is_file():
            assert SENTINEL.encode() not in path.read_bytes(), path
            dumped |= b"'CONTRIBKIT_DEVICE': 'cpu'" in path.read_bytes()
    assert dumped  # the leg did print its environment, and it came back


def hang(pidfile: Path) -> str:
    return repro(f"""\
        import subprocess
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pidfile)!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
        time.sleep(600)
    """)


def interrupt_midway(
    fork_repo: Path, env: dict[str, str], pidfile: Path, sig: int, *engine: str
) -> tuple[str, list[int]]:
    """Start a run of the hanging leg, wait until the leg runs, send ``sig``; the stderr and
    the leg's pids."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "contribkit", "run", "repros/hang", "--devices", "cpu", *engine],
        cwd=fork_repo,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        while not (pidfile.is_file() and pidfile.read_text()):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.1)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return err, [int(p) for p in pidfile.read_text().split()]


# -- Ray ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    """A local Ray cluster for the module: two CPUs and one logical GPU; its address."""
    import ray

    ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, log_to_driver=False)
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()


def ray_env(shared_cache: str, address: str, **more: str) -> dict[str, str]:
    return {"CONTRIBKIT_CACHE_DIR": shared_cache, "RAY_ADDRESS": address, **more}


def cluster_idle(cpus: float = 2.0, seconds: float = 60.0) -> bool:
    """Whether every CPU of the cluster is free again (no task of ours left running)."""
    import ray

    available: Callable[[], dict[str, float]] = ray.available_resources  # untyped in Ray
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        free = available()
        if free.get("CPU", 0) >= cpus:
            return True
        time.sleep(0.2)
    return False


@needs_ray
def test_ray_gives_the_cells_of_local(
    ck: Ck, fork_repo: Path, sweep: list[str], ray_cluster: str, shared_cache: str
) -> None:
    code, local = run_json(ck, *sweep, "--devices", "cpu", "-j", "2")
    env = ray_env(shared_cache, ray_cluster)
    ray_code, on_ray = run_json(ck, *sweep, "--devices", "cpu", "--engine", "ray", env=env)
    assert (code, ray_code) == (1, 1)  # repros/broken REPRODUCED: red on both
    same_cells(local, on_ray, "ray")
    sandbox_is_honest(local)
    sandbox_is_honest(on_ray)
    assert on_ray["interpreters"][0]["host"] == f"ray:{ray_cluster}"
    assert cells(on_ray)[("test/test_plain.py", "cpu", 1)]["tests"][0]["outcome"] == "passed"


def triage_states(
    ck: Ck, repros: list[str], *more: str, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """``triage --json`` over the repro folders (cpu): the cells' verdicts, and the engines
    that ran them."""
    proc = ck("triage", *repros, "--devices", "cpu", "--json", *more, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return {
        "verdicts": sorted((c["file"], c["status"], c["verdict"]) for c in doc["cells"]),
        "engines": {c["engine"] for c in doc["cells"]},
    }


@needs_ray
def test_triage_on_ray_gives_the_verdicts_of_local(
    ck: Ck, sweep: list[str], ray_cluster: str, shared_cache: str
) -> None:
    repros = [p for p in sweep if p.startswith("repros/")]
    local = triage_states(ck, repros)
    on_ray = triage_states(ck, repros, "--engine", "ray", env=ray_env(shared_cache, ray_cluster))
    assert on_ray["verdicts"] == local["verdicts"] and len(local["verdicts"]) == len(repros)
    assert (local["engines"], on_ray["engines"]) == ({"local"}, {"ray"})


@needs_ray
def test_ray_gpu_legs_never_overlap(ray_cluster: str) -> None:
    """Legs that ask for the one GPU run one after another; CPU legs run beside them."""
    from contribkit.run.engine import EngineConfig, LegTask
    from contribkit.run.engine_ray import RayEngine

    body = (
        "import os, time\n"
        "start = time.time()\n"
        "time.sleep(0.5)\n"
        "print('span', start, time.time(), os.environ.get('CUDA_VISIBLE_DEVICES'))\n"
    )

    def task(key: int, gpu: bool) -> LegTask:
        return LegTask(key, sys.executable, ("leg.py",), {"leg.py": body.encode()}, {}, 60, gpu=gpu)

    tasks = [task(i, gpu=i < 3) for i in range(5)]
    with RayEngine(EngineConfig("ray", sandbox_mode="none"), jobs=5) as engine:
        results = {r.key: r for r in engine.submit(tasks)}
    assert sorted(results) == list(range(5))
    spans = []
    for key, result in results.items():
        line = next(x for x in result.output.output.splitlines() if x.startswith("span"))
        _, start, end, visible = line.split()
        assert result.output.returncode == 0 and result.engine == "ray"
        if key < 3:
            assert visible == "0"  # Ray pinned the one GPU
            spans.append((float(start), float(end)))
    spans.sort()
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))


@needs_ray
def test_ray_never_shows_a_token(
    ck: Ck, fork_repo: Path, shared_cache: str, ray_cluster: str
) -> None:
    """A token in contribkit's environment reaches no leg, no worker, no log and no record,
    whether contribkit starts its own local cluster or joins one."""
    write(fork_repo, "repros/env/repro.py", repro(ENV_DUMP, detail="'sdump'"))
    secrets = {"GH_TOKEN": SENTINEL, "MY_SERVICE_API_TOKEN": SENTINEL}
    unconfined = {"CONTRIBKIT_RUN_SANDBOX": "none"}  # so that the leg can read its ancestors
    for env in (
        {"CONTRIBKIT_CACHE_DIR": shared_cache, "CONTRIBKIT_RAY_NUM_CPUS": "1"},  # its own
        ray_env(shared_cache, ray_cluster),  # the running cluster
    ):
        proc = ck(
            "run", "repros/env", "--devices", "cpu", "--engine", "ray", "-v",
            env={**env, **secrets, **unconfined},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        no_sentinel_anywhere(proc, fork_repo)


@needs_ray
def test_ray_hanging_leg_times_out(
    ck: Ck, fork_repo: Path, tmp_path: Path, shared_cache: str, ray_cluster: str
) -> None:
    pidfile = tmp_path / "hang.pid"
    write(fork_repo, "repros/hang/repro.py", hang(pidfile))
    env = ray_env(shared_cache, ray_cluster, CONTRIBKIT_RUN_SANDBOX="none")
    args = ("repros/hang", "--devices", "cpu", "--engine", "ray", "--timeout", "3")
    code, record = run_json(ck, *args, env=env)
    cell = cells(record)[("repros/hang/repro.py", "cpu", 1)]
    assert code == 1 and cell["status"] == "TIMEOUT" and cell["engine"] == "ray"
    assert all(wait_dead(pid) for pid in map(int, pidfile.read_text().split()))
    assert cluster_idle()


@needs_ray
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "killed"])
def test_ray_interrupted_sweep_leaves_no_task(
    fork_repo: Path, tmp_path: Path, shared_cache: str, ray_cluster: str, sig: int
) -> None:
    pidfile = tmp_path / "hang.pid"
    write(fork_repo, "repros/hang/repro.py", hang(pidfile))
    env = ray_env(shared_cache, ray_cluster, CONTRIBKIT_RUN_SANDBOX="none")
    _, pids = interrupt_midway(fork_repo, env, pidfile, sig, "--engine", "ray")
    assert all(wait_dead(pid, 60) for pid in pids)
    assert cluster_idle()


# -- Slurm, through submitit's local executor ---------------------------------------------------
def slurm_env(shared_cache: str, tmp_path: Path, **more: str) -> dict[str, str]:
    return {
        "CONTRIBKIT_CACHE_DIR": shared_cache,
        "CONTRIBKIT_SLURM_CLUSTER": "local",
        "CONTRIBKIT_SLURM_FOLDER": str(tmp_path / "slurm-shared"),
        **more,
    }


@needs_submitit
def test_slurm_gives_the_cells_of_local(
    ck: Ck, fork_repo: Path, sweep: list[str], shared_cache: str, tmp_path: Path
) -> None:
    code, local = run_json(ck, *sweep, "--devices", "cpu", "-j", "2")
    env = slurm_env(shared_cache, tmp_path)
    slurm_code, on_slurm = run_json(ck, *sweep, "--devices", "cpu", "--engine", "slurm", env=env)
    assert (code, slurm_code) == (1, 1)
    same_cells(local, on_slurm, "slurm")
    sandbox_is_honest(on_slurm)
    assert on_slurm["interpreters"][0]["host"] == "slurm:local"
    assert not any((tmp_path / "slurm-shared").iterdir())  # each job's files went with it


@needs_submitit
def test_triage_on_slurm_gives_the_verdicts_of_local(
    ck: Ck, sweep: list[str], shared_cache: str, tmp_path: Path
) -> None:
    repros = [p for p in sweep if p.startswith("repros/")]
    local = triage_states(ck, repros)
    env = {**slurm_env(shared_cache, tmp_path), "CONTRIBKIT_RUN_ENGINE": "slurm"}  # the setting
    on_slurm = triage_states(ck, repros, env=env)
    assert on_slurm["verdicts"] == local["verdicts"]
    assert on_slurm["engines"] == {"slurm"}


@needs_submitit
def test_slurm_never_shows_a_token(
    ck: Ck, fork_repo: Path, shared_cache: str, tmp_path: Path
) -> None:
    write(fork_repo, "repros/env/repro.py", repro(ENV_DUMP, detail="'sdump'"))
    env = slurm_env(shared_cache, tmp_path, CONTRIBKIT_RUN_SANDBOX="none")
    proc = ck(
        "run", "repros/env", "--devices", "cpu", "--engine", "slurm", "-v",
        env={**env, "GH_TOKEN": SENTINEL, "MY_SERVICE_API_TOKEN": SENTINEL},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    no_sentinel_anywhere(proc, fork_repo)


@needs_submitit
def test_slurm_hanging_leg_times_out(
    ck: Ck, fork_repo: Path, tmp_path: Path, shared_cache: str
) -> None:
    pidfile = tmp_path / "hang.pid"
    write(fork_repo, "repros/hang/repro.py", hang(pidfile))
    env = slurm_env(shared_cache, tmp_path, CONTRIBKIT_RUN_SANDBOX="none")
    args = ("repros/hang", "--devices", "cpu", "--engine", "slurm", "--timeout", "3")
    code, record = run_json(ck, *args, env=env)
    cell = cells(record)[("repros/hang/repro.py", "cpu", 1)]
    assert code == 1 and cell["status"] == "TIMEOUT" and cell["engine"] == "slurm"
    assert all(wait_dead(pid) for pid in map(int, pidfile.read_text().split()))


@needs_submitit
def test_slurm_interrupted_sweep_leaves_no_job(
    fork_repo: Path, tmp_path: Path, shared_cache: str
) -> None:
    pidfile = tmp_path / "hang.pid"
    write(fork_repo, "repros/hang/repro.py", hang(pidfile))
    env = slurm_env(shared_cache, tmp_path, CONTRIBKIT_RUN_SANDBOX="none")
    err, pids = interrupt_midway(fork_repo, env, pidfile, signal.SIGINT, "--engine", "slurm")
    assert "Traceback" not in err
    assert all(wait_dead(pid, 60) for pid in pids)
    assert not any((tmp_path / "slurm-shared").iterdir())


def test_an_engine_without_its_extra_is_bad_input(ck: Ck, fork_repo: Path) -> None:
    """Where Ray is missing, --engine ray says how to install it; where it is there, an
    unreachable address is one line too, never a traceback."""
    write(fork_repo, "repros/fixed/repro.py", repro(""))
    env = {"CONTRIBKIT_RAY_ADDRESS": "127.0.0.1:1"}
    proc = ck("run", "repros/fixed", "--devices", "cpu", "--engine", "ray", env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("contribkit: error: ")
    assert "contribkit[ray]" in proc.stderr or "127.0.0.1:1" in proc.stderr
