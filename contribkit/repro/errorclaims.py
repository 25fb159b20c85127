"""What an issue says of errors, in its prose and its code's comments: that the code fails
with one (``reports_error``, ``says_it_fails``), that the error is missing, that its wording is
the complaint (``about_message``) and what the message should say (``message_wants``), and
whether a reworded error still shows the failure (``failure_unwanted``). Read by
:mod:`contribkit.repro.evidence`; none decides a verdict alone.
"""

from __future__ import annotations

import re

from contribkit.issue.model import Signature
from contribkit.issue.parse.transcripts import prose_only

# The bug is a missing error or warning (under use_deterministic_algorithms, say): running twice
# and comparing the output cannot show it.
EXPECTS_ERROR = re.compile(
    r"\b(?:should|expected?\s+to|supposed\s+to|does\s*n[o']t|did\s*n[o']t)\s+"
    r"(?:raise|throw|error|warn|fail)",
    re.I,
)
_ERROR_WORDS = re.compile(
    r"\b(?:errors?|exceptions?|fails?|failed|failing|failure|raises?|raised|throws?|thrown)\b",
    re.I,
)
# "error" as a size, not an exception: "the relative error is 0.5", "max error: 1e-3".
_NUMERIC_ERROR = re.compile(
    r"\b(?:relative|absolute|abs|max(?:imum)?|mean|average|avg|numerical|numeric|rounding"
    r"|round-?off|approximation|precision|quantization|truncation|squared|reconstruction"
    r"|floating[\s-]point|accumulated|accumulation|L[12]|rel|total|tolerance|timeout|time-?out)"
    r"[\s_-]+errors?\b|\berrors?\s+(?:of|is|was|between|against|vs\.?|compared|tolerance|\d)"
    # "a large error in the output": a size of error is numerical only said of values (a
    # "huge error" alone is as often a long traceback)
    r"|\b(?:large|big|huge|significant|high|small|tiny)\s+errors?\s+(?:in|on|for)\s+(?:the\s+)?"
    r"(?:outputs?|results?|values?|gradients?|grads?|loss|predictions?)\b",
    re.I,
)
# An error that is absent ("there is no error", "without an error"): not a reported failure.
_NO_ERROR = re.compile(
    r"\b(?:no|without(?:\s+(?:an?|any))?|not\s+(?:an?|any))\s+(?:\w+\s+)?"
    r"(?:errors?|exceptions?|failures?)\b",
    re.I,
)
# The bug is an error that is missing, or the code is too slow: a clean run shows nothing.
_MISSING_ERROR = re.compile(
    # "should also raise", not "should not raise" / "should never fail" (the error is the bug)
    r"\bsilently\b|\b(?:should|expected?\s+to|supposed\s+to|ought\s+to)\s+(?:(?!not\b|never\b)\w+\s+)?"
    r"(?:raise|throw|error|fail|warn)|\b(?:does\s*n[o']t|did\s*n[o']t|never)\s+"
    r"(?:raise|throw|error|fail)|\bfail(?:s|ed)?\s+to\s+(?:raise|throw|error|warn)\b"
    r"|\bDID NOT RAISE\b"
    # an error wanted, not met: "returns garbage instead of an error", "I would expect an
    # error", "it would be better to raise"; not "warn instead of error" (the error is met)
    r"|\b(?:returns?|returned|gives?|gave|produces?|outputs?|succeeds?|works|runs)\b[^.\n]{0,60}?"
    r"\binstead\s+of\s+(?:an?\s+|any\s+)?(?:error|exception|raising|throwing)"
    r"|\bexpect(?:ed|s)?\s+(?:an?\s+|some\s+)?(?:error|exception)"
    r"|\b(?:better|preferable|nicer|helpful)\s+to\s+(?:raise|throw|error)",
    re.I,
)
_PERFORMANCE = re.compile(
    r"\b(?:slow(?:er|ly|ness|down)?|faster|speed(?:up)?|performance|latency|throughput"
    r"|memory\s+(?:leak|usage|grows|increases)|leaks?|OOM|out\s+of\s+memory)\b",
    re.I,
)
CODE_COMMENT = re.compile(r"#[^\n]*")
# The complaint is the error's wording or kind, not that the code fails: "misleading error
# message", "the error is confusing", "improve the error", "wrong exception type", "should be a
# ValueError". A changed message may then be the fix.
_ABOUT_MESSAGE = re.compile(
    r"\b(?:misleading|confusing|unclear|cryptic|unhelpful|uninformative|obscure|opaque|weird"
    r"|strange|odd|ugly|unreadable|wrong|incorrect|bad|poor|better|clearer|nicer|improved?"
    r"|improving|more\s+"
    r"(?:informative|helpful|descriptive|specific|meaningful)|proper|meaningful|informative"
    r"|helpful)\s+(?:\w+\s+){0,2}?(?:error|exception|message|msg|warning)s?\b"
    r"|\b(?:error|exception)\s+(?:message|msg|text|type|class)s?\s+(?:is|are|was|were|seems?)"
    r"\s+(?:\w+\s+)?(?:misleading|confusing|unclear|cryptic|wrong|incorrect|unhelpful|odd"
    r"|weird|strange|not\s+(?:clear|helpful|informative|correct|right))"
    r"|\bshould\s+(?:be|raise|throw)\s+(?:an?\s+)?\w*(?:Error|Exception)\b",
    re.I,
)
# What an issue about an error's wording wants the message to say: "I'd expect it to tell me
# overflow has happened", "the error should mention the dtype", "it would be helpful to include
# the ID of the value". The word is the one after the verb and its pronouns and articles.
_MESSAGE_WANTS = re.compile(
    r"\b(?:expect(?:ed)?|want(?:ed)?|should|would\s+like|would\s+prefer|hope[ds]?|helpful\s+to"
    r"|better\s+to|useful\s+to|nice\s+to)\b[^.\n]{0,40}?\b(?:tell|say|mention|state|report"
    r"|include|indicate|name|explain)s?\s+(?:(?:me|us|the\s+user|that|about|an?|the|its|which"
    r"|expected|actual|given|offending|real|correct|right|wrong|exact|proper|both|all|each"
    r"|every)\s+)*"
    r"(?P<word>[A-Za-z][\w-]+)",
    re.I,
)
_NOT = re.compile(r"\b(?:not|never|no)\b|n't\b", re.I)
# Words after the verb that say nothing of what the message should hold.
_NOT_WANTED_WORDS = {
    "what", "why", "where", "how", "when", "whether", "if", "something", "more", "exactly",
    "clearly", "explicitly", "it", "this", "there", "so", "is", "was", "has", "error",
    "message", "problem", "issue", "user", "wrong", "went", "happened", "correct", "right",
    "expected", "got", "input", "inputs", "tensor", "tensors", "argument", "arguments", "value",
    "values", "type", "thing", "cause", "reason", "details", "info", "information", "in", "on",
    "for", "to", "of", "with", "at", "by", "from", "as", "whose", "who", "both", "all", "each",
    "one", "any", "some", "these", "those", "every",
}  # fmt: skip


