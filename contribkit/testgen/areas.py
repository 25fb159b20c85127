"""Where a generated test goes: the placement tables, test and file names, and the area of an
operator or an issue.

An area names where a test goes; :func:`area_target` turns it into the file and class.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from contribkit.core.errors import BadInput

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


def area_target(area: str, thing: str) -> tuple[str, str | None]:
    """The file a test of ``area`` about ``thing`` goes to, and the class it joins there (None:
    the file's own)."""
    if area in HOME_FILES:
        return HOME_FILES[area]
    folder = FOLDER_AREAS.get(area)
    return (f"{folder}/test_{thing}.py" if folder else f"test/test_{area}.py"), None


def op_area(op_name: str, info_class: str | None = None) -> tuple[str, str]:
    for prefix, area in sorted(OP_NAMESPACE_AREAS.items(), key=lambda kv: -len(kv[0])):
        if op_name.startswith(prefix + "."):
            return area, f"the operator's namespace ({prefix})"
    family = OP_FAMILY_AREAS.get(op_name.removesuffix("_"))
    if family:
        return family, f"the operator's family ({family})"
    if info_class in OPINFO_AREAS:
        return OPINFO_AREAS[info_class], f"its OpInfo ({info_class})"
    return "torch", "the operator (of no family: PyTorch's general tensor tests)"


def repro_area(meta: dict[str, Any]) -> tuple[str, str]:
    labels = meta.get("labels") or []
    for label, area in LABEL_AREAS:
        if label in labels:
            return area, f"the issue's label '{label}'"
    if meta.get("uses_compile"):
        backends = meta.get("compile_backends") or []
        area = "inductor" if not backends or "inductor" in backends else "dynamo"
        return area, f"torch.compile with backend {', '.join(backends) or 'inductor'}"
    return "torch", "the issue (no area label: PyTorch's general tensor tests)"


# -- names -------------------------------------------------------------------------------

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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
    if not IDENTIFIER.match(name):
        raise BadInput(f"'{raw}' cannot name a test", hint="use letters, digits and _")
    return name


def class_name_for(path: Path) -> str:
    return "Test" + camel(path.stem.removeprefix("test_"))


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
