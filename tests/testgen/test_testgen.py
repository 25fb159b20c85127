"""The test scaffold's planning, without torch: repro folders in, test files out."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contribkit.conventions.testfiles import check_test_source
from contribkit.core.errors import BadInput
from contribkit.core.render import one_line, python_literal
from contribkit.issue.model import Signature
from contribkit.run.record import Cell, RunRecord, write_record
from contribkit.testgen.areas import (
    HOME_FILES,
    area_target,
    class_name_for,
    method_name,
    op_area,
    slug,
)
from contribkit.testgen.files import default_target, plan_into, plan_new_file, split_into
from contribkit.testgen.fromrepro import _signature_checks, read_repro, repro_spec
from contribkit.testgen.modulespecs import module_spec
from contribkit.testgen.pyedit import ImportSpec, indent_block
from contribkit.testgen.rewrite import (
    draws_random,
    drop_no_ops,
    hoist_imports,
    take_result,
)
from contribkit.testgen.specs import (
    MethodSpec,
    check_dotted,
    check_expression,
    check_init,
    check_ref,
    file_imports,
    op_spec,
    skeleton_spec,
)
from contribkit.testgen.tidy import (
    as_assertions,
    drop_no_op_expressions,
    drop_output_comments,
    drop_prints,
)
from contribkit.testgen.verdict import ReproVerdict, Verdicts, judge, recorded_verdicts
from tests.largefile import edited_lines, inserted_lines
from tests.reprofixtures import (
    COMPILE_CODE,
    CRASH_CODE,
    CRASH_SIGNATURE,
    CUDA_COMPARE_CODE,
    RANDOM_CRASH_CODE,
    WRONG_CODE,
    make_repro,
)


def new_file(spec: MethodSpec, tmp_path: Path) -> str:
    rel, cls, _ = default_target(spec, None)
    plan = plan_new_file(spec, tmp_path / rel, rel, tmp_path, "test", cls)
    assert check_test_source(plan.after, rel) == []  # the hooks' rules, as the scaffold runs them
    return plan.after


def method_of(text: str, name: str) -> ast.FunctionDef:
    return next(
        n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == name
    )


def test_names_and_places() -> None:
    assert method_name("index add: empty!") == "test_index_add_empty"
    assert method_name("test_x") == "test_x"
    with pytest.raises(BadInput):
        method_name("!!!")
    assert slug("[Inductor] torch.compile gives NaN with bf16 matmul on H100 GPUs") == (
        "inductor_torch_compile_gives_nan_with"
    )
    assert class_name_for(Path("test/nn/test_conv_transpose2d.py")) == "TestConvTranspose2d"
    assert area_target("inductor", "issue_7") == ("test/inductor/test_issue_7.py", None)
    assert area_target("linalg", "svd") == ("test/test_linalg.py", "TestLinalg")
    assert area_target("indexing", "x") == ("test/test_indexing.py", "TestIndexing")
    assert area_target("special", "x") == ("test/test_special.py", None)
    assert check_init("3, kernel_size=(2, 2)") == "3, kernel_size=(2, 2)"
    with pytest.raises(BadInput, match="call arguments"):
        check_init("2); import os; (")
    with pytest.raises(BadInput, match="dotted"):
        check_dotted("index_add; rm", "--op")
    assert split_into("test/test_x.py::TestX") == ("test/test_x.py", "TestX")
    assert split_into("test/test_x.py") == ("test/test_x.py", None)


def test_skeleton_is_well_formed_and_asserts(tmp_path: Path) -> None:
    text = new_file(skeleton_spec("test_empty_index", "indexing"), tmp_path)
    assert text.startswith('# Owner(s): ["module: tests"]\n')
    method = method_of(text, "test_empty_index")
    assert [ast.unparse(d) for d in method.decorator_list] == [
        "dtypes(torch.float32, torch.float64)"
    ]
    assert "make_tensor((2, 3), device=device, dtype=dtype)" in text
    assert "self.assertEqual(x.dtype, dtype)" in text
    assert "instantiate_device_type_tests(TestIndexing, globals())" in text
    assert text.endswith('if __name__ == "__main__":\n    run_tests()\n')


def test_crash_repro_becomes_a_device_generic_regression_test(tmp_path: Path) -> None:
    folder = make_repro(tmp_path / "repros", 101, CRASH_CODE, CRASH_SIGNATURE)
    spec = repro_spec(read_repro(folder))
    assert spec.name == "test_issue_101_pick_rows_rejects_rows_in_range"
    assert (spec.generic, spec.only, spec.area, spec.thing) == (True, None, "torch", "issue_101")
    text = new_file(spec, tmp_path)
    method = method_of(text, spec.name)
    assert [a.arg for a in method.args.args] == ["self", "device"]
    assert ast.get_docstring(method).startswith(  # type: ignore[union-attr]
        "Regression test for pytorch/pytorch#101: pick_rows rejects rows in range\n\n"
        "https://github.com/pytorch/pytorch/issues/101"
    )
    body = ast.unparse(method)
    assert (
        "DEVICE" not in body and "'cuda'" not in body and "torch.arange(6.0, device=device)" in body
    )
    assert "except RuntimeError as e:" in body
    assert (
        "'pick_rows(): index [2, 0] is out of bounds for the tensor at' in ' '.join(str(e).split())"
        in body
    )
    # imports hoisted to the file's block, once each
    assert text.count("import torch\n") == 1 and "\nimport buggy_ops\n" in text
    assert "import buggy_ops" not in body
    # The result is checked against the same code on CPU; the issue's print(rows) is gone.
    run = next(n for n in method.body if isinstance(n, ast.FunctionDef))
    assert (run.name, ast.unparse(run.body[-1])) == ("run", "return rows")
    assert "actual = run(device)\n        expected = run('cpu')" in body
    assert body.endswith("self.assertEqual(actual, expected, exact_device=False)")
    assert "print(" not in body and "manual_seed" not in body


def test_crash_tests_check_the_result_without_no_op_lines(tmp_path: Path) -> None:
    device_var = CRASH_CODE.replace("import buggy_ops\n", 'import buggy_ops\ndevice = "cuda"\n')
    folder = make_repro(tmp_path / "repros", 110, device_var, CRASH_SIGNATURE)
    source = read_repro(folder)
    plain = repro_spec(source, None, False)
    body = ast.unparse(method_of(new_file(plain, tmp_path), plain.name))
    assert "device = device" not in body and "print(" not in body
    assert "for value in tree_leaves(rows):" in body  # no CPU to compare with: no inf or nan
    assert "self.assertTrue(value.isfinite().all(), 'rows holds inf or nan')" in body
    assert ImportSpec("torch.utils._pytree", "tree_leaves") in plain.imports
    seeded = repro_spec(
        read_repro(make_repro(tmp_path / "repros", 111, RANDOM_CRASH_CODE, CRASH_SIGNATURE))
    )
    body = ast.unparse(method_of(new_file(seeded, tmp_path), seeded.name))
    assert "def run(device):\n        torch.manual_seed(0)" in body
    assert "result = buggy_ops.pick_rows(layer(x), torch.tensor([2, 0], device=device))" in body
    on_device = repro_spec(
        read_repro(
            make_repro(
                tmp_path / "repros",
                112,
                CRASH_CODE.replace("torch.arange(6.0, ", "torch.randn(6, "),
                CRASH_SIGNATURE,
            )
        )
    )
    body = ast.unparse(method_of(new_file(on_device, tmp_path), on_device.name))
    assert (
        "self.assertEqual(tree_map(shape_and_dtype, actual), tree_map(shape_and_dtype, expected))"
        in body
    )


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("x = f()\n", ("x = f()\n", "x")),
        ("x: T = f()\n", ("x: T = f()\n", "x")),
        ("x = f()\nx\n", ("x = f()\n", "x")),
        ("y = g()\nprint(f(y))\n", ("y = g()\nresult = f(y)\n", "result")),
        ("y = g()\nprint(y)\n", ("y = g()\n", "y")),
        ("result = 1\nf(result)\n", ("result = 1\nresult2 = f(result)\n", "result2")),
        (
            "print(f(\n    1,\n))  # done\n",
            ("result = f(\n    1,\n)  # done\n", "result"),
        ),
        ("loss.backward()\n", ("loss.backward()\n", None)),
        ("print(x, y)\n", ("print(x, y)\n", None)),
        ("a, b = f()\n", ("a, b = f()\n", None)),
        ("for i in range(2):\n    x = i\n", ("for i in range(2):\n    x = i\n", None)),
        ("x = 1; f(x)\n", ("x = 1; f(x)\n", None)),
        ("", ("", None)),
    ],
)
def test_the_result_of_the_code(code: str, expected: tuple[str, str | None]) -> None:
    assert take_result(code) == expected


def test_crash_code_drops_prints_but_keeps_calls_of_consequence() -> None:
    """No print is left in a test; an argument that calls something that may raise stays."""
    code = (
        "x = torch.ones(2).to_sparse()\nprint(x)\nprint(x, x.sum(), sep='|')\nprint('done')\n"
        "print(f(x))\nfor i in range(2):\n    print(i)\nx.shape\nx[3]\n"
    )
    assert drop_no_op_expressions(drop_prints(code)) == (
        "x = torch.ones(2).to_sparse()\nf(x)\nfor i in range(2):\n    pass\nx[3]\n"
    )


def test_commented_out_output_goes_and_explanations_stay() -> None:
    code = (
        "# make the input\n"
        "x = torch.ones(2)\n"
        "print(x.sum())\n"
        "# tensor([[0.1, 0.2],\n"
        "#         [0.3, 0.4]])\n"
        "# Output:\n"
        "#   2.0\n"
        "y = x  # tensor(2.)\n"
        "z = y  # the same storage\n"
        's = """\n# tensor(1.)\n"""\n'
        "# RuntimeError: boom\n"
    )
    assert drop_output_comments(code) == (
        "# make the input\nx = torch.ones(2)\nprint(x.sum())\ny = x\nz = y  # the same storage\n"
        's = """\n# tensor(1.)\n"""\n'
    )


