"""An error the issue says its code should raise, and which it does not raise.

The class: a report whose complaint is the error that is missing, said of one line ("# this
line should fail yet it doesn't" on a compile call with a testing option, pytorch 131150 by
a reporter on torch 2.4) or of the code ("Reproduce (CPU): runs fine but it should throw an
error" above an LSTM called with a hidden state of the wrong batch, pytorch 6178). A human
runs the code: a clean run still shows the bug; an error torch raises now, from that line where
the issue names one, is the fix. The oracle holds only where the issue gives no other (no
traceback, assert, quoted output, stated value, crash: those decide first), and never for
"silently" alone (the complaint may be a wrong value, not a missing error), "should not raise"
(the error is the bug), or a CPU-vs-CUDA contrast (one device's error is the behaviour wanted).
"""

from __future__ import annotations

import ast
import re

from contribkit.repro.codefacts import Edit

# "should fail", "must raise", "is supposed to throw an error", "ought to error", "instead of
# raising", "I'd expect an error"; not "should not raise", "shouldn't fail", "should raise a
# warning".
SHOULD_RAISE = re.compile(
    r"\b(?:should|must|supposed\s+to|ought\s+to)\s+(?:have\s+)?(?:also\s+)?(?:be\s+)?"
    r"(?:raised?|raising|throw(?:n|ing)?|error(?:ed)?|fail(?:ed)?|rejected)\b"
    r"(?![^.\n]{0,20}\bwarn)"  # "should raise a deprecation warning": no error wanted
    r"|\binstead\s+of\s+(?:raising|throwing)\b"
    r"|\bexpect(?:ed|ing)?\s+(?:an?\s+|some\s+)?(?:error|exception)\b",
    re.I,
)
# A line the code shows failing as it should (the control beside the claim): "# this fails as
# expected", "# raises, as it should", "# expected to fail".
_FAILS_AS_EXPECTED = re.compile(
    r"\b(?:fails?|raises?|errors?|throws?)\b[^#\n]{0,20}\bas\s+(?:expected|it\s+should)\b"
    r"|\bexpected\s+to\s+(?:fail|raise|error|throw)\b",
    re.I,
)


def _simple_statements(tree: ast.Module) -> list[ast.stmt]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and not isinstance(getattr(node, "body", None), list)
    ]


def claimed_statement(
    tree: ast.Module, lines: list[str], comments: dict[int, str]
) -> tuple[ast.stmt | None, bool]:
    """The statement a code comment says should raise (its own line's comment, or a comment
    line just above it), and whether another line's comment shows an error the code should
    raise (a control): then only that statement's error is the fix. ``comments``: 1-based
    line -> its comment."""
    control = any(_FAILS_AS_EXPECTED.search(text) for text in comments.values())
    claims = [n for n, text in comments.items() if SHOULD_RAISE.search(text)]
    if len(claims) != 1:
        return None, control
    line = claims[0]
    for stmt in _simple_statements(tree):
        own = stmt.end_lineno == line
        above = stmt.lineno == line + 1 and not lines[line - 1].split("#", 1)[0].strip()
        if own or above:
            return stmt, control
    return None, control


def mark_claimed(stmt: ast.stmt, unit: int) -> list[Edit]:
    """Marks around ``stmt`` as unit ``unit``: an error raised while it runs leaves the unit
    open (the runtime's last mark)."""
    start = (stmt.lineno, stmt.col_offset)
    end = (stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
    return [
        Edit(*start, *start, "", f"_repro.mark({unit}); "),
        Edit(*end, *end, "", "; _repro.mark(-1)"),
    ]
