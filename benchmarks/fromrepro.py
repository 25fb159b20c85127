"""Count the regression tests ``contribkit test --from-repro`` writes for a folder of saved issues.

For every ``*.json`` issue in FOLDER: ``contribkit repro --from-file F -o DIR --force`` in a
scratch git repository shaped like a PyTorch fork, then ``contribkit test --from-repro DIR --path
test/test_issue_N.py`` (which runs repro.py once for the verdict), then the written tests under
pytest. It prints, with ``-v`` one row per issue:

- written: tests written (of the issues), then all of them run in one pytest process;
- REPRODUCED repros whose test fails (it should: the bug is there), NOT_REPRODUCED repros whose
  test passes (it should: the bug is gone here);
- refused, grouped by the first words of the reason.

    python benchmarks/fromrepro.py /path/to/issues-dev [-v] [--only N,N] [--keep DIR]

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
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

_VERDICT = re.compile(r"^contribkit-verdict:\s+(\S+)\s*(.*)$")
FORK = {
    "test/test_nn.py": '# Owner(s): ["module: nn"]\n',
    "torch/nn/functional.py": "def relu(x):\n    return x\n",
}


@dataclass
class Row:
    number: str
    verdict: str
    written: bool
    test: str  # "failed", "passed", "error", "" (not written)
    detail: str

    @property
    def outcome(self) -> str:
        if not self.written:
            return "refused"
        if self.verdict == "REPRODUCED":
            return "reproduced, test fails" if self.test == "failed" else "reproduced, test passes"
        if self.verdict == "NOT_REPRODUCED":
            return (
                "not reproduced, test passes" if self.test == "passed" else "not reproduced, fails"
            )
        return f"{self.verdict.lower()}, test {self.test}"


def make_fork(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in FORK.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for argv in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "init"],
    ):
        subprocess.run(["git", *argv], cwd=root, check=True)


def contribkit(fork: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONTRIBKIT_CONFIG": str(fork.parent / "none.toml")}
    return subprocess.run(
        [sys.executable, "-m", "contribkit", *args],
        capture_output=True,
        text=True,
        cwd=fork,
        env={**env, "CUDA_VISIBLE_DEVICES": ""},
    )


_SAID = re.compile(r"\b(REPRODUCED|NOT_REPRODUCED|CANNOT_RUN)\b")
# "the repro REPRODUCED (latest verdict, ...: default: CANNOT_RUN ...; cpu: REPRODUCED ...)":
# the verdict the gate read comes first; the legs' words follow.
_GATE_SAID = re.compile(r"\bthe repro (REPRODUCED|NOT_REPRODUCED|CANNOT_RUN) \(latest verdict")


def run_one(path: Path, fork: Path) -> Row:
    """Write the repro and, where ``test --from-repro`` agrees, its test (not run yet); the
    verdict is the one ``test --from-repro`` read (it runs repro.py once)."""
    number = re.sub(r"\D", "", path.stem) or path.stem
    out = fork / "repros" / f"issue-{number}"
    made = contribkit(fork, "repro", "--from-file", str(path), "-o", str(out), "--force")
    if made.returncode != 0:
        return Row(number, "NONE", False, "", "repro: " + made.stderr.strip()[:150])
    rel = f"test/test_issue_{number}.py"
    wrote = contribkit(fork, "test", "--from-repro", str(out), "--path", rel, "--json")
    if wrote.returncode != 0:
        reason = wrote.stderr.strip().splitlines()[0] if wrote.stderr.strip() else "?"
        said = _SAID.search(reason.split("latest verdict", 1)[-1])
        verdict = said.group(1) if said else "NONE"
        return Row(number, verdict, False, "", reason.removeprefix("contribkit: error: ")[:200])
    notes = " ".join(json.loads(wrote.stdout).get("notes") or [])
    said = _GATE_SAID.search(notes) or _SAID.search(notes.split("latest verdict", 1)[-1])
    return Row(number, said.group(1) if said else "NONE", True, "", rel)


def run_tests(fork: Path, rows: list[Row], limit: float) -> None:
    """Run every written test in one pytest process and note whether each file failed."""
    written = [row for row in rows if row.written]
    if not written:
        return
    try:
        tested = subprocess.run(
            [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "-q"]
            + [row.detail for row in written],
            capture_output=True,
            text=True,
            cwd=fork,
            timeout=limit * len(written),
            env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
        )
        report = tested.stdout
    except subprocess.TimeoutExpired:
        report = ""
    for row in written:
        path = re.escape(row.detail)
        words = set(re.findall(r"^(PASSED|FAILED|ERROR) " + path, report, re.M))
        words |= {"SKIPPED"} if re.search(r"^SKIPPED \[\d+\] " + path, report, re.M) else set()
        failed, passed = words & {"FAILED", "ERROR"}, "PASSED" in words
        row.test = "failed" if failed else "passed" if passed else "skipped" if words else "error"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("-v", "--verbose", action="store_true", help="one row per issue")
    parser.add_argument("--limit", type=float, default=300.0, help="seconds per script or test")
    parser.add_argument("--only", default="", help="comma-separated issue numbers")
    parser.add_argument("--keep", type=Path, help="make the scratch fork here (kept)")
    args = parser.parse_args()
    only = {n.strip() for n in args.only.split(",") if n.strip()}
    paths = sorted(p for p in args.folder.resolve().glob("*.json") if p.name != "labels.json")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        fork = (args.keep or Path(tmp)).resolve() / "pytorch"
        make_fork(fork)
        for path in paths:
            if only and re.sub(r"\D", "", path.stem) not in only:
                continue
            rows.append(run_one(path, fork))
        run_tests(fork, rows, args.limit)
    if args.verbose:
        for row in rows:
            print(f"{row.number:>7} {row.verdict:<15} {row.outcome:<28} {row.detail}")
    outcomes = Counter(row.outcome for row in rows)
    print(f"issues: {len(rows)}, tests written: {sum(row.written for row in rows)}")
    for outcome, count in sorted(outcomes.items()):
        print(f"  {outcome}: {count}")
    reasons = Counter(" ".join(row.detail.split()[1:9]) for row in rows if not row.written)
    for reason, count in reasons.most_common():
        print(f"  refused ({count}): ...{reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
