# Runs in the target interpreter (``contribkit bench``): one block of measurements, one JSON line.
# Read as text and run as ``python -c SOURCE SPEC_JSON``; never imported by contribkit.
#
# SPEC_JSON: {"stmt": str | None, "setup": str, "file": str | None, "devices": [str],
#             "threads": int, "min_run_time": float, "timer": "wall" | "cpu"}
# The tree under test is first on PYTHONPATH, set by contribkit.
# It prints one line "CONTRIBKIT_BENCH {json}" with the environment and, per benchmark and
# device, the times of one ``Timer.blocked_autorange`` (torch synchronises CUDA there).
# timer "wall" keeps torch.utils.benchmark's own clock (wall time, the accelerator synchronised);
# "cpu" is time.process_time: the CPU time of every thread of this process, which time spent
# waiting for a CPU (other processes' load), sleeping or blocked does not count.
import json
import os
import platform
import sys
import traceback
from collections.abc import Callable
from typing import Any

MARKER = "CONTRIBKIT_BENCH "


def emit(payload: "dict[str, Any]") -> None:
    sys.stdout.flush()
    print(MARKER + json.dumps(payload), flush=True)


class Fixture:
    """pytest-benchmark's ``benchmark`` fixture, as far as a benchmark function uses it: the
    call ``benchmark(fn, *args, **kwargs)`` and ``benchmark.pedantic(fn, args, kwargs, ...)``
    name the code to time; each returns ``fn``'s result, as pytest-benchmark does."""

    def __init__(self) -> None:
        self.target: Callable[[], Any] | None = None
        self.extra_info: dict[str, Any] = {}
        self.group: str | None = None

    def __call__(self, fn: "Callable[..., Any]", *args: Any, **kwargs: Any) -> Any:
        self.target = lambda: fn(*args, **kwargs)
        return self.target()

    def pedantic(
        self,
        fn: "Callable[..., Any]",
        args: "tuple[Any, ...]" = (),
        kwargs: "dict[str, Any] | None" = None,
        setup: "Callable[[], Any] | None" = None,
        **_ignored: Any,
    ) -> Any:
        if setup is not None:
            made = setup()
            if made is not None:
                args, kwargs = made
        return self(fn, *args, **(kwargs or {}))


def clock(name: str) -> "Callable[[], float] | None":
    """The timer= for torch.utils.benchmark's Timer: None keeps its default (wall)."""
    import time

    return time.process_time if name == "cpu" else None


def with_clock(name: str, timer: Any, clock_fn: "Callable[[], float] | None") -> Any:
    """``timer`` (a file's Timer object) timed by ``clock_fn``: the same statement, setup,
    globals, labels and threads in a new Timer (a Timer fixes its clock when made)."""
    from torch.utils.benchmark import Timer

    if clock_fn is None:
        return timer
    if timer._language.name != "PYTHON":  # C++ code runs in its own timeit loop
        raise ValueError(f"{name} is a C++ Timer, timed by its own wall clock: use --timer wall")
    task = timer._task_spec
    return Timer(
        stmt=task.stmt,
        setup=task.setup,
        timer=clock_fn,
        globals=timer._globals,
        label=task.label,
        sub_label=task.sub_label,
        description=task.description,
        env=task.env,
        num_threads=task.num_threads,
    )


