"""Reading one source text: cleaning it, unwrapping ``<details>`` folds, and walking
markdown-it's tokens into the blocks and prose of a :class:`~contribkit.issue.parse.scan.Scan`."""

from __future__ import annotations

import functools
import operator
import re
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING

from contribkit.issue.model import CodeBlock
from contribkit.issue.parse.classify import classify
from contribkit.issue.parse.scan import Block, Prose, Scan, parse_python
from contribkit.issue.parse.signature import is_header
from contribkit.issue.parse.transcripts import (
    blank_prose_output,
    drop_non_code_lines,
    has_prompts,
    has_statements,
    is_printed_output,
)

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_BLOCK_LINE = operator.attrgetter("code.line")  # a block's line, the sort key (in C)
# Longer bodies and comments are cut here (with a warning): real reports are far shorter, and
# pasted multi-megabyte logs would only slow every later step down.
MAX_SOURCE_CHARS = 200_000

# Heading and <summary> roles whose blocks are never part of the issue's program.
NOT_PROGRAM_ROLES = {
    "env": "environment details",
    "expected": "the expected behaviour",
    "actual": "the actual behaviour",
    "workaround": "a workaround",
}
_FENCE_LINE = re.compile(r"^\s*(?:```|~~~)", re.MULTILINE)
_HTML_ONLY_LINE = re.compile(r"\s*(?:<[^<>\n]+>\s*)+")
_DETAILS_TAG = re.compile(
    r"\s*(?:<details\b[^>]*>|</details\s*>|<summary\b[^>]*>(?P<label>.*?)</summary\s*>"
    r"|</?summary\b[^>]*>)",
    re.IGNORECASE,
)
_TRAILING_DETAILS_TAG = re.compile(r"\s*(?:</details\s*>|<details\b[^>]*>|</summary\s*>)\s*$", re.I)
_ANY_TAG = re.compile(r"<[^<>]*>")
_WORKAROUND = re.compile(r"\bwork[- ]?arounds?\b", re.I)
_INFO_PROMPT = re.compile(r"\s*(?:>>>|In \[\d*\]:)")
_EXPECTED_LEAD = re.compile(
    r"\bexpect(?:ed|s|ing)?\b|\bshould\s+(?:be|print|return|output|give)\b|\bcorrect\s+(?:output|result)",
    re.I,
)


def read_source(source: str, what: str, text: object) -> Scan:
    scan = Scan(source=source, text="")
    scan.text = clean(text, what, scan.warnings)
    _Reader(scan).read()
    return scan


def clean(text: object, what: str, warnings: list[str]) -> str:
    """``text`` with LF line ends, no NULs or unpaired surrogates, at most MAX_SOURCE_CHARS long."""
    if not isinstance(text, str):
        return ""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    fixed = text.replace("\x00", "\ufffd")
    fixed = fixed.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    replaced = fixed.count("\ufffd") - text.count("\ufffd")
    if replaced:
        warnings.append(f"{what} had {replaced} NUL or invalid character(s); they were replaced")
    if len(fixed) > MAX_SOURCE_CHARS:
        cut = fixed.rfind("\n", 0, MAX_SOURCE_CHARS)
        if cut < MAX_SOURCE_CHARS // 2:
            cut = MAX_SOURCE_CHARS
        warnings.append(
            f"{what} is {len(fixed):,} characters long; only the first {cut:,} were read"
        )
        fixed = fixed[:cut]
    return fixed


@functools.lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    """CommonMark without links, images, emphasis and link definitions.

    Prose is read for error messages and sentences, where ``*args`` or ``[rank0]: ...`` must stay
    as written; and link parsing is quadratic on runs of brackets.
    """
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").disable(["reference", "emphasis", "link", "image"])


@dataclass
class _Details:
    start: int  # 0-based line of <details>
    end: int  # 0-based line of </details> (the last line when never closed)
    label: str  # the <summary> text


