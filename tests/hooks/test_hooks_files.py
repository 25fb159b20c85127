"""The pre-commit-stage hooks that read staged files: main() on real files in a fork."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from contribkit.conventions.globs import matches_ignore_pattern
from contribkit.core.trust import trust
from contribkit.hooks import no_debug_leftovers, no_scratch_files, test_conventions

SOURCES = Path(__file__).parent.parent / "fixtures" / "sources"


def run(
    capsys: pytest.CaptureFixture[str], main: Callable[[list[str]], int], *argv: str
) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def reported(output: str) -> list[tuple[str, int, str]]:
    """``(path, line, rule id)`` for every violation line."""
    return [
        (m.group(1), int(m.group(2)), m.group(3))
        for m in re.finditer(r"^(\S+?):(\d+): (?:error|warning) (CK\d{3}) ", output, re.M)
    ]


def place(fork: Path, fixture: str, rel: str) -> str:
    target = fork / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(SOURCES / fixture, target)
    return rel


# --- contribkit-no-debug-leftovers ---------------------------------------------------------


def test_debug_leftovers_in_library_code(
    capsys: pytest.CaptureFixture[str], fork_repo: Path
) -> None:
    rel = place(fork_repo, "leftovers.py", "torch/nn/leftovers.py")
    code, out = run(capsys, no_debug_leftovers.main, rel)
    assert code == 1
    assert reported(out) == [
        (rel, 4, "CK302"),
        (rel, 5, "CK302"),
        (rel, 11, "CK301"),
        (rel, 12, "CK303"),
        (rel, 13, "CK303"),
        (rel, 14, "CK304"),
        (rel, 15, "CK304"),
        (rel, 16, "CK305"),
        (rel, 17, "CK306"),
        (rel, 18, "CK306"),
    ]
    assert (
        f'{rel}:17: error CK306 debug-env-var: os.environ["TORCH_LOGS"] set in library code' in out
    )
    assert "torch._dynamo.config.verbose = True (dynamo verbose mode)" in out
    # strings, comments, ordinary prints, pragmas and False are never reported (lines 22-31)
    assert all(line < 20 for _, line, _ in reported(out))


def test_debug_env_vars_are_fine_outside_library_code(
    capsys: pytest.CaptureFixture[str], fork_repo: Path
) -> None:
    rel = place(fork_repo, "leftovers.py", "test/test_leftovers.py")
    code, out = run(capsys, no_debug_leftovers.main, rel)
    assert code == 1
    assert "CK306" not in out and "CK301" in out


def test_clean_files_and_switched_off_rules_pass(
    capsys: pytest.CaptureFixture[str], fork_repo: Path
) -> None:
    rel = place(fork_repo, "leftovers.py", "torch/nn/leftovers.py")
    assert run(capsys, no_debug_leftovers.main, "torch/nn/functional.py") == (0, "")
    code, out = run(
        capsys, no_debug_leftovers.main, "--disable", "CK301,CK302,CK303,CK304,CK305,CK306", rel
    )
    assert (code, out) == (0, "")


def test_debug_markers_are_configurable(
    capsys: pytest.CaptureFixture[str], fork_repo: Path
) -> None:
    (fork_repo / "torch" / "probe.py").write_text('print("HERE", 1)\nprint("[DEBUG] x")\n')
    (fork_repo / ".contribkit.toml").write_text('[hooks]\ndebug_markers = ["HERE"]\n')
    code, out = run(capsys, no_debug_leftovers.main, "torch/probe.py")
    assert code == 1 and reported(out) == [("torch/probe.py", 1, "CK304")]


def test_unparsable_and_missing_files_are_left_to_other_tools(
    capsys: pytest.CaptureFixture[str], fork_repo: Path
) -> None:
    (fork_repo / "torch" / "broken.py").write_text("def f(:\n    breakpoint()\n")
    assert run(capsys, no_debug_leftovers.main, "torch/broken.py", "torch/gone.py") == (0, "")


# --- contribkit-no-scratch-files ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "pattern", "matches"),
    [
        ("repros/issue-1/repro.py", "/repros/", True),
        ("torch/repros/x.py", "/repros/", False),
        ("torch_compile_debug/run_1/output_code.py", "torch_compile_debug/", True),
        ("test/torch_compile_debug/x", "torch_compile_debug/", True),
        ("debug_issue.sh", "debug_issue.sh", True),
        ("tools/debug_issue.sh", "debug_issue.sh", True),
        (".contribkit.toml", "/.contribkit.toml", True),
        ("docs/.contribkit.toml", "/.contribkit.toml", False),
        ("build/run.log", "*.log", True),
        ("notes/todo.md", "notes/*", True),
        ("torch/notes/todo.md", "notes/*", False),
        ("notes/a/todo.md", "notes/*", True),
        ("run_1.txt", "run_[0-9].txt", True),
        ("run_a.txt", "run_[!0-9].txt", True),
        ("run_1.txt", "run_[!0-9].txt", False),
        ("a/b/c/trace.json", "a/**/trace.json", True),
        ("x.log.txt", "*.log", False),
    ],
)
def test_gitignore_style_patterns(path: str, pattern: str, matches: bool) -> None:
    assert matches_ignore_pattern(path, pattern) is matches


def test_scratch_and_large_files_are_refused(
    capsys: pytest.CaptureFixture[str], fork_repo: Path
) -> None:
    staged = {
        "repros/issue-12345/repro.py": "print(1)\n",
        ".contribkit/runs/x.json": "{}\n",
        "torch_compile_debug/run/output.py": "x = 1\n",
        "tl_out/index.html": "<html/>\n",
        "minifier_launcher.py": "pass\n",
        "debug_issue.sh": "#!/bin/sh\n",
        "dynamo.log": "log\n",
        "torch/nn/functional.py": "def relu(x):\n    return x\n",
        "torch/big.bin": "x" * 600 * 1024,
    }
    for rel, text in staged.items():
        (fork_repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (fork_repo / rel).write_text(text)
    code, out = run(capsys, no_scratch_files.main, *staged)
    assert code == 1
    refused = re.findall(r"^(\S+): error (CK\d{3}) ", out, re.M)
    assert refused == [
        ("repros/issue-12345/repro.py", "CK401"),
        (".contribkit/runs/x.json", "CK401"),
        ("torch_compile_debug/run/output.py", "CK401"),
        ("tl_out/index.html", "CK401"),
        ("minifier_launcher.py", "CK401"),
        ("debug_issue.sh", "CK401"),
        ("dynamo.log", "CK401"),
        ("torch/big.bin", "CK402"),
    ]
    assert "hint: unstage it: git restore --staged repros/issue-12345/repro.py" in out
    assert "torch/big.bin: error CK402 file-too-large: file is 600 KiB, limit 500 KiB" in out


def test_scratch_settings(capsys: pytest.CaptureFixture[str], fork_repo: Path) -> None:
    (fork_repo / ".contribkit.toml").write_text(
        'repros_dir = "my-repros"\n[hooks]\nscratch_patterns = ["notes/"]\nmax_file_kb = 1\n'
    )
    trust(fork_repo / ".contribkit.toml")  # a repository's file moves repros once trusted
    for rel in ("my-repros/r.py", "notes/a.md", "torch/two_kb.py"):
        (fork_repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (fork_repo / rel).write_text("x" * 2048)
    code, out = run(
        capsys, no_scratch_files.main, "my-repros/r.py", "notes/a.md", "torch/two_kb.py"
    )
    assert code == 1
    assert re.findall(r"^(\S+): error (CK\d{3}) ", out, re.M) == [
        ("my-repros/r.py", "CK401"),
        ("notes/a.md", "CK401"),
        ("torch/two_kb.py", "CK402"),
    ]


# --- contribkit-test-conventions --------------------------------------------------------------


def test_conventions_of_a_good_and_a_bad_test_file(
    capsys: pytest.CaptureFixture[str], fork_repo: Path
) -> None:
    good = place(fork_repo, "device_tests_good.py", "test/nn/test_relu.py")
    bad = place(fork_repo, "device_tests_bad.py", "test/nn/test_relu_bad.py")
    assert run(capsys, test_conventions.main, good) == (0, "")
    code, out = run(capsys, test_conventions.main, good, bad)
    assert code == 1
    assert reported(out) == [
        (bad, 1, "CK502"),
        (bad, 7, "CK504"),
        (bad, 9, "CK505"),
        (bad, 10, "CK505"),  # .cuda(); line 11 has a pragma
        (bad, 15, "CK503"),
    ]
    assert "hint: add at module level: instantiate_device_type_tests(TestRelu, globals())" in out


def test_missing_owner_and_main(capsys: pytest.CaptureFixture[str], fork_repo: Path) -> None:
    (fork_repo / "test" / "test_bare.py").write_text("def test_x():\n    assert True\n")
    code, out = run(capsys, test_conventions.main, "test/test_bare.py")
    assert code == 1
    assert reported(out) == [("test/test_bare.py", 1, "CK501"), ("test/test_bare.py", 2, "CK503")]


def test_conflict_markers_are_refused(capsys: pytest.CaptureFixture[str], fork_repo: Path) -> None:
    (fork_repo / "torch" / "merged.py").write_text(
        "x = 1\n<<<<<<< HEAD\ny = 2\n=======\ny = 3\n>>>>>>> topic\n"
    )
    (fork_repo / "docs").mkdir(exist_ok=True)
    (fork_repo / "docs" / "index.rst").write_text("Title\n=======\n\ntext\n")  # a heading
    (fork_repo / "torch" / "blob.bin").write_bytes(b"\0\n<<<<<<< x\n")  # binary: not read
    code, out = run(
        capsys, no_scratch_files.main, "torch/merged.py", "docs/index.rst", "torch/blob.bin"
    )
    assert code == 1
    assert re.findall(r"^(\S+): error (CK\d{3}) ", out, re.M) == [("torch/merged.py:2", "CK403")]
    assert "resolve the conflict" in out
    assert run(
        capsys, no_scratch_files.main, "--disable", "conflict-marker", "torch/merged.py"
    ) == (0, "")
