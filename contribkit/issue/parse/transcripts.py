"""REPL and IPython transcripts (``>>>``, ``...``, ``In [n]:``) and printed output: values like
``tensor([1., 2.])`` pasted as the result of the code rather than as code."""

from __future__ import annotations

import ast
import re
import textwrap

from contribkit.issue.parse.scan import Piece, parse_python
from contribkit.issue.parse.signature import error_start

_PROMPT = re.compile(r"(?:>>>|In \[\d*\]:)(?: |$)")
_CONTINUATION = re.compile(r"(?:\.\.\.|\s*\.\.\.+:)(?: |$)")
_PDB_PROMPT = re.compile(r"\(Pdb\) ?")
_OUT_PROMPT = re.compile(r"Out\[\d*\]:\s?")
# pdb commands that are not Python: they are dropped from the code.
_PDB_COMMANDS = re.compile(
    r"(?:[nscrlwudbqj]|next|step|cont(?:inue)?|return|list|ll|where|bt|up|down|break|quit|exit"
    r"|args|a|until|unt|jump|tbreak|clear|disable|enable|display|undisplay|interact|help|h)"
    r"(?:\s+\S.*)?$"
)
# A comment line holding what a transcript printed for the statement above it.
OUTPUT_COMMENT = "#:"
# The first line of a printed value that does not parse: `tensor([1.], grad_fn=<AddBackward0>)`.
PRINTED = re.compile(r"\s*[\[(]*(?:tensor|array|torch\.Size|Parameter containing:)(?:\(|$)")
# Call names that only appear in printed values: `tensor([1., 2.])`, `torch.Size([2])`, ...
_REPR_CALLS = frozenset(
    {"tensor", "array", "Parameter", "Size", "device", "dtype", "OrderedDict", "defaultdict"}
)


def has_prompts(lines: list[str]) -> bool:
    return any(_PROMPT.match(line) or _PDB_PROMPT.match(line) for line in lines)


def _prompt_code(line: str, in_statement: bool) -> str | None:
    """The code on a prompt line (pdb commands translated or dropped), else None."""
    prompt = _PROMPT.match(line) or (_CONTINUATION.match(line) if in_statement else None)
    if prompt is not None:
        return line[prompt.end() :]
    pdb = _PDB_PROMPT.match(line)
    if pdb is None:
        return None
    command = line[pdb.end() :].strip()
    if command.startswith("!"):
        return command[1:]
    if command.startswith(("p ", "pp ")):
        return command.split(" ", 1)[1]
    if not command or _PDB_COMMANDS.fullmatch(command):
        return ""
    return command if parse_python(command) is not None else ""


def repl_pieces(lines: list[str]) -> list[Piece]:
    """A transcript's code (prompts stripped) and the traceback in its output, if any.

    What a statement printed follows it as ``#: `` comment lines (``#:`` alone when an
    expression statement printed nothing, as a REPL does for None): the observed output the
    oracles compare with. Output from the first traceback on is the traceback piece instead.
    """
    error = _output_error(lines)
    code: list[str] = []
    statement: list[str] = []
    printed: list[str] = []
    in_statement = False

    def close(raised: bool = False) -> None:
        if not statement:
            return
        code.extend(statement)
        if printed and not raised:
            code.extend(f"{OUTPUT_COMMENT} {line}".rstrip() for line in printed)
        elif not raised and _is_expression("\n".join(statement)):
            code.append(OUTPUT_COMMENT)
        statement.clear()
        printed.clear()

    in_error = False
    error_lines: list[str] = []
    for number, line in enumerate(lines):
        in_error = (in_error or number == error) and _prompt_code(line, False) is None
        if number == error:
            close(raised=True)
        if in_error:
            error_lines.append(line)
            continue
        continuation = in_statement and not printed and _CONTINUATION.match(line)
        if continuation:
            statement.append(line[continuation.end() :])
            continue
        text = _prompt_code(line, False)
        if text is not None:
            close()
            statement.append(text)
            in_statement = True
        elif line.lstrip().startswith("#"):  # a comment between prompts: not output
            close()
            in_statement = False
            code.append(line.strip())
        else:
            in_statement = False
            if line.strip() and statement:
                printed.append(_OUT_PROMPT.sub("", line, count=1))
    close()
    pieces: list[Piece] = []
    code_text = "\n".join(code).strip("\n")
    if code_text.strip() and any(c.strip() and not c.startswith("#") for c in code):
        pieces.append(Piece("repl", 0, code_text))
    if error is not None:
        pieces.append(
            Piece("traceback", error, textwrap.dedent("\n".join(error_lines)).strip("\n"))
        )
    return pieces


# A word of a sentence: letters (an apostrophe or hyphen inside), maybe quoted, in backticks
# or parentheses, maybe followed by punctuation.
_PROSE_WORD = re.compile(r"[(\"'`]?[A-Za-z]+(?:['’-][A-Za-z]+)*[`\"')]?[.,;:!?]*")
_VALUE_WORDS = frozenset(
    {"True", "False", "None", "nan", "inf", "NaN", "Inf", "cpu", "cuda", "mps", "meta"}
)
_SENTENCE_MARK = re.compile(r"[A-Za-z][`\"')]?[.,;:!?](?:\s|$)")
_MESSAGE_LEAD = re.compile(r"[\w.]*(?:Error|Exception|Warning|Interrupt|Exit)\b")


