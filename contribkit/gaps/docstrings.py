"""Which parameters a docstring describes: Google style (``Args:``, as PyTorch writes it, with
``Keyword args:``), NumPy style (``Parameters`` over dashes) and Sphinx fields (``:param x:``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

GOOGLE_HEADERS = re.compile(
    r"^(\s*)(Args|Arguments|Parameters|Params|Keyword [Aa]rgs|Keyword [Aa]rguments|"
    r"Other [Pp]arameters|Kwargs)\s*:\s*$"
)
# name (type): …   name: …   name1, name2 (type): …   *args: …   (PyTorch's {input} expands so)
GOOGLE_ENTRY = re.compile(
    r"^\s*(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(\(.*?\))?\s*:"
)
NUMPY_HEADER = re.compile(r"^\s*(Parameters|Other Parameters|Keyword Arguments)\s*$")
NUMPY_ENTRY = re.compile(r"^(\s*)(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::.*)?$")
SPHINX_FIELD = re.compile(
    r":(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?\*{0,2}(\w+)\s*:"
)
RULE = re.compile(r"^\s*-{3,}\s*$")


@dataclass(frozen=True)
class DocCheck:
    """What a docstring says about a callable's parameters."""

    style: str | None  # google, numpy, sphinx; None when it describes no parameter
    described: list[str]
    missing: list[str]  # the signature's parameters it does not describe


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _names(text: str) -> list[str]:
    return [n.strip().lstrip("*") for n in text.split(",") if n.strip()]


def google_params(lines: list[str]) -> list[str]:
    found: list[str] = []
    i = 0
    while i < len(lines):
        header = GOOGLE_HEADERS.match(lines[i])
        i += 1
        if not header:
            continue
        base = len(header.group(1))
        entry_indent: int | None = None
        while i < len(lines):
            line = lines[i]
            if line.strip() and _indent(line) <= base:
                break  # the section ended
            if line.strip():
                entry_indent = _indent(line) if entry_indent is None else entry_indent
                m = GOOGLE_ENTRY.match(line)
                if m and _indent(line) == entry_indent:
                    found += _names(m.group(1))
            i += 1
    return found


def numpy_params(lines: list[str]) -> list[str]:
    found: list[str] = []
    for i, line in enumerate(lines[:-1]):
        if not (NUMPY_HEADER.match(line) and RULE.match(lines[i + 1])):
            continue
        base = _indent(line)
        for j in range(i + 2, len(lines)):
            current = lines[j]
            if j + 1 < len(lines) and RULE.match(lines[j + 1]):
                break  # the next section's header
            m = NUMPY_ENTRY.match(current)
            if current.strip() and _indent(current) == base and m:
                found += _names(m.group(2))
    return found


def check_docstring(doc: str | None, params: list[str] | None) -> DocCheck:
    """The parameters of ``params`` that ``doc`` describes in any of the three styles."""
    if not doc:
        return DocCheck(None, [], list(params or []))
    lines = doc.expandtabs().splitlines()
    for style, found in (
        ("google", google_params(lines)),
        ("numpy", numpy_params(lines)),
        ("sphinx", SPHINX_FIELD.findall(doc)),
    ):
        if found:
            described = list(dict.fromkeys(found))
            missing = [p for p in params or [] if p not in described]
            return DocCheck(style, described, missing)
    return DocCheck(None, [], list(params or []))