def file_timers(
    path: str, device: str, threads: int, clock_fn: "Callable[[], float] | None"
) -> "list[tuple[str, Any]]":
    """The benchmarks of a file: module-level ``Timer`` objects, and functions named
    ``bench_*``/``test_*`` that take a ``benchmark`` argument (pytest-benchmark style)."""
    import inspect
    import runpy

    from torch.utils.benchmark import Timer

    timed: dict[str, Any] = {"timer": clock_fn} if clock_fn is not None else {}
    os.environ["CONTRIBKIT_DEVICE"] = device
    namespace = runpy.run_path(path, run_name="__contribkit_bench__")
    found: list[tuple[str, Any]] = []
    for name, value in namespace.items():
        if isinstance(value, Timer):
            task = value._task_spec
            parts = [str(p) for p in (task.label, task.sub_label, task.description) if p]
            label = " / ".join(parts) or name
            found.append((label, with_clock(label, value, clock_fn)))
        elif callable(value) and (name.startswith("bench_") or name.startswith("test_")):
            try:
                params = inspect.signature(value).parameters
            except (TypeError, ValueError):
                continue
            if "benchmark" not in params or getattr(value, "__module__", None) not in (
                None,
                "__contribkit_bench__",
            ):
                continue
            fixture = Fixture()
            kwargs: dict[str, Any] = {"benchmark": fixture}
            if "device" in params:
                kwargs["device"] = device
            value(**kwargs)
            if fixture.target is None:
                raise ValueError(f"{name} never called benchmark(...)")
            found.append(
                (
                    name,
                    Timer(
                        "target()",
                        globals={"target": fixture.target},
                        num_threads=threads,
                        **timed,
                    ),
                )
            )
    return found


def statement_timer(
    spec: "dict[str, Any]", device: str, clock_fn: "Callable[[], float] | None"
) -> Any:
    import torch
    from torch.utils.benchmark import Timer

    return Timer(
        stmt=spec["stmt"],
        setup=spec.get("setup") or "pass",
        globals={"torch": torch, "device": torch.device(device)},
        num_threads=int(spec["threads"]),
        **({"timer": clock_fn} if clock_fn is not None else {}),
    )


def device_name(device: str) -> str:
    import torch

    if device == "cuda":
        return str(torch.cuda.get_device_name(0))
    return platform.processor() or platform.machine()


def main() -> None:
    spec: dict[str, Any] = json.loads(sys.argv[1])
    try:
        import torch
    except Exception as exc:
        emit({"error": f"cannot import torch: {type(exc).__name__}: {exc}"})
        sys.exit(3)
    if not hasattr(torch, "__version__"):
        # The tree under test has a torch/ folder that is not a built torch (a PyTorch checkout
        # never built, a fork-shaped repo holding sources only): it shadows the installed one.
        where = list(getattr(torch, "__path__", [])) or [getattr(torch, "__file__", "?")]
        emit({"error": f"import torch found {where[0]}, which is not a built torch"})
        sys.exit(3)
    env = {
        "torch_version": torch.__version__,
        "torch_path": os.path.dirname(torch.__file__),
        "python": sys.executable,
        "python_version": platform.python_version(),
    }
    results = []
    clock_fn = clock(str(spec.get("timer") or "wall"))
    for device in spec["devices"]:
        if device == "cuda" and not torch.cuda.is_available():
            emit({"error": "cuda: torch.cuda.is_available() is False here", **env})
            sys.exit(3)
        try:
            if spec.get("file"):
                timers = file_timers(spec["file"], device, int(spec["threads"]), clock_fn)
            else:
                timers = [(spec["stmt"], statement_timer(spec, device, clock_fn))]
            for name, timer in timers:
                # Warm-up, untimed: lazy initialisation, caches, and a GPU's clocks, which
                # idle while the process imports torch.
                timer.blocked_autorange(min_run_time=float(spec["min_run_time"]))
                measured = timer.blocked_autorange(min_run_time=float(spec["min_run_time"]))
                results.append(
                    {
                        "name": name,
                        "device": device,
                        "device_name": device_name(device),
                        "times": [float(t) for t in measured.times],
                        "number_per_run": int(measured.number_per_run),
                        "threads": int(measured.task_spec.num_threads),
                    }
                )
        except Exception as exc:
            lines = traceback.format_exception_only(type(exc), exc)
            emit({"error": f"{device}: {lines[-1].strip()}", **env})
            sys.exit(3)
    emit({"results": results, "threads": int(spec["threads"]), **env})


main()
