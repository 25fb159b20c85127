"""What `contribkit run` costs on top of the legs it runs, as ratios measured in one run.

- Overhead: ``contribkit run repro --devices cpu`` against running the same ~2 s repro directly
  (``python repro.py --device cpu``). Target (issue 6): <= 1.10x.
- Parallel legs: two CPU legs with ``-j 2`` against one leg alone. Target: <= 1.2x.

The repro imports torch and keeps one core busy until 2 s after it started, so both runs do the
same work. The torch probe is cached by the warm-up run, as it is for a contributor. The three
commands run in turn, so that a change in the machine's load weighs on each alike.

    python benchmarks/runner.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import installed, interleaved_medians, report

REPRO = """\
import time
started = time.monotonic()
import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu")
device = parser.parse_args().device
torch.set_num_threads(1)
x = torch.ones(64, device=device)
while time.monotonic() - started < 2.0:
    x = (x * 1.0001).clamp(max=10.0)
print("contribkit-verdict: NOT_REPRODUCED kept one core busy for 2s on " + device)
"""


def make_repo(root: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (root / "README.md").write_text("benchmark\n")
    git("add", "-A")
    git("-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "init")
    for name in ("a", "b"):
        folder = root / "repros" / name
        folder.mkdir(parents=True)
        (folder / "repro.py").write_text(REPRO)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    contribkit = installed()
    with tempfile.TemporaryDirectory(prefix="contribkit-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        make_repo(root)
        env = {**os.environ, "CONTRIBKIT_CACHE_DIR": str(Path(tmp) / "cache")}
        direct, one, two = interleaved_medians(
            [
                [sys.executable, "repros/a/repro.py", "--device", "cpu"],
                [contribkit, "run", "repros/a", "--devices", "cpu", "-j", "1"],
                [contribkit, "run", "repros/a", "repros/b", "--devices", "cpu", "-j", "2"],
            ],
            runs=args.runs,
            warmup=1,
            cwd=root,
            env=env,
        )
    ok = report(
        f"runner ({args.runs} runs, medians; {os.cpu_count()} CPUs)",
        [
            ("python repro.py (direct)", direct, "", None, None),
            ("contribkit run repro", one, "direct", one / direct, 1.10),
            ("contribkit run 2 repros -j 2", two, "one leg", two / one, 1.2),
        ],
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
