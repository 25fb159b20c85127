# contribkit repro runtime, part 2: the rules over the execution evidence (reprotrace's
# document), the same for every issue: what a NOT_REPRODUCED or a REPRODUCED lacks, and why a
# clean run decides nothing. Pure, no state. Embedded verbatim in every generated repro script
# after reprojudge.py (see contribkit.repro.plan.runtime_source), so it is standard-library
# only, runs on Python 3.9+, and has no __future__ imports.
from typing import Any, Dict, List, Optional


def missing_for_absence(ev: Dict[str, Any], needs: Dict[str, Any]) -> str:
    """What a NOT_REPRODUCED lacks ("" when the evidence holds it): the issue's code ran to its
    end (or a torch op raised, for the crash oracle), a torch operation ran, one the issue names
    where it names any, on the device it reports the bug on, under torch.compile where the code
    compiles. ``needs``: ``named`` (torch ops the issue names, resolved), ``device``,
    ``compile``, ``defines_only`` (the code only defines classes and functions), ``raised_op``.

    Classes (dev-set issues): a CUDA claim run on a CPU (76571 by davidberard98, 96613 by
    yuantailing, 174172 by Cookiee235); ops the title or error names, which ran (41817
    chain_matmul by mjkim720, 113037 torch.div by malfet); compile issues whose compiled frame
    ran (139202 by ezyang, 181817 by williamwen42). Code that only defines classes has no
    dev-set example: issue #21 reports it from a kept-aside set; tests hold a fixture."""
    if not ev.get("recorded"):
        return ""
    raised = needs.get("raised_op") or ""
    if not ev.get("ran_to_end") and not raised:
        return "the issue's code did not run to its end"
    if not ev.get("op_calls") and not ev.get("compiled_calls"):
        if needs.get("defines_only"):
            return "no torch operation ran: the code only defines classes and functions"
        return "no torch operation ran"
    named = list(needs.get("named") or [])
    called = list(ev.get("ops") or {}) + ([raised] if raised else [])
    # Ops inside compiled code are not recorded one by one: a compiled call stands for them.
    if (
        named
        and not ev.get("compiled_calls")
        and not any(same_op(c, n) for c in called for n in named)
    ):
        return "no operation the issue names (" + ", ".join(named[:4]) + ") ran"
    gap = device_gap(ev.get("devices") or [], needs.get("device"))
    if gap:
        return gap
    here, claimed = str(ev.get("platform") or ""), str(needs.get("platform") or "")
    if here and any(part not in here.split("-") for part in claimed.split("-") if part):
        return "the title names %s, but this machine is %s" % (claimed, here)
    counts = ev.get("compile") or {}
    # Code about the compiled object itself, which it never calls (evidence.compiled_object_only):
    # no frame is to be compiled, so long as none was tried.
    tried = ev.get("compiled_calls") or counts.get("frames")
    frames = counts.get("frames_ok") or counts.get("graphs")
    if needs.get("compile") and not frames and (tried or not needs.get("compiled_object")):
        return "the code uses torch.compile, but no compiled frame ran"
    return ""


def same_op(called: str, named: str) -> bool:
    """A recorded op is the one named: ``linalg_eigh`` for ``eigh``, ``index_add_`` for
    ``index_add`` (in place), ``__matmul__`` for ``matmul``."""
    called, named = called.strip("_"), named.strip("_")
    return called == named or called.endswith("_" + named)


DEVICE_GAP = "the issue reports the bug on "
CAUGHT = "a torch operation raised an error the issue's code caught"
# A clean run whose printed values the quoted-output oracle cannot decide (testgen reads it).
UNDECIDED_OUTPUT = "but what it printed neither matches nor clearly differs from the output"


def device_gap(ran_on: List[str], reported: Optional[str]) -> str:
    """Why operations on ``ran_on`` say nothing of a bug reported on ``reported`` ("": they do)."""
    if not reported or reported in ran_on:
        return ""
    where = ", ".join(ran_on) or "no device"
    return DEVICE_GAP + "%s, but its operations ran on %s" % (reported, where)


def missing_for_signature(raised_on: List[str], needs: Dict[str, Any]) -> str:
    """What a REPRODUCED from the issue's error lacks ("" when it holds): the error was raised on
    the device the issue reports the bug on, and the issue does not present it as the expected
    result (its expected behaviour quotes it), nor as the other side of a CPU-vs-CUDA contrast
    (raised on the CPU where the issue sets CPU against CUDA and names no wrong device).

    Classes: the expected error of a contrast ("CPU raises, which is what we want; CUDA does
    not"), from issue #21's kept-aside sets; the dev set's contrasts (31250 by ousou, 180154 by
    beanduan22) compare values, not errors, so the dev set has no example; tests hold one."""
    if needs.get("error_expected"):
        return "the issue presents this error as the expected result"
    gap = device_gap(raised_on, needs.get("device")) if raised_on else ""
    if gap:
        return gap.replace("its operations ran", "the error was raised")
    if needs.get("contrast") and not needs.get("device") and raised_on == ["cpu"]:
        return (
            "the issue sets CPU against CUDA and the error was raised on the CPU: the issue may"
            " call that side correct"
        )
    return ""


