"""Plan PyTorch-style device-generic tests: for an operator, a module, a repro, or a skeleton.

Pure planning: the ``*_spec`` functions build one test method and what it needs, and
:func:`plan_new_file` / :func:`plan_into` return the text of a new file, or of an existing test
file with the method's lines inserted, plus a summary. The command writes them.

torch is reached only through ``probes/test_target.py``, run in the target interpreter by
:func:`probe_target` and cached per interpreter, torch version and request.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contribkit.conventions.testfiles import check_test_source, instantiated_classes
from contribkit.core.astnames import source_lines
from contribkit.core.config import Settings
from contribkit.core.errors import BadInput
from contribkit.core.render import render
from contribkit.pr.labels import owner_label
from contribkit.repro.codefacts import (
    Edit,
    analyse,
    apply_edits,
    import_aliases,
    qualified,
)
from contribkit.testgen.pyedit import (
    LINE_LIMIT,
    EditError,
    ImportSpec,
    block_at_column_zero,
    dedent_lines,
    find_test_classes,
    imports_of,
    indent_block,
    module_bindings,
    parse_file,
    plan_insertion,
    rename,
    render_imports,
)

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

# -- where it goes -----------------------------------------------------------------------

# An area names where a test goes. Most areas have a home: the file PyTorch keeps such tests in,
# and the class a new test joins there (the file's device-generic class; dynamo's repro class).
# A test for an area with a home is inserted into that class when the fork has the file, as
# `--into FILE::CLASS` would, and goes to a new file of that name when it has not.
HOME_FILES: dict[str, tuple[str, str]] = {
    "torch": ("test/test_torch.py", "TestTorchDeviceType"),
    "nn": ("test/test_nn.py", "TestNNDeviceType"),
    "convolution": ("test/nn/test_convolution.py", "TestConvolutionNNDeviceType"),
    "pooling": ("test/nn/test_pooling.py", "TestPoolingNNDeviceType"),
    "embedding": ("test/nn/test_embedding.py", "TestEmbeddingNNDeviceType"),
    "linalg": ("test/test_linalg.py", "TestLinalg"),
    "sparse": ("test/test_sparse.py", "TestSparse"),
    "spectral_ops": ("test/test_spectral_ops.py", "TestFFT"),
    "indexing": ("test/test_indexing.py", "TestIndexing"),
    "scatter_gather": ("test/test_scatter_gather.py", "TestScatterGather"),
    "reductions": ("test/test_reductions.py", "TestReductions"),
    "sort_and_select": ("test/test_sort_and_select.py", "TestSortAndSelect"),
    "unary_ufuncs": ("test/test_unary_ufuncs.py", "TestUnaryUfuncs"),
    "binary_ufuncs": ("test/test_binary_ufuncs.py", "TestBinaryUfuncs"),
    "shape_ops": ("test/test_shape_ops.py", "TestShapeOps"),
    "view_ops": ("test/test_view_ops.py", "TestViewOps"),
    "tensor_creation_ops": ("test/test_tensor_creation_ops.py", "TestTensorCreation"),
    "foreach": ("test/test_foreach.py", "TestForeach"),
    "autograd": ("test/test_autograd.py", "TestAutogradDeviceType"),
    "type_promotion": ("test/test_type_promotion.py", "TestTypePromotion"),
    "complex": ("test/test_complex.py", "TestComplexTensor"),
    "nestedtensor": ("test/test_nestedtensor.py", "TestNestedTensorDeviceType"),
    "dynamo": ("test/dynamo/test_repros.py", "ReproTests"),
}
# Areas whose tests are spread over a folder: a new file, test/<folder>/test_<thing>.py. Any
# other area is a file of its own name, test/test_<area>.py.
FOLDER_AREAS = {
    "inductor": "test/inductor",
    "distributed": "test/distributed",
    "quantization": "test/quantization",
    "export": "test/export",
    "functorch": "test/functorch",
    "jit": "test/jit",
    "onnx": "test/onnx",
    "profiler": "test/profiler",
    "fx": "test/fx",
    "optim": "test/optim",
}
# An operator's area: by namespace, then by family (its name, in-place `_` dropped), then by the
# kind of its OpInfo; any other operator belongs with PyTorch's general tensor tests ("torch").
OP_NAMESPACE_AREAS = {
    "nn.functional": "nn",
    "linalg": "linalg",
    "fft": "spectral_ops",
    "sparse": "sparse",
}
OP_FAMILIES = {
    "scatter_gather": "scatter scatter_add scatter_reduce gather",
    "indexing": "index_put",
    "sort_and_select": "sort argsort msort topk kthvalue unique unique_consecutive isin",
    "view_ops": "view view_as reshape reshape_as transpose permute expand expand_as narrow squeeze "
    "unsqueeze flatten unflatten movedim as_strided unbind split chunk",
    "shape_ops": "flip fliplr flipud rot90 roll nonzero",
    "tensor_creation_ops": "zeros ones full empty arange range linspace logspace eye zeros_like "
    "ones_like full_like empty_like cat concat concatenate stack hstack vstack dstack meshgrid "
    "tril_indices triu_indices complex polar",
    "linalg": "matmul mm bmm addmm addmv addbmm baddbmm mv dot vdot outer ger einsum cholesky "
    "inverse det logdet pinverse matrix_power matrix_exp svd qr lu triangular_solve kron tensordot "
    "chain_matmul cross",
}
OP_FAMILY_AREAS = {op: area for area, ops in OP_FAMILIES.items() for op in ops.split()}
OPINFO_AREAS = {
    "UnaryUfuncInfo": "unary_ufuncs",
    "BinaryUfuncInfo": "binary_ufuncs",
    "ReductionOpInfo": "reductions",
    "SpectralFuncInfo": "spectral_ops",
    "ShapeFuncInfo": "shape_ops",
    "ForeachFuncInfo": "foreach",
}
# An issue's area by its labels, the first label listed here that the issue has (specific
# before general). Without one: a compile issue goes by its backend, any other to "torch".
LABEL_AREAS = [
    ("module: inductor", "inductor"),
    ("module: dynamo", "dynamo"),
    ("oncall: distributed", "distributed"),
    ("oncall: quantization", "quantization"),
    ("oncall: export", "export"),
    ("module: functorch", "functorch"),
    ("oncall: jit", "jit"),
    ("module: onnx", "onnx"),
    ("oncall: profiler", "profiler"),
    ("module: fx", "fx"),
    ("module: optimizer", "optim"),
    ("module: scatter & gather ops", "scatter_gather"),
    ("module: advanced indexing", "indexing"),
    ("module: sorting and selection", "sort_and_select"),
    ("module: reductions", "reductions"),
    ("module: viewing and reshaping", "view_ops"),
    ("module: tensor creation", "tensor_creation_ops"),
    ("module: type promotion", "type_promotion"),
    ("module: complex", "complex"),
    ("module: nestedtensor", "nestedtensor"),
    ("module: mta", "foreach"),
    ("module: convolution", "convolution"),
    ("module: pooling", "pooling"),
    ("module: embedding", "embedding"),
    ("module: linear algebra", "linalg"),
    ("module: sparse", "sparse"),
    ("module: fft", "spectral_ops"),
    ("module: autograd", "autograd"),
    ("module: nn", "nn"),
]

DEVICE_TYPE = "torch.testing._internal.common_device_type"
COMMON_UTILS = "torch.testing._internal.common_utils"
DYNAMO_TEST_CASE = "torch._dynamo.test_case"
CODE_START = "# ---- the issue's code ("
CODE_END = "# ---- end of the issue's code ----"
_CUDA_LITERAL = re.compile(r"^cuda(:\d+)?$")
_MASKS = re.compile(r"<addr>|<path>|<n>")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
# Calls a top-level print() of a regression test may contain and still be dropped (no side
# effects).
_VALUE_CALLS = {
    "torch.allclose",
    "torch.equal",
    "torch.isclose",
    "abs",
    "max",
    "min",
    "sum",
    "mean",
    "item",
    "cpu",
    "norm",
    "tolist",
    "all",
    "any",
    "len",
    "str",
    "repr",
    "float",
    "int",
    "type",
    "size",
    "dim",
}


# A last expression statement calling one of these has no result worth checking.
_NO_RESULT_CALLS = {"backward", "synchronize", "step", "zero_grad", "print"}
# Calls that draw random numbers: factories that draw on the CPU unless given ``device=``
# (seeded, both runs of a CPU comparison then get the same values), and calls that draw where
# their input lives (a device's own generator: only shapes and dtypes can be compared).
_RANDOM_FACTORIES = {"rand", "randn", "randint", "randperm", "normal"}
_RANDOM_IN_PLACE = {
    "rand_like",
    "randn_like",
    "randint_like",
    "bernoulli",
    "multinomial",
    "poisson",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
    "rrelu",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
    "RReLU",
    "uniform_",
    "normal_",
    "random_",
    "bernoulli_",
    "exponential_",
    "cauchy_",
    "log_normal_",
    "geometric_",
}


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

    def variants(self) -> dict[str, list[str]]:
        """The test names instantiate_device_type_tests creates, per device type."""
        out = {}
        for device in ("cpu", "cuda"):
            if self.only and self.only != device:
                continue
            dtypes = self.dtypes.get(device, [])
            out[device] = (
                [f"{self.name}_{device}_{d}" for d in dtypes]
                if self.dtypes.get("cpu") or self.dtypes.get("cuda")
                else [f"{self.name}_{device}"]
            )
        return out


# -- names -------------------------------------------------------------------------------


def slug(text: str, limit: int = 40) -> str:
    """Lower-case words joined by ``_``, cut at a word boundary near ``limit`` characters."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    out = ""
    for word in words:
        candidate = f"{out}_{word}" if out else word
        if len(candidate) > limit:
            return out or word[:limit]
        out = candidate
    return out


