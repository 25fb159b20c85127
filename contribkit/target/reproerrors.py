# contribkit repro runtime, part 6: what an error the code raised says (pure, no state):
# the issue's own failure, the snippet's own breakage (a missing name or module), a machine short
# of memory or of a build tool, or an error eager raises where the compiled call returns.
# Embedded verbatim in every generated repro script after reproexpect.py and before reprolib.py
# (this file's imports of those files are dropped there; see
# contribkit.repro.plan.runtime_source), so it is standard-library only, runs on Python 3.9+,
# and has no __future__ imports.
import os
import re
from typing import Any, Callable, Dict, List, Optional

# contribkit:judge-import (the runtime module holds the other files' text above instead)
from contribkit.target.reproexpect import code_error, resource_error, toolchain_error
from contribkit.target.reprojudge import describe, signature_matches
from contribkit.target.reprorules import ran_through, same_op
from contribkit.target.reprotrace import main_file, raised_in_compile

# contribkit:end-judge-import


def eager_only_error(compiled: Callable[[], Any], eager: Callable[[], Any]) -> Optional[str]:
    """What differs when ``eager()`` raises a torch error and ``compiled()``, called on the same
    inputs, returns a value; None when both raise, both return, or eager's error is the code's."""
    try:
        eager()
        return None
    except Exception as exc:
        if code_error(exc) or resource_error(exc):
            return None
        error = describe(exc)
    try:
        compiled()
    except Exception:
        return None
    return ("eager raises " + error + ", but torch.compile returns a value on the same inputs")[
        :300
    ]


def signature_text(signature: Optional[Dict[str, str]]) -> str:
    """The failure the issue reports, ``Type: message`` ("" when it reports none)."""
    if not signature:
        return ""
    return signature["exc_type"] + (": " + signature["message"] if signature.get("message") else "")


def caught_reported(record: Any, signature: Optional[Dict[str, str]]) -> str:
    """The issue's error (its type and message) when it is the last error a torch op raised
    while the code still ran to its end (a try/except of the issue's caught it): its text; ""
    otherwise (an earlier caught error is not looked for: this can miss, never mislead)."""
    raised = record.raised if record is not None else None
    if not raised or not signature or not signature.get("message"):
        return ""
    exc = raised[0]
    return (
        describe(exc) if signature_matches(exc, signature["exc_type"], signature["message"]) else ""
    )


# The machine lacks an accelerator the code asks for (pin_memory, a CUDA call on a CPU build).
_NO_DEVICE = re.compile(
    r"Cannot access accelerator|not compiled with CUDA|no CUDA GPUs are available"
    r"|Found no NVIDIA driver|CUDA driver version is insufficient|No CUDA GPUs",
    re.I,
)


def _incidental(exc: BaseException) -> bool:
    """An error that says more about the snippet or the machine than about torch: a file, a
    network or a permission (OSError), an API that changed since the issue (TypeError: an
    unexpected keyword, a removed argument), the snippet's own breakage, a machine short of
    memory or of an accelerator. Such an error, with no signature to match, reproduces
    nothing."""
    machine = bool(_NO_DEVICE.search(str(exc)))
    return (
        isinstance(exc, (OSError, TypeError)) or code_error(exc) or resource_error(exc) or machine
    )


# Exception classes torch raises for many unrelated failures: one of them, with another
# message, is the only when the operation the issue names raised it.
_GENERIC = {"RuntimeError", "ValueError", "Exception", "AssertionError", "KeyError", "IndexError"}


# Words that say nothing of which failure a message is about.
# fmt: off
_COMMON_WORDS = frozenset((
    "the", "a", "an", "of", "for", "to", "in", "is", "are", "be", "been", "but", "and", "or",
    "not", "no", "with", "only", "got", "expected", "must", "should", "was", "were", "this",
    "that", "it", "its", "at", "on", "by", "as", "from", "than", "can", "cannot", "does", "do",
    "has", "have", "which", "when", "while", "all", "any", "one",
))
# fmt: on
_WORD = re.compile(r"[A-Za-z0-9_]*[A-Za-z][A-Za-z0-9_]*")
# A message about the API, not the failure: the call itself changed since the issue.
_API_CHANGED = re.compile(
    r"\bdeprecated\b|\bremoved\b|\brequires the \w+ (?:parameter|argument)", re.I
)


