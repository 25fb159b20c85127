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
result["devices"] = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
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


def find_op(op_db: "list[Any]", query: str) -> "tuple[list[Any], str | None]":
    """The OpInfos of ``query``: by name, else by alias (returned), else ``name.variant``."""
    matches = [op for op in op_db if op.name == query]
    if matches:
        return matches, None
    matches = [op for op in op_db if query in [a.name for a in op.aliases]]
    if matches:
        return matches, query
    if "." in query:
        base, variant = query.rsplit(".", 1)
        matches = [op for op in op_db if op.name == base and op.variant_test_name == variant]
    return matches, None


def probe_op(name: str) -> None:
    query = name[len("torch.") :] if name.startswith("torch.") else name
    try:
        from torch.testing._internal.common_methods_invocations import op_db
    except Exception as exc:
        result["opdb_error"] = short(exc)
        op_db = []
    matches, alias = find_op(op_db, query)
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
    """A function without an OpInfo: the --check property and the --ref numpy reference on one
    (3, 4) input per default dtype, as the template runs them; without either, whether it is
    random (for a device comparison, made only where there are two devices)."""
    check, ref = request.get("check"), request.get("ref")
    reference = resolve_class(ref) if ref else None
    if ref and not callable(reference):
        result["ref_error"] = ref + " is not a callable in the target interpreter"
        return

    def call(dtype: Any) -> Any:
        x = make_tensor((3, 4), device="cpu", dtype=dtype)
        return lambda: fn(x)

    compare = "metadata" if is_random(call(torch.float32)) else "values"
    chosen, failures = [], {}
    for dname in request["default_dtypes"]:
        dtype = getattr(torch, dname)
        try:
            x = make_tensor((3, 4), device="cpu", dtype=dtype)
            value = fn(x)
            if check and not eval(check, {"torch": torch, "x": x, "result": value}):  # --check
                raise AssertionError("--check is false")
            if reference is not None:
                import numpy

                expected = torch.from_numpy(numpy.asarray(reference(x.numpy())))
                checker.assertEqual(value, expected, exact_dtype=False)
            if not (check or ref):
                agree(value, fn(x.cpu()), compare)
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


def gradients_reach(module: Any, inputs: Any, value: Any) -> "str | None":
    """None when backward from the outputs reaches every parameter and every input that
    requires grad, with finite values (the template's gradient check); else why not."""
    from torch.utils._pytree import tree_leaves

    outputs = [t for t in tree_leaves(value) if isinstance(t, torch.Tensor) and t.requires_grad]
    wrt = [
        *module.parameters(),
        *(t for t in tree_leaves(inputs) if isinstance(t, torch.Tensor) and t.requires_grad),
    ]
    if not outputs or not wrt:
        return "no output or input requires grad"
    grads = torch.autograd.grad(
        outputs, wrt, [torch.ones_like(t) for t in outputs], allow_unused=True
    )
    if not all(g is not None and bool(g.isfinite().all()) for g in grads):
        return "a parameter or input gets no gradient, or a non-finite one"
    return None


def run_module_checks(
    build: Any, inputs: Any, dtype: Any, checks: "dict[str, Any]"
) -> "str | None":
    """None when the generated module test passes on CPU for ``dtype``; else why not. Mirrors
    the template: the module in its mode, --check, its documented property, its gradients."""
    try:
        checked = 0
        for args, kwargs, fargs, fkwargs in inputs(dtype, bool(checks.get("grad"))):
            module = build(args, kwargs).to(dtype=dtype)
            module.train(checks["training"])
            value = module(*fargs, **fkwargs)
            scope = {"torch": torch, "module": module, "inputs": fargs, "result": value}
            for part in ("check", "doc"):
                if checks.get(part) and not eval(checks[part], scope):  # --check, or the table's
                    what = "--check" if part == "check" else "the documented property"
                    return (
                        what
                        + " is false for inputs of shape "
                        + str([getattr(a, "shape", a) for a in fargs])[:150]
                    )
            if checks.get("grad"):
                why = gradients_reach(module, fargs, value)
                if why:
                    return why
            checked += 1
        if not checked:
            return "no module inputs with a forward input"
    except Exception as exc:
        return short(exc)
    return None


def choose_checks(
    build: Any, inputs: Any, dtypes: "list[Any]", checks: "dict[str, Any]"
) -> "dict[str, Any]":
    """The checks the test makes and the dtypes it runs, as the probe found them on CPU. The
    documented property or gradients that fail for every dtype are left out, not the dtypes."""
    left_out = {}
    for part in ("doc", "grad"):
        if not checks.get(part):
            continue
        alone = {"training": checks["training"], part: checks[part]}
        whys = [run_module_checks(build, inputs, dtype, alone) for dtype in dtypes]
        if dtypes and all(whys):
            checks[part] = None
            left_out[part] = str(whys[0])
    chosen, failures = [], {}
    for dtype in dtypes:
        why = run_module_checks(build, inputs, dtype, checks)
        if why:
            failures[dtype_name(dtype)] = why
        else:
            chosen.append(dtype_name(dtype))
    return {
        "chosen": chosen,
        "failures": failures,
        "checks": {k: bool(v) for k, v in checks.items() if k != "training"},
        "checks_left_out": left_out,
    }


