"""A script's ``#!`` line, read one way for the sandbox (which interpreter a wrapper runs) and
the hooks' stage runner (is an executable Python?). Standard library only, cheap to import."""

from __future__ import annotations


def shebang_words(path: str, limit: int = 512) -> list[str]:
    """The words after ``#!`` on ``path``'s first line; empty for a binary, a file without one,
    or one that cannot be read."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(limit)
    except OSError:
        return []
    if not first.startswith(b"#!"):
        return []
    return first[2:].decode("utf-8", "replace").split()
