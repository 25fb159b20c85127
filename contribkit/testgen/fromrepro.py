"""A regression test from a repro folder written by ``contribkit repro``: read the folder
(:func:`read_repro`), then turn the issue's code and the repro's check, or its failure
signature, into one test method (:func:`repro_spec`).
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contribkit.core.astnames import source_lines
from contribkit.core.errors import BadInput
from contribkit.core.render import render
from contribkit.target.reproexpect import TWO_RUNS
from contribkit.testgen.areas import repro_area, slug
from contribkit.testgen.expectbodies import expect_body
from contribkit.testgen.oracles import (
    OracleBody,
    assert_body,
    crash_body,
    has_oracle_evidence,
    message_body,
    pick_oracle,
    quoted_output_body,
    strip_runtime,
)
from contribkit.testgen.pyedit import ImportSpec, block_at_column_zero, indent_block, rename
from contribkit.testgen.rewrite import (
    draws_random,
    drop_no_ops,
    eager_compiled_pairs,
    hoist_imports,
    rewrite_cuda,
    take_result,
    unwrap_main,
)
from contribkit.testgen.specs import TORCH, TREE_MAP, MethodSpec, decorator_imports, file_imports
from contribkit.testgen.tidy import (
    as_assertions,
    drop_no_op_expressions,
    drop_output_comments,
    drop_prints,
)
from contribkit.testgen.verdict import Gate

CODE_START = "# ---- the issue's code ("
CODE_END = "# ---- end of the issue's code ----"
_MASKS = re.compile(r"<addr>|<path>|<n>")


@dataclass
class ReproSource:
    dir: Path
    meta: dict[str, Any]
    code: str  # the code, as repro.py holds it now
    check: str | None  # check()'s body (docstring dropped), moved to column 0
    notes: list[str] = field(default_factory=list)


def resolve_repro_dir(value: str, repros_root: Path) -> Path:
    """A repro folder, a path to its repro.py or meta.json, or an issue number."""
    if value.isdigit():
        return repros_root / f"issue-{value}"
    path = Path(value)
    return path.parent if path.name in ("repro.py", "meta.json") else path


def read_repro(folder: Path) -> ReproSource:
    if not folder.is_dir():
        raise BadInput(f"{folder} is not a repro folder", hint="write one with: contribkit repro N")
    meta_path = folder / "meta.json"
    if not meta_path.is_file():
        raise BadInput(
            f"{folder} has no meta.json",
            hint="--from-repro reads the folders `contribkit repro N` writes",
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(
            f"{meta_path} is not valid JSON ({exc})",
            hint="regenerate it with contribkit repro N --force",
        ) from exc
    if not isinstance(meta, dict) or "kind" not in meta:
        raise BadInput(
            f"{meta_path} is not a contribkit repro's meta.json",
            hint="regenerate it with contribkit repro N --force",
        )
    script = folder / "repro.py"
    try:
        text = script.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(
            f"{script} cannot be read ({exc.strerror or exc})",
            hint="regenerate it with contribkit repro N --force",
        ) from exc
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise BadInput(
            f"{script}:{exc.lineno}: syntax error: {exc.msg}", hint="fix repro.py first"
        ) from exc
    lines = source_lines(text)
    starts = [i for i, line in enumerate(lines) if line.startswith(CODE_START)]
    ends = [i for i, line in enumerate(lines) if line.rstrip() == CODE_END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise BadInput(
            f"{script} has lost the markers around the issue's code",
            hint=f"keep the lines '{CODE_START}…) ----' and '{CODE_END}' around it",
        )
    code = "".join(lines[starts[0] + 1 : ends[0]])
    # the script's own statements: a `def check()` of the code is not the repro's
    tree.body = [n for n in tree.body if not starts[0] < n.lineno - 1 < ends[0]]
    reason = _incomplete_reason(tree)
    stated = meta.get("expect") if isinstance(meta.get("expect"), str) else None
    if reason == _STUB and stated:
        reason = None  # the stated oracle decides, not check()
    if reason:
        raise BadInput(
            f"{folder} is INCOMPLETE: {reason}",
            hint=f"complete the repro first (until `contribkit run {folder}` gives a verdict other than CANNOT_RUN INCOMPLETE)",
        )
    check = None
    notes = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            if not body or (stated and reason is None and _is_stub(body)):
                break
            start, end = body[0].lineno, body[-1].end_lineno or body[-1].lineno
            check = block_at_column_zero("".join(lines[start - 1 : end]), body[0].col_offset)
    if meta.get("incomplete") and check is not None:
        notes.append("meta.json says INCOMPLETE, but check() in repro.py is filled in: it is used")
    if (
        check is None
        and not stated
        and not meta.get("signature_parts")
        and not has_oracle_evidence(meta)
        and inferred_expect(meta, None) is None
        and inferred_expect(meta, _NO_ERROR[0]) is None
    ):
        raise BadInput(f"{folder} {_nothing_to_test(meta)}", hint=_NOTHING_HINT)
    return ReproSource(folder, meta, code, check, notes)


_NOTHING_HINT = "fill in check() in repro.py so that it fails while the bug is present"


def _nothing_to_test(meta: dict[str, Any]) -> str:
    """Why a repro gives no test: what it lacks, and what its oracles are instead."""
    oracles = [o for o in meta.get("oracles") or [] if isinstance(o, str)]
    what = "has neither a failure signature nor a check()"
    if "evidence" not in meta:
        return f"{what}, and its meta.json predates the oracles' evidence (regenerate it)"
    if not oracles:
        return f"{what}, nor an assert, crash or quoted output to test (it has no oracle)"
    return (
        f"{what}, nor an assert, crash or quoted output to test (its oracles: {', '.join(oracles)})"
    )


def _called_name(func: ast.expr) -> str | None:
    """``f`` for ``f(...)`` and ``x.f(...)``."""
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _incomplete_reason(tree: ast.Module) -> str | None:
    for node in ast.walk(tree):
        # Repro(...) in scripts of old, _runtime().Repro(...) since the runtime is a sibling module
        if isinstance(node, ast.Call) and _called_name(node.func) == "Repro":
            for kw in node.keywords:
                if kw.arg == "incomplete":
                    try:
                        value = ast.literal_eval(kw.value)
                    except ValueError:
                        return None
                    return str(value) if value else None
        if isinstance(node, ast.FunctionDef) and node.name == "check" and _is_stub(node.body):
            return _STUB
    return None


_STUB = "check() in repro.py is not filled in yet"


def _is_stub(body: list[ast.stmt]) -> bool:
    return any(
        isinstance(stmt, ast.Raise) and "NotImplementedError" in ast.unparse(stmt) for stmt in body
    )


def _signature_checks(parts: dict[str, str]) -> dict[str, Any]:
    exc_type = parts["exc_type"]
    short = exc_type.rsplit(".", 1)[-1]
    builtin = getattr(builtins, short, None)
    is_builtin = (
        exc_type == short and isinstance(builtin, type) and issubclass(builtin, BaseException)
    )
    pieces = [p.strip() for p in _MASKS.split(parts.get("message") or "")]
    fragment = max(pieces, key=len) if pieces else ""
    fragment = fragment if len(fragment) >= 8 else ""
    matches = [*([] if is_builtin else ["same_type"]), *(["same_message"] if fragment else [])]
    return {
        "catch": short if is_builtin else "Exception",
        "exc_name": "" if is_builtin else short,
        "fragment": fragment,
        "matches": matches,
    }


def repro_spec(
    src: ReproSource, name: str | None = None, generic: bool = True, gate: Gate | None = None
) -> MethodSpec:
    """A regression test from a repro: the issue's code on `device`, then the repro's check; or
    a failure naming the issue while the issue's error is raised; or, by the oracle that decided
    the verdict, the issue's own checks, a crash in a child process, or its quoted output (see
    ``oracles``). ``gate``: what the repro's verdict allows (a device, notes, the oracle)."""
    meta = src.meta
    gate = gate or Gate()
    number = meta.get("number") if isinstance(meta.get("number"), int) else None
    ref = (
        (f"{meta['repo']}#{number}" if meta.get("repo") else f"#{number}")
        if number
        else src.dir.name
    )
    dynamo = bool(meta.get("uses_compile"))
    stated = _stated(src) or (inferred_expect(meta, gate.oracle) if src.check is None else None)
    requires_cuda = bool(meta.get("requires_cuda")) or gate.device == "cuda"
    requires_cuda = requires_cuda or bool(stated and stated.startswith("device-vs-cpu"))
    fail_prefix = f"{ref} is back: the code raises the issue's error again: "
    oracle = "expect" if stated else _oracle(src, gate)
    in_child = oracle == "crash" or stated == "crash"
    code, hoisted, uses_device, notes = _test_code(src, dynamo, requires_cuda, not in_child)
    signature = meta.get("signature_parts") if src.check is None and oracle is None else None
    if oracle is None:
        code = strip_runtime(code)[0]  # the repro's echo and mark calls are not the test's
    check = (
        indent_block(as_assertions(rename(src.check, "DEVICE", "device")), "    ")
        if src.check
        else None
    )
    code = drop_no_ops(code)
    decorators, only, preamble, device_imports = _device_setup(generic, requires_cuda, uses_device)
    if only == "cpu" and not uses_device:
        notes.append("the code does not use a device: the test runs on CPU only")
    result_check: dict[str, Any] = {}
    if oracle is not None:
        body = _oracle_body(src, oracle, code, ref, uses_device, gate)
        code, checks = body.code, body.checks
        device_imports, notes = [*device_imports, *body.imports], [*notes, *body.notes]
    elif signature:
        code, result_check, check_imports, what = _crash_check(
            code, dynamo, generic and only is None, hoisted
        )
        device_imports = [*device_imports, *check_imports]
        checks = f"Fails while the code raises the issue's {signature['exc_type']}{what}."
    else:
        code = drop_no_op_expressions(drop_prints(code))
        comparison = meta.get("comparison") or {}
        checks = "Fails while the repro's check fails"
        if comparison.get("actual") and comparison.get("expected"):
            checks += f" ({comparison['actual']} against {comparison['expected']})"
        checks += "."
    title_slug = slug(meta.get("title") or "")
    default_name = f"test_issue_{number}" if number else f"test_{slug(src.dir.name)}"
    test = name or (f"{default_name}_{title_slug}" if title_slug else default_name)
    body_indent = "        " if signature else "    "
    method = render(
        "test_method.py.j2",
        kind="repro",
        decorators=decorators,
        name=test,
        params="self, device" if generic else "self",
        ref=ref,
        title=meta.get("title") or "",
        url=meta.get("url") or "",
        checks=checks,
        preamble=preamble,
        signature=bool(signature),
        code=indent_block(code, body_indent).rstrip("\n") or f"{body_indent}pass",
        check=check.rstrip("\n") if check else "",
        fail_prefix=fail_prefix,
        **result_check,
        **(_signature_checks(signature) if signature else {}),
    )
    thing = f"issue_{number}" if number else slug(src.dir.name)
    area, reason = repro_area(meta)
    return MethodSpec(
        source="repro",
        name=test,
        method=method,
        imports=[TORCH, *hoisted, *device_imports, *decorator_imports(decorators)],
        generic=generic,
        dtypes={"cpu": [], "cuda": []},
        only=only,
        dynamo=dynamo,
        area=area,
        area_reason=reason,
        thing=thing,
        notes=[*gate.notes, *src.notes, *notes],
    )


