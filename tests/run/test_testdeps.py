"""What PyTorch's test files need beside torch: doctor, test and run name the missing module and
one `pip install` line, and an ERROR cell says its cause first.

The interpreter that lacks a module is real: a venv with this suite's packages linked in, but
for expecttest, so that following the hint (pip installs into that venv) really fixes it.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from contribkit.run.testdeps import error_cause, install_line, missing_module
from tests.conftest import Ck, RunCli, commit_files


def no_expecttest_python(folder: Path, with_pip: bool = False) -> str:
    """A venv with this suite's packages (torch, numpy, pytest: linked, not copied) but for
    expecttest, which pip can then really install into it."""
    venv = folder / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", *([] if with_pip else ["--without-pip"]), str(venv)],
        check=True,
    )
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().startswith("expecttest") and not (site / entry.name).exists():
            (site / entry.name).symlink_to(entry)
    return str(python)


# -- the pure parts ---------------------------------------------------------------------------
def test_missing_module_reads_both_wordings() -> None:
    assert missing_module("ModuleNotFoundError: No module named 'numpy.core'") == "numpy"
    assert missing_module("/venv/bin/python: No module named pytest") == "pytest"
    assert missing_module("RuntimeError: boom") is None


def test_error_cause_puts_the_cause_first() -> None:
    long_path = "/very/long/" + "x/" * 80 + "bin/python"
    assert error_cause(f"{long_path}: No module named pytest\n") == "No module named 'pytest'"
    traceback = (
        "Traceback (most recent call last):\n  File 'x'\nImportError: cannot import name 'y'\n"
    )
    assert (
        error_cause(traceback + "some trailing log line\n") == "ImportError: cannot import name 'y'"
    )
    assert error_cause("just a line\n") == "just a line"


def test_install_line_quotes_the_interpreter() -> None:
    line = install_line("/my venv/bin/python", ["numpy", "expecttest"])
    assert shlex.split(line) == [
        "/my venv/bin/python",
        "-m",
        "pip",
        "install",
        "numpy",
        "expecttest",
    ]


# -- the commands -----------------------------------------------------------------------------
def test_doctor_names_the_missing_test_modules_of_a_bare_interpreter(
    run_cli: RunCli, tmp_path: Path, bare_python: str
) -> None:
    proc = run_cli("doctor", "--python", bare_python, "--json", cwd=tmp_path)
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    deps = checks["test deps"]
    assert deps["status"] == "WARN"
    assert "pytest, numpy, expecttest missing" in deps["detail"]
    assert shlex.split(deps["hint"])[1:] == [
        "-m",
        "pip",
        "install",
        "pytest",
        "numpy",
        "expecttest",
    ]


@pytest.mark.slow
def test_test_op_names_expecttest_and_following_the_hint_fixes_it(
    run_cli: RunCli, fork_repo: Path, tmp_path: Path
) -> None:
    python = no_expecttest_python(tmp_path, with_pip=True)
    doctor = run_cli("doctor", "--python", python, "--json", cwd=fork_repo)
    deps = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}["test deps"]
    assert deps["hint"] == install_line(python, ["expecttest"]), deps
    args = ("test", "--op", "index_add", "--check", "result.shape == sample.input.shape")
    proc = run_cli(*args, "--stdout", "--python", python, cwd=fork_repo)
    assert proc.returncode == 2
    assert "No module named 'expecttest'" in proc.stderr
    hint = next(ln for ln in proc.stderr.splitlines() if ln.startswith("hint: "))
    assert hint == f"hint: {deps['hint']}"  # the same line as doctor's
    pip = subprocess.run(shlex.split(hint[len("hint: ") :]), capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    again = run_cli(*args, "--stdout", "--python", python, cwd=fork_repo)
    assert again.returncode == 0, again.stderr


def test_run_of_a_test_file_without_pytest_says_so_first(
    run_cli: RunCli, fork_repo: Path, bare_python: str
) -> None:
    commit_files(
        fork_repo, {"test/test_plain.py": "def test_x():\n    assert True\n"}, "Add a test"
    )
    proc = run_cli(
        "run", "test/test_plain.py", "--python", bare_python, "--devices", "cpu", cwd=fork_repo
    )
    assert proc.returncode == 1
    error = next(ln for ln in proc.stdout.splitlines() if ln.startswith("ERROR: "))
    # the cause, not the interpreter's long path cut short
    assert error.startswith("ERROR: test/test_plain.py on cpu: No module named 'pytest' ("), error
    hint = install_line(bare_python, ["pytest", "numpy", "expecttest"])
    assert f"hint: {hint}" in proc.stdout.splitlines() + proc.stderr.splitlines()


def test_a_collection_error_says_which_import_failed_first(ck: Ck, fork_repo: Path) -> None:
    broken = "import not_a_module_here\n\n\ndef test_x():\n    assert True\n"
    commit_files(fork_repo, {"test/test_broken.py": broken}, "Add a broken test")
    proc = ck("run", "test/test_broken.py", "--devices", "cpu")
    assert proc.returncode == 1
    error = next(ln for ln in proc.stdout.splitlines() if ln.startswith("ERROR: "))
    assert error.startswith(
        "ERROR: test/test_broken.py on cpu: No module named 'not_a_module_here' (collection failure)"
    ), error
    assert not any(ln.startswith("hint: ") for ln in proc.stdout.splitlines())  # not a test dep
