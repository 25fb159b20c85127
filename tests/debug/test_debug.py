"""`contribkit debug`: the generated script, --run with real CPU torch, presets and bad input."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from contribkit.core.errors import BadInput
from contribkit.debug.plan import PRESETS, default_script
from contribkit.repro.plan import runtime_source
from contribkit.target.reprolib import VERDICT_PREFIX
from tests.branchcases import BRANCH_ISSUES
from tests.conftest import RunCli

# A deliberate graph break (print) and a recompilation (the input's rank changes).
BREAK_AND_RECOMPILE = """\
import torch

def f(x, n):
    y = x * 2
    print("a graph break")
    return y + n

cf = torch.compile(f, backend="eager")
cf(torch.ones(3), 1)
cf(torch.ones(3, 4), 1)
print("done")
"""

# Fails only on the backends that decompose (aot_eager_decomp_partition, inductor), before
# any C++ is compiled.
BROKEN_DECOMPOSITION = """\
import torch
from torch._inductor import decomposition

def broken(*args, **kwargs):
    raise RuntimeError("deliberately broken decomposition")

decomposition.decompositions[torch.ops.aten.sin.default] = broken

@torch.compile
def f(x):
    return x.sin() + 1

f(torch.randn(3))
"""


SLOW = pytest.mark.slow


@pytest.fixture
def cache(shared_cache: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One registry probe for the whole run (every xdist worker) instead of one per test."""
    monkeypatch.setenv("CONTRIBKIT_CACHE_DIR", shared_cache)
    return Path(shared_cache)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def repro_script(body: str, signature: dict[str, str] | None, device: str = "cpu") -> str:
    """A script keeping the repro verdict contract, built on contribkit's own repro runtime."""
    return (
        runtime_source()
        + f"\nrepro = Repro('issue #1', {signature!r}, {device!r})\nrepro.start()\n"
        + body
        + "\nrepro.finish()\n"
    )


# --- listing ------------------------------------------------------------------------------


def test_list_presets_names_every_preset_of_the_issue(run_cli: RunCli) -> None:
    proc = run_cli("debug", "--list-presets", "--json")
    assert proc.returncode == 0, proc.stderr
    listed = {p["name"]: p for p in json.loads(proc.stdout)}
    assert list(listed) == [
        "graph-breaks",
        "recompiles",
        "inductor-codegen",
        "trace",
        "minify",
        "cuda-sync",
        "dispatch",
        "anomaly",
        "ablation",
    ]
    assert listed["recompiles"]["logs"] == ["recompiles", "recompiles_verbose", "guards"]
    assert all(p["summary"] for p in listed.values())
    text = run_cli("debug", "--list-presets").stdout
    assert "graph-breaks" in text and "TORCHDYNAMO_VERBOSE" in text


