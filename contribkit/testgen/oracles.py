"""Test bodies from the oracles a repro decides by besides a failure signature or ``check()``:
the issue's own checks (kept, as TestCase assertions), a process crash (the code runs in a child
Python; the test fails while a signal kills it), and the output the issue quotes (the printed
values asserted equal to the expected ones or, where the issue quotes only the reported output,
ruled out).

The runtime evidence comes from meta.json's ``evidence`` (what ``Repro(evidence=...)`` gets); a
meta.json without it gives none of these tests. What cannot be made honest raises BadInput with
the reason.
"""

from __future__ import annotations

import ast
import builtins
import re
from typing import Any

from contribkit.core.errors import BadInput
from contribkit.core.render import python_literal
from contribkit.repro.codefacts import Edit, apply_edits
from contribkit.testgen.bodies import OracleBody as OracleBody
from contribkit.testgen.bodies import Shown as Shown
from contribkit.testgen.bodies import crash_body as crash_body
from contribkit.testgen.bodies import literal as literal
from contribkit.testgen.bodies import strip_runtime as strip_runtime
from contribkit.testgen.pyedit import indent_block
from contribkit.testgen.tidy import (
    as_assertions,
    drop_no_op_expressions,
    drop_prints,
)

# Oracle name -> the evidence key that says it applies, in the order a test prefers them.
ORACLE_KEYS = {
    "assert": "own_checks",
    "crash": "crash",
    "quoted-output": "units",
    "message": "message_wants",
}


def pick_oracle(meta: dict[str, Any], decided: str | None) -> str | None:
    """The oracle a test is written for: the one that decided the verdict, when meta.json's
    evidence supports a test for it; with no deciding oracle known, the first one supported."""
    evidence = meta.get("evidence")
    if not isinstance(evidence, dict):
        return None
    present = [name for name, key in ORACLE_KEYS.items() if evidence.get(key)]
    if decided is not None:
        return decided if decided in present else None
    return present[0] if present else None


def has_oracle_evidence(meta: dict[str, Any]) -> bool:
    evidence = meta.get("evidence")
    return isinstance(evidence, dict) and any(evidence.get(k) for k in ORACLE_KEYS.values())


# -- an error's wording ------------------------------------------------------------------------
def message_body(code: str, exc_type: str, wanted: list[str], fail_prefix: str) -> OracleBody:
    """The code must raise ``exc_type`` with a message that holds every word of ``wanted``
    (what an issue about the error's wording asks it to say): the test fails while the
    message lacks one, or no error is raised."""
    builtin = exc_type in dir(builtins) and exc_type.endswith(("Error", "Exception"))
    kind = exc_type if builtin or exc_type.startswith("torch.") else "Exception"
    pattern = "(?is)" + "".join(rf"(?=.*\b{re.escape(word)})" for word in wanted)
    said = ", ".join(repr(word) for word in wanted)
    message = python_literal(f"{fail_prefix}the error's message no longer says {said}")
    plain = drop_no_op_expressions(drop_prints(strip_runtime(code)[0]))
    head = f"with self.assertRaisesRegex({kind}, {python_literal(pattern)}, msg={message}):\n"
    body = head + indent_block(plain, "    ")
    checks = f"Fails while the code raises no {kind} whose message says {said}."
    return OracleBody(body, checks)


# -- the issue's own checks --------------------------------------------------------------------
def assert_body(code: str, where: str) -> OracleBody:
    """The code with its asserts, ``assert_close`` calls and ``if ...: raise`` checks as
    TestCase assertions."""
    if "_repro.run_tests(" in code:
        raise BadInput(
            f"{where}: the issue's checks are in unittest cases of its own, which a test method "
            "cannot hold",
            hint="move the failing check into repro.py's check(), or write the test by hand",
        )
    code, _ = strip_runtime(code)
    code = as_assertions(drop_no_op_expressions(drop_prints(code)))
    return OracleBody(code, "Fails while the issue's own checks fail.")


# -- a process crash ---------------------------------------------------------------------------
def _values(lines: list[str]) -> list[str]:
    """Printed lines grouped into values: a multi-line tensor is one value."""
    values: list[str] = []
    pending: list[str] = []
    for line in lines:
        pending.append(line)
        text = "\n".join(pending)
        depth = sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
        if depth <= 0:
            values.append(text)
            pending = []
    return [*values, *(["\n".join(pending)] if pending else [])]


def _assertion(shown: Shown, text: str, equal: bool) -> str:
    how = "assertEqual" if equal else "assertNotEqual"
    parsed = literal(text)
    if parsed is not None:
        source, tolerance = parsed
        # A quoted value shows no dtype unless printed with one: the values are what count.
        loose = "" if "dtype=" in source else "exact_dtype=False"
        return f"self.{how}({', '.join(filter(None, [shown.expr, source, tolerance, loose]))})"
    flat = " ".join(text.split())
    value = f'" ".join({shown.form}({shown.expr}).split())'
    return f"self.{how}({value}, {python_literal(flat)})"


