"""Data that flows through the repro pipeline: Issue -> parse -> ReproSpec -> render.

Plain dataclasses with no behaviour beyond (de)serialisation, so every layer can share them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

BLOCK_KINDS = ("python", "repl", "traceback", "shell", "collect_env", "output")

# GitHub numbers issues from 1 up in a signed 32-bit column; no number reaches 2**31. The class
# of values that are no issue number: 0 and negatives ("0", -3), booleans (JSON's true is an int
# to Python), and numbers past that bound (10**40, "99999999999"); all are refused before any
# request or folder name is made from them.
MAX_ISSUE_NUMBER = 2**31 - 1


def issue_number(value: object) -> int | None:
    """``value`` as an issue number (an int, not a bool, or a string of ASCII digits, from 1 to
    :data:`MAX_ISSUE_NUMBER`), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit() and len(value) <= 10):
            return None
        value = int(value)
    if isinstance(value, int) and 1 <= value <= MAX_ISSUE_NUMBER:
        return value
    return None


@dataclass
class Comment:
    author: str
    body: str
    created_at: str | None = None


@dataclass
class Issue:
    title: str
    body: str
    number: int | None = None
    repo: str | None = None  # OWNER/NAME
    url: str | None = None
    labels: list[str] = field(default_factory=list)
    state: str | None = None
    author: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    comments: list[Comment] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Issue:
        comments = [Comment(**c) for c in data.get("comments", [])]
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "comments"}
        return cls(**known, comments=comments)

    @property
    def ref(self) -> str:
        if self.number is None:
            return "a saved issue"
        return f"{self.repo}#{self.number}" if self.repo else f"#{self.number}"


@dataclass
class CodeBlock:
    kind: str  # one of BLOCK_KINDS
    text: str  # for "repl": the code with prompts stripped and output lines dropped
    info: str  # the fence's language tag ("" when untagged)
    source: str  # "body" or "comment by @login"
    line: int  # 1-based line of the block's first content line within its source text


@dataclass
class Signature:
    """The failure an issue reports: exception type and normalised message."""

    exc_type: str  # as written, e.g. "RuntimeError" or "torch._dynamo.exc.Unsupported"
    message: str  # normalised (addresses and ids masked; see reprojudge.normalise_message)
    origin: str  # "traceback" or "text"

    def __str__(self) -> str:
        return f"{self.exc_type}: {self.message}" if self.message else self.exc_type


@dataclass
class ReporterEnv:
    """Fields of the reporter's collect_env output (None where absent)."""

    torch_version: str | None = None
    cuda_build: str | None = None
    os: str | None = None
    python: str | None = None
    gpu_models: str | None = None
    cuda_available: bool | None = None


@dataclass
class QuotedOutput:
    """Output an issue quotes for its program: what it printed, or what it should print."""

    text: str
    role: str  # "actual" or "expected"
    line: int  # 1-based line in its source text


@dataclass
class ParsedIssue:
    """What the markdown parser extracts from an issue (no code analysis)."""

    code: str  # the Python blocks that form one program, merged with imports de-duplicated
    code_source: str  # "body", "comment by @login", or "" when there is no code
    blocks: list[CodeBlock]
    signatures: list[Signature]  # one per traceback (and text mention), in order
    env: ReporterEnv | None
    expected: str | None
    actual: str | None
    warnings: list[str] = field(default_factory=list)
    contrasts_devices: bool = False  # the text sets CPU against CUDA ("works on CPU, fails on GPU")
    transcript: str = ""  # ``code`` with the output a transcript printed, as ``#:`` comment lines
    outputs: list[QuotedOutput] = field(default_factory=list)  # output quoted under the code
    nature: str = "bug"  # "bug", "feature" or "docs"
    nature_why: str = ""
    # The body as the parser read it: line ends normalised, cut at MAX_SOURCE_CHARS. Whatever
    # else reads the body (evidence regexes, the nature) reads this, never the raw body.
    body: str = ""
    # How many backticked spans of the body's prose form ``code`` (0: the code is from blocks);
    # read only when the issue has no code block at all (parse/program.inline_program).
    inline_spans: int = 0

    @property
    def signature(self) -> Signature | None:
        """The failure to look for: the last traceback's, else the first mention."""
        tracebacks = [s for s in self.signatures if s.origin == "traceback"]
        if tracebacks:
            return tracebacks[-1]
        return self.signatures[0] if self.signatures else None
