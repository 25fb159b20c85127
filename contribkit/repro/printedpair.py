"""Two results the code prints last, which the prose says should agree and do not.

The class: a report whose code ends by printing two computations of one quantity, and whose
prose says they differ: "the L1 loss is not equal to `torch.abs(x - y).mean()`" under
``print(nn.L1Loss()(a, b))`` / ``print((a - b).abs().mean())``; "`fmod` gives a different
result from the formula" under ``print(c)`` / ``print(d)``; "the two results should be the
same" under a torch and a NumPy print. A human runs the code and reads whether the two printed
values still differ. The oracle holds only where the issue gives no other (no traceback,
assert, quoted output or stated value: those decide first) and where the two prints are
the two results compared (see ``mark_pair``). The runtime (``reprojudge.judge_printed_pair``)
reads the two printed values: the same text: ``NOT_REPRODUCED``; texts that differ only in
their numbers, by more than a float's rounding: ``REPRODUCED``; anything else (a dtype, a
label, a sign of zero apart; a summarised tensor): no verdict.
"""

from __future__ import annotations

import ast
import re

from contribkit.core.astnames import dotted
from contribkit.repro.codefacts import RANDOM_CALL, RANDOM_INIT, Edit, marks_around

# The prose says two results differ, or should agree: "is not equal to", "are not the same",
# "should be equal", "different results", "differs from", "doesn't match".
_DISAGREE = re.compile(
    r"\b(?:is|are|was|were)\s*(?:n[o']t|not)\s+(?:equal|the\s+same|identical|consistent)\b"
    r"|\bnot\s+equal\s+to\b"
    r"|\b(?:should|must|expected\s+to|supposed\s+to|ought\s+to)\s+(?:both\s+)?(?:be\s+)?"
    r"(?:equal|the\s+same|identical|consistent|match)\b"
    r"|\b(?:different|inconsistent|mismatch(?:ed|ing)?)\s+(?:results?|values?|outputs?|answers?)\b"
    r"|\b(?:results?|values?|outputs?|answers?)\s+(?:are\s+|is\s+)?(?:different|inconsistent)\b"
    r"|\bdiffer(?:s|ent)?\s+(?:from|than|to)\b"
    r"|\b(?:does|do)\s*(?:n[o']t|not)\s+(?:equal|match)\b",
    re.I,
)
# The prose wants them to differ, or says they are the same now: then equal prints are the
# bug, which this oracle never reads ("should produce different values", "the two generators
# produce the same values").
_WANTS_DIFFERENT = re.compile(
    r"\b(?:should|must|expect\w*|supposed\s+to)\s+(?:\w+\s+){0,2}?(?:different|differ)\b"
    r"|\b(?:should|must|expected\s+to)\s+not\s+be\s+(?:equal|the\s+same|identical)\b"
    r"|\bdifferent\s+(?:\w+\s+){0,2}(?:is|are)\s+expected\b"
    r"|\b(?:are|is|produces?|gives?|returns?|prints?)\s+(?:exactly\s+)?(?:the\s+same|identical"
    r"|equal)\b",
    re.I,
)
# What the claim says differs, where it is no printed value of one computation: a gradient,
# a shape or type, a speed or a size in memory.
_OTHER_QUANTITY = re.compile(
    r"\b(?:grad\w*|shapes?|sizes?|dtypes?|types?|devices?|speed|time|timings?|fast\w*|slow\w*"
    r"|memory|latency)\b",
    re.I,
)
# A printed expression that shows no value of a computation: a shape, a type, a device, a time.
_NOT_A_VALUE = re.compile(
    r"\.(?:dtype|shape|device|size\(\)|stride\(\)|is_contiguous\(\))\s*$|^(?:type|len)\(|\btime\b"
    r"|perf_counter|elapsed|timeit|Timer|benchmark"
)


def _claim_sentences(prose: str) -> list[str]:
    """The sentences of ``prose`` that say two results differ (up to ". " or a line's end:
    "torch.abs" holds a dot)."""
    found = []
    for match in _DISAGREE.finditer(prose):
        start = max(prose.rfind(". ", 0, match.start()), prose.rfind("\n", 0, match.start()))
        ends = [i for i in (prose.find(". ", match.end()), prose.find("\n", match.end())) if i >= 0]
        found.append(prose[start + 1 : min(ends, default=len(prose))])
    return found


