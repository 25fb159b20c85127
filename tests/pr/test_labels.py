"""Owner labels for test paths: the fork's labeler.yml first, then the bundled table."""

from __future__ import annotations

from pathlib import Path

from contribkit.conventions.globs import labeler_regex
from contribkit.pr.labels import (
    BUNDLED_TEST_OWNERS,
    OWNER_LABEL,
    labels_for_path,
    owner_label,
    parse_labeler,
)


def test_globs_match_like_labeler() -> None:
    assert labeler_regex("test/inductor/**").match("test/inductor/sub/test_x.py")
    assert not labeler_regex("test/inductor/**").match("test/test_inductor.py")
    assert labeler_regex("test/test_nn*.py").match("test/test_nn_init.py")
    assert not labeler_regex("test/test_*.py").match("test/nn/test_x.py")  # * stays in one folder
    assert labeler_regex("**/test_?.py").match("a/b/test_x.py")
    assert labeler_regex("**/test_?.py").match("test_x.py")
    assert not labeler_regex("torch/_dynamo/**").match("torch/_dynamo_extra/x.py")


def test_labeler_v4_and_v5_shapes() -> None:
    text = (
        '"module: dynamo":\n- torch/_dynamo/**\n- test/dynamo/**\n'
        '"release notes: quantization":\n- torch/ao/**\n'
        "\"module: inductor\":\n- changed-files:\n  - any-glob-to-any-file: ['test/inductor/**', '!test/inductor/skip/**']\n"
    )
    rules = parse_labeler(text)
    assert [(r.label, r.glob) for r in labels_for_path("test/dynamo/test_x.py", rules)] == [
        ("module: dynamo", "test/dynamo/**")
    ]
    assert [r.label for r in labels_for_path("test/inductor/test_y.py", rules)] == [
        "module: inductor"
    ]
    assert all(not r.glob.startswith("!") for r in rules)
    assert parse_labeler("- not: a mapping\n") == []
    assert parse_labeler("key: [unclosed\n") == []


def test_owner_prefers_the_forks_labeler(tmp_path: Path) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "labeler.yml").write_text(
        '"ciflow/inductor":\n- test/inductor/**\n'  # not an owner label: skipped
        '"oncall: pt2":\n- test/inductor/**\n'
    )
    rule = owner_label("test/inductor/test_new.py", tmp_path)
    assert (rule.label, rule.origin, rule.glob) == (
        "oncall: pt2",
        "labeler.yml",
        "test/inductor/**",
    )
    # Where labeler.yml says nothing, the bundled table answers.
    assert owner_label("test/nn/test_unfold.py", tmp_path).label == "module: nn"
    assert owner_label("test/test_linalg_extra.py", None).label == "module: linear algebra"
    assert owner_label("test/test_index_add.py", None).label == "module: tests"
    assert owner_label("test/test_scatter_gather.py", None).label == "module: scatter & gather ops"
    assert owner_label("elsewhere/test_x.py", None).label == "module: unknown"


def test_bundled_labels_are_well_formed() -> None:
    assert all(OWNER_LABEL.match(label) for _, label in BUNDLED_TEST_OWNERS)
    assert BUNDLED_TEST_OWNERS[-1][0] == "**"  # every path gets a label
