"""Verdicts from evidence: transcript assembly, edit actions, oracles, refusals, time limits.

The issues here are written for these tests, in the shapes real reports take.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from contribkit.core.render import write_outputs
from contribkit.core.verdict import parse_verdict
from contribkit.issue.model import Issue
from contribkit.issue.parse import parse_issue
from contribkit.repro.plan import plan_repro
from contribkit.repro.spec import build_spec
from contribkit.target.reprojudge import compare_unit, judge_outputs, same_line

FENCE = "`" * 3


def md(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n").replace("'''", FENCE)


def issue(body: str, title: str = "A bug", labels: list[str] | None = None) -> Issue:
    return Issue(title=title, body=md(body), number=7, repo="pytorch/pytorch", labels=labels or [])


def script_for(tmp_path: Path, the_issue: Issue, timeout: float = 300.0) -> Path:
    plan = plan_repro(the_issue, parse_issue(the_issue), timeout)
    write_outputs(plan.output_files(tmp_path / "issue-7"))
    return tmp_path / "issue-7" / "repro.py"


def run(script: Path, *args: str) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, str(script), "--device", "cpu", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=script.parent,
    )
    lines = proc.stdout.strip().splitlines()
    return proc.returncode, lines[-1] if lines else ""


# -- transcripts -------------------------------------------------------------------------------


def test_repl_output_is_kept_as_observed_output() -> None:
    parsed = parse_issue(
        issue(
            """
            '''
            >>> x = torch.tensor([3, 4])
            >>> x.sum()
            tensor(7)
            >>> x.dtype
            torch.int64
            '''
            """
        )
    )
    assert parsed.code == "x = torch.tensor([3, 4])\nx.sum()\nx.dtype\n"
    assert parsed.transcript == (
        "x = torch.tensor([3, 4])\nx.sum()\n#: tensor(7)\nx.dtype\n#: torch.int64\n"
    )


def test_ipython_out_prompts_and_pdb_sessions() -> None:
    parsed = parse_issue(
        issue(
            """
            '''
            In [1]: y = [1, 2]

            In [2]: len(y)
            Out[2]: 2
            '''

            '''
            (Pdb) p y[0]
            1
            (Pdb) n
            (Pdb) !z = 5
            '''
            """
        )
    )
    assert parsed.transcript.split("\n")[:3] == ["y = [1, 2]", "len(y)", "#: 2"]
    assert "y[0]\n#: 1" in parsed.transcript and "z = 5" in parsed.transcript
    assert "\nn\n" not in parsed.transcript


def test_prompt_in_the_info_string_and_cc_lines_are_handled() -> None:
    parsed = parse_issue(
        issue(
            """
            '''>>> a = 1
            >>> a + 1
            2
            '''

            cc @someone @another
            """
        )
    )
    assert parsed.code == "a = 1\na + 1\n"
    no_fence = parse_issue(issue("import math\nprint(math.pi)\n\ncc @someone @another\n"))
    assert "cc" not in no_fence.code


def test_output_pasted_under_code_is_split_off() -> None:
    parsed = parse_issue(
        issue(
            """
            '''python
            import torch
            print(torch.tensor([1.5]).floor())
            tensor([1.])
            '''
            Expected:
            '''
            tensor([1.])
            '''
            """
        )
    )
    assert parsed.code == "import torch\nprint(torch.tensor([1.5]).floor())\n"
    assert [(o.role, o.text) for o in parsed.outputs] == [
        ("actual", "tensor([1.])"),
        ("expected", "tensor([1.])"),
    ]


def test_many_repeated_blocks_are_dropped() -> None:
    blocks = "\n\n".join(f"{FENCE}python\nimport os\nprint(os.sep)\n{FENCE}" for _ in range(3000))
    parsed = parse_issue(Issue(title="t", body=blocks))
    assert parsed.code == "import os\nprint(os.sep)\n"


# -- edit actions ------------------------------------------------------------------------------


def spec_of(code: str, title: str = "A bug"):  # type: ignore[no-untyped-def]
    the_issue = issue(f"'''python\n{code}\n'''\n", title)
    return build_spec(the_issue, parse_issue(the_issue), "digest")


def test_free_names_get_their_imports() -> None:
    spec = spec_of("x = torch.ones(2)\ny = F.relu(x)\nz = np.zeros(1)\nprint(nn.Linear)")
    text = spec.code.edited.text
    for line in ("import torch", "import torch.nn.functional as F", "import numpy as np"):
        assert line in text
    assert "import torch.nn as nn" in text
    assert any(e.startswith("add imports for the free names") for e in spec.edits)


def test_uncalled_functions_and_test_cases_are_run() -> None:
    spec = spec_of(
        "import unittest\nimport torch\n\ndef test_sum():\n    assert torch.ones(2).sum() == 2\n\n"
        "class T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(1, 1)\n"
    )
    text = spec.code.edited.text
    assert text.rstrip().endswith("test_sum()\n_repro.run_tests(T)")
    assert "assert" in spec.evidence.oracles


def test_future_imports_are_hoisted_and_await_is_run(tmp_path: Path) -> None:
    spec = spec_of(
        "from __future__ import annotations\nimport asyncio\nawait asyncio.sleep(0)\nprint(1)"
    )
    assert spec.code.edited.future == ["from __future__ import annotations"]
    assert "asyncio.run(_contribkit_main())" in spec.code.edited.text
    the_issue = issue("'''python\nfrom __future__ import annotations\nawait f()\n'''\n")
    compile(script_for(tmp_path, the_issue).read_text(), "repro.py", "exec")


def test_generated_scripts_always_compile(tmp_path: Path) -> None:
    for n, code in enumerate(("x = (1,\n", ">>> y = [", "def f(:\n  pass", "print(1)  # 1")):
        the_issue = issue(f"'''python\n{code}\n'''\n")
        compile(script_for(tmp_path / str(n), the_issue).read_text(), "repro.py", "exec")


def test_edits_are_in_meta_json_and_the_header(tmp_path: Path) -> None:
    script = script_for(tmp_path, issue("'''python\nprint(torch.ones(1))\n'''\n"))
    meta = json.loads((script.parent / "meta.json").read_text())
    assert meta["edits"] and meta["edits"][0].startswith("add imports")
    assert "Edit: add imports" in script.read_text()


# -- the quoted-output oracle (pure) -----------------------------------------------------------


def test_same_line_ignores_spacing_and_print_precision() -> None:
    assert same_line("tensor([ 0, -1], dtype=torch.int32)", "tensor([0, -1], dtype=torch.int32)")
    assert same_line("tensor(0.40800)", "tensor(0.4080)")
    assert same_line("module.training=False", "False")
    assert not same_line("tensor(0.4080)", "tensor(0.4082)")
    assert not same_line("tensor(nan)", "tensor(1.)")
    # a whole number printed without decimals is exact: torch prints 2.5 as 2.5000
    assert not same_line("tensor(2.5000)", "tensor(2)")
    assert not same_line("tensor([2.5000, 3.0000])", "tensor([2., 3.])")
    assert same_line("tensor([2., 3.])", "tensor([2.0000, 3.0000])")


def test_a_bare_quoted_value_is_shown_in_any_printed_wrapper() -> None:
    assert same_line("tensor(nan)", "NaN")
    assert same_line("np.float64(0.0)", "0")
    assert same_line("array([ True,  True, False])", "[True, True, False]")
    assert not same_line("np.float64(0.5)", "0")
    assert not same_line("array([ True,  False])", "[True, True]")
    # the quote names a wrapper or a dtype: the text decides, not the values alone
    assert not same_line("tensor(1)", "tensor(1, dtype=torch.int32)")
    # as deep in brackets, a float where the quote writes one, the sign of zero, exact
    assert not same_line("tensor([1, 2])", "[[1, 2]]")
    assert not same_line("tensor(2)", "2.0")
    assert not same_line("tensor(-0.)", "0.")
    assert not same_line("tensor(0.0498, dtype=torch.float16)", "0.0")
    assert same_line("tensor(2.5000)", "2.5")


def test_a_quoted_line_that_lost_its_closing_brackets_is_the_same_line() -> None:
    assert same_line(
        "x.grad = tensor([2.0000, 2.0000, 0.4809])", "x.grad = tensor([2.0000, 2.0000, 0.4809]"
    )
    assert same_line("tensor([[1, 2]])", "tensor([[1, 2]")
    assert not same_line("tensor([2.0000, 2.0000, 0.4809])", "tensor([2.0000, 2.0000, 0.48")
    assert not same_line("tensor([1, 2]), 3", "tensor([1, 2]")


def test_judging_line_statuses() -> None:
    fixed_and_bug = compare_unit(["a 1", "b 3"], ["a 0", "b 3"], ["a 1", "b 2"])
    assert fixed_and_bug == ["fixed", "bug"]
    assert judge_outputs(fixed_and_bug, True) is not None
    assert judge_outputs(fixed_and_bug, True)[0] == "REPRODUCED"  # type: ignore[index]
    changed = compare_unit(["x 2"], ["x 1"], None)
    assert judge_outputs(changed, True) == (
        "NOT_REPRODUCED",
        "the code no longer prints what the issue shows",
    )
    assert judge_outputs(changed, False) is None  # random values may differ anyway
    assert judge_outputs(["same", "changed"], True) is None  # mixed: no verdict


# -- oracles end to end (real torch) -----------------------------------------------------------


@pytest.mark.slow
def test_repl_output_still_shown_is_reproduced_and_changed_is_not(tmp_path: Path) -> None:
    body = """
        '''
        >>> torch.tensor([2.5]).floor()
        tensor([{}])
        '''
        """
    code, last = run(script_for(tmp_path / "a", issue(body.format("2."))))
    assert code == 1 and "REPRODUCED [quoted-output]" in last
    code, last = run(script_for(tmp_path / "b", issue(body.format("3."))))
    assert code == 0 and "NOT_REPRODUCED [quoted-output]" in last


@pytest.mark.slow
def test_prose_under_an_unfenced_transcript_is_not_compared(tmp_path: Path) -> None:
    """The sentence right under the output line (no blank line) is not what the REPL printed."""
    body = """
        Summing a bool tensor gives an integer:

        >>> import torch
        >>> torch.tensor([True, False]).sum().dtype
        {}
        which looks wrong to me, it should stay bool.

        Thanks.
        """
    code, last = run(script_for(tmp_path / "a", issue(body.format("torch.int64"))))
    assert code == 1 and last.startswith("contribkit-verdict: REPRODUCED [quoted-output]"), last
    code, last = run(script_for(tmp_path / "b", issue(body.format("torch.bool"))))
    assert code == 0 and "NOT_REPRODUCED [quoted-output]" in last, last


@pytest.mark.slow
def test_a_crash_is_judged_from_the_child_process(tmp_path: Path) -> None:
    body = """
        It dies with a segmentation fault.
        '''python
        import os, signal
        os.kill(os.getpid(), signal.SIGSEGV)
        '''
        """
    code, last = run(script_for(tmp_path / "a", issue(body)))
    assert code == 1 and last.endswith("REPRODUCED [crash] the process was killed by SIGSEGV")
    # Raised by a torch operation: the code ran into torch and torch raised, no crash.
    fixed = body.replace(
        "os.kill(os.getpid(), signal.SIGSEGV)", "import torch; torch.ones(2).view(-3)"
    )
    code, last = run(script_for(tmp_path / "b", issue(fixed)))
    assert code == 0 and "NOT_REPRODUCED [crash] raises RuntimeError" in last
    # Raised by the snippet itself, no torch operation run: no evidence the crash is gone.
    python = body.replace("os.kill(os.getpid(), signal.SIGSEGV)", "raise RuntimeError('bad')")
    code, last = run(script_for(tmp_path / "c", issue(python)))
    assert code == 125 and "did not run to its end" in last


@pytest.mark.slow
def test_a_crash_under_another_quantized_engine_reproduces(tmp_path: Path) -> None:
    # Quantized kernels differ by engine: the default one may check an input that another
    # engine's kernel divides by. Here only qnnpack "crashes"; every engine raises otherwise.
    body = """
        Building the quantized layer dies with a floating point exception.
        '''python
        import os, signal
        import torch
        if torch.backends.quantized.engine == "qnnpack":
            os.kill(os.getpid(), signal.SIGFPE)
        torch.nn.functional.conv1d(torch.ones(1, 1, 3), torch.ones(1, 1, 1), stride=0)
        '''
        """
    code, last = run(script_for(tmp_path / "a", issue(body)))
    assert code == 1 and "REPRODUCED [crash]" in last and "killed by SIGFPE" in last
    never = body.replace('== "qnnpack"', '== "no such engine"')
    code, last = run(script_for(tmp_path / "b", issue(never)))
    assert code == 0 and "NOT_REPRODUCED [crash] raises RuntimeError: non-positive stride" in last
    assert "nor under the quantized engines" in last and "qnnpack" in last


@pytest.mark.slow
def test_a_real_quantized_crash_is_found_under_fbgemm(tmp_path: Path) -> None:
    import torch

    if "fbgemm" not in torch.backends.quantized.supported_engines:
        pytest.skip("this torch has no fbgemm engine")
    body = """
        Floating point exception (core dumped) with stride=0:
        '''python
        import torch.ao.nn.quantized as nnq
        nnq.Conv1d(2, 4, kernel_size=2, stride=0)
        '''
        """
    code, last = run(script_for(tmp_path, issue(body)))
    assert code == 1 and "REPRODUCED [crash]" in last and "SIGFPE" in last


@pytest.mark.slow
def test_a_hang_ends_in_cannot_run_within_the_limit(tmp_path: Path) -> None:
    script = script_for(tmp_path, issue("It fails.\n'''python\nimport time\ntime.sleep(60)\n'''\n"))
    code, last = run(script, "--timeout", "3")
    assert code == 125 and last == "contribkit-verdict: CANNOT_RUN timed out after 3 s"


@pytest.mark.slow
def test_own_assert_that_passes_is_not_reproduced(tmp_path: Path) -> None:
    body = "'''python\nimport torch\nassert torch.ones(3).sum() == 3\n'''\n"
    code, last = run(script_for(tmp_path, issue(body)))
    assert code == 0 and "NOT_REPRODUCED [assert]" in last


@pytest.mark.slow
def test_a_verdict_on_another_device_than_the_issues_is_cannot_run(tmp_path: Path) -> None:
    body = "'''python\nimport torch\nx = torch.ones(2, device='cuda')\nassert x.sum() == 2\n'''\n"
    code, last = run(script_for(tmp_path, issue(body)))
    assert code == 125 and "CANNOT_RUN [device]" in last and "--device cuda" in last


# -- refusals ----------------------------------------------------------------------------------


def test_feature_requests_and_docs_issues_are_refused() -> None:
    feature = issue("### 🚀 The feature, motivation and pitch\n\nPlease add x.\n")
    assert build_spec(feature, parse_issue(feature), "d").refusal
    docs = issue("The page renders badly.", labels=["module: docs"])
    assert build_spec(docs, parse_issue(docs), "d").refusal
    bug = issue("'''python\nprint(1)\n'''\n", title="[docs] example is wrong")
    assert build_spec(bug, parse_issue(bug), "d").refusal is None  # docs issue with code
    # A feature request's code that only shows the API it wants decides nothing: refused.
    wish = issue("'''python\nx.frobnicate()\n'''\n", labels=["feature"])
    assert build_spec(wish, parse_issue(wish), "d").refusal
    # One that pastes the error it asks to lift is reproduced: REPRODUCED while it is raised.
    lift = issue(
        "'''python\nimport torch\ntorch.ones(2).frobnicate()\n'''\n\n'''\nTraceback (most"
        " recent call last):\n  File \"x.py\", line 2, in <module>\nAttributeError: 'Tensor'"
        " object has no attribute 'frobnicate'\n'''\n",
        labels=["feature"],
    )
    parsed = parse_issue(lift)
    assert parsed.nature == "feature" and parsed.signature is not None
    assert build_spec(lift, parsed, "d").refusal is None
    # One that quotes only output (numpy printing what torch should) is still refused.
    numpy_wish = issue(
        "'''python\nimport numpy as np\nprint(np.nanpercentile([1.0, np.nan], 50))\n'''\n\n"
        "'''\n1.0\n'''\n",
        labels=["feature"],
    )
    assert build_spec(numpy_wish, parse_issue(numpy_wish), "d").refusal


def test_refusal_exit_code_and_force(tmp_path: Path) -> None:
    saved = tmp_path / "feature.md"
    saved.write_text("### 🚀 The feature, motivation and pitch\n\nPlease add x.\n")
    command = [sys.executable, "-m", "contribkit", "repro", "--from-file", str(saved)]
    out = tmp_path / "out"
    refused = subprocess.run([*command, "-o", str(out)], capture_output=True, text=True)
    assert refused.returncode == 2 and "feature request" in refused.stderr
    assert "--force" in refused.stderr and not out.exists()
    forced = subprocess.run([*command, "-o", str(out), "--force"], capture_output=True, text=True)
    assert forced.returncode == 0, forced.stderr
    assert "feature request" in (out / "repro.py").read_text()


@pytest.mark.slow
def test_a_forced_refusal_runs_to_cannot_run(tmp_path: Path) -> None:
    """The script --force writes for a refused issue imports torch, then says why it cannot run."""
    saved = tmp_path / "feature.md"
    saved.write_text("### 🚀 The feature, motivation and pitch\n\nPlease add x.\n")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "contribkit", "repro", "--from-file", str(saved), "--force"]
    forced = subprocess.run([*command, "-o", str(out)], capture_output=True, text=True)
    assert forced.returncode == 0, forced.stderr
    proc = subprocess.run([sys.executable, str(out / "repro.py")], capture_output=True, text=True)
    assert proc.returncode == 125 and "feature request" in proc.stdout.splitlines()[-1]


def test_json_explains_code_edits_and_oracles(tmp_path: Path) -> None:
    saved = tmp_path / "bug.md"
    saved.write_text(md("'''\n>>> torch.ones(2).sum()\ntensor(2.)\n'''\n"))
    out = str(tmp_path / "out")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "contribkit",
            "repro",
            "--from-file",
            str(saved),
            "--json",
            "-o",
            out,
        ],
        capture_output=True,
        text=True,
    )
    data = json.loads(proc.stdout)
    assert data["code_lines"] == 1 and data["oracles"] == ["quoted-output"]
    assert any("imports" in e for e in data["edits"]) and data["oracles_why"]


def test_verdict_line_with_an_oracle_reads_back() -> None:
    line = "contribkit-verdict: NOT_REPRODUCED [assert] the issue's own checks passed"
    assert parse_verdict(line) == ("NOT_REPRODUCED", "[assert] the issue's own checks passed")
    assert parse_verdict("contribkit-verdict: CANNOT_RUN timed out after 5 s") == (
        "CANNOT_RUN",
        "timed out after 5 s",
    )


@pytest.mark.slow
def test_graph_breaks_the_issue_reports_are_counted(tmp_path: Path) -> None:
    body = """
        torch.compile graph breaks on this function:
        '''python
        import torch

        def f(x):
            {line}
            return x + 1

        torch.compile(f, backend="eager")(torch.ones(2))
        '''
        """
    code, last = run(script_for(tmp_path / "a", issue(body.format(line='print("step")'))))
    assert code == 1 and "REPRODUCED [graph-breaks] 1 graph break(s); the first:" in last
    code, last = run(script_for(tmp_path / "b", issue(body.format(line="x = x * 2"))))
    assert code == 0 and "NOT_REPRODUCED [graph-breaks]" in last and "without a graph break" in last


RECOMPILES = """
    torch.compile recompiles {what}
    '''python
    import torch

    @torch.compile(backend="eager", dynamic=False)
    def f(x):
        return x * 2 + 1

    {calls}
    '''
    """


@pytest.mark.slow
def test_recompiles_the_issue_reports_are_counted(tmp_path: Path) -> None:
    loop = "for n in (2, 3, 4):\n        print(f(torch.ones(n)).sum())"
    body = RECOMPILES.format(what="on every new shape", calls=loop)
    code, last = run(script_for(tmp_path / "a", issue(body)))
    assert code == 1 and "REPRODUCED [recompiles] 3 compile(s), 2 recompile(s)" in last
    assert "the first guard failure: 0/0: tensor 'x' size mismatch at index 0" in last
    allowed = RECOMPILES.format(what="too often: it should compile 3 times at most", calls=loop)
    code, last = run(script_for(tmp_path / "b", issue(allowed)))
    assert code == 0 and "NOT_REPRODUCED [recompiles]" in last and "allows 2" in last
    same = loop.replace("(2, 3, 4)", "(2, 2, 2)")
    code, last = run(script_for(tmp_path / "c", issue(RECOMPILES.format(what="", calls=same))))
    assert code == 0 and "NOT_REPRODUCED [recompiles] completed on cpu; 1 compile(s), 0" in last
    once = RECOMPILES.format(what="", calls="print(f(torch.ones(3)).sum())")
    code, last = run(script_for(tmp_path / "d", issue(once)))
    assert code == 125 and "one call cannot recompile" in last


DETERMINISM = """
    The result is nondeterministic: different results on each run, with the seed set.
    '''python
    import os
    import torch

    torch.manual_seed(0)
    noise = {noise}
    print("sum", torch.randn(4).sum() + noise)
    '''
    """


@pytest.mark.slow
def test_determinism_runs_the_code_twice_with_the_same_seeds(tmp_path: Path) -> None:
    differs = DETERMINISM.format(noise='int.from_bytes(os.urandom(4), "little")')
    code, last = run(script_for(tmp_path / "a", issue(differs)))
    assert code == 1 and "REPRODUCED [determinism] two runs with the same seeds printed" in last
    code, last = run(script_for(tmp_path / "b", issue(DETERMINISM.format(noise="0"))))
    assert code == 0
    assert last.endswith(
        "NOT_REPRODUCED [determinism] two runs with the same seeds printed the same 1 line(s)"
    )
    # The difference the issue shows is inside one run: two equal runs do not clear it.
    within = DETERMINISM.format(noise="0").replace(
        'print("sum", torch.randn(4).sum() + noise)',
        "a = torch.ones(4).sum()\n    b = torch.ones(4).sum()\n    print(a - b)",
    )
    code, last = run(script_for(tmp_path / "c", issue(within)))
    assert code == 125 and "compares results within one run" in last
    # Set order (str hashes) is the same in both runs; a difference below the 4 decimals a
    # tensor prints with still shows.
    hashed = DETERMINISM.format(noise="0").replace(
        'print("sum", torch.randn(4).sum() + noise)',
        'print("names", sorted(["fc"]), list({"conv1", "bn1", "fc"}))',
    )
    code, last = run(script_for(tmp_path / "d", issue(hashed)))
    assert code == 0 and "NOT_REPRODUCED [determinism]" in last, last
    tiny = DETERMINISM.format(noise='int.from_bytes(os.urandom(2), "little") * 1e-9').replace(
        "torch.randn(4).sum()", "torch.ones(1, dtype=torch.float64)"
    )
    code, last = run(script_for(tmp_path / "e", issue(tiny)))
    assert code == 1 and "REPRODUCED [determinism]" in last, last


def test_recompile_and_determinism_oracles_are_explained(tmp_path: Path) -> None:
    spec = spec_of("import torch\nf = torch.compile(lambda x: x)\nf(1)\nf(2)", "It recompiles")
    assert spec.evidence.runtime["recompiles"] == {"allowed": 0, "repeats": True}
    assert "recompiles" in spec.evidence.oracles
    stated = "It recompiles, but it should only compile twice.\n'''python\nimport torch\n"
    expected = issue(stated + "f = torch.compile(abs)\nf(1)\n'''\n")
    found = build_spec(expected, parse_issue(expected), "d").evidence.runtime["recompiles"]
    assert found == {"allowed": 1, "repeats": False}
    script = script_for(tmp_path, issue(DETERMINISM.format(noise="0")))
    meta = json.loads((script.parent / "meta.json").read_text())
    assert "determinism" in meta["oracles"]
    assert any("runs twice" in why for why in meta["oracles_why"])
    error = issue("Non-deterministic op: use_deterministic_algorithms should raise here.\n")
    assert "determinism" not in build_spec(error, parse_issue(error), "d").evidence.oracles
    # A missing recompile (stale results) is the opposite bug: counting recompiles would
    # invert the verdict, so the oracle stays out; "should not recompile" is the usual kind.
    code = "import torch\nf = torch.compile(lambda x: x)\nf(1)\nf(2)"
    for wants in (
        "It does not recompile when the scale changes; it should recompile.",
        "The compiled function returns stale results after the attribute changes.",
    ):
        assert "recompiles" not in spec_of(code, wants).evidence.oracles, wants
    assert (
        "recompiles" in spec_of(code, "It should not recompile, but it recompiles").evidence.oracles
    )
