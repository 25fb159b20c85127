# contribkit repro runtime, part 1: the judging functions (pure, no state). Embedded verbatim
# in every generated repro script, before reprolib.py (see contribkit.repro.plan.runtime_source),
# so it is standard-library only, runs on Python 3.9+, and has no __future__ imports.
import difflib
import re
import signal
from typing import Any, Dict, List, Optional

MATCH_RATIO = 0.75


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


_LONG_NUMBER = re.compile(r"(?<![\w.])\d{6,}(?![\w.])")


_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.+~-]+){2,}[\\/]?")


_SPACE = re.compile(r"\s+")


def normalise_message(message: str) -> str:
    """The comparable part of an exception message: its first line, addresses/ids/paths masked."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    text = lines[0] if lines else ""
    if text.endswith("raised:") and len(lines) > 1:  # a wrapper such as BackendCompilerFailed
        text += " " + lines[1]
    text = _ADDRESS.sub("<addr>", text)
    text = _PATH.sub("<path>", text)
    text = _LONG_NUMBER.sub("<n>", text)
    return _SPACE.sub(" ", text).strip()[:300]


def signature_matches(exc: BaseException, exc_type: str, message: str) -> bool:
    """True when ``exc`` is the failure ``exc_type: message`` (type by name anywhere in its MRO).

    Numbers are masked (shapes and sizes vary between runs); the messages must then be equal,
    one must contain the other, or they must start with the same three words and be similar.
    """
    wanted = exc_type.rsplit(".", 1)[-1]
    if wanted not in {cls.__name__ for cls in type(exc).__mro__}:
        return False
    return not message or message_matches(message, normalise_message(str(exc)))


def message_matches(message: str, text: str) -> bool:
    """True when the normalised ``text`` is the issue's normalised error ``message``."""
    want = _NUMBER_TOKEN.sub("<n>", message)
    got = _NUMBER_TOKEN.sub("<n>", text)
    if not got:
        return False
    if want == got or (len(want) >= 10 and want in got) or (len(got) >= 10 and got in want):
        return True
    if want.split()[:3] != got.split()[:3]:
        return False
    return difflib.SequenceMatcher(None, want, got).ratio() >= MATCH_RATIO


def describe(exc: BaseException) -> str:
    text = normalise_message(str(exc))
    return type(exc).__name__ + ": " + text if text else type(exc).__name__


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "signal %d" % number


def printed_signature(text: str, exc_type: str, message: str) -> str:
    """The line of ``text`` that shows the error ``exc_type: message``, or "".

    Issue code often catches the error and prints it (``except Exception as e: print(e)``), or
    prints its traceback; either way the line is the message, maybe after ``Type: ``.
    """
    wanted = exc_type.rsplit(".", 1)[-1]
    for line in text.splitlines():
        line = line.strip()
        head, sep, rest = line.partition(": ")
        if sep and head.rsplit(".", 1)[-1] == wanted:
            line = rest
        if line and message_matches(message, normalise_message(line)):
            return line
    return ""


# -- printed output against the output an issue quotes -------------------------------------
_NUMBER_TEXT = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"  # 2, -1.5, .5, 1e-05
_NUMBER_TOKEN = re.compile(_NUMBER_TEXT + r"|[-+]?(?:nan|inf)\b")


def _decimals(token: str) -> int:
    mantissa, _, exponent = token.lower().partition("e")
    places = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return places - (int(exponent) if exponent else 0)


