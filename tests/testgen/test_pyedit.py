"""Syntax-aware edits: re-indenting code around strings, and pure line insertion into classes."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contribkit.testgen.pyedit import (
    EditError,
    ImportSpec,
    block_at_column_zero,
    find_test_classes,
    indent_block,
    insert_lines,
    match_quotes,
    parse_file,
    plan_insertion,
    rename,
    render_imports,
)
from tests.largefile import edited_lines, inserted_lines, large_file

METHOD = (
    "@dtypes(torch.float32)\n"
    "def test_new(self, device, dtype):\n"
    '    """A new test."""\n'
    "    text = '''keep\n"
    "as is'''\n"
    "    self.assertEqual(make_tensor((1,), device=device, dtype=dtype).numel(), 1)\n"
)
NEEDS = [
    ImportSpec("torch"),
    ImportSpec("torch.testing", "make_tensor"),
    ImportSpec("torch.testing._internal.common_device_type", "dtypes"),
]


def class_at(tree: ast.Module, index: int) -> ast.ClassDef:
    """``tree.body[index]``, which the test's source makes a class."""
    node = tree.body[index]
    assert isinstance(node, ast.ClassDef)
    return node


def test_indent_block_keeps_string_contents_but_moves_docstrings() -> None:
    code = 'def f():\n    """Doc\n    more."""\n    s = """a\nb"""\n    return s\n'
    out = indent_block(code, "    ")
    assert '    s = """a\nb"""' in out  # the string's second line is untouched
    assert '        """Doc\n        more."""' in out  # a docstring is prose: it moves along
    assert ast.literal_eval(out.split("s = ")[1].split("\n    ")[0]) == "a\nb"
    assert block_at_column_zero('    x = """1\n2"""\n    y = x\n', 4) == 'x = """1\n2"""\ny = x\n'


def test_rename_touches_names_only() -> None:
    code = 'DEVICE_X = 1\nx = f(DEVICE, "DEVICE", obj.DEVICE)\n'
    assert rename(code, "DEVICE", "device") == 'DEVICE_X = 1\nx = f(device, "DEVICE", obj.DEVICE)\n'


def test_render_imports_groups_and_merges() -> None:
    block = render_imports(
        [
            ImportSpec("torch"),
            ImportSpec("copy"),
            ImportSpec("numpy", None, "np"),
            ImportSpec("torch.testing._internal.common_utils", "TestCase"),
            ImportSpec("torch.testing._internal.common_utils", "run_tests"),
            ImportSpec("torch"),
        ]
    )
    assert block == (
        "import copy\n\nimport numpy as np\n\nimport torch\n"
        "from torch.testing._internal.common_utils import run_tests, TestCase"
    ) or block == (
        "import copy\n\nimport numpy as np\n\nimport torch\n"
        "from torch.testing._internal.common_utils import TestCase, run_tests"
    )


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.text(alphabet="ab \t#\r", max_size=6), max_size=8),
    st.dictionaries(st.integers(0, 9), st.lists(st.text(alphabet="xyz", max_size=3), max_size=3)),
)
def test_insert_lines_only_inserts(lines: list[str], insertions: dict[int, list[str]]) -> None:
    original = "\n".join(lines)
    result = insert_lines(original, insertions)
    # Remove what was inserted: the original comes back, byte for byte.
    it = iter(result)
    assert all(ch in it for ch in original)  # original is a subsequence of result
    if not any(i <= len(original.splitlines()) for i in insertions if insertions[i]):
        assert result == original


def test_insert_into_a_large_file_changes_no_other_byte() -> None:
    source = large_file()
    assert len(source.splitlines()) > 3000
    tree = parse_file(source, "test_large.py")
    cls = next(c for c in find_test_classes(tree) if c.name == "TestGroup17")
    result, added = plan_insertion(source, "test_large.py", cls, tree, METHOD, NEEDS)
    assert [s.statement() for s in added] == ["from torch.testing import make_tensor"]
    inserted = inserted_lines(source, result)
    assert "    def test_new(self, device, dtype):\n" in inserted
    assert "as is'''\n" in inserted  # the string line stays at column 0
    new_tree = ast.parse(result)
    group = next(
        n for n in new_tree.body if isinstance(n, ast.ClassDef) and n.name == "TestGroup17"
    )
    assert [n.name for n in group.body if isinstance(n, ast.FunctionDef)][-1] == "test_new"
    # the class's closing comment stays with the class, before the new method
    lines = result.splitlines()
    assert lines.index("    def test_new(self, device, dtype):") > lines.index(
        "    # a comment that ends the class body", lines.index("class TestGroup17(TestCase):")
    )
    # the import joined the torch block at its sorted place, as usort would put it
    assert lines[lines.index("import torch") + 1] == "from torch.testing import make_tensor"


