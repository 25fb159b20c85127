"""Learn about the target interpreter's torch by running a probe script in a subprocess.

contribkit never imports torch itself. Results are cached per interpreter (path and mtime) and
invalidated when site-packages or the torch install changes. What only running a probe needs is
imported there, so that a cached answer costs no more than reading it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contribkit.core.cache import JsonCache, sha256_hex
from contribkit.core.errors import BadInput
from contribkit.core.record import Record, field, field_names

PROBE_MARKER = "CONTRIBKIT_PROBE "
PROBE_TIMEOUT_S = 180.0
# What a probe's answer depends on in the environment, beside the interpreter: the GPUs it sees.
PROBE_ENV_KEYS = ("CUDA_VISIBLE_DEVICES",)


def install_torch_hint(python: str) -> str:
    """What to do when ``python`` cannot import torch. On Linux a plain ``pip install torch``
    pulls the multi-GB CUDA build: name the CPU wheel's index instead."""
    wheel = (
        "pip install torch --index-url https://download.pytorch.org/whl/cpu"
        if sys.platform.startswith("linux")
        else "pip install torch"
    )
    return f"pass --python with your PyTorch build's interpreter, or install torch there: {python} -m {wheel}"


class TorchInfo(Record):
    executable: str
    python_version: str
    torch: bool
    torch_version: str | None = None
    git_version: str | None = None
    debug: bool = False
    cuda_build: str | None = None
    hip_build: str | None = None
    cuda_available: bool = False
    device_count: int = 0
    device_names: list[str] = field(default_factory=list)
    mps_available: bool = False
    torch_path: str | None = None
    error: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TorchInfo:
        names = field_names(cls)
        known = {k: v for k, v in data.items() if k in names}
        return cls(**known)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in field_names(self)}


def probe_source(name: str) -> str:
    """The text of ``contribkit/target/probes/<name>``: a plain file of the package (installed
    from a wheel or a checkout), read directly; importlib.resources would cost a warm command
    more than the read itself."""
    probes = Path(__file__).resolve().parent.parent / "target" / "probes"
    return (probes / name).read_text(encoding="utf-8")


def _mtime(path: str | None) -> float | None:
    try:
        return os.stat(path).st_mtime if path else None
    except OSError:
        return None


_TORCH_VERSION_RE = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.MULTILINE)


def installed_torch_version(torch_path: str | None) -> str | None:
    """The version written in ``torch/version.py``, read without importing torch."""
    if not torch_path:
        return None
    try:
        text = Path(torch_path, "version.py").read_text(encoding="utf-8")
    except OSError:
        return None
    m = _TORCH_VERSION_RE.search(text)
    return m.group(1) if m else None


def fingerprint(python: str) -> dict[str, Any]:
    """What identifies an interpreter on disk: its real path, mtime and size."""
    st = os.stat(python)
    return {"realpath": os.path.realpath(python), "mtime": st.st_mtime, "size": st.st_size}


def validators(raw: dict[str, Any]) -> dict[str, Any]:
    """What a probe result depends on besides the interpreter: site-packages and the torch install.

    ``raw`` is a probe's output with ``purelib`` and, when torch was found, ``torch_path`` and
    ``torch_version``.
    """
    paths = [raw.get("purelib"), raw.get("torch_path")]
    if raw.get("torch_path"):
        paths.append(os.path.join(raw["torch_path"], "version.py"))
    return {
        "mtimes": {p: _mtime(p) for p in paths if p},
        "torch_path": raw.get("torch_path"),
        "torch_version": raw.get("torch_version"),
    }


def still_valid(doc: dict[str, Any], python: str) -> bool:
    """True when a cached probe document still describes ``python`` and its torch."""
    checks = doc.get("validators")
    if doc.get("fingerprint") != fingerprint(python) or not isinstance(checks, dict):
        return False
    if not isinstance(checks.get("mtimes"), dict):  # written by an older contribkit
        return False
    if any(_mtime(p) != m for p, m in checks.get("mtimes", {}).items()):
        return False
    torch_path = checks.get("torch_path")
    return not torch_path or installed_torch_version(torch_path) == checks.get("torch_version")


def run_probe(
    python: str,
    script: str,
    *,
    scrub: Sequence[str],
    timeout: float = PROBE_TIMEOUT_S,
    args: Sequence[str] = (),
) -> dict[str, Any]:
    """Run a probe script with ``python`` and return the JSON it printed after the marker.

    ``args`` become the probe's ``sys.argv[1:]``. The probe imports the user's torch and
    packages, so it gets the environment legs get: scrubbed, with ``scrub`` (the ``scrub_env``
    setting) on top of the documented patterns.
    """
    import tempfile

    from contribkit.core.proc import run_child, scrubbed_env

    hint = "check that --python points at a working interpreter"
    with tempfile.TemporaryDirectory(prefix="contribkit-probe-") as neutral:
        # A neutral cwd, so that a PyTorch checkout's unbuilt torch/ folder is not imported.
        try:
            result = run_child(
                [python, "-c", script, *args],
                env=scrubbed_env(extra_patterns=scrub),
                cwd=neutral,
                timeout=timeout,
            )
        except OSError as exc:  # not a program the system can start (e.g. no #! line)
            raise BadInput(f"could not run {python}: {exc.strerror or exc}", hint=hint) from exc
    for line in result.output.splitlines():
        if line.startswith(PROBE_MARKER):
            data: dict[str, Any] = json.loads(line[len(PROBE_MARKER) :])
            return data
    detail = (
        "timed out"
        if result.timed_out
        else (result.output.strip().splitlines() or ["no output"])[-1]
    )
    raise BadInput(f"could not probe {python}: {detail}", hint=hint)


def cached_probe(
    python: str,
    script_name: str,
    cache: JsonCache | None = None,
    *,
    scrub: Sequence[str],
    refresh: bool = False,
) -> dict[str, Any]:
    """Run ``contribkit/target/probes/<script_name>`` with ``python``, or return its cached output.

    The result is cached per probe script (name and text), interpreter (path, mtime, size) and
    GPU mask (``PROBE_ENV_KEYS``:
    set, empty and unset are three keys), and re-run when site-packages, the torch install or
    torch's version changes. The probe must print ``purelib`` and, when torch imports,
    ``torch_path`` and ``torch_version``.
    """
    from contribkit.core.workspace import resolve_python

    python = resolve_python(python)  # an executable file's absolute path, or BadInput
    source = probe_source(script_name)
    # The probe's own text is part of the key: a contribkit upgrade that changes it re-probes.
    script = sha256_hex(source)[:16]
    key = json.dumps([python, script_name, script, {k: os.environ.get(k) for k in PROBE_ENV_KEYS}])
    if cache is not None and not refresh:
        doc = cache.get(key)
        if doc and isinstance(doc.get("info"), dict) and still_valid(doc, python):
            cached: dict[str, Any] = doc["info"]
            return cached
    raw = run_probe(python, source, scrub=scrub)
    if cache is not None:
        cache.put(
            key,
            {"fingerprint": fingerprint(python), "validators": validators(raw), "info": raw},
        )
    return raw


def probe_torch(
    python: str, cache: JsonCache | None = None, *, scrub: Sequence[str], refresh: bool = False
) -> TorchInfo:
    """Facts about ``python``'s torch, from the cache when nothing has changed since."""
    return TorchInfo.from_dict(
        cached_probe(python, "torch_info.py", cache, scrub=scrub, refresh=refresh)
    )