def same_line(got: str, want: str) -> bool:
    """True when printed ``got`` shows what the issue's ``want`` shows: spaces ignored, numbers
    equal to the precision the coarser of the two prints (``0.4080`` is ``0.40800``), and a
    quoted bare value matching the end of a labelled line (``x.training=False`` vs ``False``)."""
    got, want = _SPACE.sub("", got), _SPACE.sub("", want)
    if want and got.startswith(want) and not got[len(want) :].strip(")]}"):
        got = want  # a quote that lost its closing brackets: "x = tensor([2., 3.]"
    if got == want:
        return True
    got_tokens, want_tokens = _NUMBER_TOKEN.split(got), _NUMBER_TOKEN.split(want)
    got_numbers, want_numbers = _NUMBER_TOKEN.findall(got), _NUMBER_TOKEN.findall(want)
    if got_tokens == want_tokens and len(got_numbers) == len(want_numbers):
        return all(_same_number(a, want_numbers[i]) for i, a in enumerate(got_numbers))
    if _bare_value_shown(got, want):
        return True
    return any(want and sep not in want and got.endswith(sep + want) for sep in ("=", ":"))


_VALUE_WORDS = re.compile(r"\b(?:true|false|none|nan|inf)\b", re.I)
_NUMPY_SCALAR = re.compile(r"\b(?:np|numpy)\.[a-z_]+\d*\(")


def _bare_value_shown(got: str, want: str) -> bool:
    """A value the issue writes bare (``NaN``, ``0``, ``[True, True, False]``: a comment on a
    REPL line) is shown by the same values in any wrapper the REPL prints: ``tensor(nan)``,
    ``np.float64(0.0)``, ``array([ True,  True, False])``: as deep in brackets, each value
    exact, a float where the quote writes one (``2.0`` is not ``tensor(2)``), with the sign of
    a zero (``0.`` is not ``-0.``)."""
    if re.search(r"[A-Za-z_]", _VALUE_WORDS.sub("", want)):
        return False
    got = _NUMPY_SCALAR.sub("(", got)
    wanted, seen = value_tokens(want), value_tokens(got)
    if wanted is None or seen is None or len(wanted) != len(seen):
        return False
    if _depth(want) != _depth(got):
        return False
    return all(_same_bare(seen[i], w) for i, w in enumerate(wanted))


def _depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        depth += (char == "[") - (char == "]")
        deepest = max(deepest, depth)
    return deepest


def _same_bare(got: str, want: str) -> bool:
    if not (_NUMERIC.match(got) and _NUMERIC.match(want)):  # nan, true, a dtype
        return got.lstrip("+") == want.lstrip("+")
    if any(c in want.lower() for c in ".e") and not any(c in got.lower() for c in ".e"):
        return False  # an int printed where the quote writes a float
    if float(got) == 0 == float(want) and got.startswith("-") != want.startswith("-"):
        return False
    return float(got) == float(want)


def _same_number(a: str, b: str) -> bool:
    """Equal to the precision the coarser of the two prints; a whole number printed without
    decimals (``2``, torch's ``2.`` of an all-whole tensor, ``1e+03``) is exact: torch would
    have printed 2.5 as ``2.5000``."""
    x, y = float(a), float(b)
    if x != x or y != y:  # nan
        return x != x and y != y
    if x == y:
        return True
    places = min(_decimals(a), _decimals(b))
    return places > 0 and abs(x - y) <= 0.5 * 10.0 ** (-places) * (1 + 1e-9)


