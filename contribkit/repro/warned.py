"""The warning an issue complains of: the ``warning`` oracle's claim.

Class: a warning the reporter calls spurious or wrong, quoted as Python prints it (``path:line:
Category: message``): the lr_scheduler's "Detected call of `lr_scheduler.step()` before
`optimizer.step()`" under a GradScaler (issue 44511 by BramVanroy, 55585 by stas00), the
Transformer's nested-tensor warning with its default arguments (137173 by hyperkai). The
runtime records the warnings the code raises (``target/reprotrace.Recorder``) and the script
decides: REPRODUCED while the code still raises it, NOT_REPRODUCED when the code runs to its end
without it (under the same evidence rules as every other clean run).

Read only where the complaint is the warning: the title names a warning, or the prose calls it
spurious, wrong, unexpected or unwanted. Never for a warning the issue wants ("should warn",
"no warning is raised"), one its expected behaviour quotes, or a bare ``Warning:`` (torch's C++
log lines, which the runtime does not see).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# "…/module.py:12: UserWarning: message", "FutureWarning: message" (a category, not "Warning").
_QUOTED = re.compile(r"(?:^|[\s:])((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*Warning):[ \t]+(\S[^\n]*)", re.M)
_TITLE_WARNING = re.compile(r"\bwarn(?:s|ed|ing|ings)?\b", re.I)
_COMPLAINT = re.compile(
    r"\b(?:spurious|unnecessary|unexpected|incorrect|wrong|misleading|false|bogus|annoying"
    r"|confusing|unwanted|noisy|useless|erroneous|superfluous)\s+(?:\w+\s+)?\w*warnings?\b"
    r"|\b\w*warnings?\s+(?:\w+\s+){0,3}(?:even\s+(?:though|when|if)|although|despite)\b"
    r"|\b(?:should\s*n[o']t|should\s+not|must\s+not|need\s*n[o']t)\s+(?:\w+\s+)?"
    r"(?:warn|raise\s+(?:a\s+|this\s+|the\s+)?(?:\w+)?warning)",
    re.I,
)
# The bug is a warning that is missing: a clean run shows it, not its absence.
_WANTS_WARNING = re.compile(
    r"\b(?:should|expected?\s+to|supposed\s+to|ought\s+to)\s+(?:\w+\s+)?warn"
    r"|\b(?:does|did|do)\s*n[o']t\s+(?:\w+\s+)?warn|\bnever\s+warns?\b"
    r"|\bno\s+warnings?\s+(?:is|was|are|were)\s+(?:raised|emitted|shown|printed|given)"
    r"|\bwithout\s+(?:an?\s+|any\s+)?warnings?\b|\bexpect(?:ed|s)?\s+(?:an?\s+)?warning",
    re.I,
)


@dataclass(frozen=True)
class WarningClaim:
    category: str  # "UserWarning"
    message: str  # its first line, as quoted

    def runtime(self) -> dict[str, str]:
        return {"category": self.category, "message": self.message[:300]}


def warning_claim(title: str, prose: str, quoted: str, expected: str) -> WarningClaim | None:
    """The warning the issue complains of: the first quoted in ``quoted`` (the body less its
    code), when ``title`` or ``prose`` (the reporter's words) make it the complaint and the
    issue neither wants a warning nor quotes this one as its expected behaviour."""
    if _WANTS_WARNING.search(f"{title}\n{prose}"):
        return None
    if not (_TITLE_WARNING.search(title) or _COMPLAINT.search(prose)):
        return None
    match = _QUOTED.search(quoted)
    if match is None:
        return None
    category = match.group(1).rsplit(".", 1)[-1]
    message = match.group(2).strip().strip("`").strip()
    if len(message) < 8 or message[:40] in expected:
        return None
    return WarningClaim(category, message)
