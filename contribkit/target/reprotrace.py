# contribkit repro runtime, part 5: the execution evidence (what the issue's code ran, and a tee
# of what it printed). Embedded verbatim in every generated repro script between reprojudge.py
# and reprolib.py (see contribkit.repro.plan.runtime_source), so it is standard-library only
# (torch is imported when recording starts), runs on Python 3.9+, and has no __future__ imports.
import contextlib
import functools
import os
import sys
from typing import Any, Callable, Dict, List, Optional

RECORD_ENV = "CONTRIBKIT_REPRO_RECORD"  # "0": record no torch calls (the on/off comparison)
EVIDENCE_ENV = "CONTRIBKIT_REPRO_EVIDENCE"  # "1": print the evidence line (contribkit run sets it)
EVIDENCE_PREFIX = "contribkit-evidence:"  # that line: the evidence and the rule, as JSON
# Calls that read or show a tensor, or set up a run: they say nothing of the issue's computation.
_QUIET_OPS = frozenset(
    [
        "__get__",
        "__set__",
        "__repr__",
        "__str__",
        "__format__",
        "__len__",
        "__iter__",
        "__hash__",
        "__bool__",
        "__index__",
        "__reduce_ex__",
        "__deepcopy__",
        "__setstate__",
        "__contains__",
        "__array__",
        "tolist",
        "item",
        "numpy",
        "dim",
        "size",
        "numel",
        "is_available",
        "manual_seed",
        "set_printoptions",
        "get_default_dtype",
        "device",
    ]
)
_MAX_OPS = 200  # distinct op names kept in the evidence (the most called)
_SAMPLE = 64  # after its first 64 calls, an op's tensors are looked at once in 64 calls


def _tensor_kinds(values: List[Any]) -> "tuple[List[str], List[str]]":
    """The device types and dtypes of the tensors among ``values`` (and in their lists)."""
    devices: List[str] = []
    dtypes: List[str] = []
    for value in values:
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items[:8]:
            try:  # any object: a property may raise anything
                device, dtype = getattr(item, "device", None), getattr(item, "dtype", None)
            except Exception:
                continue
            if device is not None and dtype is not None and hasattr(item, "data_ptr"):
                kind = getattr(device, "type", None)
                if kind and kind not in devices:
                    devices.append(kind)
                text = str(dtype).replace("torch.", "")
                if text not in dtypes:
                    dtypes.append(text)
    return devices, dtypes


# torch's computing layers, as paths under its package: an error raised in their Python code
# is an operation's. Not its infrastructure (serialization, data loading, distributed, the
# devices' modules, the optimizers' argument checks), whose errors speak of the machine or the
# snippet's use of it, nor the compile stack, whose own oracles judge its errors.
_COMPUTING = ("nn", "functional.py", "distributions", "_tensor.py", "autograd", "linalg", "fft")
_COMPUTING_TOO = ("special", "masked", "nested", "sparse", "_refs", "_prims", "_decomp", "ao")


def raised_in_compile(exc: BaseException, script: str) -> bool:
    """``exc`` is torch.compile's own error (dynamo's, a backend's), raised while the script
    called a compiled function: torch.compile is the operation that raised it. Classes:
    dynamo's Unsupported for a construct it cannot trace (iterating a dict view, a generator),
    a dynamic dimension the trace specialised (ConstraintViolationError), a backend's failure
    (BackendCompilerFailed)."""
    if not type(exc).__module__.startswith("torch.") or type(exc).__name__ == "InvalidBackend":
        return False  # the code's own ValueError; a backend not installed here
    inner = getattr(exc, "inner_exception", None) or exc.__cause__
    if isinstance(inner, (ImportError, OSError)):  # "Please install apache-tvm"
        return False
    if "Observed exception" in str(exc):  # the code's own exception, which dynamo traced
        return False
    tb = exc.__traceback__
    seen_script = False
    here = os.path.abspath(__file__)
    while tb is not None:
        path = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if path == here and tb.tb_frame.f_code.co_name != "call":  # the recording's failure
            return False  # (its mode traced), not the issue's; `call` runs a compiled callable
        seen_script = seen_script or path == script
        if seen_script and os.sep + os.path.join("torch", "_dynamo") + os.sep in path:
            return True
        tb = tb.tb_next
    return False