def _unwrap_details(text: str) -> tuple[str, list[_Details]]:
    """Blank ``<details>``/``<summary>`` tags at line starts and ends; return the folds found."""
    lines = text.split("\n")
    folds: list[_Details] = []
    open_folds: list[_Details] = []
    for number, line in enumerate(lines):
        if "<" not in line:
            continue
        pos = 0
        while (match := _DETAILS_TAG.match(line, pos)) and match.end() > pos:
            tag = match.group(0).strip().lower()
            if tag.startswith("<details"):
                open_folds.append(_Details(number, len(lines) - 1, ""))
            elif tag.startswith("</details") and open_folds:
                fold = open_folds.pop()
                fold.end = number
                folds.append(fold)
            elif match.group("label") is not None and open_folds:
                open_folds[-1].label = _ANY_TAG.sub("", match.group("label")).strip()
            pos = match.end()
        rest = line[pos:]
        while trailing := _TRAILING_DETAILS_TAG.search(rest):
            if trailing.group(0).strip().lower().startswith("</details") and open_folds:
                fold = open_folds.pop()
                fold.end = number
                folds.append(fold)
            rest = rest[: trailing.start()]
        if pos or len(rest) != len(line):
            lines[number] = rest if rest.strip() else ""
    folds.extend(open_folds)
    return "\n".join(lines), folds


def _blank_tag_lines(text: str) -> str:
    return "\n".join("" if _HTML_ONLY_LINE.fullmatch(line) else line for line in text.split("\n"))


class _Reader:
    """Walks markdown-it's tokens for one source text and fills a Scan."""

    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        self.text, self.folds = _unwrap_details(scan.text)
        self.section = -1
        self.section_role = "other"
        self.last_prose = ""  # the latest prose of the current section

    def read(self) -> None:
        self._walk(self.text, 0, 0)
        self._read_unfenced_code()
        self.scan.blocks.sort(key=_BLOCK_LINE)

    def _role_at(self, line: int) -> str:
        if not self.folds:
            return self.section_role
        inner = [f for f in self.folds if f.start <= line <= f.end and f.label]
        if inner:
            role = _role(max(inner, key=lambda f: f.start).label)
            if role != "other":
                return role
        return self.section_role

    def _walk(self, text: str, offset: int, depth: int) -> None:
        lines = text.split("\n")
        tokens = _markdown().parse(text)
        for index, token in enumerate(tokens):
            if token.map is None:
                continue
            start = token.map[0] + offset
            if token.type == "heading_open":
                title = tokens[index + 1].content if index + 1 < len(tokens) else ""
                self.section += 1
                self.section_role = _role(title)
                self.scan.section_roles.append(self.section_role)
                self.last_prose = ""
            elif token.type == "inline":
                heading = index > 0 and tokens[index - 1].type == "heading_open"
                raw = lines[token.map[0] : token.map[1]]
                self._prose(token, raw, start, heading)
            elif token.type == "fence":
                self._check_closed(token, lines, start)
                self._code(token.content, token.info, start + 1)
            elif token.type == "code_block":
                self._code(token.content, "", start)
            elif token.type == "html_block" and depth < 2 and _FENCE_LINE.search(token.content):
                # A fence right under an HTML tag (no blank line) is part of the HTML block.
                self._walk(_blank_tag_lines(token.content), start, depth + 1)

    def _check_closed(self, token: Token, lines: list[str], start: int) -> None:
        assert token.map is not None
        last = token.map[1] - 1
        closing = lines[last].lstrip(" \t>") if 0 <= last < len(lines) else ""
        marker = token.markup[:1] or "`"
        if last <= token.map[0] or not (
            closing.startswith(token.markup) and not closing.strip().strip(marker)
        ):
            self.scan.warnings.append(
                f"the code block at line {start + 1} of the {self.scan.source} is never closed;"
                " it was read to the end of the text"
            )

    def _prose(self, token: Token, raw: list[str], start: int, heading: bool) -> None:
        text = _inline_text(token)
        role = self._role_at(start)
        header = next((i for i, line in enumerate(raw) if is_header(line)), None)
        if header is not None and not heading:
            self._add(
                CodeBlock(
                    "traceback", _dedent(raw[header:]), "", self.scan.source, start + header + 1
                ),
                role,
            )
            raw = raw[:header]
        self.scan.prose.append(
            Prose(text, "\n".join(raw), start, role, self.section, heading, header is not None)
        )
        if not heading:
            self.last_prose = text

    def _code(self, content: str, info: str, start: int) -> None:
        role = self._role_at(start)
        # ```>>> import torch: the first line sits in the info string
        if info and _INFO_PROMPT.match(info):
            content, info, start = f"{info}\n{content}", "", start - 1
        for piece in classify(content, _tag(info)):
            line = start + piece.offset + 1
            self._add(CodeBlock(piece.kind, piece.text, info.strip(), self.scan.source, line), role)

    def _add(self, code: CodeBlock, role: str) -> None:
        after_workaround, expected = lead_facts(self.last_prose)
        self.scan.blocks.append(Block(code, role, self.section, after_workaround, expected))

    def _read_unfenced_code(self) -> None:
        """Old issues paste code as plain paragraphs; read those only when nothing is fenced."""
        if any(b.code.kind in ("python", "repl") for b in self.scan.blocks):
            return
        found = []
        for prose in self.scan.prose:
            if prose.heading or prose.role in NOT_PROGRAM_ROLES or not prose.raw.strip():
                continue
            line = prose.line + 1
            raw = prose.raw.split("\n")
            if has_prompts([r.strip() for r in raw]):  # `>>>` lines: a blockquote to markdown
                found += self._unfenced_transcript(prose, raw)
                continue
            code = drop_non_code_lines(_dedent(raw))
            tree = parse_python(code)
            if tree is not None and has_statements(tree):
                block = CodeBlock("python", code, "", self.scan.source, line)
                self.scan.blocks.append(Block(block, prose.role, prose.section, False))
                found.append(line)
            elif found and is_printed_output(code):  # the output pasted under unfenced code
                block = CodeBlock("output", code, "", self.scan.source, line)
                self.scan.blocks.append(Block(block, prose.role, prose.section, False))
        if found:
            self.scan.warnings.append(
                f"the {self.scan.source} has no code fences; read Python from plain text at"
                f" line {', '.join(map(str, found))}"
            )

    def _unfenced_transcript(self, prose: Prose, raw: list[str]) -> list[int]:
        """A REPL transcript pasted as plain text, read as a fenced one is: code and output
        (the prose that follows an output line without a blank line is not output)."""
        lines = blank_prose_output(_dedent(raw).split("\n"))
        pieces = classify("\n".join(lines), "")
        for piece in pieces:
            line = prose.line + piece.offset + 1
            block = CodeBlock(piece.kind, piece.text, "", self.scan.source, line)
            self.scan.blocks.append(Block(block, prose.role, prose.section, False))
        return [prose.line + 1] if any(p.kind == "repl" for p in pieces) else []


