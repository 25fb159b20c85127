# Runs in the target interpreter (any Python 3.8+); prints one JSON line. Never imported by contribkit.
# Finds what `contribkit test --op/--module` needs: the OpInfo or ModuleInfo in the target torch,
# the dtypes to test, and whether the generated test's comparison passes on CPU for each of them.
# The CPU check below mirrors templates/test_method.py.j2; keep the two in step.
import copy
import difflib
import inspect
import json
import sys
import warnings
from typing import Any

warnings.filterwarnings("ignore")
request = json.loads(sys.argv[1])
result: "dict[str, Any]" = {"kind": request["kind"], "query": request["name"]}


def emit() -> None:
    print("CONTRIBKIT_PROBE " + json.dumps(result))
    sys.exit(0)


def short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return type(exc).__name__ + (": " + text[0][:200] if text else "")


try:
    import torch
    from torch.testing import make_tensor
    from torch.testing._internal.common_utils import TestCase
    from torch.utils._pytree import tree_map
except Exception as exc:
    result["error"] = "torch's test utilities are not importable: " + short(exc)
    emit()

result["torch_version"] = torch.__version__
checker = TestCase()
groups = request["dtype_groups"]


def dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def choose(supported: "set[str]", device: str) -> "list[str]":
    """One dtype per preference group (float32, float64, a 16-bit float, an integer, …)."""
    chosen = []
    for group in groups:
        order = list(reversed(group)) if device == "cuda" and "float16" in group else group
        for name in order:
            if name in supported:
                chosen.append(name)
                break
    return chosen


def to_cpu(value: Any) -> Any:
    return value.detach().to("cpu", copy=True) if isinstance(value, torch.Tensor) else value


def metadata(value: Any) -> Any:
    return tree_map(lambda t: (t.shape, t.dtype) if isinstance(t, torch.Tensor) else t, value)


def agree(actual: Any, expected: Any, compare: str) -> None:
    if compare == "metadata":
        checker.assertEqual(metadata(actual), metadata(expected))
    else:
        checker.assertEqual(actual, expected, exact_device=False)


def is_random(call: Any) -> bool:
    """Two unseeded calls that differ: a random op, compared by shape and dtype only."""
    try:
        first, second = call(), call()
        checker.assertEqual(first, second, exact_device=False)
    except AssertionError:
        return True
    except Exception:
        return False
    return False


def suggest(query: str, names: "list[str]") -> "list[str]":
    """Close names: same last part ignoring case first (relu -> ReLU), then similar last parts,
    then similar full names."""

    def tail(name: str) -> str:
        return name.rsplit(".", 1)[-1].lower()

    by_tail: dict[str, list[str]] = {}
    for name in names:
        by_tail.setdefault(tail(name), []).append(name)
    found = list(by_tail.get(tail(query), []))
    for close in difflib.get_close_matches(tail(query), list(by_tail), n=5, cutoff=0.6):
        found.extend(by_tail[close])
    found.extend(difflib.get_close_matches(query, names, n=5, cutoff=0.6))
    unique = []
    for name in found:
        if name not in unique and name != query:
            unique.append(name)
    return unique[:5]


def run_op_checks(op: Any, dtype: Any, check: "str | None", ref: bool, grad: bool) -> "str | None":
    """None when the generated @ops test passes on CPU for ``dtype``; else why not. Mirrors the
    template: the --check property and the reference on every sample, gradcheck in float64."""
    try:
        samples = list(op.sample_inputs("cpu", dtype))
        if not samples:
            return "no sample inputs"
        for sample in samples:
            result = op(sample.input, *sample.args, **sample.kwargs)
            if check:
                scope = {"torch": torch, "op": op, "sample": sample, "result": result}
                if not eval(check, scope):  # --check, as the test will run it
                    return "--check is false for " + repr(sample)[:150]
            if ref:
                checker.compare_with_reference(op, op.ref, sample)
        if grad:
            from torch.testing._internal.common_utils import gradcheck

            for sample in op.sample_inputs("cpu", dtype, requires_grad=True):
                if not gradcheck(lambda x, s=sample: op(x, *s.args, **s.kwargs), (sample.input,)):
                    return "gradcheck fails"
    except Exception as exc:  # AssertionError included: that dtype is left out
        return short(exc)
    return None


def cpu_comparison(op: Any) -> "tuple[str, str | None, list[str]]":
    """How the generated test compares the device with CPU, from the OpInfo's own knowledge.

    PyTorch's TestCommon.test_compare_cpu compares every op on a device with CPU; an OpInfo that
    skips it or expects it to fail (random ops, uninitialised memory, known mismatches) is compared
    by shape and dtype only, or loses the named CUDA dtypes. Ops that reseed on every call
    (wrapper_set_seed) are random too: CPU and CUDA generators differ.
    """
    excluded: list[str] = []
    for info in tuple(op.decorators or ()) + tuple(op.skips or ()):
        if getattr(info, "test_name", None) != "test_compare_cpu":
            continue
        if info.device_type not in (None, "cuda"):
            continue
        if info.dtypes is None:
            return "metadata", "its OpInfo skips or expects to fail test_compare_cpu", []
        excluded.extend(dtype_name(d) for d in info.dtypes)
    try:
        reseeds = "wrapper_set_seed" in inspect.getsource(op.op)
    except (OSError, TypeError):
        reseeds = False
    if reseeds:
        return "metadata", "it is random (its OpInfo reseeds on every call)", []
    return "values", None, sorted(set(excluded))


