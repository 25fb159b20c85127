"""The release-notes label and title areas suggested for changed paths (contribkit.pr.labels)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contribkit.conventions.globs import labeler_regex
from contribkit.pr.labels import (
    BUNDLED_RELEASE_NOTES,
    NOT_USER_FACING,
    is_required_label,
    suggest_labels,
)


def test_the_bundled_table_decides_by_the_bulk_of_the_change() -> None:
    found = suggest_labels([("torch/nn/functional.py", 12), ("test/test_nn.py", 40)], None)
    assert found.label == "release notes: nn"
    assert found.reason == "`torch/nn/functional.py` matches `torch/nn/**` in the bundled table"
    assert found.areas == ("nn",)
    assert found.bot_command == '@pytorchbot label "release notes: nn"'
    mixed = suggest_labels(
        [("torch/_dynamo/eval_frame.py", 3), ("torch/_inductor/lowering.py", 30)], None
    )
    assert mixed.label == "release notes: inductor" and mixed.areas == ("inductor", "dynamo")


@pytest.mark.parametrize(
    ("path", "area"),
    [
        ("aten/src/ATen/native/TensorAdvancedIndexing.cpp", "aten"),
        ("aten/src/ATen/native/cuda/Activation.cu", "cuda"),
        ("torch/_refs/__init__.py", "refs"),
        ("torch/_decomp/decompositions.py", "decomp"),
        ("torch/_prims/__init__.py", "prims"),
        ("torch/functional.py", "frontend"),
        ("torch/_tensor.py", "frontend"),
        ("torch/nn/functional.py", "nn"),
    ],
)
def test_common_paths_give_the_title_an_area(path: str, area: str) -> None:
    found = suggest_labels([(path, 3)], None)
    assert found.areas == (area,) and found.label is not None


def test_tests_and_ci_alone_are_not_user_facing() -> None:
    found = suggest_labels([("test/test_nn.py", 5), (".github/workflows/lint.yml", 1)], None)
    assert found.label == NOT_USER_FACING and found.areas == ()
    assert found.bot_command == '@pytorchbot label "topic: not user facing"'


def test_an_unknown_area_is_left_to_the_author() -> None:
    found = suggest_labels([("docs/source/index.rst", 3), ("test/test_nn.py", 1)], None)
    assert found.label is None and found.bot_command is None
    assert found.reason == "no rule knows the area of `docs/source/index.rst`"
    assert suggest_labels([], None).label is None


def test_the_forks_labeler_wins(tmp_path: Path) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "labeler.yml").write_text(
        '"release notes: quantization":\n- torch/ao/**\n'
        '"module: fancy":\n- torch/fancy/**\n'
        "\"release notes: nn (custom)\":\n- changed-files:\n  - any-glob-to-any-file: ['torch/nn/**']\n"
    )
    found = suggest_labels([("torch/nn/functional.py", 2)], tmp_path)
    assert found.label == "release notes: nn (custom)"
    assert found.reason.endswith("in .github/labeler.yml")
    # a module: label from labeler.yml names the title's area where the bundled table has none
    fancy = suggest_labels([("torch/fancy/x.py", 2), ("torch/ao/q.py", 1)], tmp_path)
    assert fancy.label == "release notes: quantization" and fancy.areas == ("quant",)
    only_fancy = suggest_labels([("torch/fancy/x.py", 2)], tmp_path)
    assert only_fancy.label is None and only_fancy.areas == ("fancy",)


def test_bundled_labels_pass_pytorchs_label_check() -> None:
    for glob, label, area in BUNDLED_RELEASE_NOTES:
        assert is_required_label(label), label
        assert labeler_regex(glob)  # every glob compiles
        assert area is None or " " not in area
    assert not is_required_label("module: nn")
