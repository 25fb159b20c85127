"""Child processes: the one place that starts user code, probes and tools.

Every child gets a scrubbed environment (no tokens or secrets), a closed stdin and its own
process group, which is killed whole on timeout, Ctrl-C, SIGTERM or SIGHUP (``cli`` turns those
into exceptions that unwind through here) so that no orphan survives. Its log is redacted
(:mod:`contribkit.core.redact`) as it is written. Children that run issue or test code opt into
a sandbox by passing ``confine`` (:mod:`contribkit.core.sandbox`).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from contribkit.core import redact
from contribkit.core.fsutil import open_new
from contribkit.core.redact import SECRET_PATTERNS as SECRET_PATTERNS
from contribkit.core.redact import is_secret as is_secret
from contribkit.target.reproconfine import descendants


class Confining(Protocol):
    """What confines a child (``core.sandbox.Confinement``): the command and environment that
    run ``cmd`` inside it. A protocol, so that this module never imports the sandbox's."""

    def wrap(
        self, cmd: Sequence[str], env: Mapping[str, str], cwd: Path | str | None
    ) -> tuple[list[str], dict[str, str]]: ...


DEFAULT_LOG_CAP = 8 * 1024 * 1024
_TAIL_CHARS = 256 * 1024

# Children still running, so that the main thread, when stopped, can end those of worker threads.
_running: dict[int, subprocess.Popen[bytes]] = {}
_running_lock = threading.Lock()
# Children being started (inside Popen, not yet in ``_running``): while any is, a child of
# contribkit's may be a new leg rather than an orphan, so :func:`end_orphans` kills nothing.
_starting = 0