def probe_op(name: str) -> None:
    query = name[len("torch.") :] if name.startswith("torch.") else name
    try:
        from torch.testing._internal.common_methods_invocations import op_db
    except Exception as exc:
        result["opdb_error"] = short(exc)
        op_db = []
    matches = [op for op in op_db if op.name == query]
    alias = None
    if not matches:
        matches = [op for op in op_db if query in [a.name for a in op.aliases]]
        alias = query if matches else None
    if not matches and "." in query:
        base, variant = query.rsplit(".", 1)
        matches = [op for op in op_db if op.name == base and op.variant_test_name == variant]
    if matches:
        op = next((m for m in matches if m.variant_test_name == ""), matches[0])
        variants = sorted({m.variant_test_name for m in op_db if m.name == op.name})
        compare, why_metadata, cuda_excluded = cpu_comparison(op)
        supported = {
            device: sorted(dtype_name(d) for d in op.supported_dtypes(device))
            for device in ("cpu", "cuda")
        }
        chosen = {
            device: choose(
                set(supported[device]) - set(cuda_excluded if device == "cuda" else ()), device
            )
            for device in supported
        }
        check = request.get("check")
        differentiable = [d for d in ("float64", "complex128") if d in supported["cpu"]]
        checks = {
            "check": bool(check),
            "ref": getattr(op, "ref", None) is not None,
            "grad": bool(op.supports_autograd and differentiable),
        }
        failures: dict[str, str] = {}
        left_out: dict[str, str] = {}
        # A reference or gradcheck that fails for every dtype is left out, not the dtypes.
        for part in ("ref", "grad"):
            if not checks[part]:
                continue
            dtypes = differentiable[:1] if part == "grad" else chosen["cpu"]
            whys = [
                run_op_checks(op, getattr(torch, d), None, part == "ref", part == "grad")
                for d in dtypes
            ]
            if dtypes and all(whys):
                checks[part] = False
                left_out[part] = str(whys[0])
        if checks["grad"] and differentiable[0] not in chosen["cpu"]:
            chosen["cpu"].append(differentiable[0])
        if not (checks["check"] or checks["ref"]):  # gradients only: the double dtypes
            chosen = {d: [n for n in chosen[d] if n in ("float64", "complex128")] for d in chosen}
        for dname in list(chosen["cpu"]):
            grad = checks["grad"] and dname in differentiable
            why = run_op_checks(op, getattr(torch, dname), check, checks["ref"], grad)
            if why:
                failures[dname] = why
                chosen["cpu"].remove(dname)
        result["op"] = {
            "name": op.name,
            "variant": op.variant_test_name,
            "variants": variants,
            "alias": alias,
            "info_class": type(op).__name__,
            "supported": supported,
            "chosen": chosen,
            "cpu_failures": failures,
            "compare": compare,
            "why_metadata": why_metadata,
            "cuda_excluded": cuda_excluded,
            "checks": checks,
            "checks_left_out": left_out,
            "formatted_name": op.formatted_name,
        }
        return
    fn = torch
    for part in query.split("."):
        fn = getattr(fn, part, None)
        if fn is None:
            break
    if fn is not None and callable(fn) and not inspect.isclass(fn) and not inspect.ismodule(fn):
        probe_function(query, fn)
        return
    names = sorted(
        {op.name for op in op_db}
        | {a.name for op in op_db for a in op.aliases}
        | {n for n in dir(torch) if not n.startswith("_") and callable(getattr(torch, n, None))}
    )
    result["suggestions"] = suggest(query, names)


def probe_function(query: str, fn: Any) -> None:
    def call(dtype: Any) -> Any:
        x = make_tensor((3, 4), device="cpu", dtype=dtype)
        return lambda: fn(x)

    compare = "metadata" if is_random(call(torch.float32)) else "values"
    chosen, failures = [], {}
    for dname in request["default_dtypes"]:
        dtype = getattr(torch, dname)
        try:
            x = make_tensor((3, 4), device="cpu", dtype=dtype)
            agree(fn(x), fn(x.cpu()), compare)
        except Exception as exc:
            failures[dname] = short(exc)
        else:
            chosen.append(dname)
    result["function"] = {
        "name": query,
        "chosen": chosen,
        "failures": failures,
        "compare": compare,
    }


def resolve_class(name: str) -> Any:
    import importlib

    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except Exception:
            continue
        for part in parts[cut:]:
            obj = getattr(obj, part, None)
        return obj
    return None


def module_names() -> "list[str]":
    return sorted(
        "torch.nn." + n
        for n in dir(torch.nn)
        if inspect.isclass(getattr(torch.nn, n))
        and issubclass(getattr(torch.nn, n), torch.nn.Module)
    )


