"""Values the issue states in a sentence: the one the code gives and the one it should give.

The class: a report whose claim is one value against another, in the title or the prose rather
than in a quoted output block: "`torch.div` returns -1 instead of 0", "expected 2.5 but got
2.0", "it should be `True`, but it is `False`", "gives nan while the expected result is 0",
"the dtype is torch.float64 instead of torch.float32". A human runs the code and reads which of
the two its printed result shows. Both values must be stated, as literals (a number, nan, inf,
True/False/None, a torch dtype, or a backticked tensor, tuple or list of those): "returns
wrong values instead of raising" states none. The runtime (``reprojudge.judge_stated``)
counts a value as shown only where a printed line shows it whole, so a value that merely
appears inside a larger printout decides nothing. The development set's example is 170178
(its title and prose); the others are tests/repro/test_stated_values.py's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from contribkit.target.reprojudge import value_tokens

_BARE = (
    r"(?:[-+]?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?|\.\d+)(?![\w.]*\w)"
    r"|[-+]?(?:nan|inf)\b|\b(?:true|false|none)\b"
    r"|\btorch\.(?:float|double|half|bfloat|int|long|uint|bool|complex|short|cfloat|cdouble)\d*\b)"
)
_VALUE = r"(?:`[^`\n]{1,80}`|" + _BARE + ")"
_A, _B = "(?P<actual>" + _VALUE + ")", "(?P<expected>" + _VALUE + ")"
_GOT = (
    r"(?:got|gets|get|returns?|returned|gives?|gave|outputs?|produces?|produced|prints?"
    r"|printed|yields?|is|was|are|were|results?\s+in|received)"
)
# The verb before the value the code gives: "returns -1 instead of 0", not "I used 0.5
# instead of 1.0 as the threshold" (a choice of input, not a result).
_VERB = r"\b" + _GOT + r"(?:\s+(?:now|still|always|only|actually|exactly))?\s*:?\s+"
_SHOULD = r"(?:should\s+(?:be|return|give|output|produce|print|equal|yield)|must\s+be)"
_EXPECTED = r"(?:expected|expecting|expect|correct|right)(?:\s+(?:value|result|output|answer))?"
_PATTERNS = (
    # "returns -1 instead of 0", "11 elements instead of 10"
    re.compile(
        _VERB + _A + r"(?:\s+[a-z]+){0,2}?,?\s+(?:instead\s+of|rather\s+than)\s+" + _B, re.I
    ),
    # "expected 2.5 but got 2.0", "expected: `True`, got: `False`", "it should be 0 but is -1"
    re.compile(
        r"\b(?:"
        + _EXPECTED
        + r"|"
        + _SHOULD
        + r")\s*(?:is\s+|was\s+|to\s+be\s+|:\s*)?"
        + _B
        + r"(?: ?[,;:.])? ?(?:(?:but|while|whereas|however|instead)\b,? ?)?(?:(?:it|we|i|this) )?"
        r"(?:actually )?" + _GOT + r" ?:? ?" + _A,
        re.I,
    ),
    # "gives nan, but it should be 0", "returns False while the expected result is True"
    re.compile(
        _VERB + _A + r"(?: ?[,;])? (?:but|while|whereas|when|although) (?:(?:it|this|the|that) )?"
        r"(?:(?:" + _SHOULD + r")|(?:" + _EXPECTED + r") (?:is|was|would be|should be))"
        r" ?:? ?" + _B,
        re.I,
    ),
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])|\n")


_SPACES = re.compile(r"\s+")
_MAX_SENTENCE = 2000  # a sentence longer than this is no claim a reader finds either
_ERROR_TEXT = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Failed|Unsupported)\b:")
# A condition, not a result: "when dim is 1 instead of 0", "if the input is 0 instead of -1",
# "with a batch of 1 instead of 2" (what the reporter changed, before the value the code gives).
_CONDITION_BEFORE = re.compile(
    r"\b(?:if|when|whenever|unless|once)\b[^,;]*$|(?:^|[,;(]) ?(?:with|for|using)\b[^,;]*$", re.I
)
# A version, not a value: "it installs version 2.1 instead of 2.0", "torch 2.1 instead of 2.0".
_VERSION_BEFORE = re.compile(r"\b(?:version|torch|pytorch|python|cuda|cudnn|numpy|v)\s*$", re.I)


def _clean(value: str) -> str:
    """The value as stated: backticks off, and a sentence's full stop ("but is 4.")."""
    value = value.strip().strip("`").strip()
    return value[:-1] if value.endswith(".") and value[:-1].replace("-", "").isdigit() else value


@dataclass(frozen=True)
class StatedValue:
    actual: str  # the value the issue says the code gives
    expected: str  # the value it says the code should give
    where: str  # "the title" or "the prose"

    def same(self, other: StatedValue) -> bool:
        return (self.actual, self.expected) == (other.actual, other.expected)

    def runtime(self) -> dict[str, str]:
        return {"actual": self.actual, "expected": self.expected, "where": self.where}


def stated_values(title: str, prose: str) -> list[StatedValue]:
    """The (actual, expected) value pairs the title and the prose state, title first; pairs
    whose values are not literals, or are the same value, are left out."""
    found: list[StatedValue] = []
    for where, text in (("the title", title), ("the prose", prose)):
        for sentence in _SENTENCE.split(text):
            sentence = _SPACES.sub(" ", sentence)[:_MAX_SENTENCE]  # the patterns expect one space
            if _ERROR_TEXT.search(sentence):  # "RuntimeError: Expected 2 but got 3" is a message
                continue
            for pattern in _PATTERNS:
                for match in pattern.finditer(sentence):
                    pair = _pair(match, where)
                    if pair is not None and not any(pair.same(f) for f in found):
                        found.append(pair)
    return found


_ONE_VALUE = re.compile(_VALUE, re.I)
SECTIONS = "the Expected section"


def section_pair(expected: str, actual: str) -> StatedValue | None:
    """The pair that an "Expected behavior" and an "Actual behavior" section state, each
    holding one value and no other ("The result should be `2.0`." / "It gives `0.0`.")."""
    values = []
    for text in (actual, expected):
        found = [_clean(m.group(0)) for m in _ONE_VALUE.finditer(text)]
        found = [v for v in found if value_tokens(v)]
        if len(found) != 1:
            return None
        values.append(found[0])
    if value_tokens(values[0]) == value_tokens(values[1]):
        return None
    return StatedValue(values[0], values[1], SECTIONS)


def _pair(match: re.Match[str], where: str) -> StatedValue | None:
    before = match.string[: match.start()]
    if _VERSION_BEFORE.search(match.string[: match.start("actual")]) or _CONDITION_BEFORE.search(
        before
    ):
        return None
    actual, expected = (_clean(match.group(g)) for g in ("actual", "expected"))
    a, b = value_tokens(actual), value_tokens(expected)
    if not a or not b or a == b:
        return None
    return StatedValue(actual, expected, where)
