"""``contribkit triage`` with real interpreters: venvs whose stand-in torch differs by version
(``relu`` breaks in 2.9.0; ``sum`` of an empty tensor is fixed in 2.9.0), once with the real
CPU torch, and repros made by the real ``contribkit repro --from-file``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from contribkit.target.reprolib import VERDICT_PREFIX
from contribkit.triage.model import version_key
from contribkit.triage.sources import read_issue_list
from tests import sweephelpers as sh
from tests.conftest import Ck
from tests.run import test_remote_cuda

gpu_host = test_remote_cuda.gpu_host  # a stand-in ssh and GPU host (see that module)


@pytest.fixture
def pythons(tmp_path: Path) -> dict[str, str]:
    """2.8.0 (relu fine, sum broken), 2.9.0 and 2.10.0 (relu broken, sum fine)."""
    venvs = tmp_path / "venvs"
    return {
        "2.8.0": sh.standin_python(venvs / "t28", "2.8.0", sum_broken=True),
        "2.9.0": sh.standin_python(venvs / "t29", "2.9.0", relu_broken=True),
        "2.10.0": sh.standin_python(venvs / "t210", "2.10.0", relu_broken=True),
    }


def make_repro(ck: Ck, tmp_path: Path, text: str, number: int) -> None:
    issue = tmp_path / f"issue-{number}.md"
    issue.write_text(text)
    made = ck("repro", "--from-file", str(issue), "-o", f"repros/issue-{number}")
    assert made.returncode == 0, made.stderr


def triage_json(ck: Ck, *args: str) -> tuple[int, dict[str, Any]]:
    proc = ck("triage", "--json", *args)
    assert proc.stdout.strip(), proc.stderr
    assert proc.stderr == "", proc.stderr  # --json: nothing but the JSON
    return proc.returncode, json.loads(proc.stdout)


def with_pythons(pythons: dict[str, str], *versions: str) -> list[str]:
    return [arg for v in versions for arg in ("--python", pythons[v])]


def test_two_versions_give_a_table_with_the_boundary(
    ck: Ck, fork_repo: Path, tmp_path: Path, pythons: dict[str, str]
) -> None:
    make_repro(ck, tmp_path, sh.RELU_ISSUE, 12)
    # Given newest first: the table still reads oldest first, 2.10.0 after 2.9.0.
    args = ["repros/issue-12", *with_pythons(pythons, "2.10.0", "2.9.0", "2.8.0"), "-j", "2"]
    code, record = triage_json(ck, *args, "--devices", "cpu,cuda")
    assert code == 0
    verdicts = {
        (i["torch_version"], c["device"]): c["status"]
        for c in record["cells"]
        for i in record["interpreters"]
        if i["index"] == c["interpreter"]
    }
    assert verdicts == {
        ("2.8.0", "cpu"): "NOT_REPRODUCED",
        ("2.9.0", "cpu"): "REPRODUCED",
        ("2.10.0", "cpu"): "REPRODUCED",
        ("2.8.0", "cuda"): "SKIP",  # the repro is cpu-only
        ("2.9.0", "cuda"): "SKIP",
        ("2.10.0", "cuda"): "SKIP",
    }
    assert record["boundaries"] == [
        {
            "repro": "issue-12",
            "device": "cpu",
            "kind": "introduced",
            "text": "reproduces from 2.9.0 on; not on 2.8.0",
        }
    ]
    assert record["states"][0]["state"] == "reproduces"
    assert (fork_repo / record["record_path"]).is_file()
    assert record["record_path"].startswith(".contribkit/triage/")
    assert not (fork_repo / ".contribkit" / "runs").exists()  # the submit gate's records stay

    table = ck(
        "triage",
        "repros/issue-12",
        *with_pythons(pythons, "2.10.0", "2.9.0", "2.8.0"),
        "--devices",
        "cpu,cuda",
    )
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[1].split() == ["torch", "git", "python", "device", "verdict", "time", "detail"]
    assert [line.split()[0] for line in lines[2:5]] == ["2.8.0", "2.9.0", "2.10.0"]
    assert [line.split()[5] for line in lines[2:5]] == [
        "NOT_REPRODUCED",
        "REPRODUCED",
        "REPRODUCED",
    ]
    assert "cuda: n/a (the repro is cpu-only)" in lines
    assert "cpu: reproduces from 2.9.0 on; not on 2.8.0" in lines
    # Not a terminal: a plain line per leg on stderr.
    legs = [line for line in table.stderr.splitlines() if line.startswith("[")]
    assert len(legs) == 3 and legs[-1].startswith("[3/3 legs, ")

    # The user's --expect oracle, stored in meta.json, is the one the comment names.
    meta_path = fork_repo / "repros" / "issue-12" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "expect": "error:RuntimeError"}))
    comment = ck(
        "triage",
        "repros/issue-12",
        *with_pythons(pythons, "2.9.0", "2.8.0"),
        "--devices",
        "cpu",
        "--markdown",
    )
    assert comment.returncode == 0, comment.stderr
    text = comment.stdout
    assert "- cpu: reproduces from 2.9.0 on; not on 2.8.0" in text
    assert "| 2.8.0 | `280000standin` | cpu | NOT_REPRODUCED |" in text
    assert "Repro: `python repro.py --device DEVICE`" in text
    assert "Oracle: `--expect error:RuntimeError`" in text
    assert str(tmp_path) not in text and tempfile.gettempdir() not in text
    assert comment.stderr == ""


def test_issues_over_several_repros_give_one_table(
    ck: Ck, fork_repo: Path, tmp_path: Path, pythons: dict[str, str], shared_cache: str
) -> None:
    make_repro(ck, tmp_path, sh.RELU_ISSUE, 12)
    make_repro(ck, tmp_path, sh.SUM_ISSUE, 13)
    make_repro(ck, tmp_path, sh.TINYVEC_ISSUE, 14)  # imports a package no venv has
    listing = tmp_path / "issues.txt"
    listing.write_text(
        "# module: nn, open\n12\n#13\nhttps://github.com/pytorch/pytorch/issues/14\n"
        "pytorch/pytorch#15\n"
    )
    args = ["--issues", str(listing), *with_pythons(pythons, "2.8.0", "2.9.0"), "--devices", "cpu"]
    code, record = triage_json(ck, *args)
    assert code == 0
    states = {s["repro"]: s for s in record["states"]}
    assert {name: s["state"] for name, s in states.items()} == {
        "issue-12": "reproduces",
        "issue-13": "no longer reproduces",
        "issue-14": "cannot decide",
        "issue-15": "cannot decide",
    }
    assert states["issue-13"]["evidence"].startswith("NOT_REPRODUCED on torch 2.9.0 cpu: ")
    assert (
        "no longer reproduces from 2.9.0 on; reproduces on 2.8.0" in states["issue-13"]["evidence"]
    )
    assert "No module named 'tinyvec'" in states["issue-14"]["evidence"]
    assert states["issue-15"]["evidence"] == (
        "no repro in issue-15: make it with `contribkit repro 15`"
    )

    table = ck("triage", *args)
    lines = table.stdout.splitlines()
    assert lines[1].split() == ["repro", "2.8.0", "cpu", "2.9.0", "cpu", "state"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:6]}
    assert rows["issue-12"] == ["NOT_REPRODUCED", "REPRODUCED", "reproduces"]
    assert rows["issue-13"] == ["REPRODUCED", "NOT_REPRODUCED", "no", "longer", "reproduces"]
    assert "No longer reproduce: candidates to close (1):" in lines
    assert "Cannot be decided here (2):" in lines

    # The same repros as folders (repros/ holds them), and gh's JSON on stdin: one table.
    gh = json.dumps([{"number": 15, "title": "x"}])
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "contribkit",
            "triage",
            "repros/",
            "--issues",
            "-",
            "--json",
            *with_pythons(pythons, "2.8.0", "2.9.0"),
            "--devices",
            "cpu",
        ],
        cwd=fork_repo,
        input=gh,
        capture_output=True,
        text=True,
        env={**os.environ, "CONTRIBKIT_CACHE_DIR": shared_cache},
    )
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)
    assert [r["name"] for r in again["repros"]] == ["issue-12", "issue-13", "issue-14", "issue-15"]
    assert [s["state"] for s in again["states"]] == [states[n]["state"] for n in sorted(states)]


def test_cuda_legs_go_to_the_host_as_run_legs_do(
    ck: Ck, fork_repo: Path, gpu_host: dict[str, str]
) -> None:
    """`--cuda-host`: a triage leg is a `run` leg, so it travels as run's ssh payload does."""
    folder = fork_repo / "repros" / "issue-21"
    folder.mkdir(parents=True)
    (folder / "repro.py").write_text(
        "import os, sys\n"
        "device = sys.argv[sys.argv.index('--device') + 1]\n"
        "word = 'REPRODUCED' if device == 'cuda' else 'NOT_REPRODUCED'\n"
        f"print('{VERDICT_PREFIX} ' + word + ' on ' + device + ' gpu '"
        " + os.environ.get('CUDA_VISIBLE_DEVICES', '-'))\n"
        "sys.exit(1 if device == 'cuda' else 0)\n"
    )
    code, record = triage_json(
        ck, "repros/issue-21", "--cuda-host", "gpu-box", "--cuda-python", gpu_host["python"]
    )
    assert code == 0
    local, remote = record["interpreters"]
    assert local["host"] is None and remote["host"] == "gpu-box"
    got = {(c["interpreter"], c["device"]): c for c in record["cells"]}
    assert got[(2, "cuda")]["status"] == "REPRODUCED"
    assert got[(2, "cuda")]["detail"].split()[:3] == ["on", "cuda", "gpu"]
    assert got[(1, "cpu")]["status"] == "NOT_REPRODUCED"
    assert Path(gpu_host["calls"]).read_text().split() == ["gpu-box"] * 2  # probe + 1 leg


