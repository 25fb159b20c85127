"""Wall time of `contribkit triage` with -j 2 against -j 1, measured in one run.

The sweep is the triage tests' own (tests/sweephelpers.py): two repros made by `contribkit repro
--from-file` (relu breaks in 2.9.0, an empty sum is fixed there), run with --issues on three
interpreters: stand-in torch 2.8.0 and 2.9.0, and the interpreter running this benchmark (the
real CPU torch, whose import is most of a leg's cost). Six CPU legs; -j 2 runs two at a time.
The torch probes are cached by the warm-up run, as they are for a triager. The two commands run
in turn, so that a change in the machine's load weighs on each alike. Target: -j 2 <= 0.75x -j 1
on a machine with two free cores.

    python benchmarks/triage.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).parent))
from _timing import installed, interleaved_medians, report

from tests import sweephelpers as sh


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    contribkit = installed()
    with tempfile.TemporaryDirectory(prefix="contribkit-bench-triage-") as tmp:
        base = Path(tmp)
        root = base / "fork"
        root.mkdir()
        sh.git(root, "init", "-q", "-b", "main")
        sh.git(
            root,
            "-c",
            "user.name=bench",
            "-c",
            "user.email=b@example.com",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        )
        env = {**os.environ, "CONTRIBKIT_CACHE_DIR": str(base / "cache")}
        for number, text in ((12, sh.RELU_ISSUE), (13, sh.SUM_ISSUE)):
            issue = base / f"{number}.md"
            issue.write_text(text)
            subprocess.run(
                [contribkit, "repro", "--from-file", str(issue), "-o", f"repros/issue-{number}"],
                cwd=root,
                env=env,
                check=True,
                capture_output=True,
            )
        (base / "issues.txt").write_text("12\n13\n")
        pythons = [
            sh.standin_python(base / "t28", "2.8.0", sum_broken=True),
            sh.standin_python(base / "t29", "2.9.0", relu_broken=True),
            sys.executable,
        ]
        common = [contribkit, "triage", "--issues", str(base / "issues.txt"), "--devices", "cpu"]
        common += [a for p in pythons for a in ("--python", p)]
        one, two = interleaved_medians(
            [[*common, "-j", "1"], [*common, "-j", "2"]],
            runs=args.runs,
            warmup=1,
            cwd=root,
            env=env,
        )
    ok = report(
        f"triage, 2 repros x 3 interpreters ({args.runs} runs, medians; {os.cpu_count()} CPUs)",
        [
            ("contribkit triage -j 1 (6 legs)", one, "", None, None),
            ("contribkit triage -j 2 (6 legs)", two, "-j 1", two / one, 0.75),
        ],
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
