"""The engine interface as ``triage`` calls it: payload-only legs on the local engine, through
the real bootstrap, with cancellation; no torch, no extra."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from contribkit.core.errors import BadInput
from contribkit.core.sandbox import choose
from contribkit.run.dispatch import make_engine
from contribkit.run.engine import EngineConfig, LegResult, LegTask
from tests.conftest import Ck
from tests.runhelpers import wait_dead


def leg(key: int, body: str, tmp_path: Path, timeout: float = 60) -> LegTask:
    return LegTask(
        key,
        sys.executable,
        ("leg.py", "--flag"),
        {"leg.py": body.encode(), "data.txt": b"shipped"},
        {"LEG_SAYS": f"hello-{key}"},
        timeout,
        log_path=tmp_path / f"{key}.log",
    )


def test_payload_legs_run_through_the_bootstrap(tmp_path: Path) -> None:
    body = (
        "import os, sys\n"
        "print(os.environ['LEG_SAYS'], sys.argv[1:], open('data.txt').read())\n"
        "sys.exit(int(os.environ['LEG_SAYS'].rsplit('-', 1)[1]))\n"
    )
    sandbox = choose("auto", announce=False)
    with make_engine(EngineConfig("local"), jobs=2, sandbox=sandbox) as engine:
        results = {r.key: r for r in engine.submit([leg(k, body, tmp_path) for k in range(3)])}
    assert sorted(results) == [0, 1, 2]
    for key, result in results.items():
        assert result.output.returncode == key and not result.output.timed_out
        assert f"hello-{key} ['--flag'] shipped" in result.output.output
        assert result.engine == "local" and result.worker
        assert result.sandbox == ("bwrap" if sandbox.active else "none")
        log = (tmp_path / f"{key}.log").read_text()
        assert f"hello-{key}" in log and "CONTRIBKIT_REMOTE" not in log  # the result line is cut


def test_a_payload_leg_times_out(tmp_path: Path) -> None:
    with make_engine(EngineConfig("local"), jobs=1) as engine:
        (result,) = engine.submit([leg(0, "import time\ntime.sleep(600)\n", tmp_path, 1)])
    assert result.output.timed_out and result.output.returncode is None


@pytest.mark.parametrize(
    ("name", "value"),
    [("GH_TOKEN", "x"), ("MY_SERVICE_API_TOKEN", "x"), ("MIRROR", "https://me:pw@host/")],
)
def test_a_leg_never_carries_a_secret(tmp_path: Path, name: str, value: str) -> None:
    with pytest.raises(BadInput, match=name):
        LegTask(0, sys.executable, ("leg.py",), {}, {name: value}, 10)


def test_cancel_stops_outstanding_legs(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    body = (
        f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(600)\n"
    )
    tasks = [leg(0, body, tmp_path), leg(1, "print('never')\n", tmp_path)]
    got: list[LegResult] = []
    engine = make_engine(EngineConfig("local"), jobs=1)  # no sandbox: the pid is the host's
    runner = threading.Thread(target=lambda: got.extend(engine.submit(tasks)))
    runner.start()
    deadline = time.monotonic() + 60
    while not (pidfile.is_file() and pidfile.read_text()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    engine.cancel()
    runner.join(timeout=60)
    assert not runner.is_alive()
    assert wait_dead(int(pidfile.read_text()))
    assert all(r.key == 0 for r in got)  # the second leg never started


def test_cuda_host_and_an_engine_do_not_mix(ck: Ck) -> None:
    proc = ck("run", "--engine", "ray", "--cuda-host", "gpu-box", "--devices", "cpu")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "contribkit: error: --cuda-host sends CUDA legs over ssh" in proc.stderr
    assert "hint: drop --cuda-host" in proc.stderr


def test_a_bad_slurm_cluster_is_bad_input(ck: Ck, fork_repo: Path) -> None:
    pytest.importorskip("submitit", reason="submitit is not installed (pip install -e '.[slurm]')")
    (fork_repo / "repros" / "x").mkdir(parents=True)
    (fork_repo / "repros" / "x" / "repro.py").write_text("print('contribkit-verdict: X')\n")
    env = {"CONTRIBKIT_SLURM_CLUSTER": "pbs"}
    proc = ck("run", "repros/x", "--engine", "slurm", "--devices", "cpu", env=env)
    assert proc.returncode == 2 and "slurm.cluster is 'pbs'" in proc.stderr
    assert "hint: set slurm.cluster to one of auto, slurm, local" in proc.stderr