def _crash_check(
    code: str, dynamo: bool, device_generic: bool, hoisted: list[ImportSpec]
) -> tuple[str, dict[str, Any], list[ImportSpec], str]:
    """How a crash test checks the code's result once it runs: eager against compiled where the
    code compiles a function; else, for code on a generic `device`, the result against the same
    code run on CPU; else that the result holds no inf or nan. Returns the code (its last
    expression may now be assigned), the template's context, the imports it needs, and the
    docstring's words for the check."""
    pairs = eager_compiled_pairs(code) if dynamo else []
    code, result = take_result(code)
    code = drop_no_op_expressions(drop_prints(code))
    context: dict[str, Any] = {
        "eager_vs_compiled": pairs,
        "result": result or "",
        "reference": "",
        "seed": False,
    }
    if pairs or result is None:
        return code, context, [], "; eager and compiled results must agree" if pairs else ""
    if not device_generic:
        what = f"; its result `{result}` must hold no inf or nan"
        return code, context, [ImportSpec("torch.utils._pytree", "tree_leaves")], what
    imported = {i.bound: f"{i.module}.{i.name}" if i.name else i.module for i in hoisted}
    randomness = draws_random(code, imported)
    if randomness == "device":
        context["reference"] = "metadata"
        return (
            code,
            context,
            [TREE_MAP],
            "; its result's shapes and dtypes must match CPU's",
        )
    context.update(reference="values", seed=randomness == "cpu")
    return code, context, [], "; its result on `device` must match CPU's"