def test_insert_keeps_crlf_and_completes_a_missing_final_newline() -> None:
    source = "import torch\r\n\r\nclass TestA(TestCase):\r\n    def test_a(self, device):\r\n        pass"
    tree = parse_file(source, "t.py")
    result, _ = plan_insertion(
        source, "t.py", class_at(tree, 1), tree, "def test_b(self, device):\n    pass\n", []
    )
    assert result.startswith(source)
    assert result[len(source) :] == "\r\n\r\n    def test_b(self, device):\r\n        pass\r\n"


def test_insert_after_a_class_followed_by_code_keeps_two_blank_lines() -> None:
    source = "class TestA:\n    def test_a(self):\n        pass\nX = 1\n"
    tree = parse_file(source, "t.py")
    result, _ = plan_insertion(
        source, "t.py", class_at(tree, 0), tree, "def test_b(self):\n    pass\n", []
    )
    assert (
        result
        == "class TestA:\n    def test_a(self):\n        pass\n\n    def test_b(self):\n        pass\n\n\nX = 1\n"
    )


def test_imports_already_bound_are_not_added_and_future_imports_refused() -> None:
    source = "try:\n    from torch.testing import make_tensor\nexcept ImportError:\n    pass\nimport torch\n\n\nclass TestA:\n    x = 1\n"
    tree = parse_file(source, "t.py")
    _, added = plan_insertion(
        source, "t.py", class_at(tree, 2), tree, "def test_b(self):\n    pass\n", NEEDS[:2]
    )
    assert added == []
    with pytest.raises(EditError, match="__future__"):
        plan_insertion(
            source,
            "t.py",
            class_at(tree, 2),
            tree,
            "def test_b(self):\n    pass\n",
            [ImportSpec("__future__", "annotations")],
        )


def test_syntax_errors_and_class_discovery() -> None:
    with pytest.raises(EditError, match=r"t\.py:2: syntax error"):
        parse_file("x = 1\ndef (:\n", "t.py")
    tree = ast.parse(
        "class TestA(TestCase):\n    pass\nclass Helper:\n    pass\nclass Other(common.TestCase):\n    pass\n"
        "instantiate_device_type_tests(TestA, globals())\n"
    )
    assert [c.name for c in find_test_classes(tree)] == ["TestA", "Other"]


def test_lines_end_only_where_python_ends_them() -> None:
    """A form feed, U+2028 or U+0085 is not a line break to ast: line numbers stay in step."""
    source = (
        "import torch\n\x0c\n"
        "class TestA(TestCase):\n"
        "    # see\u2028 below\n"
        "    def test_a(self, device):\n"
        "        s = 'a\x0cb\u2028c\x85d\x1ce'\n"
        "\x0c\n"
        "X = 1\n"
    )
    tree = parse_file(source, "t.py")
    result, _ = plan_insertion(source, "t.py", class_at(tree, 1), tree, METHOD, [])
    inserted = inserted_lines(source, result)
    assert inserted[1] == "    @dtypes(torch.float32)\n"
    cls = ast.parse(result).body[1]
    assert [n.name for n in cls.body] == ["test_a", "test_new"]  # type: ignore[attr-defined]
    assert result.endswith("numel(), 1)\n\x0c\nX = 1\n")
    assert rename("x = 1\x0c; y = x  # x\u2028\nz = x\n", "x", "w") == (
        "w = 1\x0c; y = w  # x\u2028\nz = w\n"
    )


@pytest.mark.parametrize(
    "header",
    ["class TestOne(TestCase): pass", "class TestOne(\n    TestCase,\n):  x = 'é'; y = 2"],
)
def test_a_body_on_the_class_line_is_refused(header: str) -> None:
    """Lines inserted below ``class TestOne(TestCase): pass`` would land outside the class."""
    source = f"import torch\n{header}\n\n\nX = 1\n"
    tree = parse_file(source, "t.py")
    with pytest.raises(
        EditError, match=r"t\.py:\d: the body of TestOne is on its `class` line"
    ) as info:
        plan_insertion(source, "t.py", class_at(tree, 1), tree, METHOD, [])
    assert info.value.hint == "put the body of TestOne on its own indented lines first"
    # A body that starts on a line of its own is fine, whatever follows the colon.
    source = "class TestOne(TestCase):  # one\n    x = 'é'; y = 2\n"
    tree = parse_file(source, "t.py")
    result, _ = plan_insertion(source, "t.py", class_at(tree, 0), tree, METHOD, [])
    assert "\n    def test_new(self, device, dtype):\n" in result


