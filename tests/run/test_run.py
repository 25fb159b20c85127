"""`contribkit run` with real processes: real CPU torch, real pytest, real process groups."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from contribkit.core.config import load_settings
from contribkit.core.verdict import parse_verdict
from contribkit.run.runner import default_paths, generic_test_name, gpu_ids
from contribkit.target.reprolib import VERDICT_PREFIX
from tests.conftest import Ck, git
from tests.runhelpers import alive, cells, run_json, wait_dead, write

# A repro written by hand that keeps the verdict contract (docs/architecture.md) (as `contribkit repro` output does).
REPRO = """\
import argparse, os, sys
parser = argparse.ArgumentParser()
parser.add_argument("--device")
parser.add_argument("--json", action="store_true")
args = parser.parse_args()
device = args.device or os.environ.get("CONTRIBKIT_DEVICE", "cpu")

def verdict(word, detail, code):
    print("{prefix} " + word + " " + detail, flush=True)
    sys.exit(code)

try:
    import torch
except ImportError as exc:
    verdict("CANNOT_RUN", "torch is not importable: " + str(exc), 125)
try:
{body}
except RuntimeError as exc:
    print("Traceback (most recent call last): ...", file=sys.stderr)
    verdict("REPRODUCED", "RuntimeError: " + str(exc), 1)
verdict("NOT_REPRODUCED", "torch " + torch.__version__ + " on " + device, 0)
"""
BUGGY = """\
x = torch.tensor([-1.0, 2.0], device=device)
if x.clamp(min=0).sum().item() != 3.0:  # what the fix changes
    raise RuntimeError("clamp lost the sign on " + device)
"""
FIXED = """\
x = torch.tensor([-1.0, 2.0], device=device)
assert x.clamp(min=0).sum().item() == 2.0
"""

DEVICE_TEST = """\
# Owner(s): ["module: nn"]
import torch
from torch.testing._internal.common_device_type import dtypes, instantiate_device_type_tests, onlyCUDA
from torch.testing._internal.common_utils import TestCase, run_tests


class TestClampSign(TestCase):
    @dtypes(torch.float32, torch.float64)
    def test_clamp_keeps_positive(self, device, dtype):
        x = torch.tensor([-1.0, 2.0], device=device, dtype=dtype)
        self.assertEqual(x.clamp(min=0), torch.tensor([0.0, 2.0], device=device, dtype=dtype))

    def test_sum(self, device):
        self.assertEqual(torch.ones(4, device=device).sum().item(), {total})

    @onlyCUDA
    def test_cuda_stream(self, device):
        torch.cuda.synchronize()


instantiate_device_type_tests(TestClampSign, globals())

if __name__ == "__main__":
    run_tests()
