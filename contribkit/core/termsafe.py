"""The one filter between untrusted text (issue titles and bodies, GitHub's replies, a child's
verdict detail and log) and a terminal.

Such text may hold escape sequences that clear the screen, retitle the window, write the
clipboard (OSC 52) or forge lines of contribkit's own output. :func:`clean` removes every
control character and escape sequence (CSI, OSC, DCS/SOS/PM/APC strings, 8-bit C1 controls)
and every bidirectional override or isolate (U+202A–U+202E, U+2066–U+2069, and the marks);
a single-line field also loses its line breaks. :func:`guard_streams` puts the same filter in
front of stdout and stderr when they are terminals, keeping only SGR colour codes (what Click
and rich print), so that no path to the terminal is left unfiltered.

Standard library only and cheap to import: errors are printed through it.
"""

from __future__ import annotations

import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

# An escape sequence, most specific first; a string sequence (OSC, DCS, …) runs to its
# terminator (BEL or ST) or, when it has none, to the end of the text.
_SEQUENCE = (
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI, 7- and 8-bit (SGR colours are CSI …m)
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS…
    r"|\x1b[ -/]*[0-~]?"  # any other ESC sequence (charset, keypad, RIS)
)
_CONTROL = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"  # C0 but \t \n \r, DEL, C1
# Bidirectional overrides and isolates (and the invisible marks) reorder what a line shows,
# as in "Trojan Source": a title or detail could read differently from what it holds.
_BIDI = "[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
_UNSAFE = re.compile(f"{_SEQUENCE}|{_CONTROL}|{_BIDI}")
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_BREAKS = re.compile(r"[\r\n\t\v\f\x85\u2028\u2029]+")


def clean(text: Any, *, single_line: bool = False) -> str:
    """``text`` without control characters or escape sequences. A lone carriage return (which
    lets a line overwrite itself) becomes a line break; ``single_line`` turns every line break
    into a space (titles, details, one-line messages: no forged ``next:`` line)."""
    raw = "" if text is None else str(text)
    if raw.isprintable():  # no control, format (bidi) or line-break character: nothing to do
        return raw
    safe = _UNSAFE.sub("", raw)
    if single_line:
        return _BREAKS.sub(" ", safe)
    return safe.replace("\r\n", "\n").replace("\r", "\n")


_INVISIBLE = re.compile(f"{_CONTROL}|{_BIDI}")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` for a file that a user reads with ``cat`` or an editor (a repro script, an
    issue's snapshot): each control character and bidirectional mark written as its Python
    escape (``\\x1b``, ``\\u202e``), and a lone carriage return as a line break, so no escape
    sequence or reordering hides a line of code from its reader. Inside a (non-raw) string
    literal of Python code the escape means the same character, so the code still does
    what it did."""
    if "\r" not in text and not _INVISIBLE.search(text):
        return text
    return _INVISIBLE.sub(_escape, text.replace("\r\n", "\n").replace("\r", "\n"))


def clean_keeping_colour(text: str) -> str:
    """:func:`clean`, but SGR colour codes stay (contribkit's own styling)."""
    if "\r" not in text and not _UNSAFE.search(text):
        return text  # the common case: contribkit's own plain text
    parts = _SGR.split(text)
    colours = _SGR.findall(text)
    out = [clean(parts[0])]
    for colour, part in zip(colours, parts[1:], strict=True):
        out += [colour, clean(part)]
    return "".join(out)


class SafeStream:
    """A text stream that passes everything written through :func:`clean_keeping_colour`;
    anything else (isatty, fileno, encoding, buffer, …) is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._stream.write(clean_keeping_colour(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_streams() -> None:
    """Filter what is written to stdout and stderr when they are terminals (files and pipes get
    the program's output as it is)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None or isinstance(stream, SafeStream):
            continue
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        if tty:
            setattr(sys, name, SafeStream(stream))
