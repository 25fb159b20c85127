"""Start-up cost of the CLI and of the hook entry points, as ratios in one run.

Baselines: ``python -c pass`` always, and ``gh --help`` when gh is installed, run in turn with
``contribkit --help`` (a change in the machine's load weighs on each alike).
Target (issues 2 and 25): ``contribkit --help`` median <= 1.3x ``gh --help``.

    python benchmarks/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import installed, interleaved_times, median_wall, report

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
    gh = shutil.which("gh")
    # python, gh and contribkit in turn, so that the machine's load weighs on each alike
    cmds = [
        [sys.executable, "-c", "pass"],
        [contribkit, "--help"],
        *([[gh, "--help"]] if gh else []),
    ]
    times = interleaved_times(cmds, args.runs)
    base, ck = times[0].wall, times[1].wall
    rows: list[tuple[str, float, str, float | None, float | None]] = [
        ("python -c pass", base, "", None, None)
    ]
    if gh:
        gh_time = times[2].wall
        rows.append(("gh --help", gh_time, "python", gh_time / base, None))
    rows.append(("contribkit --help", ck, "python", ck / base, None))
    if gh:
        rows.append(("contribkit --help vs gh --help", ck, "gh", ck / gh_time, 1.3))
    for entry in hook_entry_points():
        t = median_wall([installed(entry), "--help"], args.runs)
        rows.append((f"{entry} --help", t, "python", t / base, None))
    ok = report(
        f"startup ({args.runs} runs, medians of wall time; python, gh, contribkit interleaved)",
        rows,
    )
    # The same runs' CPU time (gh's counts all of the Go runtime's threads).
    names = ["python -c pass", "contribkit --help", "gh --help"]
    cpu_rows: list[tuple[str, float, str, float | None, float | None]] = [
        (name, t.cpu, "python", t.cpu / times[0].cpu if i else None, None)
        for i, (name, t) in enumerate(zip(names, times, strict=False))
    ]
    report("the same runs, medians of CPU time (user + system)", cpu_rows)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
