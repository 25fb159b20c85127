"""Warm queries against ``contribkit --help``, as ratios in one run: ``op add`` and ``gaps``.

The first call of each builds its cache (the yaml index and the torch probe for ``op``, the
module probe for ``gaps``); the timed calls read only the cache. Targets (issue 25): a warm
``op`` <= 1.3x ``contribkit --help``, a warm ``gaps torch.nn.functional`` <= 1.5x, in wall time.
The same runs' CPU times follow (informative: on a machine others load, they move far less than
the wall times do).

    python benchmarks/op.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import installed, interleaved_times, report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    contribkit = installed()
    with tempfile.TemporaryDirectory(prefix="contribkit-bench-op-") as scratch:
        # Outside any checkout (the packaged yaml), with a cache of its own.
        env = {**os.environ, "CONTRIBKIT_CACHE_DIR": str(Path(scratch, "cache"))}
        query = [contribkit, "op", "add"]
        gaps = [contribkit, "gaps", "torch.nn.functional"]
        for first in (query, gaps):
            subprocess.run(first, cwd=scratch, env=env, check=True, stdout=subprocess.DEVNULL)
        base, warm, warm_gaps = interleaved_times(
            [[contribkit, "--help"], query, gaps], args.runs, cwd=scratch, env=env
        )
    rows: list[tuple[str, float, str, float | None, float | None]] = [
        ("contribkit --help", base.wall, "", None, None),
        ("contribkit op add (warm)", warm.wall, "--help", warm.wall / base.wall, 1.3),
        (
            "contribkit gaps torch.nn.functional (warm)",
            warm_gaps.wall,
            "--help",
            warm_gaps.wall / base.wall,
            1.5,
        ),
    ]
    ok = report(f"op ({args.runs} runs, medians of wall time, interleaved)", rows)
    # The same runs' CPU time: what each command costs, whatever the others on the machine do.
    cpu_rows: list[tuple[str, float, str, float | None, float | None]] = [
        ("contribkit --help", base.cpu, "", None, None),
        ("contribkit op add (warm)", warm.cpu, "--help", warm.cpu / base.cpu, None),
        (
            "contribkit gaps torch.nn.functional (warm)",
            warm_gaps.cpu,
            "--help",
            warm_gaps.cpu / base.cpu,
            None,
        ),
    ]
    report("the same runs, medians of CPU time (user + system)", cpu_rows)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
