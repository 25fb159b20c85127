"""How the hooks and ``pr --check`` judge what PyTorch really merged.

1. The commit-msg rules (:func:`contribkit.conventions.commitmsg.check_message`, with the
   ``[hooks]`` settings as configured: defaults, ``CONTRIBKIT_HOOKS_*``, the user config) over a
   JSON list of merged titles (``[{"pr": N, "title": "…"}, …]``): how many the profile blocks,
   how many it only warns about.
2. ``contribkit pr --check BODY --title TITLE`` (the real command, outside any repository) over a
   folder of PR bodies (``prN.md``, with ``titles.tsv``: ``N<TAB>title``): how many fail.

Then the rules that fired, with counts. The default profile must block none of them: every
title and body here was accepted upstream.

    python benchmarks/conventions.py SAMPLE_DIR [--titles FILE] [--bodies DIR] [--strict]

SAMPLE_DIR is a folder (of your own, outside the repository) that holds merged-titles.json and
pr-bodies/.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from contribkit.conventions.commitmsg import check_message  # noqa: E402
from contribkit.core.config import load_settings  # noqa: E402


def check_titles(path: Path, strict: bool) -> tuple[int, int, int, collections.Counter[str]]:
    """``(blocked, warned, total, rules fired)`` for the titles in ``path``."""
    settings = load_settings()
    titles = [entry["title"] for entry in json.loads(path.read_text(encoding="utf-8"))]
    fired: collections.Counter[str] = collections.Counter()
    blocked = warned = 0
    for title in titles:
        found = check_message(
            [title],
            title_max_length=settings.integer("hooks.title_max_length"),
            body_max_length=settings.integer("hooks.body_max_length"),
            title_style=settings.text("hooks.title_style"),
            conventional_types=settings.names("hooks.conventional_types"),
            allow_wip=settings.flag("hooks.allow_wip"),
        )
        fired.update(v.rule.id for v in found)
        if any(v.blocks(strict) for v in found):
            blocked += 1
        elif found:
            warned += 1
    return blocked, warned, len(titles), fired


def check_bodies(folder: Path, strict: bool) -> tuple[list[str], int, collections.Counter[str]]:
    """``(names that failed, total, rules fired)`` for the PR bodies in ``folder``."""
    titles = {}
    tsv = folder / "titles.tsv"
    if tsv.is_file():
        for line in tsv.read_text(encoding="utf-8").splitlines():
            number, _, title = line.partition("\t")
            titles[f"pr{number.strip()}.md"] = title
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if strict:
        env["CONTRIBKIT_HOOKS_STRICT"] = "1"
    failed: list[str] = []
    fired: collections.Counter[str] = collections.Counter()
    bodies = sorted(folder.resolve().glob("*.md"))
    with tempfile.TemporaryDirectory() as outside:  # no repository: only the body is checked
        for body in bodies:
            cmd = [sys.executable, "-m", "contribkit", "pr", "--check", str(body), "--json"]
            if body.name in titles:
                cmd += ["--title", titles[body.name]]
            proc = subprocess.run(cmd, cwd=outside, env=env, capture_output=True, text=True)
            if proc.returncode not in (0, 1):
                raise SystemExit(f"{body.name}: pr --check failed: {proc.stderr.strip()}")
            result = json.loads(proc.stdout)
            fired.update(v["id"] for v in result["violations"])
            if not result["ok"]:
                failed.append(body.name)
    return failed, len(bodies), fired


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sample", type=Path, help="a folder with merged-titles.json and pr-bodies/")
    parser.add_argument("--titles", type=Path, help="default: SAMPLE/merged-titles.json")
    parser.add_argument("--bodies", type=Path, help="default: SAMPLE/pr-bodies")
    parser.add_argument("--strict", action="store_true", help="as with hooks.strict = true")
    args = parser.parse_args()
    titles = args.titles or args.sample / "merged-titles.json"
    bodies = args.bodies or args.sample / "pr-bodies"
    if not titles.is_file() or not bodies.is_dir():
        parser.error(f"no {titles} or {bodies}: pass the sample folder")
    profile = "strict" if args.strict else "default"
    blocked, warned, total, title_rules = check_titles(titles, args.strict)
    failed, count, body_rules = check_bodies(bodies, args.strict)
    print(f"profile: {profile}")
    print(f"titles: {blocked} blocked, {warned} warned, {total} total ({titles})")
    print(f"bodies: {len(failed)} failed of {count} ({bodies})" + (f": {failed}" if failed else ""))
    for name, fired in (("titles", title_rules), ("bodies", body_rules)):
        shown = ", ".join(f"{rule} {n}" for rule, n in sorted(fired.items())) or "none"
        print(f"rules fired on {name}: {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
