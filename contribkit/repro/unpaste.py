"""Characters a paste puts into code that stop Python parsing it, and what a human types instead.

Class: code copied through a word processor, a blog or a chat client, which turns quotes into
typographic ones (``device=“cuda”``), spaces into no-break spaces (U+00A0 after a copy from a
rendered page), minus signs into U+2212, and slips in zero-width spaces. The edit is made only
when the code does not parse and the edited code does, and it is recorded like every other.
"""

from __future__ import annotations

from contribkit.repro.codefacts import parse_code

# character -> (replacement, how the edit names it)
_PASTED = {
    "\u201c": ('"', "“"),
    "\u201d": ('"', "”"),
    "\u201e": ('"', "„"),
    "\u2018": ("'", "‘"),
    "\u2019": ("'", "’"),
    "\u00a0": (" ", "no-break space"),
    "\u202f": (" ", "narrow no-break space"),
    "\u2009": (" ", "thin space"),
    "\u200b": ("", "zero-width space"),
    "\ufeff": ("", "byte order mark"),
    "\u2212": ("-", "minus sign −"),
    "\u2013": ("-", "en dash –"),
}
_TABLE = str.maketrans({char: new for char, (new, _) in _PASTED.items()})


def unpaste(code: str) -> tuple[str, str] | None:
    """``(edited code, the edit's description)`` when pasted characters are all that stop
    ``code`` parsing; None otherwise (it parses, or still would not)."""
    if parse_code(code) is not None:
        return None
    fixed = code.translate(_TABLE)
    if fixed == code or parse_code(fixed) is None:
        return None
    found = [f"{name} x{code.count(char)}" for char, (_, name) in _PASTED.items() if char in code]
    return fixed, "replace pasted characters that stop the code parsing: " + ", ".join(found)
