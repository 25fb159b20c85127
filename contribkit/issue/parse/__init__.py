"""Read a GitHub issue's markdown into a :class:`~contribkit.issue.model.ParsedIssue`.

Each source text (the body; comments when the body has no code) goes through the same steps:

1. ``clean``: a missing body becomes ""; CRLF and CR become LF; NULs and unpaired surrogates
   become U+FFFD; text past ``MAX_SOURCE_CHARS`` is dropped with a warning. Line numbers stay those
   of the text as given.
2. ``_unwrap_details``: ``<details>`` and ``<summary>`` tags at the start or end of a line are
   blanked, and the summary text labels the lines the details element encloses. GitHub shows these
   tags as a fold, but CommonMark ends an HTML block only at a blank line, so a fence written right
   under ``<summary>`` would otherwise be swallowed into the HTML block.
3. markdown-it (CommonMark) splits the text into headings, fences, indented code and paragraphs.
   The nearest heading, or an enclosing ``<summary>``, gives what follows a *role*: env, expected,
   actual, errors, workaround or other.
4. ``classify`` decides each code block's kind from its content first and its tag second, and
   splits a block holding code and then its traceback (or a shell command and its traceback) in two.
5. Issue-level facts come from the classified blocks and the prose: the program
   (``program``), failure signatures, the reporter's environment, expected and actual behaviour.

Every step is total: ``parse_issue`` returns a well-typed result for any ``str`` input and never
raises. Heuristics are conservative and documented where they live.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from contribkit.issue.model import CodeBlock, Comment, Issue, ParsedIssue
from contribkit.issue.parse.classify import classify
from contribkit.issue.parse.env import reporter_env
from contribkit.issue.parse.scan import Block, Prose, Scan, document_order, parse_python
from contribkit.issue.parse.signature import inside_mention, is_header, signatures
from contribkit.issue.parse.transcripts import has_statements

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

# Longer bodies and comments are cut here (with a warning): real reports are far shorter, and
# pasted multi-megabyte logs would only slow every later step down.
MAX_SOURCE_CHARS = 200_000
# Expected/actual texts longer than this are cut; they end up in a docstring header.
MAX_BEHAVIOUR_CHARS = 600

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
_WORKAROUND = re.compile(r"\bwork[- ]?arounds?\b", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")


# -- the entry point ---------------------------------------------------------------------------


def parse_issue(issue: Issue) -> ParsedIssue:
    """Extract code, failure signatures, reporter env and expected/actual behaviour from ``issue``.

    - The program comes from the body; when the body has none, from the first comment with code,
      the issue author's comments first, then everyone else's in order (bots skipped).
    - ``blocks`` holds the code blocks of the body and of that comment, in document order.
    - ``signatures`` lists the tracebacks of the body and of that comment (when neither has one:
      of the author's first comment with a traceback), then mentions in prose and in code
      comments (origin "text"), then a mention in the title.
    - The reporter's env comes from the body, then from the author's comments.

    Never raises; what was odd about the input is said in ``warnings``.
    """
    body = read_source("body", "the issue body", issue.body)
    warnings = list(body.warnings)
    if not body.text.strip():
        warnings.append("the issue body is empty")
    comments = _CommentScans(issue)

    code_scan = body
    code, skipped = program(body)
    if not code:
        for scan in comments.by_priority():
            candidate, candidate_skipped = program(scan)
            if candidate:
                warnings.extend(scan.warnings)
                code_scan, code, skipped = scan, candidate, candidate_skipped
                break
    warnings.extend(skipped)
    if not code:
        warnings.append("no Python code found in the issue body or its comments")

    scans = [body] if code_scan is body else [body, code_scan]
    traceback_scans = scans
    if not any(_has_traceback(scan) for scan in scans):
        traceback_scans = scans + [s for s in comments.authors() if _has_traceback(s)][:1]
    expected, actual = behaviour(body)
    return ParsedIssue(
        code=code,
        code_source=code_scan.source if code else "",
        blocks=[b.code for scan in scans for b in scan.blocks],
        signatures=signatures(traceback_scans, scans, clean(issue.title, "the title", [])),
        env=reporter_env([body, *comments.authors()]),
        expected=expected,
        actual=actual,
        warnings=_unique(warnings),
        contrasts_devices=contrasts_devices(clean(issue.title, "the title", []), body),
    )


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


class _CommentScans:
    """The issue's comments, each read once and only when asked for."""

    def __init__(self, issue: Issue) -> None:
        humans = [c for c in issue.comments if isinstance(c.author, str) and not _is_bot(c.author)]
        self.own = [c for c in humans if issue.author and c.author == issue.author]
        self.others = [c for c in humans if c not in self.own]
        self.read: dict[int, Scan] = {}

    def _scan(self, comment: Comment) -> Scan:
        if id(comment) not in self.read:
            label = f"comment by @{comment.author}"
            self.read[id(comment)] = read_source(label, f"the {label}", comment.body)
        return self.read[id(comment)]

    def authors(self) -> Iterator[Scan]:
        """The issue author's comments, in order."""
        return (self._scan(c) for c in self.own)

    def by_priority(self) -> Iterator[Scan]:
        """The author's comments, then the others, each group in order; no bots."""
        return (self._scan(c) for c in [*self.own, *self.others])


def _is_bot(login: str) -> bool:
    """GitHub apps end in "[bot]"; PyTorch's own bots in "bot" (pytorchmergebot, pytorch-bot)."""
    return login.lower().endswith(("bot", "[bot]"))


def _has_traceback(scan: Scan) -> bool:
    return any(b.code.kind == "traceback" for b in scan.blocks)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


# -- reading one source text -------------------------------------------------------------------


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
        self.scan.blocks.sort(key=lambda b: b.code.line)

    def _role_at(self, line: int) -> str:
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
        for piece in classify(content, _tag(info)):
            line = start + piece.offset + 1
            self._add(CodeBlock(piece.kind, piece.text, info.strip(), self.scan.source, line), role)

    def _add(self, code: CodeBlock, role: str) -> None:
        after_workaround = bool(_WORKAROUND.search(self.last_prose))
        self.scan.blocks.append(Block(code, role, self.section, after_workaround))

    def _read_unfenced_code(self) -> None:
        """Old issues paste code as plain paragraphs; read those only when nothing is fenced."""
        if any(b.code.kind in ("python", "repl") for b in self.scan.blocks):
            return
        found = []
        for prose in self.scan.prose:
            if prose.heading or prose.role in NOT_PROGRAM_ROLES or not prose.raw.strip():
                continue
            code = _dedent(prose.raw.split("\n"))
            tree = parse_python(code)
            if tree is not None and has_statements(tree):
                line = prose.line + 1
                block = CodeBlock("python", code, "", self.scan.source, line)
                self.scan.blocks.append(Block(block, prose.role, prose.section, False))
                found.append(line)
        if found:
            self.scan.warnings.append(
                f"the {self.scan.source} has no code fences; read Python from plain text at"
                f" line {', '.join(map(str, found))}"
            )


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
    if re.search(r"\bexpected\b", title):
        return "expected"
    if re.search(r"\b(?:actual|observed)\b|\bcurrent\s+(?:behaviou?r|result|output)", title):
        return "actual"
    if re.search(r"\bwork\s?arounds?\b|^alternatives?\b", title):
        return "workaround"
    if re.match(r"(?:versions?|environment|env|system\s+info|collect_env)\b", title):
        return "env"
    return "other"


def _tag(info: str) -> str:
    """The language of a fence's info string: "```{.python title=x}" -> "python"."""
    words = info.strip().lstrip("{").split()
    return words[0].lstrip(".").rstrip("}").lower() if words else ""


def _dedent(lines: list[str]) -> str:
    return textwrap.dedent("\n".join(lines)).strip("\n")


# -- classifying a code block ------------------------------------------------------------------


# -- tracebacks and signatures -----------------------------------------------------------------


# -- the program -------------------------------------------------------------------------------


def program(scan: Scan) -> tuple[str, list[str]]:
    """The Python blocks that form one program, merged, and notes on the blocks left out.

    Left out: blocks under env/expected/actual/workaround headings or summaries; a block after the
    first whose preceding prose calls it a workaround; a block repeating an earlier one. Imports
    repeated across blocks keep their first occurrence; nothing is reordered.
    """
    parts: list[str] = []
    notes: list[str] = []
    for block in scan.blocks:
        code = block.code
        if code.kind not in ("python", "repl") or not code.text.strip():
            continue
        where = f"the {code.kind} block at line {code.line} of the {scan.source}"
        if block.role in NOT_PROGRAM_ROLES:
            notes.append(
                f"left out {where}: its heading or summary says it is {NOT_PROGRAM_ROLES[block.role]}"
            )
        elif parts and block.after_workaround:
            notes.append(f"left out {where}: the text calls it a workaround")
        elif any(_repeats(code.text, earlier) for earlier in parts):
            notes.append(f"left out {where}: it repeats an earlier block")
        else:
            parts.append(code.text)
    return _merge(parts), notes


def _repeats(code: str, earlier: str) -> bool:
    """True when ``code`` appears in ``earlier`` as whole lines."""
    return f"\n{code.strip()}\n" in f"\n{earlier.strip()}\n"


def _merge(parts: list[str]) -> str:
    seen: set[str] = set()
    merged: list[str] = []
    for part in parts:
        keys = _import_keys(part)
        kept = []
        for number, line in enumerate(part.split("\n")):
            key = keys.get(number)
            if key is not None:
                if key in seen:
                    continue
                seen.add(key)
            kept.append(line)
        text = "\n".join(kept).strip("\n")
        if text.strip():
            merged.append(text)
    return "\n\n".join(merged) + "\n" if merged else ""


def _import_keys(code: str) -> dict[int, str]:
    """0-based line -> canonical text, for lines that are exactly one top-level import."""
    tree = parse_python(code)
    if tree is None:
        keys = {}
        for number, line in enumerate(code.split("\n")):
            if line.startswith(("import ", "from ")):
                single = parse_python(line)
                if single is not None and len(single.body) == 1:
                    keys[number] = ast.unparse(single.body[0])
        return {n: k for n, k in keys.items() if k.startswith(("import ", "from "))}
    per_line: dict[int, int] = {}
    for stmt in tree.body:
        for number in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1):
            per_line[number] = per_line.get(number, 0) + 1
    return {
        stmt.lineno - 1: ast.unparse(stmt)
        for stmt in tree.body
        if isinstance(stmt, (ast.Import, ast.ImportFrom))
        and stmt.end_lineno == stmt.lineno
        and per_line[stmt.lineno] == 1
    }


# -- reporter environment ----------------------------------------------------------------------


# -- expected and actual behaviour -------------------------------------------------------------


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
