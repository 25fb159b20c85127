"""The reporter's environment: collect_env output and "## Environment" fields."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from contribkit.issue.model import ReporterEnv
from contribkit.issue.parse.scan import Scan

_COLLECT_ENV_KEYS = (
    "Collecting environment information",
    "PyTorch version:",
    "Is debug build:",
    "CUDA used to build PyTorch:",
    "ROCM used to build PyTorch:",
    "GCC version:",
    "Clang version:",
    "CMake version:",
    "Libc version:",
    "Python version:",
    "Python platform:",
    "Is CUDA available:",
    "CUDA runtime version:",
    "GPU models and configuration:",
    "Nvidia driver version:",
    "cuDNN version:",
    "Is XNNPACK available:",
    "Versions of relevant libraries:",
)
# `Key: value` lines of collect_env output and of the old "## Environment" bullet list, keys
# lower-cased with any "(e.g., 1.0)" removed.
_ENV_FIELDS = {
    "pytorch version": "torch_version",
    "torch version": "torch_version",
    "pytorch": "torch_version",
    "cuda used to build pytorch": "cuda_build",
    "cuda/cudnn version": "cuda_build",
    "cuda version": "cuda_build",
    "os": "os",
    "operating system": "os",
    "python version": "python",
    "gpu models and configuration": "gpu_models",
    "gpu models": "gpu_models",
    "gpu": "gpu_models",
    "is cuda available": "cuda_available",
}
_ENV_LINE = re.compile(
    r"\s*(?:(?:[-*+]|\d+[.)]|>)\s+)*\**(?P<key>[^:\n]{1,60}?)\**\s*:\s*(?P<value>.*)"
)
_GPU_LINE = re.compile(r"\s*GPU \d+\s*:")
_NO_VALUE = frozenset({"", "could not collect", "n/a", "na", "none", "-", "no cuda", "unknown"})


def is_collect_env(lines: list[str]) -> bool:
    """Two lines or more start with collect_env's keys (a one-line text never does)."""
    return len(lines) >= 2 and (
        sum(1 for line in lines if line.lstrip().startswith(_COLLECT_ENV_KEYS)) >= 2
    )


def reporter_env(scans: Iterable[Scan]) -> ReporterEnv | None:
    """collect_env fields; a field found in an earlier scan wins."""
    env = ReporterEnv()
    for text in (text for scan in scans for text in _env_texts(scan)):
        for name, value in _env_fields(text).items():
            if getattr(env, name) is None:
                setattr(env, name, value)
    return env if env != ReporterEnv() else None


def _env_texts(scan: Scan) -> Iterator[str]:
    """Where env fields may be: collect_env blocks, then text under env headings or summaries,
    then any prose that looks like collect_env output."""
    for block in scan.blocks:
        if block.code.kind == "collect_env":
            yield block.code.text
    for block in scan.blocks:
        if block.role == "env" and block.code.kind == "output":
            yield block.code.text
    for prose in scan.prose:
        if prose.role == "env" and not prose.heading:
            yield prose.raw
    for prose in scan.prose:
        if prose.role != "env" and is_collect_env(prose.raw.split("\n")):
            yield prose.raw


def _env_fields(text: str) -> dict[str, str | bool]:
    fields: dict[str, str | bool] = {}
    if ":" not in text:  # every field line has one ("PyTorch version: 2.3"): most output has none
        return fields
    lines = text.split("\n")
    for number, line in enumerate(lines):
        match = _ENV_LINE.fullmatch(line)
        if match is None:
            continue
        key = " ".join(re.sub(r"\([^)]*\)", "", match.group("key")).lower().split())
        name = _ENV_FIELDS.get(key)
        if name is None or name in fields:
            continue
        value = match.group("value").strip().strip("*`").strip()
        if name == "gpu_models":
            gpus = [value] if value else []
            for following in lines[number + 1 :]:
                if not _GPU_LINE.match(following):
                    break
                gpus.append(following.strip())
            value = "; ".join(gpus)
        if value.lower() in _NO_VALUE:
            continue
        if name == "cuda_available":
            answer = value.lower().split()[0]
            if answer in ("yes", "true"):
                fields[name] = True
            elif answer in ("no", "false"):
                fields[name] = False
        elif name == "python":
            version = re.match(r"\d+\.\d+(?:\.\d+)?\S*", value)
            fields[name] = version.group(0) if version else value
        else:
            fields[name] = value
    return fields
