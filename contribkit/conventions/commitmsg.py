"""PyTorch's commit message conventions, as pure functions: the rules of the commit-msg hook.

The title (length, trailing period, whitespace, WIP, imperative mood, ``[area]`` or conventional
style), the blank second line, body line length, the branch's issue referenced; all advice
(warnings) by default, calibrated on titles PyTorch merged: the length is measured as the title
lands (with the `` (#N)`` the merge appends), ``[BE]: …`` is an area prefix, nouns ("Fixes to …")
and conventional prefixes ("docs: …") are not verbs, and trailing whitespace, which git strips
itself, is no finding; which commits
tools write (merge, fixup, …); how git cleans a message up; and a body's trailers. ``contribkit
pr`` reuses them: the PR title becomes the landed commit's subject, and its body lists the
commits' trailers. Standard library only (and light contribkit modules): the commit-msg hook
imports this on every commit.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Sequence

from contribkit.conventions.report import quote
from contribkit.conventions.rules import RULES, Violation

TITLE_STYLES = ("pytorch", "conventional", "none")
SCISSORS = "------------------------ >8 ------------------------"
COMMENT_CHARS = frozenset("#;@!$%^&|:")  # what core.commentChar=auto picks from

# Commits that tools write, skipped unless --all-commits (the top request to every commit linter).
SKIP_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "merge",
        re.compile(
            r"^Merge (branch|remote-tracking branch|tag|commit|pull request|[0-9a-f]{7,40} into) "
        ),
    ),
    ("fixup", re.compile(r"^fixup! ")),
    ("squash", re.compile(r"^squash! ")),
    ("amend", re.compile(r"^amend! ")),
    ("revert", re.compile(r'^(Revert|Reapply) "')),
)

_PYTORCH_PREFIX = re.compile(r"^(?:\[[^\[\]\s][^\[\]]*\])+")
_CONVENTIONAL = re.compile(
    r"^(?P<type>[A-Za-z]+)(?:\((?P<scope>[^()\s][^()]*)\))?!?: (?P<rest>\S.*)$"
)
# What the merge appends to the title: " (#123456)". A title that has it is measured as it is.
LANDED_SUFFIX = " (#123456)"
_LANDED = re.compile(r" \(#\d+\)$")
# Words after a plural noun that a verb would not take: "Fixes to …", "Updates for …".
_NOUN_FOLLOWERS = frozenset(
    ["to", "for", "in", "of", "on", "from", "with", "and", "around", "after", "related", "needed"]
)
_WIP = re.compile(r"(^|[\s\[(:])wip($|[\s\]):!])", re.I)
# A trailer line, "Key: value": a one-word key as git has it, or one of PyTorch's keys of several
# words ("Test Plan:", and those the mergebot and Phabricator write). Not a URL ("https://…").
TRAILER_LINE = re.compile(
    r"^((?i:test plan|pull request resolved|differential revision|approved by)"
    r"|[A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:(?!//)[ \t]*(.*?)\s*$"
)
# Trailer keys that say AI helped (a Co-authored-by names an AI by its value instead).
AI_TRAILER_KEYS = frozenset({"assisted-by", "generated-by", "ai-assisted-by"})
# Keys that make a last paragraph of mixed lines a trailer block: those git and PyTorch's tools
# write, and the AI ones.
KNOWN_TRAILERS = AI_TRAILER_KEYS | frozenset(
    {
        "signed-off-by", "co-authored-by",
        "reviewed-by", "acked-by", "tested-by", "reported-by", "suggested-by", "helped-by",
        "test-plan", "test plan", "ghstack-source-id", "pull request resolved",
        "differential revision", "approved by",
    }
)  # fmt: skip
_PROMPT_LINE = " Please enter the commit message for your changes."

# Verbs whose past tense or third person opens non-imperative titles ("Fixed …", "Adds …").
_VERB_WORDS = """
    add adjust align allow annotate apply avoid begin break bring build bump cache call change
    check clarify clean clear compile configure convert copy correct create decompose default
    define delete deprecate detect disable dispatch do document drop emit enable enforce ensure
    expand expose extend extract find fix flatten forward fuse generate get give guard handle hide
    ignore implement import improve include increase infer initialize inline install introduce
    invoke keep land lead limit load log lower make mark merge migrate move normalize optimize
    override parse pass patch pin port preserve prevent print process propagate prune raise
    refactor register reland remove rename reorder replace report require reset resolve restore
    restrict return reuse revert rewrite run save share show simplify skip sort specialize speed
    split store support suppress switch sync take test throw trace track treat tweak unify update
    upgrade use validate vectorize warn wrap write
