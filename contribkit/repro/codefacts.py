"""What an issue's code needs, found with ``ast`` (tolerating code that does not parse), and
the safe rewrite of literal CUDA device uses to a chosen device.

The rewrite edits exact source spans (never ``ast.unparse``), so comments and layout survive.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from contribkit.core.astnames import dotted, qualified, source_lines
from contribkit.repro.measures import CONVERSIONS, Reports, difference

DEVICE_NAME = "DEVICE"
WALK_RECURSION_LIMIT = 20_000
# Calls that draw random values (a module whose weights are drawn at construction too): the
# edits seed them, and no float64 reference calls them again (repro/reference.py).
RANDOM_CALL = re.compile(
    r"(?:^|\.)(?:rand|randn|randint|randperm|rand_like|randn_like|randint_like|normal_?|"
    r"uniform_?|bernoulli_?|multinomial|random_|exponential_|cauchy_|dropout|Dropout\d?d?|"
    r"shuffle|choice|sample|Linear|Conv\dd|ConvTranspose\dd|LSTM|GRU|RNN|Embedding|"
    r"MultiheadAttention|Bilinear)$"
)
# The modules among them draw their weights once, when made: values computed from them are
# continuous (they coincide only when computed alike), unlike a draw at every call (dropout).
RANDOM_INIT = re.compile(
    r"(?:^|\.)(?:Linear|Conv\dd|ConvTranspose\dd|LSTM|GRU|RNN|Embedding|MultiheadAttention"
    r"|Bilinear)$"
)
_CUDA_LITERAL = re.compile(r"^cuda(:\d+)?$")
# torch.cuda functions that are harmless without a GPU; any other torch.cuda.* use needs CUDA.
_SAFE_CUDA_API = {
    "is_available",
    "manual_seed",
    "manual_seed_all",
    "empty_cache",
    "is_initialized",
    "device_count",
}
_DOWNLOAD_CALLS = {
    "from_pretrained",
    "load_dataset",
    "urlopen",
    "urlretrieve",
    "download_url",
    "load_state_dict_from_url",
}
_COMPARE_CALLS = {
    "torch.allclose": "allclose",
    "torch.isclose": "allclose",
    "torch.equal": "equal",
    "torch.testing.assert_close": "assert_close",
    "torch.testing.assert_allclose": "allclose",
    "numpy.testing.assert_allclose": "allclose",
    "np.testing.assert_allclose": "allclose",
}
_STDLIB = set(getattr(sys, "stdlib_module_names", ())) | {"__future__"}


@dataclass
class Edit:
    line: int
    col: int
    end_line: int
    end_col: int
    before: str
    after: str


def marks_around(stmt: ast.stmt, unit: int, closing: int = -1) -> list[Edit]:
    """``_repro.mark(unit); `` before ``stmt`` and ``; _repro.mark(closing)`` after it, on its
    own lines: what it prints belongs to ``unit``, and an error it raises leaves ``unit`` the
    runtime's last mark."""
    start = (stmt.lineno, stmt.col_offset)
    end = (stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
    return [
        Edit(*start, *start, "", f"_repro.mark({unit}); "),
        Edit(*end, *end, "", f"; _repro.mark({closing})"),
    ]


@dataclass
class Comparison:
    """A comparison the issue's code makes between two module-level values."""

    actual: str
    expected: str
    style: str  # "allclose", "equal", "assert_close"
    keywords: dict[str, str] = field(default_factory=dict)  # rtol/atol/equal_nan as source text
    # compile-vs-eager: the calls that compute the two sides, compiled first (``opt(x)``, ``f(x)``)
    calls: tuple[str, str] | None = None
    # The code measures the difference (``(a - b).norm()``, ``.abs().max()``) and states no
    # tolerance: the default one is ours, so only exact agreement says the bug is gone.
    measured: bool = False


@dataclass
class CodeFacts:
    parses: bool = True
    syntax_error: str | None = None
    syntax_error_line: int | None = None
    cuda_uses: list[str] = field(default_factory=list)
    cpu_uses: list[str] = field(default_factory=list)
    unsafe_cuda: list[str] = field(default_factory=list)  # uses the rewrite cannot handle
    uses_compile: bool = False
    compile_backends: list[str] = field(default_factory=list)
    third_party: list[str] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)
    # Every comparison the code makes between module-level values: check() asserts them all, so
    # it never checks only the side an issue reports as right (a CPU-vs-CUDA contrast measured
    # against one reference: ``cpu - ref`` and ``gpu - ref``).
    comparisons: list[Comparison] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)  # the device rewrite, when safe
    moves_to_cuda: bool = False  # .cuda() or .to("cuda") on an existing value

    @property
    def comparison(self) -> Comparison | None:
        """The first of :attr:`comparisons` (the one meta.json and notes name)."""
        return self.comparisons[0] if self.comparisons else None

    @property
    def compiled_pair(self) -> tuple[str, str] | None:
        """The compiled and eager calls of the first comparison of the two, if any."""
        return next((c.calls for c in self.comparisons if c.calls), None)

    @property
    def needs_cuda(self) -> bool:
        return bool(self.cuda_uses or self.unsafe_cuda)

    @property
    def compares_devices(self) -> bool:
        """CPU and CUDA both appear, or values moved to CUDA are compared with something."""
        return self.needs_cuda and (
            bool(self.cpu_uses) or (self.moves_to_cuda and self.comparison is not None)
        )

    @property
    def rewritable(self) -> bool:
        return bool(self.edits) and not self.unsafe_cuda and not self.compares_devices

    @property
    def requires_cuda(self) -> bool:
        """The code needs CUDA whatever --device says (not rewritten, or compares CPU with CUDA)."""
        return self.needs_cuda and not self.rewritable

    @property
    def imports_numpy(self) -> bool:
        return "numpy" in self.third_party


