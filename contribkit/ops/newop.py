"""``contribkit op --new NAME``: every place a new operator with autograd touches, each with a
skeleton in PyTorch's style (``templates/new_op/``). Written only under ``-o DIR``."""

from __future__ import annotations

import keyword
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from contribkit.core.errors import BadInput
from contribkit.ops.model import SCHEMA_VERSION

_NEW_NAME = re.compile(r"^[a-z][a-z0-9_]*[a-z0-9]$")

# (template, path in the checkout ({Name}: CamelCase), action, what it is)
PLACES = (
    (
        "native_functions.yaml.j2",
        "aten/src/ATen/native/native_functions.yaml",
        "add to",
        "the schema: functional, in-place and out= overloads, one structured kernel",
    ),
    (
        "derivatives.yaml.j2",
        "tools/autograd/derivatives.yaml",
        "add to",
        "the backward (and forward-mode) formula autograd is generated from",
    ),
    (
        "FunctionsManual.cpp.j2",
        "torch/csrc/autograd/FunctionsManual.cpp",
        "add to",
        "the backward function the formula calls (and its declaration in FunctionsManual.h)",
    ),
    (
        "kernel.cpp.j2",
        "aten/src/ATen/native/UnaryOps.cpp",
        "add to",
        "the meta function, the structured kernel and the dispatch stub",
    ),
    (
        "kernel_cpu.cpp.j2",
        "aten/src/ATen/native/cpu/{Name}Kernel.cpp",
        "new file",
        "the CPU kernel (scalar and vectorized), registered on the stub",
    ),
    (
        "kernel.cu.j2",
        "aten/src/ATen/native/cuda/{Name}.cu",
        "new file",
        "the CUDA kernel, registered on the stub",
    ),
    (
        "docs.py.j2",
        "torch/_torch_docs.py",
        "add to",
        "the docstrings of torch.{name} and Tensor.{name}, the docs index and torch/overrides.py",
    ),
    (
        "opinfo.py.j2",
        "torch/testing/_internal/common_methods_invocations.py",
        "add to",
        "the OpInfo and its sample inputs: most of the op's tests come from it",
    ),
    (
        "test.py.j2",
        "test/test_unary_ufuncs.py",
        "add to",
        "a device-generic test of what the OpInfo does not check, and the tests to run",
    ),
)
PLAN_FILE = "PLAN.md"


@dataclass(frozen=True)
class Skeleton:
    """One place a new operator touches, with the text to put there."""

    path: str  # where it goes in the PyTorch checkout
    action: str  # "new file" or "add to"
    what: str
    content: str


@dataclass
class NewOpPlan:
    name: str
    skeletons: list[Skeleton]
    written: dict[str, str] | None  # path -> create/overwrite/exists; None: nothing asked
    output: str | None
    dry_run: bool

    def as_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA_VERSION, **asdict(self)}


def check_name(name: str) -> None:
    if not _NEW_NAME.match(name) or keyword.iskeyword(name) or "__" in name:
        raise BadInput(
            f"'{name}' is not a valid name for a new operator",
            hint="use lower_snake_case letters and digits, e.g. --new my_softplus",
        )


def skeletons(name: str) -> list[Skeleton]:
    from contribkit.core.render import render

    camel = "".join(part.capitalize() for part in name.split("_"))
    found = []
    for template, path, action, what in PLACES:
        content = render(f"new_op/{template}", name=name, Name=camel)
        found.append(Skeleton(path.format(Name=camel), action, what.format(name=name), content))
    return found


def plan_new_op(name: str, output: Path | None, *, force: bool, dry_run: bool) -> NewOpPlan:
    """The skeletons for ``name``; written under ``output`` (same paths, plus PLAN.md) when given,
    all or nothing, replacing nothing without ``force``."""
    from contribkit.core.render import OutputFile, render, write_outputs

    check_name(name)
    found = skeletons(name)
    written = None
    if output is not None:
        plan = render(
            f"new_op/{PLAN_FILE}.j2", name=name, skeletons=found, test_path=found[-1].path
        )
        files = [OutputFile(output / s.path, s.content) for s in found]
        files.append(OutputFile(output / PLAN_FILE, plan))
        written = write_outputs(files, force=force, dry_run=dry_run)
    return NewOpPlan(name, found, written, str(output) if output else None, dry_run)
