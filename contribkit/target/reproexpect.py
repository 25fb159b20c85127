# contribkit repro runtime, part 4: the user's oracle (`--expect KIND[:ARG]`). Embedded verbatim
# in every generated repro script after reprojudge.py and before reprolib.py (this file's import
# of the first is dropped there), so it is standard-library only, runs on Python 3.9+, and has no
# __future__ imports. The Repro driver (reprolib.py) makes a UserOracle when the repro or its
# command line states an oracle, and asks it at each point where a verdict can be decided: the
# start (the oracles that compare two runs run them), a raised error, the end of the code, a
# signal. Kinds the driver already judges (crash, determinism, recompiles) get the evidence that
# selects that judge alone; the others are decided here.
import json
import os
import re
import shlex
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

# contribkit:judge-import (the runtime module holds the other files' text above instead)
from contribkit.target.reproconfine import Confined
from contribkit.target.reprojudge import (
    _NUMBER_TOKEN,
    comparable_lines,
    describe,
    signal_name,
)
from contribkit.target.reprotrace import dynamo_counts

# contribkit:end-judge-import

# The Repro driver (reprolib.py, defined below this file's text in a script), as this file sees
# it: typed loosely, so that the driver, which imports this file, is not imported back.
Driver = Any

# The oracle kinds, what each one's argument is ("" none, "text" optional, "TEXT" required,
# "N" an optional count), and the usage line every error names.
EXPECT_ARGS = {
    "error": "text",
    "no-error": "",
    "output": "TEXT",
    "compile-vs-eager": "",
    "device-vs-cpu": "",
    "recompiles": "N",
    "graph-breaks": "N",
    "determinism": "",
    "crash": "",
    "warning": "TEXT",
}
EXPECT_USAGE = (
    "error[:TEXT], no-error, output:TEXT, compile-vs-eager, device-vs-cpu, recompiles[:N],"
    " graph-breaks[:N], determinism, crash, warning:TEXT"
)
EXPECT_AUTO = "auto"  # no stated oracle: the ones the tool infers from the issue
EXPECT_RUN_ENV = "CONTRIBKIT_EXPECT_RUN"  # a two-run child writes what it did to this file
EXPECT_DEVICE_ENV = "CONTRIBKIT_EXPECT_DEVICE"  # the device a device-vs-cpu child runs on
EXPECT_RUN_EXIT = 3  # a two-run child that wrote what it did
TWO_RUNS = ("compile-vs-eager", "device-vs-cpu")
_CODE_ERRORS = ("NameError", "AttributeError", "ImportError", "SyntaxError", "UnboundLocalError")
_RESOURCE = re.compile(r"out of memory|can't allocate memory|cannot allocate memory", re.I)
_VALUE = re.compile(r"\d|\bTrue\b|\bFalse\b|\bnan\b|\binf\b")


def parse_expect(value: str) -> Tuple[str, str]:
    """``(kind, argument)`` of an ``--expect`` value; ValueError, naming the kinds, if bad."""
    kind, sep, arg = value.strip().partition(":")
    kind = kind.strip().lower()
    if kind not in EXPECT_ARGS:
        raise ValueError("unknown oracle %r: use one of %s" % (value, EXPECT_USAGE))
    want = EXPECT_ARGS[kind]
    if "\n" in arg or "\r" in arg:
        raise ValueError("--expect %s: the text must be one line" % kind)
    if not want and sep:
        raise ValueError("--expect %s takes no ':' argument (one of %s)" % (kind, EXPECT_USAGE))
    if want == "TEXT" and not arg.strip():
        raise ValueError("--expect %s needs the text, e.g. %s:nan" % (kind, kind))
    if want == "N":
        if sep and not arg.strip().isdigit():
            raise ValueError("--expect %s:N needs a whole number N >= 0, not %r" % (kind, arg))
        arg = str(int(arg)) if sep else "0"
    if want == "text" and sep and not arg.strip():
        raise ValueError("--expect %s: give the text after ':', or no ':'" % kind)
    return kind, arg


def _flat(text: str) -> str:
    return " ".join(text.split())


def contains(text: str, wanted: str) -> bool:
    """``wanted`` occurs in ``text``, runs of white space counting as one space (tensors pad)."""
    return bool(wanted) and (wanted in text or _flat(wanted) in _flat(text))


def _names(exc: BaseException) -> "set[str]":
    return {cls.__name__ for cls in type(exc).__mro__}


def code_error(exc: BaseException) -> bool:
    """The snippet itself is broken (a name it lacks, a module not installed)."""
    return bool(_names(exc) & set(_CODE_ERRORS))


