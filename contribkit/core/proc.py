"""Child processes: the one place that starts user code, probes and tools.

Every child gets a scrubbed environment (no tokens or secrets), a closed stdin and its own
process group, which is killed whole on timeout, Ctrl-C, SIGTERM or SIGHUP (``cli`` turns those
into exceptions that unwind through here) so that no orphan survives. Its log is redacted
(:mod:`contribkit.core.redact`) as it is written. Children that run issue or test code opt into
a sandbox by passing ``confine`` (:mod:`contribkit.core.sandbox`).
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from contribkit.core import redact
from contribkit.core.fsutil import open_new
from contribkit.target.reproconfine import SECRET_NAMES

if TYPE_CHECKING:
    from contribkit.core.sandbox import Confinement

# Documented in the README ("Safety"); extend with the `scrub_env` setting. A variable whose
# value holds a URL with credentials (scheme://user:password@) is a secret whatever its name.
# One list with the repro scripts' own (target/reproconfine.py), which cannot import contribkit.
SECRET_PATTERNS: tuple[str, ...] = SECRET_NAMES

DEFAULT_LOG_CAP = 8 * 1024 * 1024
_TAIL_CHARS = 256 * 1024

# Children still running, so that the main thread, when stopped, can end those of worker threads.
_running: dict[int, subprocess.Popen[bytes]] = {}
_running_lock = threading.Lock()


def is_secret(name: str, extra_patterns: Iterable[str] = (), value: str | None = None) -> bool:
    """Whether the variable ``name`` (holding ``value``, when given) is a secret."""
    upper = name.upper()
    if any(fnmatch.fnmatchcase(upper, p.upper()) for p in (*SECRET_PATTERNS, *extra_patterns)):
        return True
    return value is not None and redact.has_credentials(value)


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


def descendants(pids: Iterable[int]) -> list[int]:
    """Every process below ``pids`` (parent links read from Linux's /proc; none elsewhere)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
            # "pid (comm) state ppid …": comm may hold spaces and parentheses
            ppid = int(stat.rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    found: list[int] = []
    todo = list(pids)
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


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


def end_orphans(marker: bytes) -> int:
    """Kill what code children left behind, once none of them runs: the processes reparented
    to contribkit (a child subreaper on Linux, see :func:`contribkit.core.confine.run_code`)
    whose environment holds ``marker``, with their trees; reap them. Returns how many.

    Without a sandbox's PID namespace this is what ends a daemon that left its process group
    and session (``setsid``, fork twice) before the leg ended."""
    ended = 0
    for _ in range(20):
        with _running_lock:
            if _running:
                return ended
        me = os.getpid()
        found = [pid for pid in descendants([me]) if _parent(pid) == me and _marked(pid, marker)]
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


def run_child(
    cmd: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | str | None = None,
    timeout: float | None = None,
    log_path: Path | None = None,
    log_cap: int = DEFAULT_LOG_CAP,
    confine: Confinement | None = None,
) -> ChildResult:
    """Run ``cmd`` in its own process group; capture output (and tee it to ``log_path``, capped).

    With ``log_path``, the log and the output are redacted; without, the output is raw (the
    answer of ``gh auth token`` is the token). With ``confine``, the child runs in its sandbox
    (where there is one). A log that cannot be written (a full disk, a quota, a file size
    limit) kills the child at once and raises :class:`~contribkit.core.fsutil.WriteFailed`:
    its output has nowhere to go, and a child writing to a pipe no one reads would block until
    its timeout."""
    if confine is not None:
        cmd, env = confine.wrap(cmd, env, cwd)
    start = time.monotonic()
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
    chunks: list[bytes] = []
    state = {"kept": 0, "written": 0, "truncated": False}
    failed: list[OSError] = []  # the log's write error: the child is killed, nothing more written
    log = open_new(log_path, replace=True) if log_path else None
    scrubber = redact.StreamRedactor(redact.current()) if log is not None else None

    def to_log(data: bytes) -> None:
        if log is None or failed:
            return
        room = log_cap - state["written"]
        if room > 0:
            try:
                log.write(data[:room])
            except OSError as exc:  # ENOSPC, EDQUOT, EFBIG, EIO: the leg cannot go on
                failed.append(exc)
                _kill_now(proc)
                return
            state["written"] += min(room, len(data))
        if len(data) > room:
            state["truncated"] = True

    def pump() -> None:
        stream = proc.stdout
        assert isinstance(stream, io.BufferedReader)
        for chunk in iter(lambda: stream.read1(65536), b""):
            chunks.append(chunk)
            state["kept"] += len(chunk)
            while state["kept"] > _TAIL_CHARS * 2 and len(chunks) > 1:
                state["kept"] -= len(chunks.pop(0))
            if scrubber is not None:
                to_log(scrubber.feed(chunk))

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        with contextlib.suppress(ProcessLookupError):  # reap what the leader left in its group
            os.killpg(proc.pid, signal.SIGKILL)
        with _running_lock:
            _running.pop(proc.pid, None)
        reader.join(timeout=5)
        if log is not None and scrubber is not None:
            to_log(scrubber.flush())
            try:
                if state["truncated"] and not failed:
                    log.write(f"\n[contribkit: log truncated at {log_cap} bytes]\n".encode())
                log.close()  # flushes what is buffered: the disk may refuse that too
            except OSError as exc:
                failed.append(exc)
                with contextlib.suppress(OSError):
                    log.close()
            if failed:
                _raise_write_failed(failed[0], log_path)
    output = b"".join(chunks).decode("utf-8", errors="replace")[-_TAIL_CHARS:]
    if scrubber is not None:  # a child that runs code; without a log (gh auth token) it is raw
        output = scrubber.redactor.text(output)
    return ChildResult(
        returncode=None if timed_out else proc.returncode,
        output=output,
        duration_s=time.monotonic() - start,
        timed_out=timed_out,
        log_truncated=bool(state["truncated"]),
    )