# A reported error that is a failure of torch itself (an internal assert, a memory fault, a
# library status): its fix is often a clear error raised on the same input.
_LOW_LEVEL = re.compile(
    r"INTERNAL ASSERT|CUDA error|illegal memory|device-side assert|CUBLAS_STATUS|CUDNN_STATUS"
    r"|cuDNN error|MIOPEN|unknown error|std::|Segmentation|core dumped|Floating point exception"
    r"|NVRTC|out of memory|Triton Error|can't allocate memory|invalid memory size|enforce fail"
    r"|cuda runtime error|aten/src/TH|\bMKL\b|LAPACK|cuSOLVER|cuFFT|MAGMA",
    re.I,
)


def _reporters_words(text: str, code: str) -> str:
    """What the reporter says: ``text`` less the code's lines, and the code's comments."""
    return f"{prose_only(text, code)}\n" + "\n".join(CODE_COMMENT.findall(code))


def failure_unwanted(
    text: str, code: str, signature: Signature | None, crash: bool, expected: bool
) -> bool:
    """The issue's complaint is that its code fails with the error it quotes (the code should
    run): not a crash, not an error it wants or one it wants worded otherwise or of another
    class, not a failure of torch itself (an internal assert, a memory fault). Then the same
    kind of error from the same operation, with a message reworded since, still shows it."""
    if signature is None or crash or expected or _LOW_LEVEL.search(str(signature)):
        return False
    said = _reporters_words(text, code)
    wanted = _MISSING_ERROR.search(said) or EXPECTS_ERROR.search(said)
    return not (wanted or _ABOUT_MESSAGE.search(said))


def about_message(text: str, code: str) -> bool:
    """The complaint is the error's wording or class ("a misleading error message", "a weird
    error deep in the kernel"), read in the prose and the code's comments."""
    said = _reporters_words(text, code)
    return bool(_ABOUT_MESSAGE.search(said))


def message_wants(text: str, code: str) -> list[str]:
    """The words an issue about an error's wording says the message should hold ("I'd expect
    it to tell me overflow has happened": ``overflow``); none where the issue is not about the
    message. Class: an overflow reported as a type error ("I'd expect it to tell me overflow has
    happened", pytorch 48114 by ezyang); tensors on two GPUs reported as a failed assertion
    ("say which gpus the tensors live on", pytorch 629 by pcmoritz)."""
    if not about_message(text, code):
        return []
    said = _reporters_words(text, code)
    found = _MESSAGE_WANTS.finditer(said)  # not "it should not mention CUDA"
    words = [m.group("word").lower() for m in found if not _NOT.search(m.group(0))]
    return [w for w in dict.fromkeys(words) if w not in _NOT_WANTED_WORDS][:3]


def reports_error(text: str, code: str) -> bool:
    """The issue says the code fails with an error (in its prose or the code's comments), so
    that a clean run does not reproduce it: not an error that is missing, not a numerical
    error ("the max error is 0.5"), not "no error", and not a slowness or memory report."""
    return says_it_fails(text, code) and not _PERFORMANCE.search(_reporters_words(text, code))


def says_it_fails(text: str, code: str) -> bool:
    """:func:`reports_error`, where a slowness may be said beside the failure (graph breaks
    that slow a model down, and a fullgraph compile that fails)."""
    said = _reporters_words(text, code)
    if _MISSING_ERROR.search(said):
        return False
    said = _NO_ERROR.sub(" ", _NUMERIC_ERROR.sub(" ", _FAILS_TO.sub(" ", said)))
    return bool(_ERROR_WORDS.search(said))


# "fails to match eager", "failed to converge": a result that is wrong, not an error raised;
# "fails to compile", "fails to export" stay failures.
_FAILS_TO = re.compile(
    r"\bfail(?:s|ed|ing)?\s+to\s+(?!compile|run|build|load|import|trace|export|lower|execute)\w+",
    re.I,
)
