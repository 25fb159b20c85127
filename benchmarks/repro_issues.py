"""`contribkit repro --from-file` on a folder of saved issues: about a second per issue.

Times writing each issue's repro (not running it) against `python -c pass`, and prints the
median per issue and the ratio. Each issue is planned once, with an empty render cache, so the
parse and render are timed (a cached re-run is far cheaper). Target (issue 12): median <= 1 s.

    python benchmarks/repro_issues.py /path/to/issues
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import installed, median_wall, report

TARGET_S = 1.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--runs", type=int, default=5, help="runs of `python -c pass`")
    args = parser.parse_args()
    contribkit = installed()
    issues = sorted(p for p in args.folder.glob("*.json") if p.name != "labels.json")
    if not issues:
        raise SystemExit(f"no issue JSON in {args.folder}")
    base = median_wall([sys.executable, "-c", "pass"], args.runs)
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in issues:
            out = Path(tmp) / path.stem
            env = {**os.environ, "CONTRIBKIT_CACHE_DIR": str(Path(tmp) / f"cache-{path.stem}")}
            cmd = [contribkit, "repro", "--from-file", str(path), "-o", str(out), "--force"]
            times.append(median_wall(cmd, 1, warmup=0, cwd=tmp, env=env))
    median = statistics.median(times)
    ok = report(
        f"repro --from-file over {len(issues)} issues (one uncached run each)",
        [
            ("python -c pass", base, "", None, None),
            ("contribkit repro (median issue)", median, "python", median / base, None),
            ("contribkit repro (slowest issue)", max(times), "python", max(times) / base, None),
        ],
    )
    met = median <= TARGET_S
    print(f"  target: median <= {TARGET_S:.0f} s per issue: {'met' if met else 'MISSED'}")
    return 0 if ok and met else 1


if __name__ == "__main__":
    raise SystemExit(main())