def _oracle_body(
    src: ReproSource,
    oracle: str,
    code: str,
    ref: str,
    uses_device: bool,
    gate: Gate,
) -> OracleBody:
    """The test body for ``oracle``, as ``gate`` (the repro's verdicts) allows it."""
    where = str(src.dir)
    force, gate_oracle = gate.force, gate.oracle
    # Reproduced on this machine's run of CUDA code: the bug shows on the CPU, and CPU is no
    # reference for it (dev 20551: the CPU norm, 2.4% off float64, is the wrong value).
    reproduced_here = gate.expect_failure is True and gate.device is None
    if oracle == "expect":
        stated = _stated(src)
        if stated is None and gate_oracle == _NO_ERROR[0]:
            said = "the issue reports an error, not its text"
            return expect_body(_NO_ERROR[2], code, ref, uses_device, said)
        stated = stated or inferred_expect(src.meta, gate_oracle)
        assert stated is not None
        return expect_body(stated, code, ref, uses_device)
    if oracle == "assert":
        return assert_body(code, where)
    if oracle == "message":  # the error now says what the issue asked its message to say
        exc_type = str((src.meta.get("signature_parts") or {}).get("exc_type") or "Exception")
        wanted = list((src.meta.get("evidence") or {}).get("message_wants") or [])
        return message_body(code, exc_type, wanted, f"{ref} is back: ")
    if oracle == "crash":
        prefix = f"{ref} is back: the code crashes the process again: killed by "
        quantized = bool((src.meta.get("evidence") or {}).get("quantized"))
        return crash_body(code, prefix, uses_device, engines=quantized)
    evidence, stated = src.meta.get("evidence") or {}, src.meta.get("expected_text")
    return quoted_output_body(
        code,
        evidence,
        where,
        force,
        stated if isinstance(stated, str) else None,
        compiled=bool(src.meta.get("uses_compile")),
        fail_prefix=f"{ref} is back: ",
        on_device=uses_device and evidence.get("reported_device") == "cuda" and not reproduced_here,
    )