def raised_in_torch(exc: BaseException, script: str) -> "Optional[tuple[str, List[str]]]":
    """``exc`` raised by the eager Python code of torch's computing layers that the script
    called, which no op records (torch functions check their arguments before any op runs):
    the callable named (an nn.Module's class, else the function the script called), with the
    devices of the tensors in the frames that raised it. None when a frame in between is
    elsewhere (another layer of torch, the script's own classes: a module without forward).
    Classes: an nn.Module's input check (an RNN's hidden size, issue 5860 by krstopro; a batch
    norm's batch of one, 13223 by huanglin6385), a functional's argument check (interpolate's
    sizes), a distribution's argument validation (87468 by Haydnspass)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    root = os.path.dirname(os.path.abspath(str(torch.__file__))) + os.sep
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    own = [i for i, f in enumerate(frames) if os.path.abspath(f.f_code.co_filename) == script]
    inner = frames[own[-1] + 1 :] if own else []
    if not inner:
        return None
    for frame in inner:
        path = os.path.abspath(frame.f_code.co_filename)
        top = path[len(root) :].split(os.sep)[0] if path.startswith(root) else ""
        if top not in _COMPUTING and top not in _COMPUTING_TOO:
            return None
        home = sys.modules.get(getattr(type(frame.f_locals.get("self")), "__module__", ""))
        if os.path.abspath(str(getattr(home, "__file__", None) or "-")) == script:
            return None  # the script's own class: a module without forward, say
    first = inner[0]
    name = first.f_code.co_name
    module = first.f_locals.get("self")
    if isinstance(module, torch.nn.Module):
        name = type(module).__name__
    devices: List[str] = []
    for frame in (first, inner[-1]):
        found = _tensor_kinds(list(frame.f_locals.values()))[0]
        devices.extend(d for d in found if d not in devices)
    return name, devices


def _op_name(func: Any) -> str:
    return str(getattr(func, "__name__", "") or type(func).__name__)


class Recorder:
    """Records, without changing results, what the issue's code executed: the torch functions
    and operators it called (a TorchFunctionMode, paused while torch.compile'd code runs so that
    dynamo traces and guards exactly what it would without it), the devices and dtypes of their
    tensors, the op that raised, the issue's functions that called torch, and the warnings."""

    def __init__(self, script: str) -> None:
        self.script = script
        self.ops: Dict[str, List[Any]] = {}  # name -> [calls, devices, dtypes]
        self.functions: Dict[str, int] = {}  # the script's function names that called torch
        self.raised: "Optional[tuple[BaseException, str, List[str]]]" = None
        self.compiled_calls = 0
        self.warnings: List[str] = []
        self.mode: Any = None
        self.on = False
        self.ran_to_end: Optional[bool] = None

    def start(self, shown: str = "") -> None:
        """Record from now on; ``shown``: a warning category (a builtin one, such as
        DeprecationWarning, which the default filters hide outside __main__) to show once per
        place, for the warning oracle; no other filter changes."""
        import builtins
        import warnings

        category = getattr(builtins, shown, None) if shown else None
        if isinstance(category, type) and issubclass(category, Warning):
            warnings.filterwarnings("default", category=category)

        real_show = warnings.showwarning

        def show(message: Any, category: Any, *args: Any, **kwargs: Any) -> Any:
            if len(self.warnings) < 20:
                text = str(message).strip().splitlines()
                self.warnings.append((category.__name__ + ": " + (text[0] if text else ""))[:200])
            return real_show(message, category, *args, **kwargs)

        warnings.showwarning = show
        if os.environ.get(RECORD_ENV) == "0":
            return
        try:
            import torch
            from torch.overrides import TorchFunctionMode

            torch._C._len_torch_function_stack  # noqa: B018 (the pause below needs it)
        except (ImportError, AttributeError):
            return
        recorder = self
        compiler = getattr(torch, "compiler", None)
        compiling = getattr(compiler, "is_compiling", None) or (lambda: False)

        class _Mode(TorchFunctionMode):  # type: ignore[misc]
            def __torch_function__(
                self, func: Any, types: Any, args: Any = (), kwargs: Any = None
            ) -> Any:
                kwargs = kwargs or {}
                if compiling():  # dynamo tracing through another entry (torch._dynamo.optimize,
                    return func(*args, **kwargs)  # export): it sees no recording to trace
                try:
                    result = func(*args, **kwargs)
                except BaseException as exc:
                    recorder.note(_op_name(func), args, kwargs, None, exc)
                    raise
                recorder.note(_op_name(func), args, kwargs, result, None)
                return result

        self.mode = _Mode()
        self.mode.__enter__()
        self.on = True
        real_compile = torch.compile
        torch.compile = self._compile_wrapper(real_compile, torch)

    def stop(self, ran_to_end: bool) -> None:
        if self.ran_to_end is None:
            self.ran_to_end = ran_to_end
        if self.on:  # take the mode off by identity: the code may have pushed others on it
            self.on = False
            with contextlib.suppress(Exception):
                import torch

                self._pause(torch)

    def note(self, name: str, args: Any, kwargs: Any, result: Any, exc: Any) -> None:
        """Count a call of ``name``; look at its tensors and caller on its first calls, then on
        one call in _SAMPLE (a loop's thousands of calls stay cheap), and on an error."""
        if not self.on or (name in _QUIET_OPS and exc is None):
            return
        entry = self.ops.get(name)
        if entry is None:
            entry = self.ops[name] = [0, [], []]
        entry[0] += 1
        if exc is None and entry[0] > _SAMPLE and entry[0] % _SAMPLE:
            return
        devices, dtypes = _tensor_kinds([*args, *kwargs.values(), result])
        entry[1].extend(d for d in devices if d not in entry[1])
        entry[2].extend(d for d in dtypes if d not in entry[2])
        if exc is not None:
            self.raised = (exc, name, devices)
        frame: Any = sys._getframe(2)
        for _ in range(12):
            if frame is None:
                break
            if frame.f_code.co_filename == self.script:
                who = frame.f_code.co_name
                self.functions[who] = self.functions.get(who, 0) + 1
                break
            frame = frame.f_back

    def _compile_wrapper(self, real: Callable[..., Any], torch: Any) -> Callable[..., Any]:
        """torch.compile, whose compiled callables run with the recording mode paused (a mode
        on the stack changes what dynamo traces and guards); each call is noted."""
        recorder = self

        def paused(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
            @functools.wraps(fn)
            def call(*args: Any, **kwargs: Any) -> Any:
                recorder.compiled_calls += 1
                recorder.note(name, args, kwargs, None, None)
                modes = recorder._pause(torch)
                try:
                    return fn(*args, **kwargs)
                finally:
                    recorder._resume(torch, modes)

            return call

        @functools.wraps(real)
        def compile(model: Any = None, *args: Any, **kwargs: Any) -> Any:
            compiled = real(model, *args, **kwargs)
            if model is None:  # @torch.compile(...): the decorator calls torch.compile again
                return compiled
            name = "torch.compile(" + getattr(model, "__name__", type(model).__name__) + ")"
            if isinstance(compiled, torch.nn.Module) and callable(compiled.__dict__.get("forward")):
                attr = "_forward" if "_forward" in compiled.__dict__ else "forward"
                compiled.__dict__[attr] = paused(compiled.__dict__[attr], name)
                return compiled
            return paused(compiled, name) if callable(compiled) else compiled

        return compile

    def _pause(self, torch: Any) -> List[Any]:
        """Take the recording mode off torch's function-mode stack; the modes there before."""
        modes: List[Any] = []
        while torch._C._len_torch_function_stack():
            modes.append(torch._C._pop_torch_function_stack())
        for mode in reversed(modes):
            if mode is not self.mode:
                torch._C._push_on_torch_function_stack(mode)
        return modes

    def _resume(self, torch: Any, modes: List[Any]) -> None:
        while torch._C._len_torch_function_stack():
            torch._C._pop_torch_function_stack()
        for mode in reversed(modes):
            torch._C._push_on_torch_function_stack(mode)

    def devices(self) -> List[str]:
        """The devices the recorded operations' tensors were on."""
        seen: List[str] = []
        for _, devices, _ in self.ops.values():
            seen.extend(d for d in devices if d not in seen)
        return sorted(seen)

    def raised_by(self, exc: BaseException) -> "Optional[tuple[str, List[str]]]":
        """The torch op that raised ``exc`` (or an error it chains), with its devices; else the
        eager Python layer of torch that raised it (see raised_in_torch)."""
        if self.raised is None:
            return raised_in_torch(exc, self.script)
        seen = 0
        link: Optional[BaseException] = exc
        while link is not None and seen < 8:
            if link is self.raised[0]:
                return self.raised[1], self.raised[2]
            link = link.__cause__ or link.__context__
            seen += 1
        return raised_in_torch(exc, self.script)

    def document(self) -> Dict[str, Any]:
        """The evidence, as the verdict's --json carries it."""
        ranked = sorted(self.ops.items(), key=lambda item: -item[1][0])[:_MAX_OPS]
        return {
            "recorded": self.mode is not None,
            "ran_to_end": self.ran_to_end,
            "ops": {n: {"calls": c, "devices": d, "dtypes": t} for n, (c, d, t) in ranked},
            "op_calls": sum(entry[0] for entry in self.ops.values()),
            "devices": self.devices(),
            "functions": sorted(self.functions),
            "compiled_calls": self.compiled_calls,
            "compile": compile_counts(),
            "warnings": self.warnings,
            "caught": self.caught(),
            "platform": platform_here(),
        }

    def caught(self) -> Optional[str]:
        """The torch op that raised while the code still ran to its end (a ``try``/``except``
        of the issue's caught it), with the error; None when none did."""
        if not self.ran_to_end or self.raised is None:
            return None
        exc, name = self.raised[0], self.raised[1]
        text = str(exc).strip().splitlines()
        return "%s raised %s%s" % (name, type(exc).__name__, ": " + text[0][:200] if text else "")


class Tee:
    """Passes writes through to a stream and keeps the last ``limit`` characters of them."""

    def __init__(self, stream: Any, limit: int = 1 << 20) -> None:
        self._stream = stream
        self._limit = limit
        self._chunks: List[str] = []
        self._size = 0
        self.total = 0  # characters written in all

    def write(self, text: str) -> int:
        self._chunks.append(text)
        self._size += len(text)
        self.total += len(text)
        if self._size > 2 * self._limit:  # trim now and then: writes stay O(1) on average
            kept = self.seen
            self._chunks, self._size = [kept], len(kept)
        return int(self._stream.write(text))

    @property
    def seen(self) -> str:
        return "".join(self._chunks)[-self._limit :]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def platform_here() -> str:
    """``OS-architecture`` of this machine in the words the rules use: ``linux-x86_64``,
    ``windows-amd64``, ``macos-arm64``."""
    import platform

    system = {"win32": "windows", "darwin": "macos"}.get(sys.platform, sys.platform)
    machine = platform.machine().lower()
    return system + "-" + ("arm64" if machine in ("aarch64", "arm64") else machine)


def compile_counts() -> Optional[Dict[str, int]]:
    """What torch.compile did, from torch._dynamo's counters: frames traced (and traced without
    error), graphs, graph breaks, recompiles; None where the code never imported dynamo."""
    utils = sys.modules.get("torch._dynamo.utils")
    counters = getattr(utils, "counters", None)
    if counters is None:
        return None
    frames = counters.get("frames", {})
    recompiles = 0
    metrics: Any = getattr(utils, "get_compilation_metrics", None)
    with contextlib.suppress(Exception):
        recompiles = sum(1 for m in metrics() if getattr(m, "recompile_reason", None))
    return {
        "frames": int(frames.get("total", 0)),
        "frames_ok": int(frames.get("ok", 0)),
        "graphs": int(counters.get("stats", {}).get("unique_graphs", 0)),
        "graph_breaks": int(sum(counters.get("graph_break", {}).values())),
        "recompiles": recompiles,
    }


def explain_lines(doc: Optional[Dict[str, Any]], rule: str) -> List[str]:
    """The evidence in words, then the rule that decided (the script's --explain)."""
    if doc is None:
        return ["no evidence recorded here (the verdict came from child runs)", "rule: " + rule]
    if not doc.get("recorded"):
        return ["torch calls were not recorded (%s=0, or torch too old)" % RECORD_ENV]
    ended = {True: "yes", False: "no (it raised)", None: "unknown"}[doc.get("ran_to_end")]
    ops = ", ".join(
        "%s x%d [%s]" % (name, op["calls"], " ".join(op["devices"] + op["dtypes"]))
        for name, op in list(doc["ops"].items())[:12]
    )
    lines = [
        "the issue's code ran to its end: " + ended,
        "torch operations called: %d (%s)" % (doc["op_calls"], ops or "none"),
        "devices: " + (", ".join(doc["devices"]) or "none"),
        "the issue's functions that called torch: " + (", ".join(doc["functions"]) or "none"),
        "this machine: " + str(doc.get("platform") or "unknown"),
    ]
    if doc.get("caught"):
        lines.append("caught by the issue's code: " + doc["caught"])
    raised = doc.get("raised_by")
    if raised:
        lines.append("the error came from: %s [%s]" % (raised["op"], " ".join(raised["devices"])))
    counts = doc.get("compile")
    if doc.get("compiled_calls") or (counts and counts.get("frames")):
        lines.append(
            "torch.compile: %d call(s) of compiled code; %s"
            % (doc["compiled_calls"], ", ".join("%s %d" % kv for kv in (counts or {}).items()))
        )
    lines.extend("warning: " + w for w in doc.get("warnings") or [])
    return [*lines, "rule: " + rule]


def dynamo_counts() -> "Optional[tuple[int, int, str]]":
    """``(frames traced, graph breaks, the first break's reason)`` from torch._dynamo's
    counters, where the code used torch.compile; None where it did not import dynamo."""
    utils = sys.modules.get("torch._dynamo.utils")
    counters = getattr(utils, "counters", None)
    if counters is None:
        return None
    frames = int(counters.get("frames", {}).get("total", 0))
    breaks = counters.get("graph_break", {})
    first = next(iter(breaks), "")
    reason = first.strip().splitlines()[0] if first.strip() else ""
    return frames, int(sum(breaks.values())), reason


def dynamo_recompiles() -> "Optional[tuple[int, int, int, str]]":
    """``(frames compiled, recompiles, of them by automatic dynamic shapes, the first other
    recompile's guard failure)`` from torch._dynamo's compilation metrics; None without them."""
    utils = sys.modules.get("torch._dynamo.utils")
    metrics = getattr(utils, "get_compilation_metrics", None)
    if metrics is None:
        return None
    try:
        compiles = list(metrics())
    except Exception:
        return None
    recompiles = [m for m in compiles if getattr(m, "recompile_reason", None)]
    others = [
        str(m.recompile_reason)
        for m in recompiles
        if not (getattr(m, "feature_usage", None) or {}).get("dynamo.automatic_dynamic_shapes")
    ]
    reason = others[0].strip().splitlines()[0].split("  #")[0].strip() if others else ""
    return len(compiles), len(recompiles), len(recompiles) - len(others), reason


def main_file() -> str:
    """The file of the running script (what the recorder matches frames against)."""
    main = sys.modules.get("__main__")
    return os.path.abspath(str(getattr(main, "__file__", "") or sys.argv[0]))


def is_torch_op(name: str) -> bool:
    """A function or method of torch's public namespaces (not a class) called ``name``."""
    import torch

    spaces = (torch, torch.Tensor, torch.nn.functional, torch.linalg, torch.fft, torch.special)
    for space in spaces:
        value = getattr(space, name, None)
        if callable(value) and not isinstance(value, type):
            return True
    return False


# Where a snippet's classes come from when its imports were left out: ``Normal`` and
# ``Multinomial`` (torch.distributions), ``DataLoader`` (torch.utils.data), ``Linear`` (torch.nn).
_CLASS_SPACES = (
    "torch",
    "torch.nn",
    "torch.distributions",
    "torch.utils.data",
    "torch.optim",
    "torch.optim.lr_scheduler",
    "torch.autograd",
    "torch.export",
    "torch.fx",
    "torch.amp",
)


def torch_names(names: List[str]) -> Dict[str, Any]:
    """The undefined names among ``names`` that exactly one object of torch's public
    namespaces holds (one class may be in several), by name; the others stay undefined, as
    do base classes (see _base_class): ``Module()`` in a snippet is the reporter's own class
    cut out, not torch.nn.Module."""
    import importlib

    found: Dict[str, Any] = {}
    for name in names:
        seen: List[Any] = []
        for space in _CLASS_SPACES:
            try:
                value = getattr(importlib.import_module(space), name, None)
            except Exception:
                continue
            if value is not None and not any(value is other for other in seen):
                seen.append(value)
        if len(seen) == 1 and not _base_class(seen[0]):
            found[name] = seen[0]
    return found


def _base_class(value: Any) -> bool:
    """A class made to be subclassed: a method of its own (not __init__) raises
    NotImplementedError (Module.forward, Dataset.__getitem__, Optimizer.step), or torch
    derives ten classes or more from it (autograd's Function); or a C++ binding."""
    if not isinstance(value, type):
        return False
    if "pybind11" in type(value).__module__:
        return True  # a C++ binding (torch.Block, torch.Graph): nothing a snippet constructs
    if len(value.__subclasses__()) >= 10:
        return True
    for key, member in vars(value).items():
        code = getattr(member, "__code__", None)
        if key != "__init__" and code is not None and "NotImplementedError" in code.co_names:
            return True
    return False


def issue_needs(claims: Dict[str, Any], raised_op: str) -> Dict[str, Any]:
    """What the issue claims (the script's ``evidence=``, see repro/evidence.issue_claims), for
    the rules: the torch ops it names that this torch has, the device it reports the bug on,
    whether it is about compile, contrasts devices, only defines things, expects its error."""
    return {
        # Never an op the recorder leaves out (``.item()``, ``.size()``): it cannot be seen run.
        "named": [
            n for n in claims.get("named_ops") or [] if n not in _QUIET_OPS and is_torch_op(n)
        ],
        "device": claims.get("reported_device"),
        "device_claimed": claims.get("device_claimed"),
        "platform": claims.get("reported_platform"),
        "compile": claims.get("about_compile"),
        "contrast": claims.get("contrast"),
        "defines_only": claims.get("defines_only"),
        "compiled_object": claims.get("compiled_object"),
        "error_expected": claims.get("error_expected"),
        "raised_op": raised_op,
    }


def float64(value: Any) -> Any:
    """A floating tensor in float64 (the reference's inputs); any other value as it is."""
    is_float = getattr(value, "is_floating_point", None)
    return value.double() if callable(is_float) and is_float() else value


def _same_values(a: Any, b: Any) -> bool:
    import torch

    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_values(a[i], b[i]) for i in range(len(a)))
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.equal(a.nan_to_num(), b.nan_to_num()))
    return False


