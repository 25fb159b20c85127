"""How far `contribkit bench`'s verdicts can be trusted on this machine, measured in one run.

- False alarms: in a repo where HEAD only changes a comment of ``HEAD~1``, how many of R runs of
  ``contribkit bench 'work()' --baseline HEAD~1`` report a significant change (goal: 0).
- Sensitivity: where HEAD makes ``work()`` do P% more of the same work (a loop of N iterations
  becomes N * (1 + P/100)), in how many of R runs each P is reported 'slower'. The smallest P
  found in every run is the smallest slowdown detected reliably.
- Per clock: ``--timers wall,cpu`` runs each repo with ``--timer wall`` and then ``--timer cpu``,
  one after the other, so both clocks see the same changes under the same load.

``--device cpu`` times a pure-Python loop; ``--device cuda`` a loop of small matrix products on
the GPU (torch.utils.benchmark synchronises CUDA). The runs alternate between the no-op and the
slowdowns, so a change in the machine's load weighs on each alike. Every figure comes with the
machine it was measured on; a shared, loaded machine gives wider intervals (fewer detections),
not more false alarms, if the blocks' alternation does its job.

    python benchmarks/bench_noise.py [--runs 10] [--repeats 3] [--slowdowns 10,25,50,100]
        [--device cpu|cuda] [--timers wall,cpu] [--blocks 8] [--min-time 0.05] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

CPU_MODULE = """\
N = {n}


def work():
    total = 0
    for i in range(N):
        total += i * i
    return total
"""
CUDA_MODULE = """\
import torch

N = {n}


def work(a):
    for _ in range(N):
        a = torch.mm(a, a).clamp_(-1, 1)
    return a
"""
BASE_N = {"cpu": 2000, "cuda": 100}
SETUP = {
    "cpu": "from work import work",
    "cuda": "from work import work; a = torch.rand(256, 256, device=device) / 256",
}
STMT = {"cpu": "work()", "cuda": "work(a)"}


@dataclass
class Outcome:
    change: str  # "no-op" or "+P%"
    timer: str  # "wall" or "cpu"
    verdict: str
    ratio: float
    low: float | None
    high: float | None
    seconds: float


@dataclass
class Figures:
    device: str
    machine: str
    torch: str
    blocks: int
    min_time: float
    outcomes: list[Outcome] = field(default_factory=list)


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=b@example.com", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def make_repo(root: Path, device: str, percent: float | None) -> None:
    """HEAD~1 with N iterations; HEAD with a comment changed (None) or N * (1 + percent/100)."""
    template = CPU_MODULE if device == "cpu" else CUDA_MODULE
    base = BASE_N[device]
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "work.py").write_text(template.format(n=base))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    if percent is None:
        text = "# a comment\n" + template.format(n=base)
    else:
        text = template.format(n=round(base * (1 + percent / 100)))
    (root / "work.py").write_text(text)
    git(root, "commit", "-qam", "change")


def bench(root: Path, device: str, timer: str, blocks: int, min_time: float) -> dict[str, object]:
    cmd = [sys.executable, "-m", "contribkit", "bench", STMT[device], "--setup", SETUP[device]]
    cmd += ["--baseline", "HEAD~1", "--devices", device, "--blocks", str(blocks)]
    cmd += ["--timer", timer]
    cmd += ["--min-time", str(min_time), "--json"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"contribkit bench failed in {root}:\n{proc.stderr}")
    data: dict[str, object] = json.loads(proc.stdout)
    return data


def plan_runs(runs: int, repeats: int, slowdowns: list[float]) -> list[float | None]:
    """The changes in the order they run: the no-op runs spread between the slowdown runs, so
    drift in the load weighs on each alike."""
    plan: list[float | None] = []
    pending = [p for _ in range(repeats) for p in slowdowns]
    for i in range(max(runs, len(pending))):
        if i < runs:
            plan.append(None)
        if i < len(pending):
            plan.append(pending[i])
    return plan


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of the no-op change")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each slowdown")
    parser.add_argument("--slowdowns", default="10,25,50,100", help="percentages")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument(
        "--timers", default="wall,cpu", help="bench's --timer values, each run on every repo"
    )
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--min-time", type=float, default=0.05)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    slowdowns = [float(p) for p in args.slowdowns.split(",") if p]
    timers = [t for t in args.timers.split(",") if t]
    if args.device == "cuda" and "cpu" in timers:
        parser.error("--timer cpu cannot time cuda: pass --timers wall")
    plan = plan_runs(args.runs, args.repeats, slowdowns)
    figures: Figures | None = None
    with tempfile.TemporaryDirectory(prefix="bench-noise-") as scratch:
        for index, percent in enumerate(plan):
            root = Path(scratch) / f"r{index}"
            make_repo(root, args.device, percent)
            for timer in timers:  # the same repo, one clock after the other
                start = time.monotonic()
                data = bench(root, args.device, timer, args.blocks, args.min_time)
                results, env = data["results"], data["environment"]
                assert isinstance(results, list) and isinstance(env, dict)
                row = results[0]
                if figures is None:
                    figures = Figures(
                        args.device, env["machine"], env["torch"], args.blocks, args.min_time
                    )
                change = "no-op" if percent is None else f"+{percent:g}%"
                outcome = Outcome(
                    change, timer, row["verdict"], row["ratio"], row["low"], row["high"],
                    round(time.monotonic() - start, 1),
                )  # fmt: skip
                figures.outcomes.append(outcome)
                interval = f"({outcome.low:.3f}-{outcome.high:.3f})" if outcome.low else ""
                print(
                    f"[{index + 1}/{len(plan)}] {change:>6} {timer:>4}: {outcome.ratio:.3f}x "
                    f"{interval} {outcome.verdict} ({outcome.seconds:.0f} s, "
                    f"load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
                if args.json:
                    args.json.write_text(json.dumps(asdict(figures), indent=2) + "\n")
    assert figures is not None
    for timer in timers:
        report(figures, timer, slowdowns)
    return 0


def report(figures: Figures, timer: str, slowdowns: list[float]) -> None:
    outcomes = [o for o in figures.outcomes if o.timer == timer]
    print(
        f"\n--timer {timer}: {figures.device} on {figures.machine}, torch {figures.torch}; "
        f"{figures.blocks} blocks per side of >= {figures.min_time:g} s; verdicts at 99% "
        "confidence"
    )
    noop = [o for o in outcomes if o.change == "no-op"]
    alarms = sum(o.verdict in ("slower", "faster") for o in noop)
    print(f"no-op change: {alarms} of {len(noop)} runs report a significant change")
    reliable = None  # the smallest P detected in every run, as is every larger one
    for p in sorted(slowdowns):
        runs = [o for o in outcomes if o.change == f"+{p:g}%"]
        hits = sum(o.verdict == "slower" for o in runs)
        ratios = ", ".join(f"{o.ratio:.3f}" for o in runs)
        print(f"+{p:g}% work: 'slower' in {hits} of {len(runs)} runs (ratios {ratios})")
        every = bool(runs) and hits == len(runs)
        reliable = (reliable if reliable is not None else p) if every else None
    print(
        "smallest slowdown detected in every run: "
        + (f"+{reliable:g}%" if reliable is not None else "none of those tried")
    )


if __name__ == "__main__":
    raise SystemExit(main())