# A file shaped like PyTorch's test/nn/test_dropout.py: a multi-line common_device_type import,
# NNTestCase classes, single quotes.
DROPOUT_FILE = """# Owner(s): ['module: nn']
import random
import unittest

import torch
from torch.testing._internal.common_device_type import (
    expectedFailureXLA,
    instantiate_device_type_tests,
)
from torch.testing._internal.common_nn import NNTestCase
from torch.testing._internal.common_utils import run_tests, TestCase


class TestDropoutNNDeviceType(NNTestCase):
    def test_dropout(self, device):
        x = torch.ones(4, device=device)
        self.assertEqual(torch.nn.Dropout(p=0.0)(x), x, msg='p=0 is the identity')


instantiate_device_type_tests(TestDropoutNNDeviceType, globals())

if __name__ == '__main__':
    run_tests()
"""


def test_imports_join_the_files_own_statements_in_its_order() -> None:
    tree = parse_file(DROPOUT_FILE, "t.py")
    needs = [
        ImportSpec("copy"),
        ImportSpec("torch.testing._internal.common_device_type", "ops"),
        ImportSpec("torch.testing._internal.common_device_type", "dtypes"),
        ImportSpec("torch.testing._internal.common_device_type", "onlyCUDA"),
        ImportSpec("torch.testing._internal.common_modules", "module_db"),
        ImportSpec("torch.testing._internal.common_modules", "modules"),
        ImportSpec("torch.testing._internal.common_utils", "gradcheck"),
    ]
    method = match_quotes(
        'def test_new(self, device):\n    self.assertTrue(True, "ok")\n', DROPOUT_FILE
    )
    result, added = plan_insertion(DROPOUT_FILE, "t.py", class_at(tree, 6), tree, method, needs)
    assert sorted(s.statement() for s in added) == sorted(s.statement() for s in needs)
    removed, inserted = edited_lines(DROPOUT_FILE, result)
    # Only the one-line common_utils import is rewritten; the multi-line one gains lines.
    assert removed == ["from torch.testing._internal.common_utils import run_tests, TestCase\n"]
    assert result.startswith(
        "# Owner(s): ['module: nn']\n"
        "import copy\n"
        "import random\n"
        "import unittest\n"
        "\n"
        "import torch\n"
        "from torch.testing._internal.common_device_type import (\n"
        "    dtypes,\n"
        "    expectedFailureXLA,\n"
        "    instantiate_device_type_tests,\n"
        "    onlyCUDA,\n"
        "    ops,\n"
        ")\n"
        "from torch.testing._internal.common_modules import module_db, modules\n"
        "from torch.testing._internal.common_nn import NNTestCase\n"
        "from torch.testing._internal.common_utils import gradcheck, run_tests, TestCase\n"
        "\n\nclass TestDropoutNNDeviceType(NNTestCase):\n"
    )
    assert "        self.assertTrue(True, 'ok')\n" in inserted  # the file's quotes
    ast.parse(result)


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        # isort's order (CONSTANTS, Classes, functions) is kept ...
        ("from m import CONST, Klass, func\n", "from m import CONST, Klass, Other, func\n"),
        # ... and so is plain code-point order; an unsorted list gets the name at its end.
        ("from m import Klass, func, zeta\n", "from m import Klass, Other, func, zeta\n"),
        ("from m import zeta, Klass\n", "from m import zeta, Klass, Other\n"),
    ],
)
def test_new_names_follow_the_files_order(statement: str, expected: str) -> None:
    source = "import torch\n" + statement + "\n\nclass TestA:\n    x = 1\n"
    tree = parse_file(source, "t.py")
    result, _ = plan_insertion(
        source,
        "t.py",
        class_at(tree, 2),
        tree,
        "def test_b(self):\n    pass\n",
        [ImportSpec("m", "Other")],
    )
    assert result.splitlines(keepends=True)[1] == expected


def test_a_commented_import_is_left_alone_and_a_new_group_gets_its_block() -> None:
    source = "import torch\nfrom m import a  # noqa: F401\n\n\nclass TestA:\n    x = 1\n"
    tree = parse_file(source, "t.py")
    result, _ = plan_insertion(
        source,
        "t.py",
        class_at(tree, 2),
        tree,
        "def test_b(self):\n    pass\n",
        [ImportSpec("m", "b"), ImportSpec("copy")],
    )
    assert result.startswith(
        "import copy\n\nimport torch\nfrom m import a  # noqa: F401\nfrom m import b\n"
    )
    assert inserted_lines(source, result)  # nothing but insertions