def _words(message: str, op: str) -> "set[str]":
    words = {w.lower() for w in _WORD.findall(message)}
    return words - _COMMON_WORDS - {op.lower()}


_FROM_RUNTIME_ERROR = {"ValueError", "IndexError", "NotImplementedError"}
# Oracles whose complaint is not an error: a compiled call failing otherwise says nothing of it.
_OTHER_COMPLAINTS = ("check_oracle", "recompiles", "graph_breaks", "stated", "units", "own_checks")
# BackendCompilerFailed's prefix, the same for every failure of a backend: not shared words.
_BACKEND = re.compile(r"\bbackend=(['\"])[^'\"]*\1\s+raised:")


def _reworded(exc: BaseException, sig: Dict[str, str], evidence: Dict[str, Any], op: str) -> bool:
    """The issue's complaint is that its code fails (``failure_unwanted``), and a torch
    operation raised the class of error it quotes, reworded: the operation the issue names,
    or any for a class as specific as NotImplementedError, with a message that shares two
    words with the quoted one (the operation's name and common words aside) and does not say
    the API changed. Torch rewords its errors between releases; the failure stays. Classes: an
    unsupported padding ("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported"
    in issue 72521 by OverLordGoldDragon, "Padding size 4 is not supported for 2D input" now;
    29863 by vincentqb), a mode's input check that names the dimensions otherwise. Not from
    inputs the repro made."""
    if not (evidence.get("failure_unwanted") and op) or evidence.get("inputs_made"):
        return False
    kind, got = sig["exc_type"].rsplit(".", 1)[-1], type(exc).__name__
    # torch's checks that raised RuntimeError now raise the Python class they mean (its
    # TORCH_CHECK_VALUE, _INDEX, _NOT_IMPLEMENTED): the same check, so long as the words agree.
    if got != kind and not (kind == "RuntimeError" and got in _FROM_RUNTIME_ERROR):
        return False
    if _incidental(exc) or _API_CHANGED.search(str(exc)):
        return False
    quoted, now = (_BACKEND.sub("", m) for m in (sig.get("message", ""), str(exc)))
    if len(_words(quoted, op) & _words(now, op)) < 2:
        return False
    named = evidence.get("named_ops") or []
    return kind not in _GENERIC or any(same_op(op, name) for name in named)


def _says_wanted(exc: BaseException, sig: Dict[str, str], wanted: Optional[List[str]]) -> str:
    """The word of ``wanted`` (what an issue about an error's wording wants its message to say,
    evidence.message_wants) that the message of ``exc`` says and the quoted message did not,
    for an error of the quoted class, where it says every word wanted: the complaint is
    answered. "" otherwise."""
    if not wanted or type(exc).__name__ != sig["exc_type"].rsplit(".", 1)[-1]:
        return ""
    quoted, now = sig.get("message", "").lower(), str(exc).lower()
    if not all(re.search(r"\b" + re.escape(w), now) for w in wanted):
        return ""
    new = [w for w in wanted if not re.search(r"\b" + re.escape(w), quoted)]
    return new[0] if new else ""


# Ops that turn a tensor into a Python value or an array: their error is of the conversion,
# not of the operation a comment says should raise (`f(x).item()  # should fail`). Named as
# op.strip("_") gives them (`__float__`, `_local_scalar_dense`).
_CONVERSIONS = {"item", "numpy", "tolist", "local_scalar_dense", "float", "int"}


def _missing_raised(
    exc: BaseException,
    wanted: Dict[str, Any],
    marks: "List[tuple[int, int]]",
    evidence: Dict[str, Any],
    op: str,
) -> str:
    """Why the error a torch operation (``op``) raised is the one a comment says its statement
    should raise (see contribkit.repro.missingerror), or "": raised while that statement ran
    (a line that fails as it should, a control, raises elsewhere), the first time it ran (a
    loop whose earlier pass ran clean still shows the bug), by an operation the title
    names where it names any, else by the statement's outermost call, not a conversion.
    Never a warning made an error, the snippet's breakage, an API changed since (a
    TypeError), the machine's, or an error from inputs the repro made."""
    unit = wanted.get("unit")
    if _incidental(exc) or isinstance(exc, Warning) or evidence.get("inputs_made"):
        return ""
    if not marks or marks[-1][0] != unit:
        return ""
    if ran_through(marks, unit):  # it ran clean before (a loop): this error may be another's
        return ""
    named = evidence.get("named_ops") or []
    if op.strip("_") in _CONVERSIONS:
        return ""
    if named and op != "torch.compile" and not any(same_op(op, n) for n in named):
        return ""
    call = wanted.get("call") or ""  # the statement's outermost call: not another op on it
    if not named and not (same_op(op, call) or (op == "torch.compile" and call == "compile")):
        return ""
    return "raises " + describe(exc) + " from the line a comment says should raise"


