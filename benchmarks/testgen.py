"""What the op probe cache buys `contribkit test --op`, as ratios in one run.

Baseline: importing ``op_db`` in the same interpreter (what every uncached probe pays).
Target: a cached ``contribkit test --op index_add --stdout`` takes <= 0.25x that import, i.e. it
never imports torch again for a name it has probed. The first (uncached) run is shown for scale.

    python benchmarks/testgen.py [--runs N] [--op NAME]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import median_wall, report

IMPORT_OP_DB = "from torch.testing._internal.common_methods_invocations import op_db"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--op", default="index_add")
    args = parser.parse_args()
    bindir = Path(sys.executable).parent
    contribkit = shutil.which("contribkit", path=str(bindir)) or shutil.which("contribkit")
    if not contribkit:
        print("contribkit is not installed in this environment", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="contribkit-bench-") as cache:
        env = {**os.environ, "CONTRIBKIT_CACHE_DIR": cache}
        command = [contribkit, "test", "--op", args.op, "--stdout", "--python", sys.executable]
        start = time.perf_counter()
        first = subprocess.run(command, env=env, capture_output=True, text=True, cwd=cache)
        cold = time.perf_counter() - start
        if first.returncode != 0:
            print(first.stderr, file=sys.stderr)
            return 2
        base = median_wall([sys.executable, "-c", IMPORT_OP_DB], args.runs, warmup=1)
        warm = median_wall(command, args.runs, warmup=1, env=env, cwd=cache)
    rows: list[tuple[str, float, str, float | None, float | None]] = [
        ("python: import op_db", base, "", None, None),
        (f"contribkit test --op {args.op} (first run)", cold, "op_db", cold / base, None),
        (f"contribkit test --op {args.op} (cached)", warm, "op_db", warm / base, 0.25),
    ]
    ok = report(f"contribkit test probe cache ({args.runs} runs, medians)", rows)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
