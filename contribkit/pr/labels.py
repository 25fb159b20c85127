"""PyTorch labels for paths: the fork's ``.github/labeler.yml`` first, then a small bundled table.

Test files carry an owner label in their first line (``# Owner(s): ["module: nn"]``); PyTorch's
TESTOWNERS lint accepts only labels that look like ``module: …`` or ``oncall: …``. The same
path→label rules can suggest labels for changed files.

The labeler.yml reader (:func:`labeler_rules`, :func:`labels_for_path`) is shared: the PR body
uses it to suggest the one release-notes label every PyTorch PR needs (``release notes: <area>``
or ``topic: not user facing``, see ``.github/scripts/check_labels.py``) and the ``[area]`` of a
PR title. Pure functions; PyYAML is imported only to read a labeler.yml.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contribkit.conventions.globs import labeler_regex

LABELER_PATH = ".github/labeler.yml"
OWNER_LABEL = re.compile(r"^(module|oncall): [A-Za-z0-9][A-Za-z0-9 _.+/&()-]*$")

# Test paths -> owner label, first match wins (glob syntax as labeler.yml's: ** crosses folders).
# Used when the fork's labeler.yml says nothing about the path. Kept short on purpose: these are
# the owners of PyTorch's test folders and of its best-known top-level test files.
BUNDLED_TEST_OWNERS: tuple[tuple[str, str], ...] = (
    ("test/inductor/**", "module: inductor"),
    ("test/dynamo/**", "module: dynamo"),
    ("test/distributed/**", "oncall: distributed"),
    ("test/quantization/**", "oncall: quantization"),
    ("test/export/**", "oncall: export"),
    ("test/functorch/**", "module: functorch"),
    ("test/jit/**", "oncall: jit"),
    ("test/onnx/**", "module: onnx"),
    ("test/profiler/**", "oncall: profiler"),
    ("test/fx/**", "module: fx"),
    ("test/optim/**", "module: optimizer"),
    ("test/autograd/**", "module: autograd"),
    ("test/nn/**", "module: nn"),
    ("test/test_nn*.py", "module: nn"),
    ("test/test_linalg*.py", "module: linear algebra"),
    ("test/test_sparse*.py", "module: sparse"),
    ("test/test_spectral*.py", "module: fft"),
    ("test/test_fft*.py", "module: fft"),
    ("test/test_cuda*.py", "module: cuda"),
    ("test/test_mps*.py", "module: mps"),
    ("test/test_autograd*.py", "module: autograd"),
    ("test/test_fx*.py", "module: fx"),
    ("test/test_optim*.py", "module: optimizer"),
    ("test/test_dataloader*.py", "module: dataloader"),
    ("test/test_serialization*.py", "module: serialization"),
    ("test/test_complex*.py", "module: complex"),
    ("test/test_type_promotion*.py", "module: type promotion"),
    ("test/test_scatter_gather*.py", "module: scatter & gather ops"),
    ("test/test_*.py", "module: tests"),
    ("**", "module: unknown"),
)

NOT_USER_FACING = "topic: not user facing"
RELEASE_NOTES_PREFIX = "release notes: "

# Changed paths -> (the release-notes label, the [area] of a title), first match wins. Used where
# the fork's labeler.yml has no release-notes label for a path. Short on purpose: the best-known
# areas of PyTorch's release notes; anything else is left for the author to pick.
BUNDLED_RELEASE_NOTES: tuple[tuple[str, str, str | None], ...] = (
    ("torch/_dynamo/**", "release notes: dynamo", "dynamo"),
    ("torch/_inductor/**", "release notes: inductor", "inductor"),
    ("torch/export/**", "release notes: export", "export"),
    ("torch/_export/**", "release notes: export", "export"),
    ("torch/fx/**", "release notes: fx", "fx"),
    ("torch/distributed/**", "release notes: distributed (c10d)", "distributed"),
    ("torch/csrc/distributed/**", "release notes: distributed (c10d)", "distributed"),
    ("torch/ao/**", "release notes: quantization", "quant"),
    ("aten/src/ATen/native/quantized/**", "release notes: quantization", "quant"),
    ("torch/onnx/**", "release notes: onnx", "onnx"),
    ("torch/jit/**", "release notes: jit", "jit"),
    ("torch/csrc/jit/**", "release notes: jit", "jit"),
    ("torch/nn/**", "release notes: nn", "nn"),
    ("torch/optim/**", "release notes: optim", "optim"),
    ("torch/autograd/**", "release notes: autograd", "autograd"),
    ("torch/csrc/autograd/**", "release notes: autograd", "autograd"),
    ("torch/sparse/**", "release notes: sparse", "sparse"),
    ("aten/src/ATen/native/sparse/**", "release notes: sparse", "sparse"),
    ("torch/linalg/**", "release notes: linalg_frontend", "linalg"),
    ("torch/utils/data/**", "release notes: dataloader", "dataloader"),
    ("torch/profiler/**", "release notes: profiler", "profiler"),
    ("torch/mps/**", "release notes: mps", "mps"),
    ("aten/src/ATen/native/mps/**", "release notes: mps", "mps"),
    ("aten/src/ATen/mps/**", "release notes: mps", "mps"),
    ("torch/cuda/**", "release notes: cuda", "cuda"),
    ("aten/src/ATen/native/cuda/**", "release notes: cuda", "cuda"),
    ("aten/src/ATen/cuda/**", "release notes: cuda", "cuda"),
    ("c10/cuda/**", "release notes: cuda", "cuda"),
    ("aten/src/ATen/native/**", "release notes: python_frontend", "aten"),
    ("torch/_refs/**", "release notes: python_frontend", "refs"),
    ("torch/_prims/**", "release notes: python_frontend", "prims"),
    ("torch/_decomp/**", "release notes: python_frontend", "decomp"),
    ("torch/*.py", "release notes: python_frontend", "frontend"),
    ("test/**", NOT_USER_FACING, None),
    ("benchmarks/**", NOT_USER_FACING, None),
    (".github/**", NOT_USER_FACING, None),
    (".ci/**", NOT_USER_FACING, None),
    ("tools/**", NOT_USER_FACING, None),
    ("scripts/**", NOT_USER_FACING, None),
    (".lintrunner.toml", NOT_USER_FACING, None),
)


@dataclass(frozen=True)
class LabelRule:
    label: str
    glob: str
    origin: str  # "labeler.yml" or "bundled table"


def _strings(value: Any) -> list[str]:
    """Every string inside a labeler entry (v4 lists of globs and v5 ``changed-files`` maps)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    return []


