"""Execution evidence in repro scripts, and the rules over it, with real CPU torch.

The issues are written for these tests in the shapes real reports take: code that only defines
a model, the correct (CPU) side of a CPU-vs-CUDA contrast, an undefined ``device``, and a
compiled function whose graphs must not change when the recording is on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from contribkit.core.render import write_outputs
from contribkit.issue.model import Issue, Signature
from contribkit.issue.parse import parse_issue
from contribkit.repro.codefacts import analyse
from contribkit.repro.edits import edit_code
from contribkit.repro.errorclaims import failure_unwanted
from contribkit.repro.evidence import compiled_object_only, issue_claims
from contribkit.repro.plan import plan_repro
from contribkit.target.reprorules import (
    DEVICE_GAP,
    evidence_rule,
    missing_for_absence,
    missing_for_signature,
    same_op,
)

FENCE = "`" * 3


def write_script(tmp_path: Path, body: str, title: str) -> Path:
    text = textwrap.dedent(body).lstrip("\n").replace("'''", FENCE)
    issue = Issue(title=title, body=text, number=9, repo="pytorch/pytorch", labels=[])
    plan = plan_repro(issue, parse_issue(issue))
    folder = tmp_path / "issue-9"
    write_outputs(plan.output_files(folder))
    return folder / "repro.py"


def run_json(script: Path, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(script), "--device", "cpu", "--json", *extra],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=script.parent,
        env={**os.environ, **(env or {})},
    )
    doc: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert doc["exit_code"] == proc.returncode
    return doc


DEFINES_ONLY = """
    ### 🐛 Describe the bug

    Calling the model fails with an error when the input has an odd length.

    '''python
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(4, 4, 3, padding=1)

        def forward(self, x):
            return self.conv(x)[..., ::2]

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            return self.block(x)
    '''
"""


@pytest.mark.slow
def test_code_that_only_defines_classes_cannot_decide(tmp_path: Path) -> None:
    """No operation the issue reports ran: the clean run is CANNOT_RUN, never NOT_REPRODUCED."""
    script = write_script(tmp_path, DEFINES_ONLY, "Conv1d model fails on odd lengths")
    doc = run_json(script)
    assert doc["verdict"] == "CANNOT_RUN", doc
    assert "no torch operation ran: the code only defines classes" in doc["detail"]
    assert doc["evidence"]["ran_to_end"] is True and doc["evidence"]["op_calls"] == 0


CAUGHT = """
    ### 🐛 Describe the bug

    Inverting this batch fails with an error.

    '''python
    import torch
    a = torch.zeros(2, 3, 3)
    try:
        torch.linalg.inv(a)
    except Exception as e:
        print("failed:", e)
    '''
"""


@pytest.mark.slow
def test_a_torch_error_the_code_catches_is_no_clean_run(tmp_path: Path) -> None:
    """The reported call inside try/except: the error was raised and caught, so "completed
    without the error the issue reports" would mislead; with nothing raised it decides."""
    script = write_script(tmp_path / "a", CAUGHT, "linalg.inv raises an error on a batch")
    doc = run_json(script)
    assert doc["verdict"] == "CANNOT_RUN", doc
    assert "a torch operation raised an error the issue's code caught (linalg_inv" in doc["detail"]
    assert "take the try/except away" in doc["detail"]
    assert doc["evidence"]["caught"].startswith("linalg_inv raised _LinAlgError")
    fine = CAUGHT.replace("torch.zeros(2, 3, 3)", "torch.eye(3).repeat(2, 1, 1)")
    doc = run_json(write_script(tmp_path / "b", fine, "linalg.inv raises an error on a batch"))
    assert (doc["verdict"], doc["oracle"], doc["evidence"]["caught"]) == (
        "NOT_REPRODUCED",
        "no-error",
        None,
    )


@pytest.mark.slow
def test_a_model_is_called_on_the_input_the_issue_states(tmp_path: Path) -> None:
    """The same snippet, with its input stated in the prose: the edit builds the outer model
    and calls it, so its operations run and a clean run can decide."""
    stated = DEFINES_ONLY.replace("odd length.", "odd length, such as\n    `torch.randn(1, 4, 7)`.")
    script = write_script(tmp_path, stated, "Conv1d model fails on odd lengths")
    meta = json.loads((script.parent / "meta.json").read_text())
    assert "build Net and call it on the input the issue states" in " ".join(meta["edits"])
    doc = run_json(script)
    assert doc["verdict"] == "NOT_REPRODUCED", doc
    assert doc["evidence"]["ops"]["conv1d"]["devices"] == ["cpu"]


