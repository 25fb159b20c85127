"""Expected and actual behaviour: from headings, "Expected:" labels and sentences; and whether
the issue sets CPU against CUDA."""

from __future__ import annotations

import re
from collections.abc import Iterator

from contribkit.issue.parse.scan import Block, Prose, Scan, document_order
from contribkit.issue.parse.signature import inside_mention

# Expected/actual texts longer than this are cut; they end up in a docstring header.
MAX_BEHAVIOUR_CHARS = 600

_EXPECTED_LABEL = re.compile(
    r"^\W*expected(?:\s+(?:behaviou?r|results?|output|outcome))?\W*:\s*(?P<rest>.*)", re.I
)
_ACTUAL_LABEL = re.compile(
    r"^\W*(?:actual|observed|current)(?:\s+(?:behaviou?r|results?|output|outcome))?\W*:\s*(?P<rest>.*)",
    re.I,
)
_EXPECT_SENTENCE = re.compile(
    r"\b(?:I|we)\s+(?:would\s+|had\s+|have\s+)?(?:also\s+)?expect(?:ed|s)?\b"
    r"|\bexpected\s+(?:behaviou?r|result|output|outcome)\s+(?:is|was|would\s+be)\b"
    r"|\bis\s+expected\s+to\b",
    re.I,
)
_SHOULD_SENTENCE = re.compile(
    r"^(?:(?:but|so|and|however|ideally|instead)\b,?\s+)?"
    r"(?:it|this|that|they|these|both|the\s+(?:[^,;?`]|`[^`]*`){1,60}?|`[^`]+`|[\w.]+\(\))\s+"
    r"should(?:\s+not|n't)?\s+(?:also\s+)?"
    r"(?:be|return|give|produce|output|match|work|raise|succeed|equal|have|yield|compile|run|behave)\b"
    r"(?!\s+(?:noted|mentioned|said|pointed|fixed|addressed|investigated|documented|reported"
    r"|considered|possible|easy|simple|straightforward|clear|obvious|related)\b)",
    re.I,
)
_ACTUAL_SENTENCE = re.compile(
    r"\bbut\s+(?:(?:[\w.()]+|`[^`]+`)\s+){0,3}?(?:actually\s+|instead\s+)?"
    r"(?:got|gets?|returns?|returned|gives?|gave|produces?|produced|outputs?|raises?|raised"
    r"|throws?|threw|fails?|failed|crash(?:es|ed)?)\b"
    r"|^(?:but\s+)?instead\b",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")
# Where a sentence's clauses part: after a comma or semicolon, before a conjunction that sets
# one claim against another ("A works, but B fails"; "A returns 11 while B returns 10").
_CLAUSE_BREAK = re.compile(r"[,;]\s+|\s+(?=(?:but|while|whereas|although|though)\b)", re.I)
_CODE_SPAN = re.compile(r"`[^`]*`")
# A clause that calls what it names right, not the behaviour reported: "`x.double()` works
# fine", "a workaround is `...`", "use `...` instead", "`...` gives the correct result".
_CALLS_RIGHT = re.compile(
    r"\b(?:works?|worked|working|work[- ]?arounds?|fine(?!-)|correct(?:ly)?|as\s+expected"
    r"|succeeds?|succeeded|no\s+(?:errors?|problems?|issues?)|alternatively)\b"
    r"|\binstead\W*$",
    re.I,
)
# ... unless the clause denies it: "`f(x)` doesn't work", "no longer works", "is not correct".
_DENIED = re.compile(r"\b(?:not|never|no\s+longer|stopped|cannot)\b|n't\b", re.I)
_CPU_WORD = re.compile(r"\bcpu\b", re.IGNORECASE)
_GPU_WORD = re.compile(r"\b(?:cuda|gpus?)\b", re.IGNORECASE)
_SAME_ON = re.compile(r"\b(?:same|both|either|regardless)\b", re.IGNORECASE)


def contrasts_devices(title: str, body: Scan) -> bool:
    """A sentence of the title or the prose sets CPU against CUDA/GPU, so the bug is the difference.

    "Inconsistent between CPU and CUDA" counts; "the error is the same on CPU and GPU" does not.
    """
    texts = [title, *(p.text for p in body.prose if p.role != "env")]
    for text in texts:
        for sentence in re.split(r"(?<=[.!?])\s+|\n", text):
            if (
                _CPU_WORD.search(sentence)
                and _GPU_WORD.search(sentence)
                and not _SAME_ON.search(sentence)
            ):
                return True
    return False


def behaviour(scan: Scan) -> tuple[str | None, str | None]:
    """Expected and actual behaviour: from headings first, then "Expected: ..." labels, then
    sentences ("I expected ...", "it should return ...", "... but it returns ..."). None when
    the issue does not say."""
    items = document_order(scan)
    expected = _section_text(scan, items, "expected")
    actual = _section_text(scan, items, "actual")
    for index, item in enumerate(items):
        if expected and actual:
            break
        if (
            not isinstance(item, Prose)
            or item.heading
            or item.role in ("env", "expected", "actual")
        ):
            continue
        for sentence in _sentences(item.text):
            found_expected, found_actual = _sentence_behaviour(sentence)
            if found_expected and found_expected.endswith(":"):
                found_expected = _with_next_block(found_expected, items, index)
            if found_actual and found_actual.endswith(":"):
                found_actual = _with_next_block(found_actual, items, index)
            expected = expected or found_expected
            actual = actual or found_actual
    return _shorten(expected), _shorten(actual)


def right_behaviour(text: str) -> Iterator[tuple[str, list[tuple[int, int]]]]:
    """Each sentence of a paragraph, with the character ranges of it that state what the issue
    calls right rather than what it reports:

    - the wanted behaviour: after an "Expected:" label, or after the marker of an expect or
      should clause ("I expected", "but it should be"; a clause's subject, as in "`f(x)`
      should return 10", is what is reported), up to a clause that states the actual behaviour
      ("but it returns") or the sentence's end;
    - a clause that calls code right: it works, is fine or correct, or is a workaround.

    The sentences and the expected/actual readers are those of :func:`behaviour`, applied to
    each clause as well as to the sentence (a should clause after a comma: "gives 2.0, but it
    should be `2.5`")."""
    for sentence in _sentences(text):
        yield sentence, _right_ranges(sentence)


def _right_ranges(sentence: str) -> list[tuple[int, int]]:
    if label := _EXPECTED_LABEL.match(sentence):
        return [(label.start("rest"), len(sentence))]
    # read with code spans blanked (their words are code, not claims), offsets kept
    masked = _CODE_SPAN.sub(lambda m: "`" + "_" * (len(m.group(0)) - 2) + "`", sentence)
    ranges: list[tuple[int, int]] = []
    clauses = _clauses(masked)
    wanted: int | None = None
    for index, (start, clause) in enumerate(clauses):
        end = clauses[index + 1][0] if index + 1 < len(clauses) else len(sentence)
        actual = _ACTUAL_SENTENCE.search(clause)
        if actual and inside_mention(sentence[start:end], actual.start()):
            actual = None
        if wanted is not None and actual:  # "..., but it returns 11": the wanted part ends
            ranges.append((wanted, start + actual.start()))
            wanted = None
        marker = _EXPECT_SENTENCE.search(clause) or _SHOULD_SENTENCE.search(clause)
        if wanted is None and marker and not clause.rstrip().endswith("?"):
            wanted = start + marker.end()
        if _CALLS_RIGHT.search(clause) and not _DENIED.search(clause):
            ranges.append((start, end))
    if wanted is not None:
        ranges.append((wanted, len(sentence)))
    return ranges


def _clauses(masked: str) -> list[tuple[int, str]]:
    """The clauses of a sentence whose code spans are blanked, each with its offset."""
    starts = [0, *(m.end() for m in _CLAUSE_BREAK.finditer(masked) if m.end() < len(masked))]
    bounds = [*starts, len(masked)]
    return [(bounds[i], masked[bounds[i] : bounds[i + 1]]) for i in range(len(starts))]


def _sentence_behaviour(sentence: str) -> tuple[str | None, str | None]:
    if label := _EXPECTED_LABEL.match(sentence):
        return label.group("rest").strip() or sentence, None
    if label := _ACTUAL_LABEL.match(sentence):
        return None, label.group("rest").strip() or sentence
    if sentence.rstrip().endswith("?"):
        return None, None
    actual = _ACTUAL_SENTENCE.search(sentence)
    if actual and inside_mention(sentence, actual.start()):
        actual = None  # "but got" inside a quoted error message
    if _EXPECT_SENTENCE.search(sentence) or _SHOULD_SENTENCE.search(sentence):
        if actual and actual.start() > 0:
            return sentence[: actual.start()].rstrip(" ,;"), sentence[actual.start() :]
        return sentence, None
    return None, sentence if actual else None


def _with_next_block(sentence: str, items: list[Prose | Block], index: int) -> str:
    following = items[index + 1] if index + 1 < len(items) else None
    if isinstance(following, Block):
        return f"{sentence}\n{following.code.text}"
    return sentence


def _section_text(scan: Scan, items: list[Prose | Block], role: str) -> str | None:
    sections = [n for n, r in enumerate(scan.section_roles) if r == role]
    if not sections:
        return None
    parts = []
    for item in items:
        if isinstance(item, Prose):
            if item.section == sections[0] and not item.heading:
                parts.append(item.text)
        elif item.section == sections[0]:
            parts.append(item.code.text)
    return "\n".join(parts).strip() or None


def _sentences(text: str) -> Iterator[str]:
    """Sentences of a paragraph; a line starting with "Expected:"/"Actual:" starts a new one."""
    chunks: list[list[str]] = [[]]
    for line in text.split("\n"):
        if chunks[-1] and (_EXPECTED_LABEL.match(line) or _ACTUAL_LABEL.match(line)):
            chunks.append([])
        chunks[-1].append(line)
    for chunk in chunks:
        for sentence in _SENTENCE_END.split(" ".join(" ".join(chunk).split())):
            if sentence:
                yield sentence


def _shorten(text: str | None) -> str | None:
    if text is None:
        return None
    text = text.strip()
    if len(text) <= MAX_BEHAVIOUR_CHARS:
        return text or None
    return text[: MAX_BEHAVIOUR_CHARS - 1].rstrip() + "…"
