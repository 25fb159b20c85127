"""`run --cuda-host`: CUDA legs over ssh, with a stand-in `ssh` on PATH and a stand-in GPU host.

The stand-in ssh drops its options and the host and runs the remote command with `sh -c`, as
sshd does (then, with $STANDIN_MARKER set, prints that as a last result line, as a broken host
might). The host's interpreter is a wrapper that answers the torch probe as a 2-GPU machine
and otherwise runs the real interpreter, so the bootstrap, the payload, the process group, the
marker line and the JUnit round trip are all real.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from contribkit.target.reprolib import VERDICT_PREFIX
from tests.conftest import Ck
from tests.runhelpers import cells, run_json, wait_dead, write

GPU_PROBE = {
    "executable": "/opt/gpu/bin/python",
    "python_version": "3.12.1",
    "torch": True,
    "torch_version": "2.13.0+cu130",
    "git_version": "0123456789abcdef",
    "cuda_build": "13.0",
    "cuda_available": True,
    "device_count": 2,
    "device_names": ["Stand-in H100", "Stand-in H100"],
}


@pytest.fixture
def gpu_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    calls = tmp_path / "ssh-calls"
    ssh = bindir / "ssh"
    ssh.write_text(
        textwrap.dedent(f"""\
            #!/bin/sh
            while [ $# -gt 0 ]; do
              case "$1" in
                -o) shift 2 ;;
                -*) shift ;;
                *) break ;;
              esac
            done
            host="$1"; shift
            echo "$host" >> {calls}
            if [ "$host" = "unreachable" ]; then
              echo "ssh: connect to host unreachable port 22: Connection refused" >&2
              exit 255
            fi
            if [ -n "${{STANDIN_MARKER+set}}" ]; then
              sh -c "$*"
              printf '\\nCONTRIBKIT_REMOTE %s\\n' "$STANDIN_MARKER"
              exit 0
            fi
            exec sh -c "$*"
        """)
    )
    python = bindir / "gpu-python"
    python.write_text(
        textwrap.dedent(f"""\
            #!/bin/sh
            if [ "$1" = "probe.py" ]; then
              if [ "$STANDIN_GPUS" = "1" ]; then
                echo 'CONTRIBKIT_PROBE {json.dumps({**GPU_PROBE, "device_count": 1, "device_names": ["Stand-in H100"]})}'
              else
                echo 'CONTRIBKIT_PROBE {json.dumps(GPU_PROBE)}'
              fi
              exit 0
            fi
            exec {sys.executable} "$@"
        """)
    )
    for path in (ssh, python):
        path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return {"python": str(python), "calls": str(calls)}


def test_cuda_legs_run_on_the_host(ck: Ck, fork_repo: Path, gpu_host: dict[str, str]) -> None:
    for name in ("a", "b"):
        write(
            fork_repo,
            f"repros/{name}/repro.py",
            textwrap.dedent(f"""\
                import os, sys
                device = sys.argv[sys.argv.index("--device") + 1]
                assert os.environ["CONTRIBKIT_DEVICE"] == device
                leaked = [k for k in os.environ if k.endswith("_TOKEN")]
                print("{VERDICT_PREFIX} NOT_REPRODUCED on " + device + " gpu "
                      + os.environ.get("CUDA_VISIBLE_DEVICES", "-") + " leaked " + str(leaked))
            """),
        )
    code, record = run_json(
        ck,
        "repros/a",
        "repros/b",
        "--cuda-host",
        "gpu-box",
        "--cuda-python",
        gpu_host["python"],
        "--require",
        "cuda",
        env={"GH_TOKEN": "ghp_never_sent"},
    )
    assert code == 0, record["reason"]
    local, remote = record["interpreters"]
    assert local["host"] is None and remote["host"] == "gpu-box"
    assert remote["device_names"] == ["Stand-in H100", "Stand-in H100"]
    got = cells(record)
    assert ("repros/a/repro.py", "cuda", 1) not in got  # CUDA is the host's column only
    for name in ("a", "b"):
        cuda = got[(f"repros/{name}/repro.py", "cuda", 2)]
        assert cuda["status"] == "NOT_REPRODUCED" and cuda["required"]
        assert cuda["detail"].startswith("on cuda gpu ") and cuda["detail"].endswith("leaked []")
        assert cuda["detail"].split()[3] in {"0", "1"}  # pinned to one GPU
        log = (fork_repo / cuda["log_path"]).read_text()
        assert "ghp_never_sent" not in log
        assert got[(f"repros/{name}/repro.py", "cpu", 1)]["status"] == "NOT_REPRODUCED"
    assert Path(gpu_host["calls"]).read_text().split() == ["gpu-box"] * 3  # probe + 2 legs

    table = ck("run", "--last").stdout
    assert "[2] gpu-box:" + gpu_host["python"] in table


@pytest.mark.slow
def test_cuda_legs_are_serialised_per_gpu(
    ck: Ck, fork_repo: Path, gpu_host: dict[str, str], tmp_path: Path
) -> None:
    """With one GPU, two CUDA legs never overlap, even with -j 2 (CPU legs would)."""
    marks = tmp_path / "marks"
    marks.mkdir()
    for name, other in (("a", "b"), ("b", "a")):
        write(
            fork_repo,
            f"repros/{name}/repro.py",
            textwrap.dedent(f"""\
                import os, time
                mark = os.path.join({str(marks)!r}, "{name}")
                other = os.path.join({str(marks)!r}, "{other}")
                open(mark + ".start", "w").close()
                overlapped = False
                deadline = time.monotonic() + 1.0
                while time.monotonic() < deadline:
                    overlapped |= os.path.exists(other + ".start") and not os.path.exists(other + ".end")
                    time.sleep(0.02)
                open(mark + ".end", "w").close()
                verdict = "REPRODUCED overlapped" if overlapped else "NOT_REPRODUCED alone on gpu "
                print("{VERDICT_PREFIX} " + verdict + os.environ.get("CUDA_VISIBLE_DEVICES", "-"))
            """),
        )
    code, record = run_json(
        ck,
        "repros/a",
        "repros/b",
        "--devices",
        "cuda",
        "-j",
        "2",
        "--cuda-host",
        "gpu-box",
        "--cuda-python",
        gpu_host["python"],
        env={"STANDIN_GPUS": "1"},
    )
    assert code == 0, record["reason"]
    details = [c["detail"] for c in record["cells"]]
    assert details == ["alone on gpu 0", "alone on gpu 0"]


@pytest.mark.slow
def test_test_file_on_the_host_brings_back_its_junit(
    ck: Ck, fork_repo: Path, gpu_host: dict[str, str]
) -> None:
    write(fork_repo, "test/test_host.py", "def test_on_host():\n    assert True\n")
    write(
        fork_repo,
        "test/test_host_generic.py",
        textwrap.dedent("""\
            import torch
            from torch.testing._internal.common_device_type import instantiate_device_type_tests
            from torch.testing._internal.common_utils import TestCase

            class TestHost(TestCase):
                def test_ones(self, device):
                    self.assertEqual(torch.ones(2, device=device).sum().item(), 2.0)

            instantiate_device_type_tests(TestHost, globals())
        """),
    )
    code, record = run_json(
        ck,
        "test/test_host_generic.py",
        "--devices",
        "cuda",
        "--cuda-host",
        "gpu-box",
        "--cuda-python",
        gpu_host["python"],
    )
    got = cells(record)
    assert list(got) == [("test/test_host_generic.py", "cuda", 2)]
    remote = got[("test/test_host_generic.py", "cuda", 2)]
    # The stand-in host has CPU torch, so pytest collects no CUDA test: the report still came
    # back, and a device that ran nothing is not green.
    assert remote["status"] == "ERROR" and remote["detail"] == "no tests collected"
    assert remote["counts"] == {"total": 0, "passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    assert code == 1
    assert record["reason"] == "test/test_host_generic.py on cuda is ERROR: no tests collected"
    log = (fork_repo / remote["log_path"]).read_text()  # the result line stays out of the log
    assert "CONTRIBKIT_REMOTE" not in log and log.rstrip().splitlines()[-1].startswith("no tests")


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("{not json", "Expecting property name"),
        ('{"returncode": 0}', "no junit, timed_out"),
        ('{"returncode": "0", "timed_out": false, "junit": null}', "returncode '0'"),
        ('{"returncode": 0, "timed_out": false, "junit": "<xml>"}', "base64"),
    ],
)
def test_a_malformed_result_line_is_an_error_cell(
    ck: Ck, fork_repo: Path, gpu_host: dict[str, str], line: str, why: str
) -> None:
    write(fork_repo, "repros/a/repro.py", f"print('{VERDICT_PREFIX} NOT_REPRODUCED x')\n")
    code, record = run_json(
        ck,
        "repros/a",
        "--devices",
        "cuda",
        "--cuda-host",
        "gpu-box",
        "--cuda-python",
        gpu_host["python"],
        env={"STANDIN_MARKER": line},
    )
    cell = cells(record)[("repros/a/repro.py", "cuda", 2)]
    assert code == 1 and cell["status"] == "ERROR"
    assert cell["detail"].startswith("gpu-box sent a malformed result line (")
    assert why in cell["detail"]


def test_unreachable_host_is_bad_input(ck: Ck, fork_repo: Path, gpu_host: dict[str, str]) -> None:
    write(fork_repo, "repros/a/repro.py", f"print('{VERDICT_PREFIX} NOT_REPRODUCED x')\n")
    proc = ck("run", "repros/a", "--cuda-host", "unreachable")
    assert proc.returncode == 2
    assert "could not probe python3 on unreachable: ssh: connect to host unreachable" in proc.stderr
    bad = ck("run", "repros/a", "--cuda-host", "-oProxyCommand=x")
    assert bad.returncode == 2 and "is not an ssh host" in bad.stderr


@pytest.mark.slow
def test_remote_timeout_is_enforced_on_the_host(
    fork_repo: Path, gpu_host: dict[str, str], tmp_path: Path
) -> None:
    from contribkit.run.remote import RemoteHost

    pidfile = tmp_path / "remote-child.pid"
    script = write(
        fork_repo,
        "repros/hang/repro.py",
        textwrap.dedent(f"""\
            import subprocess, sys, time
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            open({str(pidfile)!r}, "w").write(str(child.pid))
            time.sleep(600)
        """),
    )
    host = RemoteHost("gpu-box", python=gpu_host["python"])
    out = host.run_files(
        {"repro.py": script.read_bytes()},
        ["repro.py", "--device", "cuda"],
        {"CONTRIBKIT_DEVICE": "cuda"},
        2.0,
        tmp_path / "leg.log",
    )
    assert out.timed_out and out.returncode is None and out.error is None
    assert wait_dead(int(pidfile.read_text()))