@pytest.mark.slow
def test_list_logs_from_the_target_torch_with_descriptions(run_cli: RunCli, cache: Path) -> None:
    proc = run_cli("debug", "--list-logs", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["fallback"] is False and data["torch_version"].startswith("2.13")
    names = {n["name"]: n for n in data["names"]}
    assert names["dynamo"]["kind"] == "component"
    assert names["graph_breaks"]["kind"] == "artifact" and names["graph_breaks"]["description"]
    assert "[off unless named]" in names["output_code"]["description"]
    assert "graph_breaks" in run_cli("debug", "--list-logs").stdout


def test_list_logs_without_torch_uses_the_bundled_list(run_cli: RunCli, bare_python: str) -> None:
    proc = run_cli("debug", "--list-logs", "--python", bare_python)
    assert proc.returncode == 0, proc.stderr
    assert "graph_breaks" in proc.stdout
    assert "bundled with contribkit" in proc.stdout + proc.stderr


# --- writing the script -------------------------------------------------------------------


def test_writes_a_documented_script_beside_the_target_and_never_overwrites(
    run_cli: RunCli, cache: Path, tmp_path: Path
) -> None:
    target = write(tmp_path / "case" / "prog.py", "print('hi')\n")
    proc = run_cli(
        "debug", "--preset", "graph-breaks", "--preset", "trace", "--logs", "+dynamo",
        "--script", str(target),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    script = tmp_path / "case" / "debug_issue.sh"
    text = script.read_text()
    assert os.access(script, os.X_OK)
    assert "set -euo pipefail" in text
    lines = text.splitlines()
    exports = [i for i, line in enumerate(lines) if line.startswith("export ")]
    assert exports and all(lines[i - 1].startswith("# ") for i in exports)  # a comment on each
    names = {lines[i].split("=", 1)[0].split()[1] for i in exports}
    assert {"TORCH_LOGS", "TORCH_LOGS_OUT", "TORCHDYNAMO_VERBOSE", "TORCH_TRACE"} <= names
    assert "export TORCH_LOGS=graph_breaks,+dynamo" in text
    assert "tlparse" in text and "model's code" in text  # the next step, and the warning
    assert "model's code" in proc.stderr
    again = run_cli("debug", "-p", "graph-breaks", "--script", str(target))
    assert again.returncode == 2 and "already exists" in again.stderr
    assert script.read_text() == text
    forced = run_cli("debug", "-p", "recompiles", "--script", str(target), "--force")
    assert forced.returncode == 0 and "recompiles_verbose" in script.read_text()


def test_preview_writes_nothing(run_cli: RunCli, cache: Path, tmp_path: Path) -> None:
    target = write(tmp_path / "prog.py", "print('hi')\n")
    for flags in (["-o", "-"], ["--dry-run"]):
        proc = run_cli("debug", "-p", "minify", "--script", str(target), *flags)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("#!/usr/bin/env bash")
        assert "export TORCHDYNAMO_REPRO_AFTER=dynamo" in proc.stdout
        assert "export TORCHDYNAMO_REPRO_LEVEL=2" in proc.stdout
        assert "minifier_launcher.py" in proc.stdout
    assert not (tmp_path / "debug_issue.sh").exists()
    would = run_cli("debug", "-p", "ablation", "-s", str(target), "--run", "--dry-run")
    assert would.returncode == 0, would.stderr
    assert would.stdout.startswith(f"would run {target}")
    assert "eager, aot_eager, aot_eager_decomp_partition, inductor" in would.stdout
    assert not list(tmp_path.glob("debug_issue*"))
    aot = run_cli("debug", "-p", "minify", "--minify-after", "aot", "-s", str(target), "-o", "-")
    assert "export TORCHDYNAMO_REPRO_AFTER=aot" in aot.stdout


def test_dry_run_json_shows_the_plan_and_the_script(
    run_cli: RunCli, cache: Path, tmp_path: Path
) -> None:
    target = write(tmp_path / "prog.py", "print('hi')\n")
    proc = run_cli("debug", "-p", "anomaly", "-s", str(target), "--dry-run", "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["written"] is None and plan["runner"]["anomaly"] is True
    assert "set_detect_anomaly(True)" in plan["script_text"]
    assert not (tmp_path / "debug_issue.sh").exists()


def test_json_plan(run_cli: RunCli, cache: Path, tmp_path: Path) -> None:
    target = write(tmp_path / "prog.py", "print('hi')\n")
    out = tmp_path / "out" / "dbg.sh"
    proc = run_cli("debug", "-p", "inductor-codegen", "-s", str(target), "-o", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["written"] == str(out) and out.is_file()
    env = {e["name"]: e["value"] for e in plan["env"]}
    assert env["TORCH_LOGS"] == "output_code,kernel_code"
    assert env["TORCH_COMPILE_DEBUG"] == "1"
    assert env["TORCH_COMPILE_DEBUG_DIR"] == str(tmp_path / "out" / "dbg.debug")
    assert env["TORCH_LOGS_OUT"] == str(tmp_path / "out" / "dbg.torch_logs.txt")
    assert plan["log"] == str(tmp_path / "out" / "dbg.log")


@pytest.mark.slow
def test_build_dependent_presets_warn(run_cli: RunCli, cache: Path, tmp_path: Path) -> None:
    target = write(tmp_path / "prog.py", "print('hi')\n")
    proc = run_cli("debug", "-p", "dispatch,cuda-sync", "-s", str(target), "-o", "-")
    assert proc.returncode == 0, proc.stderr
    assert "release build" in proc.stderr and "debug build" in proc.stdout
    assert "CPU-only build" in proc.stderr
    assert "export CUDA_LAUNCH_BLOCKING=1" in proc.stdout
    assert "compute-sanitizer --tool memcheck" in proc.stdout


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["-p", "graph-brakes"], "did you mean 'graph-breaks'"),
        # --logs names are checked against the target torch's own registry: real torch
        pytest.param(["--logs", "graph_break"], "did you mean 'graph_breaks'", marks=SLOW),
        pytest.param(["--logs", "dynamo,,aot"], "not [+|-]NAME", marks=SLOW),
        ([], "nothing to debug"),
    ],
)
def test_bad_input_is_one_error_and_exit_2(
    run_cli: RunCli, cache: Path, tmp_path: Path, argv: list[str], needle: str
) -> None:
    target = write(tmp_path / "prog.py", "print('hi')\n")
    proc = run_cli("debug", "-s", str(target), *argv)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("contribkit: error: ")
    assert needle in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "debug_issue.sh").exists()


