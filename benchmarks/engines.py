"""A sweep of 20 repros on the bundled interpreter: ``run --engine ray`` against
``run --engine local -j 2`` on this machine, and an estimate of a large sweep on a cluster.

- Wall time: the bundled example (``contribkit repro --example``) copied into 20 repro folders,
  run on cpu with ``-j 2`` locally and with ``--engine ray`` (a local cluster of ``ray.num_cpus``
  = 2 CPUs, started and stopped by the run: its start is in the figure). Both runs make the
  same cells (checked).
- Estimate: from the Ray run's record, the mean leg cost as the worker measured it (guard,
  bootstrap, leg) and the fixed cost of the run (wall time less the legs' share), a sweep of
  ISSUES x VERSIONS x DEVICES legs on NODES nodes of CPUS slots (cpu legs) and GPUS GPUs (cuda
  legs). A cuda leg is assumed to cost --cuda-factor times a cpu leg (1.22: the figure issue 27
  measured on one H200, not measured here). The estimate assumes legs like the example (a
  small op, torch import dominating); a real sweep's legs vary.

    python benchmarks/engines.py [--nodes 4 --cpus 32 --gpus 8]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SWEEP = 20


def contribkit(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "contribkit", *args],
        cwd=root,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=3600,
    )


def make_sweep(root: Path, env: dict[str, str]) -> list[str]:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (root / "README.md").write_text("benchmark\n")
    git("add", "-A")
    git("-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "init")
    made = contribkit(root, "repro", "--example", env=env)
    if made.returncode != 0:
        raise SystemExit(made.stderr)
    example = next((root / "repros").iterdir())
    names = []
    for i in range(SWEEP):
        name = f"repros/sweep-{i:02d}"
        shutil.copytree(example, root / name)
        names.append(name)
    return names


def timed_run(root: Path, paths: list[str], env: dict[str, str], *args: str) -> tuple[float, Any]:
    start = time.monotonic()
    proc = contribkit(root, "run", "--json", *paths, "--devices", "cpu", *args, env=env)
    wall = time.monotonic() - start
    if not proc.stdout.strip():
        raise SystemExit(proc.stderr)
    return wall, json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--issues", type=int, default=500)
    parser.add_argument("--versions", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--cpus", type=int, default=32, help="cpu leg slots per node")
    parser.add_argument("--gpus", type=int, default=8, help="GPUs per node")
    parser.add_argument("--cuda-factor", type=float, default=1.22)
    args = parser.parse_args()
    try:
        import ray  # noqa: F401
    except ImportError:
        print("benchmarks/engines.py needs Ray: pip install -e '.[ray]'", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        env = {"CONTRIBKIT_CACHE_DIR": str(Path(tmp) / "cache"), "CONTRIBKIT_RAY_NUM_CPUS": "2"}
        paths = make_sweep(root, env)
        contribkit(root, "run", paths[0], "--devices", "cpu", env=env)  # probe cached, warm
        local_wall, local = timed_run(root, paths, env, "-j", "2")
        ray_wall, on_ray = timed_run(root, paths, env, "--engine", "ray", "-j", "2")
    same = [(c["status"], c["verdict"]) for c in local["cells"]] == [
        (c["status"], c["verdict"]) for c in on_ray["cells"]
    ]
    ray_legs = [c["duration_s"] for c in on_ray["cells"]]
    local_legs = [c["duration_s"] for c in local["cells"]]
    leg = sum(ray_legs) / len(ray_legs)
    fixed = max(0.0, ray_wall - sum(ray_legs) / 2)  # cluster start, probe, record
    print(
        f"sweep of {SWEEP} repros (the bundled example), cpu, this machine ({os.cpu_count()} CPUs)"
    )
    print(
        f"  --engine local -j 2: {local_wall:6.1f} s wall, mean leg {sum(local_legs) / SWEEP:.2f} s"
    )
    print(f"  --engine ray  -j 2: {ray_wall:6.1f} s wall, mean leg {leg:.2f} s (worker-measured)")
    print(f"  ratio ray/local: {ray_wall / local_wall:.2f}x; same cells and verdicts: {same}")
    print(f"  fixed cost of a ray run (cluster start, probe, record): {fixed:.1f} s")
    cpu_legs = args.issues * args.versions
    cuda_legs = args.issues * args.versions
    cpu_waves = math.ceil(cpu_legs / (args.nodes * args.cpus))
    cuda_waves = math.ceil(cuda_legs / (args.nodes * args.gpus))
    cpu_s = cpu_waves * leg
    cuda_s = cuda_waves * leg * args.cuda_factor
    total = fixed + max(cpu_s, cuda_s)  # cpu and cuda legs run side by side
    print(
        f"estimate: {args.issues} issues x {args.versions} versions x 2 devices = "
        f"{cpu_legs + cuda_legs} legs on {args.nodes} nodes ({args.cpus} cpu slots, "
        f"{args.gpus} GPUs each)"
    )
    print(f"  cpu legs: {cpu_waves} waves x {leg:.2f} s = {cpu_s / 60:.1f} min")
    print(
        f"  cuda legs: {cuda_waves} waves x {leg * args.cuda_factor:.2f} s = {cuda_s / 60:.1f} min"
    )
    print(
        f"  sweep: about {total / 60:.1f} min (one machine, -j 2: {(cpu_legs + cuda_legs) * leg / 2 / 3600:.1f} h)"
    )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