def test_the_repros_check_becomes_testcase_assertions() -> None:
    check = (
        "torch.testing.assert_close(a, b, atol=1e-08, rtol=1e-05, check_device=False)\n"
        "torch.testing.assert_close(a, b, atol=1e-08)\n"
        "assert a.shape == (2,), 'shape'\n"
        "assert ok\n"
        "if a.numel():\n    assert a is b\n"
    )
    assert as_assertions(check) == (
        "self.assertEqual(a, b, atol=1e-08, rtol=1e-05)\n"
        "torch.testing.assert_close(a, b, atol=1e-08)\n"  # assertEqual needs both tolerances
        "self.assertEqual(a.shape, (2,), 'shape')\n"
        "self.assertTrue(ok)\n"
        "if a.numel():\n    self.assertIs(a, b)\n"
    )


def test_an_equality_is_exact_unless_both_sides_are_plainly_not_floats() -> None:
    # assertEqual compares a tensor with 0 within a tolerance: one int side is not enough.
    check = (
        "assert (a - b).abs().max() == 0\n"
        "assert 0.0 == y.sum().item()\n"
        "assert out == ref\n"
        "assert len(xs) == 3\n"
        "assert x.dtype == torch.float32\n"
        "assert x.shape[0] == n.size(0)\n"
        "assert str(x.device) == 'cpu'\n"
        "assert x.is_contiguous() == True\n"
    )
    assert as_assertions(check) == (
        "self.assertEqual((a - b).abs().max(), 0, atol=0, rtol=0)\n"
        "self.assertEqual(0.0, y.sum().item(), atol=0, rtol=0)\n"
        "self.assertEqual(out, ref, atol=0, rtol=0)\n"
        "self.assertEqual(len(xs), 3)\n"
        "self.assertEqual(x.dtype, torch.float32)\n"
        "self.assertEqual(x.shape[0], n.size(0))\n"
        "self.assertEqual(str(x.device), 'cpu')\n"
        "self.assertEqual(x.is_contiguous(), True, atol=0, rtol=0)\n"
    )


