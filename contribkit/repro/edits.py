"""The edit actions a careful human makes to run an issue's snippet, each one recorded.

Applied to code that already parses (with top-level ``await`` allowed): add the imports its
free names need, and a value for a free device or dtype name and for a free tensor whose shape
the issue states (``freenames``); call functions and run ``unittest`` cases it defines but
never calls, and a model it only defines on the input its prose states (``modelcall``); echo
the values a transcript or notebook cell shows (every expression of inline code: the prose's
backticked statements) and mark the statements whose printed output the issue quotes; hoist
``from __future__``; run top-level ``await`` in ``asyncio.run``. The edits are span insertions
(never ``ast.unparse``), so the code stays as the reporter wrote it.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Any

from contribkit.core.astnames import dotted, source_lines
from contribkit.issue.parse.transcripts import OUTPUT_COMMENT, is_printed_output
from contribkit.repro.codefacts import (
    RANDOM_CALL,
    RANDOM_INIT,
    Edit,
    apply_edits,
    parse_code,
    tree_nodes,
)
from contribkit.repro.freenames import FreeTensors, define_free_tensors
from contribkit.repro.missingerror import claimed_statement, mark_claimed
from contribkit.repro.modelcall import model_call
from contribkit.repro.printedpair import mark_pair
from contribkit.repro.reference import recomputed_reference

# Free names a snippet uses without importing them -> the import a human adds.
KNOWN_IMPORTS = {
    "torch": "import torch",
    "nn": "import torch.nn as nn",
    "F": "import torch.nn.functional as F",
    "optim": "import torch.optim as optim",
    "Variable": "from torch.autograd import Variable",
    "Tensor": "from torch import Tensor",
    "np": "import numpy as np",
    "numpy": "import numpy",
    "math": "import math",
    "time": "import time",
    "os": "import os",
    "sys": "import sys",
    "random": "import random",
    "copy": "import copy",
    "itertools": "import itertools",
    "functools": "import functools",
    "collections": "import collections",
    "gc": "import gc",
    "unittest": "import unittest",
}
_BUILTINS = set(dir(builtins)) | {"DEVICE", "_repro", "__file__", "__name__"}
# Calls whose values differ between runs and machines, seeded or not: clocks, addresses, memory.
_VOLATILE_CALL = re.compile(
    r"(?:^|\.)(?:time|perf_counter|perf_counter_ns|monotonic|process_time|time_ns|timeit|now"
    r"|id|data_ptr|untyped_storage|getrusage|memory_info|memory_allocated|max_memory_allocated"
    r"|memory_reserved|get_traced_memory|virtual_memory|getpid|hash)$"
)
_SEEDS = re.compile(r"(?:manual_seed|random\.seed|np\.random\.seed|numpy\.random\.seed)$")
_ASSERT_CALL = re.compile(
    r"(?:^|\.)(?:assert_close|assert_allclose|assert_equal|assert_array_equal|"
    r"assert_array_almost_equal|assert_almost_equal|assert\w*Equal|assertTrue|assertFalse|"
    r"assertRaises\w*|assertIs\w*|assertIn|assertGreater\w*|assertLess\w*)$"
)


@dataclass
class EditedCode:
    text: str
    future: list[str] = field(default_factory=list)  # hoisted __future__ imports
    edits: list[str] = field(default_factory=list)  # one line per edit action, in order
    units: list[dict[str, Any]] = field(default_factory=list)  # quoted output per statement
    own_checks: bool = False  # the code asserts something itself, on a path that runs
    check_raises: list[str] = field(default_factory=list)  # X in a top-level `if ...: raise X`
    deterministic: bool = True  # no unseeded randomness
    uses_random: bool = False
    draws: bool = False  # a random op that draws at every call (not a module's weights)
    made_inputs: bool = False  # inputs the issue never wrote were made (a model's, a tensor's)
    pair: list[int] = field(default_factory=list)  # units of two prints claimed to disagree
    raises: dict[str, Any] = field(default_factory=dict)  # a statement a comment says should
    # raise: its unit, and whether a control line fails as wanted (see repro.missingerror)


def edit_code(code: str, prose: str = "", inline: int = 0) -> EditedCode:
    """Apply the edit actions to ``code`` (which parses); see the module docstring. ``prose``:
    the issue's text without its code, where the inputs of a model may be stated. ``inline``:
    how many backticked spans of the prose form the code (``ParsedIssue.inline_spans``); each
    expression among them is echoed, as the REPL echoes a transcript's."""
    tree = parse_code(code)
    if tree is None:
        return EditedCode(code)
    result = EditedCode(code)
    spans: list[Edit] = []
    lines = source_lines(code)
    bound, loaded = _names(tree)
    spans += _hoist_future(tree, lines, result)
    claim = claimed_statement(tree, lines, _comments(lines))
    quiet = claim.stmt if claim is not None else None  # its marks go where an echo would
    spans += _mark_outputs(tree, lines, result, code, echo_all=bool(inline), quiet=quiet)
    if not result.units:  # quoted output decides first
        marks, result.pair = mark_pair(tree, prose, 1)
        spans += marks
    if claim is not None:
        unit = len(result.units) + len(result.pair) + 1
        result.raises = {"unit": unit, "control": claim.control, "call": claim.call}
        spans += mark_claimed(claim.stmt, unit)
    calls = _uncalled(tree, loaded, result)
    model = model_call(tree, loaded, prose)
    if model is not None:
        calls += model.lines
        result.edits.append(model.edit)
    _own_checks(tree, loaded | {c.split("(")[0] for c in calls}, result, lines)
    free = loaded - bound - _BUILTINS
    tensors = _cut_inputs(tree, free, loaded, lines, prose, result)
    _randomness(tree, result, tensors is not None and tensors.random)
    imports = [KNOWN_IMPORTS[n] for n in sorted(free) if n in KNOWN_IMPORTS]
    if imports:
        names = ", ".join(sorted(n for n in loaded - bound if n in KNOWN_IMPORTS))
        result.edits.insert(0, f"add imports for the free names {names}: {'; '.join(imports)}")
    imports += _free_defaults(free, imports, result)
    imports += _torch_classes(free, result)
    result.made_inputs = tensors is not None or model is not None
    if tensors is not None:
        if KNOWN_IMPORTS["torch"] not in imports:
            imports.append(KNOWN_IMPORTS["torch"])
        imports += tensors.lines
        result.edits.append(tensors.edit)
    if inline:  # the first edit: the code itself is assembled from the prose
        result.edits.insert(
            0,
            f"the issue's code is inline: ran its {inline} backticked expression(s), in the"
            " order the prose gives them",
        )
    text = apply_edits(code, spans)
    body = "\n".join([*imports, text.rstrip("\n"), *calls]) + "\n"
    if _has_top_level_await(tree):
        indented = "\n".join(f"    {line}" if line.strip() else "" for line in body.split("\n"))
        body = (
            f"import asyncio\n\n\nasync def _contribkit_main():\n{indented.rstrip()}\n\n\n"
            "asyncio.run(_contribkit_main())\n"
        )
        result.edits.append("run the code in asyncio.run(): it uses top-level await")
    result.text = body
    return result