# The machine lacks a tool torch.compile runs (a C/C++ compiler for inductor's CPU kernels or
# triton's launcher, nvcc, ninja), or the sandbox hides it: the error is this machine's, not
# the issue's. Classes: a CPU inductor compile on a box without g++ ("InvalidCxxCompiler: No
# working C++ compiler found"), a CUDA one whose triton build cannot find gcc
# (``FileNotFoundError: ... 'gcc'``).
_TOOLCHAIN = re.compile(
    r"InvalidCxxCompiler|No working C\+\+ compiler|Failed to find C compiler"
    r"|No such file or directory: '(?:[^']*/)?(?:gcc|g\+\+|cc|c\+\+|clang\+*|nvcc|ninja|ld)'"
)


def toolchain_error(exc: BaseException) -> bool:
    return bool(_TOOLCHAIN.search(type(exc).__name__ + ": " + str(exc)))


def resource_error(exc: BaseException) -> bool:
    """The machine ran short (memory, or a build tool torch.compile runs), so the error says
    nothing about torch's semantics: eager may need an intermediate tensor that a compiled
    kernel fuses away; a compiler this machine lacks is no bug of the issue's."""
    names = _names(exc)
    memory = bool(names & {"MemoryError", "OutOfMemoryError"}) or bool(_RESOURCE.search(str(exc)))
    return memory or toolchain_error(exc)


def error_text(exc: BaseException) -> str:
    """What ``--expect error:TEXT`` searches: the type's name and the whole message."""
    return type(exc).__name__ + ": " + str(exc)