def mode_dependent(module: Any, x: Any) -> bool:
    """The module's output in train mode differs from eval mode (dropout, batch statistics)."""
    try:
        torch.manual_seed(0)
        trained = copy.deepcopy(module).train()(x)
        torch.manual_seed(0)
        checker.assertEqual(trained, copy.deepcopy(module).eval()(x))
    except AssertionError:
        return True
    except Exception:
        return False
    return False


def probe_module_info(cls: Any, module_info: Any, info: "dict[str, Any]") -> None:
    """A module with a ModuleInfo: its inputs, its mode and the parity tests it skips."""
    info["module_info"] = module_info.name
    info["formatted_name"] = module_info.formatted_name
    info["inputs_func"] = getattr(
        module_info.module_inputs_func, "__name__", "its module_inputs_func"
    )
    info["parity_skipped"] = any(
        getattr(d, "test_name", None) == "test_cpu_gpu_parity"
        and d.device_type in (None, "cuda")
        and d.dtypes is None
        for d in tuple(module_info.decorators or ())
        + tuple(getattr(module_info, "skips", ()) or ())
    )
    info["train_dependent"] = bool(getattr(module_info, "train_and_eval_differ", False))

    def db_inputs(dtype: Any, grad: bool) -> Any:
        for mi in module_info.module_inputs_func(
            module_info, device="cpu", dtype=dtype, requires_grad=grad, training=True
        ):
            if mi.forward_input is not None:
                yield (
                    mi.constructor_input.args,
                    mi.constructor_input.kwargs,
                    mi.forward_input.args,
                    mi.forward_input.kwargs,
                )

    info.update(
        choose_checks(
            lambda a, k: cls(*a, **k), db_inputs, list(module_info.dtypes), module_checks(cls)
        )
    )


def module_checks(cls: Any) -> "dict[str, Any]":
    """What the module's test checks: --check, the documented property of its class (the table in
    contribkit's specs.py), gradients; in train mode (ModuleInfo modules: the flag @modules passes)."""
    doc = request["properties"].get(cls.__name__)
    return {
        "training": True,
        "check": request.get("check"),
        "doc": doc[1] if doc else None,
        "grad": True,
    }


def plain_module(cls: Any, info: "dict[str, Any]") -> "tuple[str, list[int]] | None":
    """A module without a ModuleInfo: its constructor arguments and the first input shape it takes."""
    user_init = request.get("init")
    required = required_args(cls)
    fill = request["init_args"]
    info["required"] = required
    if user_init is None:
        unfilled = [name for name in required if name not in fill]
        if unfilled:
            info["unfilled"] = unfilled
            return None
    init_errors, shape_errors = [], []
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
        x = make_tensor(tuple(candidate), device="cpu", dtype=torch.float32)
        info["train_dependent"] = mode_dependent(module, x)
        return text, candidate
    # The constructor is the problem when it never ran, else the input.
    errors = shape_errors or init_errors
    info["shape_error" if shape_errors else "init_error"] = errors[-1]
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
    if module_info is not None:
        probe_module_info(cls, module_info, info)
        return
    found = plain_module(cls, info)
    if found is None:
        return
    init, shape = found
    info.update(init=init, shape=shape)

    def plain_inputs(dtype: Any, grad: bool) -> Any:
        yield (
            (),
            {},
            (make_tensor(tuple(shape), device="cpu", dtype=dtype, requires_grad=grad),),
            {},
        )

    checks = module_checks(cls)
    dtypes = [getattr(torch, d) for d in request["default_dtypes"]]
    info.update(choose_checks(lambda a, k: build_module(cls, init), plain_inputs, dtypes, checks))
    if not any(
        info["checks"].values()
    ):  # nothing to check: compared with CPU where there is a device
        info["compare_failures"] = {
            d: why
            for d in request["default_dtypes"]
            for why in [
                check_module(lambda a, k: build_module(cls, init), plain_inputs, getattr(torch, d))
            ]
            if why
        }


def check_module(build: Any, inputs: Any, dtype: Any) -> "str | None":
    """None when the device comparison (eval mode, a CPU copy) passes on CPU for ``dtype``."""
    try:
        for args, kwargs, fargs, fkwargs in inputs(dtype, False):
            module = build(args, kwargs).to(dtype=dtype).eval()
            actual = module(*fargs, **fkwargs)
            expected = copy.deepcopy(module).to("cpu")(
                *tree_map(to_cpu, fargs), **tree_map(to_cpu, fkwargs)
            )
            checker.assertEqual(actual, expected, exact_device=False)
    except Exception as exc:
        return short(exc)
    return None


if request["kind"] == "op":
    probe_op(request["name"])
else:
    probe_module(request["name"])
emit()
