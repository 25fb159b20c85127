"""Secrets redacted by value: the one redactor used where text leaves contribkit.

Every known secret value becomes ``***`` in logs, run records, verdict details, PR bodies and
everything printed. The known values are: those registered with :func:`register` (the resolved
GitHub token), the values of environment variables whose names match the scrub patterns
(:data:`contribkit.core.proc.SECRET_PATTERNS` and the ``scrub_env`` setting), the tokens gh keeps
in ``hosts.yml``, the passwords of ``~/.netrc``, and the credentials of any URL written ``scheme://user:password@``. GitHub's
token shapes (``ghp_…``, ``github_pat_…``) are redacted wherever they appear, known or not.

Values shorter than :data:`MIN_SECRET_CHARS` are not redacted by value (``TOKENIZERS_PARALLELISM``
is ``false``; replacing every ``false`` would hide more than it protects).
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import os
import re
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol, TextIO, TypeVar, cast

from contribkit.target.reprosecrets import SECRET_NAMES

# Documented in the README ("Safety"); extend with the `scrub_env` setting. A variable whose
# value holds a URL with credentials (scheme://user:password@) is a secret whatever its name.
# One list with the repro scripts' own (target/reprosecrets.py), which cannot import contribkit.
SECRET_PATTERNS: tuple[str, ...] = SECRET_NAMES


def is_secret(name: str, extra_patterns: Iterable[str] = (), value: str | None = None) -> bool:
    """Whether the variable ``name`` (holding ``value``, when given) is a secret."""
    upper = name.upper()
    if any(fnmatch.fnmatchcase(upper, p.upper()) for p in (*SECRET_PATTERNS, *extra_patterns)):
        return True
    return value is not None and has_credentials(value)


MASK = "***"
MIN_SECRET_CHARS = 6
_HELD_BACK = 4096  # bytes a stream keeps back when a line has no end yet

# scheme://user:password@host -> scheme://***@host; scheme://<token-like>@host likewise.
CREDENTIAL_URL = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)"
    r"(?P<cred>[^/\s:@'\"]+:[^/\s@'\"]+|gh[pousr]_[A-Za-z0-9_]+|github_pat_[A-Za-z0-9_]+)@"
)
GITHUB_TOKEN_SHAPE = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")

_registered: set[str] = set()
_patterns: set[str] = set()  # the scrub_env setting's, once a command has read its settings
_lock = threading.Lock()


def add_patterns(patterns: Iterable[str]) -> None:
    """Variable name patterns (the ``scrub_env`` setting) whose values are secrets too."""
    with _lock:
        _patterns.update(patterns)


def register(value: str | None) -> None:
    """Remember a secret that is not in the environment (a token from ``--token`` or gh)."""
    if value and len(value) >= MIN_SECRET_CHARS:
        with _lock:
            _registered.add(value)


class _Secret(Protocol):
    @property
    def value(self) -> str | None: ...


SecretT = TypeVar("SecretT", bound=_Secret)


def registered(token: SecretT) -> SecretT:
    """``token`` (a resolved GitHub token), once its value is known to the redactor."""
    register(token.value)
    return token


def has_credentials(value: str) -> bool:
    """Whether ``value`` holds a URL with credentials in it."""
    return CREDENTIAL_URL.search(value) is not None


def credential_files(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The secrets in the user's credential files: the ``oauth_token`` values of gh's
    ``hosts.yml`` and the passwords of ``~/.netrc`` (read as text, cached while unchanged)."""
    gh_dir = environ.get("GH_CONFIG_DIR") or os.path.join(
        environ.get("XDG_CONFIG_HOME") or os.path.join(environ.get("HOME") or "~", ".config"),
        "gh",
    )
    netrc = environ.get("NETRC") or os.path.join(environ.get("HOME") or "~", ".netrc")
    found: list[str] = []
    for path, pattern in (
        (os.path.join(gh_dir, "hosts.yml"), _HOSTS_TOKEN),
        (netrc, _NETRC_PASSWORD),
    ):
        path = os.path.expanduser(path)
        try:
            stamp = os.stat(path).st_mtime_ns
        except OSError:
            continue
        found += _secrets_in(path, stamp, pattern)
    return tuple(found)


_HOSTS_TOKEN = re.compile(r"^\s*oauth_token:\s*['\"]?([^'\"\s#]+)", re.MULTILINE)
_NETRC_PASSWORD = re.compile(r"\bpassword\s+(\S+)")