def test_progress_on_a_terminal_is_one_line_rewritten(
    ck: Ck, fork_repo: Path, tmp_path: Path, pythons: dict[str, str], shared_cache: str
) -> None:
    """stderr a terminal: the status (legs done of all, elapsed) is rewritten in place."""
    import pty

    make_repro(ck, tmp_path, sh.RELU_ISSUE, 12)
    leader, follower = pty.openpty()
    argv = ["triage", "repros/issue-12", *with_pythons(pythons, "2.8.0", "2.9.0"), "-j", "1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "contribkit", *argv, "--devices", "cpu"],
        cwd=fork_repo,
        stdout=subprocess.PIPE,
        stderr=follower,
        env={**os.environ, "CONTRIBKIT_CACHE_DIR": shared_cache},
        text=True,
    )
    os.close(follower)
    out, _ = proc.communicate(timeout=300)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end is closed: all was read
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert proc.returncode == 0
    status = seen.decode()
    assert "\r\x1b[K1/2 legs, " in status and "\r\x1b[K2/2 legs, " in status
    assert status.endswith("\r\x1b[K")  # cleared before the table
    assert "reproduces from 2.9.0 on; not on 2.8.0" in out


def test_bad_inputs_are_one_line(ck: Ck, tmp_path: Path) -> None:
    listing = tmp_path / "issues.txt"
    listing.write_text("12\nnot an issue\n")
    missing = tmp_path / "missing.txt"
    missing.write_text("99\n")
    for args, message in (
        (["--issues", str(missing)], "nothing to run: no repro in issue-99: make it with"),
        (["--issues", str(listing)], "line 2: 'not' is not an issue"),
        ([], "nothing to triage"),
        (["repros/none"], "repros/none does not exist"),
        (["--venvs-dir", str(tmp_path), "x"], "holds no virtual environment"),
    ):
        proc = ck("triage", *args)
        assert proc.returncode == 2, proc.stderr
        assert message in proc.stderr.splitlines()[0], proc.stderr
        assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_real_torch_and_a_standin(
    ck: Ck, fork_repo: Path, tmp_path: Path, pythons: dict[str, str]
) -> None:
    """The real CPU torch (2.13 here) sorts after 2.9.0, and its relu is fine."""
    make_repro(ck, tmp_path, sh.RELU_ISSUE, 12)
    args = ["repros/issue-12", "--python", sys.executable, *with_pythons(pythons, "2.9.0")]
    code, record = triage_json(ck, *args, "--devices", "cpu", "-j", "2")
    assert code == 0
    real = next(i for i in record["interpreters"] if i["path"] == sys.executable)
    assert real["torch_version"] and not real["torch_version"].startswith("2.9.0")
    assert record["boundaries"][0]["text"] == (
        f"no longer reproduces from {real['torch_version']} on; reproduces on 2.9.0"
    )
    assert record["states"][0]["state"] == "no longer reproduces"


def test_version_order_and_issue_lists(tmp_path: Path) -> None:
    ordered = [
        "2.8.0",
        "2.9.0a0+git1234",
        "2.9.0rc1",
        "2.9.0",
        "2.9.0+cpu",
        "2.10.0.dev20250601+cpu",
        "2.10.0",
        "2.13.0",
    ]
    assert sorted(reversed(ordered), key=version_key)[0] == "2.8.0"
    assert sorted(ordered, key=version_key) == ordered
    assert version_key(None) > version_key("99.0")
    listing = tmp_path / "list.txt"
    listing.write_text("170398\tOPEN\tA title\n#2\n\n# a comment\no/n#3 trailing words\n2\n")
    assert read_issue_list(str(listing)) == [170398, 2, 3]
    listing.write_text('[{"number": 5}, 6]')
    assert read_issue_list(str(listing)) == [5, 6]
