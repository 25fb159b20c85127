"""The warning an issue complains of: the ``warning`` oracle's claim.

Class: a warning the reporter calls spurious or wrong, quoted as Python prints it (``path:line:
Category: message``) in an output block: the lr_scheduler's "Detected call of
`lr_scheduler.step()` before `optimizer.step()`" under a GradScaler (issue 44511 by BramVanroy,
55585 by stas00), the Transformer's nested-tensor warning with its default arguments (137173 by
hyperkai). The runtime records the warnings the code raises (``target/reprotrace.Recorder``)
and the script decides: REPRODUCED while the code still raises it, NOT_REPRODUCED when the code
runs to its end without it (under the same evidence rules as every other clean run), unless
the code could hide it (its own warning filters, worker processes): then CANNOT_RUN.

Read only where the complaint is that the warning appears: the title names a warning, or the
prose calls it spurious, wrong or unexpected; and neither names another symptom (values, a
hang, a crash, how often it shows, its wording, category or line). Never for a warning the
issue wants ("should warn", "no warning is raised", a title asking to warn), one its expected
behaviour quotes, a bare ``Warning:`` (torch's C++ log lines, which the runtime does not
see), a paraphrase in the prose, nor where the blocks quote several different warnings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# "…/module.py:12: UserWarning: message", "FutureWarning: message" (a category, not "Warning").
_QUOTED = re.compile(r"(?:^|[\s:])((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*Warning):[ \t]+(\S[^\n]*)", re.M)
# A warning as Python writes it to stderr ("path.py:12: UserWarning: ..."), never stdout: a
# quoted output's lines that the code's printed lines are not compared with (evidence._lines).
WARNING_SHOWN = re.compile(r"^\S.*:\d+: (?:\w+\.)*[A-Z]\w*Warning: ")
_BLOCK = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n(.*?)^[ \t]*\1", re.M | re.S)
_TITLE_WARNING = re.compile(r"\bwarn(?:s|ed|ing|ings)?\b", re.I)
_COMPLAINT = re.compile(
    r"\b(?:spurious|unnecessary|unexpected|incorrect|wrong|misleading|false|bogus|annoying"
    r"|confusing|unwanted|noisy|useless|erroneous|superfluous)\s+(?:\w+\s+)?\w*warnings?\b"
    r"|\b\w*warnings?\s+(?:\w+\s+){0,3}(?:even\s+(?:though|when|if)|although|despite)\b",
    re.I,
)
# The bug is a warning that is missing: a clean run shows it, not its absence.
_WANTS_WARNING = re.compile(
    r"\b(?:should|expected?\s+to|supposed\s+to|ought\s+to)\s+(?:\w+\s+)?warn"
    r"|\b(?:does|did|do)\s*n[o']t\s+(?:\w+\s+)?warn|\bnever\s+warns?\b"
    r"|\bno\s+warnings?\s+(?:is|was|are|were)\s+(?:raised|emitted|shown|printed|given)"
    r"|\bexpect(?:ed|s)?\s+(?:an?\s+)?warning",
    re.I,
)
_REQUEST_TITLE = re.compile(r"^\s*(?:\[[^\]]*\]\s*)*(?:warn|add|emit|raise|show)\b", re.I)
# Another symptom beside the warning: the values, a hang or a crash, how often or where it
# shows, its words or its class. The warning is then context, or its presence decides nothing.
_OTHER_SYMPTOM = re.compile(
    r"\b(?:wrong|incorrect|different|mismatch\w*|nan|inf|hangs?|hanging|freez\w*|stuck"
    r"|deadlock\w*|crash\w*|segfault\w*|slow\w*|leak\w*|every\s+(?:call|time|iteration|step)"
    r"|repeated\w*|repeatedly|once|twice|spam\w*|typo\w*|misspel\w*|stacklevel|wrong\s+line"
    r"|category|message|wording|text)\b",
    re.I,
)
# Code that could hide a warning it raises from the recording: its own filters, or workers.
_HIDES = re.compile(
    r"\bcatch_warnings\b|\bfilterwarnings\b|\bsimplefilter\b|\bcaptureWarnings\b"
    r"|\bnum_workers\s*=\s*[1-9]|\bmultiprocessing\b|\bsubprocess\b|\bPool\(|\bmp\.spawn\b"
)


@dataclass(frozen=True)
class WarningClaim:
    category: str  # "UserWarning"
    message: str  # its first line, as quoted
    hidden: str = ""  # why a clean run may not show it here ("" when it would)

    def runtime(self) -> dict[str, str]:
        return {"category": self.category, "message": self.message[:300], "hidden": self.hidden}


def quoted_blocks(body: str, code: str) -> str:
    """The fenced blocks of ``body`` other than the issue's code, and the code's comments."""
    blocks = [m.group(2) for m in _BLOCK.finditer(body) if m.group(2).strip() != code.strip()]
    comments = [line.split("#", 1)[1] for line in code.splitlines() if "#" in line]
    return "\n".join(blocks + comments)


def warning_claim(
    title: str, prose: str, quoted: str, expected: str, code: str = ""
) -> WarningClaim | None:
    """The warning the issue complains of: the one ``quoted`` (the issue's output blocks and
    code comments, see quoted_blocks) holds, when ``title`` or ``prose`` (the reporter's
    words) make its appearing the complaint and the issue neither wants a warning nor quotes
    this one as its expected behaviour; ``code`` is read for what could hide it."""
    said = f"{title}\n{prose}"
    if _WANTS_WARNING.search(said) or _REQUEST_TITLE.search(title) or _OTHER_SYMPTOM.search(said):
        return None
    if not (_TITLE_WARNING.search(title) or _COMPLAINT.search(prose)):
        return None
    found = {(m.group(1).rsplit(".", 1)[-1], m.group(2).strip()) for m in _QUOTED.finditer(quoted)}
    if len({message[:40] for _, message in found}) != 1:
        return None  # none, or several: which one is the complaint?
    category, message = sorted(found)[0]
    if len(message) < 8 or message[:40] in expected:
        return None
    hides = _HIDES.search(code)
    hidden = f"the code could hide it ({hides.group(0).strip()})" if hides else ""
    return WarningClaim(category, message, hidden)
