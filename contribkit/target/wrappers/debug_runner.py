# contribkit's debug runner. Runs in the target interpreter (Python 3.8+, standard library and
# torch only); never imported by contribkit. It runs the user's script unchanged, as
# `python SCRIPT ARGS` would (same sys.argv, sys.path[0] and __main__), optionally with, as
# soon as the script imports torch:
#   --anomaly         torch.autograd.set_detect_anomaly(True);
#   --backend NAME    every torch.compile call using backend NAME (the ablation ladder);
#   --report FILE     writing what Dynamo counted (frames, graph breaks) to FILE as JSON at exit.
# Usage: python debug_runner.py [--anomaly] [--backend NAME] [--report FILE] -- SCRIPT [ARGS...]
import atexit
import functools
import importlib.abc
import importlib.util
import json
import os
import runpy
import sys
from collections.abc import Callable
from typing import Any

PREFIX = "[contribkit debug] "
state: "dict[str, Any]" = {"compile_calls": 0, "reported": False}


def say(message: str) -> None:
    print(PREFIX + message, file=sys.stderr, flush=True)


def parse(argv: "list[str]") -> "tuple[dict[str, Any], str, list[str]]":
    if "--" not in argv:
        raise SystemExit(
            "usage: debug_runner [--anomaly] [--backend NAME] [--report FILE] -- SCRIPT [ARGS...]"
        )
    split = argv.index("--")
    options, rest = argv[:split], argv[split + 1 :]
    opts: dict[str, Any] = {"anomaly": False, "backend": None, "report": None}
    i = 0
    while i < len(options):
        if options[i] == "--anomaly":
            opts["anomaly"] = True
        elif options[i] in ("--backend", "--report") and i + 1 < len(options):
            opts[options[i][2:]] = options[i + 1]
            i += 1
        else:
            raise SystemExit("debug_runner: unknown option " + options[i])
        i += 1
    if not rest:
        raise SystemExit("debug_runner: no script given")
    return opts, rest[0], rest[1:]


def when_torch_is_imported(action: "Callable[[Any], None]") -> None:
    """Call ``action(torch)`` once the script has imported torch, not before.

    Importing torch here first would ignore what the script sets up before its own
    ``import torch`` (os.environ["TORCH_LOGS"], TORCHDYNAMO_* and the like).
    """
    if "torch" in sys.modules:
        action(sys.modules["torch"])
        return

    class TorchImportHook(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
            if fullname != "torch":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec("torch")
            if spec is None or spec.loader is None:
                return spec
            loader = spec.loader
            load = loader.exec_module

            def exec_module(module: Any) -> None:
                load(module)
                action(module)

            loader.exec_module = exec_module  # type: ignore[method-assign]
            return spec

    sys.meta_path.insert(0, TorchImportHook())


def detect_anomaly(torch: Any) -> None:
    torch.autograd.set_detect_anomaly(True)
    say("autograd anomaly detection is on")


def override_backend(backend: str, torch: Any) -> None:
    original = torch.compile

    @functools.wraps(original)
    def compile_with_backend(*args: Any, **kwargs: Any) -> Any:
        state["compile_calls"] += 1
        asked = kwargs.get("backend", "inductor")
        kwargs["backend"] = backend
        if backend != "inductor":
            # mode= and options= configure inductor; other backends reject or ignore them.
            for key in ("mode", "options"):
                if kwargs.pop(key, None) is not None:
                    say("dropped torch.compile(" + key + "=...) for backend " + backend)
        if asked != backend:
            say("torch.compile backend " + repr(asked) + " -> " + repr(backend))
        return original(*args, **kwargs)

    torch.compile = compile_with_backend
    say("every torch.compile call uses backend=" + repr(backend))


def dynamo_counters() -> "dict[str, Any] | None":
    utils = sys.modules.get("torch._dynamo.utils")
    if utils is None:  # the script never reached torch.compile
        return None
    counters: dict[str, Any] = getattr(utils, "counters", {})
    return {
        "frames": dict(counters.get("frames", {})),
        "graph_break_events": sum(counters.get("graph_break", {}).values())
        + sum(counters.get("unimplemented", {}).values()),
        "unique_graphs": counters.get("stats", {}).get("unique_graphs", 0),
    }


def write_report(path: str, backend: "str | None") -> None:
    if state["reported"]:
        return
    state["reported"] = True
    report = {
        "backend": backend,
        "compile_calls": state["compile_calls"],
        "dynamo": dynamo_counters(),
    }
    try:
        with open(path, "w") as fh:
            json.dump(report, fh)
    except OSError as exc:
        say("could not write the report: " + str(exc))


def main() -> None:
    opts, script, args = parse(sys.argv[1:])
    script = os.path.abspath(script)
    # As `python SCRIPT` does: the script's folder first on sys.path, and its own argv.
    sys.path[0] = os.path.dirname(script)
    sys.argv = [script, *args]
    if opts["report"]:
        report = opts["report"]
        atexit.register(write_report, report, opts["backend"])
        # A repro script ends with os._exit(verdict code), which skips atexit handlers.
        real_exit = os._exit

        def exit_after_report(code: int) -> Any:
            write_report(report, opts["backend"])
            real_exit(code)

        os._exit = exit_after_report  # type: ignore[assignment]
    if opts["anomaly"]:
        when_torch_is_imported(detect_anomaly)
    if opts["backend"]:
        when_torch_is_imported(functools.partial(override_backend, opts["backend"]))
    runpy.run_path(script, run_name="__main__")


main()