def test_no_ops_and_random_numbers() -> None:
    assert drop_no_ops("device = device\nx = 1\ny = y; z = 2\n") == "x = 1\ny = y; z = 2\n"
    draws = {
        "x = torch.ones(2, device=device)": "",
        "x = torch.randn(2).to(device)": "cpu",
        "m = nn.Linear(2, 3)": "cpu",
        "x = torch.randn(2, device=device)": "device",
        "m = torch.nn.Linear(2, 3, device=device)": "device",
        "x.normal_()": "device",
        "from torch.nn import Linear\nm = Linear(3, 4).to(device)": "cpu",
        "import torch.nn as tnn\ntnn.init.normal_(w)": "device",
        "y = torch.nn.functional.dropout(x)": "device",
        "torch.nn.init.kaiming_uniform_(w)": "device",
    }
    assert {code: draws_random(code) for code in draws} == draws
    # imports already taken out of the code for the file's import block
    assert draws_random("m = Linear(3, 4)", {"Linear": "torch.nn.Linear"}) == "cpu"


def test_wrong_result_repro_uses_the_repros_check(tmp_path: Path) -> None:
    folder = make_repro(tmp_path / "repros", 102, WRONG_CODE, title="row_means is wrong")
    spec = repro_spec(read_repro(folder))
    text = new_file(spec, tmp_path)
    body = ast.unparse(method_of(text, spec.name))
    # The repro's check, as the TestCase assertion a reviewer expects:
    assert "self.assertEqual(actual, expected, atol=1e-08, rtol=1e-05)" in body
    assert "print(" not in body  # the printed comparison is now an assertion
    assert spec.only == "cpu" and "@onlyCPU" in text  # the code uses no device


def test_cuda_only_repro_is_only_cuda_without_hard_coded_cuda(tmp_path: Path) -> None:
    folder = make_repro(tmp_path / "repros", 104, CUDA_COMPARE_CODE, labels=["module: cuda"])
    spec = repro_spec(read_repro(folder))
    text = new_file(spec, tmp_path)
    assert spec.only == "cuda" and "    @onlyCUDA\n" in text
    assert "x.to(device)" in text and ".cuda()" not in text


