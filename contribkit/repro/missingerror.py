"""An error a code comment says its statement should raise, and which it does not raise.

The class: a report whose complaint is the error that is missing, said on the line that should
raise ("# this line should fail yet it doesn't" on a compile call with a testing option,
pytorch 131150; "x.view(4, 2)  # should raise, returns a tensor", "# must throw here"). A human
runs the code: a clean run of that line still shows the bug; an error torch raises from that
line now is the fix. The oracle holds only where the issue gives no other (no traceback,
assert, quoted output, stated value, crash: those decide first) and only for one such comment.
Never where the code handles errors itself (try/except, ``pytest.raises``, ``assertRaises``, a
unittest case, ``suppress``: the error may be raised and caught), where the line holds a lambda
or a function (it may not run), or where the issue is about the error's wording. The prose
alone is too loose to decide by: "nothing should fail", "should warn instead of raising",
"raised to the power", "throw away the buffers", "the expected error is below 1e-6" (a review
of this rule found each).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from contribkit.repro.codefacts import Edit, marks_around

# "should fail", "must raise", "should throw an error", "should raise ValueError", "ought to
# error", "should be rejected"; not "should not raise", "shouldn't fail", "should raise a
# UserWarning", "should be raised to 0.1", "should throw away", "should fail only on ROCm".
SHOULD_RAISE = re.compile(
    r"\b(?:should|must|supposed\s+to|ought\s+to)\s+(?:also\s+)?(?:be\s+)?"
    r"(?:raised?|throw(?:n)?|error(?:ed)?|fail(?:ed)?|rejected)\b"
    r"(?!\s+(?:to|away|by|up|only|when|if|unless|in|on)\b)"
    r"(?![^.\n]{0,30}warn)",
    re.I,
)
# Before the claim in its comment: a subject or word that turns it round ("nothing should
# fail", "no reason why it should raise", "not sure it should fail"), a static checker's claim
# ("mypy should error here"), or a second `#` (a commented-out line: "# y = f(x)  # should
# fail" is no claim on the live line below it).
_NEGATED = re.compile(
    r"\b(?:nothing|no|none|why|not|never|only|if|whether|mypy|pyright|pyre|type[\s-]?check\w*"
    r"|lint\w*|ruff|flake8)\b|n't\b|#",
    re.I,
)
# After the claim: a question ("should fail?"), the behaviour met ("and it does": a control),
# a class of error named (a complaint about the class, not a missing error: "should raise
# ValueError", "should fail early, not with NotImplementedError").
_AFTER = re.compile(
    r"^[^.\n]*\?|\b(?:and|which)\s+it\s+does\b(?!\s*n['o]t)|\b[A-Z]\w*(?:Error|Exception)\b"
    # how it should fail, or what it raises now: the complaint is the error's kind or words
    # ("should fail with a clear error", "should fail saying sizes must be non-negative,
    # instead says integer multiplication overflow", "currently gives an internal assert")
    r"|(?i:\b(?:errors?|messages?|says?|saying|assert\w*|instead|currently|exceptions?|clear\w*"
    r"|specific|better|informative|helpful|with)\b)"
)
# A comment on its own line that speaks of more than the statement under it.
_MANY = re.compile(r"\b(?:both|these|those|following|all|below|next|each|every)\b", re.I)
# A line the code shows failing as it should (the control beside the claim): "# this fails as
# expected", "# raises, as it should", "# expected to fail", "# RuntimeError, good".
_FAILS_AS_EXPECTED = re.compile(
    r"\b(?:fails?|raises?|errors?|throws?)\b[^#\n]{0,20}\bas\s+(?:expected|it\s+should)\b"
    r"|\bexpected\s+to\s+(?:fail|raise|error|throw)\b|\b\w*Error\b[,:]?\s+(?:good|fine|ok|correct)\b"
    r"|\b(?:and|which)\s+it\s+does\b(?!\s*n['o]t)",
    re.I,
)
# The code handles errors itself: an error raised may be caught.
_HANDLES = ("assertRaises", "assertRaisesRegex", "raises", "suppress", "TestCase")


def claims_error(comment: str) -> bool:
    """The comment says its statement should raise, and does not turn the claim round, ask,
    show the error met, or name a class (see _NEGATED, _AFTER)."""
    match = SHOULD_RAISE.search(comment)
    if match is None or _NEGATED.search(comment[1 : match.start()]):
        return False
    return not _AFTER.search(comment[match.end() :])


def handles_errors(tree: ast.Module) -> bool:
    """The code catches errors or asserts they are raised (see _HANDLES)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            return True
        name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
        if isinstance(node, (ast.Attribute, ast.Name)) and name in _HANDLES:
            return True
    return False


def _simple_statements(tree: ast.Module) -> list[ast.stmt]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and not isinstance(getattr(node, "body", None), list)
    ]


@dataclass
class Claim:
    """The statement a comment says should raise."""

    stmt: ast.stmt
    control: bool  # another line's comment shows an error the code raises as it should
    call: str  # the statement's outermost call: the one whose error the comment means


def claimed_statement(tree: ast.Module, lines: list[str], comments: dict[int, str]) -> Claim | None:
    """The one statement a code comment says should raise (the comment on its last line, or
    on its own line just above it); None where no comment or several say so, the code handles
    errors itself, or the statement does not run once, through (see _runs_once_through).
    ``comments``: 1-based line -> its comment."""
    claims = [n for n, text in comments.items() if claims_error(text)]
    if len(claims) != 1 or handles_errors(tree):
        return None
    line, control = claims[0], any(map(_FAILS_AS_EXPECTED.search, comments.values()))
    alone = not lines[line - 1].split("#", 1)[0].strip()
    if alone and _MANY.search(comments[line]):
        return None
    for stmt in _simple_statements(tree):
        own = stmt.end_lineno == line and not alone
        above = stmt.lineno == line + 1 and alone
        if (own or above) and _runs_once_through(stmt):
            return Claim(stmt, control, _outer_call(stmt))
    return None


# A statement whose end the mark after it never sees (a return, a raise), or that runs its
# call more than once or maybe never (a lambda, a comprehension, a generator): its clean run or
# its error says nothing of the one call the comment means.
_NOT_THROUGH = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_MANY_RUNS = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _runs_once_through(stmt: ast.stmt) -> bool:
    if isinstance(stmt, _NOT_THROUGH):
        return False
    return not any(isinstance(node, _MANY_RUNS) for node in ast.walk(stmt))


def _outer_call(stmt: ast.stmt) -> str:
    """The name of the call the statement makes last, outermost (``clamp`` in ``y =
    torch.clamp(x.view(4, 2), ...)``, ``compile`` in ``torch.compile(f)(x)``): the one whose
    error the comment means; "" where the statement's value is no call."""
    node = getattr(stmt, "value", None)
    while isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Call):
            node = func
            continue
        return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return ""


# The mark after the claimed statement: it ran through (not -1, which the runtime's own end of
# the code writes too: a statement left by an error in a thread is not through).
THROUGH = -2


def mark_claimed(stmt: ast.stmt, unit: int) -> list[Edit]:
    """Marks around ``stmt`` as unit ``unit``: an error raised while it runs leaves the unit
    open (the runtime's last mark); a run through it ends with the mark ``THROUGH``."""
    return marks_around(stmt, unit, THROUGH)