CONTRAST = """
    ### 🐛 Describe the bug

    On CPU `index_select` checks the index and raises, which is what we want. On CUDA the same
    call returns garbage instead of raising.

    '''python
    import torch
    x = torch.arange(6.0).reshape(3, 2)
    print(torch.index_select(x, 0, torch.tensor([5])))
    '''

    '''
    IndexError: index out of range in self
    '''
"""


@pytest.mark.slow
def test_the_cpu_error_of_a_cpu_vs_cuda_contrast_is_not_reproduced(tmp_path: Path) -> None:
    """The CPU raises the quoted error, but the issue calls the CPU side correct."""
    script = write_script(tmp_path, CONTRAST, "index_select does not raise on CUDA like on CPU")
    doc = run_json(script)
    assert doc["verdict"] == "CANNOT_RUN", doc
    assert "raised on the CPU" in doc["detail"] or "reports the bug on cuda" in doc["detail"]
    assert doc["evidence"]["ops"]["index_select"]["devices"] == ["cpu"]


NAMED_OP = """
    ### 🐛 Describe the bug

    `torch.nn.functional.pad` fails with an error in reflect mode on empty inputs.

    '''python
    import torch
    import torch.nn.functional as F
    x = torch.ones(2, 3) @ torch.ones(3, 2)
    device
    print(x.to(device).sum())
    '''
"""


