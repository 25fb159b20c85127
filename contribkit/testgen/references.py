"""A reference to test against where the issue quotes only the wrong output (no expected value):
the test then asserts the code's value equals the reference, never only that it differs from the
reported value.

- the code calls ``torch.compile``: eager is the reference (the values the code prints, compiled
  against the same code with ``torch._dynamo.config.patch(disable=True)``);
- the printed value is a floating-point result of torch functions and tensor methods on the
  code's values (``torch.norm(a)``, ``x.sqrt()``, ``torch.fmod(a, b)``): the same expression
  on those values in float64 is the reference, compared at the tolerance of the value's dtype.

Anything else (a user function or module, an integer or boolean value, text) has no reference
here: None, and the caller refuses as before.
"""

from __future__ import annotations

import ast

from contribkit.core.render import python_literal
from contribkit.repro.codefacts import Edit, apply_edits
from contribkit.testgen.oracles import OracleBody, Shown, literal, strip_runtime
from contribkit.testgen.tidy import drop_no_op_expressions, drop_prints

FLOAT64 = (
    "def float64(value):  # the same value in float64, for the reference\n"
    "    if isinstance(value, torch.Tensor) and value.is_floating_point():\n"
    "        return value.double()\n"
    "    return value\n"
)


def reference_body(
    code: str, statement: Shown, reported: str, compiled: bool, fail_prefix: str
) -> OracleBody | None:
    """The test body against a reference for the printed ``statement`` whose output the issue
    reports as ``reported``, or None when no reference exists for it."""
    if compiled:
        from contribkit.core.errors import BadInput
        from contribkit.testgen.expectbodies import two_runs_body

        try:
            two = two_runs_body("compile-vs-eager", code, fail_prefix, "eager as the reference")
        except BadInput:
            return None
        note = "the issue quotes only the wrong output: the test compares compiled with eager"
        return OracleBody(two.code, two.checks, two.imports, [note])
    parsed = literal(reported)
    if parsed is None or not _floats(parsed[0]):
        return None
    expr = _reference_expr(code, statement)
    if expr is None:
        return None
    message = python_literal(f"{fail_prefix}the value differs from the float64 reference")
    check = (
        f"actual = {statement.expr}\n"
        f"expected = {expr}\n"
        f"self.assertEqual(actual, expected, exact_dtype=False, msg={message})"
    )
    edits = [Edit(*statement.start, *statement.end, "", check)]
    body, _ = strip_runtime(apply_edits(code, edits))
    body = FLOAT64 + drop_no_op_expressions(drop_prints(body))
    checks = (
        f"Fails while `{statement.expr}` differs from the same computation in float64 (the "
        "issue quotes only the wrong output)."
    )
    note = (
        f"the issue quotes only the wrong output: the test asserts `{statement.expr}` against "
        "the same torch functions on float64 values; check that it fails while the bug is there"
    )
    return OracleBody(body, checks, notes=[note])


def _floats(source: str) -> bool:
    tree = ast.parse(source, mode="eval")
    return any(isinstance(n, ast.Constant) and isinstance(n.value, float) for n in ast.walk(tree))


def _reference_expr(code: str, statement: Shown) -> str | None:
    """``statement.expr`` (or the expression last assigned to the name it prints) with every
    value it reads in float64; None when it calls anything but torch functions and methods."""
    tree = ast.parse(code)
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    try:
        node = ast.parse(statement.expr, mode="eval").body
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
            and s.lineno < statement.start[0]
        ]
        if not assigned:
            return None
        node = assigned[-1]
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    if not calls:
        return None
    for call in calls:
        func = call.func
        if isinstance(func, ast.Name):
            return None  # a function of the code's own, or a builtin
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in defined:
            return None
    wrapped = ast.unparse(_Float64().visit(ast.parse(ast.unparse(node), mode="eval")))
    return wrapped if "float64(" in wrapped else None  # no value read: nothing to upcast


class _Float64(ast.NodeTransformer):
    """Names the expression reads become ``float64(name)``; ``torch`` and call targets stay."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        if isinstance(node.func, ast.Attribute):
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
            return node  # torch.float32, torch.pi
        node.value = self.visit(node.value)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == "torch" or not isinstance(node.ctx, ast.Load):
            return node
        return ast.Call(ast.Name("float64", ast.Load()), [node], [])


def _under_torch(node: ast.expr) -> bool:
    """``torch`` or an attribute path from it (``torch.nn.functional``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "torch"