# The inferred oracles that torch._dynamo's counts, a second run or the warnings the code
# raised decide, as the --expect that checks the same (their evidence key, then how to say
# it): a test from them is the stated oracle's test.
_INFERRED_ORACLES: dict[str, tuple[str, Callable[[dict[str, Any]], str]]] = {
    "graph-breaks": ("graph_breaks", lambda ev: "graph-breaks"),
    "graph-break": ("graph_break", lambda ev: "graph-breaks"),
    "recompiles": ("recompiles", lambda ev: f"recompiles:{int(ev['recompiles']['allowed'])}"),
    "determinism": ("determinism", lambda ev: "determinism"),
    "warning": ("warning", lambda ev: "warning:" + warning_text(ev["warning"])),
    # the error the issue says should be raised: the test fails while the code runs clean
    "missing-error": ("missing_error", lambda ev: _missing_error_expect(ev["missing_error"])),
}


def _missing_error_expect(wanted: dict[str, Any]) -> str:
    """``no-error``'s test fails while the code runs clean: not where a line of the code fails
    as it should (a control), whose error would pass the test with the bug back."""
    if wanted.get("control"):
        raise ValueError("a line of the code fails as wanted: any error would pass the test")
    return "no-error"


def warning_text(warning: dict[str, str]) -> str:
    """The start of the warning the issue quotes, up to its first word that holds a digit or a
    path (sizes and versions differ between runs, as the script's match masks them) and 60
    characters at most: what a test looks for in the warnings the code raises."""
    text = ""
    for word in " ".join(str(warning["message"]).split()).split(" "):
        if any(c.isdigit() for c in word) or "/" in word or len(text) + 1 + len(word) > 60:
            break
        text = (text + " " + word).strip()
    return text or str(warning["category"])


# The no-error oracle: the issue reports an error without quoting it (no traceback, so no
# signature), and the code now runs to its end. Its test is ``--expect error``'s: it fails
# while the code raises any error. Only where that oracle decided the verdict (NOT_REPRODUCED,
# checked once before writing: with no error text to match, the code must have been seen to
# run clean), or its twin, ``error`` (REPRODUCED: a torch operation raised an error). The
# class: a compile issue that says "fullgraph=True causes error" beside the call (dev set
# 181817, a set_stance fallback), and an issue that says indexing "raises an error for me" with
# no traceback (tests/testgen/test_fromrepro_oracles.py's fixture).
_NO_ERROR = ("no-error", "reports_error", "error")


