"""Path globs, in the three flavours contribkit reads. Paths are repo-relative, ``/``-separated.

- **gitignore** (:func:`ignore_regex`): the scratch patterns of the no-scratch-files hook
  (``hooks.scratch_patterns``, ``.git/info/exclude``). ``*``, ``?`` and ``[…]`` (``[!…]``
  negated) stay within a path component, ``**`` crosses folders; a pattern without a slash
  matches any path component, a leading or middle slash anchors it at the top, a trailing slash
  makes it a folder, and a folder matches everything under it.
- **labeler** (:func:`labeler_regex`): the globs of ``.github/labeler.yml`` and the bundled label
  tables. The whole path must match; ``*`` and ``?`` stay within a folder, ``**`` crosses
  folders and ``**/`` may match no folder at all. No character classes.
- **fnmatch** (:func:`fnmatch_matcher`): ``hooks.source_globs`` and ``hooks.test_globs``.
  Python's :mod:`fnmatch`, matched from the start of the path: ``*`` crosses ``/``, so
  ``torch/**`` (or ``torch/*``) is everything under ``torch/``.

Standard library only: the hooks import this on every commit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache


def _component_glob(text: str) -> str:
    """A regular expression for a glob: ``*`` and ``?`` stay within a path component."""
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if text.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[" and "]" in text[i + 2 :]:
            end = text.index("]", i + 2)
            members = text[i + 1 : end].replace("\\", "\\\\")
            out.append("[" + ("^" + members[1:] if members.startswith("!") else members) + "]")
            i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


# --- gitignore ----------------------------------------------------------------------------------


def ignore_regex(pattern: str) -> re.Pattern[str]:
    """A gitignore-style pattern as a regular expression over repo-relative paths (``search`` it).

    ``/x/`` is the folder x at the top, ``x/`` a folder x anywhere, ``/x`` the top-level path x,
    a pattern without a slash (``x``, ``*.log``) any path component, and a slash in the middle
    (``notes/*``) anchors it at the top. A folder matches everything under it.
    """
    core = pattern.strip("/")
    anchored = pattern.startswith("/") or "/" in core
    body = _component_glob(core) + ("/" if pattern.endswith("/") else "(?:/|$)")
    return re.compile(("^" if anchored else "(?:^|/)") + body)


def matches_ignore_pattern(path: str, pattern: str) -> bool:
    return bool(ignore_regex(pattern).search(path))


# --- labeler.yml --------------------------------------------------------------------------------


@lru_cache(maxsize=256)
def labeler_regex(glob: str) -> re.Pattern[str]:
    """labeler.yml's globs: ``**`` matches across folders, ``*`` and ``?`` within one."""
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


# --- fnmatch ------------------------------------------------------------------------------------


def fnmatch_matcher(patterns: Sequence[str]) -> Callable[[str], bool]:
    """A test of repo-relative, ``/``-separated paths against fnmatch patterns, compiled once.

    ``*`` crosses ``/`` (so ``torch/**`` is everything under ``torch/``).
    """
    from fnmatch import translate

    if not patterns:
        return lambda path: False
    regex = re.compile("|".join(f"(?:{translate(p)})" for p in patterns))
    return lambda path: regex.match(path) is not None
