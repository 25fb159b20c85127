"""`contribkit repro` on an issue of 20,000 code blocks against the same on a normal issue.

The normal issue is the bundled example; the large ones are that issue with 20,000 blocks
appended, in two shapes: distinct one-line Python blocks (``x7 = torch.ones(2)``, a program
that grows with each block) and bare untagged blocks (``v7``, the most blocks that fit under the
parser's 200,000-character cap). Both run past the cap, so a step that reads the raw body instead
of the text the parser read shows here. Runs alternate (normal, large, normal, ...) and each run
gets an empty cache, so the parse and render are timed every time.
Target (issue 25): each large issue at or under 2x the normal one, in wall time. The same runs'
CPU times follow (informative: on a machine others load, they move far less than the wall times).

    python benchmarks/repro_blocks.py [--runs N] [--blocks N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import Timing, installed, report, run_timed

TARGET = 2.0
SHAPES: dict[str, Callable[[int], str]] = {
    "python": lambda i: f"```python\nx{i} = torch.ones({i % 7 + 1})\n```\n",
    "bare": lambda i: f"```\nv{i}\n```\n",
}


def write_issues(folder: Path, blocks: int) -> dict[str, Path]:
    """The example issue as saved JSON, and one copy per shape with ``blocks`` blocks appended."""
    example = json.loads(
        resources.files("contribkit.data").joinpath("example_issue.json").read_text("utf-8")
    )
    paths = {"normal": folder / "normal.json"}
    paths["normal"].write_text(json.dumps(example), encoding="utf-8")
    for shape, block in SHAPES.items():
        large = {**example, "body": example["body"] + "".join(block(i) for i in range(blocks))}
        paths[shape] = folder / f"{shape}.json"
        paths[shape].write_text(json.dumps(large), encoding="utf-8")
    return paths


def time_runs(
    contribkit: str, issues: dict[str, Path], folder: Path, runs: int
) -> dict[str, Timing]:
    """Medians of ``repro --from-file`` per issue (wall and CPU time), the issues run in turn,
    each run with a cache folder of its own (an empty render cache)."""
    walls: dict[str, list[float]] = {name: [] for name in issues}
    cpus: dict[str, list[float]] = {name: [] for name in issues}
    for run in range(runs + 1):  # the first round warms the disk cache and is dropped
        for name, path in issues.items():
            cache = folder / f"cache-{name}-{run}"
            env = {**os.environ, "CONTRIBKIT_CACHE_DIR": str(cache)}
            cmd = [contribkit, "repro", "--from-file", str(path), "-o", str(folder / name)]
            wall, cpu = run_timed([*cmd, "--force"], env=env, cwd=folder)
            if run:
                walls[name].append(wall)
                cpus[name].append(cpu)
    return {
        name: Timing(statistics.median(walls[name]), statistics.median(cpus[name]))
        for name in issues
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--blocks", type=int, default=20_000)
    args = parser.parse_args()
    contribkit = installed()
    with tempfile.TemporaryDirectory() as tmp:
        issues = write_issues(Path(tmp), args.blocks)
        medians = time_runs(contribkit, issues, Path(tmp), args.runs)
    base = medians["normal"]
    rows: list[tuple[str, float, str, float | None, float | None]] = [
        ("repro, the example issue", base.wall, "", None, None)
    ]
    cpu_rows: list[tuple[str, float, str, float | None, float | None]] = [
        ("repro, the example issue", base.cpu, "", None, None)
    ]
    for shape in SHAPES:
        label = f"repro, {args.blocks:,} {shape} blocks"
        rows.append((label, medians[shape].wall, "normal", medians[shape].wall / base.wall, TARGET))
        cpu_rows.append((label, medians[shape].cpu, "normal", medians[shape].cpu / base.cpu, None))
    ok = report(
        f"repro --from-file, empty cache ({args.runs} runs each, medians of wall time)", rows
    )
    # The same runs' CPU time: what each run costs, whatever the others on the machine do.
    report("the same runs, medians of CPU time (user + system)", cpu_rows)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