# Free names that are plainly a device or a dtype -> the value a human gives them: the script's
# device (--device) or the default dtype. Class: snippets cut from a larger program that kept
# ``.to(device)`` but not the line defining it; issue #21 counts it among the kept-aside sets'
# misses (the dev set has no example; tests/test_repro_evidence.py holds a fixture).
FREE_DEFAULTS = {
    "device": "torch.device(DEVICE)",
    "dev": "torch.device(DEVICE)",
    "dtype": "torch.get_default_dtype()",
}

# The names that hold the script's device: tensors the code moves there are made there.
_DEVICE_NAMES = {"DEVICE", *(name for name, value in FREE_DEFAULTS.items() if "DEVICE" in value)}


def _free_defaults(free: set[str], imports: list[str], result: EditedCode) -> list[str]:
    """Lines that define the free device/dtype names (after ``import torch`` where needed)."""
    names = sorted(free & set(FREE_DEFAULTS))
    if not names:
        return []
    lines = [f"{name} = {FREE_DEFAULTS[name]}" for name in names]
    if KNOWN_IMPORTS["torch"] not in imports:  # the code's own import may come later
        lines.insert(0, KNOWN_IMPORTS["torch"])
    result.edits.append(
        f"define the undefined name(s) {', '.join(names)}: {'; '.join(lines[-len(names) :])}"
    )
    return lines


