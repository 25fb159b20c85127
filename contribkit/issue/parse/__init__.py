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

from contribkit.issue.model import CodeBlock, Comment, Issue, ParsedIssue, ReporterEnv
from contribkit.issue.parse.scan import Block, Piece, Prose, Scan, document_order, parse_python
from contribkit.issue.parse.signature import error_start, inside_mention, is_header, signatures

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

# Longer bodies and comments are cut here (with a warning): real reports are far shorter, and
# pasted multi-megabyte logs would only slow every later step down.
MAX_SOURCE_CHARS = 200_000
# Expected/actual texts longer than this are cut; they end up in a docstring header.
MAX_BEHAVIOUR_CHARS = 600

_PYTHON_TAGS = frozenset(
    {"python", "py", "python3", "py3", "ipython", "ipython3", "pycon", "python-repl", "pyi"}
)
_SHELL_TAGS = frozenset(
    {
        "bash",
        "sh",
        "shell",
        "zsh",
        "fish",
        "console",
        "sh-session",
        "shell-session",
        "shellsession",
        "powershell",
        "ps1",
        "pwsh",
        "bat",
        "batch",
        "cmd",
    }
)
# Tags that say nothing about the content: classified exactly like untagged blocks.
_PLAIN_TAGS = frozenset(
    {
        "",
        "text",
        "txt",
        "plain",
        "plaintext",
        "log",
        "logs",
        "output",
        "out",
        "none",
        "raw",
        "stdout",
        "stderr",
        "code",
        "pytb",
        "traceback",
        "python-traceback",
        "py-traceback",
        "error",
    }
)
# Heading and <summary> roles whose blocks are never part of the issue's program.
NOT_PROGRAM_ROLES = {
    "env": "environment details",
    "expected": "the expected behaviour",
    "actual": "the actual behaviour",
    "workaround": "a workaround",
}


_PROMPT = re.compile(r"(?:>>>|In \[\d*\]:)(?: |$)")
_CONTINUATION = re.compile(r"(?:\.\.\.|\s*\.\.\.+:)(?: |$)")
_SHELL_LINE = re.compile(
    r"\s*(?:\$\s"
    r"|(?:[A-Z_][A-Z0-9_]*=\S*\s+)+\S"
    r"|(?:sudo\s+)?(?:pip3?|conda|mamba|micromamba|uv|python(?:3(?:\.\d+)?)?|torchrun|git|cd"
    r"|export|wget|curl|bash|sh|zsh|nvidia-smi|apt(?:-get)?|brew|make|cmake|ninja|docker|ls"
    r"|echo|source|gdb|valgrind|compute-sanitizer|nsys|ncu|tlparse|pytest)(?:\s|$))"
)
_FENCE_LINE = re.compile(r"^\s*(?:```|~~~)", re.MULTILINE)
_HTML_ONLY_LINE = re.compile(r"\s*(?:<[^<>\n]+>\s*)+")
_DETAILS_TAG = re.compile(
    r"\s*(?:<details\b[^>]*>|</details\s*>|<summary\b[^>]*>(?P<label>.*?)</summary\s*>"
    r"|</?summary\b[^>]*>)",
    re.IGNORECASE,
)
_TRAILING_DETAILS_TAG = re.compile(r"\s*(?:</details\s*>|<details\b[^>]*>|</summary\s*>)\s*$", re.I)
_ANY_TAG = re.compile(r"<[^<>]*>")

_COLLECT_ENV_KEYS = (
    "Collecting environment information",
    "PyTorch version:",
    "Is debug build:",
    "CUDA used to build PyTorch:",
    "ROCM used to build PyTorch:",
    "GCC version:",
    "Clang version:",
    "CMake version:",
    "Libc version:",
    "Python version:",
    "Python platform:",
    "Is CUDA available:",
    "CUDA runtime version:",
    "GPU models and configuration:",
    "Nvidia driver version:",
    "cuDNN version:",
    "Is XNNPACK available:",
    "Versions of relevant libraries:",
)
# `Key: value` lines of collect_env output and of the old "## Environment" bullet list, keys
# lower-cased with any "(e.g., 1.0)" removed.
_ENV_FIELDS = {
    "pytorch version": "torch_version",
    "torch version": "torch_version",
    "pytorch": "torch_version",
    "cuda used to build pytorch": "cuda_build",
    "cuda/cudnn version": "cuda_build",
    "cuda version": "cuda_build",
    "os": "os",
    "operating system": "os",
    "python version": "python",
    "gpu models and configuration": "gpu_models",
    "gpu models": "gpu_models",
    "gpu": "gpu_models",
    "is cuda available": "cuda_available",
}
_ENV_LINE = re.compile(
    r"\s*(?:(?:[-*+]|\d+[.)]|>)\s+)*\**(?P<key>[^:\n]{1,60}?)\**\s*:\s*(?P<value>.*)"
)
_GPU_LINE = re.compile(r"\s*GPU \d+\s*:")
_NO_VALUE = frozenset({"", "could not collect", "n/a", "na", "none", "-", "no cuda", "unknown"})

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

