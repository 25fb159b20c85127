"""contribkit-no-debug-leftovers: no debugging left in staged Python files (pre-commit).

Finds breakpoint(), pdb/ipdb/pudb imports, set_trace() calls, print() calls whose text starts with
a debug marker such as "[DEBUG]" (hooks.debug_markers), torch._dynamo.config.verbose = True (and
the inductor debug switches), and TORCH_COMPILE_DEBUG / TORCH_LOGS set in library code
(hooks.source_globs). It reads the syntax tree, so strings and comments never count. A
"# contribkit: allow" comment on the line silences it ("# contribkit: allow CK304" only that rule).

Example: contribkit-no-debug-leftovers torch/nn/functional.py
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from types import SimpleNamespace

from contribkit.conventions.globs import fnmatch_matcher
from contribkit.conventions.report import Findings
from contribkit.conventions.rules import RULES, Violation
from contribkit.core.astnames import dotted
from contribkit.hooks._common import (
    HookContext,
    HookSpec,
    allowed_by_pragma,
    read_source,
    run_hook,
)

HOOK_ID = "contribkit-no-debug-leftovers"
DEBUGGERS = frozenset({"pdb", "ipdb", "pudb", "pdbpp", "wdb", "remote_pdb"})
DEBUG_ENV_VARS = frozenset(
    {"TORCH_COMPILE_DEBUG", "TORCH_LOGS", "TORCHDYNAMO_VERBOSE", "TORCH_TRACE"}
)
# dotted suffix of the config attribute -> what it does
DEBUG_CONFIGS = {
    "_dynamo.config.verbose": "dynamo verbose mode",
    "_inductor.config.debug": "inductor debug mode",
    "_inductor.config.trace.enabled": "inductor tracing",
}


def candidate_pattern(markers: Sequence[str], library_code: bool) -> re.Pattern[str]:
    """Text every leftover contains. Only files with a match are parsed, and only the statements
    on matching lines are examined: a syntax tree costs far more than a text search, and most
    staged files have no leftover at all. (No alternative starts with ``\\b`` or ``.``: that
    would defeat the regex engine's first-character scan.)"""
    parts = [
        r"breakpoint\s*\(",
        r"(?:" + "|".join(sorted(DEBUGGERS)) + r")\b",
        r"set_trace\b",
        r"(?:verbose|debug|enabled)\s*(?::[^=\n]*)?\|?=\s*True\b",
    ]
    if markers:
        quoted = "|".join(re.escape(m) for m in markers)
        parts.append(r"print\s*\(\s*[rRuUfF]{0,2}[\"']{1,3}\s*(?:" + quoted + ")")
    if library_code:
        names = "|".join(sorted(DEBUG_ENV_VARS))
        parts += [
            rf"(?:{names})[\"']\s*\]\s*(?::[^=\n]*)?=(?!=)",  # os.environ["X"] = …
            rf"(?:setdefault|putenv)\s*\(\s*[\"'](?:{names})[\"']",
            r"environ\.update\s*\(",
        ]
    return re.compile("|".join(parts))


def _may_have_leftovers(source: str, markers: Sequence[str], library_code: bool) -> bool:
    """A substring test that every file with a leftover passes (cheaper still than the regex)."""
    if any(word in source for word in ("breakpoint", "pdb", "pudb", "wdb", "set_trace")):
        return True
    if "True" in source and any(word in source for word in ("verbose", "debug", "enabled")):
        return True
    if "print" in source and any(marker in source for marker in markers):
        return True
    if not library_code:
        return False
    if any(call in source for call in ("environ.update", "setdefault(", "putenv(")):
        return True
    return any(f"{name}{q}]" in source for name in DEBUG_ENV_VARS for q in "\"'")


def _nodes_on_lines(tree: ast.Module, lines: set[int]) -> Iterator[ast.AST]:
    """The nodes whose source spans one of ``lines``: the rest of the tree cannot hold a
    leftover, since every leftover's text matches the candidate pattern."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        first = getattr(node, "lineno", None)
        if first is not None:
            last = getattr(node, "end_lineno", None) or first
            if not any(first <= line <= last for line in lines):
                continue
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _leading_text(node: ast.AST) -> str | None:
    """The literal text an argument starts with: a string, or an f-string's first part."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        return _leading_text(node.values[0])
    return None


def _env_key(node: ast.AST) -> str | None:
    """``"X"`` for ``os.environ["X"]``, else None."""
    if isinstance(node, ast.Subscript) and dotted(node.value).endswith("environ"):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value
    return None


def _env_keys_set_by_call(call: ast.Call) -> Iterator[str]:
    """Keys set by ``os.environ.setdefault/update(...)`` and ``os.putenv(...)``."""
    name = dotted(call.func)
    if name.endswith(("environ.setdefault", "putenv")) and call.args:
        first = call.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            yield first.value
    elif name.endswith("environ.update"):
        for arg in call.args:
            if isinstance(arg, ast.Dict):
                for key in arg.keys:
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        yield key.value
        for keyword in call.keywords:
            if keyword.arg:
                yield keyword.arg


def find_leftovers(
    source: str,
    markers: Sequence[str],
    library_code: bool,
    candidates: re.Pattern[str] | None = None,
) -> list[tuple[ast.AST, str, str]]:
    """``(node, rule id, message)`` for each leftover in ``source``; pure.

    ``library_code`` enables the environment-variable rule, which test and tool code may break.
    ``candidates`` is :func:`candidate_pattern` for the same arguments, when already compiled.
    """
    if not _may_have_leftovers(source, markers, library_code):
        return []
    pattern = candidates or candidate_pattern(markers, library_code)
    lines = {source.count("\n", 0, m.start()) + 1 for m in pattern.finditer(source)}
    if not lines:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []  # not ours to report: the linters will
    found: list[tuple[ast.AST, str, str]] = []
    for node in _nodes_on_lines(tree, lines):
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            if name == "breakpoint":
                found.append((node, "CK301", "breakpoint() call"))
            elif name == "set_trace" or name.endswith(".set_trace"):
                found.append((node, "CK303", f"{name}() call"))
            elif name == "print" and node.args:
                text = _leading_text(node.args[0])
                if text is not None:
                    marker = next((m for m in markers if text.lstrip().startswith(m)), None)
                    if marker:
                        found.append((node, "CK304", f"print() of debug text starting {marker!r}"))
            if library_code:
                for key in _env_keys_set_by_call(node):
                    if key in DEBUG_ENV_VARS:
                        found.append((node, "CK306", f"{key} set in library code"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in DEBUGGERS:
                    found.append((node, "CK302", f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom):
            if node.module and node.module.split(".")[0] in DEBUGGERS:
                found.append((node, "CK302", f"from {node.module} import …"))
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            for target in targets:
                name = dotted(target)
                switch = next((w for s, w in DEBUG_CONFIGS.items() if name.endswith(s)), None)
                if switch and isinstance(value, ast.Constant) and value.value is True:
                    found.append((node, "CK305", f"{name} = True ({switch})"))
                env_key = _env_key(target)
                if library_code and env_key in DEBUG_ENV_VARS:
                    found.append((node, "CK306", f'os.environ["{env_key}"] set in library code'))
    return found


def check(args: SimpleNamespace, ctx: HookContext) -> Findings:
    markers = ctx.get_list("debug_markers")
    patterns = {library: candidate_pattern(markers, library) for library in (False, True)}
    is_source = fnmatch_matcher(ctx.get_list("source_globs"))
    is_test = fnmatch_matcher(ctx.get_list("test_globs"))
    violations = []
    for path in args.files:
        source = read_source(path)
        if source is None:
            continue
        library = is_source(path) and not is_test(path)
        leftovers = find_leftovers(source, markers, library, patterns[library])
        lines = source.splitlines() if leftovers else []
        for node, rule_id, message in leftovers:
            first = getattr(node, "lineno", 1)
            last = getattr(node, "end_lineno", None) or first
            if ctx.enabled(rule_id) and not allowed_by_pragma(lines, first, last, rule_id):
                violations.append(Violation(RULES[rule_id], message, line=first, path=path))
    violations.sort(key=lambda v: (v.path or "", v.line or 0))
    return Findings(violations, recovery="remove them, git add the files, and commit again")


SPEC = HookSpec(HOOK_ID, __doc__, "CK3", files="many", files_help="Python files to check")


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(SPEC, check, argv)


if __name__ == "__main__":
    raise SystemExit(main())