def output_lines(text: str) -> List[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def _line_status(got: str, actual: str, expected: Optional[str]) -> str:
    """ "bug" (shows the reported value, not the expected), "fixed" (shows the expected value),
    "same" (shows the reported value; nothing expected), "changed" (neither)."""
    if expected is not None and same_line(got, expected):
        return "fixed"
    if same_line(got, actual):
        return "bug" if expected is not None else "same"
    return "changed"


_VERSION = re.compile(r"\b\d+\.\d+\.\d+(?:a\d+|rc\d+|\.dev\d+|\+\w+)*\b|\bversion\b", re.I)


def volatile_line(line: str) -> bool:
    """A quoted line that differs between machines and runs whatever the bug: an address, a
    timing, a version."""
    return bool(_ADDRESS.search(line) or _TIMING.search(line) or _VERSION.search(line))


def compare_unit(
    printed: List[str], actual: Optional[List[str]], expected: Optional[List[str]]
) -> List[str]:
    """Line statuses of one printed unit against the issue's quoted lines (best alignment).

    With only expected lines, a line is "fixed" or "unexpected"."""
    if actual is None:
        if expected is None:
            return []
        return [
            {"same": "fixed", "changed": "unexpected"}.get(status, status)
            for status in compare_unit(printed, expected, None)
        ]
    if expected is not None and len(expected) != len(actual):
        expected = None
    width = len(actual)
    if width == 0:
        return ["same" if not printed else "changed"]
    if len(printed) < width:  # the quote holds more than stdout (a warning, a traceback)
        return ["missing"] * width
    best: List[str] = []
    for start in range(len(printed) - width + 1):
        window = printed[start : start + width]
        statuses = [
            _line_status(got, actual[i], expected[i] if expected is not None else None)
            for i, got in enumerate(window)
        ]
        if not best or sum(s != "changed" for s in statuses) > sum(s != "changed" for s in best):
            best = statuses
    kept = [s for i, s in enumerate(best) if not volatile_line(actual[i])]
    return kept or ["volatile"]


def judge_recompiles(
    counted: "tuple[int, int, int, str]", allowed: int, repeats: Any
) -> "tuple[str, str]":
    """A verdict from :func:`dynamo_recompiles` where the issue allows ``allowed`` recompiles;
    ``repeats``: the code calls compiled code more than once (a single call cannot recompile)."""
    frames, total, dynamic, reason = counted
    said = "%d compile(s), %d recompile(s)" % (frames, total)
    if dynamic:
        said += " (%d by automatic dynamic shapes)" % dynamic
    if total - dynamic > allowed:
        return "REPRODUCED", said + ("; the first guard failure: " + reason if reason else "")
    if total > allowed:
        why = "only automatic dynamic shapes recompiled, as they do once by design"
    elif not frames:
        why = "torch.compile compiled nothing"
    elif not repeats:
        why = "the code calls compiled code only once, and one call cannot recompile"
    else:
        return "NOT_REPRODUCED", said + " (the issue allows %d)" % allowed
    return "CANNOT_RUN", said + "; " + why + ": compare with the issue"


_TIMING = re.compile(
    r"\b(?:time|took|elapsed|seconds?|sec|ms|it/s|speed|latency"  # timings; first-run-only lines:
    r"|download(?:ing|ed)?|already\s+downloaded|cach(?:e|ed|ing))\b",
    re.I,
)


def comparable_lines(lines: List[str]) -> List[str]:
    """Printed lines two runs should share: timings and download/cache notes dropped, addresses
    masked."""
    return [_ADDRESS.sub("<addr>", line) for line in lines if not _TIMING.search(line)]


def judge_runs(first: List[str], second: List[str]) -> "tuple[str, str]":
    """The determinism verdict from what two runs with the same seeds printed."""
    first, second = comparable_lines(first), comparable_lines(second)
    for index in range(max(len(first), len(second))):
        a, b = (r[index] if index < len(r) else "(nothing)" for r in (first, second))
        if a != b:
            detail = "line %d: %r, then %r" % (index + 1, a[:80], b[:80])
            return "REPRODUCED", "two runs with the same seeds printed different output: " + detail
    if not any(_NUMBER_TOKEN.search(line) or "True" in line or "False" in line for line in first):
        return "CANNOT_RUN", "two runs printed no value the computation gives: print them"
    shapes: Dict[str, str] = {}
    for line in first:
        if re.search(r"[A-Za-z]", line):
            shape = _NUMBER_TOKEN.sub("<n>", _SPACE.sub("", line))
            if shapes.setdefault(shape, line) != line:
                detail = "within one run, %r and %r differ: compare them" % (shapes[shape], line)
                return "CANNOT_RUN", "two runs printed the same, but " + detail[:200]
    return "NOT_REPRODUCED", "two runs with the same seeds printed the same %d line(s)" % len(first)


def unit_outputs(seen: str, total: int, marks: "List[tuple[int, int]]") -> Dict[int, List[str]]:
    """Printed lines per unit id (id 0: everything the issue's code printed), from the last
    characters written (``seen``, of ``total``) and the marks (unit, characters written)."""
    base = total - len(seen)
    outputs: Dict[int, List[str]] = {}
    for index, (unit, at) in enumerate(marks):
        end = marks[index + 1][1] if index + 1 < len(marks) else at
        if unit > 0:
            text = seen[max(at - base, 0) : max(end - base, 0)]
            outputs.setdefault(unit, []).extend(output_lines(text))
    if marks and marks[0][0] == 0:
        text = seen[max(marks[0][1] - base, 0) : max(marks[-1][1] - base, 0)]
        outputs[0] = output_lines(text)
    return outputs


def against_reference(statuses: List[str], reference: "Optional[tuple[float, float]]") -> List[str]:
    """A unit whose printed value changed from the one the issue quotes (and that quotes no
    expected value), held to the same computation in float64 (``reference``: the relative
    error and the printed dtype's eps): "wrong" far from it (10^4 eps, 0.1% for float32, capped
    at 5% for half types), unchanged otherwise: a value close to its float64 recomputation is
    no fix, for a bug in the formula or the index maths is in float64 too."""
    if reference is None or not statuses or any(s != "changed" for s in statuses):
        return statuses
    error, eps = reference
    if error >= min(max(1e4 * eps, 1e-3), 0.05):
        return ["wrong"] * len(statuses)
    return statuses  # close to it decides nothing: a bug in the formula is in float64 too


def judge_outputs(statuses: List[str], deterministic: bool) -> "Optional[tuple[str, str]]":
    """A verdict from line statuses, or None when they do not decide ("missing": the code
    printed fewer lines than the issue quotes; "volatile": only addresses, timings, versions)."""
    statuses = [s for s in statuses if s != "volatile"]
    if "bug" in statuses:
        return "REPRODUCED", "a line still prints the value the issue reports, not the expected one"
    if not statuses or "missing" in statuses:
        return None
    if all(s == "fixed" for s in statuses):
        return "NOT_REPRODUCED", "the code prints the values the issue expects"
    if "wrong" in statuses and set(statuses) <= {"same", "wrong", "bug"}:
        return "REPRODUCED", (
            "a value the issue reports as wrong changed, but still differs from the same"
            " computation in float64"
        )
    if all(s in ("same", "bug") for s in statuses):
        return "REPRODUCED", "the code still prints what the issue shows"
    if deterministic and all(s == "changed" for s in statuses):
        return "NOT_REPRODUCED", "the code no longer prints what the issue shows"
    if deterministic and "unexpected" in statuses and set(statuses) <= {"unexpected", "fixed"}:
        return "REPRODUCED", "a line prints something other than what the issue expects"
    return None


def judge_units(
    units: List[Dict[str, Any]],
    outputs: Dict[int, List[str]],
    references: Dict[int, Any],
    deterministic: bool,
    draws: bool = False,
) -> "Optional[tuple[str, str]]":
    """The quoted-output oracle: each unit's printed lines against the lines the issue quotes
    for it (``references``: a unit's float64 recomputation, see against_reference), then the
    agreement of the values the issue quotes as disagreeing (see judge_agreement; ``draws``:
    the unseeded code draws random values at each call, which whole values may match by
    chance). A ``weak`` unit (a value a comment gives, see contribkit.repro.edits) decides
    only where it still shows."""
    statuses: List[str] = []
    shown = []
    for unit in units:
        printed = outputs.get(unit["id"], [])
        found = compare_unit(printed, unit.get("actual"), unit.get("expected"))
        if unit.get("weak") and any(s not in ("same", "volatile") for s in found):
            return None  # a value comment may be the value wanted or a shape: no change said
        found = against_reference(found, references.get(unit["id"]))
        statuses.extend(found)
        if any(s != "same" and s != "fixed" for s in found):
            shown.append(unit.get("where", "the output") + " printed " + repr(printed[:3]))
    judged = judge_outputs(statuses, deterministic)
    if judged is None:
        lines = [
            (unit.get("where", ""), unit["actual"][0], outputs.get(unit["id"], [""])[0])
            for unit in units
            if len(unit.get("actual") or []) == 1 and len(outputs.get(unit["id"], [])) == 1
        ]
        agreed = judge_agreement(lines, draws) if len(lines) == len(units) else None
        return None if agreed is None else ("NOT_REPRODUCED", agreed)
    verdict, detail = judged
    return verdict, detail + ("; " + "; ".join(shown)[:300] if shown else "")


_WARNING_LINE = re.compile(r"(?:^|[\s:])([A-Z]\w*Warning):\s+(\S.*)$")


def judge_warning(wanted: Dict[str, str], recorded: List[str], stderr: str) -> "tuple[str, str]":
    """The warning oracle: REPRODUCED when a warning the code raised (``recorded``, each
    "Category: message", or a line it wrote to ``stderr``) holds the message the issue quotes
    (see message_matches; in another category too: the warning is still there); otherwise
    NOT_REPRODUCED's detail (after how the code ended), or CANNOT_RUN's where the code could
    hide it (``wanted["hidden"]``: its own warning filters, worker processes)."""
    want = normalise_message(wanted["message"])[:80]  # found in the first 160 of one raised
    for line in recorded + stderr.splitlines():
        match = _WARNING_LINE.search(line.strip())
        if match is None or not message_matches(want, normalise_message(match.group(2))[:160]):
            continue
        said = (match.group(1) + ": " + match.group(2))[:200]
        moved = "" if match.group(1) == wanted["category"] else " (a %s now)" % match.group(1)
        return "REPRODUCED", "the code still warns: " + said + moved
    if wanted.get("hidden"):
        return "CANNOT_RUN", " without the warning the issue reports, but " + wanted["hidden"]
    return "NOT_REPRODUCED", " without the warning the issue reports: " + wanted["category"]


def line_value(line: str) -> Optional[List[str]]:
    """The value a printed line shows, whole or after a label (``x.training=False``)."""
    got = value_tokens(line)
    labelled = _LABELLED.match(line) if got is None else None
    return value_tokens(labelled.group(1)) if labelled else got


def _equal(a: List[str], b: List[str]) -> bool:
    same = [_same_value(a[i], b[i]) and _same_value(b[i], a[i]) for i in range(min(len(a), len(b)))]
    return len(a) == len(b) and all(same)


def _kind(values: List[str]) -> "tuple[str, ...]":
    """What sort of values a line shows: numbers, bools, dtypes, in order."""
    return tuple(
        "dtype" if v.startswith("torch.") else "bool" if v in ("true", "false") else "number"
        for v in values
    )


def _whole(values: List[str]) -> bool:
    """Values a random draw repeats by chance: bools and whole numbers (dropout's 0.0, 2.0)."""
    numbers = [float(v) for v in values if _NUMERIC.match(v)]
    return all(x != x or abs(x) == float("inf") or x == int(x) for x in numbers)


def judge_agreement(lines: "List[tuple[str, str, str]]", draws: bool = False) -> Optional[str]:
    """NOT_REPRODUCED's detail when the values the issue quotes as disagreeing now agree.
    ``lines`` (where, quoted, printed), in the order printed, each hold one value (a number,
    a bool, a dtype, or a tensor of them), and each has a neighbour of its kind (the output is
    values set side by side); every line that prints another value than the quoted one now
    prints the value of each neighbour of its kind, one of which it differed from in the quote
    (eager 0.5 and compiled 0.7 quoted, both 0.5 now; a flag quoted True between two False,
    False now). The disagreement the issue shows side by side is its bug; None otherwise: a
    changed line that still differs from a neighbour (which of the two was the bug?), a line
    with no neighbour of its kind (a value the others do not compare), whole values of code
    that draws random values at each call (``draws``). Classes: eager and compiled results
    printed one after the other; a module flag printed through a wrapper and through the
    module (dev 132986)."""
    values = [(where, line_value(quoted), line_value(printed)) for where, quoted, printed in lines]
    shown = [(where, q, p) for where, q, p in values if q is not None and p is not None]
    if len(shown) < len(values) or len(values) < 2:
        return None
    kin: List[List["tuple[str, List[str], List[str]]"]] = []
    for i, (_, quoted, printed) in enumerate(shown):
        beside = [shown[j] for j in (i - 1, i + 1) if 0 <= j < len(shown)]
        same = [n for n in beside if _kind(n[2]) == _kind(printed) == _kind(n[1]) == _kind(quoted)]
        if not same:
            return None
        kin.append(same)
    changed = [i for i, (_, q, p) in enumerate(shown) if not _equal(q, p)]
    for i in changed:
        _, quoted, printed = shown[i]
        if draws and _whole(printed):
            return None  # fresh draws at each call: 0.0 beside 0.0 may be chance
        if any(not _equal(printed, p) for _, _, p in kin[i]):
            return None
        if all(_equal(quoted, q) for _, q, _ in kin[i]):
            return None
    if not changed:
        return None
    wheres = ", ".join(shown[i][0] for i in changed)
    return (
        "the values the issue quotes as disagreeing now agree (" + wheres + ": each now prints"
        " the value of the lines beside it that it differed from)"
    )


# -- values the issue states in a sentence (contribkit.repro.statedvalues) ----------------------
_VALUE_TOKEN = re.compile(
    r"\btorch\.(?:float|double|half|bfloat|int|long|uint|bool|complex|short|cfloat|cdouble)\d*\b"
    r"|" + _NUMBER_TOKEN.pattern + r"|\b(?:true|false|none)\b",
    re.I,
)
_KEYWORD_PART = re.compile(r"\b(?:dtype|device|grad_fn|requires_grad|layout)\s*=\s*[^,)\]]*")
_WRAPPERS = re.compile(r"\b(?:tensor|array)\b|[\s()\[\],]")  # torch.Size([2]): a shape, not 2
_DTYPE_ALIASES = {
    "torch.float": "torch.float32",
    "torch.double": "torch.float64",
    "torch.half": "torch.float16",
    "torch.long": "torch.int64",
    "torch.int": "torch.int32",
    "torch.short": "torch.int16",
    "torch.cfloat": "torch.complex64",
    "torch.cdouble": "torch.complex128",
}


def value_tokens(text: str) -> Optional[List[str]]:
    """The values ``text`` holds when it is a value and nothing else (a number, nan, a bool, a
    dtype, a tensor/tuple/list of them, its dtype= and device= aside); None otherwise."""
    text = _KEYWORD_PART.sub("", text)
    tokens = _VALUE_TOKEN.findall(text)
    if not tokens or _WRAPPERS.sub("", _VALUE_TOKEN.sub("", text)):
        return None
    return [_DTYPE_ALIASES.get(t, t) if t.startswith("torch.") else t.lower() for t in tokens]


_NUMERIC = re.compile(_NUMBER_TEXT + "$")


def _same_value(got: str, stated: str) -> bool:
    if not (_NUMERIC.match(got) and _NUMERIC.match(stated)):  # a word: nan, true, a dtype
        return got.lstrip("+") == stated.lstrip("+")
    if stated.lstrip("+-").isdigit():  # "0" is 0, not any value that rounds to it
        return float(got) == float(stated)
    if "." in got and "e" not in got.lower():  # torch prints 4 decimals, less its zeros: 2.
        whole, _, places = got.partition(".")
        got = whole + "." + places.ljust(4, "0")
    return _same_number(got, stated)


_LABELLED = re.compile(r"^\s*[A-Za-z_][\w.\[\]'\" ]*[:=]([^:=]*)$")


def _shows(line: str, stated: List[str]) -> bool:
    """A printed line shows the stated value whole (or after a label: ``result: -1``)."""
    parts = [line]
    labelled = _LABELLED.match(line)
    if labelled:  # "result: -1", "x.training=False"; not "12:00:03" nor "step 2: loss=3"
        parts.append(labelled.group(1))
    for part in parts:
        got = value_tokens(part)
        if got is None or len(got) != len(stated):
            continue
        if all(_same_value(got[i], s) for i, s in enumerate(stated)):
            return True
    return False


def judge_stated(printed: List[str], stated: List[Dict[str, str]]) -> "Optional[tuple[str, str]]":
    """A verdict from the values the issue states (actual against expected): REPRODUCED when
    the printed lines show each decided pair's actual value and not its expected one,
    NOT_REPRODUCED the other way round; None when they show neither, both, or pairs disagree."""
    found: List["tuple[str, int]"] = []
    for index, pair in enumerate(stated):
        actual, expected = value_tokens(pair["actual"]), value_tokens(pair["expected"])
        if not actual or not expected:
            continue
        bug = any(_shows(line, actual) for line in printed)
        fixed = any(_shows(line, expected) for line in printed)
        if bug != fixed:
            found.append(("REPRODUCED" if bug else "NOT_REPRODUCED", index))
    if len({verdict for verdict, _ in found}) != 1:
        return None
    verdict, index = found[0]
    pair = stated[index]
    if verdict == "REPRODUCED":
        detail = "the code still prints %s where %s says %s"
        return verdict, detail % (pair["actual"], pair["where"], pair["expected"])
    detail = "the code prints %s, the value %s says, not %s"
    return verdict, detail % (pair["expected"], pair["where"], pair["actual"])


def judge_printed_pair(
    outputs: Dict[int, List[str]], units: List[int]
) -> "Optional[tuple[str, str]]":
    """The two values the code printed last, which the issue says differ (see
    contribkit.repro.printedpair): NOT_REPRODUCED where they print the same text; REPRODUCED
    where the texts differ only in their numbers and a number differs even at the coarser
    precision of the two, by more than a float's rounding (a relative 1e-4); None otherwise
    (a dtype, a sign of zero, a shape or a label apart; a summarised tensor)."""
    shown = [" ".join(outputs.get(unit, [])).strip() for unit in units]
    values = [line_value(text) if text else None for text in shown]
    first, second = values
    if first is None or second is None:
        return None
    texts = [_SPACE.sub("", text) for text in shown]
    if texts[0] == texts[1]:
        detail = "the two values the code prints last agree: %s and %s"
        return "NOT_REPRODUCED", detail % (shown[0][:120], shown[1][:120])
    skeletons = [_NUMBER_TOKEN.sub("#", text) for text in texts]
    if skeletons[0] != skeletons[1] or len(first) != len(second) or _equal(first, second):
        return None
    pairs = [(first[i], second[i]) for i in range(len(first))]
    numeric = [(float(a), float(b)) for a, b in pairs if _NUMERIC.match(a) and _NUMERIC.match(b)]
    words = [(a, b) for a, b in pairs if not (_NUMERIC.match(a) and _NUMERIC.match(b))]
    finite = [x for pair in numeric for x in pair if abs(x) != float("inf")]
    scale = max([abs(x) for x in finite] + [0.0])
    if not any(a != b for a, b in words) and not any(
        abs(a - b) > 1e-4 * scale for a, b in numeric if abs(a) != float("inf") != abs(b)
    ):
        return None  # differences a float's rounding makes
    detail = "the two values the code prints last still differ: %s vs %s"
    return "REPRODUCED", detail % (shown[0][:120], shown[1][:120])
