"""Speed of the hooks, as ratios against baselines measured in the same run.

1. The commit-msg hook run standalone (its console script, in a git repository) against
   conventional-pre-commit's console script on the same message.
   Target (issue 8): median <= 0.5x conventional-pre-commit. Without conventional-pre-commit
   installed (``pip install -e ".[bench]"``) that baseline is skipped, with a note.
2. The pre-commit-stage hooks over 2,000 generated Python files (400 of them PyTorch-style test
   files, and one library file in ten mentioning a debugger in a comment), each hook given every
   file the way pre-commit would, one after the other.
   Target: <= 1 s in total (pre-commit would also spread them over the CPUs).
3. A real ``git commit`` (one edited library file, ``git commit -a``) in a temporary fork with
   every hook ``contribkit init`` installs, native engine (one process per git hook stage), against
   one conventional-pre-commit check on the same message; beside it, the same commit with
   ``--no-verify`` and through the pre-commit engine, for reference. All interleaved in one run.
   Target (issue 14): <= 1.5x conventional-pre-commit.

    python benchmarks/hooks.py [--runs N] [--files N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import find, installed, interleaved_medians, median_wall, report

ROOT = Path(__file__).resolve().parent.parent
MESSAGE = (
    "feat: add the relu gradient at negative zero\n\nThe kernel compared with > instead of >=.\n"
)
PRE_COMMIT_STAGE = (
    "contribkit-branch-name",
    "contribkit-no-debug-leftovers",
    "contribkit-no-scratch-files",
    "contribkit-test-conventions",
)

LIBRARY_FILE = '''"""Generated module {n}: shaped like library code under torch/."""
import os

import torch
import torch._dynamo
from torch import nn


class Block{n}(nn.Module):
    def __init__(self, features: int = {n}) -> None:
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.verbose = os.environ.get("TORCH_LOGS") is not None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        if self.verbose:
            print("block {n}:", y.shape)
        return torch.relu(y) + x


def helper_{n}(values: list[int]) -> int:
{comment}    total = 0
    for value in values:
        if value % 3 == 0:
            total += value
        elif value % 5 == 0:
            total -= value
    return total


def compiled_{n}(x: torch.Tensor) -> torch.Tensor:
    return torch.compile(Block{n}())(x)
'''

TEST_FILE = """# Owner(s): ["module: nn"]

import torch
from torch.testing._internal.common_device_type import dtypes, instantiate_device_type_tests
from torch.testing._internal.common_utils import TestCase, run_tests


