"""Resolve what a contributor types (``add``, ``aten::add.Tensor``, ``torch.add``,
``Tensor.index_add_``, ``torch.linalg.svd``, ``F.relu``) to an operator family and overloads."""

from __future__ import annotations

import re

from contribkit.core.errors import BadInput
from contribkit.core.record import Record
from contribkit.ops.index import YamlIndex, family_of

# Python namespaces whose functions are aten ops named with a prefix (python_module in the yaml).
PREFIXED = {
    "torch.linalg.": "linalg_",
    "torch.special.": "special_",
    "torch.fft.": "fft_",
    "torch.nested.": "nested_",
    "linalg.": "linalg_",
    "special.": "special_",
    "fft.": "fft_",
}
PLAIN = (
    "torch.ops.aten.",
    "aten::",
    "aten.",
    "torch.Tensor.",
    "Tensor.",
    "torch.nn.functional.",
    "torch._C._nn.",
    "nn.functional.",
    "F.",
    "torch.",
)
_NAME = re.compile(r"^[A-Za-z_][\w.]*$")


class Resolved(Record, frozen=True):
    """The operator family a query names, narrowed to one op or overload when it says one."""

    family: str
    op: str | None  # narrows to one op name (add_ of Tensor.add_), or None
    overload: str | None  # narrows to one overload (add.Tensor), or None


def normalise(query: str) -> tuple[str, str | None]:
    """``(op name, overload name or None)`` from any spelling of an operator."""
    text = query.strip()
    for prefix, replacement in PREFIXED.items():
        if text.startswith(prefix):
            text = replacement + text[len(prefix) :]
            break
    else:
        for prefix in PLAIN:
            if text.startswith(prefix):
                text = text[len(prefix) :]
                break
    if not _NAME.match(text):
        raise BadInput(
            f"'{query}' is not an operator name",
            hint="e.g. add, aten::add.Tensor, torch.add or Tensor.index_add_; --grep PATTERN lists names",
        )
    op, _, overload = text.partition(".")
    if overload == "default":
        overload = ""
    return op, (f"{op}.{overload}" if overload else None)


def resolve(query: str, index: YamlIndex) -> Resolved:
    """The family of ``query`` in ``index``; an unknown name is bad input with suggestions."""
    op, overload = normalise(query)
    family = family_of(op)
    if index.has(family):
        return Resolved(family, op if op != family else None, overload)
    raise BadInput(f"no operator '{query}' in {index.path}", hint=suggestion(family, index))


def suggestion(name: str, index: YamlIndex) -> str:
    import difflib

    close = difflib.get_close_matches(name, index.names(), n=5, cutoff=0.6)
    if not close:
        return f"list operators with: contribkit op --grep {name[:4] or name}"
    return f"did you mean {', '.join(close)}? (contribkit op --grep PATTERN lists operators)"
