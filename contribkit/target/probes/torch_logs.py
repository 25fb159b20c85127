# Runs in the target interpreter (any Python 3.8+); prints one JSON line. Never imported by contribkit.
# Reports torch's TORCH_LOGS registry (components, artifacts) and where modules can be found, so
# that contribkit can check log names without importing torch itself.
import json
import os
import sys
import sysconfig
from typing import Any

# A TORCH_LOGS from the caller's shell must not change (or break) what we read.
for name in ("TORCH_LOGS", "TORCH_LOGS_OUT", "TORCH_TRACE"):
    os.environ.pop(name, None)

cwd = os.getcwd()
info: "dict[str, Any]" = {
    "executable": sys.executable,
    "purelib": sysconfig.get_paths().get("purelib"),
    "search_path": [p for p in sys.path if p and os.path.isabs(p) and p != cwd],
    "builtin_modules": sorted(sys.builtin_module_names),
    "torch": False,
}
try:
    import torch
    from torch._logging._internal import log_registry
except Exception as exc:  # ImportError, or a broken build
    info["error"] = type(exc).__name__ + ": " + str(exc)
else:
    info["torch"] = True
    info["torch_version"] = torch.__version__
    info["torch_path"] = os.path.dirname(torch.__file__)
    info["debug"] = bool(getattr(torch.version, "debug", False))
    info["cuda_build"] = getattr(torch.version, "cuda", None)
    descriptions: "dict[str, str]" = getattr(log_registry, "artifact_descriptions", {})
    off_by_default: "set[str]" = getattr(log_registry, "off_by_default_artifact_names", set())
    visible: "set[str]" = getattr(log_registry, "visible_artifacts", set())
    info["components"] = {
        alias: sorted(qnames) if not isinstance(qnames, str) else [qnames]
        for alias, qnames in sorted(log_registry.log_alias_to_log_qnames.items())
    }
    info["artifacts"] = {
        name: {
            "description": descriptions.get(name, ""),
            "off_by_default": name in off_by_default,
            "visible": name in visible,
        }
        for name in sorted(log_registry.artifact_names)
    }
print("CONTRIBKIT_PROBE " + json.dumps(info))
