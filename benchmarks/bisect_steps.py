"""Steps `contribkit bisect` takes against log2 of the range, on the test repository.

The repository is the bisect tests' own (tests/sweephelpers.py): a small pure-Python package,
one commit that breaks it at a seeded random place, and, in the second half of the table,
every fifth commit unbuildable (its build command fails, so the step skips it). The repro is
made by `contribkit repro --from-file`; each row runs the real `contribkit bisect --json` and
counts its steps (the two checks of the ends are not counted). Bisection halves the range at
each step, so without skips the target is steps <= ceil(log2(range)).

    python benchmarks/bisect_steps.py [--sizes 8,16,32,64,128] [--trials 2]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).parent))
from _timing import installed

from tests import sweephelpers as sh


def trial(
    contribkit: str, base: Path, python: str, size: int, bug_at: int, unbuildable: frozenset[int]
) -> tuple[int, int, bool]:
    """Steps taken, commits skipped, and whether the culprit is the right commit."""
    repo = base / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    shas = sh.make_history(repo, size, bug_at, unbuildable)
    env = {**os.environ, "CONTRIBKIT_CACHE_DIR": str(base / "cache")}
    issue = base / "issue.md"
    subprocess.run(
        [contribkit, "repro", "--from-file", str(issue), "-o", "repros/issue-7"],
        cwd=repo,
        env=env,
        check=True,
        capture_output=True,
    )
    build = ["--build-cmd", "sh build.sh"] if unbuildable else ["--no-build"]
    proc = subprocess.run(
        [
            contribkit,
            "bisect",
            "repros/issue-7",
            "--python",
            python,
            "--good",
            shas[0],
            "--bad",
            "HEAD",
            *build,
            "--json",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    if not proc.stdout.strip():
        raise SystemExit(f"bisect failed: {proc.stderr}")
    result = json.loads(proc.stdout)
    right = bool(result["culprit"]) and result["culprit"]["sha"] == shas[bug_at]
    return len(result["steps"]), len(result["skipped"]), right


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="8,16,32,64,128")
    parser.add_argument("--trials", type=int, default=2)
    args = parser.parse_args()
    contribkit = installed()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = random.Random(23)
    ok = True
    print("bisect steps against log2 of the range (--good is the first commit, --bad the last)")
    print(
        f"  {'commits':>7} {'log2':>6} {'ceil':>4}  {'skips':<6} {'steps (each trial)':<20} {'skipped':<9} culprit"
    )
    with tempfile.TemporaryDirectory(prefix="contribkit-bench-bisect-") as tmp:
        base = Path(tmp)
        (base / "issue.md").write_text(sh.TINYVEC_ISSUE)
        python = str(sh.venv(base / "venv", [str(base / "repo")]))
        sh.write_standin_torch(sh.site_packages(base / "venv"), "2.9.0")
        for with_skips in (False, True):
            for size in sizes:
                steps, skipped, right = [], [], []
                for _ in range(args.trials):
                    bug_at = rng.randrange(1, size)
                    every_fifth = {k for k in range(2, size - 1, 5) if abs(k - bug_at) > 1}
                    broken = frozenset(every_fifth if with_skips else ())
                    s, k, r = trial(contribkit, base, python, size, bug_at, broken)
                    steps.append(s)
                    skipped.append(k)
                    right.append(r)
                span = size - 1
                bound = math.ceil(math.log2(span))
                if not with_skips:
                    ok &= max(steps) <= bound
                ok &= all(right)
                print(
                    f"  {span:>7} {math.log2(span):>6.2f} {bound:>4}  {'1 in 5' if with_skips else 'none':<6} "
                    f"{', '.join(map(str, steps)):<20} {', '.join(map(str, skipped)):<9} "
                    f"{'right' if all(right) else 'WRONG'}"
                )
    print(
        "target: without skips, steps <= ceil(log2(range)); the culprit always right: "
        + ("met" if ok else "MISSED")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
