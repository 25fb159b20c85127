"""The user's oracle in one flag (``contribkit repro N --expect KIND``), end to end: our own
issues (tests/expectfixtures.py) in a broken and a fixed variant, through ``repro --expect``, the
script's verdict line, ``contribkit run``, ``test --from-repro`` and the written test under pytest
(it fails on the broken variant for the oracle's reason, and passes on the fixed one); bad values;
changing only the oracle of a folder already written; the hint of an abstention."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contribkit.core.errors import BadInput
from contribkit.target.reproexpect import EXPECT_USAGE, judge_pair, parse_expect
from contribkit.testgen.oracles import quoted_output_body
from tests.conftest import RunCli
from tests.expectfixtures import (
    BREAK_CODE,
    CANCEL_CODE,
    CANCEL_OUTPUT,
    CASES,
    DEVICE_CODE,
    INDEX_CODE,
    issue,
)
from tests.testgen.test_test_command import pytest_file


def write_issue(fork: Path, data: dict[str, Any]) -> Path:
    path = fork.parent / f"issue-{data['number']}.json"
    path.write_text(json.dumps(data))
    return path


def make(run_cli: RunCli, fork: Path, data: dict[str, Any], *extra: str) -> Path:
    out = fork / "repros" / f"issue-{data['number']}"
    made = run_cli(
        "repro", "--from-file", str(write_issue(fork, data)), "-o", str(out), *extra, cwd=fork
    )
    assert made.returncode == 0, made.stderr
    return out


def verdict_line(folder: Path, *args: str) -> str:
    ran = subprocess.run(
        [sys.executable, "repro.py", *args], capture_output=True, text=True, cwd=folder, timeout=600
    )
    return ran.stdout.strip().splitlines()[-1]


# -- the values ----------------------------------------------------------------------------------
def test_every_kind_parses_and_bad_values_name_the_kinds() -> None:
    assert parse_expect("error") == ("error", "")
    assert parse_expect("error:index 5 is out") == ("error", "index 5 is out")
    assert parse_expect("output:a:b") == ("output", "a:b")
    assert parse_expect("recompiles") == ("recompiles", "0")
    assert parse_expect("graph-breaks:2") == ("graph-breaks", "2")
    for kind in ("no-error", "compile-vs-eager", "device-vs-cpu", "determinism", "crash"):
        assert parse_expect(kind) == (kind, "")
    for bad, said in (
        ("bogus", EXPECT_USAGE),
        ("output", "needs the text"),
        ("output:", "needs the text"),
        ("crash:now", "takes no ':' argument"),
        ("recompiles:two", "whole number"),
        ("error:a\nb", "one line"),
    ):
        with pytest.raises(ValueError, match=None) as caught:
            parse_expect(bad)
        assert said in str(caught.value), bad


def test_a_bad_value_is_one_line_and_exit_2(fork_repo: Path, run_cli: RunCli) -> None:
    data = issue(9801, "indexing", INDEX_CODE.format(index=5))
    before = sorted(fork_repo.rglob("*"))
    refused = run_cli(
        "repro", "--from-file", str(write_issue(fork_repo, data)), "--expect", "segv", cwd=fork_repo
    )
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert (
        lines[0] == f"contribkit: error: --expect: unknown oracle 'segv': use one of {EXPECT_USAGE}"
    )
    assert len(lines) == 2 and lines[1].startswith("hint: ")
    assert sorted(fork_repo.rglob("*")) == before  # nothing written
    run = run_cli("run", "repros", "--oracle", "output", cwd=fork_repo)
    assert run.returncode == 2
    assert run.stderr.startswith("contribkit: error: --oracle: output needs the text")
    assert "Traceback" not in run.stderr + refused.stderr


def test_two_runs_are_judged_by_what_they_printed_and_raised() -> None:
    def run(outcome: str, lines: list[str], detail: str = "", frames: int = 1) -> dict[str, Any]:
        return {"outcome": outcome, "detail": detail, "lines": lines, "frames": frames}

    names = ("eager", "compiled")
    same = judge_pair(
        "compile-vs-eager",
        [run("completed", ["tensor([1.0000])"], frames=0), run("completed", ["tensor([1.00001])"])],
        names,
    )
    assert same[0] == "NOT_REPRODUCED"  # float32 noise is no difference
    differ = judge_pair(
        "compile-vs-eager",
        [run("completed", ["tensor([1.])"], frames=0), run("completed", ["tensor([2.])"])],
        names,
    )
    assert differ == ("REPRODUCED", "line 1: eager printed 'tensor([1.])', compiled 'tensor([2.])'")
    one_raises = judge_pair(
        "compile-vs-eager",
        [run("completed", ["1"], frames=0), run("raised", [], "RuntimeError: boom")],
        names,
    )
    assert one_raises[0] == "REPRODUCED" and "compiled raises RuntimeError: boom" in one_raises[1]
    both = judge_pair(
        "compile-vs-eager", [run("raised", [], "E: x", frames=0), run("raised", [], "E: x")], names
    )
    assert both[0] == "CANNOT_RUN"
    nothing_compiled = judge_pair(
        "compile-vs-eager",
        [run("completed", ["1"], frames=0), run("completed", ["1"], frames=0)],
        names,
    )
    assert nothing_compiled[0] == "CANNOT_RUN" and "compiled nothing" in nothing_compiled[1]
    no_values = judge_pair(
        "device-vs-cpu", [run("completed", ["done"]), run("completed", ["done"])], ("cpu", "cuda")
    )
    assert no_values[0] == "CANNOT_RUN"


# -- only the oracle of a folder already written changes -----------------------------------------
def test_expect_on_an_existing_folder_changes_only_the_oracle(
    fork_repo: Path, run_cli: RunCli
) -> None:
    data = issue(9802, "indexing", INDEX_CODE.format(index=5))
    out = make(run_cli, fork_repo, data)
    script = (out / "repro.py").read_text()
    meta = json.loads((out / "meta.json").read_text())
    assert meta["expect"] is None and "expect=None," in script
    source = str(write_issue(fork_repo, data))
    dry = run_cli(
        "repro",
        "--from-file",
        source,
        "-o",
        str(out),
        "--expect",
        "error:out of bounds",
        "-n",
        cwd=fork_repo,
    )
    assert dry.returncode == 0 and "would set the oracle" in dry.stdout
    assert (out / "repro.py").read_text() == script
    changed = run_cli(
        "repro",
        "--from-file",
        source,
        "-o",
        str(out),
        "--expect",
        "error:out of bounds",
        cwd=fork_repo,
    )
    assert changed.returncode == 0, changed.stderr
    assert "set the oracle of" in changed.stdout and "was:        auto" in changed.stdout
    new_script = (out / "repro.py").read_text()
    new_meta = json.loads((out / "meta.json").read_text())
    assert new_meta["expect"] == "error:out of bounds"
    assert new_meta["expect_means"].startswith("error:out of bounds (stated with --expect)")
    assert {k: v for k, v in new_meta.items() if not k.startswith("expect")} == {
        k: v for k, v in meta.items() if not k.startswith("expect")
    }
    old_lines, new_lines = script.splitlines(), new_script.splitlines()
    assert len(old_lines) == len(new_lines)
    differ = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
    assert [b for _, b in differ] == [
        "  Oracle:    " + new_meta["expect_means"],
        "    expect='error:out of bounds',"
        if "'" in differ[1][1]
        else '    expect="error:out of bounds",',
    ]
    back = run_cli(
        "repro", "--from-file", source, "-o", str(out), "--expect", "auto", cwd=fork_repo
    )
    assert back.returncode == 0 and (out / "repro.py").read_text() == script
    (out / "repro.py").write_text(script.replace("    expect=None,\n", ""))  # an older script
    old = run_cli(
        "repro", "--from-file", source, "-o", str(out), "--expect", "no-error", cwd=fork_repo
    )
    assert old.returncode == 2 and "has no oracle line to change" in old.stderr
    assert "--force" in old.stderr


@pytest.mark.slow
def test_an_abstention_names_the_expect_that_decides(fork_repo: Path, run_cli: RunCli) -> None:
    out = make(run_cli, fork_repo, issue(9803, "indexing", INDEX_CODE.format(index=5)))
    line = verdict_line(out)
    assert line.startswith("contribkit-verdict: CANNOT_RUN error, and the issue gives no signature")
    suggested = line.split("if that error is the bug: --expect ", 1)[1]
    assert suggested == "'error:index 5 is out of bounds for dimension 0 with size 3'"
    decided = verdict_line(out, "--expect", suggested.strip("'"))
    assert decided.startswith("contribkit-verdict: REPRODUCED [expect:error] raises IndexError")
    assert verdict_line(out, "--expect", "auto") == line  # the inferred oracles again


# -- every kind, end to end ----------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("kind", list(CASES))
def test_each_kind_through_repro_run_and_test(kind: str, fork_repo: Path, run_cli: RunCli) -> None:
    value, title, broken_code, fixed_code = CASES[kind]
    number = 9900 + 2 * list(CASES).index(kind)
    folders = [
        make(run_cli, fork_repo, issue(number + i, title, code), "--expect", value)
        for i, code in enumerate((broken_code, fixed_code))
    ]
    for folder in folders:
        meta = json.loads((folder / "meta.json").read_text())
        assert meta["expect"] == value
        assert f"  Oracle:    {value} (stated with --expect)" in (folder / "repro.py").read_text()
    ran = run_cli("run", *map(str, folders), "--devices", "cpu", "--json", cwd=fork_repo)
    cells = {Path(c["file"]).parent.name: c for c in json.loads(ran.stdout)["cells"]}
    broken, fixed = (cells[f.name] for f in folders)
    assert broken["verdict"] == "REPRODUCED", broken
    assert fixed["verdict"] == "NOT_REPRODUCED", fixed
    assert broken["detail"].startswith(f"[expect:{kind}] ") and fixed["detail"].startswith(
        f"[expect:{kind}] "
    )
    tests = []
    for folder in folders:
        rel = f"test/test_{folder.name.replace('-', '_')}.py"
        wrote = run_cli("test", "--from-repro", str(folder), "--path", rel, "--json", cwd=fork_repo)
        assert wrote.returncode == 0, wrote.stderr
        assert f"--expect {value}" in (fork_repo / rel).read_text() or kind == "crash"
        tests.append(fork_repo / rel)
    failing, passing = (pytest_file(path) for path in tests)
    assert failing.returncode == 1 and "1 failed" in failing.stdout, failing.stdout[-3000:]
    reason = "crashes the process again" if kind == "crash" else f"is back (--expect {value})"
    assert reason in failing.stdout, failing.stdout[-3000:]
    assert passing.returncode == 0, passing.stdout[-3000:]


@pytest.mark.slow
def test_device_vs_cpu_without_the_device(fork_repo: Path, run_cli: RunCli) -> None:
    """On a machine without CUDA the oracle cannot decide: CANNOT_RUN naming the device, and
    the regression test is for CUDA only."""
    out = make(
        run_cli, fork_repo, issue(9850, "cumsum on cuda", DEVICE_CODE), "--expect", "device-vs-cpu"
    )
    line = verdict_line(out, "--device", "cpu")
    assert line == (
        "contribkit-verdict: CANNOT_RUN [device] device cuda is not available here"
        " (--expect device-vs-cpu compares it with cpu)"
    )
    rel = "test/test_issue_9850.py"
    wrote = run_cli("test", "--from-repro", str(out), "--path", rel, "--json", cwd=fork_repo)
    assert wrote.returncode == 0, wrote.stderr
    text = (fork_repo / rel).read_text()
    assert "@onlyCUDA" in text and 'expected = run_code("cpu")' in text
    assert "self.assertEqual(run_code(device), expected, exact_device=False" in text


# -- a reference where the issue quotes only the wrong output ------------------------------------
def test_the_float64_reference_upcasts_tensors_and_low_precision_dtypes() -> None:
    def expected_line(code: str, printed: str) -> str | None:
        units = [{"id": 1, "where": "x", "actual": [printed], "expected": None}]
        try:
            body = quoted_output_body(code, {"units": units}, "x", fail_prefix="#1 is back: ")
        except BadInput:
            return None
        return next(line for line in body.code.splitlines() if line.startswith("expected = "))

    def marked(line: str, before: str = "") -> str:
        return f"import torch\n{before}_repro.mark(1); {line}\n_repro.mark(-1)\n"

    half = marked("_repro.echo(torch.ones(9, dtype=torch.float16).mean())")
    assert expected_line(half, "tensor(nan, dtype=torch.float16)") == (
        "expected = torch.ones(9, dtype=torch.float64).mean()"
    )
    names = marked("print(d)", "a = torch.tensor([0.84])\nd = a - a.floor()\n")
    assert expected_line(names, "tensor([0.8400])") == "expected = float64(a) - float64(a).floor()"
    # No tensor is read (an int, a NumPy array): the "reference" would compute the same again.
    assert (
        expected_line(marked("_repro.echo(torch.scalar_tensor(k))", "k = 4\n"), "tensor(4.)")
        is None
    )
    numpy = marked(
        "print(np.sqrt(np.array([0.5], dtype=np.float32)).item())", "import numpy as np\n"
    )
    assert expected_line(numpy, "0.7071067690849304") is None
    # A function of the code's own is not a torch function: no reference either.
    own = marked("print(f(a))", "def f(x):\n    return x * 2\na = torch.ones(1)\n")
    assert expected_line(own, "tensor([2.])") is None


@pytest.mark.slow
def test_a_quoted_wrong_output_is_tested_against_float64(fork_repo: Path, run_cli: RunCli) -> None:
    tests = []
    for number, b in ((9860, "1.0"), (9861, "64.0")):
        data = issue(
            number, "a difference that vanishes", CANCEL_CODE.format(b=b), "Look:", CANCEL_OUTPUT
        )
        out = make(run_cli, fork_repo, data)
        rel = f"test/test_issue_{number}.py"
        wrote = run_cli("test", "--from-repro", str(out), "--path", rel, "--json", cwd=fork_repo)
        assert wrote.returncode == 0, wrote.stderr
        notes = json.loads(wrote.stdout)["notes"]
        assert any("against the same torch functions on float64 values" in n for n in notes)
        text = (fork_repo / rel).read_text()
        assert "expected = float64(a) + float64(b) - float64(a)" in text
        # Against the reference first; the reported value is only ruled out besides.
        compared = text.index("self.assertEqual(actual, expected")
        assert text.index("self.assertNotEqual(actual, ") > compared
        tests.append(fork_repo / rel)
    failing, passing = (pytest_file(path) for path in tests)
    assert failing.returncode == 1 and "differs from the float64 reference" in failing.stdout
    assert passing.returncode == 0, passing.stdout[-3000:]


@pytest.mark.slow
def test_an_inferred_graph_breaks_oracle_gets_the_same_test(
    fork_repo: Path, run_cli: RunCli
) -> None:
    code = BREAK_CODE.format(line="    torch._dynamo.graph_break()\n")
    out = make(run_cli, fork_repo, issue(9870, "a graph break", code, "This causes a graph break."))
    assert json.loads((out / "meta.json").read_text())["oracles"] == ["graph-breaks"]
    rel = "test/test_issue_9870.py"
    wrote = run_cli("test", "--from-repro", str(out), "--path", rel, "--json", cwd=fork_repo)
    assert wrote.returncode == 0, wrote.stderr
    assert 'breaks = torch._dynamo.utils.counters["graph_break"]' in (fork_repo / rel).read_text()
    failing = pytest_file(fork_repo / rel)
    assert failing.returncode == 1 and "is back (--expect graph-breaks)" in failing.stdout
