"""Reading a debug run's combined output: graph breaks, recompilations, the final exception,
where generated code and debug dirs went, and a repro's verdict.

torch's log lines look like (``torch/_logging/_internal.py``, ``TorchLogsFormatter``)::

    [rank0]:V1123 08:28:11.439000 8644 torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks] Graph break in user code at /tmp/prog.py:5

and every line of a multi-line message repeats that prefix. A record is a run of lines with the
same prefix. When lines about graph breaks or recompilations are present but not in a shape this
module knows, the summary says that the format was not recognised instead of reporting zero.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from contribkit.core.verdict import find_verdict
from contribkit.target.reprolib import VERDICT_PREFIX

LOG_LINE = re.compile(
    r"^(?P<prefix>(?:\[rank\d+\]:)?[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ \d+ \S+:\d+\]"
    r"(?: \[(?P<compile_id>[^\]]*)\])?(?: \[__(?P<artifact>\w+)\])?)(?: (?P<message>.*))?$"
)
# torch >= 2.6: "Graph break in user code at FILE:LINE" (or "(user stack suppressed ...)").
GB_HEADER = re.compile(r"^Graph break(?: \([^)]*\))? in user code at (?P<location>.+?)\s*$")
GB_REASON = re.compile(r"^Graph Break Reason: (?P<reason>.*)$")
# torch 2.1-2.5: "Graph break: REASON from user code at:" then a File "..." line.
GB_OLD_HEADER = re.compile(r"^Graph break: (?P<reason>.*?)(?: from user code at:?)?\s*$")
FILE_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
GB_CODE = re.compile(r"/gb/(?P<code>gb\d+)\.html")
RECOMPILE_HEADER = re.compile(r"^Recompiling function (?P<function>\S+) in (?P<location>\S+)")
GUARD_FAILURE = re.compile(r"^\s*- (?P<cache_entry>\d+/\d+): (?P<guard>.+)$")
RECOMPILE_LIMIT = re.compile(r"hit config\.(?:recompile_limit|cache_size_limit) \((?P<limit>\d+)\)")
TRACEBACK = "Traceback (most recent call last):"
RUNNER_PREFIX = "[contribkit debug] "  # lines printed by wrappers/debug_runner.py
# Where an exception's message ends: C++ context (TORCH_SHOW_CPP_STACKTRACES), or our own lines.
EXCEPTION_TAIL_STOP = (
    "Exception raised from ",
    "C++ CapturedTraceback",
    VERDICT_PREFIX,
    RUNNER_PREFIX,
)
ARTEFACT_PATTERNS = (
    ("generated code", re.compile(r"Output code written to: (?P<path>\S+)")),
    ("generated code", re.compile(r"Compiled module path: (?P<path>\S+)")),
    ("inductor debug dir", re.compile(r"debug trace: (?P<path>\S+)")),
    ("minifier launcher", re.compile(r"(?P<path>(?:[A-Za-z]:)?[\\/]\S*minifier_launcher\.py)")),
    ("minified repro", re.compile(r"Copying repro file for convenience to (?P<path>\S+)")),
)
# torch's own wording, found on lines whose prefix is not torch's default (TORCH_LOGS_FORMAT).
GRAPH_BREAK_MENTION = re.compile(r"Graph [Bb]reak (?:in user code|Reason)|Graph break: ")
RECOMPILE_MENTION = re.compile(r"Recompiling function ")


@dataclass
class LogRecord:
    compile_id: str | None
    artifact: str | None
    lines: list[str]


@dataclass
class GraphBreak:
    location: str
    reason: str
    explanation: str = ""
    code: str = ""  # the graph-break catalogue entry, e.g. GB0170
    count: int = 1


@dataclass
class Recompile:
    function: str
    location: str
    compile_id: str
    reasons: list[str] = field(default_factory=list)


@dataclass
class Section:
    """One kind of finding: whether it was logged at all, and whether its lines were understood."""

    logged: bool
    recognised: bool = True
    note: str = ""


@dataclass
class RunSummary:
    graph_breaks: list[GraphBreak]
    graph_break_section: Section
    recompiles: list[Recompile]
    recompile_section: Section
    recompile_limits: list[str]
    exception: str | None
    verdict: tuple[str, str] | None
    artefacts: list[tuple[str, str]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "graph_breaks": {
                **asdict(self.graph_break_section),
                "total": sum(g.count for g in self.graph_breaks),
                "unique": [asdict(g) for g in self.graph_breaks],
            },
            "recompiles": {
                **asdict(self.recompile_section),
                "events": [asdict(r) for r in self.recompiles],
                "limits_hit": self.recompile_limits,
            },
            "exception": self.exception,
            "verdict": (
                {"verdict": self.verdict[0], "detail": self.verdict[1]} if self.verdict else None
            ),
            "artefacts": [{"kind": k, "path": p} for k, p in self.artefacts],
        }


def split_records(lines: Iterable[str]) -> tuple[list[LogRecord], list[str]]:
    """Group torch log lines into records; return them and the other (plain) lines."""
    records: list[LogRecord] = []
    plain: list[str] = []
    current: LogRecord | None = None
    current_prefix = None
    for line in lines:
        m = LOG_LINE.match(line)
        if not m:
            plain.append(line)
            current = None
            continue
        message = m.group("message") or ""
        starts_new = (
            current is None
            or m.group("prefix") != current_prefix
            or GB_HEADER.match(message)
            or RECOMPILE_HEADER.match(message)
        )
        if starts_new:
            current = LogRecord(m.group("compile_id"), m.group("artifact"), [])
            current_prefix = m.group("prefix")
            records.append(current)
        assert current is not None
        current.lines.append(message)
    return records, plain


def parse_graph_break(record: LogRecord) -> GraphBreak | None:
    lines = record.lines
    head = GB_HEADER.match(lines[0])
    if head:
        gb = GraphBreak(location=head.group("location"), reason="")
        for i, line in enumerate(lines[1:], start=1):
            reason = GB_REASON.match(line)
            if reason and not gb.reason:
                gb.reason = reason.group("reason").strip()
                if gb.reason.endswith(":"):  # a generic lead-in; the graph-break type follows
                    specific = next((x.strip() for x in lines[i + 1 :] if x.strip()), "")
                    if specific and not specific.startswith(("Explanation:", "Hint:")):
                        gb.reason = specific
            elif line.strip().startswith("Explanation:") and not gb.explanation:
                gb.explanation = line.strip()[len("Explanation:") :].strip()
            code = GB_CODE.search(line)
            if code and not gb.code:
                gb.code = code.group("code").upper()
        gb.reason = gb.reason or "(no reason logged)"
        return gb
    old = GB_OLD_HEADER.match(lines[0])
    if old:
        location = ""
        for line in lines[1:]:
            where = FILE_LINE.search(line)
            if where:
                location = f"{where.group('file')}:{where.group('line')}"
        return GraphBreak(location=location or "(unknown)", reason=old.group("reason").strip())
    return None


def _guard_text(raw: str) -> str:
    """``n == 0   # y = y + n  # prog.py:6 in f (HINT: ...)`` -> ``n == 0 (HINT: ...)``."""
    text, _, comment = raw.partition("  #")
    hint = re.search(r"\((HINT: [^)]*)\)\s*$", comment)
    return text.strip() + (f" ({hint.group(1)})" if hint else "")