def test_missing_script_is_bad_input(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli("debug", "-p", "trace", "-s", str(tmp_path / "nope.py"))
    assert proc.returncode == 2 and "not found" in proc.stderr


def test_script_defaults_to_the_branchs_issue_repro(
    run_cli: RunCli, cache: Path, fork_repo: Path
) -> None:
    subprocess.run(["git", "checkout", "-q", "-b", "fix/issue-123-bad-grad"], check=True)
    missing = run_cli("debug", "-p", "graph-breaks", cwd=fork_repo)
    assert missing.returncode == 2
    assert "issue 123" in missing.stderr and "contribkit repro 123" in missing.stderr
    repro = write(fork_repo / "repros" / "issue-123" / "repro.py", "print('hi')\n")
    proc = run_cli("debug", "-p", "graph-breaks", cwd=fork_repo / "test")
    assert proc.returncode == 0, proc.stderr
    assert (repro.parent / "debug_issue.sh").is_file()
    # Artefacts of a script elsewhere in the fork are kept out of commits.
    other = write(fork_repo / "tools" / "case.py", "print('hi')\n")
    assert run_cli("debug", "-p", "trace", "-s", str(other), cwd=fork_repo).returncode == 0
    exclude = (fork_repo / ".git" / "info" / "exclude").read_text()
    assert "/tools/debug_issue.*" in exclude
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=fork_repo,
        capture_output=True,
        text=True,
    ).stdout
    assert "debug_issue" not in status


def test_default_script_reads_the_branch_like_the_hooks(tmp_path: Path) -> None:
    """debug finds the current issue's repro through the one shared branch parser."""
    for branch, number in BRANCH_ISSUES:
        if number is None:
            with pytest.raises(BadInput, match="the current branch names no issue"):
                default_script(tmp_path, branch, "repros")
            continue
        script = tmp_path / "repros" / f"issue-{number}" / "repro.py"
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text("")
        assert default_script(tmp_path, branch, "repros") == script, branch


def test_presets_are_declared_once() -> None:
    for preset in PRESETS.values():
        assert preset.summary
        for setting in preset.env:
            assert setting.comment and "\n" not in setting.comment


# --- running ------------------------------------------------------------------------------


@pytest.mark.slow
def test_run_reports_graph_breaks_and_recompiles_with_reasons(
    run_cli: RunCli, cache: Path, tmp_path: Path
) -> None:
    target = write(tmp_path / "prog.py", BREAK_AND_RECOMPILE)
    proc = run_cli("debug", "-p", "graph-breaks,recompiles", "-s", str(target), "--run", "--json")
    assert proc.returncode == 0, proc.stderr
    run = json.loads(proc.stdout)["run"]
    assert run["status"] == "PASS"
    breaks = run["graph_breaks"]
    assert breaks["recognised"] and breaks["total"] >= 1
    [gb] = [g for g in breaks["unique"] if g["location"] == f"{target}:5"]
    assert gb["reason"] == "Failed to trace builtin operator"
    assert "print" in gb["explanation"] and gb["code"].startswith("GB")
    recompiles = run["recompiles"]
    assert recompiles["recognised"]
    [event] = [r for r in recompiles["events"] if r["function"] == "f"]
    assert event["location"] == f"{target}:3"
    assert any("rank mismatch" in reason for reason in event["reasons"])
    assert Path(run["log"]) == tmp_path / "debug_issue.log"
    assert "[__graph_breaks]" in (tmp_path / "debug_issue.log").read_text()
    assert (tmp_path / "debug_issue.torch_logs.txt").stat().st_size > 0
    text = run_cli("debug", "-p", "graph-breaks,recompiles", "-s", str(target), "--run")
    assert "Failed to trace builtin operator" in text.stdout
    assert "rank mismatch" in text.stdout and "Recompilations:" in text.stdout