"""


def repro(body: str) -> str:
    return REPRO.format(prefix=VERDICT_PREFIX, body=textwrap.indent(body, "    "))


def script(text: str) -> str:
    """A repro without torch (fast): ``text`` runs, then the verdict ``verdict`` is printed."""
    return textwrap.dedent(text).replace("PREFIX", VERDICT_PREFIX)


# -- repros -----------------------------------------------------------------------------------
@pytest.mark.slow
def test_repro_reproduced_and_fixed_with_cuda_not_available(ck: Ck, fork_repo: Path) -> None:
    write(fork_repo, "repros/issue-4242/repro.py", repro(BUGGY))
    write(fork_repo, "repros/issue-4243/repro.py", repro(FIXED))
    code, record = run_json(ck, "repros/issue-4242", "repros/issue-4243", "-j", "2")
    assert code == 1
    got = cells(record)
    buggy = got[("repros/issue-4242/repro.py", "cpu", 1)]
    assert buggy["status"] == "REPRODUCED" and buggy["verdict"] == "REPRODUCED"
    assert buggy["exit_code"] == 1 and "clamp lost the sign on cpu" in buggy["detail"]
    assert buggy["required"] and buggy["duration_s"] > 0
    log = (fork_repo / buggy["log_path"]).read_text()
    assert "Traceback" in log and log.rstrip().endswith("clamp lost the sign on cpu")
    fixed = got[("repros/issue-4243/repro.py", "cpu", 1)]
    assert fixed["status"] == "NOT_REPRODUCED" and fixed["exit_code"] == 0
    for name in ("repros/issue-4242/repro.py", "repros/issue-4243/repro.py"):
        cuda = got[(name, "cuda", 1)]
        assert cuda["status"] == "NOT_AVAILABLE" and cuda["detail"] == "no CUDA device"
        assert not cuda["required"] and cuda["log_path"] is None
    assert record["reason"].startswith("repros/issue-4242/repro.py on cpu is REPRODUCED")
    assert record["head"] == git("rev-parse", "HEAD", cwd=fork_repo) and not record["dirty"]

    # Before the fix, --expect reproduced confirms that the repro fails: that is green.
    code, confirmed = run_json(ck, "repros/issue-4242", "--expect", "reproduced")
    assert code == 0 and confirmed["ok"] and confirmed["expect"] == "reproduced"


def test_verdict_contract_is_enforced(ck: Ck, fork_repo: Path) -> None:
    write(fork_repo, "repros/silent/repro.py", "print('no verdict here')\n")
    write(
        fork_repo,
        "repros/liar/repro.py",
        script("""\
            import sys
            print("PREFIX NOT_REPRODUCED all good")
            sys.exit(3)
        """),
    )
    write(
        fork_repo,
        "repros/cannot/repro.py",
        script("""\
            import os, sys
            if os.environ.get("CONTRIBKIT_REPRO_EVIDENCE") == "1":  # run asks for the evidence
                print('contribkit-evidence: {"evidence": {"ops": {}}, "rule": "r"}')
            print("PREFIX CANNOT_RUN missing module: scipy")
            sys.exit(125)
        """),
    )
    code, record = run_json(ck, "repros/silent", "repros/liar", "repros/cannot", "--devices", "cpu")
    assert code == 1
    got = cells(record)
    silent = got[("repros/silent/repro.py", "cpu", 1)]
    assert silent["status"] == "ERROR" and "(no verdict line, exit 0)" in silent["detail"]
    assert "no verdict here" in silent["detail"]
    liar = got[("repros/liar/repro.py", "cpu", 1)]
    assert liar["status"] == "ERROR" and "verdict NOT_REPRODUCED but exit 3" in liar["detail"]
    cannot = got[("repros/cannot/repro.py", "cpu", 1)]
    assert cannot["status"] == "ERROR" and cannot["verdict"] == "CANNOT_RUN"
    assert cannot["detail"] == "CANNOT_RUN: missing module: scipy"
    assert cannot["evidence"] == {"evidence": {"ops": {}}, "rule": "r"}
    assert liar["evidence"] is None


def test_parse_verdict_reads_only_the_last_line() -> None:
    assert parse_verdict(f"x\n{VERDICT_PREFIX} REPRODUCED boom\n\n") == ("REPRODUCED", "boom")
    assert parse_verdict(f"{VERDICT_PREFIX} REPRODUCED boom\nlater output\n") is None
    assert parse_verdict(f"{VERDICT_PREFIX} MAYBE\n") is None
    as_json = json.dumps({"verdict": "NOT_REPRODUCED", "detail": "ok", "exit_code": 0})
    assert parse_verdict(as_json) == ("NOT_REPRODUCED", "ok")


# -- test files -------------------------------------------------------------------------------
@pytest.mark.slow
def test_device_generic_test_file_counts_from_junit(ck: Ck, fork_repo: Path) -> None:
    write(fork_repo, "test/test_clamp_sign.py", DEVICE_TEST.format(total="4.0"))
    write(fork_repo, "test/test_clamp_broken.py", DEVICE_TEST.format(total="5.0"))
    write(fork_repo, "test/test_plain.py", "def test_plain():\n    assert 1 + 1 == 2\n")
    git("add", "-A", cwd=fork_repo)
    git("commit", "-q", "-m", "tests", cwd=fork_repo)
    code, record = run_json(
        ck, "test/test_clamp_sign.py", "test/test_clamp_broken.py", "test/test_plain.py", "-j", "3"
    )
    assert code == 1
    got = cells(record)
    good = got[("test/test_clamp_sign.py", "cpu", 1)]
    assert good["kind"] == "device-test" and good["status"] == "PASS" and good["exit_code"] == 0
    assert good["counts"] == {"total": 4, "passed": 3, "failed": 0, "errors": 0, "skipped": 1}
    outcomes = {t["name"]: t["outcome"] for t in good["tests"]}
    assert outcomes == {
        "TestClampSign.test_clamp_keeps_positive_float32": "passed",
        "TestClampSign.test_clamp_keeps_positive_float64": "passed",
        "TestClampSign.test_sum": "passed",
        "TestClampSign.test_cuda_stream": "skipped",
    }
    assert {t["test_id"] for t in good["tests"]} >= {
        "test.test_clamp_sign.TestClampSignCPU::test_sum_cpu"
    }
    assert got[("test/test_clamp_sign.py", "cuda", 1)]["status"] == "NOT_AVAILABLE"
    broken = got[("test/test_clamp_broken.py", "cpu", 1)]
    assert broken["status"] == "FAIL" and broken["exit_code"] == 1
    assert broken["counts"]["failed"] == 1 and broken["counts"]["passed"] == 2
    assert "test_sum_cpu" in broken["detail"]
    plain = got[("test/test_plain.py", "cpu", 1)]
    assert plain["kind"] == "pytest" and plain["status"] == "PASS"
    assert ("test/test_plain.py", "cuda", 1) not in got  # a plain test file runs once, on cpu
    # Legs leave no trace in the tree: no __pycache__, no .pytest_cache, records excluded.
    assert git("status", "--porcelain", cwd=fork_repo) == ""
    assert "/.contribkit/" in (fork_repo / ".git/info/exclude").read_text()

    table = ck("run", "--last").stdout
    assert "test/test_clamp_sign.py" in table and "PASS 3 passed, 1 skipped" in table
    assert "FAIL 1 failed, 2 passed, 1 skipped" in table
    # One row per file; what failed is listed under the table, and everything fits 100 columns.
    lines = table.splitlines()
    test_rows = [line.split() for line in lines if line.startswith("  Test")]
    assert test_rows == [["TestClampSign.test_sum"]]  # only the failing test, under its cell
    failed = next(i for i, line in enumerate(lines) if line.startswith("FAIL: test/test_clamp"))
    assert lines[failed + 1] == "  TestClampSign.test_sum"
    paths = ("  log: ", "record: ")  # paths stay whole, to be copied
    assert max(len(line) for line in lines if not line.startswith(paths)) <= 100, table
    per_test = ck("run", "--last", "--per-test").stdout
    assert ["TestClampSign.test_sum", "FAIL", "-"] in [
        line.split() for line in per_test.splitlines()
    ]


def test_files_whose_names_slug_alike_keep_their_own_logs(ck: Ck, fork_repo: Path) -> None:
    write(fork_repo, "test/test_x/test_y.py", "def test_nested_ok():\n    pass\n")
    write(fork_repo, "test/test_x_test_y.py", "def test_flat_bad():\n    assert False\n")
    code, record = run_json(
        ck, "test/test_x/test_y.py", "test/test_x_test_y.py", "--devices", "cpu", "-j", "2"
    )
    assert code == 1
    got = cells(record)
    nested = got[("test/test_x/test_y.py", "cpu", 1)]
    flat = got[("test/test_x_test_y.py", "cpu", 1)]
    assert nested["status"] == "PASS" and [t["name"] for t in nested["tests"]] == [
        "test_y.test_nested_ok"
    ]
    assert flat["status"] == "FAIL" and [t["name"] for t in flat["tests"]] == [
        "test_x_test_y.test_flat_bad"
    ]
    assert nested["log_path"] != flat["log_path"]
    assert "1 passed" in (fork_repo / nested["log_path"]).read_text()
    assert "1 failed" in (fork_repo / flat["log_path"]).read_text()


def test_a_file_that_runs_no_test_is_not_green(ck: Ck, fork_repo: Path) -> None:
    write(fork_repo, "test/test_plain.py", "def test_plain():\n    pass\n")
    write(
        fork_repo,
        "test/test_skips.py",
        "import pytest\n\n\n@pytest.mark.skip(reason='needs a GPU')\ndef test_gpu():\n    pass\n",
    )
    code, record = run_json(ck, "test/test_plain.py", "--devices", "cpu", "-k", "test_plian")
    assert code == 1 and not record["ok"]
    typo = cells(record)[("test/test_plain.py", "cpu", 1)]
    assert typo["status"] == "ERROR" and typo["required"] and typo["exit_code"] == 5
    assert typo["detail"] == "no tests collected for -k 'test_plian'"
    assert record["reason"] == (
        "test/test_plain.py on cpu is ERROR: no tests collected for -k 'test_plian'"
    )
    # A test that ran and skipped itself is still a SKIP, which only --require makes count.
    code, record = run_json(ck, "test/test_plain.py", "test/test_skips.py", "--devices", "cpu")
    assert code == 0, record["reason"]
    skipped = cells(record)[("test/test_skips.py", "cpu", 1)]
    assert skipped["status"] == "SKIP" and skipped["detail"] == "needs a GPU"
    assert not skipped["required"]


def test_generic_test_name() -> None:
    assert generic_test_name("test.test_x.TestFooCPU", "test_bar_cpu_float32", "cpu") == (
        "TestFoo.test_bar_float32"
    )
    assert generic_test_name("TestFooCUDA", "test_bar_cuda", "cuda") == "TestFoo.test_bar"
    assert generic_test_name("", "test_x", "cpu") == "test_x"


# -- isolation and safety ---------------------------------------------------------------------
@pytest.mark.slow
def test_timeout_kills_the_process_group(ck: Ck, fork_repo: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    write(
        fork_repo,
        "repros/hang/repro.py",
        script(f"""\
            import subprocess, sys, time
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            open({str(pidfile)!r}, "w").write(str(child.pid))
            print("started", child.pid, flush=True)
            time.sleep(600)
            print("PREFIX NOT_REPRODUCED never")
        """),
    )
    # The leg reports a host pid outside its folder: unconfined (test_sandbox.py: under bwrap).
    unconfined = {"CONTRIBKIT_RUN_SANDBOX": "none"}
    code, record = run_json(ck, "repros/hang", "--timeout", "2", "--devices", "cpu", env=unconfined)
    assert code == 1
    cell = cells(record)[("repros/hang/repro.py", "cpu", 1)]
    assert cell["status"] == "TIMEOUT" and cell["detail"] == "killed after 2s"
    assert cell["exit_code"] is None
    assert wait_dead(int(pidfile.read_text()))
    assert "started" in (fork_repo / cell["log_path"]).read_text()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "code", "message"),
    [
        (signal.SIGINT, 130, "interrupted"),
        (signal.SIGTERM, 143, "terminated by SIGTERM"),
        (signal.SIGHUP, 129, "terminated by SIGHUP"),
    ],
)
def test_signals_kill_running_legs(
    fork_repo: Path, tmp_path: Path, shared_cache: str, sig: int, code: int, message: str
) -> None:
    """Ctrl-C, SIGTERM and SIGHUP all kill every leg's process group: each leg has a session of
    its own, so nothing else would reach it."""
    pids = tmp_path / "pids"
    pids.mkdir()
    for name in ("a", "b"):
        write(
            fork_repo,
            f"repros/{name}/repro.py",
            script(f"""\
                import os, subprocess, sys, time
                child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
                open(os.path.join({str(pids)!r}, "{name}"), "w").write(f"{{os.getpid()}} {{child.pid}}")
                time.sleep(600)
            """),
        )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "contribkit",
            "run",
            "repros/a",
            "repros/b",
            "--devices",
            "cpu",
            "-j",
            "2",
        ],
        cwd=fork_repo,
        # The legs report host pids outside their folders: unconfined (test_sandbox.py: bwrap).
        env={**os.environ, "CONTRIBKIT_CACHE_DIR": shared_cache, "CONTRIBKIT_RUN_SANDBOX": "none"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len([p for p in pids.iterdir() if p.read_text()]) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
            time.sleep(0.05)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    leg_pids = [int(pid) for path in pids.iterdir() for pid in path.read_text().split()]
    try:
        assert proc.returncode == code, err
        assert f"contribkit: error: {message}" in err and "Traceback" not in err
        assert all(wait_dead(pid) for pid in leg_pids)  # the legs and their children
    finally:
        for pid in filter(alive, leg_pids):  # leave no orphan behind, even when the test fails
            os.kill(pid, signal.SIGKILL)
    assert not list((fork_repo / ".contribkit/runs").glob("*.json"))  # no record of a half run


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs util-linux's setpriv")
def test_a_killed_contribkit_takes_its_unsandboxed_legs_with_it(
    fork_repo: Path, tmp_path: Path, shared_cache: str
) -> None:
    """kill -9 of contribkit, with no sandbox (no bwrap --die-with-parent): the leg it started
    dies with it (setpriv --pdeathsig), instead of running on to its timeout."""
    pids = tmp_path / "pids"
    pids.mkdir()
    write(
        fork_repo,
        "repros/slow/repro.py",
        script(f"""\
            import os, time
            open(os.path.join({str(pids)!r}, "slow"), "w").write(str(os.getpid()))
            time.sleep(600)
        """),
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "contribkit", "run", "repros/slow", "--devices", "cpu"],
        cwd=fork_repo,
        env={**os.environ, "CONTRIBKIT_CACHE_DIR": shared_cache, "CONTRIBKIT_RUN_SANDBOX": "none"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    leg = pids / "slow"
    try:
        deadline = time.monotonic() + 120
        while not (leg.exists() and leg.read_text()):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        pid = int(leg.read_text())
        assert alive(pid)  # the self-check: the leg runs while contribkit does
        proc.kill()
        proc.wait()
        try:
            assert wait_dead(pid)
        finally:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.fixture
def standin_gpu(tmp_path: Path) -> Path:
    """An interpreter that answers the torch probe as a 2-GPU machine honouring
    CUDA_VISIBLE_DEVICES, and saves the probe's environment next to it (``probe-env.json``);
    anything else it runs with the real interpreter, so legs are real."""
    stub = write(
        tmp_path,
        "standin/bin/python",
        textwrap.dedent(f"""\
            #!{sys.executable}
            import json, os, sys
            if sys.argv[1] != "-c":
                os.execv({sys.executable!r}, [{sys.executable!r}, *sys.argv[1:]])
            with open(os.path.join(os.path.dirname(__file__), "probe-env.json"), "w") as fh:
                json.dump(dict(os.environ), fh)
            mask = os.environ.get("CUDA_VISIBLE_DEVICES")
            count = 2 if mask is None else len([d for d in mask.split(",") if d.strip()][:2])
            facts = {{"executable": sys.argv[0], "python_version": "3.12.0", "torch": True,
                      "torch_version": "2.13.0+cu130", "git_version": "0123456789abcdef",
                      "cuda_available": count > 0, "device_count": count,
                      "device_names": ["Stand-in GPU"] * count}}
            print("CONTRIBKIT_PROBE " + json.dumps(facts))
        """),
    )
    stub.chmod(0o755)
    return stub


def test_legs_and_probes_see_no_secret(ck: Ck, fork_repo: Path, standin_gpu: Path) -> None:
    write(
        fork_repo,
        "repros/env/repro.py",
        script("""\
            import os
            for name in sorted(os.environ):
                print(name + "=" + os.environ[name])
            print("PREFIX NOT_REPRODUCED printed the environment")
        """),
    )
    secrets = {
        "GH_TOKEN": "ghp_parentsecret1",
        "GITHUB_TOKEN": "ghp_parentsecret2",
        "OPENAI_API_KEY": "sk-parentsecret3",
        "CORP_DEPLOY": "parentsecret4",
        "CONTRIBKIT_SCRUB_ENV": "CORP_*",
        "HARMLESS_SETTING": "visible",
    }
    pythons = ["--python", sys.executable, "--python", str(standin_gpu)]
    code, record = run_json(ck, "repros/env", "--devices", "cpu", *pythons, env=secrets)
    assert code == 0, record["reason"]
    cell = cells(record)[("repros/env/repro.py", "cpu", 1)]
    log = (fork_repo / cell["log_path"]).read_text()
    assert "HARMLESS_SETTING=visible" in log and "CONTRIBKIT_DEVICE=cpu" in log
    # The probe imports the user's torch: it gets the same scrubbing, scrub_env included.
    probed = json.loads((standin_gpu.parent / "probe-env.json").read_text())
    assert probed["HARMLESS_SETTING"] == "visible"
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "OPENAI_API_KEY", "CORP_DEPLOY"):
        assert f"{name}=" not in log and name not in probed
    record_text = next((fork_repo / ".contribkit/runs").glob("*.json")).read_text()
    for value in secrets.values():
        if "secret" in value:
            assert value not in log and value not in record_text


def test_cpu_legs_run_in_parallel_up_to_jobs(ck: Ck, fork_repo: Path, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    for name in ("a", "b"):
        write(
            fork_repo,
            f"repros/{name}/repro.py",
            script(f"""\
                import os, time
                open(os.path.join({str(marks)!r}, "{name}.start"), "w").close()
                deadline = time.monotonic() + 20
                other = os.path.join({str(marks)!r}, "{"b" if name == "a" else "a"}.start")
                while not os.path.exists(other) and time.monotonic() < deadline:
                    time.sleep(0.02)
                print("PREFIX NOT_REPRODUCED saw the other leg" if os.path.exists(other) else "PREFIX REPRODUCED ran alone")
            """),
        )
    unconfined = {"CONTRIBKIT_RUN_SANDBOX": "none"}  # the legs meet in a folder outside theirs
    code, record = run_json(
        ck, "repros/a", "repros/b", "--devices", "cpu", "-j", "2", env=unconfined
    )
    assert code == 0, record["reason"]  # each leg saw the other one running


# -- the matrix -------------------------------------------------------------------------------
def test_all_skipped_is_a_failure_and_require_fails_not_available(ck: Ck, fork_repo: Path) -> None:
    folder = fork_repo / "repros/issue-7"
    write(fork_repo, "repros/issue-7/repro.py", script('print("PREFIX NOT_REPRODUCED fine")\n'))
    (folder / "meta.json").write_text(json.dumps({"number": 7, "devices_needed": ["cuda"]}))
    code, record = run_json(ck, "repros/issue-7")
    assert code == 1
    got = cells(record)
    assert got[("repros/issue-7/repro.py", "cpu", 1)]["status"] == "SKIP"
    assert got[("repros/issue-7/repro.py", "cpu", 1)]["detail"] == "n/a (the repro is cuda-only)"
    assert got[("repros/issue-7/repro.py", "cuda", 1)]["status"] == "NOT_AVAILABLE"
    assert record["reason"] == "every cell was skipped or not available: nothing was checked"

    (folder / "meta.json").unlink()
    code, record = run_json(ck, "repros/issue-7")
    assert code == 0 and record["ok"]
    code, record = run_json(ck, "repros/issue-7", "--require", "cuda")
    assert code == 1 and not record["ok"]
    assert record["reason"] == "repros/issue-7/repro.py on cuda is NOT_AVAILABLE: no CUDA device"
    assert cells(record)[("repros/issue-7/repro.py", "cuda", 1)]["required"]


@pytest.mark.slow
def test_two_interpreters_give_two_column_groups(ck: Ck, fork_repo: Path, tmp_path: Path) -> None:
    """A second venv with a stand-in torch, and a third without torch at all."""
    standin = tmp_path / "standin"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(standin)], check=True)
    site = next((standin / "lib").glob("python3*/site-packages"))
    write(
        site,
        "torch/__init__.py",
        textwrap.dedent("""\
            __version__ = "2.99.0+standin"
            from . import version, cuda, backends
            def tensor(values, device="cpu", dtype=None):
                return _T(values)
            class _T:
                def __init__(self, values): self.values = list(values)
                def clamp(self, min): return _T([max(v, min) for v in self.values])
                def sum(self): return _T([sum(self.values)])
                def item(self): return self.values[0]
        """),
    )
    write(site, "torch/version.py", 'git_version = "0000standin"\ncuda = None\n')
    write(site, "torch/cuda.py", "def is_available():\n    return False\n")
    write(site, "torch/backends/__init__.py", "from . import mps\n")
    write(site, "torch/backends/mps.py", "def is_available():\n    return False\n")
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    write(fork_repo, "repros/issue-4243/repro.py", repro(FIXED))
    pythons = [sys.executable, str(standin / "bin/python"), str(bare / "bin/python")]
    code, record = run_json(ck, "repros/issue-4243", *(a for p in pythons for a in ("--python", p)))
    assert [i["torch_version"] for i in record["interpreters"]] == [
        record["interpreters"][0]["torch_version"],
        "2.99.0+standin",
        None,
    ]
    assert record["interpreters"][1]["git_version"] == "0000standin"
    got = cells(record)
    name = "repros/issue-4243/repro.py"
    assert got[(name, "cpu", 1)]["status"] == "NOT_REPRODUCED"
    assert got[(name, "cpu", 2)]["status"] == "NOT_REPRODUCED"
    assert "torch 2.99.0+standin on cpu" in got[(name, "cpu", 2)]["detail"]
    assert got[(name, "cpu", 3)]["status"] == "ERROR"
    assert got[(name, "cpu", 3)]["verdict"] == "CANNOT_RUN"
    assert got[(name, "cuda", 3)]["detail"] == "torch is not importable"
    assert code == 1 and "on cpu is ERROR" in record["reason"]

    table = ck("run", "--last").stdout
    header = table.splitlines()[1].split()
    assert header == [
        "file",
        "cpu",
        "[1]",
        "cuda",
        "[1]",
        "cpu",
        "[2]",
        "cuda",
        "[2]",
        "cpu",
        "[3]",
        "cuda",
        "[3]",
    ]
    assert "[2] " + str(standin / "bin/python") + " (Python" in table
    assert "torch 2.99.0+standin)" in table


def test_junit_report_and_last(ck: Ck, fork_repo: Path, tmp_path: Path) -> None:
    write(fork_repo, "repros/ok/repro.py", script('print("PREFIX NOT_REPRODUCED fine")\n'))
    report = tmp_path / "matrix.xml"
    code, record = run_json(ck, "repros/ok", "--junit", str(report))
    assert code == 0
    suite = ET.parse(report).getroot()
    assert (
        suite.get("tests") == "2" and suite.get("failures") == "0" and suite.get("skipped") == "1"
    )
    names = {case.get("name") for case in suite.iter("testcase")}
    assert names == {"cpu[1]", "cuda[1]"}
    code, again = run_json(ck, "--last")
    assert code == 0 and again["id"] == record["id"]
    assert again["record_path"] == record["record_path"]
    (fork_repo / "torch/nn/functional.py").write_text("# edited\n")
    shown = ck("run", "--last")
    assert "note: the working tree changed since this record" in shown.stdout


def test_junit_destination_is_checked_before_running(
    ck: Ck, fork_repo: Path, tmp_path: Path
) -> None:
    write(fork_repo, "repros/ok/repro.py", script('print("PREFIX NOT_REPRODUCED fine")\n'))
    not_a_folder = write(tmp_path, "report.txt", "")
    proc = ck("run", "repros/ok", "--junit", str(not_a_folder / "matrix.xml"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"contribkit: error: cannot write {not_a_folder}/matrix.xml: ")
    assert "hint: pass a path in a folder you can write to" in proc.stderr
    assert not (fork_repo / ".contribkit/runs").exists()  # nothing ran
    # A missing folder is made, as pytest's --junitxml does.
    report = tmp_path / "reports/matrix.xml"
    assert ck("run", "repros/ok", "--junit", str(report)).returncode == 0
    assert ET.parse(report).getroot().get("tests") == "2"
    assert [p.name for p in report.parent.iterdir()] == ["matrix.xml"]  # no temporary file left


def test_default_paths_follow_the_branch(fork_repo: Path) -> None:
    git("switch", "-q", "-c", "fix/issue-4242-clamp", cwd=fork_repo)
    write(fork_repo, "repros/issue-4242/repro.py", repro(FIXED))
    write(fork_repo, "repros/issue-9/repro.py", repro(FIXED))
    write(fork_repo, "test/test_committed.py", "def test_a():\n    pass\n")
    write(fork_repo, "test/helpers.py", "X = 1\n")
    git("add", "test", cwd=fork_repo)
    git("commit", "-q", "-m", "tests", cwd=fork_repo)
    write(fork_repo, "test/test_new_untracked.py", "def test_b():\n    pass\n")
    paths, notes = default_paths(fork_repo, load_settings({}, fork_repo))
    assert [p.relative_to(fork_repo).as_posix() for p in paths] == [
        "repros/issue-4242",
        "test/test_committed.py",
        "test/test_new_untracked.py",
    ]
    assert notes == ["no 'upstream/main' ref (run `git fetch upstream`); used 'main' instead"]


@pytest.mark.slow
def test_nothing_to_run_and_bad_input(ck: Ck, fork_repo: Path, tmp_path: Path) -> None:
    not_executable = write(tmp_path, "plain/python", "#!/bin/sh\n")
    no_interpreter_line = write(tmp_path, "garbage/python", "garbage\n")
    no_interpreter_line.chmod(0o755)
    nothing = ck("run")
    assert nothing.returncode == 2
    assert "nothing to run: branch 'main' names no issue number" in nothing.stderr
    assert "hint: pass PATHS" in nothing.stderr
    cases = [
        (["run", "nope.py"], "nope.py does not exist"),
        (["run", "torch/nn/functional.py"], "neither a repro"),
        (["run", "torch"], "has no repro.py"),
        (["run", "--devices", "cpu,tpu", "test/test_nn.py"], "unknown device 'tpu'"),
        (
            ["run", "--devices", "cpu", "--require", "cuda", "test/test_nn.py"],
            "--require cuda needs cuda in --devices",
        ),
        (["run", "--last"], "no run record"),
        (
            ["run", "--python", "/no/such/python", "test/test_nn.py"],
            "interpreter '/no/such/python' not found",
        ),
        (
            ["run", "--python", str(not_executable), "test/test_nn.py"],
            f"interpreter '{not_executable}' is not executable",
        ),
        (
            ["run", "--python", str(no_interpreter_line), "test/test_nn.py"],
            f"could not run {no_interpreter_line}: Exec format error",
        ),
    ]
    for argv, needle in cases:
        proc = ck(*argv)
        assert proc.returncode == 2, (argv, proc.stderr)
        assert needle in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.count("\nhint: ") <= 1 and len(proc.stderr.splitlines()) <= 2


def test_gpu_ids_honour_an_existing_mask() -> None:
    assert gpu_ids(2, {}) == ["0", "1"]
    assert gpu_ids(2, {"CUDA_VISIBLE_DEVICES": "3,5"}) == ["3", "5"]
    assert gpu_ids(1, {"CUDA_VISIBLE_DEVICES": "3,5"}) == ["3"]
    assert gpu_ids(2, {"CUDA_VISIBLE_DEVICES": ""}) == []  # every GPU hidden
    assert gpu_ids(0, {"CUDA_VISIBLE_DEVICES": "3,5"}) == []


def test_cuda_legs_stay_inside_the_users_mask(
    ck: Ck, fork_repo: Path, standin_gpu: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    write(
        fork_repo,
        "repros/gpu/repro.py",
        script("""\
            import os
            print("PREFIX NOT_REPRODUCED gpu " + os.environ.get("CUDA_VISIBLE_DEVICES", "-"))
        """),
    )
    args = ("repros/gpu", "--devices", "cuda", "--python", str(standin_gpu))
    key = ("repros/gpu/repro.py", "cuda", 1)
    code, record = run_json(ck, *args)
    assert code == 0 and cells(record)[key]["detail"] in ("gpu 0", "gpu 1")
    assert record["interpreters"][0]["device_count"] == 2
    # The two-GPU probe is cached; an empty mask still means that no GPU may be used.
    code, record = run_json(ck, *args, env={"CUDA_VISIBLE_DEVICES": ""})
    assert record["interpreters"][0]["device_count"] == 0
    assert cells(record)[key]["status"] == "NOT_AVAILABLE" and code == 1
    code, record = run_json(ck, *args, env={"CUDA_VISIBLE_DEVICES": "GPU-3f1c"})
    assert code == 0 and cells(record)[key]["detail"] == "gpu GPU-3f1c"
    assert record["interpreters"][0]["device_count"] == 1


@pytest.mark.parametrize("command", ["run", "submit"])
def test_help_imports_nothing_heavy(command: str) -> None:
    from tests.cli.test_cli import GUARD, HEAVY

    proc = subprocess.run(
        [sys.executable, "-c", GUARD.format(argv=[command, "--help"], heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "HEAVY=\n" in proc.stderr, proc.stderr


def test_an_interpreter_without_torch_gets_a_hint(
    ck: Ck, fork_repo: Path, bare_python: str
) -> None:
    write(fork_repo, "repros/issue-4242/repro.py", repro(BUGGY))
    proc = ck("run", "repros/issue-4242", "--python", bare_python)
    assert f"contribkit: warning: {bare_python} cannot import torch" in proc.stderr
    assert "pass --python with your PyTorch build's interpreter" in proc.stderr
    if sys.platform.startswith("linux"):  # never the plain `pip install torch` (a CUDA build)
        assert "--index-url https://download.pytorch.org/whl/cpu" in proc.stderr
    assert "CANNOT_RUN" in proc.stdout or "torch is not importable" in proc.stdout
