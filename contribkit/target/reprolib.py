# contribkit repro runtime, part 7: the Repro driver. Embedded verbatim in every generated repro
# script after reprojudge.py (the judging functions), reprotrace.py (the execution evidence) and
# reproerrors.py (what a raised error says; this file's import of them is dropped there), so it
# is standard-library only, runs on Python 3.9+, and has no __future__ imports.
# The verdict contract (see contribkit's README): the last line printed is
#   contribkit-verdict: <VERDICT> [<oracle>] <detail>
# with exit 0 NOT_REPRODUCED, 1 REPRODUCED, 125 CANNOT_RUN (compatible with `git bisect run`).
# The script re-runs itself in a child process under a time limit, so that a hang ends in
# CANNOT_RUN and a crash (a signal) is seen and judged; that child is confined (reproconfine.py).
import argparse
import atexit
import json
import os
import random
import subprocess
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, NoReturn, Optional

# contribkit:judge-import (the runtime module holds the other files' text above instead)
from contribkit.target.reproconfine import Confined
from contribkit.target.reproerrors import (
    caught_reported,
    classify_error,
    eager_only_error,
    signature_text,
)
from contribkit.target.reproexpect import (
    EXPECT_AUTO,
    EXPECT_USAGE,
    UserOracle,
    abstain_hint,
    code_error,
)
from contribkit.target.reprojudge import (
    describe,
    judge_printed_pair,
    judge_recompiles,
    judge_runs,
    judge_stated,
    judge_units,
    judge_warning,
    normalise_message,
    printed_signature,
    signal_name,
    unit_outputs,
)
from contribkit.target.reprorules import (
    CAUGHT,
    DEVICE_GAP,
    clean_run,
    evidence_rule,
    judge_missing,
    undecided,
)
from contribkit.target.reprotrace import (
    EVIDENCE_ENV,
    EVIDENCE_PREFIX,
    Recorder,
    Tee,
    dynamo_counts,
    dynamo_recompiles,
    explain_lines,
    float64,
    issue_needs,
    main_file,
    reference_error,
    run_cases,
    torch_names,
)

# contribkit:end-judge-import

VERDICT_PREFIX = "contribkit-verdict:"
VERDICT_EXIT = {"NOT_REPRODUCED": 0, "REPRODUCED": 1, "CANNOT_RUN": 125}
DEFAULT_TIMEOUT = 300
CHILD_ENV = "CONTRIBKIT_REPRO_CHILD"
# Set in a child that re-runs the code under another quantized engine (see Repro._no_crash).
ENGINE_ENV = "CONTRIBKIT_QUANTIZED_ENGINE"
OUTPUT_ENV = "CONTRIBKIT_REPRO_OUTPUT"  # determinism: where a child writes what it printed
COMPARE_EXIT = 3  # a child that wrote its output for the determinism oracle