def parse_labeler(text: str) -> list[LabelRule]:
    """Rules from a labeler.yml text; negated globs (``!…``) and malformed files are ignored."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return []
    if not isinstance(data, dict):
        return []
    return [
        LabelRule(str(label), glob, "labeler.yml")
        for label, value in data.items()
        for glob in _strings(value)
        if not glob.startswith("!")
    ]


def labeler_rules(root: Path | None) -> list[LabelRule]:
    if root is None:
        return []
    try:
        text = (root / LABELER_PATH).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return parse_labeler(text)


def labels_for_path(path: str, rules: list[LabelRule]) -> list[LabelRule]:
    """Rules whose glob matches ``path`` (POSIX, relative to the repository root), in file order."""
    return [rule for rule in rules if labeler_regex(rule.glob).match(path)]


def owner_label(path: str, root: Path | None) -> LabelRule:
    """The owner label for a test file: the fork's labeler.yml when it names one, else the table."""
    for rule in labels_for_path(path, labeler_rules(root)):
        if OWNER_LABEL.match(rule.label):
            return rule
    bundled = [LabelRule(label, glob, "bundled table") for glob, label in BUNDLED_TEST_OWNERS]
    return labels_for_path(path, bundled)[0]


# -- the release-notes label and the title's area -----------------------------------------------
def is_required_label(label: str) -> bool:
    """Whether ``label`` satisfies PyTorch's label check (check_labels.py)."""
    return label.startswith(RELEASE_NOTES_PREFIX) or label == NOT_USER_FACING


