"""CUDA legs on another machine, over ssh (``contribkit run --cuda-host HOST``).

Each remote call is one ``ssh HOST PYTHON -c <bootstrap> <payload>``: the bootstrap
(``probes/remote_leg.py``, standard library only) writes the leg's file to a temporary folder on
the host, runs it there with the host's interpreter in its own process group under the leg's
timeout, streams its output back, and ends with a marker line carrying the exit code and the JUnit
report. Nothing is installed on the host and nothing is left behind. See docs/remote-cuda.md.
"""

from __future__ import annotations

import base64
import json
import shlex
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contribkit.core.errors import BadInput
from contribkit.core.proc import SECRET_PATTERNS, ChildResult, run_child, scrubbed_env
from contribkit.run.probe import PROBE_MARKER, PROBE_TIMEOUT_S, TorchInfo, probe_source

MARKER = "CONTRIBKIT_REMOTE "
# A remote command travels as one argument of the remote shell, which Linux caps at 128 KiB.
MAX_PAYLOAD = 120 * 1024
SSH_GRACE_S = 60.0  # on top of a leg's timeout, for connecting and copying


def _shell_word(path: str) -> str:
    """``path`` quoted for the remote shell, keeping a leading ``~/`` for it to expand."""
    if path.startswith("~/"):
        return "~/" + shlex.quote(path[2:])
    return shlex.quote(path)


@dataclass
class LegOutput:
    """What a leg left behind, wherever it ran."""

    returncode: int | None  # None: killed for its timeout
    timed_out: bool
    output: str
    duration_s: float
    junit_xml: str | None = None  # the pytest report's text, for test legs
    error: str | None = None  # the leg could not be started where it should run

    @classmethod
    def from_child(
        cls, result: ChildResult, junit: str | None, junit_path: Path | None
    ) -> LegOutput:
        """The leg's outcome; its JUnit report (``junit``, as the leg wrote it in its scratch
        folder) is redacted and kept at ``junit_path``, a new file contribkit writes."""
        from contribkit.core.fsutil import open_new
        from contribkit.core.redact import redact

        xml = None
        if junit is not None and junit_path is not None:
            xml = redact(junit)  # the leg wrote it: it may hold what the leg could read
            with open_new(junit_path, replace=True) as fh:
                fh.write(xml.encode("utf-8"))
        return cls(result.returncode, result.timed_out, result.output, result.duration_s, xml)


