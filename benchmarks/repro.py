"""`contribkit repro --offline` from the cache, measured against `python -c pass` in one run.

Target (issue 3): median <= 300 ms wall. The cache is seeded with the bundled example issue in a
temporary cache dir, so no network is used.

    python benchmarks/repro.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import installed, median_wall, report

TARGET_MS = 300


def seed_cache(cache_dir: Path) -> str:
    """Put the example issue into the cache as if fetched from GitHub; return its reference."""
    from contribkit.core.cache import JsonCache
    from contribkit.core.config import load_settings
    from contribkit.github.sources import _cache_key, example_issue

    issue = example_issue().issue
    settings = load_settings({"cache_dir": str(cache_dir)})
    repo, number = "pytorch/pytorch", 4242
    JsonCache(cache_dir, "issues").put(
        _cache_key(settings, repo, number), {"etag": '"bench"', "issue": issue.as_dict()}
    )
    return f"{repo}#{number}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    contribkit = installed()
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        ref = seed_cache(cache)
        env = {
            **os.environ,
            "CONTRIBKIT_CACHE_DIR": str(cache),
            "CONTRIBKIT_CONFIG": str(Path(tmp) / "none.toml"),
        }
        base = median_wall([sys.executable, "-c", "pass"], args.runs)
        cmd = [contribkit, "repro", ref, "--offline", "-o", str(Path(tmp) / "out"), "--force"]
        t = median_wall(cmd, args.runs, env=env, cwd=tmp)
    ok = report(
        f"repro --offline ({args.runs} runs, medians)",
        [
            ("python -c pass", base, "", None, None),
            ("contribkit repro --offline", t, "python", t / base, None),
        ],
    )
    met = t * 1000 <= TARGET_MS
    print(f"  target: median <= {TARGET_MS} ms: {'met' if met else 'MISSED'}")
    return 0 if ok and met else 1


if __name__ == "__main__":
    raise SystemExit(main())
