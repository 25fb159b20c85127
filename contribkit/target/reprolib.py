# contribkit repro runtime. This module's source is embedded verbatim in every generated repro
# script, so it is standard-library only, runs on Python 3.9+, and has no __future__ imports.
# The verdict contract (see contribkit's README): the last line printed is
#   contribkit-verdict: <VERDICT> <detail>
# with exit 0 NOT_REPRODUCED, 1 REPRODUCED, 125 CANNOT_RUN (compatible with `git bisect run`).
import argparse
import atexit
import difflib
import json
import os
import random
import re
import sys
import traceback
from typing import Any, Callable, Dict, List, NoReturn, Optional

VERDICT_PREFIX = "contribkit-verdict:"
VERDICT_EXIT = {"NOT_REPRODUCED": 0, "REPRODUCED": 1, "CANNOT_RUN": 125}
MATCH_RATIO = 0.75

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_LONG_NUMBER = re.compile(r"(?<![\w.])\d{6,}(?![\w.])")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.+~-]+){2,}[\\/]?")
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+")


def normalise_message(message: str) -> str:
    """The comparable part of an exception message: its first line, addresses/ids/paths masked."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    text = lines[0] if lines else ""
    if text.endswith("raised:") and len(lines) > 1:  # a wrapper such as BackendCompilerFailed
        text += " " + lines[1]
    text = _ADDRESS.sub("<addr>", text)
    text = _PATH.sub("<path>", text)
    text = _LONG_NUMBER.sub("<n>", text)
    return _SPACE.sub(" ", text).strip()[:300]


def signature_matches(exc: BaseException, exc_type: str, message: str) -> bool:
    """True when ``exc`` is the failure ``exc_type: message`` (type by name anywhere in its MRO).

    Numbers are masked (shapes and sizes vary between runs); the messages must then be equal,
    one must contain the other, or they must start with the same three words and be similar.
    """
    wanted = exc_type.rsplit(".", 1)[-1]
    if wanted not in {cls.__name__ for cls in type(exc).__mro__}:
        return False
    return not message or message_matches(message, normalise_message(str(exc)))


def message_matches(message: str, text: str) -> bool:
    """True when the normalised ``text`` is the issue's normalised error ``message``."""
    want = _NUMBER.sub("<n>", message)
    got = _NUMBER.sub("<n>", text)
    if not got:
        return False
    if want == got or (len(want) >= 10 and want in got) or (len(got) >= 10 and got in want):
        return True
    if want.split()[:3] != got.split()[:3]:
        return False
    return difflib.SequenceMatcher(None, want, got).ratio() >= MATCH_RATIO


def describe(exc: BaseException) -> str:
    text = normalise_message(str(exc))
    return type(exc).__name__ + ": " + text if text else type(exc).__name__


class _Tee:
    """Passes writes through to a stream and keeps the last ``limit`` characters of them."""

    def __init__(self, stream: Any, limit: int = 1 << 20) -> None:
        self._stream = stream
        self._limit = limit
        self._chunks: List[str] = []
        self._size = 0

    def write(self, text: str) -> int:
        self._chunks.append(text)
        self._size += len(text)
        if self._size > 2 * self._limit:  # trim now and then: writes stay O(1) on average
            kept = self.seen
            self._chunks, self._size = [kept], len(kept)
        return int(self._stream.write(text))

    @property
    def seen(self) -> str:
        return "".join(self._chunks)[-self._limit :]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def printed_signature(text: str, exc_type: str, message: str) -> str:
    """The line of ``text`` that shows the error ``exc_type: message``, or "".

    Issue code often catches the error and prints it (``except Exception as e: print(e)``), or
    prints its traceback; either way the line is the message, maybe after ``Type: ``.
    """
    wanted = exc_type.rsplit(".", 1)[-1]
    for line in text.splitlines():
        line = line.strip()
        head, sep, rest = line.partition(": ")
        if sep and head.rsplit(".", 1)[-1] == wanted:
            line = rest
        if line and message_matches(message, normalise_message(line)):
            return line
    return ""


