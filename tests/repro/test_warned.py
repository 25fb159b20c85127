"""The warning oracle: the claim read from an issue, and the runtime's judgement."""

from __future__ import annotations

import pytest

from contribkit.repro.warned import WarningClaim, warning_claim
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


def test_the_warning_raised_decides() -> None:
    wanted = CLAIM.runtime()
    raised = ["UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In"]
    assert judge_warning(wanted, raised, "")[0] == "REPRODUCED"
    on_stderr = "x.py:3: " + raised[0] + "\n"
    assert judge_warning(wanted, [], on_stderr)[0] == "REPRODUCED"
    other = ["FutureWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`."]
    verdict, detail = judge_warning(wanted, [*other, "UserWarning: something else entirely"], "")
    assert verdict == "NOT_REPRODUCED" and detail.endswith("the issue reports: UserWarning")
