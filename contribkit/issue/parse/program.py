"""The issue's program: the Python blocks of one source text that form it, merged; or, where
the issue has no code block at all, the torch code its prose writes in backticks."""

from __future__ import annotations

import ast
import builtins
import re

from contribkit.core.astnames import dotted
from contribkit.issue.parse.expectations import right_behaviour
from contribkit.issue.parse.markdown import NOT_PROGRAM_ROLES, lead_facts
from contribkit.issue.parse.scan import Scan, parse_python
from contribkit.issue.parse.signature import inside_mention
from contribkit.issue.parse.transcripts import has_statements


def program(scan: Scan) -> tuple[str, list[str]]:
    """The Python blocks that form one program, merged, and notes on the blocks left out.

    Left out: blocks under env/expected/actual/workaround headings or summaries; a block after the
    first whose preceding prose calls it a workaround; a block repeating an earlier one. Imports
    repeated across blocks keep their first occurrence; nothing is reordered.
    """
    parts: list[str] = []
    notes: list[str] = []
    seen = _SeenLines()
    for block in scan.blocks:
        code = block.code
        if code.kind not in ("python", "repl") or not code.text.strip():
            continue
        where = f"the {code.kind} block at line {code.line} of the {scan.source}"
        if block.role in NOT_PROGRAM_ROLES:
            notes.append(
                f"left out {where}: its heading or summary says it is {NOT_PROGRAM_ROLES[block.role]}"
            )
        elif parts and block.after_workaround:
            notes.append(f"left out {where}: the text calls it a workaround")
        elif seen.contains(code.text):
            notes.append(f"left out {where}: it repeats an earlier block")
        else:
            parts.append(code.text)
            seen.add(code.text)
    return _merge(parts), notes


class _SeenLines:
    """The lines of the blocks kept so far, indexed by content: whether a block appears in one
    of them as whole lines is answered by checking only where its first line occurs (linear in
    the number of blocks, where comparing each block with every earlier one was quadratic)."""

    _MAX_CANDIDATES = 64

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.where: dict[str, list[int]] = {}

    def add(self, text: str) -> None:
        for line in text.strip().split("\n"):
            self.where.setdefault(line, []).append(len(self.lines))
            self.lines.append(line)
        self.lines.append("\x00")  # no match spans two blocks

    def contains(self, text: str) -> bool:
        lines = text.strip().split("\n")
        starts = self.where.get(lines[0], [])[: self._MAX_CANDIDATES]
        return any(self.lines[start : start + len(lines)] == lines for start in starts)


def _merge(parts: list[str]) -> str:
    seen: set[str] = set()
    merged: list[str] = []
    for part in parts:
        keys = _import_keys(part)
        kept = []
        for number, line in enumerate(part.split("\n")):
            key = keys.get(number)
            if key is not None:
                if key in seen:
                    continue
                seen.add(key)
            kept.append(line)
        text = "\n".join(kept).strip("\n")
        if text.strip():
            merged.append(text)
    return "\n\n".join(merged) + "\n" if merged else ""


def _import_keys(code: str) -> dict[int, str]:
    """0-based line -> canonical text, for lines that are exactly one top-level import."""
    tree = parse_python(code)
    if tree is None:
        keys = {}
        for number, line in enumerate(code.split("\n")):
            if line.startswith(("import ", "from ")):
                single = parse_python(line)
                if single is not None and len(single.body) == 1:
                    keys[number] = ast.unparse(single.body[0])
        return {n: k for n, k in keys.items() if k.startswith(("import ", "from "))}
    per_line: dict[int, int] = {}
    for stmt in tree.body:
        for number in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1):
            per_line[number] = per_line.get(number, 0) + 1
    return {
        stmt.lineno - 1: ast.unparse(stmt)
        for stmt in tree.body
        if isinstance(stmt, (ast.Import, ast.ImportFrom))
        and stmt.end_lineno == stmt.lineno
        and per_line[stmt.lineno] == 1
    }


