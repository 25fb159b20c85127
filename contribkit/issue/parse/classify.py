"""What a code block holds: python, repl, shell, output, collect_env or traceback, from its
content first and its fence tag second."""

from __future__ import annotations

import keyword
import re
import textwrap

from contribkit.issue.parse.env import is_collect_env
from contribkit.issue.parse.scan import Piece, parse_python
from contribkit.issue.parse.signature import error_start, is_failure_line, is_failure_name
from contribkit.issue.parse.transcripts import (
    PRINTED,
    drop_non_code_lines,
    drop_trailing_output,
    has_prompts,
    has_statements,
    is_printed_output,
    repl_pieces,
    split_trailing_output,
)

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
_IPYTHON_INPUT = re.compile(r"In \[\d*\]: ")
# What every prompt has_prompts knows holds: ``>>>``, ``In [1]:``, ``(Pdb)``.
_PROMPT_MARKS = re.compile(r">>>|In \[|\(Pdb\)")

_SHELL_LINE = re.compile(
    r"\s*(?:\$\s"
    r"|(?:[A-Z_][A-Z0-9_]*=\S*\s+)+\S"
    r"|(?:sudo\s+)?(?:pip3?|conda|mamba|micromamba|uv|python(?:3(?:\.\d+)?)?|torchrun|git|cd"
    r"|export|wget|curl|bash|sh|zsh|nvidia-smi|apt(?:-get)?|brew|make|cmake|ninja|docker|ls"
    r"|echo|source|gdb|valgrind|compute-sanitizer|nsys|ncu|tlparse|pytest)(?:\s|$))"
)


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
    first = _first_filled(lines)
    if first is None:
        return []
    lines, text = _dedented(lines[first:])
    if len(lines) == 1 and tag not in _SHELL_TAGS and _is_printed_name(lines[0]):
        return [Piece("output", first, text.rstrip())]
    if is_collect_env(lines):
        return [Piece("collect_env", first, text)]
    if (
        _PROMPT_MARKS.search(text)  # no line can start with a prompt otherwise
        and has_prompts(lines)
        and (
            any(_IPYTHON_INPUT.match(line) for line in lines)  # `In [1]: x = 1` parses
            or parse_python(text) is None
        )
    ):
        return [_shifted(p, first) for p in repl_pieces(lines)]
    error = error_start(lines, text)
    if error is not None:
        head = lines[:error]
        head_kind = _plain_kind(head, tag) if any(line.strip() for line in head) else ""
        if head_kind in ("python", "shell"):
            return [
                Piece(head_kind, first, _finish(head_kind, head)),
                Piece("traceback", first + error, "\n".join(lines[error:])),
            ]
        return [Piece("traceback", first, text)]
    kind = _plain_kind(lines, tag, text)
    if kind != "python":  # what _finish gives for these lines: ``text`` is dedented already
        return [Piece(kind, first, text.rstrip())]
    code, output = split_trailing_output(drop_non_code_lines(text.rstrip()))
    pieces = [Piece(kind, first, code)]
    if output:  # pasted output under the code: kept as what the code printed
        pieces.append(Piece("output", first + code.count("\n") + 1, output))
    return pieces


def _is_printed_name(line: str) -> bool:
    """A one-line block that is only a name or a dotted name (``v7``, ``torch.float32``,
    ``x.grad``), none of its parts a keyword and not an exception's name (``RuntimeError`` is a
    traceback's last line): the value it names, printed. What the full path below concludes for
    it under any tag but a shell one (it parses to an expression that only names a value, which
    is output), without parsing it: the blocks of a pasted log or listing are mostly such lines.
    """
    if "." not in line:  # the usual name: v7, out
        if not line.isidentifier() or keyword.iskeyword(line):
            return False
    elif " " in line or not all(
        p.isidentifier() and not keyword.iskeyword(p) for p in line.split(".")
    ):
        return False
    return not (is_failure_name(line) if line.isascii() else is_failure_line(line))


def _first_filled(lines: list[str]) -> int | None:
    """The index of the first line that is not blank, or None."""
    if lines and lines[0].strip():  # the usual case, without a generator
        return 0
    return next((i for i, line in enumerate(lines) if line.strip()), None)


def _dedented(lines: list[str]) -> tuple[list[str], str]:
    """``lines`` dedented, and their text. Lines that all start with neither a space nor a tab
    are dedented already (most blocks: ``x = 1``, ``v7``): joined, not run through textwrap,
    which would give the same text back."""
    if len(lines) == 1 and not lines[0].startswith((" ", "\t")):  # the usual one-line block
        return lines, lines[0]
    text = "\n".join(lines)
    if not any(line.startswith((" ", "\t")) for line in lines):
        return lines, text
    text = textwrap.dedent(text)
    return text.split("\n"), text


def _shifted(piece: Piece, by: int) -> Piece:
    return Piece(piece.kind, piece.offset + by, piece.text)


def _plain_kind(lines: list[str], tag: str, dedented: str | None = None) -> str:
    """The kind of a block without prompts or a traceback; ``dedented`` is ``lines`` joined and
    dedented, where the caller has it already (dedenting is idempotent: the same text)."""
    text = textwrap.dedent("\n".join(lines)) if dedented is None else dedented
    if tag in _SHELL_TAGS:
        return "output" if is_printed_output(text) else "shell"
    tree = parse_python(text)
    at = _first_filled(lines)
    first = "" if at is None else lines[at]
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
    return drop_trailing_output(drop_non_code_lines(text)) if kind == "python" else text


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