"""
_VERBS = frozenset(_VERB_WORDS.split())
_IRREGULAR = {
    "made": "make", "built": "build", "ran": "run", "wrote": "write", "rewrote": "rewrite",
    "did": "do", "got": "get", "kept": "keep", "broke": "break", "brought": "bring",
    "took": "take", "threw": "throw", "found": "find", "gave": "give", "began": "begin",
    "sped": "speed", "moved": "move", "led": "lead",
}  # fmt: skip


def imperative_of(word: str) -> str | None:
    """The imperative for a past-tense or third-person verb (``Fixed`` -> ``Fix``), else None."""
    w = word.lower()
    if not w.isalpha() or w in _VERBS:
        return None
    candidates = []
    if w in _IRREGULAR:
        candidates.append(_IRREGULAR[w])
    if w.endswith("ied") or w.endswith("ies"):
        candidates.append(w[:-3] + "y")
    if w.endswith("ed"):
        candidates += [w[:-2], w[:-1], w[:-3]]  # added, used, stopped
    if w.endswith("s"):
        candidates += [w[:-1], w[:-2]]  # adds, fixes
    for base in candidates:
        if base in _VERBS:
            return base.capitalize() if word[0].isupper() else base
    return None


def landed_length(title: str) -> int:
    """The title's length as it lands: with the `` (#N)`` suffix the merge appends."""
    return len(title) if _LANDED.search(title) else len(title) + len(LANDED_SUFFIX)


def mood_finding(summary: str) -> tuple[str, str] | None:
    """``(word, imperative)`` when the summary opens with a past-tense or third-person verb.

    Not for a conventional prefix (``docs: …``, whose summary is checked instead), nor for a
    plural noun followed by a word a verb would not take ("Fixes to …", "Updates for …")."""
    m = _CONVENTIONAL.match(summary)
    if m:
        summary = m.group("rest")
    words = summary.split(None, 2)
    if not words:
        return None
    first = words[0].strip(",;")
    if first.endswith(":"):
        return None  # "Fixes: …", a label rather than a verb
    better = imperative_of(first)
    if better is None:
        return None
    if first.lower().endswith("s") and len(words) > 1 and words[1].lower() in _NOUN_FOLLOWERS:
        return None
    return first, better


def skip_kind(title: str) -> str | None:
    for kind, pattern in SKIP_KINDS:
        if pattern.match(title):
            return kind
    return None


def unfinished_commits(subjects: Sequence[tuple[str, str]]) -> list[Violation]:
    """CK204 for each ``(sha, subject)`` that marks work in progress or a fixup, squash or amend
    for ``git rebase --autosquash``: fine while you work, not in what you push."""
    found = []
    for sha, subject in subjects:
        kind = skip_kind(subject)
        what = "work in progress" if _WIP.search(subject) else None
        if kind in ("fixup", "squash", "amend"):
            what = f"a {kind} commit"
        if what:
            found.append(
                Violation(
                    RULES["CK204"],
                    f"{sha} is {what} {quote(subject)}",
                    hint=f"squash or reword it first: git rebase -i --autosquash {sha}~1",
                )
            )
    return found


def cleanup_rules(
    text: str, ask_git: Callable[[], list[tuple[str, str]]], editor: bool | None = None
) -> tuple[str, bool]:
    """The comment string of this message, and whether git will strip its comment lines.

    The hook sees the message before git cleans it up. git strips comments in its ``strip``
    cleanup mode, the default only when it opened the editor: ``git commit -m "#123"`` keeps the
    line (``whitespace``). In order:

    - git's editor prompt says which it will do ("… will be ignored" or "… will be kept"), and
      its prompt or scissors line names the comment string (``core.commentChar=auto`` too);
    - else git config: ``commit.cleanup`` when set, and ``core.commentChar``; by default comments
      are stripped when the editor was used: ``editor`` (git tells its commit hooks with
      ``GIT_EDITOR=:`` when it was not), or the scissors line of ``git commit -v`` is there.

    ``ask_git`` returns those config entries. It is called only when a line starts with a
    character that can be a comment and no prompt answers, so most commits cost no git call.
    """
    lines = text.splitlines()
    if not any(line[:1] in COMMENT_CHARS for line in lines if line):
        return "#", False  # no line can be a comment
    for i, line in enumerate(lines):
        if _PROMPT_LINE in line:  # "# Please enter …. Lines starting\n# with '#' will be ignored"
            after = lines[i + 1] if i + 1 < len(lines) else ""
            return line.split(" ", 1)[0] or "#", " will be ignored" in after
    scissors = next((line for line in lines if line.endswith(" " + SCISSORS)), None)
    comment, mode = scissors.split(" ", 1)[0] if scissors else None, "default"
    for key, value in ask_git():
        if key == "commit.cleanup":
            mode = value.lower()
        elif scissors is None and value != "auto":
            comment = value
    strip = mode == "strip" or (mode == "default" and (editor or scissors is not None))
    return comment or "#", strip