# Blocks that make the issue's code a block's, never its prose's: inline code never mixes with
# block code (a shell line such as ``python -c "..."`` is code too).
_CODE_KINDS = ("python", "repl", "shell")
# Modules a span may use unimported: the repro's import edit adds them (repro/edits.KNOWN_IMPORTS;
# a test keeps the two in step). A call on one of them is a function's, not a value's method.
INLINE_MODULES = frozenset(
    {"torch", "nn", "F", "optim", "np", "numpy", "math", "os", "sys", "time", "random", "copy"}
)
# Other libraries, as the prose sets them beside torch: "`scipy.special.gamma(2.5)` gives",
# "`jnp.median(a)` returns 2.5". Their calls are no torch code, nor a value's method.
_OTHER_LIBRARIES = frozenset(
    {"scipy", "sp", "jax", "jnp", "tf", "tensorflow", "keras", "pd", "pandas", "cv2", "sklearn"}
)
_TORCH_ROOTS = frozenset({"torch", "nn", "F", "optim"})
# The parameter names of torch's documented signatures: "`torch.sum(input, dim)`",
# "`Tensor.add_(other, alpha=1)`", "`torch.cat(tensors, dim=0, *, out=None)`".
_PARAMETERS = frozenset({"input", "self", "other", "out", "tensors", "args", "kwargs"})
_BUILTIN_NAMES = frozenset(dir(builtins))
# Calls that ask about the machine, not run an operation: "`torch.cuda.is_available()` is False".
_ENV_QUERY = re.compile(
    r"^torch\.(?:(?:cuda|mps|xpu|backends\.\w+|distributed)\.(?:is_available|is_built"
    r"|device_count|current_device|get_device_name|get_device_capability|get_arch_list)"
    r"|__config__\.\w+|version\.\w+|utils\.collect_env\.\w+)$"
)
_SPAN = re.compile(r"`([^`]+)`")
_NAMING_ROOTS = _TORCH_ROOTS | {"Tensor"}
# torch's dtypes and constants: `torch.float64`, `torch.bfloat16`, `torch.cfloat`, `torch.inf`.
_DTYPE_OR_CONSTANT = re.compile(
    r"(?:c?b?float|c?half|c?double|long|short|bool|complex|q?u?int)\d*(?:_e\d\w*)?"
    r"|inf|nan|pi|e|newaxis"
)
# torch's namespaces, named as places rather than calls: "a bug in `torch.linalg`".
_NAMESPACES = frozenset(
    {
        "nn", "functional", "linalg", "fft", "special", "cuda", "mps", "xpu", "cpu",
        "backends", "cudnn", "distributed", "utils", "data", "jit", "onnx", "fx", "autograd",
        "export", "compiler", "optim", "sparse", "masked", "nested", "testing", "library",
        "ops", "amp", "init", "parallel", "quantization", "ao", "hub", "profiler",
        "distributions", "func", "signal", "overrides", "multiprocessing",
    }
)  # fmt: skip
# More spans than this read as an API discussion, not a reproduction: none is taken.
MAX_INLINE_SPANS = 20


