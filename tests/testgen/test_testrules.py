"""contribkit.conventions.testfiles: PyTorch's test-file conventions as pure functions (shared with the scaffold)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from contribkit.conventions.testfiles import (
    check_owner_header,
    check_test_source,
    device_generic_classes,
    instantiated_classes,
    label_is_well_formed,
)

SOURCES = Path(__file__).parent.parent / "fixtures" / "sources"


def ids(text: str) -> list[str]:
    return [v.rule.id for v in check_test_source(text, "test/test_x.py")]


@pytest.mark.slow
def test_the_good_fixture_passes_and_really_runs_with_torch(tmp_path: Path) -> None:
    """What the rules accept is a real PyTorch test file: it runs under CPU torch."""
    source = (SOURCES / "device_tests_good.py").read_text()
    assert check_test_source(source) == []
    script = tmp_path / "test_relu.py"
    script.write_text(source)
    proc = subprocess.run(
        [sys.executable, str(script), "-v"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "test_negative_zero_cpu_float32" in proc.stderr and "OK" in proc.stderr


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ('# Owner(s): ["module: nn"]', []),
        ('# Owner(s): ["module: nn", "oncall: distributed"]', []),
        ('# Owner(s): ["high priority"]', []),
        ('# Owner(s): ["nn"]', ["CK502"]),
        ('# Owner(s): ["module:"]', ["CK502"]),
        ("# Owner(s): ['module: nn']", ["CK502"]),
        ("# Owner(s): []", ["CK502"]),
        ("# Owner(s): module: nn", ["CK502"]),
        ("# Owners: module nn", ["CK501"]),
    ],
)
def test_owner_header(header: str, expected: list[str]) -> None:
    assert [v.rule.id for v in check_owner_header(header + "\nimport torch\n")] == expected


def test_label_forms() -> None:
    assert label_is_well_formed("module: inductor")
    assert not label_is_well_formed("module:inductor")


MAIN_OK = '# Owner(s): ["module: nn"]\n'


@pytest.mark.parametrize(
    ("tail", "expected"),
    [
        ('if __name__ == "__main__":\n    run_tests()\n', []),
        ('if "__main__" == __name__:\n    common_utils.run_tests()\n', []),
        (
            'if __name__ == "__main__":\n    raise RuntimeError("not meant to be run directly")\n',
            [],
        ),
        ('if __name__ == "__main__":\n    unittest.main()\n', ["CK503"]),
        ("run_tests()\n", ["CK503"]),
        ("", ["CK503"]),
    ],
)
def test_main_block(tail: str, expected: list[str]) -> None:
    assert ids(MAIN_OK + tail) == expected


DEVICE_CLASS = """
class TestAdd(TestCase):
    def test_add(self, device, dtype):
        x = torch.ones(2, device={device})
        self.assertEqual(x + x, 2 * x)

    def test_meta(self):
        y = torch.ones(2, device="cuda")  # not device-generic: may name a device