def _pairs(
    shown: list[Shown], units: list[dict[str, Any]], where: str
) -> list[tuple[Shown, list[str] | None, list[str] | None]]:
    """Each printing statement with the values the issue quotes for it: (reported, expected)."""
    pairs: list[tuple[Shown, list[str] | None, list[str] | None]] = []
    for unit in units:
        actual, expected = unit.get("actual"), unit.get("expected")
        if unit.get("id"):
            mine = [s for s in shown if s.unit == unit.get("id")]
            if len(mine) == 1:
                pairs.append(
                    (
                        mine[0],
                        ["\n".join(actual)] if actual else None,
                        ["\n".join(expected)] if expected else None,
                    )
                )
            continue
        printing = [s for s in shown if s.unit is None or s.unit == 0]
        got = _values(actual) if actual else None
        want = _values(expected) if expected else None
        counts = {len(v) for v in (got, want) if v is not None}
        if counts != {len(printing)}:
            raise BadInput(
                f"{where}: the output the issue quotes ({' / '.join(map(str, sorted(counts)))} "
                f"value(s)) does not line up with the {len(printing)} value(s) the code prints",
                hint="fill in check() in repro.py with the expected values, then run this again",
            )
        for index, statement in enumerate(printing):
            pairs.append(
                (
                    statement,
                    [got[index]] if got else None,
                    [want[index]] if want else None,
                )
            )
    return pairs


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def _form(source: str) -> object:
    """What kind of value a literal is, to pair an expected value with a printed one: a
    sequence (its length and element kinds), a tensor (the form of its data) or a scalar."""
    node = ast.parse(source, mode="eval").body
    if isinstance(node, ast.Call):  # torch.tensor(data, ...) or torch.Size(...)
        return (
            "call",
            ast.unparse(node.func),
            _form(ast.unparse(node.args[0])) if node.args else None,
        )
    if isinstance(node, (ast.List, ast.Tuple)):
        return ("seq", len(node.elts), tuple(_form(ast.unparse(e)) for e in node.elts))
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return "bool"
    return "number"


def prose_expectation(
    text: str | None, reported: list[tuple[Shown, str]]
) -> tuple[Shown, str] | None:
    """The one printed statement whose value the issue's expected-behaviour prose states in
    code (`` `[True, False]` ``): a literal of the same form as the value the issue reports for
    it, and a different one. None unless exactly one statement and one value pair up."""
    candidates = {c.strip() for c in _CODE_SPAN.findall(text or "")}
    values = {
        c: parsed[0]
        for c in candidates
        if (parsed := literal(c)) is not None and _form(parsed[0]) not in ("number", "bool")
    }  # a bare number in backticks ("batch size `1`") is too often something else
    found: dict[int, set[str]] = {}
    for index, (_, got) in enumerate(reported):
        parsed = literal(got)
        if parsed is None:
            continue
        for text_value, source in values.items():
            if _form(source) == _form(parsed[0]) and source != parsed[0]:
                found.setdefault(index, set()).add(text_value)
    if len(found) != 1:
        return None
    ((index, matched),) = found.items()
    return (reported[index][0], matched.pop()) if len(matched) == 1 else None


def quoted_output_body(
    code: str,
    evidence: dict[str, Any],
    where: str,
    force: bool = False,
    expected_text: str | None = None,
    compiled: bool = False,
    fail_prefix: str = "",
    on_device: bool = False,
) -> OracleBody:
    """The printed values asserted equal to the output the issue expects (quoted as output, or
    else stated in code in its expected-behaviour prose, see :func:`prose_expectation`); where
    it quotes only the reported output, against a reference where one exists (eager for
    compiled code, float64 for a floating result, see ``references``); else the last printed
    value is asserted to differ from it:
    a weak test (the reported output may even be right, the bug elsewhere), written only with
    ``force``, and the notes and the docstring say so."""
    _, shown = strip_runtime(code)
    # a value comment (weak: maybe the value wanted) is no reported output to assert against
    units = [u for u in evidence.get("units") or [] if isinstance(u, dict) and not u.get("weak")]
    pairs = _pairs(shown, units, where)
    expected = [(s, want[0]) for s, _, want in pairs if want]
    notes: list[str] = []
    stated = None
    if not expected:
        stated = prose_expectation(expected_text, [(s, got[0]) for s, got, _ in pairs if got])
    if stated is not None:
        expected = [stated]
        notes.append(
            f"the expected value of `{stated[0].expr}` is the one the issue states in prose,"
            f" `{stated[1]}`: check that it is the right one"
        )
    if expected:
        lines = {s.start: _assertion(s, text, True) for s, text in expected}
        checks = "Fails while the code's values differ from the output the issue expects."
    else:
        reported = [(s, got[0]) for s, got, _ in pairs if got]
        if not reported:
            raise BadInput(
                f"{where}: no statement of the code prints the output the issue quotes",
                hint="fill in check() in repro.py so that it fails while the bug is present",
            )
        statement, text = reported[-1]
        from contribkit.testgen.references import reference_body

        reference = reference_body(code, statement, text, compiled, fail_prefix, on_device)
        if reference is not None:
            return reference
        if not force:
            raise BadInput(
                f"{where}: the issue quotes the output `{statement.expr}` gives, not the output "
                "it expects, and no reference computes it (eager for compiled code, float64 for"
                " a floating result of torch functions): a test could only rule out the"
                " reported value",
                hint="fill in check() in repro.py with the expected value, or pass --force for a "
                "test that only rules out the reported one",
            )
        lines = {statement.start: _assertion(statement, text, False)}
        checks = (
            "Fails while the code still prints the output the issue reports; it does not "
            "check the right value: assert that once it is known."
        )
        notes.append(
            f"the issue quotes only the wrong output: the test only rules out the reported value "
            f"of `{statement.expr}`; assert the right value in its place"
        )
    edits = [Edit(*s.start, *s.end, "", lines[s.start]) for s in shown if s.start in lines]
    body, _ = strip_runtime(apply_edits(code, edits))
    body = drop_no_op_expressions(drop_prints(body))
    return OracleBody(body, checks, notes=notes)