def suggest_error(exc: BaseException) -> str:
    """An ``--expect error:TEXT`` that matches ``exc``: its message's first line, cut short."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    text = re.split(r"0x[0-9a-fA-F]+|/\S+", text)[0].strip()[:60].strip() or type(exc).__name__
    return "--expect " + shlex.quote("error:" + text)


def _close(a: str, b: str) -> bool:
    """Two printed numbers agree as float32 results of one computation may (assert_close's
    float32 tolerances), or to the precision the coarser of them prints."""
    x, y = float(a), float(b)
    if x != x or y != y:
        return x != x and y != y
    if x == y:
        return True
    places = min(len(t.lower().split("e")[0].partition(".")[2]) for t in (a, b))
    return abs(x - y) <= max(1e-5 + 1.3e-6 * abs(y), 0.5 * 10.0 ** (-places))


def same_printed(first: str, second: str) -> bool:
    """Two printed lines show the same values: spaces ignored, numbers by :func:`_close`."""
    a, b = "".join(first.split()), "".join(second.split())
    if a == b:
        return True
    if _NUMBER_TOKEN.split(a) != _NUMBER_TOKEN.split(b):
        return False
    x, y = _NUMBER_TOKEN.findall(a), _NUMBER_TOKEN.findall(b)
    return len(x) == len(y) and all(_close(p, q) for p, q in zip(x, y))


def judge_pair(kind: str, runs: List[Dict[str, Any]], names: Tuple[str, str]) -> Tuple[str, str]:
    """The verdict of a two-run oracle: ``runs[0]`` is the reference (eager, CPU), ``runs[1]``
    the side the issue reports as wrong (compiled, the device)."""
    ref, tested = runs
    for run, name in zip(runs, names):
        if run["outcome"] == "raised" and (run.get("code_error") or run.get("resource")):
            return "CANNOT_RUN", "the code fails on its own " + name + ": " + run["detail"]
    if kind == "compile-vs-eager" and not tested.get("frames"):
        return (
            "CANNOT_RUN",
            "torch.compile compiled nothing: the code never calls it (or raises first)",
        )
    if kind == "compile-vs-eager" and ref.get("frames"):
        return "CANNOT_RUN", "torch.compile still compiled with TORCH_COMPILE_DISABLE=1"
    said = [name + " " + _said(run) for run, name in zip(runs, names)]
    if ref["outcome"] != tested["outcome"]:
        return "REPRODUCED", "; ".join(said)[:300]
    if ref["outcome"] != "completed":
        if ref["detail"] == tested["detail"]:
            why = "both " + _said(ref) + ": that is not a difference between them"
            return "CANNOT_RUN", why[:300]
        return "CANNOT_RUN", "both fail, differently: " + "; ".join(said)[:300]
    first, second = (comparable_lines(run["lines"]) for run in runs)
    for index in range(max(len(first), len(second))):
        a, b = (r[index] if index < len(r) else "(nothing)" for r in (first, second))
        if not same_printed(a, b):
            detail = "line %d: %s printed %r, %s %r" % (
                index + 1,
                names[0],
                a[:80],
                names[1],
                b[:80],
            )
            return "REPRODUCED", detail
    if not any(_VALUE.search(line) for line in first):
        return "CANNOT_RUN", "neither run printed a value to compare: print the results"
    return "NOT_REPRODUCED", "%s and %s printed the same %d line(s)" % (*names, len(first))


def _said(run: Dict[str, Any]) -> str:
    outcome = run["outcome"]
    if outcome == "completed":
        return "ran to its end"
    if outcome == "killed":
        return "was killed by " + str(run["detail"])
    if outcome == "check-failed":
        return "failed the check: " + str(run["detail"])
    return "raises " + str(run["detail"])


class UserOracle:
    """The oracle the user states, asked by the Repro driver (``repro``) at each decision."""

    def __init__(self, repro: "Driver", value: str) -> None:
        self.repro = repro
        self.value = value
        self.kind, self.arg = parse_expect(value)
        self.tag = "expect:" + self.kind
        old = repro.evidence
        self.facts: Dict[str, Any] = dict(old.get("expect_facts") or {})
        found: Dict[str, Any] = {k: old[k] for k in ("reported_device", "expect_facts") if k in old}
        if self.kind == "crash":
            found.update(crash=True, quantized=old.get("quantized") or self.facts.get("quantized"))
        elif self.kind == "determinism":
            found.update(determinism=True, determinism_within=old.get("determinism_within"))
        elif self.kind == "recompiles":
            repeats = (old.get("recompiles") or {}).get("repeats", self.facts.get("repeats", True))
            found["recompiles"] = {"allowed": int(self.arg), "repeats": repeats}
        elif self.kind == "device-vs-cpu" and not self.facts.get("uses_device", True):
            found["own_checks"] = old.get("own_checks")  # the code compares devices itself
        repro.evidence = found
        repro.signature = None  # the stated oracle decides, not the traceback
        device = os.environ.get(EXPECT_DEVICE_ENV)
        if device and os.environ.get(EXPECT_RUN_ENV):
            repro.device = device

    # -- the start: oracles that compare two runs ----------------------------------------------
    def supervise(self, child_env: str) -> None:
        """Run the code twice (eager and compiled, or CPU and the device) in children and judge
        the difference; returns at once in a child, and for one-run oracles."""
        repro = self.repro
        if self.kind not in TWO_RUNS or os.environ.get(child_env) == "1":
            return
        if self.kind == "device-vs-cpu" and not self.facts.get("uses_device", True):
            return  # the code compares the devices itself: one run, on the device, decides
        if not os.path.isfile(sys.argv[0]):
            repro.verdict(
                "CANNOT_RUN",
                "--expect " + self.kind + " runs the script twice: run it from its file",
            )
        if self.kind == "compile-vs-eager":
            names = ("eager", "compiled")
            extra: List[Dict[str, str]] = [{"TORCH_COMPILE_DISABLE": "1"}, {}]
        else:
            device = self._compared_device()
            names = ("cpu", device)
            extra = [{EXPECT_DEVICE_ENV: "cpu"}, {EXPECT_DEVICE_ENV: device}]
            repro.device = device  # the verdict names the side the issue reports as wrong
        repro._done = True
        repro._confined = Confined()  # the children are confined as the driver's one is
        deadline = time.monotonic() + repro.timeout if repro.timeout > 0 else None
        runs: List[Dict[str, Any]] = []
        for index, more in enumerate(extra):
            path = os.path.join(repro._confined.scratch, "run%d.json" % index)
            env = dict(os.environ, PYTHONHASHSEED="0", **more)
            env.update({child_env: "1", EXPECT_RUN_ENV: path})
            code = repro._child(env, deadline)
            if code < 0:
                runs.append({"outcome": "killed", "detail": signal_name(-code), "lines": []})
                continue
            try:  # the child wrote it: never through a link it planted
                handle = os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)))
            except OSError:
                repro._relay(code)
            if code != EXPECT_RUN_EXIT:
                handle.close()
                repro._relay(code)
            with handle:
                runs.append(dict(json.load(handle)))
            if index == 0:
                print("contribkit: running the code again, " + names[1], file=sys.stderr)
        verdict, detail = judge_pair(self.kind, runs, names)
        repro.verdict(verdict, detail, self.tag if verdict != "CANNOT_RUN" else "")

    def _compared_device(self) -> str:
        repro = self.repro
        for device in (repro.device, repro.default_device, "cuda"):
            if device.split(":", 1)[0] != "cpu":
                break
        kind = device.split(":", 1)[0]
        try:
            import torch

            available = kind == "cuda" and torch.cuda.is_available()
            available = available or (kind == "mps" and torch.backends.mps.is_available())
        except Exception as exc:
            repro.verdict("CANNOT_RUN", "torch is not importable: " + describe(exc))
        if not available:  # worded as the driver words it: `test --from-repro` reads it
            why = "device %s is not available here (--expect device-vs-cpu compares it with cpu)"
            repro.verdict("CANNOT_RUN", why % kind, "device")
        return device

    def _record(self, outcome: str, detail: str = "", exc: Optional[BaseException] = None) -> None:
        """In a two-run child: write what this run did, and end it."""
        repro = self.repro
        path = os.environ.get(EXPECT_RUN_ENV)
        if self.kind not in TWO_RUNS or not path:
            return
        counted = dynamo_counts()
        seen = repro._stdout.seen if repro._stdout is not None else ""
        done = {
            "outcome": outcome,
            "detail": detail,
            "lines": [line.rstrip() for line in seen.splitlines() if line.strip()],
            "frames": counted[0] if counted else 0,
            "code_error": bool(exc is not None and code_error(exc)),
            "resource": bool(exc is not None and resource_error(exc)),
        }
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(done, handle)
        repro._done = True
        sys.stdout.flush()
        os._exit(EXPECT_RUN_EXIT)

    # -- the decisions --------------------------------------------------------------------------
    def finished(self, check: Optional[Callable[[], None]]) -> Optional[Callable[[], None]]:
        """The code ran to its end; returns the check() the driver should still run."""
        if check is None or self.kind not in TWO_RUNS:
            return None  # the stated oracle decides, not the tool's check()
        try:
            check()
        except NotImplementedError:
            return None  # check() was never filled in: the two runs' output decides
        except AssertionError as exc:
            said = _flat(str(exc))[:200] or "assertion"
            self._record("check-failed", said)
            self.repro.verdict("REPRODUCED", "check failed on the device: " + said, self.tag)
        except Exception as exc:
            self.raised(exc)
        if not os.environ.get(EXPECT_RUN_ENV):  # device-vs-cpu: the code compares the devices
            how = "check passed on " + self.repro.device
            self.repro.verdict("NOT_REPRODUCED", how, self.tag)
        return None

    def raised(self, exc: BaseException) -> None:
        """The issue's code raised ``exc``; returns only for the kinds the driver judges."""
        repro, kind, arg = self.repro, self.kind, self.arg
        said = describe(exc)
        self._record("raised", said, exc)
        printed = self._printed(exc)
        if kind == "crash":
            return
        if kind == "error":
            if arg and contains(error_text(exc), arg):
                # Decided as a signature is: the error the user names, on whichever device ran
                # (the driver names it with this oracle's tag).
                repro.verdict("REPRODUCED", "raises " + said, "signature")
            if arg:
                detail = "raises a different error: %s; --expect error:%s wants one that holds %r"
                repro.verdict("CANNOT_RUN", detail % (said, arg, arg))
            if code_error(exc) or resource_error(exc):
                repro.verdict("CANNOT_RUN", "the issue's code fails on its own: " + said)
            repro.verdict("REPRODUCED", "raises " + said, self.tag)
        if kind == "output" and contains(printed, arg):
            repro.verdict("REPRODUCED", "printed %r (then raised %s)" % (arg, said), self.tag)
        if kind == "no-error" and not code_error(exc) and not resource_error(exc):
            detail = "raises " + said + ": the code no longer runs to its end without an error"
            repro.verdict("NOT_REPRODUCED", detail, self.tag)
        if kind == "graph-breaks" and "Unsupported" in _names(exc) and self.arg == "0":
            repro.verdict("REPRODUCED", "fullgraph compile hit a graph break: " + said, self.tag)
        if kind == "device-vs-cpu" and isinstance(exc, AssertionError):
            repro.verdict("REPRODUCED", "the code's own check failed: " + said, self.tag)
        hint = "" if kind != "output" else "; if the error is the bug: " + suggest_error(exc)
        detail = "raises %s before --expect %s can decide%s" % (said, self.value, hint)
        repro.verdict("CANNOT_RUN", detail[:400])

    def completed(self, how: str) -> None:
        """The code ended without raising; returns only for the kinds the driver judges."""
        repro, kind, arg = self.repro, self.kind, self.arg
        self._record("completed")
        printed = self._printed()
        if kind in ("crash", "determinism") or (kind == "device-vs-cpu" and self._own_checks()):
            return
        if kind == "error":
            if arg and contains(printed, arg):
                detail = how + (
                    " and printed %r: the code catches the error"
                    " (remove the try/except, or --expect output:%s)"
                )
                repro.verdict("CANNOT_RUN", detail % (arg, arg))
            repro.verdict(
                "NOT_REPRODUCED",
                how + " without " + ("an error" if not arg else "an error holding %r" % arg),
                self.tag,
            )
        if kind == "no-error":
            repro.verdict("REPRODUCED", how + " without an error", self.tag)
        if kind == "output":
            if contains(printed, arg):
                repro.verdict("REPRODUCED", "printed %r" % arg, self.tag)
            repro.verdict("NOT_REPRODUCED", how + " without printing %r" % arg, self.tag)
        if kind == "warning":
            recorded, err = repro.warnings_seen()
            if contains("\n".join([*recorded, err]), arg):
                repro.verdict("REPRODUCED", "warns %r" % arg, self.tag)
            repro.verdict("NOT_REPRODUCED", how + " without a warning holding %r" % arg, self.tag)
        if kind == "recompiles":
            repro._judge_recompiles(how)
            repro.verdict("CANNOT_RUN", how + "; torch.compile never ran, so nothing recompiled")
        if kind == "graph-breaks":
            counted = dynamo_counts()
            if counted is None or not counted[0]:
                repro.verdict("CANNOT_RUN", how + "; torch.compile traced nothing")
            assert counted is not None  # verdict() never returns
            frames, breaks, first = counted
            said = "%d graph break(s) in %d frame(s)" % (breaks, frames)
            if breaks > int(arg):
                detail = said + ("; the first: " + first if first else "")
                repro.verdict("REPRODUCED", detail[:300], self.tag)
            repro.verdict("NOT_REPRODUCED", how + "; " + said + " (allowed: %s)" % arg, self.tag)
        if kind == "device-vs-cpu":
            detail = how + ", but the code takes no device from --device and checks nothing"
            repro.verdict("CANNOT_RUN", detail + ": --expect device-vs-cpu needs DEVICE in it")
        repro.verdict("CANNOT_RUN", how + " outside the two runs --expect %s compares" % kind)

    def signalled(self, name: str) -> None:
        if self.kind != "crash":
            detail = "the process was killed by " + name + "; decide a crash with --expect crash"
            self.repro.verdict("CANNOT_RUN", detail)

    def _own_checks(self) -> bool:
        return bool(self.repro.evidence.get("own_checks"))

    def _printed(self, exc: Optional[BaseException] = None) -> str:
        """What the code printed (stdout, then stderr), less the traceback of ``exc``."""
        out, err = (
            t.seen if t is not None else "" for t in (self.repro._stdout, self.repro._stderr)
        )
        if exc is not None:
            shown = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            err = err[: -len(shown)] if shown and err.endswith(shown) else err
        return out + err