class Repro:
    """Drives one repro script: options, time limit, device checks, seeds, exactly one verdict.

    ``evidence`` says which oracles apply and what the issue claims: the runtime dict that
    contribkit.repro.evidence.gather_evidence builds (units of quoted output carry the ids given
    to :meth:`mark`; id 0 is the whole program's output).
    """

    def __init__(
        self,
        issue: str,
        signature: Optional[Dict[str, str]],
        default_device: str,
        requires_cuda: bool = False,
        seed_numpy: bool = False,
        incomplete: Optional[str] = None,
        evidence: Optional[Dict[str, Any]] = None,
        timeout: float = DEFAULT_TIMEOUT,
        expect: Optional[str] = None,
    ) -> None:
        self.issue = issue
        self.signature = signature
        self.default_device = default_device
        self.requires_cuda = requires_cuda
        self.seed_numpy = seed_numpy
        self.incomplete = incomplete
        self.evidence: Dict[str, Any] = dict(evidence or {})
        self.timeout = timeout
        self.expect = expect  # the oracle the user stated (`--expect`), else None
        self.user: Optional[UserOracle] = None
        self.raised_error: Optional[BaseException] = None
        self.device = default_device
        self.as_json = False
        self.exit_requested: List[Any] = []
        self.skipped: List[str] = []  # unittest tests that skipped
        self._done = False
        self._passive = False  # a spawned worker re-running the script: its parent judges
        self._pid = os.getpid()
        self._stdout: Optional[Tee] = None
        self._stderr: Optional[Tee] = None
        self._marks: List["tuple[int, int]"] = []
        self._argv: List[str] = []
        self._started = 0.0
        self._differential: "Optional[tuple[Callable[[], Any], Callable[[], Any]]]" = None
        self._confined: Optional[Confined] = None  # the supervisor's confined child
        self.record: Optional[Recorder] = None  # what the issue's code executed (None: not here)
        self.explain = False
        self._raised_on: "Optional[tuple[str, List[str]]]" = None  # the torch op that raised
        self.references: Dict[int, Any] = {}  # unit -> (error, eps) against float64, or None

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
        parser.add_argument(
            "--explain",
            action="store_true",
            help="print the execution evidence and the rule that decided, before the verdict",
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=self.timeout,
            help="seconds before CANNOT_RUN (default %(default)s; 0: no limit)",
        )
        parser.add_argument(
            "--expect",
            metavar="ORACLE",
            help="the oracle that decides, instead of the repro's (%s): %s, or %s"
            % (self.expect or EXPECT_AUTO, EXPECT_USAGE, EXPECT_AUTO),
        )
        self._argv = list(sys.argv)
        self._started = time.monotonic()
        args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
        self.as_json = args.json
        self.explain = args.explain
        self.timeout = args.timeout
        self.device = args.device or os.environ.get("CONTRIBKIT_DEVICE") or self.default_device
        self.expect = self.expect if args.expect is None else args.expect
        if sys._getframe(1).f_globals.get("__name__") == "__mp_main__":  # a spawned worker
            self._passive = True  # runs the script's top level again: its parent judges
            return self.device
        if self.expect and self.expect != EXPECT_AUTO:  # the stated oracle decides (reproexpect)
            try:
                self.user = UserOracle(self, self.expect)
            except ValueError as exc:
                parser.error(str(exc))
            self.user.supervise(CHILD_ENV)
        if os.environ.get(CHILD_ENV) != "1" and os.path.isfile(sys.argv[0]):
            self._supervise()
        sys.argv = sys.argv[:1] + rest  # the issue's code may read its own arguments
        tee = ("units", "determinism", "stated", "warning", "pair")
        said = self.signature and self.signature.get("message")
        if self.user is not None or said or any(map(self.evidence.get, tee)):
            sys.stdout = self._stdout = Tee(sys.stdout)
            sys.stderr = self._stderr = Tee(sys.stderr)
        sys.excepthook = self._excepthook
        atexit.register(self._at_exit)
        self._wrap_sys_exit()
        self._record_skips()
        self._check_device()
        self._seed()
        self.record = Recorder(main_file())
        self.record.start(str((self.evidence.get("warning") or {}).get("category") or ""))
        self.mark(0)
        return self.device

    def _supervise(self) -> NoReturn:
        """Run this script again in a confined child under the time limit; judge a crash or a
        hang.

        For the determinism oracle, a child that ran the code to its end writes what it printed
        to a file and exits COMPARE_EXIT; a second child runs it again, and the two compare."""
        env = dict(os.environ, **{CHILD_ENV: "1"})
        self._done = True
        self._confined = Confined()
        deadline = time.monotonic() + self.timeout if self.timeout > 0 else None
        if self.evidence.get("determinism"):  # the two runs differ in torch, not in str hashes
            env["PYTHONHASHSEED"] = "0"
        if not self.evidence.get("determinism"):
            self._relay(self._child(env, deadline))
        runs: List[List[str]] = []
        for run in (1, 2):
            env[OUTPUT_ENV] = path = os.path.join(self._confined.scratch, "run%d.json" % run)
            code = self._child(env, deadline)
            try:  # the child wrote it: never through a link it planted
                handle = os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)))
            except OSError:
                self._relay(code)
            if code != COMPARE_EXIT:
                self._relay(code)
            with handle:
                runs.append([str(line) for line in json.load(handle)])
            if run == 1:
                print("contribkit: running the code again to compare", file=sys.stderr)
        verdict, detail = judge_runs(runs[0], runs[1])
        if verdict == "NOT_REPRODUCED" and self.evidence.get("determinism_within"):
            verdict = "CANNOT_RUN"
            detail += ", but the code compares results within one run: read what it printed"
        self.verdict(verdict, detail, "determinism" if verdict != "CANNOT_RUN" else "")

    def _child(self, env: Dict[str, str], deadline: Optional[float]) -> int:
        """The exit code of this script run again in a confined child, before ``deadline``;
        nothing it started outlives it."""
        assert self._confined is not None
        try:
            child = self._confined.start([sys.executable, *sys.argv], env)
        except OSError as exc:
            self.verdict("CANNOT_RUN", "could not start the child process: " + describe(exc))
        try:
            left = None if deadline is None else max(deadline - time.monotonic(), 0.01)
            code = self._confined.exit_code(child, child.wait(timeout=left))
        except subprocess.TimeoutExpired:
            self._confined.end(child)
            self.verdict("CANNOT_RUN", "timed out after %g s" % self.timeout)
        except KeyboardInterrupt:
            self._confined.end(child)
            self._confined.remove()
            os._exit(130)
        self._confined.end(child)
        return code

    def _relay(self, code: int) -> NoReturn:
        """End as the child ended: its verdict, a signal judged, or CANNOT_RUN."""
        if code in VERDICT_EXIT.values() or code == 130:
            if self._confined is not None:
                self._confined.remove()
            os._exit(code)
        if code < 0:
            self._judge_signal(-code)
        self.verdict("CANNOT_RUN", "the script exited with %d and no verdict" % code)

    def _judge_signal(self, number: int) -> NoReturn:
        name = signal_name(number)
        if self.user is not None:
            self.user.signalled(name)
        if self.evidence.get("crash"):
            self.verdict("REPRODUCED", "the process was killed by " + name, "crash")
        self.verdict(
            "CANNOT_RUN", "the process was killed by " + name + "; the issue reports no crash"
        )

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
                    "CANNOT_RUN",
                    "CUDA is not available here, and the issue's code needs it"
                    " (it compares cuda with cpu or uses CUDA-only APIs)",
                    "device",
                )
            hint = " (try --device cpu)" if not self.requires_cuda else ""
            self.verdict("CANNOT_RUN", "device cuda is not available here" + hint, "device")
        if kind == "mps" and not torch.backends.mps.is_available():
            self.verdict("CANNOT_RUN", "device mps is not available here", "device")
        engine = os.environ.get(ENGINE_ENV)
        if engine:
            torch.backends.quantized.engine = engine

    def _seed(self) -> None:
        import torch

        random.seed(0)
        torch.manual_seed(0)
        if os.environ.get(OUTPUT_ENV):  # a determinism run: differences below 4 decimals count
            torch.set_printoptions(precision=12)
        if self.seed_numpy:
            try:
                import numpy
            except ImportError:
                return
            numpy.random.seed(0)

    def _wrap_sys_exit(self) -> None:
        real_exit, real_os_exit = sys.exit, os._exit

        def recorded_exit(code: Any = None) -> NoReturn:
            if os.getpid() == self._pid:  # not a forked child's
                self.exit_requested.append(code)
            real_exit(code)

        def recorded_os_exit(status: int) -> NoReturn:  # no atexit: the verdict comes first
            if os.getpid() == self._pid and not self._done:  # not a forked worker's exit
                self.exit_requested.append(status)
                self._at_exit()
            real_os_exit(status)

        sys.exit, os._exit = recorded_exit, recorded_os_exit

    def _record_skips(self) -> None:
        """Note the unittest tests that skip (``skipIf(not HAS_SCIPY)``, no CUDA): a passing
        run of the others does not show the bug is gone."""
        import unittest

        real_skip = unittest.TestResult.addSkip
        skipped = self.skipped

        def recorded_skip(result: Any, test: Any, reason: str) -> None:
            skipped.append(str(test).split(" ", 1)[0] + " (" + str(reason)[:80] + ")")
            real_skip(result, test, reason)

        unittest.TestResult.addSkip = recorded_skip  # type: ignore[method-assign,assignment]

    # -- helpers the edited code calls -------------------------------------------------
    def mark(self, unit: int) -> None:
        """Output printed from here on belongs to ``unit`` (-1: to none)."""
        sys.stdout.flush()
        written = self._stdout.total if self._stdout is not None else 0
        self._marks.append((unit, written))

    def echo(self, value: Any) -> None:
        """What the REPL prints for an expression statement."""
        if value is not None:
            print(repr(value))

    def reference(self, unit: int, value: Callable[[], Any], ref: Callable[[], Any]) -> None:
        """How far ``value()``, printed for ``unit``, is from ``ref()``: the same computation
        on the code's inputs in float64 (see contribkit.repro.reference)."""
        self.references[unit] = reference_error(self.record, value, ref)

    float64 = staticmethod(float64)
    torch_names = staticmethod(torch_names)  # the edits' imports of the code's torch classes

    def differential(self, compiled: Callable[[], Any], eager: Callable[[], Any]) -> None:
        """The calls a compile-vs-eager issue compares, for when its code raises: see
        :func:`eager_only_error`."""
        self._differential = (compiled, eager)

    def _diverges(self, exc: BaseException) -> "Optional[tuple[str, str, str]]":
        """REPRODUCED when the issue's code raised and, on the same inputs, eager raises while
        the compiled call returns: torch.compile disagrees with eager, the issue's complaint.
        Only for issues that report no error of their own (a different error is not theirs)."""
        if self._differential is None or self.signature or code_error(exc):
            return None
        found = eager_only_error(*self._differential)
        return ("REPRODUCED", found, "compile-vs-eager") if found else None

    def run_tests(self, *cases: Any) -> None:
        """Run unittest cases the issue defines; a failure raises AssertionError."""
        run_cases(cases)
        self.evidence["own_checks"] = True

    # -- outcomes ---------------------------------------------------------------------
    def finish(
        self,
        check: Optional[Callable[[], None]] = None,
        exact: Optional[Callable[[], None]] = None,
    ) -> None:
        """The issue's code ran to the end: decide by the strongest evidence there is.
        ``exact``: asked after ``check`` passed, where the code states no tolerance."""
        if self._passive:
            return
        self.mark(-1)
        if self.record is not None:
            self.record.stop(ran_to_end=True)
        if self.incomplete:
            self.verdict("CANNOT_RUN", "INCOMPLETE: " + self.incomplete)
        if self.user is not None:
            check = self.user.finished(check)
        if check is not None:
            self._run_check(check, exact)
        self._completed("completed on " + self._ran_on())

    def _run_check(
        self, check: Callable[[], None], exact: Optional[Callable[[], None]] = None
    ) -> NoReturn:
        oracle = self.evidence.get("check_oracle") or "check"
        try:
            check()
        except NotImplementedError:
            self.verdict("CANNOT_RUN", "INCOMPLETE: fill in check()")
        except AssertionError as exc:
            detail = "check failed: " + (normalise_message(str(exc)) or "assertion")
            self.verdict("REPRODUCED", detail, oracle)
        except Exception as exc:
            judged = self._diverges(exc)
            if judged is not None:
                self.verdict(*judged)
            self.verdict("CANNOT_RUN", "check() raised " + describe(exc))
        if exact is not None:
            try:
                exact()
            except AssertionError as exc:
                lines = [line.strip() for line in str(exc).splitlines()]
                gap = [line for line in lines if line.startswith("Greatest absolute")]
                detail = (
                    "the values agree within assert_close's default tolerance, not exactly ("
                    + (gap[0] if gap else normalise_message(str(exc)))[:200]
                    + "); the code measures the difference and states no tolerance: put"
                    " one in check() (rtol=, atol=) and drop exact=check_exact from finish()"
                )
                self.verdict("CANNOT_RUN", detail[:400])
        how = "check passed on " + self._ran_on()
        quoted = self._quoted_output() if self.evidence.get("units") else None
        if quoted is not None and quoted[0] == "REPRODUCED":  # the claims conflict
            self.verdict("CANNOT_RUN", (how + ", but " + quoted[1])[:300])
        self.verdict("NOT_REPRODUCED", how, oracle)

    def _unit_outputs(self) -> Dict[int, List[str]]:
        """Printed lines per unit id (id 0: everything the issue's code printed)."""
        tee = self._stdout
        return unit_outputs(tee.seen, tee.total, self._marks) if tee is not None else {}

    def _quoted_output(self) -> "Optional[tuple[str, str]]":
        units = self.evidence.get("units") or []
        ev, outputs = self.evidence, self._unit_outputs()
        facts = bool(ev.get("deterministic")), bool(ev.get("draws"))
        return judge_units(units, outputs, self.references, *facts)

    def warnings_seen(self) -> "tuple[List[str], str]":
        """The warnings the code raised ("Category: message") and what it wrote to stderr."""
        warned = self.record.warnings if self.record is not None else []
        return warned, self._stderr.seen if self._stderr is not None else ""

    def _completed(self, how: str) -> NoReturn:
        """The code ended without raising: decide by the evidence the issue gives."""
        if self.user is not None:
            self.user.completed(how)
        sig = self.signature
        if sig and sig.get("message"):
            seen = "".join(t.seen for t in (self._stdout, self._stderr) if t is not None)
            line = printed_signature(seen, sig["exc_type"], sig["message"])
            caught = caught_reported(self.record, sig)
            if line or caught:
                detail = "the issue's code caught the error: " + (line or caught)[:200]
                self.verdict("REPRODUCED", detail, "signature")
        evidence = self.evidence
        if evidence.get("own_checks"):
            quoted = self._quoted_output() if evidence.get("units") else None
            if quoted is not None and quoted[0] == "REPRODUCED":  # the asserts miss the bug
                detail = how + "; the issue's own checks passed, but " + quoted[1]
                self.verdict("CANNOT_RUN", detail[:300] + ": add an assert on that value")
            self.verdict("NOT_REPRODUCED", how + "; the issue's own checks passed", "assert")
        if evidence.get("units"):
            judged = self._quoted_output()
            if judged is not None:
                self.verdict(judged[0], judged[1], "quoted-output")
        stated = judge_stated(self._unit_outputs().get(0, []), evidence.get("stated") or [])
        if stated is not None:
            self.verdict(stated[0], stated[1], "stated-value")
        paired = (
            judge_printed_pair(self._unit_outputs(), evidence["pair"])
            if "pair" in evidence
            else None
        )
        if paired is not None:
            self.verdict(paired[0], how + "; " + paired[1], "printed-pair")
        if evidence.get("warning"):
            found, detail = judge_warning(evidence["warning"], *self.warnings_seen())
            tag = "warning" if found != "CANNOT_RUN" else ""
            self.verdict(found, detail if found == "REPRODUCED" else how + detail, tag)
        if evidence.get("crash"):
            self._no_crash(how + " without crashing")
        if sig:
            self.verdict(*clean_run(how, self.evidence, self._expected()))
        if evidence.get("graph_breaks"):
            counted = dynamo_counts()
            if counted is not None and counted[1]:
                detail = str(counted[1]) + " graph break(s); the first: " + counted[2]
                self.verdict("REPRODUCED", detail[:300], "graph-breaks")
            if counted is not None and counted[0]:
                detail = how + "; torch.compile traced " + str(counted[0]) + " frame(s)"
                self.verdict("NOT_REPRODUCED", detail + " without a graph break", "graph-breaks")
        if evidence.get("recompiles"):
            self._judge_recompiles(how)
        if evidence.get("determinism") and os.environ.get(OUTPUT_ENV):
            with open(os.environ[OUTPUT_ENV], "w", encoding="utf-8") as handle:
                json.dump(self._unit_outputs().get(0, []), handle)
            self._done = True
            sys.stdout.flush()
            os._exit(COMPARE_EXIT)
        if evidence.get("missing_error"):
            doc = self.record.document() if self.record is not None else None
            self.verdict(*judge_missing(how, evidence["missing_error"], self._marks, doc))
        if evidence.get("reports_error"):
            self.verdict("NOT_REPRODUCED", how + " without the error the issue reports", "no-error")
        self.verdict("CANNOT_RUN", undecided(how, evidence))

    def _judge_recompiles(self, how: str) -> None:
        wanted = self.evidence["recompiles"]
        counted = dynamo_recompiles()
        if counted is not None:
            verdict, detail = judge_recompiles(counted, wanted["allowed"], wanted["repeats"])
            if verdict != "REPRODUCED":
                detail = how + "; " + detail
            self.verdict(verdict, detail[:400], "recompiles" if verdict != "CANNOT_RUN" else "")

    def _expected(self) -> str:
        return signature_text(self.signature)

    def classify(self, exc: BaseException) -> "tuple[str, str, str]":
        """The verdict, detail and oracle for an exception the issue's code raised."""
        raised = self._raised_on
        op = raised[0] if raised is not None else ""
        marks = self._marks
        return classify_error(exc, self.signature, self.evidence, raised is not None, op, marks)

    def _excepthook(self, exc_type: Any, exc: BaseException, tb: Any) -> None:
        if isinstance(exc, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            sys.stderr.flush()
            self._done = True  # no verdict: the os._exit wrapper lets it through
            os._exit(130)  # aborts a `git bisect run`, as an interruption should
        traceback.print_exception(exc_type, exc, tb)
        self.raised_error = exc
        if self.record is not None:  # before a stated oracle decides on the error
            self.record.stop(ran_to_end=False)
            self._raised_on = self.record.raised_by(exc)
        if self.user is not None:
            self.user.raised(exc)
        verdict, detail, oracle = self.classify(exc)
        if verdict == "CANNOT_RUN":
            verdict, detail, oracle = self._diverges(exc) or (verdict, detail, oracle)
        if verdict == "NOT_REPRODUCED" and oracle == "crash":
            self._no_crash(detail)
        self.verdict(verdict, detail, oracle)

    def _no_crash(self, detail: str) -> NoReturn:
        """NOT_REPRODUCED by the crash oracle, once the code has run under every quantized
        engine this torch supports (quantized kernels differ by engine: fbgemm may crash where
        onednn checks its input), each in a child process with its output discarded."""
        tried = []
        for engine in self._other_engines():
            left = self.timeout - (time.monotonic() - self._started) if self.timeout > 0 else None
            env = dict(os.environ, **{CHILD_ENV: "1", ENGINE_ENV: engine, "PYTHONHASHSEED": "0"})
            env.pop(OUTPUT_ENV, None)  # its output is not one of the determinism runs
            try:
                if left is not None and left < 1:
                    raise subprocess.TimeoutExpired("", 0)
                code = subprocess.run(
                    [sys.executable, *self._argv],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=left,
                ).returncode
            except (OSError, subprocess.TimeoutExpired):
                why = " but could not run it under the quantized engine %r in time" % engine
                self.verdict("CANNOT_RUN", detail + why)
            if code < 0:
                how = "with torch.backends.quantized.engine = %r the process was killed by "
                self.verdict("REPRODUCED", how % engine + signal_name(-code), "crash")
            tried.append(engine)
        if tried:
            detail += " (nor under the quantized engines " + ", ".join(tried) + ")"
        self.verdict("NOT_REPRODUCED", detail, "crash")

    def _other_engines(self) -> List[str]:
        """The quantized engines other than the one that ran, where the code uses them."""
        if not self.evidence.get("quantized") or os.environ.get(ENGINE_ENV):
            return []
        if not self._argv or not os.path.isfile(self._argv[0]):
            return []
        import torch

        ran = torch.backends.quantized.engine
        return [e for e in torch.backends.quantized.supported_engines if e not in (ran, "none")]

    def _at_exit(self) -> None:
        if self._done or os.getpid() != self._pid:  # judged, or a forked child's exit
            return
        if self.exit_requested and self.exit_requested[-1] not in (0, None):
            self.verdict(
                "CANNOT_RUN", "the issue's code exited with " + repr(self.exit_requested[-1])
            )
        self.mark(-1)
        if self.record is not None:
            self.record.stop(ran_to_end=True)
        self._completed("the issue's code exited cleanly on " + self._ran_on())

    def verdict(self, verdict: str, detail: str, oracle: str = "") -> NoReturn:
        reported = str(self.evidence.get("reported_device") or "")
        ran_on = self.device.split(":", 1)[0]
        recorded = self.record is not None and self.record.mode is not None
        rule = ""
        if verdict == "NOT_REPRODUCED" and self.skipped:
            detail = "the issue's test skipped here: " + ", ".join(self.skipped)[:200]
            verdict, oracle = "CANNOT_RUN", ""
            detail += "; run it where it does not skip, or remove the skip"
        elsewhere = False  # the code ran on another device than the issue reports the bug on
        if verdict != "CANNOT_RUN" and recorded:
            rule, gap = self._evidence_rule(verdict, oracle)
            if gap.startswith(DEVICE_GAP) and reported:
                ran_on, elsewhere = self._ran_on(), True  # the device named is the one that ran
            elif gap:
                to_decide = _TO_DECIDE_CAUGHT if gap.startswith(CAUGHT) else _TO_DECIDE
                detail = detail[:200] + "; not decisive, as " + gap + ": " + to_decide
                verdict, oracle = "CANNOT_RUN", ""
        elif verdict != "CANNOT_RUN" and reported and reported != ran_on:
            elsewhere = oracle != "signature"
        if elsewhere:
            detail = (
                "the issue reports the bug on "
                + reported
                + ", but the code ran on "
                + ran_on
                + " (there: "
                + verdict
                + " "
                + detail[:160]
                + "); run it with --device "
                + reported
                + " where "
                + reported
                + " is available"
            )
            verdict, oracle = "CANNOT_RUN", "device"
        if self.user is not None and oracle not in ("", "device"):
            oracle = self.user.tag  # the stated oracle decided, through whichever judge
        elif verdict == "CANNOT_RUN" and self.user is None and oracle != "device":
            detail += abstain_hint(self, detail)  # the --expect that would decide it
        self._done = True
        if self._confined is not None:
            self._confined.remove()
        code = VERDICT_EXIT[verdict]
        sys.stderr.flush()
        evidence = self.record.document() if self.record is not None else None
        if evidence is not None and self._raised_on is not None:  # the op the error came from
            evidence["raised_by"] = {"op": self._raised_on[0], "devices": self._raised_on[1]}
        if self._stdout is not None:
            sys.stdout = self._stdout._stream
        if self.explain or os.environ.get(EVIDENCE_ENV) == "1":
            print(EVIDENCE_PREFIX + " " + json.dumps({"evidence": evidence, "rule": rule}))
        if self.explain:
            for line in explain_lines(evidence, rule or "the oracle decided alone"):
                print("contribkit-explain: " + line)
        if self.as_json:
            line = json.dumps(
                {
                    "verdict": verdict,
                    "oracle": oracle or None,
                    "detail": detail,
                    "exit_code": code,
                    "issue": self.issue,
                    "device": self._ran_on(),
                    "signature": self._expected() or None,
                    "expect": self.user.value if self.user is not None else None,
                    "evidence": evidence,
                    "rule": rule or None,
                }
            )
        else:
            tag = " [" + oracle + "]" if oracle else ""
            line = VERDICT_PREFIX + " " + verdict + tag + " " + detail
        print(line, flush=True)
        os._exit(code)

    # -- the rules over the execution evidence --------------------------------------------
    def _ran_on(self) -> str:
        """The device the issue's operations ran on (from the evidence), else the flag's."""
        devices = self.record.devices() if self.record is not None else []
        return ", ".join(devices) if devices else self.device

    def _evidence_rule(self, verdict: str, oracle: str) -> "tuple[str, str]":
        """The rule a definite verdict must meet, and what the evidence lacks ("" when none)."""
        assert self.record is not None
        raised = self._raised_on
        needs = issue_needs(self.evidence, raised[0] if raised else "")
        if oracle == "determinism":  # decided from two child runs, each recorded there
            return "", ""
        return evidence_rule(self.record.document(), needs, verdict, oracle, raised)


_TO_DECIDE = "run it where that holds, or decide by reading its output"
_TO_DECIDE_CAUGHT = "take the try/except away to see it, or decide by reading its output"