@pytest.mark.slow
def test_evidence_in_json_and_the_named_op_rule(tmp_path: Path) -> None:
    """The verdict's --json carries the ops, devices, dtypes and the rule; an op the issue names
    (F.pad) that never ran keeps a clean run from NOT_REPRODUCED; ``device`` gets a value."""
    script = write_script(tmp_path, NAMED_OP, "F.pad raises an error in reflect mode")
    assert "device = torch.device(DEVICE)" in script.read_text()
    doc = run_json(script)
    assert doc["verdict"] == "CANNOT_RUN", doc
    assert "no operation the issue names (pad) ran" in doc["detail"]
    evidence = doc["evidence"]
    assert evidence["recorded"] and evidence["ran_to_end"] and evidence["devices"] == ["cpu"]
    assert evidence["ops"]["matmul"] == {"calls": 1, "devices": ["cpu"], "dtypes": ["float32"]}
    assert evidence["ops"]["ones"]["calls"] == 2 and "pad" not in evidence["ops"]
    assert doc["rule"].startswith("NOT_REPRODUCED needs")
    meta = json.loads((script.parent / "meta.json").read_text())
    assert "define the undefined name(s) device" in " ".join(meta["edits"])
    explained = subprocess.run(
        [sys.executable, str(script), "--device", "cpu", "--explain"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=script.parent,
    ).stdout
    assert "contribkit-explain: torch operations called: " in explained
    assert "contribkit-explain: rule: NOT_REPRODUCED needs" in explained


COMPILED = """
    ### 🐛 Describe the bug

    torch.compile gives a graph break on print in this function and recompiles.

    '''python
    import torch

    def f(x):
        y = torch.sin(x) + x.cos()
        print("inside")
        return y.sum() * 2

    cf = torch.compile(f, backend="eager")
    x = torch.arange(4.0)
    print(cf(x), cf(x + 1), cf(torch.arange(5.0)))
    '''
"""


@pytest.mark.slow
def test_recording_does_not_change_what_dynamo_compiles(tmp_path: Path) -> None:
    """Frames, graphs, graph breaks, recompiles and the output are the same with the recording
    mode on and off (it is paused while compiled code runs)."""
    script = write_script(tmp_path, COMPILED, "graph break and recompiles in compiled function")
    on = run_json(script)
    off = run_json(script, env={"CONTRIBKIT_REPRO_RECORD": "0"})
    assert on["evidence"]["recorded"] and not off["evidence"]["recorded"]
    assert on["evidence"]["compile"] == off["evidence"]["compile"]
    assert on["evidence"]["compile"]["graph_breaks"] >= 1
    assert on["evidence"]["compiled_calls"] == 3
    assert on["verdict"] == off["verdict"]


def test_the_rules_name_the_missing_evidence() -> None:
    ran = {"recorded": True, "ran_to_end": True, "op_calls": 3, "compiled_calls": 0}
    ops: dict[str, Any] = {"ops": {"linalg_eigh": {}}, "devices": ["cpu"], "compile": None}
    assert missing_for_absence({**ran, **ops}, {"named": ["eigh"]}) == ""
    assert "reports the bug on cuda" in missing_for_absence({**ran, **ops}, {"device": "cuda"})
    called = {**ran, **ops, "compiled_calls": 1}
    assert "no compiled frame" in missing_for_absence(called, {"compile": True})
    traced = {**ran, **ops, "compile": {"frames": 1, "frames_ok": 0, "graphs": 0}}
    assert "no compiled frame" in missing_for_absence(traced, {"compile": True})  # a decorator's
    assert "no compiled frame" in missing_for_absence({**ran, **ops}, {"compile": True})
    # never called: the code is about the compiled object itself (its flags, its state_dict)
    assert missing_for_absence({**ran, **ops}, {"compile": True, "compiled_object": True}) == ""
    assert "did not run to its end" in missing_for_absence({**ran, "ran_to_end": False}, {})
    assert missing_for_absence({"recorded": False}, {"device": "cuda"}) == ""
    assert "expected result" in missing_for_signature(["cpu"], {"error_expected": True})
    assert "raised on cuda" not in missing_for_signature(["cuda"], {"device": "cuda"})
    assert missing_for_signature(["cpu"], {"contrast": True})
    assert missing_for_signature(["cuda"], {"contrast": True}) == ""
    assert same_op("index_add_", "index_add") and not same_op("add", "index_add")


def test_a_failure_where_a_cuda_rewrite_ran_is_no_device_gap() -> None:
    """The device of a rewrite is where the reporter ran, not a claim: a failure on the CPU
    shows the bug is not CUDA's alone; a clean run there says nothing; a claimed device holds."""
    doc: dict[str, Any] = {"recorded": True, "ran_to_end": True, "op_calls": 3, "devices": ["cpu"]}
    doc.update(ops={"norm": {}}, compile=None, compiled_calls=0)
    rewritten = {"device": "cuda"}
    assert evidence_rule(doc, rewritten, "REPRODUCED", "quoted-output", None)[1] == ""
    assert "reports the bug on cuda" in evidence_rule(doc, rewritten, "NOT_REPRODUCED", "", None)[1]
    # any error, or an assert, can fail for the CPU alone ("Torch not compiled with CUDA")
    assert (
        "reports the bug on cuda" in evidence_rule(doc, rewritten, "REPRODUCED", "error", None)[1]
    )
    assert (
        "reports the bug on cuda" in evidence_rule(doc, rewritten, "REPRODUCED", "assert", None)[1]
    )
    claimed = {"device": "cuda", "device_claimed": True}
    assert (
        "reports the bug on cuda" in evidence_rule(doc, claimed, "REPRODUCED", "compare", None)[1]
    )


@pytest.mark.parametrize(
    ("prose", "cpu_too"),
    [
        ("I expected it to cast. The error is the same on CPU.", True),
        ("It also happens on the CPU.", True),
        ("Reproduces both on CPU and GPU.", True),
        ("It works on CPU but not on CUDA.", False),
        ("On CPU the result is correct.", False),
    ],
)
def test_a_bug_said_to_show_on_the_cpu_too_is_not_held_to_the_gpu(
    prose: str, cpu_too: bool
) -> None:
    """CUDA code rewritten for --device says where the reporter ran, unless the issue says the
    bug shows on the CPU too: then a clean CPU run may decide."""
    from contribkit.repro.evidence import _SAYS_CPU_TOO

    assert bool(_SAYS_CPU_TOO.search(prose)) is cpu_too


@pytest.mark.parametrize(
    ("title", "platform"),
    [
        ("torch.cdist crashes on Windows", "windows"),
        ("Wrong result from matmul on Apple silicon (macOS 14)", "macos"),
        ("segfault in conv2d on aarch64", "arm64"),
        ("conv2d is slow on windows and macOS", None),  # two systems: neither is claimed
        ("segfault in conv2d on macOS arm64", "macos-arm64"),
        ("torch.add raises an error", None),
        ("unfold over sliding windows returns the wrong shape", None),
        ("stft gives wrong output on windows 11", "windows"),
    ],
)
def test_a_title_naming_a_platform_claims_the_bug_there(title: str, platform: str | None) -> None:
    issue = Issue(title=title, body="```python\nimport torch\n```\n", number=9, repo="o/r")
    parsed = parse_issue(issue)
    facts = analyse(parsed.code)
    claims = issue_claims(issue, parsed, facts, edit_code(parsed.code), False)
    assert claims.get("reported_platform") == platform


def test_a_clean_run_on_another_platform_than_the_claimed_one_decides_nothing() -> None:
    ran = {"recorded": True, "ran_to_end": True, "op_calls": 3, "ops": {"add": {}}}
    linux = {**ran, "devices": ["cpu"], "platform": "linux-x86_64"}
    assert missing_for_absence(linux, {"platform": "windows"}) == (
        "the title names windows, but this machine is linux-x86_64"
    )
    assert missing_for_absence({**linux, "platform": "linux-arm64"}, {"platform": "macos-arm64"})
    # Not a device gap: the verdict would name a device and hint --device (a CUDA title too).
    both = missing_for_absence(
        {**linux, "devices": ["cuda"]}, {"platform": "windows", "device": "cuda"}
    )
    assert both and not both.startswith(DEVICE_GAP)
    assert missing_for_absence({**linux, "platform": "macos-arm64"}, {"platform": "macos"}) == ""
    assert missing_for_absence({**linux, "platform": "linux-arm64"}, {"platform": "arm64"}) == ""
    assert missing_for_absence(linux, {"platform": None}) == ""


TITLE_ERROR = """
    ### 🐛 Describe the bug

    '''python
    import torch
    x = torch.arange(6.0)
    print(x.unfold(0, 2, 0))
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("title", "verdict"),
    [
        ("Tensor.unfold raises RuntimeError when step is 0", "REPRODUCED"),
        ("unfold: RuntimeError on a zero step", "REPRODUCED"),
        ("internal assert in Tensor.unfold when step is 0", "CANNOT_RUN"),
        ("Tensor.unfold should raise RuntimeError when step is 0", "CANNOT_RUN"),
    ],
)
def test_an_error_the_title_names_reproduces_without_a_traceback(
    tmp_path: Path, title: str, verdict: str
) -> None:
    """No traceback quoted: the error raised is the reported one only where the title names
    its class as what happens (not as what it wants)."""
    doc = run_json(write_script(tmp_path, TITLE_ERROR, title))
    assert doc["verdict"] == verdict, doc
    if verdict == "REPRODUCED":
        assert doc["oracle"] == "signature"
        assert doc["detail"] == "RuntimeError: step is 0 but must be > 0"


CAUGHT_QUIETLY = """
    ### 🐛 Describe the bug

    '''python
    import torch
    a = torch.zeros(2, 3, 3)
    try:
        torch.linalg.inv(a)
    except Exception:
        print("inversion failed")
    '''

    '''
    torch._C._LinAlgError: linalg.inv: (Batch element 0): The diagonal element 1 is zero, the inversion could not be completed because the input matrix is singular.
    '''
"""


@pytest.mark.slow
def test_the_reported_error_caught_without_printing_it_reproduces(tmp_path: Path) -> None:
    """A try/except around the reported call that prints its own words: the error the torch op
    raised is still the issue's, by type and message."""
    doc = run_json(write_script(tmp_path, CAUGHT_QUIETLY, "linalg.inv fails on a batch"))
    assert (doc["verdict"], doc["oracle"]) == ("REPRODUCED", "signature"), doc
    assert "the issue's code caught the error: _LinAlgError: linalg.inv" in doc["detail"]


UNQUOTED_ERROR = """
    ### 🐛 Describe the bug

    Reshaping this tensor fails with an error.

    '''python
    import torch
    x = torch.arange(5.0)
    print(x.view(2, 3))
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize(("size", "verdict"), [("5.0", "REPRODUCED"), ("6.0", "NOT_REPRODUCED")])
def test_an_error_the_issue_reports_but_does_not_quote(
    tmp_path: Path, size: str, verdict: str
) -> None:
    """The prose says the code fails with an error, and quotes none: a torch operation raising
    one reproduces it; a clean run through that operation does not."""
    body = UNQUOTED_ERROR.replace("5.0", size)
    doc = run_json(write_script(tmp_path, body, "view of an arange misbehaves"))
    assert (doc["verdict"], doc["oracle"]) == (verdict, "error" if size == "5.0" else "no-error")


SIG_PAD = Signature("NotImplementedError", "Only 3D and 4D input is supported", "traceback")


@pytest.mark.parametrize(
    ("prose", "signature", "unwanted"),
    [
        ("Padding this input fails.", SIG_PAD, True),
        ("Padding this input raises an error though it should work.", SIG_PAD, True),
        ("The error message is misleading: the input is 3D.", SIG_PAD, False),
        ("Padding gives a confusing error here.", SIG_PAD, False),
        ("Padding fails with a weird error deep in the kernel.", SIG_PAD, False),
        ("It should raise a ValueError instead.", SIG_PAD, False),
        (
            "Padding fails.",
            Signature("RuntimeError", "INTERNAL ASSERT FAILED at x.cpp", "text"),
            False,
        ),
        (
            "Padding fails.",
            Signature("RuntimeError", "CUDA error: an illegal memory access", "text"),
            False,
        ),
        ("Padding fails.", None, False),
    ],
)
def test_the_failure_is_the_complaint_unless_its_wording_is(
    prose: str, signature: Signature | None, unwanted: bool
) -> None:
    """A reworded error still shows a bug whose complaint is the failure, not one about the
    error's wording or class, nor a failure of torch itself (fixed by a clear error)."""
    assert failure_unwanted(prose, "", signature, crash=False, expected=False) is unwanted
    assert failure_unwanted(prose, "", signature, crash=True, expected=False) is False
    assert failure_unwanted(prose, "", signature, crash=False, expected=True) is False


PYTHON_CHECK = """
    ### 🐛 Describe the bug

    The program crashes with a segmentation fault when the hidden state has the wrong size.

    '''python
    import torch
    rnn = torch.nn.GRU(10, 30)
    out, h = rnn(torch.randn(100, 5, 10), torch.zeros(1, 1, 30))
    print(out.shape)
    '''
"""


@pytest.mark.slow
def test_a_crash_now_rejected_by_torchs_python_checks_is_not_reproduced(tmp_path: Path) -> None:
    """The module's Python check raised (no op records it): still a torch operation of the
    issue's, so raising instead of crashing decides."""
    doc = run_json(write_script(tmp_path, PYTHON_CHECK, "GRU segfaults on a wrong hidden size"))
    assert (doc["verdict"], doc["oracle"]) == ("NOT_REPRODUCED", "crash"), doc
    assert doc["detail"].startswith("raises RuntimeError: Expected hidden size")
    assert doc["evidence"]["raised_by"] == {"op": "GRU", "devices": ["cpu"]}


REWORDED = """
    ### 🐛 Describe the bug

    Upsampling a sequence in bilinear mode {how}.

    '''python
    import torch
    import torch.nn.functional as F
    y = F.interpolate(torch.randn(1, 1, 4), scale_factor=2.0, mode="bilinear")
    print(y.shape)
    '''

    '''
    NotImplementedError: Input Error: Only 4D input Tensors are supported (got 3D) for bilinear
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "verdict"), [("fails", "REPRODUCED"), ("fails with a misleading error", "CANNOT_RUN")]
)
def test_the_reported_error_reworded_by_a_later_torch(
    tmp_path: Path, how: str, verdict: str
) -> None:
    """The same class of error from the same function, worded otherwise since: the failure the
    issue reports is still there, unless its complaint is the error's wording."""
    body = REWORDED.replace("{how}", how)
    doc = run_json(write_script(tmp_path, body, "F.interpolate bilinear on a 3D input"))
    assert doc["verdict"] == verdict, doc
    if verdict == "REPRODUCED":
        assert doc["oracle"] == "error" and "reworded" in doc["detail"]
    else:
        assert doc["detail"].startswith("different error: got NotImplementedError")


UNIMPORTED = """
    ### 🐛 Describe the bug

    log_prob of a sample fails with an error.

    '''python
    import torch
    d = Multinomial(4, probs=torch.tensor([0.25, 0.75]))
    print(d.log_prob(torch.tensor([1.0, 3.0])))
    print(NoSuchName)
    '''
"""


@pytest.mark.slow
def test_a_torch_class_used_without_its_import_is_defined(tmp_path: Path) -> None:
    """The snippet left out ``from torch.distributions import Multinomial``: the one torch
    namespace that holds the name defines it; a name none holds stays undefined."""
    script = write_script(tmp_path, UNIMPORTED, "Multinomial.log_prob fails")
    text = script.read_text()
    assert "globals().update(_repro.torch_names(['Multinomial', 'NoSuchName']))" in text
    doc = run_json(script)
    assert doc["verdict"] == "CANNOT_RUN"
    assert "NameError: name 'NoSuchName' is not defined" in doc["detail"]
    assert "lgamma" in doc["evidence"]["ops"]  # Multinomial.log_prob ran


SIDE_BY_SIDE = """
    ### 🐛 Describe the bug

    The method and the function round 2.5 differently.

    '''python
    import torch
    x = torch.tensor([2.5])
    print(x.round())  # tensor([2.])
    print(torch.round(x))  # tensor([QUOTED.])
    '''
"""


@pytest.mark.slow
@pytest.mark.parametrize(("quoted", "verdict"), [("3", "NOT_REPRODUCED"), ("2", "REPRODUCED")])
def test_values_quoted_apart_that_now_agree(tmp_path: Path, quoted: str, verdict: str) -> None:
    """Two values the issue prints side by side and quotes as different print the same value
    now: the disagreement it reports is gone (and where the quote already agrees, the output
    is the issue's own)."""
    body = SIDE_BY_SIDE.replace("QUOTED", quoted)
    doc = run_json(write_script(tmp_path, body, "Tensor.round and torch.round disagree"))
    assert (doc["verdict"], doc["oracle"]) == (verdict, "quoted-output"), doc
    if verdict == "NOT_REPRODUCED":
        assert doc["detail"].startswith("the values the issue quotes as disagreeing now agree")


OBJECT_ONLY = "import torch\nm = torch.nn.Linear(2, 2)\nopt = torch.compile(m)\nopt.eval()\nprint(opt.training)\n"


@pytest.mark.parametrize(
    ("code", "signature", "body", "only"),
    [
        (OBJECT_ONLY, None, "", True),
        (OBJECT_ONLY + "print(opt(torch.ones(2)))\n", None, "", False),  # called
        (OBJECT_ONLY + "opt.forward(torch.ones(2))\n", None, "", False),
        (OBJECT_ONLY.replace("opt = torch.compile(m)", "torch.compile(m)"), None, "", False),
        ("import torch\n@torch.compile\ndef f(x):\n    return x\n", None, "", False),
        (OBJECT_ONLY, Signature("torch._dynamo.exc.Unsupported", "x", "text"), "", False),
        (OBJECT_ONLY, None, 'File "torch/_dynamo/eval_frame.py", line 3', False),
        ("import torch\nm = torch.nn.Linear(2, 2)\nprint(m.training)\n", None, "", False),
    ],
)
def test_code_about_the_compiled_object_itself(
    code: str, signature: Signature | None, body: str, only: bool
) -> None:
    """torch.compile's results bound to names that are never called: the issue is about the
    compiled object (a flag, a state_dict), not a compiled frame; not for a decorator, a result
    thrown away, or an issue quoting the compiler's error."""
    assert compiled_object_only(code, signature, body) is only


COMMENTS_EXPECTED = """
    ### 🐛 Describe the bug

    I expect rounding half away from zero, as in the comments below, but both lines print
    `tensor([2.])`.

    '''python
    import torch
    x = torch.tensor([2.5])
    print(torch.round(x))  # tensor([3.])
    print(torch.round(x - 1))  # tensor([2.])
    '''
"""


@pytest.mark.slow
def test_comments_the_prose_calls_expected_are_the_expected_output(tmp_path: Path) -> None:
    """ "As in the comments": the comments hold what the code should print, so a line that
    prints otherwise still shows the bug (never "the quoted values now agree")."""
    doc = run_json(write_script(tmp_path, COMMENTS_EXPECTED, "torch.round rounds half to even"))
    assert (doc["verdict"], doc["oracle"]) == ("REPRODUCED", "quoted-output"), doc
    assert doc["detail"].startswith("a line prints something other than what the issue expects")