def test_compile_repro_uses_dynamo_test_case_and_compares_eager(tmp_path: Path) -> None:
    sig = Signature("RuntimeError", "pick_rows(): index [0, 1] is out of bounds", "traceback")
    folder = make_repro(tmp_path / "repros", 103, COMPILE_CODE, sig, labels=["oncall: pt2"])
    spec = repro_spec(read_repro(folder))
    assert spec.dynamo and spec.area == "dynamo"  # backend="eager", no inductor label
    rel, cls, why = default_target(spec, None)
    assert (rel, cls) == ("test/dynamo/test_repros.py", "ReproTests") and "eager" in why
    text = new_file(spec, tmp_path)
    assert "from torch._dynamo.test_case import run_tests, TestCase" in text
    assert '# Owner(s): ["module: dynamo"]' in text
    body = ast.unparse(method_of(text, spec.name))
    assert "__name__" not in body  # the main block was unwrapped
    assert "self.assertEqual(out, pick_first_two(x))" in body


def test_labels_place_the_test(tmp_path: Path) -> None:
    folder = make_repro(
        tmp_path / "repros",
        105,
        CRASH_CODE,
        CRASH_SIGNATURE,
        labels=["triaged", "module: inductor"],
    )
    spec = repro_spec(read_repro(folder))
    assert default_target(spec, None) == (
        "test/inductor/test_issue_105.py",
        None,
        "the issue's label 'module: inductor'",
    )
    assert default_target(spec, "nn")[:2] == ("test/test_nn.py", "TestNNDeviceType")
    labels = {
        ("module: nn", "module: scatter & gather ops"): "test/test_scatter_gather.py",
        ("module: nn", "module: pooling"): "test/nn/test_pooling.py",
        ("module: linear algebra",): "test/test_linalg.py",
        ("module: sparse",): "test/test_sparse.py",
        ("triaged",): "test/test_torch.py",  # no area label: the general tensor tests
    }
    for number, (issue_labels, expected) in enumerate(labels.items(), 120):
        folder = make_repro(
            tmp_path / "repros", number, CRASH_CODE, CRASH_SIGNATURE, labels=list(issue_labels)
        )
        spec = repro_spec(read_repro(folder))
        assert default_target(spec, None)[0] == expected, issue_labels


def test_operators_go_where_pytorch_keeps_their_tests() -> None:
    areas = {
        ("linalg.svd", "OpInfo"): "linalg",
        ("nn.functional.relu", "UnaryUfuncInfo"): "nn",  # the namespace first
        ("scatter_add", "OpInfo"): "scatter_gather",
        ("sort", "OpInfo"): "sort_and_select",
        ("abs", "UnaryUfuncInfo"): "unary_ufuncs",
        ("sum", "ReductionOpInfo"): "reductions",
        ("index_add", "OpInfo"): "torch",
        ("index_add_", None): "torch",
        ("mm", None): "linalg",
    }
    assert {key: op_area(*key)[0] for key in areas} == areas
    assert all(area in HOME_FILES for area in areas.values())


def test_bad_repro_folders(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="is not a repro folder"):
        read_repro(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput, match=r"has no meta\.json"):
        read_repro(tmp_path / "empty")
    folder = make_repro(tmp_path / "repros", 106, CRASH_CODE, CRASH_SIGNATURE)
    script = (folder / "repro.py").read_text()
    (folder / "repro.py").write_text(script.replace("# ---- end of the issue's code ----\n", ""))
    with pytest.raises(BadInput, match="lost the markers"):
        read_repro(folder)
    (folder / "meta.json").write_text("{not json")
    with pytest.raises(BadInput, match="not valid JSON"):
        read_repro(folder)


def test_incomplete_repros_must_be_completed_first(tmp_path: Path) -> None:
    unknown = make_repro(tmp_path / "repros", 107, "import torch\nprint(torch.ones(2))\n")
    with pytest.raises(
        BadInput, match=r"INCOMPLETE: check\(\) in repro.py is not filled in yet"
    ) as info:
        read_repro(unknown)
    assert "complete the repro first" in (info.value.hint or "")
    broken = make_repro(
        tmp_path / "repros", 108, "import torch\nx = torch.ones(2\n", CRASH_SIGNATURE
    )
    with pytest.raises(BadInput, match="INCOMPLETE: the issue's code does not parse"):
        read_repro(broken)
    # Filled in by hand: the check is used even though meta.json still says incomplete.
    script = (
        (unknown / "repro.py")
        .read_text()
        .replace(
            '    raise NotImplementedError("fill in check()")',
            "    assert torch.ones(2).sum() == 2",
        )
    )
    (unknown / "repro.py").write_text(script)
    source = read_repro(unknown)
    assert json.loads((unknown / "meta.json").read_text())["incomplete"] is True
    assert source.check == "assert torch.ones(2).sum() == 2\n" and source.notes


def test_a_file_breaking_the_conventions_is_refused(tmp_path: Path) -> None:
    """The scaffold runs the hooks' rules on what it generates: a hard-coded CUDA device in a
    device-generic test would be our bug, so it is never written."""
    spec = skeleton_spec("test_x", "indexing")
    spec.method = spec.method.replace("device=device, dtype=dtype)", 'device="cuda", dtype=dtype)')
    with pytest.raises(AssertionError, match="CK505"):
        plan_new_file(spec, tmp_path / "test/test_x.py", "test/test_x.py", tmp_path, "test")


