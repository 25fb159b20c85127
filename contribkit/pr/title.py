"""A PR's title: ``[area] Imperative summary`` (pytorch) or ``type(area): summary`` (conventional),
from the commit that changes more than tests, else the issue, else the branch name."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from contribkit.conventions.commitmsg import skip_kind, title_parts
from contribkit.core.config import KEYS
from contribkit.git.facts import Commit
from contribkit.pr.gather import IssueFacts

_CONVENTIONAL_TYPE_OF_VERB = {
    "fix": "fix",
    "add": "feat",
    "implement": "feat",
    "support": "feat",
    "introduce": "feat",
    "enable": "feat",
    "document": "docs",
    "docs": "docs",
    "test": "test",
    "refactor": "refactor",
    "rename": "refactor",
    "move": "refactor",
    "simplify": "refactor",
    "speed": "perf",
    "optimize": "perf",
    "vectorize": "perf",
    "revert": "revert",
}


def humanize_branch(branch: str) -> str:
    """gh's title for a multi-commit PR: the branch name with dashes and underscores as spaces."""
    text = re.sub(r"[-_]+", " ", branch.rsplit("/", 1)[-1]).strip()
    return text[:1].upper() + text[1:]


def _main_subject(commits: Sequence[Commit], tests_only: Collection[str] = ()) -> str | None:
    """The oldest commit's subject that is not a fixup, squash, merge or revert, and changes
    more than tests (a "Fix X" rather than its "Add a test for X", in either order); with
    only tests-only commits, the oldest of those."""
    kept = [c for c in reversed(commits) if not skip_kind(c.subject)]
    main = next((c for c in kept if c.sha not in tests_only), kept[0] if kept else None)
    return main.subject.strip() if main else None


@dataclass(frozen=True)
class Title:
    text: str
    cut_from: str | None = None  # the uncut title, when ``text`` was cut to fit the limit


def _fit(prefix: str, summary: str, limit: int) -> Title:
    """``prefix + summary``, the summary cut at a word boundary to fit ``limit``."""
    title = prefix + summary
    if len(title) <= limit:
        return Title(title)
    room = limit - len(prefix)
    cut = summary[: room + 1].rsplit(" ", 1)[0] if " " in summary[:room] else summary[:room]
    return Title(prefix + cut.rstrip(" ,;:-."), cut_from=title)


def make_title(
    commits: Sequence[Commit],
    *,
    issue: IssueFacts | None,
    areas: Sequence[str],
    style: str,
    limit: int = 72,
    branch: str | None = None,
    types: Sequence[str] = (),
    tests_only: Collection[str] = (),
) -> Title:
    """``[area] Imperative summary`` (pytorch) or ``type(area): summary`` (conventional), from
    the main commit's subject (the oldest that changes more than tests: ``tests_only`` are the
    SHAs of those that change only tests), else the issue's title, within ``limit`` characters
    (cut at a word, saying so in ``cut_from``).

    A subject's own ``[area]`` or ``type(scope):`` is kept; a ``Word:`` prefix that is not one
    of the conventional ``types`` (``CUDA: …``) is taken as an area.
    """
    subject = _main_subject(commits, tests_only)
    if subject is None:
        if issue is not None and issue.title:
            subject = f"Fix #{issue.number}: {issue.title}"
        else:
            subject = humanize_branch(branch) if branch else "Describe the change"
    own_scopes, ctype, summary = title_parts(subject)
    known = {t.lower() for t in types or KEYS["hooks.conventional_types"].default}
    if ctype is not None and ctype.lower() not in known:
        own_scopes, ctype = [ctype, *own_scopes], None
    elif ctype is not None:
        ctype = ctype.lower()
    scopes = own_scopes or list(areas)
    if style != "conventional":
        summary = summary[:1].upper() + summary[1:]
        tag = f"[{', '.join(scopes)}] " if scopes else ""
        if len(tag) + len(summary) > limit and len(scopes) > 1:
            tag = f"[{scopes[0]}] "
        return _fit(tag, summary, limit)
    first, _, rest = summary.partition(" ")
    if ctype is None:
        ctype = _CONVENTIONAL_TYPE_OF_VERB.get(first.lower(), "fix")
        if first.lower() in ("fix", "fixes") and rest:
            summary = rest
    if summary[:1].isupper() and not summary[1:2].isupper():
        summary = summary[:1].lower() + summary[1:]
    scope = f"({scopes[0]})" if scopes else ""
    return _fit(f"{ctype}{scope}: ", summary, limit)
