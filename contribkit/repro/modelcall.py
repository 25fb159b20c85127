"""The edit a human makes to a snippet that only defines a model: build it and call it on the
input the issue states, and only then.

The class: an issue pastes ``nn.Module`` classes (the outer model and its blocks) and says in
its prose what goes in ("the input is a tensor of shape (2, 8, 16, 16)", "with
``torch.randn(1, 3, 224, 224)``") but never writes the call. Run as pasted, no operation of
the model runs, so no clean run may say NOT_REPRODUCED (see ``reprojudge``). A human
instantiates the outer model and calls it on that input; this module does the same when it
is unambiguous:

- exactly one ``nn.Module`` subclass the code never uses (the outer one: its blocks are used
  by it), whose ``__init__`` needs no argument and whose own ``forward`` needs N positional
  ones and no keyword-only one;
- exactly N input shapes stated in the prose (outside the code), in order;
- every dimension a small positive integer literal.

Anything else (inputs not stated, a constructor with arguments, two candidate models) leaves
the code as it was: the verdict then stays CANNOT_RUN with the evidence that nothing ran.
The shapes are read as numbers and the call is written from them, never from the issue's text.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from contribkit.core.astnames import dotted

# A dimension list: "(2, 8)", "[1, 3, 224]", "(4,)".
DIMS = r"[(\[]\s*\d+(?:\s*,\s*\d+)*\s*,?\s*[)\]]"
# "shape (2, 8, 16, 16)", "of size [1, 3, 224, 224]", "shape `(4, 10)`", "shaped 2x3x8",
# "x.shape = torch.Size([4, 5])", "x.size() == (4, 5)", "shape: (2, 3)".
_SHAPE_WORDS = re.compile(
    r"\b(?:shapes?|sizes?|shaped|dimensions?|dims?)\b(?:\(\))?(?:\s*(?:of|is|are|==?|:))?\s*`?"
    rf"(?:torch\.Size\(\s*)?(?P<dims>{DIMS}|\d+(?:\s*[x×]\s*\d+)+)",
    re.I,
)
# ``torch.randn(2, 8)``, ``torch.rand((2, 8))``, ``torch.ones(2, 8, dtype=...)`` in the prose.
_FACTORY = re.compile(
    r"\btorch\.(?P<factory>randn|rand|ones|zeros|empty)\("
    r"\s*(?P<dims>[(\[]?\s*\d+(?:\s*,\s*\d+)*\s*,?\s*[)\]]?)\s*(?:,[^)]*)?\)"
)
_MAX_ELEMENTS = 1 << 24  # an input a CPU builds in a blink: larger is a guess, not a repro


@dataclass(frozen=True)
class ModelCall:
    lines: list[str]  # the lines appended to the code
    edit: str  # the edit, as meta.json and the script's header list it


@dataclass(frozen=True)
class ShapeStatement:
    start: int  # where the statement stands in the text read
    end: int
    dims: tuple[int, ...]
    factory: str  # the torch factory it is written with ("randn"), or "" for words


def shape_statements(text: str) -> list[ShapeStatement]:
    """Every shape ``text`` states, in order: a factory call or a shape word and its dims."""
    found: list[ShapeStatement] = []
    for pattern in (_FACTORY, _SHAPE_WORDS):
        for match in pattern.finditer(text):
            if not any(s.start <= match.start() < s.end for s in found):
                dims = tuple(int(d) for d in re.findall(r"\d+", match.group("dims")))
                factory = match.groupdict().get("factory") or ""
                found.append(ShapeStatement(match.start(), match.end(), dims, factory))
    return sorted(found, key=lambda s: s.start)


def stated_shapes(prose: str) -> list[tuple[int, ...]]:
    """The input shapes ``prose`` states, in order (a repeated statement counts once)."""
    shapes: list[tuple[int, ...]] = []
    for statement in shape_statements(prose):
        if statement.dims not in shapes:
            shapes.append(statement.dims)
    return shapes


def small_shape(shape: tuple[int, ...]) -> bool:
    """A shape a repro may build: positive dims, at most ``_MAX_ELEMENTS`` elements."""
    return bool(shape) and 0 not in shape and _elements(shape) <= _MAX_ELEMENTS


def model_call(tree: ast.Module, loaded: set[str], prose: str) -> ModelCall | None:
    """The call that runs the snippet's one unused model on the stated inputs, or None."""
    models = [
        stmt
        for stmt in tree.body
        if isinstance(stmt, ast.ClassDef)
        and stmt.name not in loaded
        and any(dotted(base).rsplit(".", 1)[-1] == "Module" for base in stmt.bases)
    ]
    if len(models) != 1:
        return None
    model = models[0]
    methods = {s.name: s for s in model.body if isinstance(s, ast.FunctionDef)}
    forward = methods.get("forward")
    if forward is None or _required(methods.get("__init__")) != (0, 0):
        return None
    positional, keyword_only = _required(forward)
    shapes = stated_shapes(prose)
    if keyword_only or positional == 0 or len(shapes) != positional:
        return None
    if not all(small_shape(shape) for shape in shapes):
        return None
    inputs = ", ".join(
        f"torch.randn({', '.join(map(str, shape))}, device=DEVICE)" for shape in shapes
    )
    call = f"_contribkit_output = {model.name}().to(DEVICE)({inputs})"
    return ModelCall(
        ["import torch", call],
        f"build {model.name} and call it on the input the issue states: {inputs}",
    )


def _required(method: ast.FunctionDef | None) -> tuple[int, int]:
    """(positional, keyword-only) arguments a call must give, ``self`` aside; (0, 0) for none."""
    if method is None:
        return 0, 0
    args = method.args
    positional = len(args.posonlyargs) + len(args.args) - len(args.defaults) - 1
    keyword_only = sum(1 for default in args.kw_defaults if default is None)
    if args.vararg is not None and positional == 0:
        return -1, keyword_only  # ``forward(self, *inputs)``: how many is not said
    return max(positional, 0), keyword_only


def _elements(shape: tuple[int, ...]) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count