def test_hoisting_keeps_conflicting_and_shared_line_imports_local() -> None:
    harness = {spec.bound: spec for spec in file_imports(False)}
    code = "import torch\nfrom unittest import TestCase\nimport os; import sys\nimport numpy as np\nx = np.ones(2)\n"
    rest, hoisted, _ = hoist_imports(code, harness)
    assert hoisted == [ImportSpec("torch"), ImportSpec("numpy", None, "np")]
    assert rest == "from unittest import TestCase\nimport os; import sys\nx = np.ones(2)\n"


@settings(max_examples=40, deadline=None)
@given(title=st.text(min_size=1, max_size=60))
def test_issue_titles_stay_data(tmp_path_factory: pytest.TempPathFactory, title: str) -> None:
    folder = make_repro(tmp_path_factory.mktemp("r"), 109, CRASH_CODE, CRASH_SIGNATURE, title=title)
    spec = repro_spec(read_repro(folder))
    tree = ast.parse("class T:\n" + indent_block(spec.method, "    "))
    cls = tree.body[0]
    assert isinstance(cls, ast.ClassDef) and isinstance(cls.body[0], ast.FunctionDef)
    doc = ast.get_docstring(cls.body[0]) or ""
    assert one_line(title) in doc


DYNAMO_FILE = """# Owner(s): ["module: dynamo"]
import torch
import torch._dynamo.test_case
from torch.testing._internal.common_utils import TestCase


class ReproTests(torch._dynamo.test_case.TestCase):
    def test_old(self):
        self.assertTrue(True)


class PlainTests(TestCase):
    def test_old(self):
        self.assertTrue(True)


if __name__ == "__main__":
    from torch._dynamo.test_case import run_tests

    run_tests()
"""


def test_into_a_plain_class_sets_the_device_itself(tmp_path: Path) -> None:
    target = tmp_path / "test_repros.py"
    target.write_text(DYNAMO_FILE)
    sig = Signature("RuntimeError", "pick_rows(): index [0, 1] is out of bounds", "traceback")
    compiled = read_repro(make_repro(tmp_path / "repros", 103, COMPILE_CODE, sig))
    cuda_only = read_repro(make_repro(tmp_path / "repros", 104, CUDA_COMPARE_CODE))

    plan = plan_into(lambda g: repro_spec(compiled, None, g), target, "t.py", "ReproTests", None)
    assert plan.summary["device_generic"] is False
    assert not any("reset dynamo" in note for note in plan.summary["notes"])
    assert "    def test_issue_103_pick_rows_rejects_rows_in_range(self):\n" in plan.after
    assert inserted_lines(DYNAMO_FILE, plan.after)[0] == "import buggy_ops\n"

    plain = plan_into(lambda g: repro_spec(cuda_only, None, g), target, "t.py", "PlainTests", None)
    method = method_of(plain.after, "test_issue_104_pick_rows_rejects_rows_in_range")
    assert [ast.unparse(d) for d in method.decorator_list] == [
        "unittest.skipIf(not TEST_CUDA, 'requires CUDA')"
    ]
    assert ast.unparse(method.body[1]) == "device = 'cuda'"
    assert plain.summary["imports_added"] == [
        "import unittest",
        "from torch.testing._internal.common_cuda import TEST_CUDA",
    ]
    # A compile test in a class that does not reset dynamo gets a note.
    noted = plan_into(
        lambda g: repro_spec(compiled, "test_again", g), target, "t.py", "PlainTests", None
    )
    assert "does not reset dynamo" in noted.summary["notes"][-1]
    with pytest.raises(BadInput, match="PlainTests already has test_old"):
        plan_into(
            lambda g: repro_spec(compiled, "test_old", g),
            target,
            "t.py",
            "PlainTests",
            None,
        )
    assert target.read_text() == DYNAMO_FILE  # planning writes nothing


def test_signature_matching_code() -> None:
    builtin = _signature_checks(
        {
            "exc_type": "RuntimeError",
            "message": "shape <n> at <addr> is invalid for input of size 4",
        }
    )
    assert builtin == {
        "catch": "RuntimeError",
        "exc_name": "",
        "fragment": "is invalid for input of size 4",
        "matches": ["same_message"],
    }
    dotted = _signature_checks(
        {"exc_type": "torch._dynamo.exc.BackendCompilerFailed", "message": "oops"}
    )
    assert dotted == {
        "catch": "Exception",
        "exc_name": "BackendCompilerFailed",
        "fragment": "",  # too short to tell errors apart
        "matches": ["same_type"],
    }