def _raised_here(exc: BaseException) -> bool:
    """``exc`` was raised by the script's own code (the issue's), not inside a library."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) == main_file()


def classify_error(
    exc: BaseException,
    signature: Optional[Dict[str, str]],
    evidence: Dict[str, Any],
    by_torch: bool = False,
    raised_op: str = "",
    marks: "Optional[List[tuple[int, int]]]" = None,
) -> "tuple[str, str, str]":
    """The verdict, detail and oracle for an exception the issue's code raised, given the
    issue's signature and the repro's evidence (see reprolib.Repro); ``by_torch``: a torch
    operation of the issue's code raised it (the execution evidence), ``raised_op`` its name;
    ``marks``: the units of the code's statements entered and left (reprolib.Repro.mark)."""
    sig = signature
    names = {cls.__name__ for cls in type(exc).__mro__}
    if sig and signature_matches(exc, sig["exc_type"], sig.get("message", "")):
        return "REPRODUCED", describe(exc), "signature"
    if isinstance(exc, ImportError):
        return "CANNOT_RUN", "missing module: " + describe(exc), ""
    if toolchain_error(exc):
        return "CANNOT_RUN", "torch.compile found no build tool it runs here: " + describe(exc), ""
    if type(exc).__name__ in ("NameError", "UnboundLocalError") and _raised_here(exc):
        # A snippet cut from a longer program: the name was defined in what was left out.
        detail = "the issue's code uses a name it never defines (" + describe(exc) + ")"
        return "CANNOT_RUN", detail + ": define it in repro.py", ""
    own = set(evidence.get("check_raises") or [])
    if not sig and (isinstance(exc, AssertionError) or names & own):
        return "REPRODUCED", "the issue's own check failed: " + describe(exc), "assert"
    if (
        evidence.get("graph_break")
        and "Unsupported" in names
        and "Observed exception" not in str(exc)
    ):
        return (
            "REPRODUCED",
            "fullgraph compile hit a graph break: " + describe(exc),
            "graph-break",
        )
    if evidence.get("crash") and not code_error(exc):
        detail = "raises " + describe(exc) + " instead of crashing"
        return "NOT_REPRODUCED", detail, "crash"
    if not raised_op and raised_in_compile(exc, main_file()):
        raised_op = "torch.compile"  # its error is torch's, as an op's is, where the title
        # says the code fails and no other oracle says what the complaint is (values, breaks)
        by_torch = bool(evidence.get("title_fails")) and not any(
            evidence.get(key) for key in _OTHER_COMPLAINTS
        )
    wanted = evidence.get("missing_error")
    if wanted and not sig and (by_torch or raised_op == "torch.compile"):
        fixed = _missing_raised(exc, wanted, marks or [], evidence, raised_op)
        if fixed:
            return "NOT_REPRODUCED", fixed + ": the error is no longer missing", "missing-error"
    if sig and _reworded(exc, sig, evidence, raised_op):
        detail = "raises " + describe(exc) + "; the issue reports " + signature_text(sig)[:160]
        return "REPRODUCED", detail + ": the same error from the same operation, reworded", "error"
    said = _says_wanted(exc, sig, evidence.get("message_wants")) if sig and by_torch else ""
    if said:
        detail = "raises " + describe(exc) + "; its message now says " + repr(said)
        return "NOT_REPRODUCED", detail + ", as the issue asks (the quoted one did not)", "message"
    if sig:
        detail = "different error: got " + describe(exc) + "; the issue reports "
        return "CANNOT_RUN", detail + signature_text(sig), ""
    # An error from inputs the repro made proves nothing, nor one whose words are the complaint.
    made = evidence.get("inputs_made") or evidence.get("about_message")
    if evidence.get("reports_error") and by_torch and not made and not _incidental(exc):
        detail = "raises " + describe(exc) + "; the issue reports an error and quotes none"
        return "REPRODUCED", detail, "error"
    return (
        "CANNOT_RUN",
        "error, and the issue gives no signature to compare: " + describe(exc),
        "",
    )