@dataclass(frozen=True)
class RemoteHost:
    host: str
    python: str = "python3"
    ssh: str = "ssh"
    scrub: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.host or self.host.startswith("-") or any(c.isspace() for c in self.host):
            raise BadInput(f"'{self.host}' is not an ssh host", hint="e.g. --cuda-host gpu-box")

    def _argv(self, payload: dict[str, Any]) -> list[str]:
        packed = base64.b64encode(zlib.compress(json.dumps(payload).encode(), 9)).decode()
        if len(packed) > MAX_PAYLOAD:
            raise BadInput(
                f"the files for {self.host} are too large to send over ssh ({len(packed) // 1024} KiB packed)",
                hint="see docs/remote-cuda.md for the size limit",
            )
        bootstrap = probe_source("remote_leg.py")
        remote_command = " ".join(
            [_shell_word(self.python), "-c", shlex.quote(bootstrap), shlex.quote(packed)]
        )
        return [self.ssh, "-o", "BatchMode=yes", "-T", self.host, remote_command]

    def _call(
        self,
        files: dict[str, bytes],
        argv: list[str],
        env: dict[str, str],
        timeout: float,
        log_path: Path | None,
    ) -> tuple[str | None, str, int | None, float]:
        """Run one bootstrap call: its result line (after the marker; None when there is none),
        the output before it, ssh's exit code and the duration. The result line, which carries
        the JUnit report, is cut out of the log."""
        payload = {
            "python": self.python,
            "files": {name: base64.b64encode(data).decode() for name, data in files.items()},
            "argv": argv,
            "env": env,
            "scrub": [*SECRET_PATTERNS, *self.scrub],
            "timeout": timeout,
        }
        result = run_child(
            self._argv(payload),
            env=scrubbed_env(extra_patterns=self.scrub),
            timeout=timeout + SSH_GRACE_S,
            log_path=log_path,
        )
        lines = result.output.splitlines()
        for i in range(len(lines) - 1, -1, -1):
            if lines[i].startswith(MARKER):
                if log_path is not None:
                    drop_result_line(log_path)
                output = "\n".join(lines[:i])
                return lines[i][len(MARKER) :], output, result.returncode, result.duration_s
        return None, result.output, result.returncode, result.duration_s

    def probe(self) -> TorchInfo:
        """The host interpreter's torch facts (not cached: the host may change at any time)."""
        _, output, code, _ = self._call(
            {"probe.py": probe_source("torch_info.py").encode()},
            ["probe.py"],
            {},
            PROBE_TIMEOUT_S,
            None,
        )
        for line in output.splitlines():
            if line.startswith(PROBE_MARKER):
                return TorchInfo.from_dict(json.loads(line[len(PROBE_MARKER) :]))
        tail = (output.strip().splitlines() or [f"exit {code}"])[-1]
        raise BadInput(
            f"could not probe {self.python} on {self.host}: {tail}",
            hint="check that `ssh HOST` works without a prompt and run.cuda_python names an interpreter there",
        )

    def run_files(
        self,
        files: dict[str, bytes],
        argv: list[str],
        env: dict[str, str],
        timeout: float,
        log_path: Path | None,
    ) -> LegOutput:
        """Run one leg on the host: ``files`` written to a temporary folder there, ``argv``
        after the host's interpreter (``run``'s legs and the ssh engine's)."""

        try:
            status, output, code, duration = self._call(files, argv, {**env}, timeout, log_path)
        except BadInput as exc:  # too large to send: this leg fails, the others still run
            return LegOutput(None, False, "", 0.0, error=exc.message)
        if status is None:
            tail = (output.strip().splitlines() or ["no output"])[-1]
            return LegOutput(
                code,
                False,
                output,
                duration,
                error=f"ssh to {self.host} failed (exit {code}): {tail}",
            )
        try:
            returncode, timed_out, junit = read_result(status)
        except ValueError as exc:  # a broken host-side Python, or something in the way on ssh
            return LegOutput(
                code,
                False,
                output,
                duration,
                error=f"{self.host} sent a malformed result line ({exc})",
            )
        return LegOutput(returncode, timed_out, output, duration, junit)


def read_result(text: str) -> tuple[int | None, bool, str | None]:
    """The bootstrap's result line: exit code (None: timed out), timed out, the JUnit report.

    ValueError (JSON, base64, or a missing or mistyped field) when it is malformed.
    """
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    missing = sorted({"returncode", "timed_out", "junit"} - data.keys())
    if missing:
        raise ValueError(f"no {', '.join(missing)}")
    code, timed_out, junit = data["returncode"], data["timed_out"], data["junit"]
    if not (code is None or type(code) is int):
        raise ValueError(f"returncode {code!r}")
    if not isinstance(timed_out, bool):
        raise ValueError(f"timed_out {timed_out!r}")
    if not (junit is None or isinstance(junit, str)):
        raise ValueError("junit is not a string")
    report = base64.b64decode(junit, validate=True).decode("utf-8", "replace") if junit else None
    return code, timed_out, report


def drop_result_line(log_path: Path) -> None:
    """Cut the bootstrap's result line (and the base64 report in it) out of a leg's log, keeping
    what the leg printed and the note of a capped log."""
    data = log_path.read_bytes()
    start = data.rfind(b"\n" + MARKER.encode())
    if start < 0:  # the log was capped before it
        return
    end = data.find(b"\n", start + 1)
    rest = data[end + 1 :] if end >= 0 else b""
    log_path.write_bytes(data[:start] + (b"\n" + rest if rest else b""))
