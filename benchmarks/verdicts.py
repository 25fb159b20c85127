"""Score repro verdicts against a careful human's on a folder of saved issues.

For every ``*.json`` issue in FOLDER, runs ``contribkit repro --from-file F -o DIR --force``,
then ``python DIR/repro.py --device DEVICE`` (``cpu`` by default, with CUDA hidden) under a time
limit, and reads the verdict line. With a
``labels.json`` beside the issues (``{"issues": {"N": {"verdict": ...}}}``) it prints:

- agree: definite verdicts (REPRODUCED / NOT_REPRODUCED) equal to the human's;
- misleading: definite verdicts where the human's differs or is CANNOT_RUN;
- no verdict: scripts that ended without a verdict line (or past the limit);
- CANNOT_RUN counts, and with ``-v`` one row per issue.

    python benchmarks/verdicts.py /path/to/issues-dev [-v] [--limit 120] [--only N,N]
    python benchmarks/verdicts.py /path/to/issues-dev -v --device cuda   # on a GPU machine

The labels are a human's verdicts on CPU: on ``--device cuda`` the agree/misleading columns
compare against them too, so read the rows of CUDA issues, not only the totals.

Issue code runs on this machine: point it only at issues you are willing to run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

DEFINITE = ("REPRODUCED", "NOT_REPRODUCED")
_VERDICT = re.compile(r"^contribkit-verdict:\s+(\S+)\s*(.*)$")


@dataclass
class Row:
    number: str
    human: str | None
    ours: str  # a verdict word, "REFUSED" (repro exit 2), "NONE" (no line) or "TIMEOUT"
    detail: str
    seconds: float

    @property
    def outcome(self) -> str:
        if self.ours not in DEFINITE:
            return "no-verdict" if self.ours in ("NONE", "TIMEOUT") else "cannot"
        if self.human is None:
            return "definite"
        return "agree" if self.ours == self.human else "misleading"


def issue_number(path: Path) -> str:
    match = re.search(r"(\d+)$", path.stem)
    return match.group(1) if match else path.stem


def run_one(path: Path, work: Path, limit: float, human: str | None, device: str = "cpu") -> Row:
    number = issue_number(path)
    out = work / f"issue-{number}"
    env = {**os.environ, "CONTRIBKIT_CONFIG": str(work / "none.toml")}
    command = ["repro", "--from-file", str(path), "-o", str(out), "--force"]
    make = subprocess.run(
        [sys.executable, "-m", "contribkit", *command],
        capture_output=True,
        text=True,
        env=env,
        cwd=work,
    )
    if make.returncode == 2 and not (out / "repro.py").exists():
        detail = (make.stderr.strip().splitlines() or ["refused"])[0]
        return Row(number, human, "REFUSED", detail, 0.0)
    if make.returncode != 0:
        return Row(number, human, "NONE", "repro failed: " + make.stderr.strip()[-200:], 0.0)
    start = time.perf_counter()
    try:
        ran = subprocess.run(
            [sys.executable, str(out / "repro.py"), "--device", device],
            capture_output=True,
            text=True,
            timeout=limit,
            cwd=out,
            env={**env, "CUDA_VISIBLE_DEVICES": ""} if device == "cpu" else env,
        )
    except subprocess.TimeoutExpired:
        return Row(number, human, "TIMEOUT", f"past {limit:.0f} s", time.perf_counter() - start)
    seconds = time.perf_counter() - start
    lines = [line for line in ran.stdout.splitlines() if line.strip()]
    match = _VERDICT.match(lines[-1].strip()) if lines else None
    if match is None:
        return Row(number, human, "NONE", f"exit {ran.returncode}, no verdict line", seconds)
    return Row(number, human, match.group(1), match.group(2), seconds)


def summary(rows: list[Row]) -> str:
    outcomes = Counter(row.outcome for row in rows)
    ours = Counter(row.ours for row in rows)
    labelled = [row for row in rows if row.human is not None]
    definite = sum(1 for row in labelled if row.human in DEFINITE)
    parts = [
        f"issues: {len(rows)}",
        f"human definite: {definite}",
        f"agree: {outcomes['agree']}",
        f"misleading: {outcomes['misleading']}",
        f"no verdict: {outcomes['no-verdict']}",
        f"CANNOT_RUN: {ours['CANNOT_RUN']}",
        f"refused: {ours['REFUSED']}",
        f"ours REPRODUCED: {ours['REPRODUCED']}",
        f"ours NOT_REPRODUCED: {ours['NOT_REPRODUCED']}",
    ]
    return "\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("-v", "--verbose", action="store_true", help="one row per issue")
    parser.add_argument("--limit", type=float, default=150.0, help="seconds per script")
    parser.add_argument("--only", default="", help="comma-separated issue numbers")
    parser.add_argument("--keep", type=Path, help="write the repros here instead of a temp dir")
    parser.add_argument(
        "--device", default="cpu", choices=("cpu", "cuda"), help="the scripts' --device"
    )
    args = parser.parse_args()
    args.folder = args.folder.resolve()  # repro runs in another folder: no relative paths
    labels_file = args.folder / "labels.json"
    labels = json.loads(labels_file.read_text())["issues"] if labels_file.exists() else {}
    only = {n.strip() for n in args.only.split(",") if n.strip()}
    paths = sorted(
        (p for p in args.folder.glob("*.json") if p.name != "labels.json"),
        key=lambda p: int(issue_number(p)) if issue_number(p).isdigit() else 0,
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for path in paths:
            number = issue_number(path)
            if only and number not in only:
                continue
            human = labels.get(number, {}).get("verdict")
            row = run_one(path, work, args.limit, human, args.device)
            rows.append(row)
            if args.verbose:
                print(
                    f"{row.number:>7} human={row.human or '-':<15} ours={row.ours:<15}"
                    f" {row.outcome:<11} {row.seconds:5.1f}s  {row.detail[:110]}",
                    flush=True,
                )
    print(summary(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