def inferred_expect(meta: dict[str, Any], decided: str | None) -> str | None:
    """The ``--expect`` that checks what the inferred graph-break(s), recompiles, determinism
    or no-error oracle checked: the one that decided the verdict, else (not known) the first
    of the first four present when no assert, crash or quoted-output oracle is."""
    evidence = meta.get("evidence")
    if not isinstance(evidence, dict):
        return None
    no_error, reported, as_expect = _NO_ERROR
    if decided in (no_error, as_expect):  # run clean (NOT_REPRODUCED), or raised (REPRODUCED)
        return as_expect if evidence.get(reported) else None
    if decided is None and has_oracle_evidence(meta):
        return None
    for name, (key, say) in _INFERRED_ORACLES.items():
        if evidence.get(key) and decided in (None, name):
            try:
                return say(evidence)
            except (KeyError, TypeError, ValueError):
                return None
    return None


def _stated(src: ReproSource) -> str | None:
    """The oracle the user stated (``repro --expect``) that the test follows, or None: a
    compile-vs-eager or device-vs-cpu repro with a check() of its own keeps that check."""
    stated = src.meta.get("expect")
    if not isinstance(stated, str) or not stated:
        return None
    if src.check is not None and stated.split(":", 1)[0] in TWO_RUNS:
        return None
    return stated


def _oracle(src: ReproSource, gate: Gate) -> str | None:
    """The oracle (assert, crash, quoted-output) the test is written for, or None for a test
    from check() or the failure signature. Raises BadInput when the verdict's oracle gives no
    test."""
    if src.check is not None:
        return None
    chosen = pick_oracle(src.meta, gate.oracle)
    signature = src.meta.get("signature_parts")
    if signature and (chosen is None or gate.oracle in (None, "signature")):
        return None
    if chosen is None:
        decided = f"its {gate.oracle} oracle" if gate.oracle else "no oracle a test can use"
        raise BadInput(
            f"{src.dir}: the repro's verdict was decided by {decided}, and it "
            f"{_nothing_to_test(src.meta).removeprefix('has ')}",
            hint=_NOTHING_HINT,
        )
    return chosen


def _test_code(
    src: ReproSource, dynamo: bool, requires_cuda: bool, hoist: bool = True
) -> tuple[str, list[ImportSpec], bool, list[str]]:
    """The issue's code as a test body: main block unwrapped, CUDA uses on `device` when the
    test is CUDA-only, ``DEVICE`` renamed ``device``, imports taken out for the file's block
    (unless not ``hoist``: code a child process runs keeps them)."""
    try:
        code = unwrap_main(src.code)
    except SyntaxError as exc:
        raise BadInput(
            f"the issue's code in {src.dir / 'repro.py'} does not parse (line {exc.lineno} of the code: {exc.msg})",
            hint="fix it in repro.py first",
        ) from exc
    code = drop_output_comments(code)
    if requires_cuda:
        code = rewrite_cuda(code)
    tree = ast.parse(code)
    uses_device = any(isinstance(n, ast.Name) and n.id == "DEVICE" for n in ast.walk(tree))
    notes = []
    if any(isinstance(n, ast.Global) for n in ast.walk(tree)):
        notes.append(
            "the code uses `global`, which inside a test method means the test file's globals: check it"
        )
    code = rename(code, "DEVICE", "device")
    if not hoist:
        return code.strip("\n") + "\n", [], uses_device, notes
    harness = {spec.bound: spec for spec in file_imports(dynamo)}
    code, hoisted, hoist_notes = hoist_imports(code, harness)
    return code.strip("\n") + "\n", hoisted, uses_device, [*notes, *hoist_notes]


def _device_setup(
    generic: bool, requires_cuda: bool, uses_device: bool
) -> tuple[list[str], str | None, list[str], list[ImportSpec]]:
    """Decorators, the one device type it runs on (if any), preamble lines and their imports.

    A device-generic test takes `device`: @onlyCUDA when the code needs CUDA, @onlyCPU when it
    uses no device at all. In a plain class the test sets `device` itself, and is skipped
    without CUDA when the code needs it.
    """
    if generic:
        if requires_cuda:
            return ["onlyCUDA"], "cuda", [], []
        return ([], None, [], []) if uses_device else (["onlyCPU"], "cpu", [], [])
    if requires_cuda:
        return (
            ['unittest.skipIf(not TEST_CUDA, "requires CUDA")'],
            "cuda",
            ['device = "cuda"'],
            [ImportSpec("torch.testing._internal.common_cuda", "TEST_CUDA")],
        )
    return [], "cpu", ['device = "cpu"'] if uses_device else [], []