@dataclass(frozen=True)
class LabelSuggestion:
    label: str | None  # None: the paths do not tell; the author picks one
    reason: str  # why: "`torch/nn/x.py` matches `torch/nn/**` in the bundled table"
    areas: tuple[str, ...]  # title areas, most-changed first (at most two)

    @property
    def bot_command(self) -> str | None:
        """The comment that asks pytorchbot to add the label."""
        return f'@pytorchbot label "{self.label}"' if self.label else None


def _bundled_rule(path: str) -> tuple[str, str, str | None] | None:
    for glob, label, area in BUNDLED_RELEASE_NOTES:
        if labeler_regex(glob).match(path):
            return glob, label, area
    return None


def _area_from_label(label: str) -> str | None:
    """``module: dynamo`` -> ``dynamo``; labels of several words make poor title areas."""
    kind, _, name = label.partition(": ")
    return name if kind in ("module", "oncall") and name and " " not in name else None


def suggest_labels(files: Sequence[tuple[str, int]], root: Path | None) -> LabelSuggestion:
    """One release-notes label for changed ``files`` (path, changed lines), and title areas.

    The fork's labeler.yml wins where it names a release-notes label for a path; otherwise the
    bundled table decides. Paths are weighed by their changed lines, so the bulk of the change
    picks the label. Test, CI and tooling paths alone make ``topic: not user facing``; a user
    facing path that no rule knows leaves the choice to the author (``label`` None).
    """
    if not files:
        return LabelSuggestion(None, "no changed files", ())
    fork_rules = labeler_rules(root)
    fork_votes: dict[str, list[tuple[int, str, str]]] = {}
    bundled_votes: dict[str, list[tuple[int, str, str]]] = {}
    area_weight: dict[str, int] = {}
    fork_area_weight: dict[str, int] = {}
    unknown: list[str] = []
    for path, lines in files:
        weight = max(lines, 1)
        for rule in labels_for_path(path, fork_rules):
            if is_required_label(rule.label):
                fork_votes.setdefault(rule.label, []).append((weight, path, rule.glob))
            area = _area_from_label(rule.label)
            if area:
                fork_area_weight[area] = fork_area_weight.get(area, 0) + weight
        bundled = _bundled_rule(path)
        if bundled is None:
            unknown.append(path)
            continue
        glob, label, bundled_area = bundled
        bundled_votes.setdefault(label, []).append((weight, path, glob))
        if bundled_area:
            area_weight[bundled_area] = area_weight.get(bundled_area, 0) + weight
    areas = _top(area_weight) or _top(fork_area_weight)
    for votes, origin in ((fork_votes, LABELER_PATH), (bundled_votes, "the bundled table")):
        user_facing = {k: v for k, v in votes.items() if k != NOT_USER_FACING}
        if user_facing:
            label = max(user_facing, key=lambda k: (sum(w for w, _, _ in user_facing[k]), k))
            weight, path, glob = max(user_facing[label])
            return LabelSuggestion(label, f"`{path}` matches `{glob}` in {origin}", areas)
    if unknown:
        shown = ", ".join(f"`{p}`" for p in unknown[:2]) + (" …" if len(unknown) > 2 else "")
        return LabelSuggestion(None, f"no rule knows the area of {shown}", areas)
    internal = fork_votes.get(NOT_USER_FACING) or bundled_votes[NOT_USER_FACING]
    origin = LABELER_PATH if NOT_USER_FACING in fork_votes else "the bundled table"
    return LabelSuggestion(
        NOT_USER_FACING,
        f"only tests, CI or tooling change (`{max(internal)[2]}` in {origin})",
        areas,
    )


def _top(weights: dict[str, int], count: int = 2) -> tuple[str, ...]:
    ranked = sorted(weights.items(), key=lambda item: (-item[1], item[0]))
    return tuple(name for name, _ in ranked[:count])