def import_aliases(tree: ast.AST) -> dict[str, str]:
    """Local names bound by imports -> the dotted names they stand for
    (``import torch as th`` -> ``th: torch``; ``from torch import compile`` -> ``compile: torch.compile``)."""
    aliases: dict[str, str] = {}
    for node in tree_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _device_string(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        value = node.value.strip()
        if _CUDA_LITERAL.match(value):
            return "cuda"
        if value == "cpu":
            return "cpu"
    return None


class _Visitor(ast.NodeVisitor):
    def __init__(self, facts: CodeFacts, source: str, aliases: dict[str, str]) -> None:
        self.facts = facts
        self.source = source
        self.aliases = aliases
        self.handled: set[int] = set()  # ids of string constants the rewrite covers
        self.compiled: dict[str, str] = {}  # name bound to torch.compile(f) -> f

    def where(self, node: ast.AST) -> str:
        return f"line {getattr(node, 'lineno', '?')}"

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ""

    def edit(self, node: ast.expr, after: str, start: ast.expr | None = None) -> None:
        """Replace ``node``'s span (or the part after ``start``'s end) with ``after``."""
        assert node.end_lineno is not None and node.end_col_offset is not None
        if start is None:
            line, col, before = node.lineno, node.col_offset, self.segment(node)
        else:
            assert start.end_lineno is not None and start.end_col_offset is not None
            line, col = start.end_lineno, start.end_col_offset
            before = self.segment(node)[len(self.segment(start)) :]
        self.facts.edits.append(
            Edit(line, col, node.end_lineno, node.end_col_offset, before, after)
        )

    def device_literal(self, node: ast.expr, context: str) -> None:
        kind = _device_string(node)
        if kind == "cuda":
            self.facts.cuda_uses.append(f"{self.where(node)}: {context}")
            self.handled.add(id(node))
            self.edit(node, DEVICE_NAME)
        elif kind == "cpu":
            self.facts.cpu_uses.append(f"{self.where(node)}: {context}")
            self.handled.add(id(node))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.add_module(alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and not node.level:
            self.add_module(node.module)

    def add_module(self, name: str) -> None:
        top = name.split(".")[0]
        if top not in _STDLIB and top != "torch" and top not in self.facts.third_party:
            self.facts.third_party.append(top)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name) and "dev" in target.id.lower():
                self.device_literal(node.value, f"{target.id} = {self.segment(node.value)}")
            if (
                isinstance(target, ast.Name)
                and isinstance(node.value, ast.Call)
                and self.qualified(node.value.func) == "torch.compile"
                and node.value.args
            ):
                self.compiled[target.id] = dotted(node.value.args[0])
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for arg, default in zip(
            node.args.args[-len(node.args.defaults) :] if node.args.defaults else [],
            node.args.defaults,
            strict=False,
        ):
            if "dev" in arg.arg.lower():
                self.device_literal(default, f"default of {arg.arg}")
        for deco in node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            if self.qualified(target) == "torch.compile":
                self.note_compile(deco)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def note_compile(self, node: ast.AST) -> None:
        self.facts.uses_compile = True
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if (
                    kw.arg == "backend"
                    and isinstance(kw.value, ast.Constant)
                    and isinstance(kw.value.value, str)
                ) and kw.value.value not in self.facts.compile_backends:
                    self.facts.compile_backends.append(kw.value.value)

    def qualified(self, node: ast.AST) -> str:
        return qualified(node, self.aliases)

    def visit_Call(self, node: ast.Call) -> None:
        name = self.qualified(node.func)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else name.split(".")[-1]
        if name == "torch.compile" or name.endswith("._dynamo.optimize"):
            self.note_compile(node)
            if (
                not any(kw.arg == "backend" for kw in node.keywords)
                and "inductor" not in self.facts.compile_backends
            ):
                self.facts.compile_backends.append("inductor")
        if (
            method == "cuda"
            and isinstance(node.func, ast.Attribute)
            and not name.startswith("torch.cuda")
        ):
            self.facts.cuda_uses.append(f"{self.where(node)}: .cuda()")
            self.facts.moves_to_cuda = True
            self.edit(node, f".to({DEVICE_NAME})", start=node.func.value)
        if method in ("to", "cuda") or name == "torch.device":
            for arg in node.args[:1]:  # .to(0), torch.device(1): a CUDA ordinal
                if isinstance(arg, ast.Constant) and type(arg.value) is int and method != "cuda":
                    self.facts.cuda_uses.append(f"{self.where(node)}: {method}({arg.value})")
                    self.facts.moves_to_cuda = method == "to"
                    self.handled.add(id(arg))
                    self.edit(arg, DEVICE_NAME)
        if method in ("to", "device", "autocast") or name in ("torch.device",):
            for arg in node.args[:1]:
                if method == "to" and _device_string(arg) == "cuda":
                    self.facts.moves_to_cuda = True
                self.device_literal(arg, f"{method}({self.segment(arg)})")
        for kw in node.keywords:
            if kw.arg in ("device", "map_location", "device_type"):
                self.device_literal(kw.value, f"{kw.arg}={self.segment(kw.value)}")
        if name.startswith("torch.cuda.") and name.split(".")[2] not in _SAFE_CUDA_API:
            self.facts.unsafe_cuda.append(f"{self.where(node)}: {name}()")
        if method in _DOWNLOAD_CALLS or name.startswith("torch.hub."):
            self.facts.downloads.append(f"{self.where(node)}: {name or method}()")
        if name == "torch.load" and node.args and isinstance(node.args[0], ast.Constant):
            self.facts.downloads.append(
                f"{self.where(node)}: torch.load({node.args[0].value!r}) reads a local file"
            )
        if any(
            kw.arg == "download" and isinstance(kw.value, ast.Constant) and kw.value.value is True
            for kw in node.keywords
        ):
            self.facts.downloads.append(f"{self.where(node)}: {name}(download=True)")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            text = node.value.strip()
            if text.startswith(("http://", "https://")) and f"line {node.lineno}" not in " ".join(
                self.facts.downloads
            ):
                self.facts.downloads.append(f"line {node.lineno}: URL {text[:60]}")
            if _device_string(node) == "cuda" and id(node) not in self.handled:
                self.facts.unsafe_cuda.append(f"line {node.lineno}: {text!r}")


def _module_names(tree: ast.Module) -> set[str]:
    """Names bound at module scope (top-level statements, not function or class bodies)."""
    names: set[str] = set()
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


def _find_comparisons(
    tree: ast.Module, compiled: dict[str, str], aliases: dict[str, str]
) -> list[Comparison]:
    found = _comparisons(tree, compiled, aliases)
    for comparison in found:  # eager vs compiled may be any of them, not only the first
        comparison.calls = _compile_pair(tree, comparison, compiled, aliases)
    return found


def _compile_pair(
    tree: ast.Module, comparison: Comparison, compiled: dict[str, str], aliases: dict[str, str]
) -> tuple[str, str] | None:
    """The calls that compute a compile-vs-eager comparison's sides, compiled first: ``opt(x)``
    (or ``torch.compile(f)(x)``) and ``f(x)`` with the same arguments, either written in the
    comparison or assigned once, at module level, to the names it compares; None otherwise."""
    assigned: dict[str, list[ast.expr]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                assigned.setdefault(target.id, []).append(stmt.value)
    sites = []
    for source in (comparison.actual, comparison.expected):
        node = ast.parse(source, mode="eval").body
        if isinstance(node, ast.Name) and len(assigned.get(node.id, [])) == 1:
            node = assigned[node.id][0]
        site = _call_site(node, compiled, aliases)
        if site is None:
            return None
        sites.append(site)
    (fn_a, args_a, compiled_a, call_a), (fn_b, args_b, compiled_b, call_b) = sites
    if fn_a != fn_b or args_a != args_b or compiled_a == compiled_b:
        return None
    return (call_a, call_b) if compiled_a else (call_b, call_a)


def _call_site(
    node: ast.expr, compiled: dict[str, str], aliases: dict[str, str]
) -> tuple[str, str, bool, str] | None:
    """``(function, arguments, compiled?, call source)`` of ``f(...)``, ``opt(...)`` where
    ``opt = torch.compile(f)``, or ``torch.compile(f)(...)``; None for anything else."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if (
        isinstance(func, ast.Call)
        and qualified(func.func, aliases) == "torch.compile"
        and func.args
    ):
        fn, is_compiled = dotted(func.args[0]), True
    elif dotted(func) in compiled:
        fn, is_compiled = compiled[dotted(func)], True
    else:
        fn, is_compiled = dotted(func), False
    if not fn:
        return None
    args = [ast.unparse(a) for a in node.args]
    args += [f"{kw.arg or '*'}={ast.unparse(kw.value)}" for kw in node.keywords]
    return fn, ", ".join(args), is_compiled, ast.unparse(node)


def _comparisons(
    tree: ast.Module, compiled: dict[str, str], aliases: dict[str, str]
) -> list[Comparison]:
    """The comparisons of module-level values the code makes, in the order written: calls
    (``allclose(a, b)``, ``assert_close``) and measured differences (``(a - b).abs().max()``);
    else one eager-vs-compiled pair."""
    module_names = _module_names(tree)

    def simple(node: ast.AST) -> str | None:
        """Source of a value check() can reach: a module-level name, maybe with .attr, [i] or .cpu()."""
        root = node
        while True:
            if isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            elif (
                isinstance(root, ast.Call)
                and isinstance(root.func, ast.Attribute)
                and (
                    not root.args
                    or (
                        root.func.attr in CONVERSIONS
                        and len(root.args) == 1
                        and bool(dotted(root.args[0]))
                    )
                )
            ):
                root = root.func.value
            else:
                break
        if isinstance(root, ast.Name) and root.id in module_names:
            return ast.unparse(node)
        return None

    # ``assert not torch.equal(a, b)``: the code wants the values to differ (dropout changed
    # them); ``if not torch.allclose(a, b): print("mismatch")`` still wants them equal.
    negated = {
        id(n.test.operand)
        for n in tree_nodes(tree)
        if isinstance(n, ast.Assert)
        and isinstance(n.test, ast.UnaryOp)
        and isinstance(n.test.op, ast.Not)
    }
    reports = functools.cache(lambda: Reports(tree, aliases))  # built only for a difference
    found: dict[tuple[str, str], Comparison] = {}
    for node in sorted(
        (n for n in tree_nodes(tree) if isinstance(n, ast.Call) and id(n) not in negated),
        key=lambda n: (n.lineno, n.col_offset),
    ):
        comparison = _compared(node, aliases, simple, reports)
        if comparison is None:
            continue
        key = (comparison.actual, comparison.expected)
        if key not in found or (found[key].measured and not comparison.measured):
            found[key] = comparison  # a tolerance the code states beats a measured difference
    if found:
        return list(found.values())
    # eager vs compiled: A = f(...) and B = opt(...) where opt = torch.compile(f)
    calls: dict[str, list[str]] = {}
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ) and isinstance(stmt.value, ast.Call):
            calls.setdefault(dotted(stmt.value.func), []).append(stmt.targets[0].id)
    for opt, fn in compiled.items():
        if calls.get(opt) and calls.get(fn):
            return [Comparison(actual=calls[opt][0], expected=calls[fn][0], style="assert_close")]
    pair = _printed_pair(tree, compiled, aliases, simple)
    return [pair] if pair else []


def _compared(
    node: ast.Call,
    aliases: dict[str, str],
    simple: Callable[[ast.AST], str | None],
    reports: Callable[[], Reports],
) -> Comparison | None:
    """The comparison one call makes: ``allclose(a, b)``-like, or a measured difference the
    code reports (see :mod:`contribkit.repro.measures`)."""
    style = _COMPARE_CALLS.get(qualified(node.func, aliases))
    if style and len(node.args) >= 2:
        a, b = simple(node.args[0]), simple(node.args[1])
        if a and b:
            keywords = {
                kw.arg: ast.unparse(kw.value)
                for kw in node.keywords
                if kw.arg in ("rtol", "atol", "equal_nan")
            }
            return Comparison(actual=a, expected=b, style=style, keywords=keywords)
    diff = difference(node, aliases)
    if diff is None or not reports().reported(node):
        return None
    a, b = simple(diff.left), simple(diff.right)
    if not a or not b or reports().input_side(a) or reports().input_side(b):
        return None
    return Comparison(actual=a, expected=b, style="assert_close", measured=True)


def _printed_pair(
    tree: ast.Module,
    compiled: dict[str, str],
    aliases: dict[str, str],
    simple: Callable[[ast.AST], str | None],
) -> Comparison | None:
    """eager vs compiled without names for the results, e.g. ``print(f(x))`` then
    ``print(torch.compile(f)(x))``: check() calls both again on the same module-level inputs."""

    def value(node: ast.expr) -> str | None:
        return ast.unparse(node) if isinstance(node, ast.Constant) else simple(node)

    def arguments(call: ast.Call) -> str | None:
        """The call's arguments as source, when every one is a constant or a module-level value."""
        parts = [value(a) for a in call.args]
        keywords = [(kw.arg, value(kw.value)) for kw in call.keywords]
        if any(p is None for p in parts) or any(k is None or v is None for k, v in keywords):
            return None
        return ", ".join([*(str(p) for p in parts), *(f"{k}={v}" for k, v in keywords)])

    eager: dict[tuple[str, str], str] = {}
    compiled_calls: list[tuple[str, str, str]] = []
    for node in tree_nodes(tree):
        if not isinstance(node, ast.Call):
            continue
        args = arguments(node)
        if args is None:
            continue
        if (
            isinstance(node.func, ast.Call)
            and qualified(node.func.func, aliases) == "torch.compile"
            and node.func.args
        ):
            fn = simple(node.func.args[0])
            if fn:
                compiled_calls.append((fn, args, ast.unparse(node)))
        elif dotted(node.func) in compiled and simple(node.func):
            compiled_calls.append((compiled[dotted(node.func)], args, ast.unparse(node)))
        else:
            fn = simple(node.func) if isinstance(node.func, (ast.Name, ast.Attribute)) else None
            if fn:
                eager.setdefault((fn, args), ast.unparse(node))
    for fn, args, source in compiled_calls:
        if (fn, args) in eager:
            return Comparison(actual=source, expected=eager[(fn, args)], style="assert_close")
    return None


def parse_code(code: str) -> ast.Module | None:
    """``ast.parse``, allowing top-level ``await`` (a notebook's); None when it does not parse.

    The facts, the edits and the evidence all read the same program: the last few texts' trees
    are kept, so each is parsed once (callers read trees, never change them)."""
    return _parse_code(code)


@functools.lru_cache(maxsize=4)
def _parse_code(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    try:
        tree = compile(code, "<issue>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tree if isinstance(tree, ast.Module) else None


@functools.lru_cache(maxsize=4)
def tree_nodes(tree: ast.AST) -> tuple[ast.AST, ...]:
    """Every node of ``tree``, in ``ast.walk`` order: walked once for all the passes over the
    program's nodes (its imports, comparisons, free names, calls), which then read this."""
    return tuple(ast.walk(tree))


def analyse(code: str) -> CodeFacts:
    """The facts of ``code``; BadInput when it nests deeper than Python itself can compile
    (a 3,000-term expression): no script made from it could run.

    ``ast.parse`` keeps Python's own limit (what compiles, parses); walking the tree takes a
    few frames per level, so the walk gets a higher limit (Python frames, not C stack)."""
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(limit, WALK_RECURSION_LIMIT))
        return _analyse(code, limit)
    except (RecursionError, MemoryError) as exc:
        from contribkit.core.errors import BadInput

        raise BadInput(
            "the issue's code is nested too deeply for Python to compile "
            f"({type(exc).__name__}); no repro script can run it",
            "save the issue with a smaller program and pass it with --from-file",
        ) from exc
    finally:
        sys.setrecursionlimit(limit)


def _analyse(code: str, parse_limit: int) -> CodeFacts:
    facts = CodeFacts()
    walk_limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(parse_limit)
        tree = parse_code(code)
        if tree is None:
            tree = ast.parse(code)  # raises the SyntaxError (or RecursionError) to report
    except SyntaxError as exc:
        facts.parses = False
        facts.syntax_error = exc.msg
        facts.syntax_error_line = exc.lineno
        if re.search(r"\.cuda\(|['\"]cuda(:\d+)?['\"]", code):
            facts.unsafe_cuda.append("code that does not parse mentions CUDA")
        return facts
    finally:
        sys.setrecursionlimit(walk_limit)
    aliases = import_aliases(tree)
    visitor = _Visitor(facts, code, aliases)
    visitor.visit(tree)
    facts.comparisons = _find_comparisons(tree, visitor.compiled, aliases)
    return facts


def apply_edits(code: str, edits: list[Edit]) -> str:
    """Apply non-overlapping span edits, last first, so earlier positions stay valid."""
    lines = source_lines(code)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def pos(line: int, col: int) -> int:
        # ast columns are UTF-8 byte offsets
        text = lines[line - 1] if line - 1 < len(lines) else ""
        return offsets[line - 1] + len(text.encode("utf-8")[:col].decode("utf-8", errors="ignore"))

    spans = sorted(
        ((pos(e.line, e.col), pos(e.end_line, e.end_col), e.after) for e in edits), reverse=True
    )
    result, last_start = code, len(code) + 1
    for start, end, after in spans:
        if end > last_start:  # overlapping (a .cuda() inside an edited span): keep the outer edit
            continue
        result = result[:start] + after + result[end:]
        last_start = start
    return result