def clean_message(text: str, comment: str = "#", strip_comments: bool = True) -> list[str]:
    """The message as git will commit it: nothing below the scissors, no outer blank lines, and
    no comment lines when ``strip_comments``."""
    lines: list[str] = []
    for line in text.splitlines():
        if line == f"{comment} {SCISSORS}":
            break
        if not (strip_comments and line.startswith(comment)):
            lines.append(line)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _codec(encoding: str) -> str:
    try:
        return codecs.lookup(encoding).name
    except LookupError:  # git would not know it either: read it as UTF-8
        return "utf-8"


def decode_message(raw: bytes, encoding: str | None = None) -> tuple[str, Violation | None]:
    """Decode the message; a message that is not in git's commit encoding is a violation."""
    codec = _codec(encoding) if encoding else "utf-8"
    try:
        return raw.decode(codec), None
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        bad = raw[exc.start : exc.start + 1].hex()
        violation = Violation(
            RULES["CK110"], f"byte 0x{bad} at offset {exc.start} is not {codec}", line=line
        )
        return raw.decode(codec, errors="replace"), violation


def title_parts(title: str) -> tuple[list[str], str | None, str]:
    """A title's areas, conventional type (as written) and summary: ``[a, b][c] Fix x`` ->
    (["a", "b", "c"], None, "Fix x"); ``fix(nn): x`` -> (["nn"], "fix", "x"); a plain title ->
    ([], None, title)."""
    title = title.strip()
    m = _PYTORCH_PREFIX.match(title)
    if m:
        groups = re.findall(r"\[([^\[\]]+)\]", m.group(0))
        areas = [a.strip() for group in groups for a in group.split(",") if a.strip()]
        return areas, None, title[m.end() :].strip()
    m = _CONVENTIONAL.match(title)
    if m:
        scope = m.group("scope")
        return ([scope.strip()] if scope else []), m.group("type"), m.group("rest").strip()
    return [], None, title


def _summary_and_style(title: str, style: str, types: Sequence[str]) -> tuple[str, list[Violation]]:
    """The title's summary (after any area prefix or type) and style violations."""
    rule = RULES["CK106"]
    if style == "pytorch":
        m = _PYTORCH_PREFIX.match(title)
        if m:
            rest = title[m.end() :]
            if rest.startswith(": "):  # "[BE]: Remove …", common in PyTorch's history
                rest = rest[1:]
            if not rest.startswith(" ") or not rest.strip():
                return rest.strip(), [
                    Violation(
                        rule,
                        f"put a space and a summary after the area prefix {quote(title)}",
                        line=1,
                        hint='write "[area] Summary", e.g. "[inductor] Fix …"',
                    )
                ]
            return rest.strip(), []
        if title.startswith("["):
            return title, [
                Violation(
                    rule,
                    f"malformed area prefix {quote(title)}",
                    line=1,
                    hint='write "[area] Summary" (the prefix is optional)',
                )
            ]
        return title, []
    if style == "conventional":
        m = _CONVENTIONAL.match(title)
        if not m:
            return title, [
                Violation(
                    rule,
                    f"title is not 'type(scope): summary' {quote(title)}",
                    line=1,
                    hint=f"start with one of: {', '.join(types)}; e.g. 'fix(nn): …'",
                )
            ]
        if m.group("type") not in types:
            return m.group("rest"), [
                Violation(
                    rule,
                    f"type '{m.group('type')}' is not one of {', '.join(types)}",
                    line=1,
                    hint="use a listed type, or extend hooks.conventional_types",
                )
            ]
        return m.group("rest"), []
    return title, []


def _exempt_body_lines(lines: Sequence[str]) -> set[int]:
    """Indexes of body lines that may be long: code, URLs, single tokens and trailers."""
    exempt: set[int] = set()
    fenced = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            exempt.add(i)
        elif (
            fenced
            or line.startswith(("    ", "\t", "$ ", ">>> "))
            or "://" in line
            or " " not in stripped
        ):
            exempt.add(i)
    last_paragraph = len(lines)
    while last_paragraph > 0 and lines[last_paragraph - 1].strip():
        last_paragraph -= 1
    exempt.update(i for i in range(last_paragraph, len(lines)) if TRAILER_LINE.match(lines[i]))
    return exempt