GENERIC_FILE = """# Owner(s): ["module: tests"]
import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_utils import run_tests, TestCase


class TestOld(TestCase):
    def test_old(self, device):
        self.assertTrue(torch.ones(1, device=device).bool().all())


instantiate_device_type_tests(TestOld, globals())

if __name__ == "__main__":
    run_tests()
"""


def test_into_a_file_with_a_byte_order_mark_keeps_it(tmp_path: Path) -> None:
    target = tmp_path / "test_old.py"
    original = "\ufeff" + GENERIC_FILE
    target.write_bytes(original.encode("utf-8"))
    plan = plan_into(lambda g: skeleton_spec("test_new", "tests", g), target, "t.py", None, None)
    assert plan.summary["class"] == "TestOld" and plan.summary["device_generic"]
    assert plan.after.startswith("\ufeff# Owner(s):")
    removed, added = edited_lines(original, plan.after)
    assert "    def test_new(self, device, dtype):\n" in added
    # The one line changed is the import that gains `dtypes`, in the order the file keeps; the
    # first line, BOM included, is unchanged.
    assert removed == [
        "from torch.testing._internal.common_device_type import instantiate_device_type_tests\n"
    ]
    assert (
        "from torch.testing._internal.common_device_type import dtypes, "
        "instantiate_device_type_tests\n"
    ) in added


def test_string_literals_are_quoted_as_ruff_format_quotes_them() -> None:
    """PyTorch formats with ruff (black style): double quotes unless they need more escapes."""
    texts = ["index_add", "it's", 'say "hi"', 'a\'b"c"', "a'b'c\"", "t\tb\\ \x0c é \u2028 \x00", ""]
    source = "".join(f"x = {python_literal(t)}\n" for t in texts)
    assert source.startswith('x = "index_add"\nx = "it\'s"\nx = \'say "hi"\'\n')
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--isolated", "-"],
        input=source,
        capture_output=True,
        text=True,
        check=True,
    )
    assert formatted.stdout == source


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), st.lists, max_leaves=8))
def test_python_literals_read_back(value: object) -> None:
    assert ast.literal_eval(python_literal(value)) == value


def _record(root: Path, stamp: str, cells: list[Cell]) -> None:
    write_record(
        root,
        RunRecord(
            id=f"2026010{stamp}T000000.000000Z-abc1234",
            created="2026-01-01T00:00:00+00:00",
            head="abc1234" * 5,
            branch="fix",
            dirty=False,
            diff_hash="",
            expect="not-reproduced",
            devices=["cpu", "cuda"],
            require=[],
            interpreters=[],
            cells=cells,
            files={},
            ok=False,
            reason="",
        ),
    )


def _cell(status: str, verdict: str | None, detail: str, device: str = "cpu") -> Cell:
    return Cell("repros/issue-7/repro.py", "repro", device, 1, status, detail, verdict=verdict)


def test_the_repros_latest_verdict_decides_whether_a_test_is_written(tmp_path: Path) -> None:
    script = tmp_path / "repros" / "issue-7" / "repro.py"
    assert recorded_verdicts(tmp_path, script) is None  # no record: the repro is run instead
    _record(tmp_path, "1", [_cell("REPRODUCED", "REPRODUCED", "RuntimeError: boom")])
    _record(tmp_path, "2", [_cell("NOT_REPRODUCED", "NOT_REPRODUCED", "completed on cpu")])
    fixed = recorded_verdicts(tmp_path, script)
    assert fixed is not None and fixed.reproduced_before == "20260101T000000.000000Z-abc1234"
    assert "REPRODUCED in run record 20260101T" in judge(fixed, force=False).notes[0]
    no_cuda = Verdicts(
        [
            ReproVerdict(
                "CANNOT_RUN", "CUDA is not available here, and the issue's code needs it", "cpu"
            ),
            ReproVerdict("NOT_AVAILABLE", "no CUDA device", "cuda"),
        ],
        "repro.py, run just now",
    )
    assert judge(no_cuda, force=False).device == "cuda"
    refused = {
        "INCOMPLETE: fill in check()",
        "different error: got ValueError: x; the issue reports RuntimeError: boom",
        "error, and the issue gives no signature to compare: ValueError: x",
    }
    for detail in refused:
        verdicts = Verdicts([ReproVerdict("CANNOT_RUN", detail, "cpu")], "run record R")
        with pytest.raises(BadInput, match="did not reproduce the issue") as caught:
            judge(verdicts, force=False)
        assert "--force" in (caught.value.hint or "")
        assert "written with --force" in judge(verdicts, force=True).notes[0]


def test_a_repro_that_cannot_run_without_cuda_gives_an_only_cuda_test(tmp_path: Path) -> None:
    folder = make_repro(tmp_path / "repros", 104, CUDA_COMPARE_CODE.replace(".cuda()", ""))
    gate = judge(
        Verdicts([ReproVerdict("NOT_AVAILABLE", "no CUDA device", "cuda")], "run record R"),
        force=False,
    )
    spec = repro_spec(read_repro(folder), gate=gate)
    assert spec.only == "cuda" and "@onlyCUDA" in spec.method
    assert "lack of cuda" in spec.notes[0]
    # The verdict line as repro.py prints it now: the deciding oracle first, in brackets.
    tagged = ReproVerdict("CANNOT_RUN", "[device] device cuda is not available here", "default")
    assert judge(Verdicts([tagged], "repro.py, run just now"), force=False).device == "cuda"