_known: dict[object, frozenset[str]] = {}  # the last answer of known_secrets, by its inputs


@functools.lru_cache(maxsize=8)
def _secrets_in(path: str, stamp: int, pattern: re.Pattern[str]) -> tuple[str, ...]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:  # no pathlib: --help loads this
            text = fh.read()
    except OSError:
        return ()
    return tuple(str(v) for v in pattern.findall(text))


def known_secrets(
    environ: Mapping[str, str] | None = None, extra_patterns: Iterable[str] = ()
) -> frozenset[str]:
    """Every secret value known now (see the module's docstring)."""
    env = os.environ if environ is None else environ
    with _lock:
        patterns = (*extra_patterns, *_patterns)
        registered = frozenset(_registered)
    # Every write asks (a command prints line by line): work it out again only when the
    # registered secrets, the patterns or the environment changed.
    # os.environ keeps its bytes in _data: a snapshot of that costs no decoding per variable
    raw = getattr(env, "_data", None)
    snapshot = frozenset(raw.items() if isinstance(raw, dict) else env.items())
    key = (registered, patterns, snapshot)
    found = _known.get(key)
    if found is None:
        values = set(registered)
        values.update(v for k, v in env.items() if is_secret(k, patterns, v))
        values.update(credential_files(env))
        found = frozenset(v for v in values if len(v) >= MIN_SECRET_CHARS)
        with _lock:
            _known.clear()
            _known[key] = found
    return found


class Redactor:
    """Replaces a fixed set of secret values, credentialed URLs and GitHub token shapes."""

    def __init__(self, secrets: Iterable[str]) -> None:
        ordered = sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        self.secrets = tuple(ordered)
        self._text = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        raw = [s.encode("utf-8", "surrogatepass") for s in ordered]
        self._bytes = re.compile(b"|".join(map(re.escape, raw))) if raw else None

    def text(self, text: str) -> str:
        if self._text is not None:
            text = self._text.sub(MASK, text)
        # Each pattern only where its fixed part occurs (a scan far cheaper than the pattern's).
        if "://" in text:
            text = CREDENTIAL_URL.sub(lambda m: f"{m['scheme']}{MASK}@", text)
        if "gh" in text or "github_pat_" in text:
            text = GITHUB_TOKEN_SHAPE.sub(MASK, text)
        return text

    def data(self, data: bytes) -> bytes:
        """As :meth:`text`, for bytes (a child's output as it is teed to a log)."""
        if self._bytes is not None:
            data = self._bytes.sub(MASK.encode(), data)
        if b"://" in data or b"gh" in data:
            text = data.decode("utf-8", "surrogateescape")
            redacted = self.text(text)
            if redacted != text:
                data = redacted.encode("utf-8", "surrogateescape")
        return data

    def value(self, obj: Any) -> Any:
        """A copy of a JSON-shaped value with every string redacted."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {self.value(k): self.value(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [self.value(v) for v in obj]
        return obj


def current(extra_patterns: Iterable[str] = ()) -> Redactor:
    """A redactor for the secrets known now."""
    return _redactor(known_secrets(extra_patterns=extra_patterns))


@functools.lru_cache(maxsize=16)
def _redactor(secrets: frozenset[str]) -> Redactor:
    return Redactor(secrets)


def redact(text: str) -> str:
    """``text`` with every secret known now replaced by ``***``."""
    return current().text(text)


class StreamRedactor:
    """Redacts a byte stream fed in chunks: a secret cut in two by a chunk boundary is still
    found, since text is let out a whole line at a time (or, for very long lines, all but the
    last few KiB)."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._pending = b""

    def feed(self, chunk: bytes) -> bytes:
        data = self._pending + chunk
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) > 2 * _HELD_BACK:
            cut = len(data) - _HELD_BACK
        self._pending = data[cut:]
        return self.redactor.data(data[:cut]) if cut else b""

    def flush(self) -> bytes:
        data, self._pending = self._pending, b""
        return self.redactor.data(data) if data else b""


class RedactingStream:
    """A text stream (stdout, stderr) whose writes pass through the redactor; everything else
    is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text) if text else text)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def redacted_streams() -> Iterator[None]:
    """While active, ``sys.stdout`` and ``sys.stderr`` redact what is written to them."""
    saved = (sys.stdout, sys.stderr)
    if sys.stdout is not None:
        sys.stdout = cast(TextIO, RedactingStream(sys.stdout))
    if sys.stderr is not None:
        sys.stderr = cast(TextIO, RedactingStream(sys.stderr))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
