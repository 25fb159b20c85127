"""The three glob flavours of contribkit.conventions.globs, side by side on the same patterns."""

from __future__ import annotations

import pytest

from contribkit.conventions.globs import (
    fnmatch_matcher,
    ignore_regex,
    labeler_regex,
    matches_ignore_pattern,
)

# (pattern, path, gitignore, labeler.yml, fnmatch): where the flavours part ways
SIDE_BY_SIDE = [
    # ** crosses folders in all three
    ("test/**", "test/nn/test_x.py", True, True, True),
    ("torch/_dynamo/**", "torch/_dynamo_extra/x.py", False, False, False),
    # * within one folder (gitignore, labeler) or across them (fnmatch); a gitignore folder
    # pattern also matches everything under the folder
    ("test/*.py", "test/nn/test_x.py", False, False, True),
    ("torch/*", "torch/nn/x.py", True, False, True),
    # a pattern without a slash: any path component (gitignore), the whole path (labeler),
    # the whole path with * crossing folders (fnmatch)
    ("*.log", "build/run.log", True, False, True),
    ("debug_issue.sh", "tools/debug_issue.sh", True, False, False),
    ("debug_issue.sh", "debug_issue.sh", True, True, True),
    # **/ may match no folder in labeler.yml only
    ("**/test_?.py", "test_x.py", False, True, False),
    ("**/test_?.py", "a/b/test_x.py", True, True, True),
    # character classes: gitignore and fnmatch, not labeler.yml
    ("run_[!0-9].txt", "run_a.txt", True, False, True),
    ("run_[0-9].txt", "run_1.txt", True, False, True),
    # a leading slash anchors a gitignore pattern; the others take it literally
    ("/.contribkit.toml", ".contribkit.toml", True, False, False),
    ("/.contribkit.toml", "docs/.contribkit.toml", False, False, False),
    # a trailing slash is a folder in gitignore
    ("repros/", "repros/issue-1/repro.py", True, False, False),
    ("repros/", "repros", False, False, False),
    # ? is one character within a component
    ("a?b", "a/b", False, False, True),
]


@pytest.mark.parametrize(("pattern", "path", "gitignore", "labeler", "fnmatch"), SIDE_BY_SIDE)
def test_the_flavours_side_by_side(
    pattern: str, path: str, gitignore: bool, labeler: bool, fnmatch: bool
) -> None:
    assert matches_ignore_pattern(path, pattern) is gitignore
    assert bool(ignore_regex(pattern).search(path)) is gitignore
    assert (labeler_regex(pattern).match(path) is not None) is labeler
    assert fnmatch_matcher([pattern])(path) is fnmatch


def test_fnmatch_matcher_takes_any_of_its_patterns() -> None:
    is_source = fnmatch_matcher(["torch/**", "aten/**", "c10/**"])
    assert is_source("torch/nn/functional.py") and is_source("c10/core/x.h")
    assert not is_source("test/test_nn.py")
    assert not fnmatch_matcher([])("torch/x.py")


def test_labeler_regex_is_compiled_once() -> None:
    assert labeler_regex("torch/nn/**") is labeler_regex("torch/nn/**")
