"""Measured differences: code that reduces ``a - b`` to a size and reports it.

``print((gpu - ref).norm())``, ``err = np.max(np.abs(out - ref)); print(f"{err:.4e}")`` and
``assert (a - b).abs().max() < 1e-5`` say the issue compares ``a`` with ``b``; a reduced
difference that the code goes on to use (``loss = (pred - y).abs().mean(); loss.backward()``),
a clamp (``pad = max(kernel - stride, 0)``) or a reference computed from the inputs of the call
the issue is about (``print(torch.cdist(a, b), (a - b).norm(dim=-1))``) does not.
Classes: dev 180153 (``(cpu - ref).norm().item()`` in an f-string), 180154
(``float(np.max(np.abs(cpu.astype(np.float64) - ref)))``).
"""

from __future__ import annotations

import ast

from contribkit.core.astnames import qualified

# Functions and methods that reduce a difference to a size.
MEASURES = {
    f"{module}.{name}"
    for module in ("torch", "numpy", "torch.linalg", "numpy.linalg")
    for name in ("abs", "absolute", "max", "amax", "norm", "mean", "sum")
} | {"abs", "max"}
MEASURE_METHODS = ("abs", "max", "norm", "amax", "mean", "sum")
# What a reported value may go through on its way to the report (a number, a string).
_PASS_FUNCTIONS = {
    "float",
    "int",
    "round",
    "str",
    "repr",
    "format",
    "abs",
    "bool",
    "torch.from_numpy",
    "torch.as_tensor",
    "torch.tensor",
    "numpy.asarray",
    "numpy.array",
}
# Conversions a value may go through on its way into a comparison: ``a.astype(np.float64)``,
# ``a.to(torch.float64)`` (no-argument ones, ``.double()``, ``.cpu()``, pass as they are).
CONVERSIONS = ("astype", "to", "type")
# Methods of a value that report, measure or convert it rather than consume it.
_PASS_METHODS = {
    *MEASURE_METHODS,
    *CONVERSIONS,
    *("item", "tolist", "cpu", "numpy", "detach", "float", "double", "__format__"),
}
# Where a value is reported: printed or logged, asserted, compared with a number.
_REPORTS = {"print", "logging.info", "logging.warning", "logger.info", "log.info", "pprint"}
_MAX_HOPS = 3  # err = ...; ratio = err / ref_err; print(ratio)


def difference(node: ast.Call, aliases: dict[str, str]) -> ast.BinOp | None:
    """The ``a - b`` that ``node`` measures (``(a - b).abs().max()``, ``np.max(np.abs(a - b))``,
    ``abs(a - b).max()``); None for anything else, a clamp ``max(a - b, 0)`` included."""
    inner: ast.AST = node
    while isinstance(inner, ast.Call):
        name = qualified(inner.func, aliases)
        if name in MEASURES and inner.args:
            if name in ("max", "abs") and len(inner.args) > 1:
                return None  # max(a - b, 0): a clamp, not a size
            inner = inner.args[0]
        elif isinstance(inner.func, ast.Attribute) and inner.func.attr in MEASURE_METHODS:
            inner = inner.func.value
        else:
            break
    if inner is not node and isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub):
        return inner
    return None


class Reports:
    """Which measuring calls of a module report their result, and which names are the inputs
    of other calls (an argument of anything but a report, a measure or a conversion)."""

    def __init__(self, tree: ast.Module, aliases: dict[str, str]) -> None:
        self.aliases = aliases
        self.parents: dict[int, ast.AST] = {}
        self.loads: dict[str, list[ast.Name]] = {}
        self.inputs: set[str] = set()
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[id(child)] = parent
            if isinstance(parent, ast.Name) and isinstance(parent.ctx, ast.Load):
                self.loads.setdefault(parent.id, []).append(parent)
            if isinstance(parent, ast.Call) and not self._passes(parent):
                for arg in [*parent.args, *(kw.value for kw in parent.keywords)]:
                    root = arg
                    while isinstance(root, (ast.Attribute, ast.Subscript)):
                        root = root.value
                    if isinstance(root, ast.Name):
                        self.inputs.add(root.id)

    def _passes(self, call: ast.Call) -> bool:
        """A call that reports, measures or converts its arguments rather than consuming them."""
        name = qualified(call.func, self.aliases)
        if name in _REPORTS or name in _PASS_FUNCTIONS or name in MEASURES:
            return True
        if name.startswith(("torch.testing.", "numpy.testing.")) or name in (
            "torch.allclose",
            "torch.isclose",
            "torch.equal",
            "numpy.allclose",
        ):
            return True
        return isinstance(call.func, ast.Attribute) and call.func.attr in _PASS_METHODS

    def reported(self, node: ast.AST) -> bool:
        """The value of ``node`` reaches a report (printed, an f-string too, asserted, compared
        with a number, echoed as a bare expression), directly or through names, and nothing
        consumes it (``loss.backward()``, an argument of another call)."""
        return self._fate(node, 0) == "reported"

    def _fate(self, node: ast.AST, hops: int) -> str:
        """ "reported", "consumed" or "neutral" (unused, or used in ways that say neither)."""
        child, parent = node, self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.Assert, ast.Expr)):
                return "reported"  # an assert, or a bare expression the REPL echoes
            if isinstance(parent, ast.Call) and child is not parent.func:
                if qualified(parent.func, self.aliases) in _REPORTS:
                    return "reported"
                if not self._passes(parent):
                    return "consumed"
            elif isinstance(parent, ast.Attribute):
                if parent.attr not in _PASS_METHODS:
                    return "consumed"  # loss.backward(), out.add_(…)
            elif isinstance(parent, ast.Compare):
                others = [parent.left, *parent.comparators]
                constant = any(isinstance(o, ast.Constant) for o in others if o is not child)
                return "reported" if constant else "neutral"
            elif isinstance(parent, ast.Assign):
                return self._name_fate(parent, hops) if hops < _MAX_HOPS else "neutral"
            elif not isinstance(
                parent, (ast.Call, ast.JoinedStr, ast.FormattedValue, ast.BinOp, ast.IfExp)
            ):
                return "neutral"
            child, parent = parent, self.parents.get(id(parent))
        return "neutral"

    def _name_fate(self, assign: ast.Assign, hops: int) -> str:
        targets = assign.targets
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            return "neutral"
        fates = {self._fate(use, hops + 1) for use in self.loads.get(targets[0].id, [])}
        if "consumed" in fates:
            return "consumed"
        return "reported" if "reported" in fates else "neutral"

    def input_side(self, source: str) -> bool:
        """The compared value (``a``, ``a.cpu()``) is an argument of another call: an input."""
        root: ast.AST = ast.parse(source, mode="eval").body
        while True:
            if isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            elif isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute):
                root = root.func.value
            else:
                break
        return isinstance(root, ast.Name) and root.id in self.inputs
