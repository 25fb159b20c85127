"""The same computation in float64: the reference a printed floating-point value is held to
where the issue quotes only the wrong value (``torch.norm(a)`` printed; ``torch.norm(a.double())``
is what it should be, to the precision of its dtype).

:func:`recomputed_reference` recomputes an operation from the code's inputs (tensors made by a
factory call), never upcasting a result the code already computed: the repro script's runtime,
which has no self-check, uses it alone; ``test --from-repro`` tries it first. Its fallback,
:func:`float64_reference`, upcasts what the printed expression reads, and serves only the test,
whose self-check rejects a reference that cannot fail.
"""

from __future__ import annotations

import ast

from contribkit.repro.codefacts import RANDOM_CALL


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


# Calls that make a tensor from nothing but their arguments: the code's inputs (not
# ``torch.empty``: uninitialised memory is no input that holds twice the same values).
_FACTORIES = {
    "tensor", "as_tensor", "from_numpy", "rand", "randn", "randint", "ones", "zeros", "full",
    "arange", "linspace", "logspace", "eye", "rand_like", "randn_like", "ones_like",
    "zeros_like", "full_like", "randperm", "normal",
}  # fmt: skip
# What draws values afresh beside the edits' RANDOM_CALL: called again, it makes other values.
_DRAWN = {"poisson", "rrelu", "gumbel_softmax", "empty", "empty_like", "geometric_", "log_normal_"}
# Methods that move or convert a value without computing anything from it.
_NOT_OPS = {"to", "cpu", "cuda", "float", "double", "half", "bfloat16", "contiguous", "clone",
            "detach", "requires_grad_", "type"}  # fmt: skip
_MAX_INLINE = 4  # assignments followed back from the printed value to the inputs


def recomputed_reference(
    code: str, expr: str, line: int, function: str, literals: bool = True
) -> str | None:
    """``expr``, printed at ``line`` of ``code``, computed again from the code's inputs in
    float64 (``function`` upcasts a value); None unless that holds an operation on them.

    The names ``expr`` reads are followed back through the code's top-level assignments to
    tensors a factory call made (``a = torch.rand(2000, 2000, 64)``): ``b = torch.norm(a)``
    printed as ``b`` gives ``torch.norm(function(a))``. None where a value is changed in place
    (``x.add_(1)``, ``out=``, ``x[0] = 1``: the assignments no longer say what it holds), where
    a call is not torch's (a function of the code's own, a builtin), where randomness would be
    drawn again, or where nothing but the inputs would be upcast (the value itself).
    ``literals``: factory calls inside ``expr`` count as inputs too (the runtime's use, which
    decides only on a value far from the reference; a test asserting equality does not)."""
    tree = ast.parse(code)
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return None
    values = _assigned_before(tree, line)
    if values is None:
        return None
    inputs = {name for name, value in values.items() if _factory(value)}
    for _ in range(_MAX_INLINE):
        node = _Inline(values, inputs).visit(node)
    constants = {name for name, value in values.items() if _constant(value)}
    reads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    if reads - inputs - constants - {"torch", "DEVICE", "device"}:  # a test takes `device`
        return None
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    if any(not _under_torch(c.func) and not isinstance(c.func, ast.Attribute) for c in calls):
        return None
    drawn = any(_drawn(_name(c.func)) for c in calls)
    if drawn or not any(_op(c) for c in calls):
        return None
    if literals:  # torch.linspace(0, 1, 9) in the expression itself
        node = _UpcastMade(function).visit(node)
    upcast = _Float64(inputs, function)
    wrapped = ast.unparse(upcast.visit(node))
    return wrapped if upcast.changed or function + "(" in wrapped else None


def _constant(value: ast.expr) -> bool:
    """``3``, ``-1.5``, ``(2, 3)``, ``"mean"``: a value no reference upcasts."""
    if isinstance(value, ast.UnaryOp):
        value = value.operand
    if isinstance(value, (ast.Tuple, ast.List)):
        return all(_constant(e) for e in value.elts)
    return isinstance(value, ast.Constant)


class _UpcastMade(ast.NodeTransformer):
    """A factory call inside the printed expression (its deterministic inputs) is upcast."""

    def __init__(self, function: str) -> None:
        self.function = function

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if _under_torch(node.func) and _name(node.func) in _FACTORIES:
            if any(k.arg == "dtype" for k in node.keywords):  # its dtype becomes float64
                return node
            return ast.Call(ast.Name(self.function, ast.Load()), [node], [])
        return node


def _drawn(name: str) -> bool:
    """``torch.bernoulli``, ``F.dropout2d``, ``x.uniform_``: values drawn afresh each call."""
    return bool(RANDOM_CALL.search(name)) or name in _DRAWN or "dropout" in name


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else ""


def _op(call: ast.Call) -> bool:
    """A call that computes: a torch function, or a tensor method that is not a conversion."""
    name = _name(call.func)
    return bool(name) and name not in _NOT_OPS and name not in _FACTORIES


def _factory(value: ast.expr) -> bool:
    """``torch.rand(…)``, and a factory's value moved or converted (``….to(DEVICE)``)."""
    while isinstance(value, ast.Call) and _name(value.func) in _NOT_OPS:
        assert isinstance(value.func, ast.Attribute)
        value = value.func.value
    return (
        isinstance(value, ast.Call)
        and _under_torch(value.func)
        and (_name(value.func) in _FACTORIES)
    )


def _assigned_before(tree: ast.Module, line: int) -> dict[str, ast.expr] | None:
    """The value each name last got at the top level before ``line``; None where the code
    changes a value in place or binds a name twice (the assignments then say too little)."""
    values: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _in_place(node):
            return None
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(not isinstance(t, ast.Name) for t in targets):
                return None  # x[0] = 1, self.w = …, a, b = …
    for stmt in tree.body:
        if stmt.lineno >= line or not isinstance(stmt, ast.Assign):
            continue
        for target in stmt.targets:
            assert isinstance(target, ast.Name)
            if target.id in values:
                return None
            values[target.id] = stmt.value
    return values


def _in_place(call: ast.Call) -> bool:
    """``x.add_(1)``, ``torch.add(a, b, out=c)``; not ``requires_grad_()`` or a dunder."""
    name = _name(call.func)
    if any(k.arg == "out" for k in call.keywords):
        return True
    return name.endswith("_") and not name.endswith("__") and name != "requires_grad_"


class _Inline(ast.NodeTransformer):
    """A name the code computed (not an input) becomes the expression it was assigned."""

    def __init__(self, values: dict[str, ast.expr], inputs: set[str]) -> None:
        self.values = values
        self.inputs = inputs

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.inputs or node.id not in self.values:
            return node
        return ast.parse(ast.unparse(self.values[node.id]), mode="eval").body


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

    def __init__(self, tensors: set[str], function: str = "float64") -> None:
        self.tensors = tensors
        self.function = function  # what upcasts a value: the test's helper, or the runtime's
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
        return ast.Call(ast.Name(self.function, ast.Load()), [node], [])


def _under_torch(node: ast.expr) -> bool:
    """``torch`` or an attribute path from it (``torch.nn.functional``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "torch"