def _probed_op(**checks: bool) -> dict[str, Any]:
    return {
        "query": "exp",
        "op": {
            "name": "exp",
            "variant": "",
            "variants": [""],
            "alias": None,
            "info_class": "UnaryUfuncInfo",
            "supported": {"cpu": ["float32", "float64"], "cuda": ["float32", "float64"]},
            "chosen": {"cpu": ["float32", "float64"], "cuda": ["float32", "float64"]},
            "cpu_failures": {},
            "checks": {"check": False, "ref": False, "grad": False, **checks},
            "checks_left_out": {},
            "formatted_name": "exp",
        },
    }


def test_an_op_with_an_opinfo_gets_an_ops_test_that_checks_what_test_ops_does_not() -> None:
    spec = op_spec(_probed_op(check=True, ref=True), check="result.isfinite().all()")
    assert spec.method.startswith(
        '@ops(\n    [op for op in op_db if op.name == "exp" and op.variant_test_name == ""],\n'
        "    allowed_dtypes=(torch.float32, torch.float64),\n)\n"
        "def test_exp_property_reference(self, device, dtype, op):\n"
    )
    assert "self.assertTrue(result.isfinite().all()," in spec.method
    assert "self.compare_with_reference(op, op.ref, sample)" in spec.method
    assert "cpu" not in spec.method.split('"""')[-1]  # no comparison with CPU in the test
    assert spec.variants()["cpu"] == [
        "test_exp_property_reference_exp_cpu_float32",
        "test_exp_property_reference_exp_cpu_float64",
    ]
    assert any("TestCommon.test_compare_cpu already compares exp" in n for n in spec.notes)
    grads = op_spec(_probed_op(grad=True))
    assert "gradcheck(lambda x, s=sample:" in grads.method and grads.name == "test_exp_gradients"
    with pytest.raises(BadInput, match="no reference and no gradients") as caught:
        op_spec(_probed_op())
    assert "--check EXPR" in (caught.value.hint or "")
    with pytest.raises(BadInput, match="not a Python expression"):
        check_expression("result ==")


def _probed_module(module_info: bool = True, **info: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "name": "torch.nn.BatchNorm2d",
        "train_dependent": True,
        "chosen": ["float32", "float64"],
        "failures": {},
        "checks": {"check": False, "doc": True, "grad": True},
        "checks_left_out": {},
    }
    if module_info:
        found.update(
            module_info="nn.BatchNorm2d",
            formatted_name="nn_BatchNorm2d",
            inputs_func="module_inputs_torch_nn_BatchNorm2d",
            parity_skipped=False,
        )
    else:
        found.update(name="torch.nn.Dropout", required=[], init="", shape=[2, 3])
    found.update(info)
    return {"query": found["name"], "devices": ["cpu"], "module": found}


def test_a_module_with_a_moduleinfo_gets_a_modules_test_in_train_mode(tmp_path: Path) -> None:
    spec = module_spec(_probed_module(), None)
    assert spec.method.startswith(
        "@modules(\n"
        "    [info for info in module_db if info.module_cls is torch.nn.BatchNorm2d],\n"
        "    allowed_dtypes=(torch.float32, torch.float64),\n"
        "    train_eval_mode=TrainEvalMode.train_only,\n)\n"
        "def test_batchnorm2d_channel_mean_zero_gradients(self, device, dtype, module_info, "
        "training):\n"
    )
    assert "module_info.module_inputs_func(\n" in spec.method
    assert "requires_grad=True, training=training" in spec.method
    assert ".train(training)" in spec.method and ".eval()" not in spec.method
    assert "cpu" not in spec.method.split('"""')[-1]  # no comparison with CPU in the test
    assert spec.variants()["cpu"] == [
        "test_batchnorm2d_channel_mean_zero_gradients_nn_BatchNorm2d_cpu_float32",
        "test_batchnorm2d_channel_mean_zero_gradients_nn_BatchNorm2d_cpu_float64",
    ]
    assert any("test_cpu_gpu_parity already compares" in n for n in spec.notes)
    assert any("module_inputs_torch_nn_BatchNorm2d" in n for n in spec.notes)
    assert any("train_and_eval_differ" in n for n in spec.notes)
    text = new_file(spec, tmp_path)
    assert (
        "from torch.testing._internal.common_modules import module_db, modules, TrainEvalMode\n"
        in (text)
    )
    # Train and eval the same: @modules' one flag, no train_eval_mode; --check is asserted.
    plain = module_spec(
        _probed_module(
            name="torch.nn.Linear",
            train_dependent=False,
            checks={"check": True, "doc": False, "grad": False},
        ),
        None,
        check="result.shape[-1] == module.out_features",
    )
    assert "train_eval_mode" not in plain.method and plain.name == "test_linear_property"
    assert "result.shape[-1] == module.out_features,\n" in plain.method
    assert "tree_leaves" not in plain.method and "requires_grad=False" in plain.method
    assert text.count("class ") == 1
    with pytest.raises(BadInput, match="has no property to test") as caught:
        module_spec(
            _probed_module(
                checks={"check": False, "doc": False, "grad": False},
                checks_left_out={"grad": "no output or input requires grad"},
            ),
            None,
        )
    assert "--check EXPR" in (caught.value.hint or "")