class Repro:
    """Drives one repro script: options, device checks, seeds, and exactly one verdict."""

    def __init__(
        self,
        issue: str,
        signature: Optional[Dict[str, str]],
        default_device: str,
        requires_cuda: bool = False,
        seed_numpy: bool = False,
        incomplete: Optional[str] = None,
    ) -> None:
        self.issue = issue
        self.signature = signature
        self.default_device = default_device
        self.requires_cuda = requires_cuda
        self.seed_numpy = seed_numpy
        self.incomplete = incomplete
        self.device = default_device
        self.as_json = False
        self.exit_requested: List[Any] = []
        self._done = False
        self._stdout: Optional[_Tee] = None
        self._stderr: Optional[_Tee] = None

    # -- start ------------------------------------------------------------------------
    def start(self, argv: Optional[List[str]] = None) -> str:
        parser = argparse.ArgumentParser(description="Reproduce " + self.issue + ".")
        parser.add_argument(
            "--device",
            help="device to run on (default: $CONTRIBKIT_DEVICE, else " + self.default_device + ")",
        )
        parser.add_argument(
            "--json", action="store_true", help="print the verdict as one JSON object"
        )
        args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
        sys.argv = sys.argv[:1] + rest  # the issue's code may read its own arguments
        self.as_json = args.json
        self.device = args.device or os.environ.get("CONTRIBKIT_DEVICE") or self.default_device
        if self.signature and self.signature.get("message"):
            sys.stdout = self._stdout = _Tee(sys.stdout)
            sys.stderr = self._stderr = _Tee(sys.stderr)
        sys.excepthook = self._excepthook
        atexit.register(self._at_exit)
        self._wrap_sys_exit()
        self._check_device()
        self._seed()
        return self.device

    def _check_device(self) -> None:
        try:
            import torch
        except Exception as exc:
            self.verdict("CANNOT_RUN", "torch is not importable: " + describe(exc))
        kind = self.device.split(":", 1)[0]
        needs = {kind} | ({"cuda"} if self.requires_cuda else set())
        if "cuda" in needs and not torch.cuda.is_available():
            if self.requires_cuda and kind != "cuda":
                self.verdict(
                    "CANNOT_RUN", "CUDA is not available here, and the issue's code needs it"
                )
            hint = " (try --device cpu)" if not self.requires_cuda else ""
            self.verdict("CANNOT_RUN", "device cuda is not available here" + hint)
        if kind == "mps" and not torch.backends.mps.is_available():
            self.verdict("CANNOT_RUN", "device mps is not available here")

    def _seed(self) -> None:
        import torch

        random.seed(0)
        torch.manual_seed(0)
        if self.seed_numpy:
            try:
                import numpy
            except ImportError:
                return
            numpy.random.seed(0)

    def _wrap_sys_exit(self) -> None:
        real_exit = sys.exit

        def recorded_exit(code: Any = None) -> NoReturn:
            self.exit_requested.append(code)
            real_exit(code)

        sys.exit = recorded_exit

    # -- outcomes ---------------------------------------------------------------------
    def finish(self, check: Optional[Callable[[], None]] = None) -> NoReturn:
        """The issue's code ran to the end: decide by the check, or by the absence of the crash."""
        if self.incomplete:
            self.verdict("CANNOT_RUN", "INCOMPLETE: " + self.incomplete)
        if check is not None:
            try:
                check()
            except NotImplementedError:
                self.verdict("CANNOT_RUN", "INCOMPLETE: fill in check()")
            except AssertionError as exc:
                self.verdict(
                    "REPRODUCED", "check failed: " + (normalise_message(str(exc)) or "assertion")
                )
            except Exception as exc:
                self.verdict("CANNOT_RUN", "check() raised " + describe(exc))
            self.verdict("NOT_REPRODUCED", "check passed on " + self.device)
        self._completed("completed on " + self.device)

    def _completed(self, how: str) -> NoReturn:
        """The code ended without raising: REPRODUCED if it printed the issue's error itself."""
        sig = self.signature
        if sig and sig.get("message"):
            seen = "".join(t.seen for t in (self._stdout, self._stderr) if t is not None)
            line = printed_signature(seen, sig["exc_type"], sig["message"])
            if line:
                self.verdict(
                    "REPRODUCED", "the issue's code caught and printed the error: " + line[:200]
                )
        self.verdict("NOT_REPRODUCED", how + " without " + (self._expected() or "an error"))

    def _expected(self) -> str:
        if not self.signature:
            return ""
        sig = self.signature
        return sig["exc_type"] + (": " + sig["message"] if sig.get("message") else "")

    def classify(self, exc: BaseException) -> "tuple[str, str]":
        sig = self.signature
        if sig and signature_matches(exc, sig["exc_type"], sig.get("message", "")):
            return "REPRODUCED", describe(exc)
        if isinstance(exc, ImportError):
            return "CANNOT_RUN", "missing module: " + describe(exc)
        if not sig and isinstance(exc, AssertionError):
            return "REPRODUCED", "the issue's own assertion failed: " + describe(exc)
        if sig:
            return "CANNOT_RUN", "different error: got " + describe(
                exc
            ) + "; the issue reports " + self._expected()
        return "CANNOT_RUN", "error, and the issue gives no signature to compare: " + describe(exc)

    def _excepthook(self, exc_type: Any, exc: BaseException, tb: Any) -> None:
        if isinstance(exc, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            sys.stderr.flush()
            os._exit(130)  # aborts a `git bisect run`, as an interruption should
        traceback.print_exception(exc_type, exc, tb)
        self.verdict(*self.classify(exc))

    def _at_exit(self) -> None:
        if self._done:
            return
        if self.exit_requested and self.exit_requested[-1] not in (0, None):
            self.verdict(
                "CANNOT_RUN", "the issue's code exited with " + repr(self.exit_requested[-1])
            )
        self._completed("the issue's code exited cleanly on " + self.device)

    def verdict(self, verdict: str, detail: str) -> NoReturn:
        self._done = True
        code = VERDICT_EXIT[verdict]
        sys.stderr.flush()
        if self.as_json:
            line = json.dumps(
                {
                    "verdict": verdict,
                    "detail": detail,
                    "exit_code": code,
                    "issue": self.issue,
                    "device": self.device,
                    "signature": self._expected() or None,
                }
            )
        else:
            line = VERDICT_PREFIX + " " + verdict + " " + detail
        print(line, flush=True)
        os._exit(code)