# The first line of a printed value that does not parse: `tensor([1.], grad_fn=<AddBackward0>)`.
PRINTED = re.compile(r"\s*[\[(]*(?:tensor|array|torch\.Size|Parameter containing:)(?:\(|$)")
# Call names that only appear in printed values: `tensor([1., 2.])`, `torch.Size([2])`, ...
_REPR_CALLS = frozenset(
    {"tensor", "array", "Parameter", "Size", "device", "dtype", "OrderedDict", "defaultdict"}
)


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


def classify(content: str, tag: str) -> list[Piece]:
    """One block's pieces: usually one; code (or a command) then its traceback gives two.

    Content wins over the tag: collect_env output, REPL prompts and tracebacks are recognised
    whatever the fence says, because reporters tag output as ``python`` or ``bash`` all the time.
    Then shell tags and shell-looking first lines give "shell", Python tags give "python" (unless
    the block is only printed values, like ``tensor([1., 2.])``), other code tags give "output", and
    untagged blocks are "python" when they parse (or start like a program: import, def, class).
    """
    lines = content.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return []
    lines = textwrap.dedent("\n".join(lines[first:])).split("\n")
    text = "\n".join(lines)
    if is_collect_env(lines):
        return [Piece("collect_env", first, text)]
    if has_prompts(lines) and parse_python(text) is None:
        return [_shifted(p, first) for p in repl_pieces(lines)]
    error = error_start(lines)
    if error is not None:
        head = lines[:error]
        head_kind = _plain_kind(head, tag) if any(line.strip() for line in head) else ""
        if head_kind in ("python", "shell"):
            return [
                Piece(head_kind, first, _finish(head_kind, head)),
                Piece("traceback", first + error, "\n".join(lines[error:])),
            ]
        return [Piece("traceback", first, text)]
    kind = _plain_kind(lines, tag)
    return [Piece(kind, first, _finish(kind, lines))]


def _shifted(piece: Piece, by: int) -> Piece:
    return Piece(piece.kind, piece.offset + by, piece.text)


def _plain_kind(lines: list[str], tag: str) -> str:
    text = textwrap.dedent("\n".join(lines))
    if tag in _SHELL_TAGS:
        return "shell"
    tree = parse_python(text)
    first = next((line for line in lines if line.strip()), "")
    if _SHELL_LINE.match(first) and (first.lstrip().startswith("$") or tree is None):
        return "shell"
    if tag in _PYTHON_TAGS:
        printed = not has_statements(tree) if tree is not None else PRINTED.match(first)
        return "output" if printed else "python"
    if tag not in _PLAIN_TAGS:
        return "output"
    if tree is not None:
        return "python" if has_statements(tree) else "output"
    return "python" if _starts_like_program(text) else "output"


def _finish(kind: str, lines: list[str]) -> str:
    text = textwrap.dedent("\n".join(lines)).rstrip()
    return drop_trailing_output(text) if kind == "python" else text


def is_collect_env(lines: list[str]) -> bool:
    return sum(1 for line in lines if line.lstrip().startswith(_COLLECT_ENV_KEYS)) >= 2


def has_prompts(lines: list[str]) -> bool:
    return any(_PROMPT.match(line) for line in lines)


def repl_pieces(lines: list[str]) -> list[Piece]:
    """A REPL transcript's code (prompts stripped) and the traceback in its output, if any."""
    code: list[str] = []
    output: list[tuple[int, str]] = []
    in_statement = False
    for number, line in enumerate(lines):
        prompt = _PROMPT.match(line)
        if prompt is None and in_statement:
            prompt = _CONTINUATION.match(line)
        if prompt is not None:
            code.append(line[prompt.end() :])
            in_statement = True
        else:
            in_statement = False
            output.append((number, line))
    pieces: list[Piece] = []
    code_text = "\n".join(code).strip("\n")
    if code_text.strip():
        pieces.append(Piece("repl", 0, code_text))
    error = error_start([line for _, line in output])
    if error is not None:
        text = "\n".join(line for _, line in output[error:])
        pieces.append(Piece("traceback", output[error][0], textwrap.dedent(text).strip("\n")))
    return pieces