def test_a_module_without_a_moduleinfo_runs_in_train_mode_and_compares_only_on_two_devices(
    tmp_path: Path,
) -> None:
    spec = module_spec(_probed_module(module_info=False), None)
    assert spec.name == "test_dropout_zeroed_or_scaled_gradients"
    assert "module = torch.nn.Dropout().to(device=device, dtype=dtype)\nmodule.train()" in (
        spec.method.replace("    ", "")
    )
    assert "torch.isclose(result, inputs[0] / (1 - module.p))" in spec.method
    assert ".eval()" not in spec.method and "copy.deepcopy" not in spec.method
    assert "@dtypes(torch.float32, torch.float64)" in spec.method
    new_file(spec, tmp_path)
    nothing = {"check": False, "doc": False, "grad": False}
    with pytest.raises(BadInput, match="has no property to test"):
        module_spec(_probed_module(module_info=False, checks=nothing), None)
    two = _probed_module(module_info=False, checks=nothing, compare_failures={})
    two["devices"] = ["cpu", "cuda"]
    compared = module_spec(two, None)
    assert compared.only == "cuda" and "@onlyCUDA" in compared.method
    assert 'copy.deepcopy(module).to("cpu")' in compared.method


def _probed_function(**fn: Any) -> dict[str, Any]:
    found = {"name": "relu", "chosen": ["float32", "float64"], "failures": {}, "compare": "values"}
    return {"query": "relu", "devices": ["cpu"], "function": {**found, **fn}}


def test_a_function_without_an_opinfo_gets_a_property_or_reference_test(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="would compare CPU with CPU") as caught:
        op_spec(_probed_function())
    assert "--check EXPR" in (caught.value.hint or "") and "--ref" in (caught.value.hint or "")
    spec = op_spec(_probed_function(), check="(result >= 0).all()")
    assert spec.name == "test_relu_property" and spec.only is None
    assert "self.assertTrue((result >= 0).all()," in spec.method
    assert "x.cpu()" not in spec.method
    ref = op_spec(_probed_function(), ref="numpy.fmax")
    assert "expected = torch.from_numpy(np.asarray(np.fmax(x.cpu().numpy())))" in ref.method
    assert ImportSpec("numpy", asname="np") in ref.imports
    assert "import numpy as np\n" in new_file(ref, tmp_path)
    assert check_ref("np.sinc") == "numpy.sinc"
    with pytest.raises(BadInput, match="not a numpy function"):
        check_ref("scipy.special.erf")
    two = _probed_function()
    two["devices"] = ["cpu", "cuda"]
    compared = op_spec(two)
    assert compared.only == "cuda" and "expected = torch.relu(x.cpu())" in compared.method


def test_a_new_file_reuses_the_base_class_of_its_siblings(tmp_path: Path) -> None:
    from tests.testgen.test_pyedit import DROPOUT_FILE

    folder = tmp_path / "test" / "nn"
    folder.mkdir(parents=True)
    (folder / "test_dropout.py").write_text(DROPOUT_FILE)
    (folder / "test_broken.py").write_text("class TestA(:\n")  # unreadable siblings are skipped
    spec = skeleton_spec("test_fold_empty", "nn")
    plan = plan_new_file(spec, folder / "test_fold.py", "test/nn/test_fold.py", tmp_path, "--path")
    assert "\nclass TestFold(NNTestCase):\n" in plan.after
    assert "from torch.testing._internal.common_nn import NNTestCase\n" in plan.after
    assert "TestCase\n" not in plan.after.replace("NNTestCase\n", "")  # no unused TestCase import
    assert any("based on NNTestCase" in n for n in plan.summary["notes"])
    assert check_test_source(plan.after, "test/nn/test_fold.py") == []
    # Siblings based on TestCase itself, or none: TestCase.
    (folder / "test_dropout.py").write_text(DROPOUT_FILE.replace("(NNTestCase)", "(TestCase)"))
    plain = plan_new_file(
        skeleton_spec("test_fold_empty", "nn"), folder / "test_fold.py", "f", tmp_path, "--path"
    )
    assert "\nclass TestFold(TestCase):\n" in plain.after