def scrubbed_env(
    base: Mapping[str, str] | None = None,
    extra_patterns: Iterable[str] = (),
    overrides: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A copy of ``base`` (default ``os.environ``) without secrets, plus ``overrides``."""
    patterns = tuple(extra_patterns)
    env = {
        k: v
        for k, v in (os.environ if base is None else base).items()
        if not is_secret(k, patterns, v)
    }
    env.update(overrides or {})
    return env


@dataclass
class ChildResult:
    returncode: int | None  # None when the child was killed for its timeout
    output: str  # stdout and stderr interleaved (the last 256 KiB)
    duration_s: float
    timed_out: bool
    log_truncated: bool = False


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    escaped = descendants([proc.pid])  # before the leader dies: then they are still its tree
    try:
        for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=grace)
                return
            except subprocess.TimeoutExpired:
                continue
    finally:
        for pid in escaped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _kill_now(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's group and whatever left it, at once (no grace: nothing can be kept)."""
    escaped = descendants([proc.pid])
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    for pid in escaped:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _raise_write_failed(exc: OSError, log_path: Path | None) -> None:
    from contribkit.core.fsutil import WriteFailed

    raise WriteFailed(
        f"cannot write the log {log_path}: {exc.strerror or exc}; its child was stopped",
        hint="free some space (or raise the quota or file size limit), then run it again",
    ) from exc


def kill_running() -> int:
    """Kill every child still running, with its whole tree; return how many there were.

    For callers that run children from worker threads: KeyboardInterrupt and ``Terminated``
    reach only the main thread, which calls this so that no leg outlives the stopped command.
    The process group goes, and so does any descendant that left it with ``setsid`` (a new
    session escapes a group kill, not its parent's tree).
    """
    with _running_lock:
        procs = list(_running.values())
    escaped = descendants(proc.pid for proc in procs)
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    for pid in escaped:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(procs)


# The signals that stop a command (``cli`` turns them into exceptions). While a child starts
# they are held: one that lands inside Popen, or before the child is registered and waited on,
# would raise where nothing kills the child (Ctrl-C on a loaded machine, a scheduler's SIGTERM).
_STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _signals_held() -> Iterator[list[int]]:
    """Record the stopping signals that come meanwhile instead of acting on them (only those
    with a Python handler, and only on the main thread: the one that gets signals)."""
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    previous = {}
    for sig in _STOPPING:
        if callable(signal.getsignal(sig)):
            previous[sig] = signal.signal(sig, lambda signum, frame: held.append(signum))
    try:
        yield held
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Capture:
    """A child's output: the last 256 KiB kept, and (with a log) teed to it redacted and capped."""

    def __init__(self, proc: subprocess.Popen[bytes], log_path: Path | None, log_cap: int):
        self.proc, self.log_path, self.log_cap = proc, log_path, log_cap
        self.chunks: list[bytes] = []
        self.kept = self.written = 0
        self.truncated = False
        self.failed: list[OSError] = []  # the log's write error: the child is killed
        self.log = open_new(log_path, replace=True) if log_path else None
        self.scrubber = redact.StreamRedactor(redact.current()) if self.log is not None else None

    def to_log(self, data: bytes) -> None:
        if self.log is None or self.failed:
            return
        room = self.log_cap - self.written
        if room > 0:
            try:
                self.log.write(data[:room])
            except OSError as exc:  # ENOSPC, EDQUOT, EFBIG, EIO: the leg cannot go on
                self.failed.append(exc)
                _kill_now(self.proc)
                return
            self.written += min(room, len(data))
        if len(data) > room:
            self.truncated = True

    def pump(self) -> None:
        stream = self.proc.stdout
        assert isinstance(stream, io.BufferedReader)
        for chunk in iter(lambda: stream.read1(65536), b""):
            self.chunks.append(chunk)
            self.kept += len(chunk)
            while self.kept > _TAIL_CHARS * 2 and len(self.chunks) > 1:
                self.kept -= len(self.chunks.pop(0))
            if self.scrubber is not None:
                self.to_log(self.scrubber.feed(chunk))

    def close(self) -> None:
        """Flush and close the log; WriteFailed when the disk refused any of it."""
        if self.log is None or self.scrubber is None:
            return
        self.to_log(self.scrubber.flush())
        try:
            if self.truncated and not self.failed:
                self.log.write(f"\n[contribkit: log truncated at {self.log_cap} bytes]\n".encode())
            self.log.close()  # flushes what is buffered: the disk may refuse that too
        except OSError as exc:
            self.failed.append(exc)
            with contextlib.suppress(OSError):
                self.log.close()
        if self.failed:
            _raise_write_failed(self.failed[0], self.log_path)

    def output(self) -> str:
        output = b"".join(self.chunks).decode("utf-8", errors="replace")[-_TAIL_CHARS:]
        if self.scrubber is not None:  # a child that runs code; without a log it is raw
            output = self.scrubber.redactor.text(output)
        return output


def end_orphans(marker: bytes) -> int:
    """Kill what code children left behind, once none of them runs: the processes reparented
    to contribkit (a child subreaper on Linux, see :func:`contribkit.core.confine.run_code`)
    whose environment holds ``marker``, with their trees; reap them. Returns how many.

    Without a sandbox's PID namespace this is what ends a daemon that left its process group
    and session (``setsid``, fork twice) before the leg ended."""
    ended = 0
    for _ in range(20):
        # The lock is held from the check to the reaping: a leg that another thread starts
        # meanwhile would be a marked child of ours, and must not be taken for an orphan.
        with _running_lock:
            if _running or _starting:
                return ended
            me = os.getpid()
            found = [
                pid for pid in descendants([me]) if _parent(pid) == me and _marked(pid, marker)
            ]
            if not found:
                return ended
            for pid in [*descendants(found), *found]:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            for pid in found:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
        ended += len(found)
    return ended


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return int(fh.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _marked(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return marker in fh.read().split(b"\0")
    except OSError:
        return False


@contextlib.contextmanager
def _starting_child() -> Iterator[None]:
    """Count a child as starting until it is registered in ``_running`` (or failed to start)."""
    global _starting
    with _running_lock:
        _starting += 1
    try:
        yield
    finally:
        with _running_lock:
            _starting -= 1


def run_child(
    cmd: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | str | None = None,
    timeout: float | None = None,
    log_path: Path | None = None,
    log_cap: int = DEFAULT_LOG_CAP,
    confine: Confining | None = None,
) -> ChildResult:
    """Run ``cmd`` in its own process group; capture output (and tee it to ``log_path``, capped).

    With ``log_path``, the log and the output are redacted; without, the output is raw (the
    answer of ``gh auth token`` is the token). With ``confine``, the child runs in its sandbox
    (where there is one). A log that cannot be written (a full disk, a quota, a file size
    limit) kills the child at once and raises :class:`~contribkit.core.fsutil.WriteFailed`:
    its output has nowhere to go, and a child writing to a pipe no one reads would block until
    its timeout. Whatever stops the caller once the child exists (Ctrl-C, SIGTERM, a log that
    cannot be opened) kills the child's group first."""
    if confine is not None:
        cmd, env = confine.wrap(cmd, env, cwd)
    start = time.monotonic()
    proc: subprocess.Popen[bytes] | None = None
    capture: _Capture | None = None
    reader: threading.Thread | None = None
    timed_out = False
    try:
        with _signals_held() as held, _starting_child():
            proc = subprocess.Popen(
                list(cmd),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            with _running_lock:
                _running[proc.pid] = proc
            capture = _Capture(proc, log_path, log_cap)
            thread = threading.Thread(target=capture.pump, daemon=True)
            thread.start()
            reader = thread
        for signum in held:  # now that the child is ours to kill
            signal.raise_signal(signum)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        assert proc is not None
        _kill_group(proc)
    except BaseException:
        if proc is not None:
            _kill_group(proc)
        raise
    finally:
        if proc is not None:
            with contextlib.suppress(ProcessLookupError):  # reap what the leader left in its group
                os.killpg(proc.pid, signal.SIGKILL)
            with _running_lock:
                _running.pop(proc.pid, None)
        if reader is not None:
            reader.join(timeout=5)
        if capture is not None:
            capture.close()
    assert proc is not None and capture is not None
    return ChildResult(
        returncode=None if timed_out else proc.returncode,
        output=capture.output(),
        duration_s=time.monotonic() - start,
        timed_out=timed_out,
        log_truncated=capture.truncated,
    )
