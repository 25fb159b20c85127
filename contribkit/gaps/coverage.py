"""How often a checkout's ``test/`` mentions each public name of a module: ``F.relu``,
``torch.nn.functional.relu``, ``nn.functional.relu`` (also an OpInfo's name), one ``git grep``."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from contribkit.git.cmd import GitError, git

# Short names the tests import modules as (``import torch.nn.functional as F``).
ALIASES = {
    "torch.nn.functional": ("F",),
    "torch.nn": ("nn",),
    "torch.linalg": ("LA",),
}


def prefixes(module: str) -> list[str]:
    """The spellings of ``module`` a test writes before a name: its full name, the name without
    ``torch.`` (``nn.functional``, as OpInfo names are), and its usual alias."""
    found = [module]
    if module.startswith("torch."):
        found.append(module[len("torch.") :])
    found += ALIASES.get(module, ())
    return list(dict.fromkeys(found))


def count_mentions(root: Path, module: str) -> Counter[str]:
    """``{name: mentions}`` over the tracked files under ``root/test``."""
    alternatives = "|".join(re.escape(p) for p in prefixes(module))
    pattern = rf"(^|[^A-Za-z0-9_.])({alternatives})\.[A-Za-z_][A-Za-z0-9_]*"
    try:
        out = git(
            "grep", "-h", "-o", "-I", "-E", "-e", pattern, "--", "test", cwd=root, check=False
        )
    except GitError:
        return Counter()
    strip = re.compile(rf"^[^A-Za-z0-9_]?(?:{alternatives})\.")
    return Counter(strip.sub("", line) for line in out.splitlines())