def reference_error(
    record: Optional[Recorder], value: Callable[[], Any], ref: Callable[[], Any]
) -> "Optional[tuple[float, float]]":
    """The largest relative difference between ``value()`` and ``ref()``, its recomputation in
    float64 (a tensor, or a tuple/list of tensors pairwise), with the eps of the value's
    dtype; None where either raises or they are not floating tensors of one shape. NaN or inf
    where the other has a finite value is an infinite difference. Not recorded as the issue's
    operations (the recording mode is off the stack meanwhile, as for compiled code)."""
    import torch

    modes = record._pause(torch) if record is not None and record.on else None
    try:
        got, again, want = value(), value(), ref()
        if not _same_values(got, again):  # drawn afresh each call: no recomputation holds
            return None
        many = isinstance(got, (tuple, list)) and isinstance(want, (tuple, list))
        same = many and len(got) == len(want)
        pairs = [(got[i], want[i]) for i in range(len(got))] if same else [(got, want)]
        worst, eps = 0.0, 0.0
        for g, w in pairs:
            if not (isinstance(g, torch.Tensor) and isinstance(w, torch.Tensor)):
                return None
            if not g.is_floating_point() or g.shape != w.shape:
                return None
            eps = max(eps, torch.finfo(g.dtype).eps)
            g, w = g.detach().cpu().double(), w.detach().cpu().double()
            finite = g.isfinite() & w.isfinite()
            if not torch.equal(g[~finite].nan_to_num(), w[~finite].nan_to_num()):
                return float("inf"), eps
            if bool(finite.any()):
                scale = float(w[finite].abs().max()) or 1e-30
                worst = max(worst, float((g[finite] - w[finite]).abs().max()) / scale)
        return worst, eps
    except Exception:
        return None
    finally:
        if record is not None and modes is not None:
            record._resume(torch, modes)


def run_cases(cases: Any) -> None:
    """Run the unittest cases an issue defines: an error raises RuntimeError, a failure
    AssertionError, each with the last line of its traceback."""
    import unittest

    suite = unittest.TestSuite()
    for case in cases:
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(case))
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=2).run(suite)
    if result.errors:
        raise RuntimeError(result.errors[0][1].strip().splitlines()[-1])
    if result.failures:
        raise AssertionError(result.failures[0][1].strip().splitlines()[-1])
