"""`contribkit debug` start-up: a second invocation for the same interpreter reads the TORCH_LOGS
registry from the cache instead of starting torch.

Baselines measured in the same run: ``python -c pass``, and the first (uncached) invocation,
which probes torch in a subprocess. Target (issue 4): cached median <= 200 ms wall.

    python benchmarks/debug.py [--runs N] [--python PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import installed, median_wall, report

TARGET_S = 0.200


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--python", default=sys.executable, help="the interpreter being debugged")
    args = parser.parse_args()
    contribkit = installed()
    with tempfile.TemporaryDirectory(prefix="contribkit-bench-") as work:
        target = Path(work, "prog.py")
        target.write_text("import torch\nprint(torch.compile(lambda x: x + 1)(torch.ones(2)))\n")
        cmd = [
            contribkit, "debug", "--python", args.python,
            "--preset", "graph-breaks,recompiles", "--logs", "+dynamo,output_code",
            "--script", str(target), "-o", str(Path(work, "debug_issue.sh")), "--force",
        ]  # fmt: skip
        base_env = dict(os.environ)
        cold = []
        for i in range(args.cold_runs):
            env = {**base_env, "CONTRIBKIT_CACHE_DIR": str(Path(work, f"cold-{i}"))}
            start = time.perf_counter()
            subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
            cold.append(time.perf_counter() - start)
        first = statistics.median(cold)
        warm_env = {**base_env, "CONTRIBKIT_CACHE_DIR": str(Path(work, "cold-0"))}
        cached = median_wall(cmd, args.runs, env=warm_env)
        base = median_wall([sys.executable, "-c", "pass"], args.runs)
    report(
        f"debug ({args.runs} cached runs, {args.cold_runs} uncached, medians)",
        [
            ("python -c pass", base, "", None, None),
            ("contribkit debug, first run (probes torch)", first, "python", first / base, None),
            ("contribkit debug, cached", cached, "python", cached / base, None),
            ("contribkit debug, cached vs first", cached, "first", cached / first, None),
        ],
    )
    met = cached <= TARGET_S
    print(
        f"  cached median {cached * 1000:.1f} ms (target <= {TARGET_S * 1000:.0f} ms: "
        f"{'met' if met else 'MISSED'})"
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
