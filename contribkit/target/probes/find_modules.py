# Runs in the target interpreter (any Python 3.8+); prints one JSON line. Never imported by contribkit.
# For each module name in argv: can importlib find it? This is the test torch applies to a
# qualified name in TORCH_LOGS (importlib.util.find_spec), so the answer is exact.
import importlib.util
import json
import os
import sys

for name in ("TORCH_LOGS", "TORCH_LOGS_OUT", "TORCH_TRACE"):
    os.environ.pop(name, None)

found = {}
for qname in sys.argv[1:]:
    try:
        found[qname] = importlib.util.find_spec(qname) is not None
    except Exception:  # a missing or broken parent package
        found[qname] = False
print("CONTRIBKIT_PROBE " + json.dumps({"found": found}))