def parse_recompile(record: LogRecord) -> Recompile | None:
    head = RECOMPILE_HEADER.match(record.lines[0])
    if not head:
        return None
    event = Recompile(head.group("function"), head.group("location"), record.compile_id or "")
    for line in record.lines[1:]:
        failure = GUARD_FAILURE.match(line)
        if failure:
            reason = _guard_text(failure.group("guard"))
            if reason not in event.reasons:
                event.reasons.append(reason)
    return event


def find_exception(plain: list[str]) -> str | None:
    """The last exception Python printed with a traceback: ``Type: message`` and a few more lines."""
    starts = [i for i, line in enumerate(plain) if line.startswith(TRACEBACK)]
    if not starts:
        return None
    body = plain[starts[-1] + 1 :]
    # Frames and source lines are indented; the exception is the first line that is not.
    first = next((i for i, line in enumerate(body) if line.strip() and not line[0].isspace()), None)
    if first is None:
        return None
    text = [body[first].rstrip()]
    for extra in body[first + 1 : first + 6]:
        if not extra.strip() or extra.startswith(EXCEPTION_TAIL_STOP):
            break
        text.append(extra.rstrip())
    return "\n".join(text)


def find_artefacts(lines: Iterable[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for line in lines:
        for kind, pattern in ARTEFACT_PATTERNS:
            m = pattern.search(line)
            if m and (kind, m.group("path")) not in found:
                found.append((kind, m.group("path")))
    return found


def summarise(
    lines: list[str],
    *,
    graph_breaks_logged: bool,
    recompiles_logged: bool,
    dynamo: dict[str, Any] | None = None,
) -> RunSummary:
    """Summarise a run's combined output. ``dynamo`` is the runner's count of Dynamo events."""
    records, plain = split_records(lines)
    breaks: dict[tuple[str, str], GraphBreak] = {}
    recompiles: dict[tuple[str, str], Recompile] = {}
    gb_lines = rc_lines = 0
    for record in records:
        if record.artifact == "graph_breaks":
            gb_lines += 1
            gb = parse_graph_break(record)
            if gb:
                key = (gb.location, gb.reason)
                if key in breaks:
                    breaks[key].count += 1
                else:
                    breaks[key] = gb
        elif record.artifact in ("recompiles", "recompiles_verbose"):
            rc_lines += 1
            event = parse_recompile(record)
            if event:
                # Both artifacts may log the same recompilation; its compile id tells them apart.
                recompiles.setdefault((event.compile_id, event.function), event)
    plain_text = [line for line in plain if line.strip()]
    gb_section = _section(
        logged=graph_breaks_logged,
        found=len(breaks),
        tagged=gb_lines,
        untagged=sum(bool(GRAPH_BREAK_MENTION.search(x)) for x in plain_text),
        what="graph-break",
    )
    events = (dynamo or {}).get("graph_break_events", 0)
    if graph_breaks_logged and not breaks and events and gb_section.recognised:
        gb_section = Section(
            True,
            False,
            f"Dynamo counted {events} graph-break event(s), but no graph-break lines were "
            "recognised in the log",
        )
    elif not graph_breaks_logged and events:
        gb_section.note = f"Dynamo counted {events} graph-break event(s); add --preset graph-breaks for their reasons"
    rc_section = _section(
        logged=recompiles_logged,
        found=len(recompiles),
        tagged=rc_lines,
        untagged=sum(bool(RECOMPILE_MENTION.search(x)) for x in plain_text),
        what="recompilation",
    )
    limits = [
        line for record in records for line in record.lines[:1] if RECOMPILE_LIMIT.search(line)
    ]
    return RunSummary(
        graph_breaks=sorted(breaks.values(), key=lambda g: -g.count),
        graph_break_section=gb_section,
        recompiles=list(recompiles.values()),
        recompile_section=rc_section,
        recompile_limits=limits,
        exception=find_exception(plain),
        verdict=find_verdict(plain),
        artefacts=find_artefacts(lines),
    )


def _section(*, logged: bool, found: int, tagged: int, untagged: int, what: str) -> Section:
    """Whether a kind of finding was logged, and understood when something was there."""
    if found:
        return Section(True)
    if tagged:
        return Section(
            True,
            False,
            f"{tagged} {what} log record(s) were found, but their format was not recognised",
        )
    if logged and untagged:
        return Section(
            True,
            False,
            f"{untagged} line(s) mention a {what}, but not in a format this contribkit knows",
        )
    return Section(logged)


def read_log(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()
