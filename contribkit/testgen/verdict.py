"""What a repro said last, and whether a regression test may be written from it.

``test --from-repro`` reads the repro's verdicts from the newest run record that ran it (what
``contribkit run`` saw), else runs ``repro.py`` once. A test is written from a repro that
REPRODUCED (it fails now for the issue's reason) or that could not run for lack of a device (the
test is then for that device only; also where the run on CPU instead ran the code but could not
decide what it printed); a repro that fixed code no longer reproduces gives a test
with a note. An INCOMPLETE repro, one that failed with a different error, or one whose error has
no signature to compare is refused: a test from it would fail for another reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from contribkit.core.confine import leg_space, run_code, working_tree
from contribkit.core.errors import BadInput
from contribkit.core.sandbox import Sandbox
from contribkit.core.verdict import parse_verdict
from contribkit.run.record import records_newest_first
from contribkit.target.reprorules import UNDECIDED_OUTPUT

# CANNOT_RUN details that say a device is missing (reprolib's wording), and the device.
_NO_DEVICE = {
    "CUDA is not available here": "cuda",
    "device cuda is not available here": "cuda",
    "device mps is not available here": "mps",
    # The driver's device rule: a verdict reached on CPU for a bug the issue reports on CUDA
    # (a CUDA issue rewritten to --device, run with --device cpu) says nothing; CUDA decides.
    "the issue reports the bug on cuda": "cuda",
}
_ORACLE_TAG = re.compile(r"^\[[\w:-]+\] ")
# A fallback leg (``--device cpu`` where the device is missing) that ran the code to its
# end and printed values its quoted-output oracle could not decide: it says nothing about the
# device the bug is reported on, so the test is for that device, as if no leg had run. The
# class: a CUDA issue quoting what a reduction of random inputs gives on CPU and on CUDA (dev
# set 20551, torch.norm of a rand tensor and of its .to(device) copy; the sum of a rand tensor
# and of its .cuda() copy, tests/testgen/test_fromrepro_oracles.py's fixture).
_UNDECIDED_FALLBACK = re.compile(r"^completed on \w+, " + re.escape(UNDECIDED_OUTPUT))
# The decorator that restricts a device-generic test to each device.
ONLY_DEVICE = {"cuda": "onlyCUDA"}
REPRO_TIMEOUT_S = 600.0


@dataclass
class ReproVerdict:
    word: str  # REPRODUCED, NOT_REPRODUCED, CANNOT_RUN; NOT_AVAILABLE: the run had no such device
    detail: str
    device: str


@dataclass
class Verdicts:
    """The repro's latest verdicts, where they come from, and whether it ever REPRODUCED."""

    found: list[ReproVerdict]
    origin: str  # "run record ID" or "repro.py, run just now"
    reproduced_before: str | None = None  # the older record where it REPRODUCED


@dataclass
class Gate:
    """What the verdicts allow: a test (for one device only, when ``device``), with notes."""

    device: str | None = None
    notes: list[str] = field(default_factory=list)
    oracle: str | None = None  # the oracle that decided the verdict the test is written from
    force: bool = False  # --force: a weaker test is written, with a note, instead of refused
    # Whether the test must fail here (the repro REPRODUCED) or pass (it no longer does), as
    # the self-check runs it; None: no outcome is expected here (a device is missing).
    expect_failure: bool | None = None


def missing_device(verdict: ReproVerdict) -> str | None:
    if verdict.word == "NOT_AVAILABLE":
        return verdict.device
    if verdict.word != "CANNOT_RUN":
        return None
    # The verdict line names the deciding oracle first ("[device] device cuda is not …").
    detail = _bare_detail(verdict)
    return next((d for text, d in _NO_DEVICE.items() if detail.startswith(text)), None)


def _undecided_fallback(verdict: ReproVerdict) -> bool:
    if verdict.word != "CANNOT_RUN" or verdict.device == "default":
        return False
    return bool(_UNDECIDED_FALLBACK.match(_bare_detail(verdict)))


def _bare_detail(verdict: ReproVerdict) -> str:
    """A CANNOT_RUN's detail without the verdict word and the deciding oracle's tag."""
    return _ORACLE_TAG.sub("", verdict.detail.removeprefix("CANNOT_RUN: "))


