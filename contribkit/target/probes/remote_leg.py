# Runs on a remote CUDA host, started by contribkit over ssh as `python -c <this> <payload>`.
# Standard library only, Python 3.8+; never imported by contribkit. The payload (base64 of zlib'd
# JSON) carries the interpreter, the files, the arguments after the interpreter, extra environment,
# the secret patterns to scrub and the timeout. It writes the files to a temporary folder, runs the
# command there in its own process group, and prints a last marker line with the exit code and the
# JUnit report; the folder is removed afterwards.
import base64
import contextlib
import fnmatch
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from typing import Any

MARKER = "CONTRIBKIT_REMOTE "
payload = json.loads(zlib.decompress(base64.b64decode(sys.argv[1])))
patterns = [p.upper() for p in payload["scrub"]]
env = {
    k: v
    for k, v in os.environ.items()
    if not any(fnmatch.fnmatchcase(k.upper(), p) for p in patterns)
}
env.update(payload["env"])
work = tempfile.mkdtemp(prefix="contribkit-leg-")
result: "dict[str, Any]" = {"returncode": None, "timed_out": False, "junit": None}
try:
    for name, data in payload["files"].items():
        with open(os.path.join(work, name), "wb") as fh:
            fh.write(base64.b64decode(data))
    sys.stdout.flush()
    proc = subprocess.Popen(
        [os.path.expanduser(payload["python"]), *payload["argv"]],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    parent = os.getppid()
    deadline = time.monotonic() + payload["timeout"]
    while proc.poll() is None:
        # Give up when the time is over, or when ssh went away (our parent changed).
        if time.monotonic() > deadline or os.getppid() != parent:
            result["timed_out"] = time.monotonic() > deadline
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=2)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
            break
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # what the leader left in its group
    proc.wait()
    if not result["timed_out"]:
        result["returncode"] = proc.returncode
    report = os.path.join(work, "junit.xml")
    if os.path.isfile(report):
        with open(report, "rb") as fh:
            result["junit"] = base64.b64encode(fh.read()).decode()
finally:
    shutil.rmtree(work, ignore_errors=True)
sys.stdout.write("\n" + MARKER + json.dumps(result) + "\n")
sys.stdout.flush()