def required_args(cls: Any) -> "list[str]":
    """The constructor's parameters without a default."""
    try:
        params = inspect.signature(cls.__init__).parameters.values()
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in params
        if p.name != "self"
        and p.default is inspect.Parameter.empty
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def filled_init(required: "list[str]", fill: "dict[str, Any]", shape: "list[int]") -> str:
    """Constructor arguments from contribkit's table: a value, or a size of the input."""
    sizes = {"channels": shape[1], "last": shape[-1]}
    return ", ".join(f"{name}={sizes.get(fill[name], fill[name])!r}" for name in required)


def build_module(cls: Any, init: str) -> Any:
    return eval("cls(" + init + ")", {"cls": cls, "torch": torch})  # --init, or filled_init()


def check_module(build: Any, inputs: Any, dtype: Any) -> "str | None":
    """None when the generated module test passes on CPU for ``dtype``; else why not."""
    try:
        checked = 0
        for args, kwargs, fargs, fkwargs in inputs(dtype):
            module = build(args, kwargs).to(dtype=dtype).eval()
            actual = module(*fargs, **fkwargs)
            expected = copy.deepcopy(module).to("cpu")(
                *tree_map(to_cpu, fargs), **tree_map(to_cpu, fkwargs)
            )
            checker.assertEqual(actual, expected, exact_device=False)
            checked += 1
        if not checked:
            return "no module inputs with a forward input"
    except Exception as exc:
        return short(exc)
    return None


def probe_module(name: str) -> None:
    qualname = name if name.startswith("torch.") else "torch." + name
    cls = resolve_class(qualname)
    if not (inspect.isclass(cls) and issubclass(cls, torch.nn.Module)):
        result["suggestions"] = suggest(qualname, module_names())
        if cls is not None:
            result["not_a_module"] = True
        return
    info: dict[str, Any] = {"name": qualname, "class": cls.__module__ + "." + cls.__qualname__}
    result["module"] = info
    try:
        from torch.testing._internal.common_modules import module_db
    except Exception as exc:
        result["moduledb_error"] = short(exc)
        module_db = []
    # An explicit --init means: build the module that way, not from its ModuleInfo.
    module_info = (
        None if request.get("init") else next((m for m in module_db if m.module_cls is cls), None)
    )
    chosen, failures = [], {}
    if module_info is not None:
        info["module_info"] = module_info.name
        info["parity_skipped"] = any(
            getattr(d, "test_name", None) == "test_cpu_gpu_parity"
            and d.device_type in (None, "cuda")
            and d.dtypes is None
            for d in tuple(module_info.decorators or ())
            + tuple(getattr(module_info, "skips", ()) or ())
        )

        def db_inputs(dtype: Any) -> Any:
            for mi in module_info.module_inputs_func(
                module_info, device="cpu", dtype=dtype, requires_grad=False, training=False
            ):
                if mi.forward_input is not None:
                    yield (
                        mi.constructor_input.args,
                        mi.constructor_input.kwargs,
                        mi.forward_input.args,
                        mi.forward_input.kwargs,
                    )

        for dtype in module_info.dtypes:
            why = check_module(lambda a, k: cls(*a, **k), db_inputs, dtype)
            if why:
                failures[dtype_name(dtype)] = why
            else:
                chosen.append(dtype_name(dtype))
        info.update(chosen=chosen, failures=failures)
        return
    user_init = request.get("init")
    required = required_args(cls)
    fill = request["init_args"]
    info["required"] = required
    if user_init is None:
        unfilled = [name for name in required if name not in fill]
        if unfilled:
            info["unfilled"] = unfilled
            return
    init_errors, shape_errors = [], []
    found = None
    for candidate in request["shapes"]:
        text = user_init if user_init is not None else filled_init(required, fill, candidate)
        try:
            module = build_module(cls, text)
        except Exception as exc:
            init_errors.append((text, short(exc)))
            continue
        try:
            module.eval()(make_tensor(tuple(candidate), device="cpu", dtype=torch.float32))
        except Exception as exc:
            shape_errors.append((text, short(exc)))
            continue
        found = (text, candidate)
        break
    if found is None:
        # The constructor is the problem when it never ran, else the input.
        errors = shape_errors or init_errors
        info["shape_error" if shape_errors else "init_error"] = errors[-1]
        return
    init, shape = found
    info.update(init=init, shape=shape)

    def plain_inputs(dtype: Any) -> Any:
        yield (), {}, (make_tensor(tuple(shape), device="cpu", dtype=dtype),), {}

    for dname in request["default_dtypes"]:
        why = check_module(
            lambda a, k: build_module(cls, init),
            plain_inputs,
            getattr(torch, dname),
        )
        if why:
            failures[dname] = why
        else:
            chosen.append(dname)
    info.update(chosen=chosen, failures=failures)


if request["kind"] == "op":
    probe_op(request["name"])
else:
    probe_module(request["name"])
emit()