def abstain_hint(repro: "Driver", detail: str) -> str:
    """What ``--expect`` would decide a CANNOT_RUN the driver reached on its own ("" when none
    can be inferred: a missing device, a broken snippet, a time limit, INCOMPLETE)."""
    if repro.incomplete or "timed out" in detail or "--expect" in detail:
        return ""
    exc = repro.raised_error
    if exc is not None:
        if code_error(exc) or resource_error(exc):
            return ""
        return "; if that error is the bug: " + suggest_error(exc)
    if detail.startswith("the process was killed by"):
        return "; if the crash is the bug: --expect crash"
    evidence = repro.evidence
    facts = evidence.get("expect_facts") or {}
    if evidence.get("units"):
        return (
            "; or decide it with --expect output:TEXT (TEXT: what it prints while the bug is there)"
        )
    if facts.get("uses_compile") and not evidence.get("recompiles"):
        return "; or decide it with --expect compile-vs-eager"
    if facts.get("contrasts_devices") and facts.get("uses_device"):
        return "; or decide it with --expect device-vs-cpu"
    if facts.get("wants_error"):
        return "; or, if the bug is that no error is raised: --expect no-error"
    warned = repro.record.warnings if repro.record is not None else []
    undecided = "gives nothing to compare with" in detail or "fill in check()" in detail
    if warned and undecided:  # the code warned: that may be the bug
        text = re.split(r"0x[0-9a-fA-F]+|/\S+", warned[0])[0].strip()[:60].strip()
        return "; if its warning is the bug: --expect " + shlex.quote("warning:" + text)
    if "gives nothing to compare with" in detail:
        return "; or state what shows the bug: --expect output:TEXT, or --expect no-error"
    if detail.startswith("INCOMPLETE: fill in check()"):  # the code ran; nothing says what is wrong
        return "; or state what shows the bug: --expect output:TEXT (what it prints with the bug)"
    return ""
