"""Two results the code prints last, which the prose says should agree and do not.

The class: a report whose code ends by printing two computations of one quantity, and whose
prose says they differ: "the L1 loss is not equal to `torch.abs(x - y).mean()`" under
``print(nn.L1Loss()(a, b))`` / ``print((a - b).abs().mean())``; "`fmod` gives a different
result from the formula" under ``print(c)`` / ``print(d)``; "the two results should be the
same" under a torch and a NumPy print. A human runs the code and reads whether the two printed
values still differ. The oracle holds only where the issue gives no other (no traceback,
assert, quoted output or stated value: those decide first) and where the prose does not want
the two to differ ("should be different"). The runtime (``reprojudge.judge_pair``) reads the
two printed values: they differ even at the coarser precision of the two prints:
``REPRODUCED``; they print the same values at the same precision: ``NOT_REPRODUCED``;
anything else (other kinds of value, a summarised tensor, one print coarser than the other
that agrees with it): no verdict.
"""

from __future__ import annotations

import ast
import re

from contribkit.core.astnames import dotted
from contribkit.repro.codefacts import Edit

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
# The prose wants them to differ: then equal prints are the bug, which this oracle never reads.
_WANTS_DIFFERENT = re.compile(
    r"\b(?:should|must|expected\s+to)\s+(?:not\s+be\s+(?:equal|the\s+same|identical)"
    r"|be\s+different|differ)\b",
    re.I,
)


def claims_disagreement(prose: str) -> bool:
    """The prose says two results differ or should agree, and does not want them to differ."""
    return bool(_DISAGREE.search(prose)) and not _WANTS_DIFFERENT.search(prose)


def _printed_value(stmt: ast.stmt) -> bool:
    """``print(x)`` or ``print("label", x)``: one value printed, no keywords."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    if dotted(call.func) != "print" or call.keywords:
        return False
    shown = [a for a in call.args if not isinstance(a, ast.Constant)]
    return len(shown) == 1 and not isinstance(shown[0], (ast.JoinedStr, ast.Starred))


def mark_pair(tree: ast.Module, prose: str, first_unit: int) -> tuple[list[Edit], list[int]]:
    """Marks for the two prints that end the code, as units ``first_unit`` and the next, where
    the prose claims they disagree; ``([], [])`` otherwise."""
    if len(tree.body) < 2 or not claims_disagreement(prose):
        return [], []
    last = tree.body[-2:]
    if not all(_printed_value(stmt) for stmt in last):
        return [], []
    edits: list[Edit] = []
    units = [first_unit, first_unit + 1]
    for unit, stmt in zip(units, last, strict=True):
        end = stmt.end_lineno or stmt.lineno
        end_col = stmt.end_col_offset or 0
        start = (stmt.lineno, stmt.col_offset)
        edits.append(Edit(*start, *start, "", f"_repro.mark({unit}); "))
        edits.append(Edit(end, end_col, end, end_col, "", "; _repro.mark(-1)"))
    return edits, units
