# Runs in the target interpreter (any Python 3.8+); prints one JSON line. Never imported by contribkit.
import json
import os
import platform
import sys
import sysconfig
from typing import Any

info: "dict[str, Any]" = {
    "executable": sys.executable,
    "python_version": platform.python_version(),
    "purelib": sysconfig.get_paths().get("purelib"),
    "torch": False,
}
try:
    import torch
except Exception as exc:  # ImportError, or a broken build
    info["error"] = f"{type(exc).__name__}: {exc}"
else:
    info["torch"] = True
    info["torch_version"] = torch.__version__
    info["torch_path"] = os.path.dirname(torch.__file__)
    info["git_version"] = getattr(torch.version, "git_version", None)
    info["debug"] = bool(getattr(torch.version, "debug", False))
    info["cuda_build"] = getattr(torch.version, "cuda", None)
    info["hip_build"] = getattr(torch.version, "hip", None)
    try:
        info["cuda_available"] = bool(torch.cuda.is_available())
        count = torch.cuda.device_count() if info["cuda_available"] else 0
        info["device_count"] = count
        info["device_names"] = [torch.cuda.get_device_name(i) for i in range(count)]
    except Exception as exc:
        info["cuda_available"] = False
        info["device_count"] = 0
        info["device_names"] = []
        info["cuda_error"] = f"{type(exc).__name__}: {exc}"
    mps = getattr(torch.backends, "mps", None)
    info["mps_available"] = bool(mps is not None and mps.is_available())
print("CONTRIBKIT_PROBE " + json.dumps(info))
