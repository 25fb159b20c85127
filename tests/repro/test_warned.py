"""The warning oracle: the claim read from an issue, and the runtime's judgement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contribkit.core.render import write_outputs
from contribkit.issue.model import Issue
from contribkit.issue.parse import parse_issue
from contribkit.repro.plan import plan_repro
from contribkit.repro.warned import WarningClaim, quoted_blocks, warning_claim
from contribkit.target.reprojudge import judge_warning

QUOTED = (
    "/opt/site-packages/torch/optim/lr_scheduler.py:200: UserWarning: Detected call of"
    " `lr_scheduler.step()` before `optimizer.step()`.\n  warnings.warn(\n"
)
CLAIM = WarningClaim(
    "UserWarning", "Detected call of `lr_scheduler.step()` before `optimizer.step()`."
)


@pytest.mark.parametrize(
    ("title", "prose", "claimed"),
    [
        ("StepLR warns about the call order", "I call the optimizer first.", True),
        ("StepLR and GradScaler", "This warning is raised even though I step first.", True),
        ("StepLR and GradScaler", "A spurious UserWarning shows up.", True),
        ("StepLR and GradScaler", "The learning rate is wrong.", False),  # context, not the bug
        ("StepLR should warn here", "It does not warn about the order.", False),  # wanted
        ("StepLR warns", "No warning is raised when I skip the step.", False),
        ("Warn when StepLR is stepped first", "", False),  # a request for a warning
        ("StepLR warns and training hangs", "", False),  # another symptom: the hang
        ("StepLR warns on every call", "", False),  # how often, not whether
        ("StepLR warns", "The warning message has a typo.", False),
    ],
)
def test_the_warning_is_claimed_only_where_it_is_the_complaint(
    title: str, prose: str, claimed: bool
) -> None:
    found = warning_claim(title, prose, QUOTED, "")
    assert (found == CLAIM) if claimed else found is None


def test_no_claim_for_a_bare_warning_or_the_expected_one() -> None:
    assert (
        warning_claim("x warns", "", "[W Context.cpp:80] Warning: TF32 is deprecated", "") is None
    )
    assert warning_claim("x warns", "", QUOTED, expected=QUOTED) is None
    assert warning_claim("x warns", "", "no warning quoted here", "") is None


def test_several_quoted_warnings_or_one_the_code_could_hide() -> None:
    other = "x.py:1: UserWarning: Implicit dimension choice for softmax has been deprecated\n"
    assert warning_claim("StepLR warns", "", other + QUOTED, "") is None  # which one?
    hidden = warning_claim("StepLR warns", "", QUOTED, "", code="warnings.simplefilter('ignore')")
    assert hidden is not None and hidden.hidden == "the code could hide it (simplefilter)"
    workers = warning_claim("x warns", "", QUOTED, "", code="DataLoader(d, num_workers=2)")
    assert workers is not None and workers.hidden.startswith("the code could hide it (num_workers")


def test_the_quote_is_read_from_output_blocks_and_comments_not_the_prose() -> None:
    fence = "`" * 3
    code = "import torch\nf()  # UserWarning: from a comment here\n"
    body = (
        "It gives a UserWarning: something about the indexing argument.\n"
        f"{fence}python\n{code}{fence}\n\n{fence}\nUserWarning: from the output block\n{fence}\n"
    )
    quoted = quoted_blocks(body, code)
    assert "from the output block" in quoted and "from a comment here" in quoted
    assert "indexing argument" not in quoted


def test_the_warning_raised_decides() -> None:
    wanted = CLAIM.runtime()
    raised = ["UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In"]
    assert judge_warning(wanted, raised, "")[0] == "REPRODUCED"
    on_stderr = "x.py:3: " + raised[0] + "\n"
    assert judge_warning(wanted, [], on_stderr)[0] == "REPRODUCED"
    other = ["FutureWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`."]
    verdict, detail = judge_warning(wanted, [*other, "UserWarning: something else entirely"], "")
    assert verdict == "REPRODUCED"  # the message, in another category: still warns
    assert detail.endswith("(a FutureWarning now)")
    verdict, detail = judge_warning(wanted, ["UserWarning: something else entirely"], "")
    assert verdict == "NOT_REPRODUCED" and detail.endswith("the issue reports: UserWarning")
    hidden = {**wanted, "hidden": "the code could hide it (catch_warnings)"}
    assert judge_warning(hidden, [], "")[0] == "CANNOT_RUN"


def test_a_warning_in_an_output_block_is_no_printed_line(tmp_path: Path) -> None:
    """Python writes warnings to stderr: a quoted output block's warning line (and the source
    line shown under it) is never compared with what the code prints."""
    fence = "`" * 3
    body = (
        "### 🐛 Describe the bug\n\nIt prints a spurious warning before the shape:\n\n"
        f"{fence}python\nimport torch\nprint(torch.ones(2).shape)\n{fence}\n\n"
        f"{fence}\n{QUOTED}torch.Size([2])\n{fence}\n"
    )
    issue = Issue(title="ones warns", body=body, number=9, repo="pytorch/pytorch", labels=[])
    plan = plan_repro(issue, parse_issue(issue))
    write_outputs(plan.output_files(tmp_path / "out"))
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    units = meta["evidence"]["units"]
    assert units[0]["actual"] == ["torch.Size([2])"], units
    assert meta["evidence"]["warning"]["category"] == "UserWarning"