@functools.lru_cache(maxsize=8)  # the blocks under one prose ask in a row; prose can be long
def lead_facts(prose: str) -> tuple[bool, bool]:
    """What the prose before a block says of it: a workaround, and the expected result ("Expected
    output:"). Asked once a block, of the same prose for every block under it: kept."""
    lead = prose.strip().rsplit("\n", 1)[-1]
    expected = bool(_EXPECTED_LEAD.search(lead)) and lead.rstrip().endswith(":")
    return bool(_WORKAROUND.search(prose)), expected


def _inline_text(token: Token) -> str:
    parts: list[str] = []
    for child in token.children or []:
        if child.type == "text":
            parts.append(child.content)
        elif child.type == "code_inline":
            parts.append(f"`{child.content}`")
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
    return "".join(parts)


def _role(title: str) -> str:
    """What a heading or <summary> says about the text under it: "expected", "actual",
    "workaround", "env" (a title that starts like "Versions" or "Environment") or "other"."""
    title = " ".join(re.sub(r"[^\w\s/]", " ", title.lower()).split())
    # "Expected behavior", "What I expected"; not "Larger than expected", "Works as expected"
    if re.search(
        r"^(?:the\s+|my\s+)?expected\b|\bexpected\s+(?:behaviou?r|results?|outputs?|outcomes?|values?)"
        r"|\bwhat\s+(?:i|you|we)\s+(?:expected|expect)\b",
        title,
    ):
        return "expected"
    if re.search(r"\b(?:actual|observed)\b|\bcurrent\s+(?:behaviou?r|result|output)", title):
        return "actual"
    if re.search(r"\bwork\s?arounds?\b|^alternatives?\b", title):
        return "workaround"
    if re.match(r"(?:versions?|environment|env|system\s+info|collect_env)\b", title):
        return "env"
    return "other"


@functools.lru_cache(maxsize=256)
def _tag(info: str) -> str:
    """The language of a fence's info string: "```{.python title=x}" -> "python"."""
    words = info.strip().lstrip("{").split()
    return words[0].lstrip(".").rstrip("}").lower() if words else ""


def _dedent(lines: list[str]) -> str:
    return textwrap.dedent("\n".join(lines)).strip("\n")
