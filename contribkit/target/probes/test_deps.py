# Runs in the target interpreter (any Python 3.8+); prints one JSON line. Never imported by contribkit.
# Which of the modules PyTorch's test files import (beside torch) this interpreter can find.
import importlib.util
import json
import sysconfig

MODULES = ("pytest", "numpy", "expecttest", "hypothesis")
found = {}
for name in MODULES:
    try:
        found[name] = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a broken package counts as missing
        found[name] = False
print(
    "CONTRIBKIT_PROBE "
    + json.dumps({"purelib": sysconfig.get_paths().get("purelib"), "found": found})
)