def split_trailers(body: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A commit body's text without its trailers, and the trailers (unfolded), in order.

    The trailers are the last paragraph's ``Key: value`` lines (:data:`TRAILER_LINE`, so
    ``Test Plan:`` too); an indented line continues the trailer above it. The paragraph is a
    trailer block when all its lines are trailers, or when one has a known key
    (:data:`KNOWN_TRAILERS`, e.g. ``Co-authored-by``), however much prose is beside it: git also
    wants a quarter of the lines to be trailers, but an AI trailer must never go unseen. The
    block's other lines stay in the text.
    """
    lines = body.rstrip().splitlines()
    start = len(lines)
    while start > 0 and lines[start - 1].strip():
        start -= 1
    trailers: list[list[str]] = []
    others: list[str] = []
    continues = False  # the line above was a trailer (or continued one)
    for line in lines[start:]:
        m = TRAILER_LINE.match(line)
        if continues and line[:1] in (" ", "\t"):
            trailers[-1][1] = f"{trailers[-1][1]} {line.strip()}".strip()
        elif m:
            trailers.append([m.group(1), m.group(2)])
            continues = True
        else:
            others.append(line)
            continues = False
    known = any(key.lower() in KNOWN_TRAILERS for key, _ in trailers)
    if not trailers or (others and not known):
        return body.strip(), ()
    text = "\n".join([*lines[:start], *others]).strip()
    return text, tuple((key, value) for key, value in trailers)


def references_issue(message: str, issue: int) -> bool:
    return bool(re.search(rf"(?<![\w/])#{issue}\b|/issues/{issue}\b", message))


def check_message(
    lines: Sequence[str],
    *,
    title_max_length: int = 100,
    body_max_length: int = 0,
    title_style: str = "pytorch",
    conventional_types: Sequence[str] = (),
    allow_wip: bool = False,
    issue: int | None = None,
    strict: bool = False,
) -> list[Violation]:
    """Violations in a cleaned commit message (see :func:`clean_message`); pure, no git.

    ``title_max_length`` applies to the title as it lands (:func:`landed_length`);
    ``body_max_length`` 0 checks no body width (bodies are markdown)."""
    if not lines:
        return []
    title = lines[0]
    if skip_kind(title) and not strict:
        return []
    found: list[Violation] = []
    shown = quote(title, limit=100)
    landed = landed_length(title.rstrip())
    if landed > title_max_length:
        found.append(
            Violation(
                RULES["CK101"],
                f"title is {len(title.rstrip())} characters, {landed} as it lands with "
                f"' (#N)', limit {title_max_length} {shown}",
                line=1,
            )
        )
    if title.rstrip().endswith("."):
        found.append(
            Violation(RULES["CK102"], f"title ends with a period {quote(title, tail=True)}", line=1)
        )
    if title[:1].isspace():  # trailing whitespace is no finding: git strips it itself
        found.append(Violation(RULES["CK103"], f"title has leading whitespace {shown}", line=1))
    if not allow_wip and _WIP.search(title):
        found.append(Violation(RULES["CK104"], f"title marks work in progress {shown}", line=1))
    summary, style_violations = _summary_and_style(title.strip(), title_style, conventional_types)
    found += style_violations
    mood = mood_finding(summary)
    if mood:
        found.append(
            Violation(
                RULES["CK105"],
                f'"{mood[0]}" is not imperative {shown}',
                line=1,
                hint=f'write "{mood[1]} …" (what the commit does, as a command)',
            )
        )
    if len(lines) > 1 and lines[1].strip():
        found.append(Violation(RULES["CK107"], f"line 2 is not blank {quote(lines[1])}", line=2))
    body = list(lines[1:])
    exempt = _exempt_body_lines(body) if body_max_length > 0 else set()
    for i, line in enumerate(body):
        if 0 < body_max_length < len(line) and i not in exempt:
            found.append(
                Violation(
                    RULES["CK108"],
                    f"line is {len(line)} characters, limit {body_max_length} {quote(line)}",
                    line=i + 2,
                )
            )
    if issue is not None and not references_issue("\n".join(lines), issue):
        found.append(
            Violation(
                RULES["CK109"],
                f"the branch names issue #{issue}, but the message does not reference it",
                line=1,
                hint=f"add 'Fixes #{issue}' to the body (or 'Refs #{issue}' if it only relates)",
            )
        )
    return found
