"""What gets tested: one test method (:class:`MethodSpec`) for an operator, a module or a
skeleton, with its dtypes, decorators and imports.

torch is reached only through ``probes/test_target.py``, run in the target interpreter by
:func:`probe_target` and cached per interpreter, torch version and request.
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from contribkit.core.config import Settings
from contribkit.core.errors import BadInput
from contribkit.core.render import render
from contribkit.testgen.areas import cpu_comparison_name, op_area, slug
from contribkit.testgen.pyedit import LINE_LIMIT, ImportSpec

# -- what gets tested --------------------------------------------------------------------

# One dtype per group, first supported wins (CUDA prefers float16 in the 16-bit group).
DTYPE_GROUPS: list[list[str]] = [
    ["float32"],
    ["float64"],
    ["bfloat16", "float16"],
    ["int64", "int32", "int16", "int8", "uint8"],
    ["complex64", "complex128"],
    ["bool"],
]
# The documented default for callables without an OpInfo and modules without a ModuleInfo
# (PyTorch's floating_types()).
DEFAULT_DTYPES = ["float32", "float64"]
# Input shapes tried, in order, for a module without a ModuleInfo: the first it accepts is used.
PROBE_SHAPES = [[2, 3], [2, 3, 4], [2, 3, 4, 5], [2, 3, 4, 5, 6]]
# Constructor arguments without a default, filled in by name for a module without a ModuleInfo
# (unless --init is given): a value, or "channels" / "last" for that size of the input shape
# being tried (dim 1 / the last dim), so that e.g. in_features fits the input. A required
# argument not named here needs --init.
INIT_ARGS: dict[str, int | str] = {
    "kernel_size": 2,
    "in_features": "last",
    "out_features": 4,
    "in_channels": "channels",
    "out_channels": 4,
    "num_features": "channels",
    "normalized_shape": "last",
    "num_embeddings": 10,
    "embedding_dim": 4,
    "embed_dim": "last",
    "num_heads": 1,
    "d_model": "last",
    "nhead": 1,
    "input_size": "last",
    "hidden_size": 4,
    "dim": 1,
    "groups": 1,
    "size": 2,
}
# The documented property a --module test checks, by class name: (the test name's word, an
# expression over result, module, inputs and torch, what it says). The test runs the module in
# train mode; the probe checks the property on CPU first and leaves it out where it fails.
MODULE_PROPERTIES: dict[str, tuple[str, str, str]] = {
    **{
        name: (
            "zeroed_or_scaled",
            "((result == 0) | torch.isclose(result, inputs[0] / (1 - module.p))).all()",
            "in train mode each element is zeroed or scaled by 1/(1-p)",
        )
        for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d")
    },
    **{
        name: (
            "channel_mean_zero",
            "(result.transpose(0, 1).flatten(1).mean(1).nan_to_num().abs() < 1e-4).all()",
            "in train mode each channel's output has mean 0 (the batch's statistics)",
        )
        for name in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d")
    },
    "ReLU": ("nonnegative", "(result >= 0).all()", "its output is never negative"),
    "ReLU6": ("in_0_6", "((result >= 0) & (result <= 6)).all()", "its output lies in [0, 6]"),
    "Sigmoid": ("in_0_1", "((result >= 0) & (result <= 1)).all()", "its output lies in [0, 1]"),
    "Tanh": ("in_minus1_1", "(result.abs() <= 1).all()", "its output lies in [-1, 1]"),
    "Softmax": (
        "sums_to_one",
        "((result.sum(module.dim) - 1).abs() < 1e-5).all()",
        "its output sums to 1 along dim",
    ),
}

DEVICE_TYPE = "torch.testing._internal.common_device_type"
COMMON_UTILS = "torch.testing._internal.common_utils"
DYNAMO_TEST_CASE = "torch._dynamo.test_case"
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass
class MethodSpec:
    """One test method and everything its file needs."""

    source: str  # "op", "module", "repro", "skeleton"
    name: str  # the method name
    method: str  # its source, starting at column 0
    imports: list[ImportSpec]
    generic: bool  # takes `device` (a class passed to instantiate_device_type_tests)
    dtypes: dict[str, list[str]]  # {"cpu": [...], "cuda": [...]}; empty lists when no dtype
    only: str | None  # "cpu" or "cuda" when restricted to one device type
    dynamo: bool  # a torch.compile test: torch._dynamo.test_case's TestCase and run_tests
    area: str
    area_reason: str
    thing: str  # the file name's topic: test/<folder>/test_<thing>.py
    notes: list[str] = field(default_factory=list)
    # @ops/@modules put the op's or module's name between the test's and the device's.
    infix: str = ""

    def variants(self) -> dict[str, list[str]]:
        """The test names instantiate_device_type_tests creates, per device type."""
        out = {}
        for device in ("cpu", "cuda"):
            if self.only and self.only != device:
                continue
            dtypes = self.dtypes.get(device, [])
            stem = f"{self.name}_{self.infix}" if self.infix else self.name
            out[device] = (
                [f"{stem}_{device}_{d}" for d in dtypes]
                if self.dtypes.get("cpu") or self.dtypes.get("cuda")
                else [f"{stem}_{device}"]
            )
        return out


# -- probing the target torch -------------------------------------------------------------


def target_request(
    kind: str,
    name: str,
    init: str | None = None,
    check: str | None = None,
    ref: str | None = None,
) -> dict[str, Any]:
    return {
        "kind": kind,
        "name": name,
        "init": init,
        "check": check,
        "ref": ref,
        "properties": MODULE_PROPERTIES,
        "dtype_groups": DTYPE_GROUPS,
        "default_dtypes": DEFAULT_DTYPES,
        "shapes": PROBE_SHAPES,
        "init_args": INIT_ARGS,
    }


def probe_target(python: str, request: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """Ask the target interpreter about an op or module; cached per interpreter, torch build and
    request (importing op_db takes seconds)."""
    from contribkit.core.cache import JsonCache, cache_root
    from contribkit.run.probe import probe_source, probe_torch, run_probe

    root = cache_root(settings)
    scrub = settings.names("scrub_env")
    info = probe_torch(python, JsonCache(root, "probes"), scrub=scrub)
    if not info.torch:
        raise BadInput(
            f"{python} cannot import torch ({info.error})",
            hint="pass --python with the interpreter of your PyTorch build",
        )
    cache = JsonCache(root, "testgen")
    key = json.dumps(
        {
            "python": os.path.realpath(python),
            "torch": info.torch_version,
            "git": info.git_version,
            "request": request,
        },
        sort_keys=True,
    )
    doc = cache.get(key)
    if doc is not None:
        cached: dict[str, Any] = doc["result"]
        return cached
    result = run_probe(
        python, probe_source("test_target.py"), scrub=scrub, args=[json.dumps(request)]
    )
    if "error" in result:
        raise BadInput(result["error"], hint=_missing_hint(python, result["error"], settings))
    if not any(k in result for k in ("opdb_error", "moduledb_error")):
        cache.put(key, {"result": result})
    return result


def _missing_hint(python: str, error: str, settings: Settings) -> str:
    """The one ``pip install`` line for what the test utilities lack (the module the error
    names, and the other test modules missing there), as ``doctor`` prints it."""
    from contribkit.core.cache import JsonCache, cache_root
    from contribkit.run.testdeps import KNOWN, check_test_deps, missing_module

    module = missing_module(error)
    deps = check_test_deps(
        python,
        JsonCache(cache_root(settings), "probes"),
        scrub=settings.names("scrub_env"),
        also=(module,) if module in KNOWN else (),
    )
    if deps.missing:
        return deps.fix
    if module:
        return f"install {module} in {python}, or pass --python with an interpreter that has it"
    return f"check that `{python} -c 'import torch.testing._internal.common_utils'` works"


def _probe_failed(result: dict[str, Any]) -> None:
    if "error" in result:
        raise BadInput(result["error"], hint="contribkit doctor names what the interpreter lacks")


# -- decorators and imports ---------------------------------------------------------------


def _dtypes_call(decorator: str, names: list[str]) -> str:
    """``dtypes(torch.float32, …)``, wrapped as ruff format would when long (in a class body)."""
    one_line = f"{decorator}({', '.join(f'torch.{n}' for n in names)})"
    if len(one_line) + 5 <= LINE_LIMIT:
        return one_line
    return f"{decorator}(\n    {', '.join(f'torch.{n}' for n in names)}\n)"


def dtype_decorators(cpu: list[str], cuda: list[str]) -> tuple[list[str], str | None]:
    """``@dtypes`` (and ``@dtypesIfCUDA`` / ``@onlyCUDA`` / ``@onlyCPU``) for chosen dtypes."""
    if not cpu:
        return ["onlyCUDA", _dtypes_call("dtypes", cuda)], "cuda"
    if not cuda:
        return ["onlyCPU", _dtypes_call("dtypes", cpu)], "cpu"
    decorators = [_dtypes_call("dtypes", cpu)]
    if cuda != cpu:
        decorators.append(_dtypes_call("dtypesIfCUDA", cuda))
    return decorators, None


def decorator_imports(decorators: list[str]) -> list[ImportSpec]:
    specs = []
    for decorator in decorators:
        name = decorator.split("(", 1)[0]
        if name in ("dtypes", "dtypesIfCUDA", "onlyCUDA", "onlyCPU"):
            specs.append(ImportSpec(DEVICE_TYPE, name))
        elif name.startswith("unittest."):
            specs.append(ImportSpec("unittest"))
    return specs


TORCH = ImportSpec("torch")
MAKE_TENSOR = ImportSpec("torch.testing", "make_tensor")
TREE_MAP = ImportSpec("torch.utils._pytree", "tree_map")


def file_imports(dynamo: bool) -> list[ImportSpec]:
    home = DYNAMO_TEST_CASE if dynamo else COMMON_UTILS
    return [
        TORCH,
        ImportSpec(home, "TestCase"),
        ImportSpec(home, "run_tests"),
        ImportSpec(DEVICE_TYPE, "instantiate_device_type_tests"),
    ]


def left_out(failures: dict[str, str]) -> list[str]:
    """One note per reason: the dtypes whose CPU comparison failed in the probe."""
    by_reason: dict[str, list[str]] = {}
    for dtype, why in failures.items():
        by_reason.setdefault(why, []).append(dtype)
    return [
        f"left out {', '.join(dtypes)}: the CPU comparison fails ({why})"
        for why, dtypes in by_reason.items()
    ]


def _need_generic(generic: bool, what: str) -> None:
    if not generic:
        raise BadInput(
            f"a test for {what} runs per device and dtype, so it needs a device-generic class",
            hint="pick a class passed to instantiate_device_type_tests (--into FILE::Class), or write a new file with --path FILE",
        )


def dtype_test(
    source: str,
    test: str,
    cpu: list[str],
    cuda: list[str],
    imports: list[ImportSpec],
    placement: tuple[str, str, str],
    notes: list[str],
    **context: Any,
) -> MethodSpec:
    """A device-generic test taking ``dtype``, rendered from the template's ``kind`` section.
    ``placement`` is (area, why that area, the file name's topic)."""
    decorators, only = dtype_decorators(cpu, cuda)
    method = render(
        "test_method.py.j2",
        decorators=decorators,
        name=test,
        params="self, device, dtype",
        **context,
    )
    area, reason, thing = placement
    return MethodSpec(
        source=source,
        name=test,
        method=method,
        imports=[TORCH, *imports, *decorator_imports(decorators)],
        generic=True,
        dtypes={"cpu": cpu, "cuda": cuda},
        only=only,
        dynamo=False,
        area=area,
        area_reason=reason,
        thing=thing,
        notes=notes,
    )


# -- --op ---------------------------------------------------------------------------------


def op_spec(
    result: dict[str, Any],
    name: str | None = None,
    generic: bool = True,
    check: str | None = None,
    ref: str | None = None,
) -> MethodSpec:
    """An ``@ops`` test for an op with an OpInfo; else a test that calls the function."""
    _probe_failed(result)
    if "ref_error" in result:
        raise BadInput(result["ref_error"], hint="name a numpy function: --ref numpy.NAME")
    notes = []
    if "opdb_error" in result:
        notes.append(f"op_db is not importable here ({result['opdb_error']}): no OpInfo used")
    if "op" in result:
        if ref:
            notes.append(
                f"--ref is for a function without an OpInfo: {result['op']['name']} has one"
            )
        return _opinfo_spec(result["op"], result["query"], name, generic, notes, check)
    if "function" in result:
        devices = result.get("devices", ["cpu"])
        return _function_spec(result["function"], name, generic, notes, check, ref, devices)
    suggestions = result.get("suggestions") or []
    raise BadInput(
        f"unknown operator '{result['query']}'",
        hint=f"did you mean: {', '.join(suggestions)}?"
        if suggestions
        else "use an op_db name or a torch function, e.g. index_add, linalg.svd, nn.functional.relu",
    )


def allowed_dtypes(dtypes: list[str]) -> str:
    """``@ops``'s or ``@modules``' ``allowed_dtypes=(…),`` argument, wrapped when long."""
    names = ", ".join(f"torch.{d}" for d in dtypes) + ("," if len(dtypes) == 1 else "")
    if len(names) + 28 <= LINE_LIMIT:
        return f"allowed_dtypes=({names}),"
    return "allowed_dtypes=(\n" + "".join(f"        torch.{d},\n" for d in dtypes) + "    ),"


# The generic suites that already compare every OpInfo/ModuleInfo across devices.
COMPARE_CPU = "test_ops.py's TestCommon.test_compare_cpu"
CHECK_WORDS = {"check": "property", "ref": "reference", "grad": "gradients"}


def _opinfo_spec(
    op: dict[str, Any],
    query: str,
    name: str | None,
    generic: bool,
    notes: list[str],
    check: str | None,
) -> MethodSpec:
    """An ``@ops`` test over the op's OpInfo sample inputs that checks what the generic suites
    do not: the --check property, the OpInfo's reference, gradients (gradcheck in float64)."""
    full = op["name"] + (f".{op['variant']}" if op["variant"] else "")
    checks = {k: v for k, v in op["checks"].items() if v}
    cpu, cuda = op["chosen"]["cpu"], op["chosen"]["cuda"]
    if not checks:
        raise BadInput(
            f"{full} has an OpInfo with no reference and no gradients: {COMPARE_CPU} and "
            "TestCommon already run it on every device and dtype",
            hint="name the property to test: --check EXPR (over result, sample, op); or add a "
            "sample_inputs case to its OpInfo",
        )
    if not cpu and not cuda:
        failures = "; ".join(f"{d}: {why}" for d, why in op["cpu_failures"].items())
        raise BadInput(
            f"the checks of {full} fail on CPU for every dtype ({failures or 'no supported dtypes'})",
            hint="check --check EXPR, or write the test from a skeleton: --name NAME --area AREA",
        )
    _need_generic(generic, "an operator")
    # One dtype list for every device (@ops takes one): the dtypes checked on CPU, where the
    # probe ran them; a device runs those it supports.
    if cpu:
        cuda = [d for d in cpu if d in op["supported"]["cuda"]]
    notes.extend(f"left out {d}: {why}" for d, why in op["cpu_failures"].items())
    notes.extend(f"no {CHECK_WORDS[k]} check: {why}" for k, why in op["checks_left_out"].items())
    notes.append(
        f"{COMPARE_CPU} already compares {full} on each device with CPU: for a device "
        f"mismatch, add the failing input to its OpInfo's sample_inputs function, or a "
        f"DecorateInfo(unittest.expectedFailure, 'TestCommon', 'test_compare_cpu', ...) entry "
        "to its skips, rather than a new comparison"
    )
    if op["alias"]:
        notes.append(f"{query} is an alias of {op['name']}")
    others = [v for v in op["variants"] if v != op["variant"]]
    if others:
        notes.append(
            "other variants: "
            + ", ".join(f"--op {op['name']}.{v}" if v else f"--op {op['name']}" for v in others)
        )
    thing = slug(full.replace(".", "_"), limit=60)
    words = "_".join(CHECK_WORDS[k] for k in ("check", "ref", "grad") if k in checks)
    variant = f'"{op["variant"]}"'
    decorator = (
        f'ops(\n    [op for op in op_db if op.name == "{op["name"]}" and op.variant_test_name == '
        f"{variant}],\n    {allowed_dtypes(cpu or cuda)}\n)"
    )
    imports = [
        TORCH,
        ImportSpec("torch.testing._internal.common_methods_invocations", "op_db"),
        ImportSpec(DEVICE_TYPE, "ops"),
        *([ImportSpec(COMMON_UTILS, "gradcheck")] if "grad" in checks else []),
    ]
    test = name or f"test_{thing}_{words}"
    method = render(
        "test_method.py.j2",
        kind="op",
        decorators=[decorator],
        name=test,
        params="self, device, dtype, op",
        qualname=full,
        check=check or "",
        ref="ref" in checks,
        grad="grad" in checks,
        what=", ".join(CHECK_WORDS[k] for k in ("check", "ref", "grad") if k in checks),
    )
    area, reason = op_area(op["name"], op["info_class"])
    return MethodSpec(
        source="op",
        name=test,
        method=method,
        imports=imports,
        generic=True,
        dtypes={"cpu": cpu, "cuda": cuda},
        only=None if cpu else "cuda",
        dynamo=False,
        area=area,
        area_reason=reason,
        thing=thing,
        notes=notes,
        infix=op["formatted_name"],
    )


def _function_spec(
    fn: dict[str, Any],
    name: str | None,
    generic: bool,
    notes: list[str],
    check: str | None,
    ref: str | None,
    devices: list[str],
) -> MethodSpec:
    """A test of a torch function without an OpInfo: the --check property and the --ref numpy
    reference on one input; without either, a comparison with CPU where there is a second device
    (on a CPU-only machine it would compare CPU with CPU)."""
    qualname = "torch." + fn["name"]
    compare = not (check or ref)
    if compare and "cuda" not in devices:
        raise BadInput(
            f"{qualname} has no OpInfo, and the target has one device: comparing it with CPU "
            "would compare CPU with CPU",
            hint="name what to test: --check EXPR (over result and x), or --ref numpy.NAME; or "
            "start from a skeleton: --name NAME --area AREA",
        )
    if not fn["chosen"]:
        why = "; ".join(f"{d}: {w}" for d, w in fn["failures"].items())
        raise BadInput(
            f"{qualname} has no OpInfo, and its test fails on CPU for every dtype ({why})",
            hint="check --check or --ref, or write the call yourself from a skeleton: "
            "contribkit test --name NAME --area AREA",
        )
    _need_generic(generic, "an operator")
    notes.append(
        f"{qualname} has no OpInfo: default dtypes ({', '.join(DEFAULT_DTYPES)}) and one (3, 4) "
        "input; an OpInfo in common_methods_invocations.py would give it test_ops.py's suites"
    )
    notes.extend(f"left out {d}: {why}" for d, why in fn["failures"].items())
    thing = slug(fn["name"].replace(".", "_"), limit=60)
    if compare:
        notes.append("a comparison with CPU, on CUDA only (on CPU it would compare CPU with CPU)")
        cpu: list[str] = []
        context: dict[str, Any] = {"kind": "function_compare", "compare": fn["compare"]}
        test = name or cpu_comparison_name(thing)
        imports = [MAKE_TENSOR]
    else:
        cpu = fn["chosen"]
        words = [w for w, on in (("property", check), ("reference", ref)) if on]
        what = ["the --check property" if check else "", f"the reference {ref}" if ref else ""]
        context = {
            "kind": "function",
            "check": check or "",
            "ref": "",
            "what": " and ".join(w for w in what if w),
        }
        if ref:
            context["ref"] = "np." + ref.split(".", 1)[1]
        test = name or f"test_{thing}_{'_'.join(words)}"
        imports = [MAKE_TENSOR, *([ImportSpec("numpy", asname="np")] if ref else [])]
    return dtype_test(
        "op",
        test,
        cpu,
        fn["chosen"],
        imports,
        (*op_area(fn["name"]), thing),
        notes,
        qualname=qualname,
        **context,
    )


def check_init(init: str) -> str:
    """``--init`` must be call arguments (it is written into the test, and run by the probe)."""
    try:
        tree = ast.parse(f"f({init})", mode="eval")
    except SyntaxError as exc:
        raise BadInput(
            f"--init '{init}' is not a list of call arguments ({exc.msg})",
            hint="e.g. --init 'kernel_size=2' or --init '3, 4'",
        ) from exc
    if not isinstance(tree.body, ast.Call) or len(init.splitlines()) > 1:
        raise BadInput(
            f"--init '{init}' is not a list of call arguments", hint="e.g. --init 'kernel_size=2'"
        )
    return init.strip()


def check_expression(expr: str) -> str:
    """``--check`` must be one Python expression (it is written into the test, and run by the
    probe on CPU): over ``result``, ``sample`` and ``op`` for an OpInfo; ``result`` and ``x`` for
    a function without one; ``result``, ``module`` and ``inputs`` for a module."""
    try:
        ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise BadInput(
            f"--check '{expr}' is not a Python expression ({exc.msg})",
            hint="e.g. --check 'result.isfinite().all()' (names: result, sample, op, torch)",
        ) from exc
    if len(expr.splitlines()) > 1:
        raise BadInput(f"--check '{expr}' spans lines", hint="give one expression on one line")
    return expr.strip()


def check_ref(name: str) -> str:
    """``--ref``: a numpy function (``numpy.sinc`` or ``np.sinc``), as ``numpy.NAME``."""
    module, _, rest = check_dotted(name, "--ref").partition(".")
    if module not in ("numpy", "np") or not rest:
        raise BadInput(
            f"--ref '{name}' is not a numpy function", hint="e.g. --ref numpy.sinc (or np.sinc)"
        )
    return f"numpy.{rest}"


def check_dotted(name: str, option: str) -> str:
    if not _DOTTED.match(name):
        raise BadInput(
            f"{option} '{name}' is not a dotted Python name", hint=f"e.g. {option} index_add"
        )
    return name


# -- skeleton -----------------------------------------------------------------------------

SKELETON_DTYPES = ["float32", "float64"]


def skeleton_spec(name: str, area: str, generic: bool = True) -> MethodSpec:
    """An empty but real test: it checks that make_tensor honours `device` and `dtype`."""
    _need_generic(generic, "a skeleton")
    topic = name.removeprefix("test_")
    return dtype_test(
        "skeleton",
        name,
        SKELETON_DTYPES,
        SKELETON_DTYPES,
        [MAKE_TENSOR],
        (area, "--area", topic),
        [],
        kind="skeleton",
        summary=f"{topic.replace('_', ' ').capitalize()}: works on every device and dtype.",
    )
