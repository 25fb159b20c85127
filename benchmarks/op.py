"""A warm ``contribkit op add`` against ``contribkit --help``, as a ratio in one run.

The first call builds the yaml index and runs the torch probe (both cached); the timed calls
read only the cached index and facts. Target (issue 17): median <= 1.5x ``contribkit --help``.

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
from _timing import installed, interleaved_medians, report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    contribkit = installed()
    with tempfile.TemporaryDirectory(prefix="contribkit-bench-op-") as scratch:
        # Outside any checkout (the packaged yaml), with a cache of its own.
        env = {**os.environ, "CONTRIBKIT_CACHE_DIR": str(Path(scratch, "cache"))}
        query = [contribkit, "op", "add"]
        subprocess.run(query, cwd=scratch, env=env, check=True, stdout=subprocess.DEVNULL)
        base, warm = interleaved_medians(
            [[contribkit, "--help"], query], args.runs, cwd=scratch, env=env
        )
    rows: list[tuple[str, float, str, float | None, float | None]] = [
        ("contribkit --help", base, "", None, None),
        ("contribkit op add (warm)", warm, "--help", warm / base, 1.5),
    ]
    ok = report(f"op ({args.runs} runs, medians, interleaved)", rows)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