class TestBlock{n}(TestCase):
    @dtypes(torch.float32, torch.float64)
    def test_forward(self, device, dtype):
        x = torch.ones(2, {n} % 7 + 1, device=device, dtype=dtype)
        if torch.device(device).type == "cuda":
            torch.cuda.synchronize()
        self.assertEqual(x.sum().item(), 2 * ({n} % 7 + 1))

    def test_helper(self):
        self.assertEqual(sum(range({n})), {n} * ({n} - 1) // 2)


instantiate_device_type_tests(TestBlock{n}, globals())

if __name__ == "__main__":
    run_tests()
"""


def make_repo(path: Path, files: int) -> list[str]:
    subprocess.run(["git", "init", "-q", "-b", "fix/12345-bench", str(path)], check=True)
    names = []
    for n in range(files):
        if n % 5 == 0:
            rel = f"test/area{n % 20}/test_block{n}.py"
            text = TEST_FILE.format(n=n)
        else:
            rel = f"torch/area{n % 20}/block{n}.py"
            # one file in ten mentions a debugger, so the hook has to parse it to be sure
            comment = "    # call breakpoint() here to inspect values\n" if n % 10 == 1 else ""
            text = LIBRARY_FILE.format(n=n, comment=comment)
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        names.append(rel)
    (path / ".git" / "COMMIT_EDITMSG").write_text(MESSAGE)
    return names


COMMIT = 'date +%N >> torch/nn/block.py && exec git commit -q -a "$@"'


def make_fork(path: Path, engine: str) -> list[str]:
    """A small fork with contribkit's hooks installed by ``engine``; the command that commits an
    edit there (append a line, ``git commit -a`` with MESSAGE)."""
    subprocess.run(["git", "init", "-q", "-b", "fix/12345-bench", str(path)], check=True)
    for rel, text in {
        "torch/nn/block.py": LIBRARY_FILE.format(n=7, comment=""),
        "test/nn/test_block.py": TEST_FILE.format(n=7),
    }.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com"}
    env.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
    subprocess.run(["git", "add", "-A"], cwd=path, check=True)
    subprocess.run(["git", "commit", "-qm", "Initial import"], cwd=path, check=True, env=env)
    init = subprocess.run(
        [sys.executable, "-m", "contribkit", "init", "--engine", engine],
        cwd=path,
        capture_output=True,
        text=True,
    )
    if init.returncode != 0:
        raise SystemExit(f"contribkit init --engine {engine} failed:\n{init.stderr}")
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.com")):
        subprocess.run(["git", "config", key, value], cwd=path, check=True)
    return ["sh", "-c", COMMIT, "commit", "-m", MESSAGE]


def commit_benchmark(tmp: Path, runs: int) -> bool:
    """Section 3: a commit through the installed hooks against one conventional-pre-commit check."""
    baseline = find("conventional-pre-commit")
    if not baseline:
        print("note: conventional-pre-commit is not installed; the commit benchmark is skipped")
        return True
    native, through_pre_commit = tmp / "native", tmp / "pre-commit"
    commit = make_fork(native, "native")
    message = tmp / "MSG"
    message.write_text(MESSAGE)
    cmds = [
        [baseline, str(message)],
        commit,
        [*commit, "--no-verify"],
        ["sh", "-c", f'cd "{through_pre_commit}" && exec "$@"', "sh", *commit],
    ]
    engines = find("pre-commit") is not None
    if engines:
        make_fork(through_pre_commit, "pre-commit")
    else:
        cmds.pop()
        print("note: pre-commit is not installed; the pre-commit engine is not measured")
    check = subprocess.run(commit, cwd=native, capture_output=True, text=True)
    if check.returncode != 0:
        print(f"the commit failed through the hooks:\n{check.stdout}{check.stderr}")
        return False
    times = interleaved_medians(cmds, runs, cwd=native)
    theirs, ours, bare = times[:3]
    rows: list[tuple[str, float, str, float | None, float | None]] = [
        ("conventional-pre-commit (one check)", theirs, "", None, None),
        ("git commit --no-verify", bare, "cpc", bare / theirs, None),
    ]
    if engines:
        rows.append(("git commit, pre-commit engine", times[3], "cpc", times[3] / theirs, None))
    rows.append(("git commit, native hooks (init's default)", ours, "cpc", ours / theirs, 1.5))
    return report(f"git commit with every hook init installs ({runs} runs, medians)", rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()
    commit_msg = installed("contribkit-commit-msg")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "fork"
        files = make_repo(repo, args.files)
        message = [".git/COMMIT_EDITMSG"]
        base = median_wall([sys.executable, "-c", "pass"], args.runs, cwd=repo)
        ours = median_wall([commit_msg, *message], args.runs, cwd=repo)
        rows: list[tuple[str, float, str, float | None, float | None]] = [
            ("python -c pass", base, "", None, None),
            ("contribkit-commit-msg", ours, "python", ours / base, None),
        ]
        baseline = find("conventional-pre-commit")
        if baseline:
            theirs = median_wall([baseline, *message], args.runs, cwd=repo)
            rows.append(("conventional-pre-commit", theirs, "python", theirs / base, None))
            rows.append(
                (
                    "contribkit-commit-msg vs conventional-pre-commit",
                    ours,
                    "cpc",
                    ours / theirs,
                    0.5,
                )
            )
        else:
            print("note: conventional-pre-commit is not installed; its baseline is skipped")
        ok &= report(f"commit-msg hook, standalone ({args.runs} runs, medians)", rows)

        runs = max(3, args.runs // 4)
        stage_rows: list[tuple[str, float, str, float | None, float | None]] = []
        total = 0.0
        for hook_id in PRE_COMMIT_STAGE:
            path = installed(hook_id)
            if hook_id == "contribkit-branch-name":
                argv: list[str] = []
            elif hook_id == "contribkit-test-conventions":
                argv = [f for f in files if f.startswith("test/")]
            else:
                argv = files
            cmd = [path, "--disable", "CK202", *argv]
            check = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
            if check.returncode != 0:
                print(f"{hook_id} failed on the generated files:\n{check.stdout}{check.stderr}")
                return 1
            elapsed = median_wall(cmd, runs, cwd=repo)
            total += elapsed
            stage_rows.append((f"{hook_id} ({len(argv)} files)", elapsed, "", None, None))
        stage_rows.append(("all pre-commit-stage hooks", total, "1 s", total / 1.0, 1.0))
        ok &= report(
            f"pre-commit-stage hooks over {args.files} Python files ({runs} runs, medians)",
            stage_rows,
        )
        ok &= commit_benchmark(Path(tmp), args.runs)
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.pop("CONTRIBKIT_CONFIG", None)  # measure the real config lookup
    raise SystemExit(main())
