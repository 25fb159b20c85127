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