def inline_program(scan: Scan) -> tuple[str, int]:
    """The torch code an issue with no code block writes in its prose's backticks, one span a
    line in document order, and how many spans; ("", 0) when there is none.

    The class: "`torch.arange(0, 1, 0.1)` returns 11 values", "calling
    `torch.tensor([1, 2, 3]).float().median()` gives 2.0". A span counts when it is one
    complete statement (an expression, an assignment) that parses and calls something under
    ``torch`` with arguments, or a method of a value (`torch.zeros(2).sum()`, `x.sum(1)`); an
    import of torch's or numpy's (`import torch.distributions as D`) goes first and binds its
    names for every span.
    A name no span defines stays for the repro's edits (an import, a device, a tensor whose
    shape the prose states) or its ``NameError``. Left out: bare names (`torch.sum`),
    fragments (`dim=None`), signatures (`torch.sum(input, dim)`), values as torch prints them
    (`tensor(2.)`), error text, questions to the machine (`torch.cuda.is_available()`), code
    that is not torch's, spans under env/expected/actual/workaround headings or summaries,
    spans that a sentence calls right (the wanted behaviour after "should be" or "I
    expected", a workaround, code that "works fine") and paragraphs a colon-ended lead
    introduces as such. The program is all or nothing: a span that calls code but cannot run
    as one statement (`a = f(x); a.sum()`, a comprehension, `torch.zeros(...)`), or a torch
    function the prose names bare or in a signature that no span calls, leaves it all out,
    since a clean run of the rest would say nothing of the bug.
    """
    if any(block.code.kind in _CODE_KINDS for block in scan.blocks):
        return "", 0
    lines: list[str] = []
    bound: set[str] = set()
    named: set[str] = set()  # the torch functions the prose names uncalled: `torch.linalg.inv`
    lead = ""  # the paragraph before, which may introduce this one ("Expected output:")
    imports: list[str] = []  # first, wherever the prose says them, as a human writes them
    for prose in scan.prose:
        introduced, lead = _introduced(lead), "" if prose.heading else prose.text
        if prose.heading or prose.role in NOT_PROGRAM_ROLES or introduced:
            continue
        for sentence, right in right_behaviour(prose.text):
            for span in _SPAN.finditer(sentence):
                at = span.start()
                if any(start <= at < end for start, end in right):
                    continue
                if inside_mention(sentence, at + 1):
                    continue
                text = span.group(1).strip()
                if text in lines:
                    continue
                kind, op = _span_kind(text, bound)
                if kind == "partial":
                    return "", 0
                if kind == "import":
                    imports.append(text)
                elif kind == "run":
                    lines.append(text)
                elif op:
                    named.add(op)
    if not lines or len(lines) > MAX_INLINE_SPANS or named - _called("\n".join(lines)):
        return "", 0
    lines = list(dict.fromkeys(imports)) + lines
    return "\n".join(lines) + "\n", len(lines)


def _introduced(lead: str) -> bool:
    """Whether a paragraph ending in a colon introduces the next as the expected result or a
    workaround ("Expected output:", "As a workaround, I use:"), as it does for a block."""
    if not lead.rstrip().endswith(":"):
        return False
    workaround, expected = lead_facts(lead)
    return workaround or expected


def _span_kind(text: str, bound: set[str]) -> tuple[str, str]:
    """What ``text`` is, and the torch function it names without running it ("" if none):
    "run", one statement that runs torch code (see :func:`inline_program`; the names it
    assigns join ``bound``); "partial", code that calls something but cannot run as one
    statement as written; "other", no code, a signature, or none of torch's."""
    tree = parse_python(text)
    if tree is not None and len(tree.body) == 1 and _imports_torch(tree.body[0]):
        stmt = tree.body[0]
        assert isinstance(stmt, (ast.Import, ast.ImportFrom))
        bound.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        return "import", ""  # `import torch.distributions as D`: the names later spans use
    if tree is None or not any(isinstance(n, ast.Call) for n in ast.walk(tree)):
        return "other", _named_op(tree)  # prose, error text, `torch.sum`, `dim=None`
    if not has_statements(tree):
        return "other", ""  # a value as torch prints it: "gives `tensor(2.)`", `torch.Size([2])`
    stmt = tree.body[0]
    if len(tree.body) != 1 or not isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign)):
        return "partial", ""
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Lambda, ast.NamedExpr, ast.comprehension, ast.Starred)):
            return "partial", ""  # names of their own, or arguments spread
        if isinstance(node, ast.Call) and any(
            isinstance(a, ast.Constant) and a.value is Ellipsis for a in node.args
        ):
            return "partial", ""  # "`torch.zeros(...)`": arguments elided
    if _signature(stmt):
        return "other", _named_op(tree)
    if not any(_runs_torch(n, bound) for n in ast.walk(stmt) if isinstance(n, ast.Call)):
        return "other", _named_op(tree)  # `len([1, 2])`, `np.median(a)`, `torch.sum()`
    for target in stmt.targets if isinstance(stmt, ast.Assign) else []:
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        bound.update(n.id for n in names if isinstance(n, ast.Name))
    return "run", ""


