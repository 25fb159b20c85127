"""Source-to-source rewrites that turn an issue's code into a test body: the main block
unwrapped, CUDA literals on ``DEVICE``, imports hoisted, value prints dropped or quieted, the
result taken, and what draws random numbers where.

Pure ``ast`` work on code text; nothing here knows about repro folders or test files.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from contribkit.core.astnames import qualified, source_lines
from contribkit.repro.codefacts import Edit, analyse, apply_edits, import_aliases
from contribkit.testgen.pyedit import ImportSpec, dedent_lines, imports_of
from contribkit.testgen.tidy import call_name

_CUDA_LITERAL = re.compile(r"^cuda(:\d+)?$")
# A last expression statement calling one of these has no result worth checking.
_NO_RESULT_CALLS = {"backward", "synchronize", "step", "zero_grad", "print"}
# Calls that draw random numbers: factories that draw on the CPU unless given ``device=``
# (seeded, both runs of a CPU comparison then get the same values), and calls that draw where
# their input lives (a device's own generator: only shapes and dtypes can be compared).
_RANDOM_FACTORIES = {"rand", "randn", "randint", "randperm", "normal"}
_RANDOM_IN_PLACE = {
    "rand_like",
    "randn_like",
    "randint_like",
    "bernoulli",
    "multinomial",
    "poisson",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
    "rrelu",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
    "RReLU",
    "uniform_",
    "normal_",
    "random_",
    "bernoulli_",
    "exponential_",
    "cauchy_",
    "log_normal_",
    "geometric_",
}


def _line_span(node: ast.stmt) -> tuple[int, int]:
    return node.lineno, node.end_lineno or node.lineno


def _alone_on_lines(node: ast.stmt, body: list[ast.stmt]) -> bool:
    start, end = _line_span(node)
    return not any(
        other is not node and _line_span(other)[0] <= end and _line_span(other)[1] >= start
        for other in body
    )


def _delete_lines(code: str, spans: list[tuple[int, int]]) -> str:
    drop = {n for start, end in spans for n in range(start, end + 1)}
    return "".join(line for n, line in enumerate(source_lines(code), start=1) if n not in drop)


def unwrap_main(code: str) -> str:
    """Replace a top-level ``if __name__ == "__main__":`` block by its body."""
    while True:
        tree = ast.parse(code)
        block = next(
            (
                node
                for node in tree.body
                if isinstance(node, ast.If)
                and not node.orelse
                and isinstance(node.test, ast.Compare)
                and {ast.unparse(node.test.left), *(ast.unparse(c) for c in node.test.comparators)}
                == {"__name__", "'__main__'"}
            ),
            None,
        )
        if block is None:
            return code
        first, last = block.body[0].lineno, block.end_lineno or block.body[-1].lineno
        code = dedent_lines(code, first, last, block.body[0].col_offset - block.col_offset)
        code = _delete_lines(code, [(block.lineno, first - 1)])


def rewrite_cuda(code: str) -> str:
    """For a CUDA-only test: every literal CUDA device use becomes ``DEVICE`` (then ``device``)."""
    code = apply_edits(code, analyse(code).edits)
    tree = ast.parse(code)
    in_fstring = {
        id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values
    }
    edits = [
        Edit(
            node.lineno,
            node.col_offset,
            node.end_lineno or node.lineno,
            node.end_col_offset or node.col_offset,
            repr(node.value),
            "DEVICE",
        )
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _CUDA_LITERAL.match(node.value)
        and id(node) not in in_fstring
    ]
    return apply_edits(code, edits) if edits else code


def hoist_imports(
    code: str, harness: dict[str, ImportSpec]
) -> tuple[str, list[ImportSpec], list[str]]:
    """Take the code's top-level imports out for the file's import block.

    An import stays in place when it shares its lines with other statements or would rebind a
    name the test file itself imports differently; ``from __future__`` imports are dropped.
    """
    tree = ast.parse(code)
    hoisted: list[ImportSpec] = []
    spans: list[tuple[int, int]] = []
    notes = []
    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or not _alone_on_lines(
            node, tree.body
        ):
            continue
        specs = imports_of(node)
        if any(s.group == 0 for s in specs):
            notes.append(f"dropped `{ast.unparse(node)}` (a test file's imports are its own)")
            spans.append(_line_span(node))
            continue
        if any(s.bound in harness and harness[s.bound] != s for s in specs):
            continue
        hoisted.extend(specs)
        spans.append(_line_span(node))
    return _delete_lines(code, spans), hoisted, notes


def _drop_statements(code: str, drop: Callable[[ast.stmt], bool]) -> str:
    """``code`` without its top-level statements that ``drop`` picks and that own their lines."""
    tree = ast.parse(code)
    spans = [
        _line_span(node) for node in tree.body if drop(node) and _alone_on_lines(node, tree.body)
    ]
    return _delete_lines(code, spans)


def eager_compiled_pairs(code: str) -> list[tuple[str, str]]:
    """``out = opt(args)`` where ``opt = torch.compile(fn)``: compare ``out`` with ``fn(args)``."""
    tree = ast.parse(code)
    compiled: dict[str, str] = {}
    pairs = []
    for node in tree.body:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            continue
        value, target = node.value, node.targets[0].id
        if not isinstance(value, ast.Call):
            continue
        callee = ast.unparse(value.func)
        if (
            callee == "torch.compile"
            and value.args
            and isinstance(value.args[0], (ast.Name, ast.Attribute))
        ):
            compiled[target] = ast.unparse(value.args[0])
        elif callee in compiled:
            args = ast.get_source_segment(code, value) or ast.unparse(value)
            pairs.append(
                (
                    target,
                    compiled[callee]
                    + args[len(ast.get_source_segment(code, value.func) or callee) :],
                )
            )
    return pairs


def _is_self_assignment(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Name)
        and node.targets[0].id == node.value.id
    )


def drop_no_ops(code: str) -> str:
    """Drop top-level ``x = x`` lines (``device = DEVICE`` once ``DEVICE`` is ``device``)."""
    return _drop_statements(code, _is_self_assignment)


def take_result(code: str) -> tuple[str, str | None]:
    """The name that holds the code's result: the one name its last statement assigns; or its
    last expression, or the one value its last ``print`` shows, assigned to a new name (the
    ``print`` goes: the test checks the value instead)."""
    tree = ast.parse(code)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Assign) and len(last.targets) == 1:
        target = last.targets[0]
        return code, target.id if isinstance(target, ast.Name) else None
    if isinstance(last, ast.AnnAssign) and last.value is not None:
        return code, last.target.id if isinstance(last.target, ast.Name) else None
    if not isinstance(last, ast.Expr) or not _alone_on_lines(last, tree.body):
        return code, None
    value = last.value
    printed = (
        isinstance(value, ast.Call)
        and call_name(value) == "print"
        and len(value.args) == 1
        and not value.keywords
        and not isinstance(value.args[0], ast.Starred)
    )
    if printed:
        assert isinstance(value, ast.Call)
        value = value.args[0]
    if isinstance(value, (ast.Constant, ast.JoinedStr, ast.Await, ast.Yield, ast.YieldFrom)) or (
        isinstance(value, ast.Call) and call_name(value) in _NO_RESULT_CALLS
    ):
        return code, None
    if isinstance(value, ast.Name):  # a bare name, or a print of one: the line goes
        return _delete_lines(code, [_line_span(last)]), value.id
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    name = next(n for n in ("result", *(f"result{i}" for i in range(2, 1000))) if n not in taken)
    segment = ast.get_source_segment(code, value) or ast.unparse(value)
    end = (last.end_lineno or last.lineno, last.end_col_offset or 0)
    after = f"{name} = {segment}"
    edit = Edit(last.lineno, last.col_offset, *end, "", after)
    return apply_edits(code, [edit]), name


def draws_random(code: str, imported: dict[str, str] | None = None) -> str:
    """``"device"`` when the code draws random numbers where its tensors live, ``"cpu"`` when
    it draws them on the CPU only (random factories without ``device=``, nn modules'
    initialisation), else ``""``. ``imported``: the aliases of imports taken out of ``code``."""
    found = ""
    tree = ast.parse(code)
    aliases = {**(imported or {}), **import_aliases(tree)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = qualified(node.func, aliases) or ast.unparse(node.func)
        last = callee.rsplit(".", 1)[-1]
        on_device = any(k.arg == "device" for k in node.keywords)
        nn_module = callee.startswith(("torch.nn.", "nn.")) and last[:1].isupper()
        if (
            last in _RANDOM_IN_PLACE
            or callee.startswith(("torch.nn.init.", "nn.init."))
            or (on_device and (last in _RANDOM_FACTORIES or last[:1].isupper()))
        ):
            return "device"
        if last in _RANDOM_FACTORIES or nn_module:
            found = "cpu"
    return found
