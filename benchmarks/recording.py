"""The execution evidence's recording changes nothing torch.compile does, and costs little.

For every ``*.json`` issue in FOLDER whose repro calls torch.compile, writes the repro
(``contribkit repro --from-file``), runs it with the recording on and off
(``CONTRIBKIT_REPRO_RECORD=0``), and compares what dynamo did (frames, graphs, graph breaks,
recompiles), what the code printed (timings and addresses masked), and the verdict; then the
time of every issue's script with the recording on against off, measured in the same run.

    python benchmarks/recording.py /path/to/issues-dev [--only N,N]

Issue code runs on this machine: point it only at issues you are willing to run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from contribkit.target.reprojudge import comparable_lines


def write_repro(path: Path, work: Path) -> Path | None:
    out = work / path.stem
    env = {**os.environ, "CONTRIBKIT_CONFIG": str(work / "none.toml")}
    command = ["repro", "--from-file", str(path), "-o", str(out), "--force"]
    made = subprocess.run(
        [sys.executable, "-m", "contribkit", *command], capture_output=True, env=env
    )
    return out / "repro.py" if made.returncode == 0 and (out / "repro.py").exists() else None


def run(script: Path, record: bool) -> tuple[dict[str, Any] | None, list[str], float]:
    env = {
        **os.environ,
        "CUDA_VISIBLE_DEVICES": "",
        "CONTRIBKIT_REPRO_RECORD": "1" if record else "0",
    }
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(script), "--device", "cpu", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=script.parent,
        env=env,
    )
    seconds = time.perf_counter() - start
    lines = proc.stdout.strip().splitlines()
    try:
        doc = json.loads(lines[-1]) if lines else None
    except ValueError:
        doc = None
    return doc, comparable_lines(lines[:-1]), seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--only", default="", help="comma-separated issue numbers")
    args = parser.parse_args()
    only = {n.strip() for n in args.only.split(",") if n.strip()}
    paths = sorted(p for p in args.folder.resolve().glob("*.json") if p.name != "labels.json")
    compiled = same = 0
    on_total = off_total = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            if only and path.stem.rsplit("-", 1)[-1] not in only:
                continue
            script = write_repro(path, Path(tmp))
            if script is None:
                continue
            meta = json.loads((script.parent / "meta.json").read_text())
            on, printed_on, t_on = run(script, True)
            off, printed_off, t_off = run(script, False)
            on_total, off_total = on_total + t_on, off_total + t_off
            if not meta.get("uses_compile"):
                continue
            compiled += 1
            counts_on = ((on or {}).get("evidence") or {}).get("compile")
            counts_off = ((off or {}).get("evidence") or {}).get("compile")
            verdicts = [(d or {}).get("verdict") for d in (on, off)]
            equal = (
                counts_on == counts_off and printed_on == printed_off and verdicts[0] == verdicts[1]
            )
            same += equal
            print(f"{path.stem:>22} {'same' if equal else 'DIFFERENT':<9} {counts_on} {verdicts}")
    print(f"compile issues: {compiled}, identical with the recording on and off: {same}")
    ratio = on_total / off_total if off_total else float("nan")
    print(f"all scripts: {on_total:.1f} s recorded, {off_total:.1f} s not (ratio {ratio:.2f})")
    return 0 if same == compiled else 1


if __name__ == "__main__":
    raise SystemExit(main())