@pytest.mark.slow
def test_generated_script_runs_under_bash_from_anywhere(
    run_cli: RunCli, cache: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "it's a $dir"
    target = write(folder / "prog.py", BREAK_AND_RECOMPILE)
    proc = run_cli("debug", "-p", "graph-breaks", "-s", str(target), "--", "--flag", "two words")
    assert proc.returncode == 0, proc.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    bash = subprocess.run(
        ["bash", str(folder / "debug_issue.sh")],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bash.returncode == 0, bash.stderr
    log = (folder / "debug_issue.log").read_text()
    assert "[__graph_breaks] Graph break in user code" in log and "done" in log
    assert "combined output" in bash.stdout and str(folder / "debug_issue.log") in bash.stdout
    assert (folder / "debug_issue.torch_logs.txt").stat().st_size > 0
    assert list(elsewhere.iterdir()) == []


def test_generated_script_keeps_the_scripts_exit_status(
    run_cli: RunCli, cache: Path, tmp_path: Path
) -> None:
    target = write(tmp_path / "fails.py", "import sys\nprint('before')\nsys.exit(3)\n")
    assert run_cli("debug", "-p", "cuda-sync", "-s", str(target)).returncode == 0
    bash = subprocess.run(
        ["bash", str(tmp_path / "debug_issue.sh")], capture_output=True, text=True, timeout=60
    )
    assert bash.returncode == 3
    assert "before" in (tmp_path / "debug_issue.log").read_text()


@pytest.mark.slow
def test_ablation_table_with_repro_verdicts(run_cli: RunCli, cache: Path, tmp_path: Path) -> None:
    target = write(
        tmp_path / "repro.py",
        repro_script(BROKEN_DECOMPOSITION, {"exc_type": "BackendCompilerFailed", "message": ""}),
    )
    proc = run_cli("debug", "-p", "ablation", "-s", str(target), "--run", "--json")
    assert proc.returncode == 1, proc.stderr  # the first failing backend's exit code
    data = json.loads(proc.stdout)
    table = {r["backend"]: r for r in data["ablation"]}
    assert list(table) == ["eager", "aot_eager", "aot_eager_decomp_partition", "inductor"]
    assert [r["status"] for r in table.values()] == [
        "NOT_REPRODUCED",
        "NOT_REPRODUCED",
        "REPRODUCED",
        "REPRODUCED",
    ]
    assert all(r["compile_calls"] == 1 for r in table.values())
    assert data["first_failure"] == "aot_eager_decomp_partition"
    assert "decompositions" in data["first_failure_points_at"]
    assert (
        (tmp_path / "debug_issue.inductor.log")
        .read_text()
        .rstrip()
        .splitlines()[-1]
        .startswith(VERDICT_PREFIX)
    )
    assert target.read_text() == repro_script(
        BROKEN_DECOMPOSITION, {"exc_type": "BackendCompilerFailed", "message": ""}
    )


@pytest.mark.slow
def test_ablation_of_a_repro_that_cannot_run_here(
    run_cli: RunCli, cache: Path, tmp_path: Path
) -> None:
    # A CUDA repro asked for cuda on a CPU-only machine: every backend says CANNOT_RUN.
    target = write(tmp_path / "repro.py", repro_script(BROKEN_DECOMPOSITION, None, "cuda"))
    proc = run_cli("debug", "-p", "ablation", "-s", str(target), "--run", "--", "--device", "cuda")
    assert proc.returncode == 125, proc.stderr
    assert proc.stdout.count("CANNOT_RUN") >= 4
    assert "no backend failed" in proc.stdout
    assert "could not run (CANNOT_RUN) on: eager, aot_eager" in proc.stdout


@pytest.mark.slow
def test_ablation_in_the_generated_script(run_cli: RunCli, cache: Path, tmp_path: Path) -> None:
    target = write(tmp_path / "tiny.py", BROKEN_DECOMPOSITION)
    assert run_cli("debug", "-p", "ablation", "-s", str(target)).returncode == 0
    bash = subprocess.run(
        ["bash", str(tmp_path / "debug_issue.sh")], capture_output=True, text=True, timeout=300
    )
    assert bash.returncode == 1, bash.stderr
    table = bash.stdout[bash.stdout.index("ablation (") :].splitlines()
    results = {line.split()[0]: line.split()[-1] for line in table[2:6]}
    assert results == {
        "eager": "PASS",
        "aot_eager": "PASS",
        "aot_eager_decomp_partition": "FAIL",
        "inductor": "FAIL",
    }
    assert "first failure: aot_eager_decomp_partition" in bash.stdout
    assert (tmp_path / "debug_issue.eager.log").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["plain script", "repro that cannot run here"])
def test_the_generated_script_and_run_share_one_ablation_policy(
    run_cli: RunCli, cache: Path, tmp_path: Path, kind: str
) -> None:
    """The ablation policy is written twice (bash in the script, Python behind --run): the same
    target gets the same result per backend, the same first failure and the same exit code."""
    text = (
        BROKEN_DECOMPOSITION
        if kind == "plain script"
        else repro_script(BROKEN_DECOMPOSITION, None, "cuda")
    )
    target = write(tmp_path / "target.py", text)
    args = ("--", "--device", "cuda") if kind != "plain script" else ()
    assert run_cli("debug", "-p", "ablation", "-s", str(target), *args).returncode == 0
    bash = subprocess.run(
        ["bash", str(tmp_path / "debug_issue.sh")], capture_output=True, text=True, timeout=300
    )
    ran = run_cli("debug", "-p", "ablation", "-s", str(target), "--run", "--json", "--force", *args)
    data = json.loads(ran.stdout)
    by_run = {row["backend"]: row["status"] for row in data["ablation"]}
    table = bash.stdout[bash.stdout.index("ablation (") :].splitlines()
    by_script = {line.split()[0]: line.split()[-1] for line in table[2 : 2 + len(by_run)]}
    assert by_script == by_run
    assert bash.returncode == ran.returncode == data["exit_code"]
    first = data["first_failure"]
    assert (
        (f"first failure: {first} " in bash.stdout)
        if first
        else ("no backend failed" in bash.stdout)
    )


@pytest.mark.slow
def test_anomaly_mode_through_the_runner(run_cli: RunCli, cache: Path, tmp_path: Path) -> None:
    # What the script sets before its own `import torch` still counts: the runner waits for it.
    target = write(
        tmp_path / "nan.py",
        "import os\n"
        "os.environ['TORCH_LOGS'] = 'graph_breaks'\n"
        "import torch\n"
        "def f(x):\n"
        "    print('a graph break')\n"
        "    return x - 2\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "torch.sqrt(torch.compile(f, backend='eager')(x)).sum().backward()\n",
    )
    proc = run_cli("debug", "-p", "anomaly", "-s", str(target), "--run")
    assert proc.returncode == 1
    assert "Final exception:" in proc.stdout
    assert "SqrtBackward0" in proc.stdout and "nan" in proc.stdout
    log = (tmp_path / "debug_issue.log").read_text()
    assert "autograd anomaly detection is on" in log
    assert "[__graph_breaks] Graph break in user code" in log


@pytest.mark.slow
def test_crashing_script_still_gets_a_summary_and_its_exit_code(
    run_cli: RunCli, cache: Path, tmp_path: Path
) -> None:
    target = write(
        tmp_path / "crash.py", "print('working')\nraise ValueError('bad shape: 3 vs 4')\n"
    )
    proc = run_cli("debug", "-p", "graph-breaks", "-s", str(target), "--run")
    assert proc.returncode == 1
    assert "FAIL: exit 1" in proc.stdout
    assert "ValueError: bad shape: 3 vs 4" in proc.stdout
    assert "torch.compile was not reached" in proc.stdout
    exits = write(tmp_path / "exits.py", "import sys\nsys.exit(7)\n")
    proc = run_cli("debug", "-p", "cuda-sync", "-s", str(exits), "--run", "--json")
    assert proc.returncode == 7
    assert json.loads(proc.stdout)["run"]["exit_code"] == 7


@pytest.mark.slow
def test_timeout_stops_the_run(run_cli: RunCli, cache: Path, tmp_path: Path) -> None:
    target = write(tmp_path / "slow.py", "import time\ntime.sleep(60)\n")
    proc = run_cli("debug", "-p", "cuda-sync", "-s", str(target), "--run", "--timeout", "1")
    assert proc.returncode == 124
    assert "TIMEOUT" in proc.stdout


@pytest.mark.slow
def test_child_environment_has_no_token(run_cli: RunCli, cache: Path, tmp_path: Path) -> None:
    target = write(
        tmp_path / "env.py",
        "import os\nprint(sorted(k for k in os.environ if 'TOKEN' in k or 'SECRET' in k))\n"
        "print('CUDA_LAUNCH_BLOCKING=' + os.environ['CUDA_LAUNCH_BLOCKING'])\n",
    )
    secrets = {"GH_TOKEN": "ghp_notreal123", "MY_API_SECRET_X": "s3cr3t", "CI_JOB_TOKEN": "t0k"}
    proc = run_cli("debug", "-p", "cuda-sync", "-s", str(target), "--run", env=secrets)
    assert proc.returncode == 0, proc.stderr
    log = (tmp_path / "debug_issue.log").read_text()
    assert "[]" in log and "CUDA_LAUNCH_BLOCKING=1" in log
    written = run_cli("debug", "-p", "cuda-sync", "-s", str(target), "-o", "-", env=secrets)
    for value in secrets.values():
        assert value not in log + proc.stdout + proc.stderr + written.stdout


def test_run_without_torch_fails_clearly(run_cli: RunCli, bare_python: str, tmp_path: Path) -> None:
    target = write(tmp_path / "prog.py", "print('hi')\n")
    proc = run_cli(
        "debug", "-p", "graph-breaks", "-s", str(target), "--python", bare_python, "--run"
    )
    assert proc.returncode == 2
    assert "cannot run: torch is not importable" in proc.stderr
    assert "bundled with contribkit" in proc.stderr
    assert not (tmp_path / "debug_issue.log").exists()
    # Writing the script still works, with names checked against the bundled list.
    wrote = run_cli("debug", "-p", "graph-breaks", "-s", str(target), "--python", bare_python)
    assert wrote.returncode == 0, wrote.stderr
    assert "list bundled with contribkit" in (tmp_path / "debug_issue.sh").read_text()


@pytest.mark.slow
def test_run_gives_a_repro_a_device_that_is_here(
    run_cli: RunCli, cache: Path, tmp_path: Path
) -> None:
    # A repro rewritten for CUDA defaults to cuda; on a machine without one, debug --run passes
    # --device cpu and says so, instead of ending CANNOT_RUN "device cuda is not available".
    target = write(
        tmp_path / "repro.py",
        repro_script("import torch\nx = torch.ones(2, device=repro.device)\n", None, "cuda"),
    )
    proc = run_cli("debug", "-p", "graph-breaks", "-s", str(target), "--run")
    assert "the repro runs with --device cpu (no CUDA device here)" in proc.stderr
    assert "-- --device NAME" in proc.stderr
    assert "device cuda is not available" not in proc.stdout + proc.stderr
    # an explicit choice is kept
    proc = run_cli(
        "debug", "-p", "graph-breaks", "-s", str(target), "--run", "--", "--device", "cuda"
    )
    assert "the repro runs with" not in proc.stderr


@pytest.mark.slow
def test_ablation_of_a_script_without_torch_compile_says_so(
    run_cli: RunCli, cache: Path, tmp_path: Path
) -> None:
    target = write(
        tmp_path / "plain.py", "import torch\n\ntorch.zeros(2, dtype=torch.long).add_(0.5)\n"
    )
    proc = run_cli("debug", "-p", "ablation", "-s", str(target), "--run")
    assert proc.returncode == 1, proc.stderr
    assert "the script never called torch.compile: the 4 backends ran the same" in proc.stdout
    rows = [line for line in proc.stdout.splitlines() if line.split()[:1] == ["eager"]]
    assert len(rows) == 1 and not re.search(r"^(aot_eager|inductor)\b", proc.stdout, re.M)
    assert "it fails without torch.compile" in proc.stdout
    as_json = json.loads(
        run_cli("debug", "-p", "ablation", "-s", str(target), "--run", "--json", "--force").stdout
    )
    assert [r["compile_calls"] for r in as_json["ablation"]] == [0, 0, 0, 0]  # JSON keeps all