def _imports_torch(stmt: ast.stmt) -> bool:
    """``import torch.distributions as D``, ``from torch import nn``, ``import numpy as np``."""
    if isinstance(stmt, ast.ImportFrom):
        modules = [stmt.module or ""] if not stmt.level else [""]
    elif isinstance(stmt, ast.Import):
        modules = [alias.name for alias in stmt.names]
    else:
        return False
    return all(m.split(".")[0] in ("torch", "numpy") for m in modules)


def _signature(stmt: ast.stmt) -> bool:
    """A call as documentation writes it: its arguments bare names or ``name=default``, one of
    them a parameter's name (`torch.sum(input, dim, keepdim=False)`, `x.add_(other)`)."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return False
    call = stmt.value
    names = [a.id for a in call.args if isinstance(a, ast.Name)]
    if len(names) != len(call.args) or not all(
        isinstance(k.value, (ast.Constant, ast.Name)) for k in call.keywords
    ):
        return False
    return bool(_PARAMETERS & {*names, *(k.arg or "" for k in call.keywords)})


def _named_op(tree: ast.Module | None) -> str:
    """The torch function a name of torch's names ("inv" for `torch.linalg.inv`,
    `torch.linalg.inv()` or `torch.linalg.inv(input)`), else "": not a dtype or constant
    (`torch.float64`, `torch.pi`), a class (`torch.Tensor`, `nn.Linear`), a namespace
    (`torch.linalg`), a private name, or a question to the machine."""
    if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return ""
    node = tree.body[0].value
    if isinstance(node, ast.Call):
        node = node.func
    name = dotted(node)
    root, _, last = name.rpartition(".")
    if root.split(".")[0] not in _NAMING_ROOTS or _ENV_QUERY.match(name):
        return ""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", last) or _DTYPE_OR_CONSTANT.fullmatch(last):
        return ""
    return "" if last in _NAMESPACES else last


def _called(code: str) -> set[str]:
    """The last part of every function the code calls (``inv`` for ``torch.linalg.inv(x)``,
    ``median`` for ``x.float().median()``)."""
    tree = parse_python(code)
    calls = [n.func for n in ast.walk(tree) if isinstance(n, ast.Call)] if tree else []
    return {
        f.attr if isinstance(f, ast.Attribute) else f.id
        for f in calls
        if isinstance(f, (ast.Attribute, ast.Name))
    }


def _runs_torch(call: ast.Call, bound: set[str]) -> bool:
    """A call under torch with arguments (`torch.zeros(2)`), a value an earlier span built, or
    a method of a value (`torch.zeros(2).sum()`; `x.sum()` where no span defines ``x``: the
    repro's edits define it, or the run stops at the name)."""
    name = dotted(call.func)
    root = _root(call.func)
    if name and _ENV_QUERY.match(name):
        return False
    if root in _TORCH_ROOTS:
        # `torch.sum()` with nothing to sum names a function; a method of a built value runs it
        return bool(call.args or call.keywords) or not name
    if root in bound:  # `x.sum()`, `model(x)`: a value an earlier span built
        return True
    free = bool(root) and root not in INLINE_MODULES | _OTHER_LIBRARIES | _BUILTIN_NAMES
    return free and isinstance(call.func, ast.Attribute)


def _root(node: ast.expr) -> str:
    """The name a chain of attributes, calls and subscripts starts from ("" for a literal)."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""
