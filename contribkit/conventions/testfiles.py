"""PyTorch's test-file conventions as pure functions over source text.

Used by the ``contribkit-test-conventions`` hook and by the test scaffold, which checks what it
generates with the same :func:`check_test_source`. The conventions (see PyTorch's TESTOWNERS and
TEST_HAS_MAIN linters and ``common_device_type.py``):

- a ``# Owner(s): ["module: …"]`` line whose labels start with ``module:`` or ``oncall:``;
- an ``if __name__ == "__main__": run_tests()`` block;
- a test class whose tests take ``device`` is passed to ``instantiate_device_type_tests``;
- tests that take ``device`` never hard-code ``"cuda"``, unless the test runs on CUDA only
  (``@onlyCUDA``, ``@onlyOn…``/``@onlyNativeDeviceTypes``, a ``skip…If`` decorator that
  excludes the CPU such as ``@skipIf(not TEST_CUDA, …)`` or ``@skipCPUIf(True, …)``) or the
  code is under ``if device_type == "cuda"``, ``if self.device_type == 'cuda'`` or
  ``if TEST_CUDA`` (or after ``if not TEST_CUDA: self.skipTest(…)``).

Standard library only.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator

from contribkit.conventions.rules import RULES, Violation
from contribkit.core.astnames import source_lines

OWNER_PREFIX = "# Owner(s):"
OWNER_LABEL_PREFIXES = ("module: ", "oncall: ")
OWNER_LABELS_ALLOWED = frozenset({"NNC", "high priority"})  # PyTorch's accepted exceptions
_CUDA = re.compile(r"^cuda(:\d+)?$")


def owner_labels(text: str) -> tuple[int, list[str] | None] | None:
    """``(line, labels)`` of the ``# Owner(s):`` header (labels None if unparsable), else None."""
    for number, line in enumerate(source_lines(text), 1):
        if line.startswith(OWNER_PREFIX):
            try:
                labels = json.loads(line[len(OWNER_PREFIX) :])
            except ValueError:
                return number, None
            if isinstance(labels, list) and all(isinstance(label, str) for label in labels):
                return number, labels
            return number, None
    return None


def label_is_well_formed(label: str) -> bool:
    return label in OWNER_LABELS_ALLOWED or (
        label.startswith(OWNER_LABEL_PREFIXES) and bool(label.split(": ", 1)[1].strip())
    )


def check_owner_header(text: str, path: str | None = None) -> list[Violation]:
    header = owner_labels(text)
    if header is None:
        return [Violation(RULES["CK501"], "no '# Owner(s): [...]' line", line=1, path=path)]
    line, labels = header
    if labels is None:
        return [
            Violation(RULES["CK502"], "the owner labels are not a JSON list of strings", line, path)
        ]
    if not labels:
        return [Violation(RULES["CK502"], "the owner list is empty", line, path)]
    bad = [label for label in labels if not label_is_well_formed(label)]
    if bad:
        return [
            Violation(
                RULES["CK502"],
                f"label {bad[0]!r} does not start with 'module: ' or 'oncall: '",
                line,
                path,
            )
        ]
    return []


def _is_main_guard(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s.id for s in sides if isinstance(s, ast.Name)]
    consts = [s.value for s in sides if isinstance(s, ast.Constant)]
    return names == ["__name__"] and consts == ["__main__"]


def _calls(nodes: list[ast.stmt]) -> Iterator[ast.Call]:
    for stmt in nodes:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                yield node


def _call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def check_main_block(tree: ast.Module, path: str | None = None) -> list[Violation]:
    """The file ends in ``if __name__ == "__main__": run_tests()`` (or raises, for helpers)."""
    guards = [n for n in tree.body if isinstance(n, ast.If) and _is_main_guard(n.test)]
    if not guards:
        return [
            Violation(
                RULES["CK503"],
                "no 'if __name__ == \"__main__\": run_tests()' block",
                line=getattr(tree.body[-1], "end_lineno", None) if tree.body else 1,
                path=path,
            )
        ]
    for guard in guards:
        if any(_call_name(c) == "run_tests" for c in _calls(guard.body)):
            return []
        if any(isinstance(n, ast.Raise) for s in guard.body for n in ast.walk(s)):
            return []  # PyTorch's helpers raise "not meant to be run directly"
    return [
        Violation(
            RULES["CK503"],
            "the __main__ block does not call run_tests()",
            line=guards[0].lineno,
            path=path,
        )
    ]


def _test_methods(cls: ast.ClassDef) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(
            "test"
        ):
            yield node