def camel(stem: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", stem) if part)


def method_name(raw: str) -> str:
    """``--name`` as a test method name: ``foo-bar`` -> ``test_foo_bar``."""
    name = slug(raw, limit=80)
    if not name:
        raise BadInput(f"'{raw}' cannot name a test", hint="e.g. --name index_add_empty_index")
    name = name if name.startswith("test_") else f"test_{name}"
    if not _IDENTIFIER.match(name):
        raise BadInput(f"'{raw}' cannot name a test", hint="use letters, digits and _")
    return name


def class_name_for(path: Path) -> str:
    return "Test" + camel(path.stem.removeprefix("test_"))


def area_target(area: str, thing: str) -> tuple[str, str | None]:
    """The file a test of ``area`` about ``thing`` goes to, and the class it joins there (None:
    the file's own)."""
    if area in HOME_FILES:
        return HOME_FILES[area]
    folder = FOLDER_AREAS.get(area)
    return (f"{folder}/test_{thing}.py" if folder else f"test/test_{area}.py"), None


def cpu_comparison_name(thing: str) -> str:
    """An op or module test's default name. It says what the test checks, so that it does not
    clash with the plain ``test_<op>`` tests the area's file often has already."""
    return f"test_{thing}_matches_cpu"


def check_area(area: str) -> str:
    value = slug(area, limit=60)
    if not value:
        raise BadInput(
            f"'{area}' is not an area", hint="e.g. --area nn, --area inductor, --area linalg"
        )
    return value


# -- probing the target torch -------------------------------------------------------------


def target_request(kind: str, name: str, init: str | None = None) -> dict[str, Any]:
    return {
        "kind": kind,
        "name": name,
        "init": init,
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
    scrub = settings.get("scrub_env")
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
    if not any(k in result for k in ("error", "opdb_error", "moduledb_error")):
        cache.put(key, {"result": result})
    return result


def _probe_failed(result: dict[str, Any]) -> None:
    if "error" in result:
        raise BadInput(
            result["error"],
            hint="generated tests import torch.testing._internal, which needs numpy: pip install numpy",
        )


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
            hint="pick a class passed to instantiate_device_type_tests (FILE::Class), or write a new file",
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


def op_spec(result: dict[str, Any], name: str | None = None, generic: bool = True) -> MethodSpec:
    """A test that runs the op on `device` and on CPU copies of its OpInfo sample inputs."""
    _probe_failed(result)
    notes = []
    if "opdb_error" in result:
        notes.append(f"op_db is not importable here ({result['opdb_error']}): no OpInfo used")
    if "op" in result:
        return _opinfo_spec(result["op"], result["query"], name, generic, notes)
    if "function" in result:
        return _function_spec(result["function"], name, generic, notes)
    suggestions = result.get("suggestions") or []
    raise BadInput(
        f"unknown operator '{result['query']}'",
        hint=f"did you mean: {', '.join(suggestions)}?"
        if suggestions
        else "use an op_db name or a torch function, e.g. index_add, linalg.svd, nn.functional.relu",
    )


def _opinfo_spec(
    op: dict[str, Any], query: str, name: str | None, generic: bool, notes: list[str]
) -> MethodSpec:
    full = op["name"] + (f".{op['variant']}" if op["variant"] else "")
    cpu, cuda = op["chosen"]["cpu"], op["chosen"]["cuda"]
    if not cpu and not cuda:
        failures = "; ".join(f"{d}: {why}" for d, why in op["cpu_failures"].items())
        raise BadInput(
            f"no dtype of {full} passes the CPU comparison ({failures or 'no supported dtypes'})",
            hint="write the test from a skeleton: contribkit test --name NAME --area AREA",
        )
    _need_generic(generic, "an operator")
    notes.extend(left_out(op["cpu_failures"]))
    if op["alias"]:
        notes.append(f"{query} is an alias of {op['name']}")
    others = [v for v in op["variants"] if v != op["variant"]]
    if others:
        notes.append(
            "other variants: "
            + ", ".join(f"--op {op['name']}.{v}" if v else f"--op {op['name']}" for v in others)
        )
    if op["compare"] == "metadata":
        notes.append(f"values are not compared across devices: {op['why_metadata']}")
    if not cpu:
        notes.append("CUDA only: no dtype passes on CPU")
    thing = slug(full.replace(".", "_"), limit=60)
    imports = [ImportSpec("torch.testing._internal.common_methods_invocations", "op_db")]
    return dtype_test(
        "op",
        name or cpu_comparison_name(thing),
        cpu,
        cuda,
        [*imports, *([TREE_MAP] if op["compare"] == "metadata" else [])],
        (*_op_area(op["name"], op["info_class"]), thing),
        notes,
        kind="op",
        qualname=full,
        op_name=op["name"],
        variant=op["variant"],
        compare=op["compare"],
        why_metadata=op["why_metadata"] or "",
    )


def _function_spec(
    fn: dict[str, Any], name: str | None, generic: bool, notes: list[str]
) -> MethodSpec:
    qualname = "torch." + fn["name"]
    if not fn["chosen"]:
        why = "; ".join(f"{d}: {w}" for d, w in fn["failures"].items())
        raise BadInput(
            f"{qualname} has no OpInfo, and calling it with one tensor failed ({why})",
            hint="write the call yourself from a skeleton: contribkit test --name NAME --area AREA",
        )
    _need_generic(generic, "an operator")
    notes.append(
        f"{qualname} has no OpInfo: default dtypes ({', '.join(DEFAULT_DTYPES)}) and one (3, 4) input"
    )
    thing = slug(fn["name"].replace(".", "_"), limit=60)
    return dtype_test(
        "op",
        name or cpu_comparison_name(thing),
        fn["chosen"],
        fn["chosen"],
        [MAKE_TENSOR],
        (*_op_area(fn["name"]), thing),
        notes,
        kind="function",
        qualname=qualname,
        compare=fn["compare"],
    )


def _op_area(op_name: str, info_class: str | None = None) -> tuple[str, str]:
    for prefix, area in sorted(OP_NAMESPACE_AREAS.items(), key=lambda kv: -len(kv[0])):
        if op_name.startswith(prefix + "."):
            return area, f"the operator's namespace ({prefix})"
    family = OP_FAMILY_AREAS.get(op_name.removesuffix("_"))
    if family:
        return family, f"the operator's family ({family})"
    if info_class in OPINFO_AREAS:
        return OPINFO_AREAS[info_class], f"its OpInfo ({info_class})"
    return "torch", "the operator (of no family: PyTorch's general tensor tests)"


# -- --module -----------------------------------------------------------------------------


def module_spec(
    result: dict[str, Any], init: str | None, name: str | None = None, generic: bool = True
) -> MethodSpec:
    """A test that runs the module on `device` and a CPU copy of it on CPU copies of the input."""
    _probe_failed(result)
    query = result["query"]
    if "module" not in result:
        suggestions = result.get("suggestions") or []
        what = (
            "is not a torch.nn.Module subclass" if result.get("not_a_module") else "is not a module"
        )
        raise BadInput(
            f"'{query}' {what}",
            hint=f"did you mean: {', '.join(suggestions)}?"
            if suggestions
            else "e.g. --module torch.nn.Unfold",
        )
    info = result["module"]
    qualname = info["name"]
    notes = []
    if "moduledb_error" in result:
        notes.append(f"module_db is not importable here ({result['moduledb_error']})")
    if "module_info" not in info and info.get("shape") is None:
        _no_plain_module_test(info)
    chosen = info["chosen"]
    if not chosen:
        failures = "; ".join(f"{d}: {why}" for d, why in info["failures"].items())
        raise BadInput(
            f"no dtype of {qualname} passes the CPU comparison ({failures})",
            hint="write the test from a skeleton: contribkit test --name NAME --area nn",
        )
    _need_generic(generic, "a module")
    notes.extend(left_out(info["failures"]))
    if info.get("parity_skipped"):
        notes.append(
            "its ModuleInfo skips test_cpu_gpu_parity: the CUDA variant may disagree with CPU"
        )
    thing = slug(qualname.rsplit(".", 1)[-1], limit=60)
    area = "quantization" if qualname.startswith("torch.ao.") else "nn"
    if "module_info" in info:
        imports = [
            ImportSpec("copy"),
            TREE_MAP,
            ImportSpec("torch.testing._internal.common_modules", "module_db"),
        ]
        context: dict[str, Any] = {"kind": "module_info"}
    else:
        how = (
            " (from --init)"
            if init is not None
            else " (required arguments filled in by name; --init chooses others)"
            if info["required"]
            else ""
        )
        notes.append(
            f"{qualname} has no ModuleInfo: the test builds {qualname}({info['init']}){how} and "
            f"runs it on one input of shape {tuple(info['shape'])} in the default dtypes "
            f"({', '.join(DEFAULT_DTYPES)})"
        )
        imports = [ImportSpec("copy"), MAKE_TENSOR]
        context = {"kind": "module", "init": info["init"], "shape": str(tuple(info["shape"]))}
    return dtype_test(
        "module",
        name or cpu_comparison_name(thing),
        chosen,
        chosen,
        imports,
        (area, "the module's package", thing),
        notes,
        qualname=qualname,
        **context,
    )


def _no_plain_module_test(info: dict[str, Any]) -> None:
    """Why a module without a ModuleInfo cannot be built and run (the probe's finding)."""
    qualname = info["name"]
    example = ", ".join(f"{p}=..." for p in info["required"]) or "..."
    init_hint = f"pass its constructor arguments: --init '{example}'"
    if "unfilled" in info:
        raise BadInput(
            f"{qualname} has no ModuleInfo in this torch, and contribkit cannot fill its "
            f"argument{'s' if len(info['unfilled']) > 1 else ''} {', '.join(info['unfilled'])}",
            hint=init_hint,
        )
    if "init_error" in info:
        text, error = info["init_error"]
        raise BadInput(
            f"{qualname} has no ModuleInfo in this torch, and {qualname}({text}) fails: {error}",
            hint=init_hint,
        )
    text, error = info["shape_error"]
    tried = ", ".join(str(tuple(s)) for s in PROBE_SHAPES)
    raise BadInput(
        f"{qualname}({text}) accepts no float input of shape {tried} (last error: {error})",
        hint=f"try other arguments with --init '{example}', or start from a skeleton: --name NAME --area nn",
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


# -- --from-repro -------------------------------------------------------------------------


@dataclass
class ReproSource:
    dir: Path
    meta: dict[str, Any]
    code: str  # the code, as repro.py holds it now
    check: str | None  # check()'s body (docstring dropped), moved to column 0
    notes: list[str] = field(default_factory=list)


def resolve_repro_dir(value: str, repros_root: Path) -> Path:
    """A repro folder, a path to its repro.py or meta.json, or an issue number."""
    if value.isdigit():
        return repros_root / f"issue-{value}"
    path = Path(value)
    return path.parent if path.name in ("repro.py", "meta.json") else path


def read_repro(folder: Path) -> ReproSource:
    if not folder.is_dir():
        raise BadInput(f"{folder} is not a repro folder", hint="write one with: contribkit repro N")
    meta_path = folder / "meta.json"
    if not meta_path.is_file():
        raise BadInput(
            f"{folder} has no meta.json",
            hint="--from-repro reads the folders `contribkit repro N` writes",
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(
            f"{meta_path} is not valid JSON ({exc})",
            hint="regenerate it with contribkit repro N --force",
        ) from exc
    if not isinstance(meta, dict) or "kind" not in meta:
        raise BadInput(
            f"{meta_path} is not a contribkit repro's meta.json",
            hint="regenerate it with contribkit repro N --force",
        )
    script = folder / "repro.py"
    try:
        text = script.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(
            f"{script} cannot be read ({exc.strerror or exc})",
            hint="regenerate it with contribkit repro N --force",
        ) from exc
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise BadInput(
            f"{script}:{exc.lineno}: syntax error: {exc.msg}", hint="fix repro.py first"
        ) from exc
    lines = source_lines(text)
    starts = [i for i, line in enumerate(lines) if line.startswith(CODE_START)]
    ends = [i for i, line in enumerate(lines) if line.rstrip() == CODE_END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise BadInput(
            f"{script} has lost the markers around the issue's code",
            hint=f"keep the lines '{CODE_START}…) ----' and '{CODE_END}' around it",
        )
    code = "".join(lines[starts[0] + 1 : ends[0]])
    reason = _incomplete_reason(tree)
    if reason:
        raise BadInput(
            f"{folder} is INCOMPLETE: {reason}",
            hint=f"complete the repro first (until `contribkit run {folder}` gives a verdict other than CANNOT_RUN INCOMPLETE)",
        )
    check = None
    notes = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            if not body:
                break
            start, end = body[0].lineno, body[-1].end_lineno or body[-1].lineno
            check = block_at_column_zero("".join(lines[start - 1 : end]), body[0].col_offset)
    if meta.get("incomplete") and check is not None:
        notes.append("meta.json says INCOMPLETE, but check() in repro.py is filled in: it is used")
    if check is None and not meta.get("signature_parts"):
        raise BadInput(
            f"{folder} has neither a failure signature nor a check()",
            hint="fill in check() in repro.py so that it fails while the bug is present",
        )
    return ReproSource(folder, meta, code, check, notes)


def _incomplete_reason(tree: ast.Module) -> str | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Repro":
            for kw in node.keywords:
                if kw.arg == "incomplete":
                    try:
                        value = ast.literal_eval(kw.value)
                    except ValueError:
                        return None
                    return str(value) if value else None
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            for stmt in node.body:
                if isinstance(stmt, ast.Raise) and "NotImplementedError" in ast.unparse(stmt):
                    return "check() in repro.py is not filled in yet"
    return None


def _line_span(node: ast.stmt) -> tuple[int, int]:
    return node.lineno, node.end_lineno or node.lineno


def _alone_on_lines(node: ast.stmt, body: list[ast.stmt]) -> bool:
    start, end = _line_span(node)
    return not any(
        other is not node and _line_span(other)[0] <= end and _line_span(other)[1] >= start
        for other in body
    )


def _delete_lines(code: str, spans: list[tuple[int, int]]) -> str:
    drop = {n for start, end in spans for n in range(start, end + 1)}
    return "".join(line for n, line in enumerate(source_lines(code), start=1) if n not in drop)


def unwrap_main(code: str) -> str:
    """Replace a top-level ``if __name__ == "__main__":`` block by its body."""
    while True:
        tree = ast.parse(code)
        block = next(
            (
                node
                for node in tree.body
                if isinstance(node, ast.If)
                and not node.orelse
                and isinstance(node.test, ast.Compare)
                and {ast.unparse(node.test.left), *(ast.unparse(c) for c in node.test.comparators)}
                == {"__name__", "'__main__'"}
            ),
            None,
        )
        if block is None:
            return code
        first, last = block.body[0].lineno, block.end_lineno or block.body[-1].lineno
        code = dedent_lines(code, first, last, block.body[0].col_offset - block.col_offset)
        code = _delete_lines(code, [(block.lineno, first - 1)])


def rewrite_cuda(code: str) -> str:
    """For a CUDA-only test: every literal CUDA device use becomes ``DEVICE`` (then ``device``)."""
    code = apply_edits(code, analyse(code).edits)
    tree = ast.parse(code)
    in_fstring = {
        id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values
    }
    edits = [
        Edit(
            node.lineno,
            node.col_offset,
            node.end_lineno or node.lineno,
            node.end_col_offset or node.col_offset,
            repr(node.value),
            "DEVICE",
        )
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _CUDA_LITERAL.match(node.value)
        and id(node) not in in_fstring
    ]
    return apply_edits(code, edits) if edits else code


def hoist_imports(
    code: str, harness: dict[str, ImportSpec]
) -> tuple[str, list[ImportSpec], list[str]]:
    """Take the code's top-level imports out for the file's import block.

    An import stays in place when it shares its lines with other statements or would rebind a
    name the test file itself imports differently; ``from __future__`` imports are dropped.
    """
    tree = ast.parse(code)
    hoisted: list[ImportSpec] = []
    spans: list[tuple[int, int]] = []
    notes = []
    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or not _alone_on_lines(
            node, tree.body
        ):
            continue
        specs = imports_of(node)
        if any(s.group == 0 for s in specs):
            notes.append(f"dropped `{ast.unparse(node)}` (a test file's imports are its own)")
            spans.append(_line_span(node))
            continue
        if any(s.bound in harness and harness[s.bound] != s for s in specs):
            continue
        hoisted.extend(specs)
        spans.append(_line_span(node))
    return _delete_lines(code, spans), hoisted, notes


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Name) and func.value.id == "torch":
            return f"torch.{func.attr}"
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _drop_statements(code: str, drop: Callable[[ast.stmt], bool]) -> str:
    """``code`` without its top-level statements that ``drop`` picks and that own their lines."""
    tree = ast.parse(code)
    spans = [
        _line_span(node) for node in tree.body if drop(node) and _alone_on_lines(node, tree.body)
    ]
    return _delete_lines(code, spans)


def _is_value_print(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and _call_name(node.value) == "print"
        and all(
            _call_name(call) in _VALUE_CALLS
            for arg in [*node.value.args, *(kw.value for kw in node.value.keywords)]
            for call in ast.walk(arg)
            if isinstance(call, ast.Call)
        )
    )


def drop_value_prints(code: str) -> str:
    """Drop top-level ``print(...)`` of values and comparisons: the test asserts instead."""
    return _drop_statements(code, _is_value_print)


def quiet_value_prints(code: str) -> str:
    """Turn top-level ``print(a, b)`` of values into ``str(a), str(b)``: no output, but the
    values are still formatted, which is where a crash issue's error is often raised."""
    tree = ast.parse(code)
    edits = []
    for node in tree.body:
        if not (_is_value_print(node) and _alone_on_lines(node, tree.body)):
            continue
        assert isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
        args = [ast.get_source_segment(code, a) or ast.unparse(a) for a in node.value.args]
        after = ", ".join(f"str({a})" for a in args) if args else "pass"
        end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
        edits.append(Edit(node.lineno, node.col_offset, *end, "", after))
    return apply_edits(code, edits)


def eager_compiled_pairs(code: str) -> list[tuple[str, str]]:
    """``out = opt(args)`` where ``opt = torch.compile(fn)``: compare ``out`` with ``fn(args)``."""
    tree = ast.parse(code)
    compiled: dict[str, str] = {}
    pairs = []
    for node in tree.body:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            continue
        value, target = node.value, node.targets[0].id
        if not isinstance(value, ast.Call):
            continue
        callee = ast.unparse(value.func)
        if (
            callee == "torch.compile"
            and value.args
            and isinstance(value.args[0], (ast.Name, ast.Attribute))
        ):
            compiled[target] = ast.unparse(value.args[0])
        elif callee in compiled:
            args = ast.get_source_segment(code, value) or ast.unparse(value)
            pairs.append(
                (
                    target,
                    compiled[callee]
                    + args[len(ast.get_source_segment(code, value.func) or callee) :],
                )
            )
    return pairs


def _signature_checks(parts: dict[str, str]) -> dict[str, Any]:
    exc_type = parts["exc_type"]
    short = exc_type.rsplit(".", 1)[-1]
    builtin = getattr(builtins, short, None)
    is_builtin = (
        exc_type == short and isinstance(builtin, type) and issubclass(builtin, BaseException)
    )
    pieces = [p.strip() for p in _MASKS.split(parts.get("message") or "")]
    fragment = max(pieces, key=len) if pieces else ""
    fragment = fragment if len(fragment) >= 8 else ""
    matches = [*([] if is_builtin else ["same_type"]), *(["same_message"] if fragment else [])]
    return {
        "catch": short if is_builtin else "Exception",
        "exc_name": "" if is_builtin else short,
        "fragment": fragment,
        "matches": matches,
    }


def repro_spec(src: ReproSource, name: str | None = None, generic: bool = True) -> MethodSpec:
    """A regression test from a repro: the issue's code on `device`, then the repro's check, or
    (for a crash) a failure naming the issue while the issue's error is raised."""
    meta = src.meta
    number = meta.get("number") if isinstance(meta.get("number"), int) else None
    ref = (
        (f"{meta['repo']}#{number}" if meta.get("repo") else f"#{number}")
        if number
        else src.dir.name
    )
    dynamo = bool(meta.get("uses_compile"))
    requires_cuda = bool(meta.get("requires_cuda"))
    code, hoisted, uses_device, notes = _test_code(src, dynamo, requires_cuda)
    signature = meta.get("signature_parts") if src.check is None else None
    check = indent_block(rename(src.check, "DEVICE", "device"), "    ") if src.check else None
    code = drop_no_ops(code)
    decorators, only, preamble, device_imports = _device_setup(generic, requires_cuda, uses_device)
    if only == "cpu" and not uses_device:
        notes.append("the code does not use a device: the test runs on CPU only")
    result_check: dict[str, Any] = {}
    if signature:
        code, result_check, check_imports, what = _crash_check(
            code, dynamo, generic and only is None, hoisted
        )
        device_imports = [*device_imports, *check_imports]
        checks = f"Fails while the code raises the issue's {signature['exc_type']}{what}."
    else:
        code = drop_value_prints(code)
        comparison = meta.get("comparison") or {}
        checks = "Fails while the repro's check fails"
        if comparison.get("actual") and comparison.get("expected"):
            checks += f" ({comparison['actual']} against {comparison['expected']})"
        checks += "."
    title_slug = slug(meta.get("title") or "")
    default_name = f"test_issue_{number}" if number else f"test_{slug(src.dir.name)}"
    test = name or (f"{default_name}_{title_slug}" if title_slug else default_name)
    body_indent = "        " if signature else "    "
    method = render(
        "test_method.py.j2",
        kind="repro",
        decorators=decorators,
        name=test,
        params="self, device" if generic else "self",
        ref=ref,
        title=meta.get("title") or "",
        url=meta.get("url") or "",
        checks=checks,
        preamble=preamble,
        signature=bool(signature),
        code=indent_block(code, body_indent).rstrip("\n") or f"{body_indent}pass",
        check=check.rstrip("\n") if check else "",
        fail_prefix=f"{ref} is back: the code raises the issue's error again: ",
        **result_check,
        **(_signature_checks(signature) if signature else {}),
    )
    thing = f"issue_{number}" if number else slug(src.dir.name)
    area, reason = _repro_area(meta)
    return MethodSpec(
        source="repro",
        name=test,
        method=method,
        imports=[TORCH, *hoisted, *device_imports, *decorator_imports(decorators)],
        generic=generic,
        dtypes={"cpu": [], "cuda": []},
        only=only,
        dynamo=dynamo,
        area=area,
        area_reason=reason,
        thing=thing,
        notes=[*src.notes, *notes],
    )


def _crash_check(
    code: str, dynamo: bool, device_generic: bool, hoisted: list[ImportSpec]
) -> tuple[str, dict[str, Any], list[ImportSpec], str]:
    """How a crash test checks the code's result once it runs: eager against compiled where the
    code compiles a function; else, for code on a generic `device`, the result against the same
    code run on CPU; else that the result holds no inf or nan. Returns the code (its last
    expression may now be assigned), the template's context, the imports it needs, and the
    docstring's words for the check."""
    pairs = eager_compiled_pairs(code) if dynamo else []
    code, result = take_result(code)
    code = quiet_value_prints(code)
    context: dict[str, Any] = {
        "eager_vs_compiled": pairs,
        "result": result or "",
        "reference": "",
        "seed": False,
    }
    if pairs or result is None:
        return code, context, [], "; eager and compiled results must agree" if pairs else ""
    if not device_generic:
        what = f"; its result `{result}` must hold no inf or nan"
        return code, context, [ImportSpec("torch.utils._pytree", "tree_leaves")], what
    imported = {i.bound: f"{i.module}.{i.name}" if i.name else i.module for i in hoisted}
    randomness = draws_random(code, imported)
    if randomness == "device":
        context["reference"] = "metadata"
        return (
            code,
            context,
            [TREE_MAP],
            "; its result's shapes and dtypes must match CPU's",
        )
    context.update(reference="values", seed=randomness == "cpu")
    return code, context, [], "; its result on `device` must match CPU's"


def _is_self_assignment(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Name)
        and node.targets[0].id == node.value.id
    )


def drop_no_ops(code: str) -> str:
    """Drop top-level ``x = x`` lines (``device = DEVICE`` once ``DEVICE`` is ``device``)."""
    return _drop_statements(code, _is_self_assignment)


def take_result(code: str) -> tuple[str, str | None]:
    """The name that holds the code's result: the one name its last statement assigns; or its
    last expression, or the one value its last ``print`` shows, assigned to a new name (the
    ``print`` stays, of that name: printing may be what raises)."""
    tree = ast.parse(code)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Assign) and len(last.targets) == 1:
        target = last.targets[0]
        return code, target.id if isinstance(target, ast.Name) else None
    if isinstance(last, ast.AnnAssign) and last.value is not None:
        return code, last.target.id if isinstance(last.target, ast.Name) else None
    if not isinstance(last, ast.Expr) or not _alone_on_lines(last, tree.body):
        return code, None
    value = last.value
    printed = (
        isinstance(value, ast.Call)
        and _call_name(value) == "print"
        and len(value.args) == 1
        and not value.keywords
        and not isinstance(value.args[0], ast.Starred)
    )
    if printed:
        assert isinstance(value, ast.Call)
        value = value.args[0]
    if isinstance(value, (ast.Constant, ast.JoinedStr, ast.Await, ast.Yield, ast.YieldFrom)) or (
        isinstance(value, ast.Call) and _call_name(value) in _NO_RESULT_CALLS
    ):
        return code, None
    if isinstance(value, ast.Name):  # a bare name is a no-op line: dropped (a print stays)
        return (code if printed else _delete_lines(code, [_line_span(last)])), value.id
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    name = next(n for n in ("result", *(f"result{i}" for i in range(2, 1000))) if n not in taken)
    segment = ast.get_source_segment(code, value) or ast.unparse(value)
    end = (last.end_lineno or last.lineno, last.end_col_offset or 0)
    after = f"{name} = {segment}" + (f"\nprint({name})" if printed else "")
    edit = Edit(last.lineno, last.col_offset, *end, "", after)
    return apply_edits(code, [edit]), name


def draws_random(code: str, imported: dict[str, str] | None = None) -> str:
    """``"device"`` when the code draws random numbers where its tensors live, ``"cpu"`` when
    it draws them on the CPU only (random factories without ``device=``, nn modules'
    initialisation), else ``""``. ``imported``: the aliases of imports taken out of ``code``."""
    found = ""
    tree = ast.parse(code)
    aliases = {**(imported or {}), **import_aliases(tree)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = qualified(node.func, aliases) or ast.unparse(node.func)
        last = callee.rsplit(".", 1)[-1]
        on_device = any(k.arg == "device" for k in node.keywords)
        nn_module = callee.startswith(("torch.nn.", "nn.")) and last[:1].isupper()
        if (
            last in _RANDOM_IN_PLACE
            or callee.startswith(("torch.nn.init.", "nn.init."))
            or (on_device and (last in _RANDOM_FACTORIES or last[:1].isupper()))
        ):
            return "device"
        if last in _RANDOM_FACTORIES or nn_module:
            found = "cpu"
    return found


def _test_code(
    src: ReproSource, dynamo: bool, requires_cuda: bool
) -> tuple[str, list[ImportSpec], bool, list[str]]:
    """The issue's code as a test body: main block unwrapped, CUDA uses on `device` when the
    test is CUDA-only, ``DEVICE`` renamed ``device``, imports taken out for the file's block."""
    try:
        code = unwrap_main(src.code)
    except SyntaxError as exc:
        raise BadInput(
            f"the issue's code in {src.dir / 'repro.py'} does not parse (line {exc.lineno} of the code: {exc.msg})",
            hint="fix it in repro.py first",
        ) from exc
    if requires_cuda:
        code = rewrite_cuda(code)
    tree = ast.parse(code)
    uses_device = any(isinstance(n, ast.Name) and n.id == "DEVICE" for n in ast.walk(tree))
    notes = []
    if any(isinstance(n, ast.Global) for n in ast.walk(tree)):
        notes.append(
            "the code uses `global`, which inside a test method means the test file's globals: check it"
        )
    harness = {spec.bound: spec for spec in file_imports(dynamo)}
    code, hoisted, hoist_notes = hoist_imports(rename(code, "DEVICE", "device"), harness)
    return code.strip("\n") + "\n", hoisted, uses_device, [*notes, *hoist_notes]


def _device_setup(
    generic: bool, requires_cuda: bool, uses_device: bool
) -> tuple[list[str], str | None, list[str], list[ImportSpec]]:
    """Decorators, the one device type it runs on (if any), preamble lines and their imports.

    A device-generic test takes `device`: @onlyCUDA when the code needs CUDA, @onlyCPU when it
    uses no device at all. In a plain class the test sets `device` itself, and is skipped
    without CUDA when the code needs it.
    """
    if generic:
        if requires_cuda:
            return ["onlyCUDA"], "cuda", [], []
        return ([], None, [], []) if uses_device else (["onlyCPU"], "cpu", [], [])
    if requires_cuda:
        return (
            ['unittest.skipIf(not TEST_CUDA, "requires CUDA")'],
            "cuda",
            ['device = "cuda"'],
            [ImportSpec("torch.testing._internal.common_cuda", "TEST_CUDA")],
        )
    return [], "cpu", ['device = "cpu"'] if uses_device else [], []


def _repro_area(meta: dict[str, Any]) -> tuple[str, str]:
    labels = meta.get("labels") or []
    for label, area in LABEL_AREAS:
        if label in labels:
            return area, f"the issue's label '{label}'"
    if meta.get("uses_compile"):
        backends = meta.get("compile_backends") or []
        area = "inductor" if not backends or "inductor" in backends else "dynamo"
        return area, f"torch.compile with backend {', '.join(backends) or 'inductor'}"
    return "torch", "the issue (no area label: PyTorch's general tensor tests)"


# -- files --------------------------------------------------------------------------------


@dataclass
class FilePlan:
    path: Path
    display: str  # the path as shown to the user
    before: str | None  # None for a new file
    after: str
    summary: dict[str, Any]

    def diff(self) -> str:
        before = source_lines(self.before or "")
        after = source_lines(self.after)
        origin = f"a/{self.display}" if self.before is not None else "/dev/null"
        return "".join(difflib.unified_diff(before, after, origin, f"b/{self.display}"))


def default_target(spec: MethodSpec, area: str | None) -> tuple[str, str | None, str]:
    """Where the test goes without --path or --into: the file, the class it joins there (None:
    the file's own), and why."""
    path, cls = area_target(area or spec.area, spec.thing)
    return path, cls, "--area" if area else spec.area_reason


def plan_default(
    build: Callable[[bool], MethodSpec], area: str | None, base: Path, root: Path | None
) -> FilePlan:
    """The test where PyTorch keeps such tests: inserted into that file's class when the fork has
    the file (exactly as --into FILE::CLASS), else written as a new file there."""
    spec = build(True)
    rel, cls, reason = default_target(spec, area)
    if not (base / rel).is_file():
        return plan_new_file(spec, base / rel, rel, root, reason, cls)
    plan = plan_into(build, base / rel, rel, None, root, prefer=cls)
    into = f"{rel}::{plan.summary['class']}"
    plan.summary.update(
        placed_by=reason,
        notes=[
            *plan.summary["notes"],
            f"added to the fork's {rel}, as --into {into} does; --path FILE writes a new file",
        ],
    )
    return plan


def _rel(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return path.as_posix()


def convention_problems(path: str, text: str) -> list[str]:
    """The test-file conventions (Owner(s) header, run_tests main block, instantiated generic
    classes, no hard-coded CUDA in device-generic tests) as the hooks check them; a generated
    file must pass. The single call site of the hooks' rule code."""
    return [f"{v.rule.id} {v.message}" for v in check_test_source(text, path)]


def _verify(path: str, text: str, before: str | None = None) -> None:
    try:
        ast.parse(text)
    except SyntaxError as exc:  # our bug, never the user's
        raise AssertionError(
            f"generated {path} does not parse: line {exc.lineno}: {exc.msg}"
        ) from exc
    old = set(convention_problems(path, before)) if before is not None else set()
    new = [p for p in convention_problems(path, text) if p not in old]
    if new:
        raise AssertionError(f"generated {path} breaks the test-file conventions: {'; '.join(new)}")


def _summary(spec: MethodSpec, plan_path: str, cls: str, generic: bool) -> dict[str, Any]:
    return {
        "source": spec.source,
        "path": plan_path,
        "class": cls,
        "device_generic": generic,
        "test": spec.name,
        "dtypes": spec.dtypes if spec.dtypes.get("cpu") or spec.dtypes.get("cuda") else None,
        "only": spec.only,
        "variants": spec.variants() if generic else {},
        "dynamo": spec.dynamo,
        "notes": spec.notes,
        "run": f"python {plan_path} -k {spec.name}",
    }


def plan_new_file(
    spec: MethodSpec,
    path: Path,
    display: str,
    root: Path | None,
    placed: str,
    class_name: str | None = None,
) -> FilePlan:
    rel = _rel(path, root)
    owner = owner_label(rel, root)
    cls = class_name or class_name_for(path)
    text = render(
        "test_file.py.j2",
        owner_json=json.dumps([owner.label]),
        imports=render_imports([*file_imports(spec.dynamo), *spec.imports]),
        class_name=cls,
        method=indent_block(spec.method, "    ").rstrip("\n"),
    )
    _verify(rel, text)
    summary = {
        **_summary(spec, display, cls, True),
        "action": "create",
        "owner": owner.label,
        "owner_source": owner.origin
        + (f" ({owner.glob})" if owner.origin == "labeler.yml" else ""),
        "placed_by": placed,
    }
    return FilePlan(path, display, None, text, summary)


def _resets_dynamo(cls: ast.ClassDef, tree: ast.Module) -> bool:
    """The class derives from dynamo's or inductor's TestCase (directly or by an imported name)."""
    bound = module_bindings(tree)
    for base in cls.bases:
        text = ast.unparse(base)
        origin = text + " " + bound.get(text.split(".")[0], "")
        if "_dynamo" in origin or "_inductor" in origin:
            return True
    return False


def split_into(value: str) -> tuple[str, str | None]:
    """``FILE[::Class]``."""
    file, sep, cls = value.partition("::")
    if sep and not _IDENTIFIER.match(cls):
        raise BadInput(f"'{cls}' is not a class name", hint="--into test/test_foo.py::TestFoo")
    return file, cls or None


def plan_into(
    build: Callable[[bool], MethodSpec],
    path: Path,
    display: str,
    class_name: str | None,
    root: Path | None,
    prefer: str | None = None,
) -> FilePlan:
    """Insert the test built by ``build(generic)`` into a class of an existing test file: the
    class named, else ``prefer`` when the file has it, else the file's one device-generic class."""
    if not path.exists():
        raise BadInput(
            f"{display} does not exist",
            hint="--into adds to an existing test file; a new file needs --path",
        )
    if path.is_dir() or path.suffix != ".py":
        raise BadInput(
            f"{display} is not a Python test file",
            hint="pass a test_*.py file: --into test/test_foo.py::TestFoo",
        )
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(
            f"{display} cannot be read as UTF-8 text ({exc})", hint="pass a Python test file"
        ) from exc
    # A UTF-8 byte order mark is not Python source: edit without it, write it back as it was.
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    source = text[len(bom) :]
    try:
        tree = parse_file(source, display)
    except EditError as exc:
        raise BadInput(str(exc), hint=exc.hint) from exc
    classes = find_test_classes(tree)
    if not classes:
        raise BadInput(
            f"{display} is not a Python test file: it defines no TestCase class",
            hint="pass a file with a test class, or write a new file with --path",
        )
    generic_names = instantiated_classes(tree)
    names = [c.name for c in classes]
    if class_name:
        cls = next(
            (c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == class_name), None
        )
        if cls is None:
            raise BadInput(
                f"class {class_name} not found in {display}", hint=f"classes: {', '.join(names)}"
            )
    else:
        candidates = (
            [c for c in classes if c.name == prefer]
            or [c for c in classes if c.name in generic_names]
            or classes
        )
        if len(candidates) > 1:
            raise BadInput(
                f"{display} has several test classes: {', '.join(c.name for c in candidates)}",
                hint=f"pick one: --into {display}::{candidates[0].name}",
            )
        cls = candidates[0]
    generic = cls.name in generic_names
    spec = build(generic)
    existing = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if spec.name in existing:
        raise BadInput(
            f"{cls.name} already has {spec.name}", hint="choose another name with --name"
        )
    try:
        after, added = plan_insertion(source, display, cls, tree, spec.method, spec.imports)
    except EditError as exc:
        raise BadInput(str(exc), hint=exc.hint) from exc
    _verify(_rel(path, root), after, before=source)
    if spec.dynamo and not _resets_dynamo(cls, tree):
        spec.notes.append(
            f"a torch.compile test in {cls.name}, whose TestCase does not reset dynamo between "
            "tests: consider a class based on torch._dynamo.test_case.TestCase"
        )
    summary = {
        **_summary(spec, display, cls.name, generic),
        "action": "insert",
        "imports_added": [s.statement() for s in added],
    }
    return FilePlan(path, display, text, bom + after, summary)
