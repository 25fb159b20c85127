"""The regression test checked once, before it is written, against the repro's verdict.

A regression test is worth writing only if it tells the bug from the fix. Its check can miss
the bug while looking right; the class: a reference that computes the same wrong value as the
code under test, because the bug is in the operation and not in its precision or backend (the
float64 ``torch.histc`` of an input whose min equals its max gives the same wrong bins, the
float64 ``torch.div(-x, inf, rounding_mode="floor")`` the same ``-1``: such tests also rule out
the reported value, see ``references``; eager gives what a function compiled with the eager
backend gives). So the test, rendered alone in a file of its own, runs once on the interpreter
the verdict came from, confined as the repro ran:

- the repro REPRODUCED: the test must fail here (the bug is here);
- the repro no longer reproduces: the test must pass here.

A test that disagrees is refused (``--force`` writes it with a note). A run that says nothing
(every variant skipped, no unittest summary) adds a note and decides nothing.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from contribkit.core.confine import leg_space, run_code
from contribkit.core.errors import BadInput
from contribkit.core.sandbox import Sandbox
from contribkit.testgen.files import plan_new_file
from contribkit.testgen.specs import MethodSpec
from contribkit.testgen.verdict import REPRO_TIMEOUT_S, Gate

_RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)
_SUMMARY = re.compile(r"^(OK|FAILED)\b(?: \((.*)\))?\s*$", re.M)


@dataclass(frozen=True)
class TestRun:
    ran: int  # tests unittest ran, skipped ones included
    skipped: int
    failed: bool  # a failure or an error
    tail: str  # the output's last lines, for the message

    @property
    def decides(self) -> bool:
        return self.ran > self.skipped


def read_unittest(output: str, returncode: int | None) -> TestRun:
    """What unittest's summary says ("Ran 2 tests", "FAILED (failures=1, skipped=1)")."""
    ran = _RAN.findall(output)
    summary = _SUMMARY.findall(output)
    tail = "\n".join(output.strip().splitlines()[-6:])
    if not ran or not summary:
        return TestRun(0, 0, returncode != 0, tail)
    word, counts = summary[-1]
    found = dict(
        (key.strip(), int(value))
        for key, _, value in (c.partition("=") for c in counts.split(","))
        if value.strip().isdigit()
    )
    return TestRun(int(ran[-1]), found.get("skipped", 0), word == "FAILED", tail)


def run_test_once(spec: MethodSpec, python: str, scrub: list[str], sandbox: Sandbox) -> TestRun:
    """Run ``spec`` alone in a new test file, confined, on ``python``."""
    with tempfile.TemporaryDirectory(prefix="contribkit-selfcheck-") as folder:
        path = Path(folder) / "test_selfcheck.py"
        path.write_text(plan_new_file(spec, path, path.name, None, "--path").after)
        with leg_space() as space:
            result = run_code(
                [python, path.name],
                space=space,
                sandbox=sandbox,
                python=python,
                readable=(Path(folder),),
                cwd=Path(folder),
                env={"PYTHONDONTWRITEBYTECODE": "1"},
                scrub=scrub,
                gpu=True,
                timeout=REPRO_TIMEOUT_S,
            )
    if result.timed_out:
        return TestRun(0, 0, True, f"timed out after {REPRO_TIMEOUT_S:.0f} s")
    return read_unittest(result.output, result.returncode)


def self_check(
    spec: MethodSpec, gate: Gate, python: str, scrub: list[str], sandbox: Sandbox
) -> list[str]:
    """Notes on the check, or BadInput when the test disagrees with the verdict (unless
    ``gate.force``). Nothing is run when the gate expects no outcome here (a device missing)."""
    if gate.expect_failure is None:
        return []
    run = run_test_once(spec, python, scrub, sandbox)
    if not run.decides:
        return [f"the test could not be checked here (it ran no test): {run.tail[-200:]}"]
    if run.failed == gate.expect_failure:
        said = "fails here, as the repro REPRODUCED" if run.failed else "passes here, as the fix"
        return [f"checked once before writing: the test {said}"]
    if gate.expect_failure:
        problem = (
            "the test passes here although the repro REPRODUCED: its check does not see the bug"
            " (a reference can compute the same wrong value)"
        )
        hint = (
            "add an assert of the value the issue expects to the code in repro.py (the test then"
            " checks that), and run it again; or pass --force to write this one anyway"
        )
    else:
        problem = (
            "the test fails here although the repro no longer reproduces: it would fail for"
            f" another reason ({run.tail.splitlines()[-1] if run.tail else 'no output'})"
        )
        hint = "fix repro.py until `contribkit run` agrees, or pass --force to write it anyway"
    if gate.force:
        return [f"written with --force: {problem}"]
    raise BadInput(problem, hint=hint)