def _takes_device(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    return any(p.arg == "device" for p in params)


def device_generic_classes(tree: ast.Module) -> list[ast.ClassDef]:
    """Top-level test classes with at least one test that takes ``device``."""
    return [
        node
        for node in tree.body
        if isinstance(node, ast.ClassDef) and any(_takes_device(m) for m in _test_methods(node))
    ]


def instantiated_classes(tree: ast.Module) -> set[str]:
    """Names passed as the first argument of ``instantiate_device_type_tests`` at module level
    (class and function bodies, the bulk of a test file, are not searched)."""
    top = [
        stmt
        for stmt in tree.body
        if not isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    names = set()
    for call in _calls(top):
        if _call_name(call) == "instantiate_device_type_tests" and call.args:
            first = call.args[0]
            if isinstance(first, ast.Name):
                names.add(first.id)
    return names


_CUDA_NAMES = frozenset({"TEST_CUDA", "TEST_MULTIGPU", "TEST_CUDNN", "HAS_CUDA", "HAS_GPU"})


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


def _mentions_cuda(node: ast.AST) -> bool:
    """Whether an expression asks about CUDA: ``TEST_CUDA``, ``torch.cuda.is_available()``,
    ``device_type == "cuda"``, ``device.startswith("cuda")``."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in _CUDA_NAMES:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == "cuda":
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and _CUDA.match(sub.value):
            return True
    return False


def _cuda_only_test(test: ast.expr) -> bool | None:
    """True when an ``if`` test holds only on CUDA (its body is CUDA-only), False when it holds
    only off CUDA (its ``else`` is), None when it says nothing about CUDA."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _cuda_only_test(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return True if any(_cuda_only_test(v) for v in test.values) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and _mentions_cuda(test):
        if isinstance(test.ops[0], (ast.Eq, ast.In, ast.Is)):
            return True
        if isinstance(test.ops[0], (ast.NotEq, ast.NotIn, ast.IsNot)):
            return False
        return None
    if isinstance(test, (ast.Name, ast.Attribute, ast.Call)) and _mentions_cuda(test):
        return True
    return None


def runs_on_cuda_only(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A test that only ever runs on CUDA: ``@onlyCUDA``, ``@onlyOn…``, ``@onlyNativeDeviceTypes``,
    or a ``skip…If`` decorator that skips the CPU (``@skipIf(not TEST_CUDA, …)``,
    ``@skipCPUIf(True, …)``, ``@skipIfNoCuda``, ``@requires_cuda``)."""
    for decorator in fn.decorator_list:
        name = _decorator_name(decorator)
        if name == "onlyCUDA" or name.startswith(("onlyOn", "onlyNativeDeviceTypes")):
            return True
        if name.lower() in ("requires_cuda", "skipifnocuda", "skipcudaifnocuda"):
            return True
        if not (name.startswith("skip") and "If" in name and isinstance(decorator, ast.Call)):
            continue
        condition = decorator.args[0] if decorator.args else None
        if name.startswith("skipCPUIf"):
            if isinstance(condition, ast.Constant) and condition.value is True:
                return True
        elif condition is not None and _cuda_only_test(condition) is False:
            return True  # skipped unless CUDA is there
    return False


def _leaves(body: list[ast.stmt]) -> bool:
    """Whether a block always leaves the test: return, raise, or self.skipTest(…)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    return (
        isinstance(last, ast.Expr)
        and isinstance(last.value, ast.Call)
        and _call_name(last.value) == "skipTest"
    )


def _off_cuda_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a block that may run off CUDA: all of them up to an
    ``if not TEST_CUDA: self.skipTest(…)`` (or return), and none after it."""
    kept: list[ast.stmt] = []
    for stmt in body:
        kept.append(stmt)
        if isinstance(stmt, ast.If) and _cuda_only_test(stmt.test) is False and _leaves(stmt.body):
            break
    return kept


def _hard_coded_cuda(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: set[int] | None = None
) -> Iterator[tuple[ast.AST, str]]:
    """``"cuda"`` literals and ``.cuda()`` calls in a test body, in one pass. Comparisons and
    ``startswith("cuda")`` checks are skipped: they ask which device this is; so are the
    branches that run only on CUDA (``if device_type == "cuda":``, ``if TEST_CUDA:``). With
    ``lines`` (those whose text mentions "cuda"), statements elsewhere are not searched."""
    stack: list[ast.AST] = list(_off_cuda_statements(fn.body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Compare):
            continue
        if lines is not None and isinstance(node, ast.stmt):
            last = node.end_lineno or node.lineno
            if not any(node.lineno <= line <= last for line in lines):
                continue
        if isinstance(node, ast.If):
            cuda_only = _cuda_only_test(node.test)
            if cuda_only is not None:  # search only the branch that may run off CUDA
                stack.extend(_off_cuda_statements(node.orelse if cuda_only else node.body))
                continue
        if isinstance(node, ast.Call) and _call_name(node) in ("startswith", "endswith"):
            stack.append(node.func)
            continue
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str) and _CUDA.match(node.value):
                yield node, f'"{node.value}"'
            continue
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "cuda"
            and not node.args
        ):
            yield node, ".cuda()"
        stack.extend(ast.iter_child_nodes(node))


def check_device_generic(
    tree: ast.Module, path: str | None = None, text: str | None = None
) -> list[Violation]:
    """CK504 and CK505 for the device-generic classes. With the source ``text``, tests whose
    lines never mention "cuda" are not searched for it."""
    cuda_lines = (
        {n for n, line in enumerate(source_lines(text), 1) if "cuda" in line}
        if text is not None
        else None
    )
    found = []
    instantiated = instantiated_classes(tree)
    for cls in device_generic_classes(tree):
        if cls.name not in instantiated:
            found.append(
                Violation(
                    RULES["CK504"],
                    f"{cls.name} has tests that take `device` but is never passed to "
                    "instantiate_device_type_tests",
                    line=cls.lineno,
                    path=path,
                    hint=f"add at module level: instantiate_device_type_tests({cls.name}, globals())",
                )
            )
        for method in _test_methods(cls):
            if not _takes_device(method) or runs_on_cuda_only(method):
                continue
            for node, what in _hard_coded_cuda(method, cuda_lines):
                found.append(
                    Violation(
                        RULES["CK505"],
                        f"{what} in {cls.name}.{method.name}, which takes `device`",
                        line=getattr(node, "lineno", method.lineno),
                        path=path,
                    )
                )
    return found


def check_test_source(text: str, path: str | None = None) -> list[Violation]:
    """Every convention violation in a PyTorch test file's source, in line order."""
    found = check_owner_header(text, path)
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        found.append(
            Violation(RULES["CK506"], f"SyntaxError: {exc.msg}", line=exc.lineno, path=path)
        )
        return found
    found += check_main_block(tree, path)
    found += check_device_generic(tree, path, text)
    found.sort(key=lambda v: v.line or 0)
    return found
