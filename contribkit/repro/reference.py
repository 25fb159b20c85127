"""The same computation in float64: the reference a printed floating-point value is held to
where the issue quotes only the wrong value (``torch.norm(a)`` printed; ``torch.norm(a.double())``
is what it should be, to the precision of its dtype).

:func:`float64_reference` serves ``test --from-repro`` (whose self-check rejects a reference
that cannot fail); :func:`recomputed_reference` serves the repro script's runtime, which has no
such check: there the reference must recompute an operation from the code's inputs (tensors
made by a factory call), never upcast a result the code already computed.
"""

from __future__ import annotations

import ast


def float64_reference(code: str, expr: str, line: int) -> str | None:
    """``expr``, printed at ``line`` of ``code`` (or the expression last assigned to the name it
    prints), with every value it reads in float64; None when it calls anything but torch
    functions and methods."""
    tree = ast.parse(code)
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Name):
        assigned = [
            s.value
            for s in tree.body
            if isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and s.targets[0].id == node.id
            and s.lineno < line
        ]
        if not assigned:
            return None
        node = assigned[-1]
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        func = call.func
        if isinstance(func, ast.Name):
            return None  # a function of the code's own, or a builtin
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in defined:
            return None
    upcast = _Float64(_tensor_names(tree, line))
    wrapped = ast.unparse(upcast.visit(ast.parse(ast.unparse(node), mode="eval")))
    return wrapped if upcast.changed else None  # nothing upcast: the same computation again


# Low-precision floating dtypes and the methods that convert to them: float64 in the reference.
_LOW = {"float16", "half", "bfloat16", "float32", "float"}
_TO_LOW = {"half", "bfloat16", "float"}


def _tensor_names(tree: ast.Module, before: int) -> set[str]:
    """Names the code's top level assigns (before line ``before``) from a torch call or from
    another such name: the values that are tensors, which the reference upcasts."""
    names: set[str] = set()
    for stmt in tree.body:
        if stmt.lineno >= before or not isinstance(stmt, ast.Assign):
            continue
        reads = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
        calls = [n.func for n in ast.walk(stmt.value) if isinstance(n, ast.Call)]
        if any(_under_torch(f) for f in calls) or reads & names:
            names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    return names


class _Float64(ast.NodeTransformer):
    """Tensor names the expression reads become ``float64(name)``, low-precision dtypes
    ``torch.float64`` and ``.half()``/``.float()`` ``.double()``; ``torch`` paths stay."""

    def __init__(self, tensors: set[str]) -> None:
        self.tensors = tensors
        self.changed = False

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        if isinstance(node.func, ast.Attribute):
            if node.func.attr in _TO_LOW and not node.args and not _under_torch(node.func):
                node.func.attr, self.changed = "double", True
            node.func.value = self._value(node.func.value)
        return node

    def _value(self, node: ast.expr) -> ast.expr:
        if _under_torch(node):  # torch, torch.nn.functional
            return node
        result = self.visit(node)
        assert isinstance(result, ast.expr)
        return result

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if _under_torch(node):
            if node.attr in _LOW and isinstance(node.value, ast.Name):  # torch.float16
                self.changed = True
                return ast.Attribute(node.value, "float64", ast.Load())
            return node  # torch.pi, torch.nn.functional
        node.value = self.visit(node.value)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id not in self.tensors or not isinstance(node.ctx, ast.Load):
            return node
        self.changed = True
        return ast.Call(ast.Name("float64", ast.Load()), [node], [])


def _under_torch(node: ast.expr) -> bool:
    """``torch`` or an attribute path from it (``torch.nn.functional``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "torch"
