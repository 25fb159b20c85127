"""Refresh contribkit/data/torch_logs_fallback.json from an installed torch's TORCH_LOGS registry.

The fallback list is what `contribkit debug` checks log names against when the target
interpreter cannot import torch. Refresh it when a new torch release adds or removes names:

    python scripts/update_torch_logs_fallback.py [--python PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from contribkit.run.probe import probe_source, run_probe

ROOT = Path(__file__).resolve().parent.parent
FALLBACK = ROOT / "contribkit" / "data" / "torch_logs_fallback.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter with torch")
    args = parser.parse_args()
    raw = run_probe(args.python, probe_source("torch_logs.py"), scrub=())
    if not raw.get("torch"):
        print(f"torch is not importable by {args.python}: {raw.get('error')}", file=sys.stderr)
        return 1
    doc = {
        "torch_version": raw["torch_version"].split("+")[0],  # the names do not vary by build
        "components": raw["components"],
        "artifacts": raw["artifacts"],
    }
    FALLBACK.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {FALLBACK} from torch {raw['torch_version']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