# A class's name (CapWords: ``Normal``, ``DataLoader``, ``Conv2d``), not a tensor's (``X``, ``W``).
_CLASS_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$")


def _torch_classes(free: set[str], result: EditedCode) -> list[str]:
    """The line that defines the code's undefined class names from torch, where exactly one of
    its public namespaces holds each (the runtime looks: see reprotrace.torch_names); a name
    none holds stays undefined. Class: snippets whose imports were left out (``Normal`` or
    ``Multinomial`` from torch.distributions, ``DataLoader`` from torch.utils.data)."""
    names = sorted(
        n for n in free - set(KNOWN_IMPORTS) - set(FREE_DEFAULTS) if _CLASS_NAME.match(n)
    )
    if not names:
        return []
    result.edits.append(
        f"define the undefined class name(s) {', '.join(names)} from the one torch namespace"
        " that holds each (torch.nn, torch.distributions, torch.utils.data, ...), if any does"
    )
    return [f"globals().update(_repro.torch_names({names!r}))"]


def _cut_inputs(
    tree: ast.Module,
    free: set[str],
    loaded: set[str],
    lines: list[str],
    prose: str,
    result: EditedCode,
) -> FreeTensors | None:
    """Definitions of the free tensors whose shape the issue states (see ``freenames``)."""
    unknown = free - set(KNOWN_IMPORTS) - set(FREE_DEFAULTS)
    if not unknown:
        return None
    quoted = {unit["where"] for unit in result.units}
    return define_free_tensors(
        tree,
        unknown,
        _input_comments(lines, result),
        prose,
        on_device=bool(loaded & _DEVICE_NAMES),
        printed=[stmt for stmt in tree.body if f"line {stmt.lineno}" in quoted],
    )


def _input_comments(lines: list[str], result: EditedCode) -> list[str]:
    """The code's comments, less the output it quotes (``#:`` lines, a value the repro
    compares with what a statement prints): where the shape of an undefined input is stated."""
    quoted = {text for unit in result.units for text in unit["actual"]}
    return [
        text
        for text in _comments(lines).values()
        if not text.startswith(OUTPUT_COMMENT) and text.lstrip("#").strip() not in quoted
    ]


