"""Trust for a repository's ``.contribkit.toml``, as direnv's ``allow``.

A branch that is checked out can carry a ``.contribkit.toml``; were its ``python`` or
``run.cuda_host`` obeyed, checking out a branch would be enough to run its code (``doctor``
would start ``python = "./evil.sh"``); were its ``run.sandbox = "none"`` obeyed, the next
``contribkit run`` would hand the issue's code the user's files. So the keys that choose
something to execute or a host to talk to, and those that weaken safety (:func:`needs_trust`)
are taken from the repository's file only once the user has
trusted that file: ``contribkit config --trust`` records its path and the SHA-256 of its content
in the user's data; any change to the file withdraws the trust; ``--untrust`` removes it.

Standard library only: :mod:`contribkit.core.config` asks here only when a repository file sets
such a key.
"""

from __future__ import annotations

import hashlib
import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

# Keys that choose an executable or a host; any key named like one (a future "*_command",
# "*.build", "*_url", "*_host", "*python") is guarded too.
# Where code is sent is guarded like what runs it: "run.engine", "ray.address",
# "slurm.partition", "slurm.cluster", "slurm.folder" (the jobs' pickles are read from it).
GUARDED_KEYS = frozenset(
    {
        "python",
        "github_url",
        "run.cuda_host",
        "run.cuda_python",
        "run.engine",
        "ray.address",
        "slurm.cluster",
        "slurm.folder",
        "slurm.partition",
    }
)
_GUARDED_WORDS = (
    "python",
    "url",
    "host",
    "command",
    "build",
    "exec",
    "shell",
    "engine",
    "address",
    "cluster",
    "partition",
    "folder",
)
# Keys that weaken safety: turn off or widen confinement ("run.sandbox = none", the limits),
# move output or caches (repros_dir, cache_dir) or switch rules off (hooks.disable); any key
# named like one (a future "run.network", "*_dir", "*.disable") is guarded too.
SAFETY_KEYS = frozenset(
    {
        "run.sandbox",
        "run.memory_limit_mb",
        "run.process_limit",
        "run.file_size_limit_mb",
        "repros_dir",
        "cache_dir",
        "hooks.disable",
        "github_max_reply_mb",
    }
)
_SAFETY_WORDS = ("sandbox", "network", "limit", "dir", "disable", "trust")
# The values of a safety key that never weaken it: honoured without trust.
HARMLESS_VALUES: dict[str, tuple[object, ...]] = {
    "run.sandbox": ("auto", "bwrap"),
    "hooks.disable": ([],),
}
TRUST_COMMAND = "contribkit config --trust"


def needs_trust(key: str, value: object = None) -> bool:
    """Whether a repository's file may set ``key`` (to ``value``) only once trusted."""
    if key in HARMLESS_VALUES and value in HARMLESS_VALUES[key]:
        return False
    if key in GUARDED_KEYS or key in SAFETY_KEYS:
        return True
    words = key.replace(".", "_").split("_")
    return any(word in words for word in (*_GUARDED_WORDS, *_SAFETY_WORDS))


def trust_file() -> str:
    """``$CONTRIBKIT_TRUST_FILE``, else ``trusted.json`` in the platform's user data folder."""
    override = os.environ.get("CONTRIBKIT_TRUST_FILE")
    if override:
        return override
    import platformdirs

    return str(platformdirs.user_data_path("contribkit") / "trusted.json")


def content_hash(path: Path | str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def _load() -> dict[str, str]:
    """``{absolute path: sha256}``; an unreadable store trusts nothing."""
    try:
        with open(trust_file(), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return {}
    trusted = data.get("trusted") if isinstance(data, dict) else None
    if not isinstance(trusted, dict):
        return {}
    return {k: v for k, v in trusted.items() if isinstance(k, str) and isinstance(v, str)}


def _save(trusted: dict[str, str]) -> None:
    from pathlib import Path

    from contribkit.core.fsutil import atomic_write

    text = json.dumps({"trusted": dict(sorted(trusted.items()))}, indent=1) + "\n"
    atomic_write(Path(trust_file()), text, force=True)


def _key(path: Path | str) -> str:
    return os.path.realpath(path)


def trust_state(path: Path | str) -> str:
    """ "trusted", "changed" (trusted once, edited since) or "untrusted"."""
    recorded = _load().get(_key(path))
    if recorded is None:
        return "untrusted"
    try:
        return "trusted" if recorded == content_hash(path) else "changed"
    except OSError:
        return "untrusted"


def trust(path: Path | str) -> str:
    """Trust the file as it is now; return its hash."""
    digest = content_hash(path)
    trusted = _load()
    trusted[_key(path)] = digest
    _save(trusted)
    return digest


def untrust(path: Path | str) -> bool:
    """Withdraw the trust; False when it was not trusted."""
    trusted = _load()
    if trusted.pop(_key(path), None) is None:
        return False
    _save(trusted)
    return True