"""


def test_device_generic_class_must_be_instantiated() -> None:
    body = MAIN_OK + DEVICE_CLASS.format(device="device")
    main = 'if __name__ == "__main__":\n    run_tests()\n'
    assert ids(body + main) == ["CK504"]
    assert ids(body + "instantiate_device_type_tests(TestAdd, globals())\n" + main) == []
    tree = ast.parse(body)
    assert [c.name for c in device_generic_classes(tree)] == ["TestAdd"]
    assert instantiated_classes(ast.parse("instantiate_device_type_tests(TestAdd, globals())")) == {
        "TestAdd"
    }


@pytest.mark.parametrize(
    ("device", "expected"),
    [('"cuda"', ["CK505"]), ('"cuda:1"', ["CK505"]), ("device", []), ('"cpu"', [])],
)
def test_hard_coded_cuda(device: str, expected: list[str]) -> None:
    source = (
        MAIN_OK
        + DEVICE_CLASS.format(device=device)
        + "instantiate_device_type_tests(TestAdd, globals())\n"
        + 'if __name__ == "__main__":\n    run_tests()\n'
    )
    assert ids(source) == expected


def test_form_feeds_do_not_shift_line_numbers() -> None:
    """Python ends lines at \\n, \\r\\n and \\r only: a form feed line or a U+2028 in a comment
    must not move the lines where "cuda" is searched."""
    source = (
        MAIN_OK
        + "\x0c\n# a comment\u2028 and a form feed\x0c above\n"
        + DEVICE_CLASS.format(device='"cuda"')
        + "instantiate_device_type_tests(TestAdd, globals())\n"
        + 'if __name__ == "__main__":\n    run_tests()\n'
    )
    found = check_test_source(source, "test/test_x.py")
    assert [(v.rule.id, v.line) for v in found] == [("CK505", 7)]


def test_syntax_error_is_reported_after_the_header_check() -> None:
    found = check_test_source("def broken(:\n", "test/test_x.py")
    assert [v.rule.id for v in found] == ["CK501", "CK506"]
    assert found[1].line == 1 and found[1].path == "test/test_x.py"


def test_hard_coded_cuda_in_cuda_only_tests_is_fine() -> None:
    """CK505 honours @onlyCUDA, @onlyOn…, @onlyNativeDeviceTypes, skip decorators that exclude
    the CPU, and branches that run on CUDA only; the CPU branch and shared code still count."""
    source = (SOURCES / "device_tests_cuda_only.py").read_text()
    found = check_test_source(source, "test/test_streams.py")
    assert [(v.rule.id, v.line) for v in found] == [("CK505", 64), ("CK505", 65)]
    assert all("TestStreams.test_still_flagged" in v.message for v in found)
    assert not any(v.is_error for v in found)  # a warning in the default profile


@pytest.mark.parametrize(
    ("decorator", "flagged"),
    [
        ("@onlyCUDA", False),
        ("@onlyOn('cuda')", False),
        ("@onlyNativeDeviceTypesAnd(['hpu'])", False),
        ("@skipCPUIf(True, 'gpu')", False),
        ("@skipIf(not torch.cuda.is_available(), 'no cuda')", False),
        ("@unittest.skipIf(not TEST_CUDA, 'no cuda')", False),
        ("@skipCPUIf(not HAS_LAPACK, 'lapack')", True),  # CPU still runs it
        ("@skipIf(IS_WINDOWS, 'flaky')", True),
        ("@skipCUDAIfRocm", True),
        ("@onlyCPU", True),
    ],
)
def test_which_decorators_make_a_test_cuda_only(decorator: str, flagged: bool) -> None:
    text = (
        '# Owner(s): ["module: nn"]\nimport torch\n\n\nclass TestX(TestCase):\n'
        f"    {decorator}\n    def test_x(self, device):\n        torch.ones(1).cuda()\n\n\n"
        "instantiate_device_type_tests(TestX, globals())\n\n"
        'if __name__ == "__main__":\n    run_tests()\n'
    )
    assert (ids(text) == ["CK505"]) is flagged


def test_an_only_cuda_test_may_say_cuda() -> None:
    """PyTorch's own files call .cuda() under @onlyCUDA: the hook accepts them unmodified."""
    source = (SOURCES / "nn_only_cuda_good.py").read_text()
    assert check_test_source(source, "test/nn/test_dropout.py") == []
    # The same body without @onlyCUDA runs on CPU too: there, "cuda" is hard-coded.
    without = source.replace("    @onlyCUDA\n", "")
    assert [v.rule.id for v in check_test_source(without, "test/nn/test_dropout.py")] == [
        "CK505",
        "CK505",
    ]


@pytest.mark.slow
def test_the_only_cuda_fixture_runs_with_cpu_torch(tmp_path: Path) -> None:
    target = tmp_path / "test_dropout.py"
    target.write_text((SOURCES / "nn_only_cuda_good.py").read_text())
    for argv in (
        [str(target), "-v"],
        ["-m", "pytest", "-v", "-p", "no:cacheprovider", str(target)],
    ):
        proc = subprocess.run(
            [sys.executable, *argv], capture_output=True, text=True, timeout=600, cwd=tmp_path
        )
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        output = proc.stdout + proc.stderr
        assert "test_dropout_eval_is_identity_cpu" in output
        assert re.search(r"test_dropout_cuda_matches_shape_cpu.*(skipped|SKIPPED)", output)