def other_quantity(title: str) -> bool:
    """The title speaks of a quantity other than the printed values (a speed, a shape, a
    gradient, memory): two printed numbers then may not be the ones it means."""
    return bool(_OTHER_QUANTITY.search(title) or re.search(r"\bslow|\bfast", title, re.I))


def claims_disagreement(prose: str) -> bool:
    """The prose says two results differ or should agree, of their values (not a gradient, a
    shape, a speed), and does not want them to differ nor say they are the same."""
    if _WANTS_DIFFERENT.search(prose):
        return False
    return any(not _OTHER_QUANTITY.search(s) for s in _claim_sentences(prose))


# What the claim compares with, where the code may not compute it: another library, Python's
# own operators, the documentation ("different from numpy.round", "differs from Python's //",
# "different from what the documentation describes").
_TARGET = re.compile(
    r"\b(?:numpy|np|scipy|math|python|matlab|tensorflow|jax|docs?|documentation|documented"
    r"|described|describes)\b|//",
    re.I,
)
_TARGET_IN_CODE = {"numpy": "np", "np": "np", "scipy": "scipy", "math": "math", "//": "//"}


def _same_pair(prose: str, shown: list[ast.expr], tree: ast.Module) -> bool:
    """The two printed expressions are the two results the claim compares: not an input
    printed beside its result (``print(x)`` / ``print(torch.round(x))``), not two outputs of
    one call (``out, inverse = torch.unique(...)``), and holding what the claim compares with
    where it names another library or Python's ``//`` (never the documentation)."""
    first, second = (ast.unparse(e) for e in shown)
    for name, other in ((shown[0], second), (shown[1], first)):
        if isinstance(name, ast.Name) and re.search(rf"\b{re.escape(name.id)}\b", other):
            return False
    names = [e.id for e in shown if isinstance(e, ast.Name)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple):
            unpacked = {t.id for t in node.targets[0].elts if isinstance(t, ast.Name)}
            if len(names) == 2 and set(names) <= unpacked:
                return False
    for sentence in _claim_sentences(prose):
        for target in _TARGET.findall(sentence):
            token = _TARGET_IN_CODE.get(target.lower())
            if token is None or token not in first + second:
                return False
    return True


def _printed_value(stmt: ast.stmt) -> ast.expr | None:
    """What ``print(x)`` or ``print("label", x)`` shows: one value of a computation, printed
    with no keywords; None for any other statement."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    if dotted(call.func) != "print" or call.keywords:
        return None
    shown = [a for a in call.args if not isinstance(a, ast.Constant)]
    if len(shown) != 1 or isinstance(shown[0], (ast.JoinedStr, ast.Starred)):
        return None
    return None if _NOT_A_VALUE.search(ast.unparse(shown[0])) else shown[0]


_UNSET = re.compile(r"(?:^|\.)(?:empty|empty_like|new_empty|empty_strided)$")


def _only_pair(tree: ast.Module) -> bool:
    """The code prints nothing but the last two statements, takes no device by fallback
    (``"xpu" if torch.xpu.is_available() else "cpu"``: the pair may not be the one claimed),
    and draws random values once at most (two draws: the two results are of other inputs)."""
    calls = [dotted(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]
    draws = [c for c in calls if RANDOM_CALL.search(c) and not RANDOM_INIT.search(c)]
    unset = any(map(_UNSET.search, calls))  # values no one wrote: never compared
    fallback = any(c.endswith("is_available") for c in calls)
    return calls.count("print") == 2 and not fallback and len(draws) <= 1 and not unset


def mark_pair(tree: ast.Module, prose: str, first_unit: int) -> tuple[list[Edit], list[int]]:
    """Marks for the two prints that end the code, as units ``first_unit`` and the next, where
    the prose claims they disagree; ``([], [])`` otherwise."""
    if len(tree.body) < 2 or not claims_disagreement(prose):
        return [], []
    last = tree.body[-2:]
    shown = [e for e in map(_printed_value, last) if e is not None]
    if len(shown) != 2 or not _only_pair(tree) or not _same_pair(prose, shown, tree):
        return [], []
    units = [first_unit, first_unit + 1]
    return marks_around(last[0], units[0]) + marks_around(last[1], units[1]), units