def _starts_like_program(text: str) -> bool:
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return bool(
                re.match(
                    r"(?:import\s|from\s+[\w.]+\s+import\s|(?:async\s+)?def\s|class\s|@)", line
                )
            )
    return False


def has_statements(tree: ast.Module) -> bool:
    """True unless the module is empty or only printed values (``tensor([1.])``, ``True``)."""
    return any(not _is_printed_value(stmt) for stmt in tree.body)


def _is_printed_value(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and _is_value(stmt.value)


def _is_value(node: ast.expr) -> bool:
    if isinstance(node, (ast.Constant, ast.Name)):
        return True
    if isinstance(node, ast.Attribute):
        return _is_value(node.value)
    if isinstance(node, ast.UnaryOp):
        return _is_value(node.operand)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_is_value(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or _is_value(k) for k in node.keys) and all(
            _is_value(v) for v in node.values
        )
    if isinstance(node, ast.Call):
        name = _call_name(node)
        return (
            (name.rsplit(".", 1)[-1] in _REPR_CALLS or name.startswith("torch.return_types."))
            and all(_is_value(a) for a in node.args)
            and all(_is_value(k.value) for k in node.keywords)
        )
    return False


def _call_name(node: ast.Call) -> str:
    parts: list[str] = []
    func: ast.expr = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def drop_trailing_output(code: str) -> str:
    """Cut printed values pasted after the code: a final ``tensor([...])`` the code never defines."""
    tree = parse_python(code)
    if tree is None or len(tree.body) < 2:
        return code
    bound = _bound_names(tree)
    cut = len(tree.body)
    while cut > 1:
        stmt = tree.body[cut - 1]
        if not (
            _is_printed_value(stmt)
            and isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name)
            and stmt.value.func.id not in bound
        ):
            break
        cut -= 1
    if cut == len(tree.body):
        return code
    return "\n".join(code.split("\n")[: tree.body[cut].lineno - 1]).rstrip()


def _bound_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


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


def reporter_env(scans: Iterable[Scan]) -> ReporterEnv | None:
    """collect_env fields; a field found in an earlier scan wins."""
    env = ReporterEnv()
    for text in (text for scan in scans for text in _env_texts(scan)):
        for name, value in _env_fields(text).items():
            if getattr(env, name) is None:
                setattr(env, name, value)
    return env if env != ReporterEnv() else None


def _env_texts(scan: Scan) -> Iterator[str]:
    """Where env fields may be: collect_env blocks, then text under env headings or summaries,
    then any prose that looks like collect_env output."""
    for block in scan.blocks:
        if block.code.kind == "collect_env":
            yield block.code.text
    for block in scan.blocks:
        if block.role == "env" and block.code.kind == "output":
            yield block.code.text
    for prose in scan.prose:
        if prose.role == "env" and not prose.heading:
            yield prose.raw
    for prose in scan.prose:
        if prose.role != "env" and is_collect_env(prose.raw.split("\n")):
            yield prose.raw


def _env_fields(text: str) -> dict[str, str | bool]:
    fields: dict[str, str | bool] = {}
    lines = text.split("\n")
    for number, line in enumerate(lines):
        match = _ENV_LINE.fullmatch(line)
        if match is None:
            continue
        key = " ".join(re.sub(r"\([^)]*\)", "", match.group("key")).lower().split())
        name = _ENV_FIELDS.get(key)
        if name is None or name in fields:
            continue
        value = match.group("value").strip().strip("*`").strip()
        if name == "gpu_models":
            gpus = [value] if value else []
            for following in lines[number + 1 :]:
                if not _GPU_LINE.match(following):
                    break
                gpus.append(following.strip())
            value = "; ".join(gpus)
        if value.lower() in _NO_VALUE:
            continue
        if name == "cuda_available":
            answer = value.lower().split()[0]
            if answer in ("yes", "true"):
                fields[name] = True
            elif answer in ("no", "false"):
                fields[name] = False
        elif name == "python":
            version = re.match(r"\d+\.\d+(?:\.\d+)?\S*", value)
            fields[name] = version.group(0) if version else value
        else:
            fields[name] = value
    return fields


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