def oracle_of(verdict: ReproVerdict) -> str | None:
    """The oracle a verdict line names ("[crash] the process was killed by SIGFPE")."""
    found = _ORACLE_TAG.match(verdict.detail.removeprefix(f"{verdict.word}: "))
    return found.group(0).strip()[1:-1] if found else None


def recorded_verdicts(root: Path, script: Path) -> Verdicts | None:
    """The verdicts of ``script`` in the newest run record that ran it, else None."""
    target = script.resolve()
    latest: Verdicts | None = None
    for path, record in records_newest_first(root):
        cells = [c for c in record.cells if (root / c.file).resolve() == target]
        if not cells:
            continue
        if latest is None:
            latest = Verdicts(
                [
                    ReproVerdict(c.verdict or c.status, c.detail, c.device)
                    for c in cells
                    if c.verdict or c.status == "NOT_AVAILABLE"
                ],
                f"run record {path.stem}",
            )
            if any(v.word == "REPRODUCED" for v in latest.found):
                return latest
        elif any(c.verdict == "REPRODUCED" for c in cells):
            latest.reproduced_before = path.stem
            break
    return latest


def run_verdicts(python: str, script: Path, scrub: list[str], sandbox: Sandbox) -> Verdicts:
    """Run ``repro.py`` on its default device (and on CPU when that device is missing and the
    code can run on CPU), confined as ``contribkit run`` runs it."""
    found = []
    for device in (None, "cpu"):
        argv = [python, script.name, *(["--device", device] if device else [])]
        try:
            with leg_space() as space:
                result = run_code(
                    argv,
                    space=space,
                    sandbox=sandbox,
                    python=python,
                    readable=working_tree(script),
                    cwd=script.parent,
                    env={"PYTHONDONTWRITEBYTECODE": "1"},
                    scrub=scrub,
                    gpu=device is None,
                    timeout=REPRO_TIMEOUT_S,
                )
        except OSError as exc:
            raise BadInput(
                f"could not run {script} ({exc})", hint="pass --python with your PyTorch build"
            ) from exc
        parsed = parse_verdict(result.output)
        if parsed is None:
            raise BadInput(
                f"{script} gave no verdict (exit {result.returncode})",
                hint=f"run it yourself: python {script}",
            )
        verdict = ReproVerdict(*parsed, device=device or "default")
        found.append(verdict)
        if not verdict.detail.endswith("(try --device cpu)"):
            break
    return Verdicts(found, "repro.py, run just now")


def judge(verdicts: Verdicts, force: bool) -> Gate:
    """May a regression test be written from these verdicts? Raises BadInput when not (unless
    ``force``)."""
    found = verdicts.found
    said = "; ".join(f"{v.device}: {v.word} {v.detail}".strip() for v in found) or "no verdict"
    where = f"(latest verdict, from {verdicts.origin}: {said})"
    reproduced = [v for v in found if v.word == "REPRODUCED"]
    if reproduced:
        return Gate(
            notes=[f"the repro REPRODUCED {where}: the test fails until the fix"],
            oracle=oracle_of(reproduced[0]),
            expect_failure=True,
        )
    ran = [v for v in found if not missing_device(v)]
    devices = [d for d in map(missing_device, found) if d]
    if devices and all(_undecided_fallback(v) for v in ran):
        return _device_gate(devices[0], where)
    if ran and all(v.word == "NOT_REPRODUCED" for v in ran):
        before = verdicts.reproduced_before
        return Gate(
            oracle=oracle_of(ran[0]),
            expect_failure=False,
            notes=[
                f"the repro REPRODUCED in run record {before}, and no longer {where}: the test "
                "passes with the fix"
                if before
                else f"the repro does not reproduce here {where}: check that the test fails "
                "without your fix"
            ],
        )
    if force:
        return Gate(notes=[f"written with --force from a repro that did not reproduce {where}"])
    raise BadInput(
        f"the repro did not reproduce the issue {where}: a test from it would fail for "
        "another reason",
        hint="fix repro.py until `contribkit run` says REPRODUCED, or pass --force",
    )


def _device_gate(device: str, where: str) -> Gate:
    if device not in ONLY_DEVICE:
        raise BadInput(
            f"the repro needs {device}, which is not available here {where}",
            hint="run `contribkit test --from-repro` where that device is",
        )
    return Gate(
        device,
        [
            f"the repro could not run for lack of {device} {where}: the test is "
            f"@{ONLY_DEVICE[device]}; run it where {device} is to see it fail"
        ],
    )