# The oracles whose REPRODUCED shows the issue's own failure wherever it ran: its error, or a
# value it reports. Not "any error" nor an assert: a CPU run of CUDA code can fail for the CPU
# alone (a dtype not implemented there, pin_memory, "Torch not compiled with CUDA enabled").
_SHOWN_HERE = ("signature", "quoted-output", "stated-value")


def evidence_rule(
    doc: Dict[str, Any],
    needs: Dict[str, Any],
    verdict: str,
    oracle: str,
    raised: "Optional[tuple[str, List[str]]]",
) -> "tuple[str, str]":
    """The rule a definite ``verdict`` must meet, and what ``doc`` (the evidence) lacks ("" when
    nothing); ``raised``: the torch op that raised the issue's error, with its devices."""
    if verdict == "NOT_REPRODUCED":
        if oracle == "missing-error" and not needs.get("raised_op"):
            # classify_error took the error for torch.compile's own (no op raised it)
            needs = dict(needs, raised_op="torch.compile")
        rule = (
            "NOT_REPRODUCED needs the issue's code run to its end, a torch operation it"
            " names called, on the device it reports, under torch.compile where it compiles"
        )
        missing = missing_for_absence(doc, needs)
        if not missing and oracle in ("no-error", "signature") and doc.get("caught"):
            # Class: the reported call inside try/except (issue #21's kept-aside sets; the dev
            # set's try blocks re-raise or print the error the signature matches).
            missing = CAUGHT + " (%s)" % doc["caught"]
        return rule, missing
    if verdict == "REPRODUCED" and oracle in _SHOWN_HERE and not needs.get("device_claimed"):
        # The device came from rewriting the code's CUDA calls, not from a claim: that is where
        # the reporter ran, and the failure showing here shows the bug is not CUDA's alone.
        # Classes: the reported error raised on the CPU (dev 96613's kind of rewrite), a value
        # still wrong against float64 on the CPU (dev 20551: CPU norm 2.4% off).
        needs = dict(needs, device=None)
    if oracle == "signature" and raised is not None:
        rule = (
            "REPRODUCED from the issue's error needs it raised on the device the issue"
            " reports, and not presented as the expected result"
        )
        return rule, missing_for_signature(raised[1], needs)
    rule = "a definite verdict needs the operations run on the device the issue reports"
    if oracle == "signature":
        return rule, missing_for_signature(doc["devices"], needs)
    return rule, device_gap(doc["devices"], needs.get("device"))


def clean_run(how: str, evidence: Dict[str, Any], expected: str) -> "tuple[str, str, str]":
    """NOT_REPRODUCED by the signature (``expected``, as the issue reports it): the code ran to
    its end without the reported error, unless it may have hidden the error or does not hold
    the line that failed."""
    unseen = evidence.get("path_unseen")
    if unseen:
        detail = ", but the issue's traceback fails on " + repr(unseen) + ", which its code"
        return "CANNOT_RUN", how + detail + " does not hold: add the code that runs that line", ""
    if evidence.get("catches"):
        detail = " and printed no " + expected[:120] + ", but the code catches errors"
        detail += " (try/except): remove the try/except, or print the error it catches"
        return "CANNOT_RUN", how + detail, ""
    return "NOT_REPRODUCED", how + " without " + expected, "signature"


def ran_through(marks: "List[tuple[int, int]]", unit: Any) -> bool:
    """The statement of ``unit`` ran to its end at least once: its mark was followed at once
    by the mark after it (contribkit.repro.missingerror.THROUGH, -2), not by an error."""
    return any(marks[i][0] == unit and marks[i + 1][0] == -2 for i in range(len(marks) - 1))


def judge_missing(
    how: str,
    wanted: Dict[str, Any],
    marks: "List[tuple[int, int]]",
    doc: Optional[Dict[str, Any]],
) -> "tuple[str, str, str]":
    """A clean run of code whose comment says its statement should raise
    (contribkit.repro.missingerror): the error is still missing, REPRODUCED, where a torch
    operation ran (``doc``: the execution evidence, None when not recorded) and that statement
    ran through (``marks``: the units entered and left; not where an error in a thread ended
    it)."""
    if not ran_through(marks, wanted.get("unit")):
        return (
            "CANNOT_RUN",
            how + ", but the line a comment says should raise never ran through",
            "",
        )
    if doc is not None and not (doc.get("op_calls") or doc.get("compiled_calls")):
        return "CANNOT_RUN", how + ", but no torch operation ran", ""
    detail = how + ": the line a comment says should raise still raises no error"
    return "REPRODUCED", detail, "missing-error"


def undecided(how: str, evidence: Dict[str, Any]) -> str:
    """Why a clean run decides nothing: what the issue gave, and what would decide."""
    if evidence.get("units"):
        return how + ", " + UNDECIDED_OUTPUT + " the issue quotes: compare them, or add an assert"
    stated = evidence.get("stated") or []
    if stated:
        pairs = ", ".join("%s (not %s)" % (p["actual"], p["expected"]) for p in stated[:3])
        return (
            how + ", but no line it printed shows one value alone of those the issue states the"
            " code gives: " + pairs + ": print that result, or add an assert"
        )
    if evidence.get("pair"):
        return (
            how + ", but the two values it printed last are not values of one kind shown at one"
            " precision: compare them, or add an assert"
        )
    return (
        how + "; the issue gives nothing to compare with (no traceback, assert or quoted"
        " output): add an assert, or fill in check()"
    )
