"""Tracebacks and error signatures: where a traceback starts, its exception lines, and failures
mentioned in prose, code comments and the title."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import replace

from contribkit.issue.model import Signature
from contribkit.issue.parse.scan import Block, Prose, Scan, document_order, parse_python
from contribkit.target.reprojudge import normalise_message

_TRACEBACK_HEADER = "Traceback (most recent call last):"
_CHAIN_MARKERS = (
    "The above exception was the direct cause of the following exception",
    "During handling of the above exception, another exception occurred",
)
# `Type: message`, `Type:` or a bare `Type` on a line of its own.
_EXCEPTION_LINE = re.compile(r"(?P<type>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?P<colon>:(?P<msg>.*))?")
_EXCEPTION_SUFFIXES = (
    "Error",
    "Exception",
    "Exit",
    "Interrupt",
    "Failed",
    "Failure",
    "Unsupported",
    "StopIteration",
    "Warning",
)
# What a failure's name holds: a suffix above (Warning aside: never a failure) or ``exc.``.
_FAILURE_WORD = re.compile(r"Error|Exception|Exit|Interrupt|Fail|Unsupported|StopIteration|exc\.")
# Distributed runs prefix every line of their output with the rank; pytest marks error lines "E".
_LOG_PREFIX = re.compile(r"^(?:\[(?:rank|default)\d+\]:\s?|E {3,})")
_FRAME = re.compile(r'^\s*File "[^"]*", line \d+')

# A mention in prose: "RuntimeError: boom", "`torch._dynamo.exc.Unsupported: ...`".
_TEXT_SIGNATURE = re.compile(
    r"(?<![\w.])(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*):[ \t]*(?P<msg>[^\n`]*)"
)
# A type without a message, named after a verb: "it raises a `ValueError`".
_TEXT_RAISE = re.compile(
    r"(?i:\b(?:raises?|raised|raising|throws?|threw|thrown|throwing|gets?|got|getting"
    r"|fails?\s+with|failed\s+with|results?\s+in|resulted\s+in)\s+"
    r"(?:an?\s+|the\s+(?:following\s+)?)?)`?(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)(?![\w.])`?(?!\s*:)"
)
# Words before a mention that make it the behaviour wanted, not the failure seen:
# "it should raise ValueError: ...", "I expected a `TypeError`", "it does not raise KeyError".
_HEDGE = re.compile(
    r"\b(?:should|expect(?:s|ed)?|expecting|supposed|ought|instead\s+of|rather\s+than)\b"
    r"|\b(?:not|never|no\s+longer)\s+(?:\w+\s+)?$|n't\s+(?:\w+\s+)?$",
    re.I,
)


def _strip_log(line: str) -> str:
    if line.startswith(("[", "E")):  # the only starts _LOG_PREFIX matches: most lines skip it
        line = _LOG_PREFIX.sub("", line)
    return line.rstrip()


def is_header(line: str) -> bool:
    return _strip_log(line).lstrip().startswith(_TRACEBACK_HEADER)


def _exception_like(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    if name in ("Error", "Warning"):  # "Error: ..." is a label, not a Python exception
        return False
    return last.endswith(_EXCEPTION_SUFFIXES) or ".exc." in f".{name}"


def _is_failure(name: str) -> bool:
    return _exception_like(name) and not name.endswith("Warning")


def _exception_match(line: str) -> re.Match[str] | None:
    if not line or line[0].isspace() or _FRAME.match(line):
        return None
    return _EXCEPTION_LINE.fullmatch(line)


def is_failure_name(name: str) -> bool:
    """Whether a dotted name names a failure (``RuntimeError``, ``torch._dynamo.exc.Unsupported``;
    not ``UserWarning`` nor ``Error``): what :func:`is_failure_line` says of a line that holds
    only an ASCII dotted name, which its exception pattern takes whole."""
    return _FAILURE_WORD.search(name) is not None and _is_failure(name)


def is_failure_line(line: str) -> bool:
    """A line that names a failure: ``RuntimeError: boom``, ``torch._dynamo.exc.Unsupported``."""
    if not _FAILURE_WORD.search(line):  # the name of every failure holds one of these
        return False
    match = _exception_match(_strip_log(line))
    return match is not None and _is_failure(match.group("type"))


def error_start(lines: list[str], text: str | None = None) -> int | None:
    """Where a block's traceback starts: its header, else the frames above its final error.
    ``text`` is ``lines`` joined by newlines, where the caller has it."""
    if text is None:
        text = "\n".join(lines)
    if _TRACEBACK_HEADER in text:  # a header line holds it, prefix or not
        for number, line in enumerate(lines):
            if is_header(line):
                return number
    if lines and lines[-1].strip():  # the usual case (classify drops trailing blank lines)
        last: int | None = len(lines) - 1
    else:
        last = next((n for n in range(len(lines) - 1, -1, -1) if lines[n].strip()), None)
    if last is None:
        return None
    if not is_failure_line(lines[last]):
        if parse_python(text) is not None:
            return None
        # the last failure line above it (a failure line is never blank)
        last = next((n for n in range(last - 1, -1, -1) if is_failure_line(lines[n])), None)
        if last is None:
            return None
    start = last
    number = last
    while number > 0 and _frame_part(lines[number - 1]):
        number -= 1
        if _FRAME.match(lines[number]):
            start = number
    return start


def _frame_part(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and (
        line[0].isspace() or bool(_FRAME.match(line)) or not stripped.strip("^~ ")
    )


def _traceback_signatures(text: str) -> list[Signature]:
    """One signature per traceback in ``text`` (chained tracebacks give one each, inner first).

    The exception line is the first line at the header's indentation after the frames (frames
    may be missing or elided). A message that is empty or ends in ":" continues on the next
    line, as in ``BackendCompilerFailed: backend='inductor' raised:`` + ``RuntimeError: ...``.
    Without a header, the last failure line counts (walking up to an enclosing "raised:" line).
    """
    lines = [_strip_log(line) for line in text.split("\n")]
    headers = [n for n, line in enumerate(lines) if line.lstrip().startswith(_TRACEBACK_HEADER)]
    if not headers:
        failures = [n for n, line in enumerate(lines) if is_failure_line(line)]
        if not failures:
            return []
        last = failures[-1]
        while last > 0:
            above = _previous_filled(lines, last)
            match = _exception_match(lines[above]) if above is not None else None
            if above is None or match is None or not _ends_open(match):
                break
            last = above
        signature = _signature_at(lines, last, strict=True)
        return [signature] if signature else []
    found = []
    for index, header in enumerate(headers):
        end = headers[index + 1] if index + 1 < len(headers) else len(lines)
        indent = len(lines[header]) - len(lines[header].lstrip())
        body = [line[indent:] if not line[:indent].strip() else line for line in lines[header:end]]
        for number in range(1, len(body)):
            if body[number].startswith(_CHAIN_MARKERS):
                break
            signature = _signature_at(body, number, strict=False)
            if signature:
                found.append(signature)
                break
    return found


def _previous_filled(lines: list[str], number: int) -> int | None:
    for above in range(number - 1, -1, -1):
        if lines[above].strip():
            return above
    return None


def _ends_open(match: re.Match[str]) -> bool:
    message = (match.group("msg") or "").strip()
    return match.group("colon") is not None and (not message or message.endswith(":"))


def _signature_at(lines: list[str], number: int, strict: bool) -> Signature | None:
    match = _exception_match(lines[number])
    if match is None:
        return None
    exc_type = match.group("type")
    message = (match.group("msg") or "").strip()
    has_message = match.group("colon") is not None and bool(message)
    capitalised = exc_type.rsplit(".", 1)[-1][:1].isupper()
    if not (_exception_like(exc_type) or (not strict and has_message and capitalised)):
        return None
    if _ends_open(match):
        following = next((line.strip() for line in lines[number + 1 :] if line.strip()), "")
        if following and not following.startswith(_CHAIN_MARKERS):
            message = f"{message} {following}".strip()
    return Signature(exc_type, normalise_message(message), "traceback")


def _text_signatures(text: str) -> Iterator[Signature]:
    """Mentions in prose: "raises RuntimeError: boom", "throws `ValueError: bad`", "a `KeyError`".

    A mention whose sentence says it is wanted ("should raise", "I expected", "does not raise")
    is skipped: taking it as the failure would turn the verdict upside down.
    """
    for match in _TEXT_SIGNATURE.finditer(text):
        if _is_failure(match.group("type")) and not _hedged(text, match.start()):
            message = match.group("msg")
            opened = text[match.start() - 1 : match.start()]
            if opened in ('"', "'"):  # throws "RuntimeError: boom" exception: up to the quote
                # the closing quote, not an apostrophe between letters: "can't convert"
                message = re.split(rf"(?<![A-Za-z]){opened}|{opened}(?![A-Za-z])", message)[0]
            message = message.strip().strip("\"'")
            yield Signature(match.group("type"), normalise_message(message), "text")
    for match in _TEXT_RAISE.finditer(text):
        if _is_failure(match.group("type")) and not _hedged(text, match.start()):
            yield Signature(match.group("type"), "", "text")


# A title names its failure without a verb or a message: "IndexError in torch.gather with
# negative indices", "unfold: RuntimeError on a zero step", "internal assert in addmm on a
# sparse input" (torch's internal asserts raise "RuntimeError: ... INTERNAL ASSERT FAILED").
# Class from issue #21's kept-aside sets: an error raised without a quoted traceback while the
# title names the failure. Not an error the title wants or misses ("no IndexError for ...",
# "a clearer error than KeyError"), nor a bare "Exception", which any error would match.
_TITLE_FAILURE = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?![\w.:])")
_INTERNAL_ASSERT = re.compile(r"\binternal[\s_]+assert", re.I)
_WANTED_BEFORE = re.compile(
    r"\b(?:no|missing|proper|better|clearer|meaningful|informative|helpful|wrong|misleading"
    r"|raise|raising|add|adding|without|confusing|cryptic|unclear|improve|vs|versus|or)"
    r"\s+(?:\w+\s+)?$|\bthan\s+(?:an?\s+)?$",
    re.I,
)
# Words after the name that make it wanted or missing: "IndexError should be raised for ...",
# "RuntimeError not raised for ...", "IndexError is not raised", "IndexError check in ...".
_WANTED_AFTER = re.compile(
    r"^\W*(?:\w+\W+){0,2}?(?:should|must|not|never|expected|instead|check|checks)\b", re.I
)
_TOO_BROAD = {"Exception", "BaseException"}
# A title that asks for a change: the errors it names are wanted, never the failure seen.
_REQUEST_TITLE = re.compile(
    r"^\W*(?:\[[^\]]{0,40}\]\W*)*(?:raise|throw|add|support|make|allow|implement|improve"
    r"|use|return|emit)\b",
    re.I,
)


def _title_signatures(title: str) -> Iterator[Signature]:
    """The failures a title names bare (a type, an internal assert), as type-only signatures."""
    if _MISSING_IN_TITLE.search(title):
        return
    names = [m for m in _TITLE_FAILURE.finditer(title) if _is_failure(m.group(0))]
    if len({m.group(0) for m in names}) > 1:  # "IndexError vs RuntimeError": which is the bug?
        return
    for match in names:
        name = match.group(0)
        before, after = title[: match.start()], title[match.end() :]
        if name.rsplit(".", 1)[-1] in _TOO_BROAD or _WANTED_AFTER.search(after):
            continue
        if not _hedged(title, match.start()) and not _WANTED_BEFORE.search(before):
            yield Signature(name, "", "text")
    found = _INTERNAL_ASSERT.search(title)
    if found and not _hedged(title, found.start()):
        yield Signature("RuntimeError", "INTERNAL ASSERT FAILED", "text")


# The title's bug is an error that is missing: no error it names is the failure.
_MISSING_IN_TITLE = re.compile(
    r"\bsilently\b|\b(?:does\s*n[o']t|did\s*n[o']t|never|fails?\s+to)\s+(?:raise|throw|error)", re.I
)


def _hedged(text: str, position: int) -> bool:
    sentence_start = max(text.rfind(mark, 0, position) for mark in (". ", "\n", "! ", "? "))
    return bool(_HEDGE.search(text[sentence_start + 1 : position]))


def _code_comments(code: str) -> Iterator[str]:
    """The comments in Python ``code`` (as far as it tokenizes)."""
    if "#" not in code:  # every comment token starts with one: nothing to tokenize
        return
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.COMMENT:
                yield token.string.lstrip("#").strip()
    except (tokenize.TokenError, SyntaxError, ValueError):
        return


def signatures(traceback_scans: list[Scan], scans: list[Scan], title: str) -> list[Signature]:
    found: list[Signature] = []
    for scan in traceback_scans:
        for block in scan.blocks:
            if block.code.kind == "traceback":
                found.extend(_traceback_signatures(block.code.text))
    mentions: list[Signature] = []
    fillers: list[Signature] = []  # mentions whose message may fill a traceback's cut one
    for scan in scans:
        for item in document_order(scan):
            if isinstance(item, Prose) and not item.has_traceback:
                said = list(_text_signatures(item.text))
                mentions.extend(said)
                if not _EARLIER.search(item.text):
                    fillers.extend(said)
            elif isinstance(item, Block) and item.code.kind in ("python", "repl"):
                for comment in _code_comments(item.code.text):
                    mentions.extend(_text_signatures(comment))
    if not _REQUEST_TITLE.match(title):  # "Raise ValueError instead of ...": a request
        titled = list(_text_signatures(title))
        mentions.extend(titled)
        fillers.extend(titled)
        mentions.extend(_title_signatures(title))
    for mention in mentions:
        cut = next((i for i, f in enumerate(found) if _message_cut(f, mention)), None)
        if cut is not None and any(mention is f for f in fillers):
            found[cut] = replace(found[cut], message=mention.message)
        elif not any(_same_failure(mention, earlier) for earlier in found):
            found.append(mention)
    return found


# A paragraph that tells of an error met before this one: "At first I got X, which I fixed".
_EARLIER = re.compile(
    r"\b(?:at\s+first|first\s+I|initially|previously|earlier|before\s+that|used\s+to"
    r"|(?:which|that)\s+I\s+(?:fixed|solved|resolved|worked\s+around))\b",
    re.I,
)


def _message_cut(earlier: Signature, mention: Signature) -> bool:
    """A traceback whose last line lost its message (``RuntimeError:`` and the body cut there,
    a message on lines the copy dropped) while the title or the prose quotes the same type
    whole (not a paragraph telling of an error met before, see _EARLIER):
    ``throws "RuntimeError: Overflow when unpacking long"``. The quoted message is its message."""
    return (
        earlier.origin == "traceback"
        and not earlier.message
        and bool(mention.message)
        and earlier.exc_type.rsplit(".", 1)[-1] == mention.exc_type.rsplit(".", 1)[-1]
    )


def _same_failure(mention: Signature, earlier: Signature) -> bool:
    if mention.exc_type != earlier.exc_type:
        return False
    return not mention.message or mention.message == earlier.message


def inside_mention(sentence: str, position: int) -> bool:
    return any(
        _is_failure(m.group("type")) and m.start() < position < m.end()
        for m in _TEXT_SIGNATURE.finditer(sentence)
    )
