"""A large test file written for contribkit's own tests (not a copy of PyTorch's): many classes
and methods, plus the awkward parts real test files have."""

from __future__ import annotations

# The file written for these tests: many classes and methods, plus the awkward parts
# real files have (multi-line strings at every indentation, decorators, comments after a class
# body, a class followed directly by code, unicode, a main block).
HEAD = '''# Owner(s): ["module: tests"]
"""A large fixture: édition spéciale."""

import math
import unittest  # used below

import torch
from torch.testing._internal.common_device_type import (
    dtypes,
    instantiate_device_type_tests,
)
from torch.testing._internal.common_utils import run_tests, TestCase

EXPECTED = """
  indented
text"""


class HelperMixin:
    pass


'''


def large_file(classes: int = 40, methods: int = 25) -> str:
    parts = [HEAD]
    for c in range(classes):
        parts.append(f"class TestGroup{c}(TestCase):\n")
        for m in range(methods):
            if m % 5 == 0:
                parts.append("    @dtypes(torch.float32, torch.float64)\n")
                parts.append(f"    def test_m{m}(self, device, dtype):\n")
            else:
                parts.append(f"    def test_m{m}(self, device):\n")
            parts.append(f'        msg = """line {m}\nsecond line at column 0\n    """\n')
            parts.append(f"        self.assertTrue(math.isfinite({m}.0), msg)\n\n")
        parts.append("    # a comment that ends the class body\n\n\n")
        parts.append(f"instantiate_device_type_tests(TestGroup{c}, globals())\n\n\n")
    parts.append(
        "class TestPlain(TestCase):\n    def test_plain(self):\n        self.assertTrue(True)\n"
    )
    parts.append('x_after_class = "no blank line before me"\n\n')
    parts.append('if __name__ == "__main__":\n    run_tests()\n')
    return "".join(parts)


def inserted_lines(original: str, result: str) -> list[str]:
    """The lines of ``result`` that are not ``original``'s, checking that ``original`` survives
    whole and in order."""
    original_lines = original.splitlines(keepends=True)
    added, i = [], 0
    for line in result.splitlines(keepends=True):
        if i < len(original_lines) and line == original_lines[i]:
            i += 1
        else:
            added.append(line)
    assert i == len(original_lines)
    return added


def edited_lines(original: str, result: str) -> tuple[list[str], list[str]]:
    """The lines ``result`` drops from ``original`` and the lines it adds (a line diff)."""
    import difflib

    removed: list[str] = []
    added: list[str] = []
    a, b = original.splitlines(keepends=True), result.splitlines(keepends=True)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed.extend(a[i1:i2])
        if tag in ("replace", "insert"):
            added.extend(b[j1:j2])
    return removed, added