def _names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names bound anywhere (any scope) and names read anywhere."""
    bound: set[str] = set()
    loaded: set[str] = set()
    for node in tree_nodes(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    return bound, loaded


def _hoist_future(tree: ast.Module, lines: list[str], result: EditedCode) -> list[Edit]:
    spans = []
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            result.future.append(ast.unparse(stmt))
            end = stmt.end_lineno or stmt.lineno
            spans.append(Edit(stmt.lineno, 0, end, _width(lines, end), "", "pass"))
    if result.future:
        result.edits.append(
            "hoist " + "; ".join(result.future) + " to the top of the script (it must come first)"
        )
    return spans


def _width(lines: list[str], line: int) -> int:
    return len(lines[line - 1].rstrip("\r\n").encode("utf-8")) if line - 1 < len(lines) else 0


def _comments(lines: list[str]) -> dict[int, str]:
    """1-based line -> the comment on it."""
    found: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
            if token.type == tokenize.COMMENT:
                found[token.start[0]] = token.string
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return found


def _quoted_after(stmt: ast.stmt, lines: list[str], comments: dict[int, str]) -> list[str] | None:
    """The output the issue shows for ``stmt``: ``#:`` lines under it (a transcript), or a
    value in a comment on its last line or on the lines right under it."""
    end = stmt.end_lineno or stmt.lineno
    shown: list[str] = []
    number = end + 1
    # A transcript ends a compound statement with an empty ``...`` line: blank here.
    while number < len(lines) and not lines[number - 1].strip():
        number += 1
    if number > end + 1 and not lines[number - 1].lstrip().startswith(OUTPUT_COMMENT):
        number = end + 1
    first = number
    while number <= len(lines) and lines[number - 1].lstrip().startswith(OUTPUT_COMMENT):
        shown.append(lines[number - 1].lstrip()[len(OUTPUT_COMMENT) :].removeprefix(" ").rstrip())
        number += 1
    if number > first:
        return [line for line in shown if line.strip()]
    if not _is_print(stmt):
        return None
    texts = [comments[end].lstrip("#").strip()] if end in comments else []
    number = end + 1
    while not texts and number <= len(lines) and lines[number - 1].lstrip().startswith("#"):
        texts.append(lines[number - 1].lstrip().lstrip("#").strip())
        number += 1
    values = [t for t in texts if t and _quoted_value(t)]
    return values or None


def _value_comment(stmt: ast.stmt, comments: dict[int, str]) -> list[str] | None:
    """The value a comment on a bare expression's line says it gives, after a result word, as
    a REPL would have shown it: ``torch.std(torch.tensor(4.))  # returns NaN``, ``a.sum()  # ->
    6``. Only a value and nothing else (no "expected 0", "(N, 3)", "nan, not 0"): a comment
    could as well hold the value wanted or a shape, so such a unit never says the output
    changed (see reprojudge.judge_units, ``weak``)."""
    end = stmt.end_lineno or stmt.lineno
    if not isinstance(stmt, ast.Expr) or _is_print(stmt) or end not in comments:
        return None
    said = _RESULT_WORD.match(comments[end].lstrip("#").strip())
    text = said.group(1).strip() if said else ""
    return [text] if text and _quoted_value(text) else None


# "returns", "gives", "->" before the value a comment gives for the expression it is on
_RESULT_WORD = re.compile(
    r"(?:returns?|gives?|outputs?|prints?|evaluates\s+to|->|=>|==?)\s*:?\s*(.*)"
)
# Words a printed value holds: `tensor([nan], dtype=torch.float64, grad_fn=<AddBackward0>)`.
_VALUE_WORDS = frozenset(
    {"tensor", "array", "dtype", "device", "requires_grad", "grad_fn", "Size", "Parameter"}
    | {"containing", "nan", "NaN", "inf", "True", "False", "None", "cpu", "cuda"}
)
_NUMBER = re.compile(r"(?<![\w.])\d+\.?\d*(?:[eE][-+]?\d+)?")


def _quoted_value(text: str) -> bool:
    """A printed value and no other words: not "tensor(nan), expected tensor(0.)"."""
    if "#" in text:
        return False
    data = re.sub(r"<\w+>|'[^']*'|\"[^\"]*\"", "", text)  # grad_fn=<…>, a dict's keys
    words = re.findall(r"[A-Za-z_][\w.]*", _NUMBER.sub("", data))
    if any(w not in _VALUE_WORDS and not w.startswith(("torch.", "np.")) for w in words):
        return False
    if text in ("True", "False", "None", "nan", "inf", "NaN", "-inf"):
        return True
    return is_printed_output(text)


def _is_print(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and dotted(stmt.value.func) == "print"
    )


def _mark_outputs(
    tree: ast.Module,
    lines: list[str],
    result: EditedCode,
    code: str,
    echo_all: bool = False,
    quiet: ast.stmt | None = None,
) -> list[Edit]:
    """Mark top-level statements with quoted output, echo expression statements as a REPL
    does, and echo a bare expression that ends the code (a notebook cell shows its value);
    with ``echo_all`` (inline code: each span a REPL line), every expression statement; never
    ``quiet`` (the statement a comment says should raise: its own marks wrap it)."""
    comments = _comments(lines)
    spans: list[Edit] = []
    echoed = 0
    # Value comments count where the code's last bare expression (its bug line, as a rule)
    # has one: not where they only show lines the prose calls right (`x.var()  # returns 0.5`
    # above the call that goes wrong).
    bare = [s for s in tree.body if isinstance(s, ast.Expr) and not _is_print(s)]
    commented = bool(bare) and _value_comment(bare[-1], comments) is not None
    for index, stmt in enumerate(tree.body):
        shown = _quoted_after(stmt, lines, comments)
        weak = shown is None
        shown = _value_comment(stmt, comments) if weak and commented else shown
        last = index == len(tree.body) - 1
        echo = (
            isinstance(stmt, ast.Expr)
            and stmt is not quiet
            and not _is_print(stmt)
            and (shown is not None or last or echo_all)
        )
        if shown is None and not echo:
            continue
        end = stmt.end_lineno or stmt.lineno
        width = _width(lines, end)
        prefix = ""
        inserts: dict[tuple[int, int], str] = {}
        if echo:
            assert isinstance(stmt, ast.Expr)
            value = stmt.value
            assert value.end_lineno is not None and value.end_col_offset is not None
            # `b, c` echoes one tuple, as the REPL does: not two arguments
            paren = "(" if isinstance(value, ast.Tuple) else ""
            inserts[(value.end_lineno, value.end_col_offset)] = ")" + paren.replace("(", ")")
            prefix = "_repro.echo(" + paren
            echoed += 1
        if shown is not None:
            unit = len(result.units) + 1
            result.units.append({"id": unit, "where": f"line {stmt.lineno}", "actual": shown})
            if weak:
                result.units[-1]["weak"] = True
            # a compound statement (a transcript's `for` loop) cannot follow a `;`
            simple = not _compound(stmt)
            prefix = f"_repro.mark({unit})" + ("; " if simple else "\n") + prefix
            inserts[(end, width)] = inserts.get((end, width), "") + "\n_repro.mark(-1)"
            inserts[(end, width)] += _reference_call(stmt, code, unit)
        # a decorated def or class starts at its first decorator
        first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        spans.append(Edit(first, stmt.col_offset, first, stmt.col_offset, "", prefix))
        spans += [Edit(line, col, line, col, "", text) for (line, col), text in inserts.items()]
    if result.units:
        result.edits.append(
            f"compare what {len(result.units)} statement(s) print with the output the issue shows"
        )
    if echoed:
        result.edits.append(f"echo {echoed} expression value(s), as the REPL or notebook did")
    return spans


def _compound(stmt: ast.stmt) -> bool:
    """``for``, ``with``, ``try``, ``def``, ``match``…: a statement that holds statements."""
    return isinstance(getattr(stmt, "body", None), list) or isinstance(stmt, ast.Match)


def _reference_call(stmt: ast.stmt, code: str, unit: int) -> str:
    """The line that records how far the value ``stmt`` prints is from the same computation in
    float64 (see contribkit.repro.reference), for a quoted output whose value changed; ""
    where no such recomputation exists."""
    value = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(value, ast.Call) and dotted(value.func) == "print":  # print("label", x)
        shown = [a for a in value.args if not isinstance(a, (ast.Constant, ast.JoinedStr))]
        value = shown[0] if len(shown) == 1 and not value.keywords else None
    source = ast.get_source_segment(code, value) if value is not None else None
    if not source or value is None:
        return ""
    reference = recomputed_reference(code, source, stmt.lineno, "_repro.float64")
    if reference is None:
        return ""
    return f"\n_repro.reference({unit}, lambda: ({source}), lambda: ({reference}))"


def _uncalled(tree: ast.Module, loaded: set[str], result: EditedCode) -> list[str]:
    """Calls for the functions and unittest cases the code defines but never runs."""
    calls: list[str] = []
    cases: list[str] = []
    runs_tests = any(
        isinstance(n, ast.Call) and dotted(n.func).endswith(("unittest.main", "run_tests"))
        for n in tree_nodes(tree)
    )
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and not runs_tests:
            if any(dotted(b).rsplit(".", 1)[-1].endswith("TestCase") for b in stmt.bases):
                cases.append(stmt.name)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name not in loaded:
            args = stmt.args
            required = len(args.posonlyargs) + len(args.args) - len(args.defaults)
            required += sum(1 for d in args.kw_defaults if d is None)
            if required == 0:
                call = f"{stmt.name}()"
                if isinstance(stmt, ast.AsyncFunctionDef):
                    call = f"__import__('asyncio').run({stmt.name}())"
                calls.append(call)
    if calls:
        result.edits.append(f"call what the code defines but never calls: {', '.join(calls)}")
    if cases:
        calls.append(f"_repro.run_tests({', '.join(cases)})")
        result.edits.append(f"run the unittest case(s) {', '.join(cases)}")
    return calls


def _own_checks(
    tree: ast.Module, reachable: set[str], result: EditedCode, lines: list[str]
) -> None:
    """Whether the code checks its result itself (assert, assert_close, ``if ...: raise X``) on
    a path that runs: at top level, or in a function or class that is used. An assert whose
    comment says it passes (``# passes, but ...``) shows the bug, so it checks nothing."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name in reachable or isinstance(node, ast.ClassDef):
                stack.extend(node.body)
            continue
        if _is_check(node) and not _PASSES.search(_comment(lines, node)):
            result.own_checks = True
        elif isinstance(node, ast.Call) and dotted(node.func) == "pytest.raises":
            result.check_raises.append("Failed")  # pytest's "DID NOT RAISE"
            result.own_checks = True
        elif isinstance(node, ast.If) and node in tree.body:
            for inner in node.body:
                if isinstance(inner, ast.Raise) and inner.exc is not None:
                    exc = inner.exc.func if isinstance(inner.exc, ast.Call) else inner.exc
                    name = dotted(exc).rsplit(".", 1)[-1]
                    if name:
                        result.check_raises.append(name)
                        result.own_checks = True
        stack.extend(ast.iter_child_nodes(node))


_PASSES = re.compile(
    r"\b(?:pass(?:es|ed)?|succeeds?|succeeded|holds?|works?|ok|fine|true|no\s+error)\b", re.I
)


def _comment(lines: list[str], node: ast.AST) -> str:
    """The comment at the end of ``node``'s first line ("" where none)."""
    number = getattr(node, "lineno", 0)
    line = lines[number - 1] if 0 < number <= len(lines) else ""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return ""
    return " ".join(t.string for t in tokens if t.type == tokenize.COMMENT)


def _is_check(node: ast.AST) -> bool:
    if isinstance(node, ast.Assert):
        return not _precondition(node)
    return isinstance(node, ast.Call) and bool(_ASSERT_CALL.search(dotted(node.func)))


def _precondition(node: ast.Assert) -> bool:
    """An assert that checks no result: of the machine or version, or a true constant (the
    ``assert True`` a test written for an issue ends with; ``assert False`` after a call that
    should raise is a check)."""
    if isinstance(node.test, ast.Constant) and node.test.value:
        return True
    text = ast.unparse(node.test)
    return bool(re.search(r"is_available|__version__|version|device_count|isinstance", text))


def _randomness(tree: ast.Module, result: EditedCode, drawn: bool = False) -> None:
    """``drawn``: an edit defined an input with random values (an undefined ``x`` of a stated
    shape): the reporter's run had other values, so what the code prints from them is not
    deterministic output to compare, seeded or not."""
    names = [dotted(n.func) for n in tree_nodes(tree) if isinstance(n, ast.Call)]
    result.uses_random = drawn or any(RANDOM_CALL.search(name) for name in names if name)
    result.draws = drawn or any(
        RANDOM_CALL.search(name) and not RANDOM_INIT.search(name) for name in names if name
    )
    seeded = any(_SEEDS.search(name) for name in names if name)
    volatile = any(_VOLATILE_CALL.search(name) for name in names if name)
    result.deterministic = (not result.uses_random or seeded) and not volatile and not drawn
    if result.uses_random:
        result.edits.append("seed random, torch and numpy with 0 before the code runs")


def _has_top_level_await(tree: ast.Module) -> bool:
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return False
