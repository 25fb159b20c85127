"""Start-up cost of the CLI and of the hook entry points, as ratios in one run.

Baselines: ``python -c pass`` always, and ``gh --help`` when gh is installed.
Target (issue 2): ``contribkit --help`` median <= 1.3x ``gh --help``.

    python benchmarks/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import installed, median_wall, report

ROOT = Path(__file__).resolve().parent.parent


def hook_entry_points() -> list[str]:
    """Console scripts of the published hooks (from .pre-commit-hooks.yaml)."""
    import yaml

    manifest = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()) or []
    return sorted({hook["entry"].split()[0] for hook in manifest})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    contribkit = installed()
    base = median_wall([sys.executable, "-c", "pass"], args.runs)
    rows: list[tuple[str, float, str, float | None, float | None]] = [
        ("python -c pass", base, "", None, None)
    ]
    gh = shutil.which("gh")
    gh_time = median_wall([gh, "--help"], args.runs) if gh else None
    if gh_time:
        rows.append(("gh --help", gh_time, "python", gh_time / base, None))
    ck = median_wall([contribkit, "--help"], args.runs)
    rows.append(("contribkit --help", ck, "python", ck / base, None))
    if gh_time:
        rows.append(("contribkit --help vs gh --help", ck, "gh", ck / gh_time, 1.3))
    for entry in hook_entry_points():
        t = median_wall([installed(entry), "--help"], args.runs)
        rows.append((f"{entry} --help", t, "python", t / base, None))
    ok = report(f"startup ({args.runs} runs, medians)", rows)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
