"""`contribkit bench`: the statistics, the record, the baseline worktree (real git), and the
command on real CPU torch: a record for a statement, a deliberate slowdown flagged against
``HEAD~1``, a no-op change read as no change, the worktree gone after Ctrl-C, and `pr`'s
Performance section only for a record of HEAD."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from contribkit.bench import stats
from contribkit.bench.measure import BASELINE, CANDIDATE, Side, schedule
from contribkit.bench.record import (
    BenchEnvironment,
    BenchRecord,
    BenchResult,
    bench_for_head,
    markdown_table,
    measured_on,
    parse_bench_record,
    write_bench_record,
)
from contribkit.bench.session import (
    BenchRequest,
    check_timer,
    command_line,
    load_note,
    parse_devices,
    parse_target,
    unit_for,
)
from contribkit.bench.worktree import baseline_tree
from contribkit.core.errors import BadInput
from tests.conftest import RunCli, commit_files, git, make_fork

FAST = ("--min-time", "0.02")
WORK = "def work():\n    return sum(range(50))\n"


# -- statistics --------------------------------------------------------------------------------
def test_signed_rank_null_distribution() -> None:
    for n in range(1, 12):
        counts = stats.signed_rank_counts(n)
        assert sum(counts) == 2**n
        assert len(counts) == n * (n + 1) // 2 + 1
        assert counts == counts[::-1]  # symmetric about n(n+1)/4
    assert stats.signed_rank_counts(3) == [1, 1, 1, 2, 1, 1, 1]


def test_interval_needs_enough_pairs() -> None:
    # at 99%, 2/2**n <= 1% first holds for n = 8; at 95%, 2/2**n <= 5% for n = 6
    assert stats.min_pairs(0.99) == 8
    assert stats.min_pairs(0.95) == 6
    assert stats.interval_index(7, 0.99) is None
    assert stats.interval_index(8, 0.99) == 1
    # n = 10: P(W+ <= 3) = 5/1024 <= 0.005 < P(W+ <= 4) = 7/1024, so k = 4 (as R's table)
    assert stats.interval_index(10, 0.99) == 4


def test_change_verdicts() -> None:
    base = [1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 1.03, 0.97, 1.0, 1.01]
    slower = stats.change(base, [b * 1.5 for b in base], 0.99)
    assert slower.verdict == stats.SLOWER and slower.significant
    assert math.isclose(slower.ratio, 1.5) and slower.low is not None
    assert slower.low <= 1.5 <= (slower.high or 0)
    faster = stats.change(base, [b * 0.8 for b in base], 0.99)
    assert faster.verdict == stats.FASTER
    # the same numbers in another order: pairs disagree in sign, the interval holds 1
    same = stats.change(base, base[3:] + base[:3], 0.99)
    assert same.verdict == stats.SAME and not same.significant
    assert same.low is not None and same.low < 1 < (same.high or 0)
    few = stats.change(base[:5], [b * 2 for b in base[:5]], 0.99)
    assert (few.verdict, few.low, few.high) == (stats.TOO_FEW, None, None)
    assert math.isclose(few.ratio, 2.0)


def test_spread_is_median_and_iqr() -> None:
    s = stats.spread([1.0, 2.0, 3.0, 4.0, 5.0])
    assert (s.median, s.iqr, s.runs) == (3.0, 2.0, 5)
    assert stats.spread([7.0]) == stats.Spread(7.0, 0.0, 1)


def test_blocks_alternate_in_pairs() -> None:
    a = Side(BASELINE, "py", Path("/a"), "a")
    b = Side(CANDIDATE, "py", Path("/b"), "b")
    order = [s.label for s in schedule([a, b], 3)]
    assert order == [BASELINE, CANDIDATE, CANDIDATE, BASELINE, BASELINE, CANDIDATE]
    assert [s.label for s in schedule([b], 2)] == [CANDIDATE, CANDIDATE]


def test_units_follow_the_smallest_time() -> None:
    assert unit_for([2e-6, 1.0]) == ("us", 1e-6)
    assert unit_for([5e-10]) == ("ns", 1e-9)
    assert unit_for([0.5]) == ("ms", 1e-3)
    assert unit_for([3.0]) == ("s", 1.0)


# -- inputs ------------------------------------------------------------------------------------
def test_targets_and_devices(tmp_path: Path) -> None:
    assert parse_target("torch.relu(x)", "x = torch.ones(3)") == ("torch.relu(x)", None)
    file = tmp_path / "b.py"
    file.write_text("")
    assert parse_target(str(file), "pass") == (None, file.resolve())
    with pytest.raises(BadInput, match=r"no such file: missing\.py"):
        parse_target("missing.py", "pass")
    with pytest.raises(BadInput, match="the statement is not valid Python"):
        parse_target("torch.relu(x", "pass")
    with pytest.raises(BadInput, match="the --setup is not valid Python"):
        parse_target("f()", "x = = 1")
    assert parse_devices("cpu, cuda,cpu") == ("cpu", "cuda")
    with pytest.raises(BadInput, match="unknown device mps"):
        parse_devices("cpu,mps")


def test_the_cpu_timer_is_for_cpu_devices_and_named_in_the_command() -> None:
    check_timer("cpu", ("cpu",))
    check_timer("wall", ("cpu", "cuda"))
    with pytest.raises(BadInput, match="--timer cpu cannot time cuda"):
        check_timer("cpu", ("cpu", "cuda"))
    request = BenchRequest("f(x)", baseline="HEAD~1", timer="cpu")
    assert command_line(request) == "contribkit bench 'f(x)' --baseline 'HEAD~1' --timer cpu"
    assert "--timer" not in command_line(BenchRequest("f(x)"))


def test_a_loaded_machine_suggests_the_cpu_timer_for_wall_times_of_cpu_work() -> None:
    note = load_note("wall", ("cpu",), 9.34, 2)
    assert note is not None
    assert note.startswith("the machine was loaded (load average 9.3 on 2 CPUs): ")
    assert note.endswith("--timer cpu counts only the CPU time the benchmark used")
    assert load_note("wall", ("cpu",), 2.0, 2) is None  # every runnable process had a CPU
    assert load_note("wall", ("cpu",), None, 2) is None  # no load average on this system
    assert load_note("cpu", ("cpu",), 9.3, 2) is None  # already CPU time
    assert load_note("wall", ("cpu", "cuda"), 9.3, 2) is None  # a GPU's time is wall time


# -- the record --------------------------------------------------------------------------------
def record_for(head: str, baseline: str | None = "HEAD~1 (abc1234)") -> BenchRecord:
    return BenchRecord(
        head=head,
        baseline=baseline,
        command="contribkit bench 'f(x)' --baseline HEAD~1",
        device="cpu",
        unit="us",
        results=(
            BenchResult(
                "f(x) | g",
                baseline=10.0,
                candidate=15.0,
                device="cpu",
                baseline_iqr=0.5,
                candidate_iqr=0.75,
                ratio=1.5,
                low=1.45,
                high=1.56,
                verdict=stats.SLOWER,
                threads=1,
            ),
        ),
        blocks=10,
        min_run_time=0.2,
        confidence=0.99,
        environment=BenchEnvironment("x86_64, 2 CPUs, Linux", "2.13.0+cpu", "/venv/bin/python"),
    )


def test_record_round_trip_and_table(tmp_path: Path) -> None:
    head = "a" * 40
    record = record_for(head)
    path = write_bench_record(tmp_path, record)
    assert path.parent == tmp_path / ".contribkit" / "bench" and path.name.endswith("-aaaaaaa.json")
    assert parse_bench_record(json.loads(path.read_text())) == record
    assert bench_for_head(tmp_path, head) == ((path, record), [])
    assert bench_for_head(tmp_path, "b" * 40) == (None, [])
    assert markdown_table(record) == (
        "| benchmark | device | threads | baseline (us, wall time) | this PR (us, wall time) "
        "| ratio (99% CI) | verdict |\n"
        "|---|---|---|---|---|---|---|\n"
        "| f(x) \\| g | cpu | 1 | 10 ± 0.5 | 15 ± 0.75 | 1.500x (1.450-1.560) | slower |"
    )
    alone = record_for(head, baseline=None)
    assert markdown_table(alone).splitlines()[0] == (
        "| benchmark | device | threads | median (us, wall time) | IQR (us, wall time) |"
    )
    assert measured_on(record)[3].startswith("timer: wall clock")
    cpu = replace(record, timer="cpu")
    assert parse_bench_record(json.loads(write_bench_record(tmp_path, cpu).read_text())) == cpu
    assert "| baseline (us, CPU time) | this PR (us, CPU time) |" in markdown_table(cpu)
    assert measured_on(cpu)[3].startswith("timer: CPU time of the measuring process, all its")
    data = json.loads(path.read_text())
    del data["timer"]  # a record from before --timer was timed by the wall clock
    assert parse_bench_record(data).timer == "wall"
    with pytest.raises(ValueError, match="timer 'gpu', expected one of wall, cpu"):
        parse_bench_record({**data, "timer": "gpu"})
    data["results"][0]["ratio"] = "fast"
    with pytest.raises(ValueError, match=r"results\[0\].ratio is not a number"):
        parse_bench_record(data)


# -- the baseline worktree (real git) ----------------------------------------------------------
def repo_with_package(tmp_path: Path) -> Path:
    root = make_fork(tmp_path / "repo")
    commit_files(
        root,
        {
            ".gitignore": "*.so\n/pkg/version.py\n",
            "pkg/__init__.py": "",
            "pkg/core.cpp": "int a;\n",
        },
        "add pkg",
    )
    (root / "pkg" / "_ext.so").write_text("built")
    (root / "pkg" / "version.py").write_text("v = 1\n")
    commit_files(root, {"pkg/core.cpp": "int b;\n", "pkg/mod.py": "X = 2\n"}, "change")
    return root


def test_worktree_at_rev_links_build_outputs_and_goes(tmp_path: Path) -> None:
    root = repo_with_package(tmp_path)
    with baseline_tree(root, "HEAD~1") as tree:
        assert tree.sha == git("rev-parse", "HEAD~1", cwd=root)
        assert not (tree.path / "pkg" / "mod.py").exists()  # the baseline's files
        assert (tree.path / "pkg" / "_ext.so").read_text() == "built"  # the checkout's build
        assert sorted(tree.linked) == ["pkg/_ext.so", "pkg/version.py"]
        assert tree.compiled_changes == ("pkg/core.cpp",)
        assert str(tree.path) in git("worktree", "list", cwd=root)
        folder = tree.path.parent
    assert not folder.exists()
    assert git("worktree", "list", "--porcelain", cwd=root).count("worktree ") == 1


def test_worktree_goes_on_errors_and_bad_revs_are_bad_input(tmp_path: Path) -> None:
    root = repo_with_package(tmp_path)
    with pytest.raises(RuntimeError), baseline_tree(root, "HEAD~1") as tree:
        raise RuntimeError("boom")
    assert not tree.path.parent.exists()
    assert git("worktree", "list", "--porcelain", cwd=root).count("worktree ") == 1
    for rev in ("no-such-branch", "--all"):
        with pytest.raises(BadInput, match=r"no such commit|is not a revision"):
            baseline_tree(root, rev).__enter__()


def test_bad_options_are_one_line_errors(run_cli: RunCli, tmp_path: Path) -> None:
    root = repo_with_package(tmp_path)
    cases = {
        ("f()", "--baseline", "nope"): "contribkit: error: --baseline nope: no such commit\n",
        ("f()", "--baseline", "HEAD", "--baseline-python", sys.executable): (
            "contribkit: error: --baseline and --baseline-python cannot be combined\n"
        ),
        ("f(",): "contribkit: error: the statement is not valid Python: '(' was never closed",
        ("f()", "--devices", "tpu"): "contribkit: error: --devices 'tpu': unknown device tpu\n",
        ("f()", "--timer", "gpu"): (
            "contribkit: error: Invalid value for '--timer': 'gpu' is not one of 'wall', 'cpu'.\n"
            "hint: see 'contribkit bench --help'\n"
        ),
        ("f()", "--timer", "cpu", "--devices", "cpu,cuda"): (
            "contribkit: error: --timer cpu cannot time cuda: the GPU's work is not this "
            "process's CPU time\n"
        ),
    }
    for args, first in cases.items():
        proc = run_cli("bench", *args, cwd=root)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(first), proc.stderr
        assert "Traceback" not in proc.stderr
    assert git("worktree", "list", "--porcelain", cwd=root).count("worktree ") == 1


def test_an_interpreter_without_torch_is_named(
    run_cli: RunCli, tmp_path: Path, bare_python: str
) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    git("init", "-q", cwd=root)
    commit_files(root, {"work.py": WORK}, "add work")
    proc = run_cli("bench", "f()", "--python", bare_python, "--blocks", "1", cwd=root)
    assert proc.returncode == 2, proc.stderr
    short = git("rev-parse", "--short=7", "HEAD", cwd=root)
    assert proc.stderr.splitlines()[-2:-1] == [
        f"contribkit: error: candidate (HEAD {short}) failed: cannot import torch: "
        "ModuleNotFoundError: No module named 'torch'"
    ], proc.stderr
    assert not (root / ".contribkit" / "bench").exists()
    # A tree whose torch/ package is not a built torch (a checkout never built) shadows the
    # interpreter's own
    fork = make_fork(tmp_path / "fork")
    (fork / "torch" / "__init__.py").write_text("")
    proc = run_cli("bench", "f()", "--blocks", "1", cwd=fork)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-2:] == [
        f"contribkit: error: candidate (HEAD {git('rev-parse', '--short=7', 'HEAD', cwd=fork)} with uncommitted changes) "
        f"failed: import torch found {fork / 'torch'}, which is not a built torch",
        "hint: build torch in this tree (pip install -e . or tools/nightly.py), or bench from "
        "another folder",
    ], proc.stderr


# -- real torch --------------------------------------------------------------------------------
def slow_repo(tmp_path: Path, second: str) -> Path:
    """A repo whose HEAD~1 has ``slowmod.work`` fast and whose HEAD has ``second`` instead."""
    root = make_fork(tmp_path / "repo")
    commit_files(root, {"slowmod.py": WORK}, "add slowmod")
    commit_files(root, {"slowmod.py": second}, "change slowmod")
    return root


def bench_json(run_cli: RunCli, root: Path, *args: str) -> dict[str, object]:
    proc = run_cli("bench", *args, "--json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert "measuring" not in proc.stderr  # no progress with --json
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    return data


@pytest.mark.slow
def test_a_statement_writes_a_record(run_cli: RunCli, tmp_path: Path) -> None:
    import torch

    root = slow_repo(tmp_path, "# v2\n" + WORK)
    data = bench_json(
        run_cli, root, "x.sum()", "--setup", "x = torch.ones(64)", "--blocks", "2", *FAST
    )
    head = git("rev-parse", "HEAD", cwd=root)
    path = root / str(data["record_path"])
    record = parse_bench_record(json.loads(path.read_text()))
    assert (record.head, record.baseline, record.blocks, record.dirty) == (head, None, 2, False)
    (result,) = record.results
    assert (result.name, result.device, result.threads, result.ratio) == ("x.sum()", "cpu", 1, None)
    assert result.candidate > 0 and result.candidate_iqr is not None
    assert record.environment is not None and record.environment.torch == torch.__version__
    assert record.command == "contribkit bench 'x.sum()' --setup 'x = torch.ones(64)'"
    assert git("status", "--porcelain", cwd=root) == ""  # .contribkit/ is excluded


@pytest.mark.slow
def test_a_deliberate_slowdown_is_flagged(run_cli: RunCli, tmp_path: Path) -> None:
    slow = "import time\n\n\ndef work():\n    time.sleep(0.001)\n    return sum(range(50))\n"
    root = slow_repo(tmp_path, slow)
    args = ("slowmod.work()", "--setup", "import slowmod", "--baseline", "HEAD~1", "--blocks", "8")
    proc = run_cli("bench", *args, *FAST, cwd=root)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    sha = git("rev-parse", "--short=7", "HEAD~1", cwd=root)
    assert (
        lines[0]
        == f"contribkit bench at {git('rev-parse', '--short=7', 'HEAD', cwd=root)} against HEAD~1 ({sha})"
    )
    row = next(line for line in lines if line.startswith("slowmod.work()"))
    assert row.endswith("slower")
    flagged = [line for line in lines if line.startswith("SLOWER: slowmod.work() on cpu, ")]
    assert len(flagged) == 1, proc.stdout
    assert lines[-1].startswith("record: .contribkit/bench/")
    record = parse_bench_record(json.loads((root / lines[-1].split(": ")[1]).read_text()))
    (result,) = record.results
    assert result.ratio is not None and result.ratio > 1 and (result.low or 0) > 1
    assert result.verdict == stats.SLOWER
    assert git("worktree", "list", "--porcelain", cwd=root).count("worktree ") == 1


@pytest.mark.slow
def test_a_no_op_change_reads_no_significant_change(run_cli: RunCli, tmp_path: Path) -> None:
    root = slow_repo(tmp_path, "# a comment changed\n" + WORK)
    args = ("slowmod.work()", "--setup", "import slowmod", "--baseline", "HEAD~1", "--blocks", "8")
    data = bench_json(run_cli, root, *args, *FAST)
    results = data["results"]
    assert isinstance(results, list) and len(results) == 1
    result = results[0]
    if result["verdict"] != stats.SAME:
        # A 99% interval calls a no-op significant in 1 run of 100 by design: a second,
        # independent measurement must not (both by chance: 1 in 10,000).
        again = bench_json(run_cli, root, *args, *FAST)["results"]
        assert isinstance(again, list) and len(again) == 1
        result = again[0]
    assert result["verdict"] == stats.SAME, result
    assert result["low"] <= 1 <= result["high"]
    assert git("worktree", "list", "--porcelain", cwd=root).count("worktree ") == 1


# A slower commit that only computes more (1,000 times the additions, no sleep, no I/O): the
# kind of slowdown CPU time sees, as wall time does.
MORE_WORK = "def work():\n    return sum(range(50_000))\n"
CPU_ARGS = ("slowmod.work()", "--setup", "import slowmod", "--baseline", "HEAD~1", "--blocks", "8")


@pytest.mark.slow
def test_the_cpu_timer_flags_more_work_and_names_itself(run_cli: RunCli, tmp_path: Path) -> None:
    root = slow_repo(tmp_path, MORE_WORK)
    proc = run_cli("bench", *CPU_ARGS, "--timer", "cpu", *FAST, cwd=root)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1].count(", CPU time)") == 2, lines[1]  # baseline (us, CPU time), this tree
    row = next(line for line in lines if line.startswith("slowmod.work()"))
    assert row.endswith("slower"), proc.stdout
    assert any(line.startswith("SLOWER: slowmod.work() on cpu, ") for line in lines)
    assert any(line.startswith("timer: CPU time of the measuring process") for line in lines)
    assert not any("the machine was loaded" in line for line in lines)  # no wall times here
    record = parse_bench_record(json.loads((root / lines[-1].split(": ")[1]).read_text()))
    assert record.timer == "cpu" and record.command.endswith(" --timer cpu")
    (result,) = record.results
    assert result.ratio is not None and result.ratio > 1 and (result.low or 0) > 1
    assert result.verdict == stats.SLOWER
    assert git("worktree", "list", "--porcelain", cwd=root).count("worktree ") == 1


@pytest.mark.slow
def test_the_cpu_timer_reads_a_no_op_as_no_significant_change(
    run_cli: RunCli, tmp_path: Path
) -> None:
    root = slow_repo(tmp_path, "# a comment changed\n" + WORK)
    args = (*CPU_ARGS, "--timer", "cpu", *FAST)
    data = bench_json(run_cli, root, *args)
    assert data["timer"] == "cpu"
    results = data["results"]
    assert isinstance(results, list) and len(results) == 1
    result = results[0]
    if result["verdict"] != stats.SAME:
        # 1 run in 100 by design at 99%; a second, independent one must not (1 in 10,000)
        again = bench_json(run_cli, root, *args)["results"]
        assert isinstance(again, list) and len(again) == 1
        result = again[0]
    assert result["verdict"] == stats.SAME, result
    assert result["low"] <= 1 <= result["high"]


@pytest.mark.slow
def test_the_worktree_goes_after_ctrl_c(tmp_path: Path) -> None:
    root = slow_repo(tmp_path, "# v2\n" + WORK)
    proc = subprocess.Popen(
        [sys.executable, "-m", "contribkit", "bench", "slowmod.work()", "--setup",
         "import slowmod", "--baseline", "HEAD~1", "--min-time", "2"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    listed = ""
    while time.monotonic() < deadline:
        listed = git("worktree", "list", "--porcelain", cwd=root)
        if listed.count("worktree ") == 2:
            break
        time.sleep(0.1)
    assert listed.count("worktree ") == 2, "the baseline worktree never appeared"
    tree = Path(listed.split("worktree ")[2].splitlines()[0])
    time.sleep(1.0)  # a block is under way
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.endswith("contribkit: error: interrupted\n")
    assert git("worktree", "list", "--porcelain", cwd=root).count("worktree ") == 1
    assert not tree.exists() and not tree.parent.exists()
    assert not (root / ".contribkit" / "bench").exists()  # nothing half-done recorded


@pytest.mark.slow
def test_a_file_of_benchmarks_gives_one_table(run_cli: RunCli, tmp_path: Path) -> None:
    root = slow_repo(tmp_path, "# v2\n" + WORK)
    (root / "benches.py").write_text(
        "import torch\n"
        "from torch.utils.benchmark import Timer\n\n"
        "import slowmod\n\n"
        "relu = Timer('torch.relu(x)', setup='x = torch.randn(256)', globals={'torch': torch},\n"
        "             label='relu', sub_label='256')\n\n\n"
        "def bench_work(benchmark):\n"
        "    assert benchmark(slowmod.work) == sum(range(50))\n\n\n"
        "def test_add(benchmark, device):\n"
        "    x = torch.ones(8, device=device)\n"
        "    assert benchmark.pedantic(torch.add, args=(x, x)).sum().item() == 16\n\n\n"
        "def helper(benchmark):  # not a benchmark: the name says so\n"
        "    raise AssertionError\n"
    )
    data = bench_json(run_cli, root, "benches.py", "--blocks", "1", *FAST)
    rows = [(r["name"], r["device"]) for r in data["results"]]  # type: ignore[attr-defined]
    assert rows == [("relu / 256", "cpu"), ("bench_work", "cpu"), ("test_add", "cpu")]
    assert data["dirty"] is True  # benches.py is not committed
    # The CPU clock times the same benchmarks: a file's Timer is remade with it, labels kept
    timed = bench_json(run_cli, root, "benches.py", "--blocks", "1", "--timer", "cpu", *FAST)
    assert [(r["name"], r["device"]) for r in timed["results"]] == rows  # type: ignore[attr-defined]
    assert timed["timer"] == "cpu"
    cpp = root / "cpp.py"
    cpp.write_text(
        "from torch.utils.benchmark import Timer\n\nt = Timer('int x = 1;', language='c++')\n"
    )
    proc = run_cli("bench", str(cpp), "--blocks", "1", "--timer", "cpu", *FAST, cwd=root)
    assert proc.returncode == 2, proc.stderr
    assert (
        "failed: cpu: ValueError: t is a C++ Timer, timed by its own wall clock: use --timer wall\n"
        in proc.stderr
    ), proc.stderr
    broken = root / "broken.py"
    broken.write_text("def bench_x(benchmark):\n    raise ValueError('no input')\n")
    proc = run_cli("bench", str(broken), "--blocks", "1", *FAST, cwd=root)
    assert proc.returncode == 2
    assert (
        proc.stderr.startswith("contribkit: error: candidate (HEAD ")
        and "failed: cpu: ValueError: no input\n" in proc.stderr
    )


@pytest.mark.slow
def test_pr_shows_the_table_only_for_a_record_of_head(run_cli: RunCli, tmp_path: Path) -> None:
    root = slow_repo(tmp_path, "# v2\n" + WORK)
    git("checkout", "-q", "-b", "perf/faster-work", cwd=root)
    commit_files(root, {"slowmod.py": "# faster\n" + WORK}, "Make work faster")
    assert "## Performance" not in run_cli("pr", "--offline", cwd=root).stdout
    args = ("slowmod.work()", "--setup", "import slowmod", "--baseline", "HEAD~1")
    proc = run_cli("bench", *args, "--blocks", "2", *FAST, cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert "2 blocks per side cannot show a change at 99% confidence" in proc.stderr
    body = run_cli("pr", "--offline", cwd=root)
    assert body.returncode == 0, body.stderr
    section = body.stdout.split("## Performance\n\n", 1)[1].split("\n\n")
    sha = git("rev-parse", "--short=7", "HEAD~1", cwd=root)
    assert section[0] == (
        "`contribkit bench 'slowmod.work()' --setup 'import slowmod' --baseline 'HEAD~1'` on "
        f"cpu, against HEAD~1 ({sha}):"
    )
    table = section[1].splitlines()
    assert table[0].startswith("| benchmark | device | threads | baseline (")
    assert table[2].startswith("| slowmod.work() | cpu | 1 | ")
    assert table[2].endswith(f"| {stats.TOO_FEW} |")
    facts = section[2].splitlines()
    assert facts[0].startswith("- machine: ") and facts[1].startswith("- torch ")
    commit_files(root, {"slowmod.py": "# faster still\n" + WORK}, "Make work faster still")
    assert "## Performance" not in run_cli("pr", "--offline", cwd=root).stdout