def reads_as_prose(line: str) -> bool:
    """The line is a sentence, not a value: it starts with a word, at least three in four of
    its tokens are words (``True``, ``nan`` and the like are values), and it has sentence
    punctuation or four words or more. Error and warning messages and lines that parse as
    Python are never prose."""
    text = line.strip()
    tokens = text.split()
    if len(tokens) < 3 or not text[0].isalpha() or _MESSAGE_LEAD.match(text):
        return False
    words = [
        t
        for t in tokens
        if _PROSE_WORD.fullmatch(t) and t.strip("(\"'`.,;:!?)") not in _VALUE_WORDS
    ]
    if len(words) < 3 or len(words) * 4 < len(tokens) * 3:
        return False
    if len(tokens) < 4 and not _SENTENCE_MARK.search(text):
        return False
    return parse_python(text) is None


def blank_prose_output(lines: list[str]) -> list[str]:
    """``lines`` with the prose under a prompt's output blanked: from the first line that reads
    as a sentence up to the next prompt or the traceback in that output (kept whole).

    For transcripts outside a code fence, where a sentence written right under the output
    (no blank line) joins the transcript's paragraph; line numbers stay as they were.
    """
    kept: list[str] = []
    output: list[str] = []

    def close() -> None:
        error = error_start(output)
        end = len(output) if error is None else error
        cut = next((n for n in range(end) if reads_as_prose(output[n])), end)
        kept.extend([*output[:cut], *[""] * (end - cut), *output[end:]])
        output.clear()

    in_statement = False
    for line in lines:
        if _prompt_code(line, in_statement) is not None:
            close()
            kept.append(line)
            in_statement = True
        else:
            output.append(line)
            in_statement = False
    close()
    return kept


def _output_error(lines: list[str]) -> int | None:
    """The line where a traceback starts among the transcript's output lines."""
    output = [(n, line) for n, line in enumerate(lines) if _prompt_code(line, True) is None]
    start = error_start([line for _, line in output])
    return output[start][0] if start is not None else None


def _is_expression(code: str) -> bool:
    tree = parse_python(code)
    return (
        tree is not None
        and len(tree.body) == 1
        and isinstance(tree.body[0], ast.Expr)
        and not (
            isinstance(tree.body[0].value, ast.Call) and _call_name(tree.body[0].value) == "print"
        )
    )


def strip_output_comments(code: str) -> str:
    """``code`` without the ``#:`` lines that hold a transcript's printed output."""
    lines = code.split("\n")
    kept = "\n".join(line for line in lines if not line.lstrip().startswith(OUTPUT_COMMENT))
    return kept.rstrip("\n") + "\n" if code.endswith("\n") else kept


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
    return split_trailing_output(code)[0]


def split_trailing_output(code: str) -> tuple[str, str]:
    """``code`` less the printed values pasted after it, and those values ("" when none)."""
    tree = parse_python(code)
    if tree is None or len(tree.body) < 2:
        return code, ""
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
        return code, ""
    lines = code.split("\n")
    at = tree.body[cut].lineno - 1
    return "\n".join(lines[:at]).rstrip(), "\n".join(lines[at:]).strip("\n")


_NOT_CODE_LINE = re.compile(r"\s*(?:cc:?(?:\s+@[\w.-]+)+\s*$|@pytorch-?bot\b)", re.I)


def drop_non_code_lines(text: str) -> str:
    """``text`` without ``cc @user`` and bot-command lines: they are never code."""
    if "@" not in text:  # both kinds of line hold one
        return text
    return "\n".join(line for line in text.split("\n") if not _NOT_CODE_LINE.match(line))


def is_printed_output(text: str) -> bool:
    """Only printed values (``tensor([1.])``, ``True``, ``[1, 2]``), no statements."""
    tree = parse_python(text)
    first = next((line for line in text.split("\n") if line.strip()), "")
    if tree is not None:
        bare = all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Name) for s in tree.body)
        looks = bool(PRINTED.match(first) or re.search(r"\d|True|False", text))
        return bool(tree.body) and not has_statements(tree) and not bare and looks
    return bool(PRINTED.match(first))


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


_ANY_PROMPT = re.compile(r"^\s*(?:>>>|\.\.\.|In \[\d*\]:)(?: |$)")
_PROMPT_MARK = re.compile(r">>>|\.\.\.|In \[")  # what each prompt _ANY_PROMPT takes holds


def prose_only(text: str, code: str) -> str:
    """``text`` less the lines of the issue's code (a fenced block, or a transcript's ``>>>``
    lines): what the code names is not what the reporter says. The classes: an identifier
    that is an error word (``errors = torch.tensor(...)``, a list of losses; ``except
    ValueError as error:``) read as "the issue reports an error"; a ``torch.randn(2, 3)`` of
    the code read as an input the prose states."""
    lines = {line.strip() for line in code.splitlines() if line.strip()}
    if not lines:
        return text
    if not _PROMPT_MARK.search(text):  # no line holds a prompt: each is compared as it is
        return "\n".join(line for line in text.splitlines() if line.strip() not in lines)
    return "\n".join(
        line for line in text.splitlines() if _ANY_PROMPT.sub("", line).strip() not in lines
    )
