"""The error contract: exit codes and the one-line error form (docs/architecture.md, "Contracts").

Every expected failure raises a :class:`ContribkitError`; ``cli.main`` prints it as
``contribkit: error: <what>`` plus at most one ``hint:`` line and exits with its code.
"""

from __future__ import annotations

import errno
import sys
from enum import IntEnum

from contribkit.core.termsafe import clean

# The errors of a write that found no room: no space, over the quota, past the file size limit.
DISK_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1  # a check failed, a gate refused
    USAGE = 2  # bad usage or bad input
    AUTH = 4  # authentication needed (as gh does)
    INTERRUPTED = 130


class ContribkitError(Exception):
    """An expected failure with a one-line message and an optional hint."""

    exit_code: int = ExitCode.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class BadInput(ContribkitError):
    exit_code = ExitCode.USAGE


class CheckFailed(ContribkitError):
    exit_code = ExitCode.FAILED


class AuthRequired(ContribkitError):
    exit_code = ExitCode.AUTH


class Terminated(BaseException):
    """SIGTERM or SIGHUP: unwinds like KeyboardInterrupt (not caught by ``except Exception``), so
    whoever runs children kills them on the way out."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def print_error(message: str, hint: str | None = None) -> None:
    """The one-line error: messages quote issue text and GitHub's replies, so they go through
    the terminal filter, on one line each."""
    print(f"contribkit: error: {clean(message, single_line=True)}", file=sys.stderr)
    if hint:
        print(f"hint: {clean(hint, single_line=True)}", file=sys.stderr)


def warn(message: str) -> None:
    print(f"contribkit: warning: {clean(message, single_line=True)}", file=sys.stderr)
