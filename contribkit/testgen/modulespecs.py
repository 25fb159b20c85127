"""``contribkit test --module``: a test of an ``nn.Module`` that checks what ``test_modules.py``
does not (the user's ``--check``, the module's documented property, that gradients reach every
parameter and input), in train mode where the module's behaviour depends on it.

With a ModuleInfo it is PyTorch's own idiom, ``@modules`` over ``module_inputs_func``; without
one, the module built from ``--init`` (or filled-in arguments) on one input. Either way the
probe (``probes/test_target.py``) ran the same checks on CPU first.
"""

from __future__ import annotations

from typing import Any

from contribkit.core.errors import BadInput
from contribkit.core.render import render
from contribkit.testgen.areas import cpu_comparison_name, slug
from contribkit.testgen.pyedit import ImportSpec
from contribkit.testgen.specs import (
    DEFAULT_DTYPES,
    MAKE_TENSOR,
    MODULE_PROPERTIES,
    PROBE_SHAPES,
    TORCH,
    MethodSpec,
    _need_generic,
    _probe_failed,
    allowed_dtypes,
    dtype_test,
    left_out,
)

COMMON_MODULES = "torch.testing._internal.common_modules"
TREE_LEAVES = ImportSpec("torch.utils._pytree", "tree_leaves")
# The generic suite that already compares every ModuleInfo across devices, and what else it runs.
PARITY = "test_modules.py's TestModule.test_cpu_gpu_parity"
MODULE_WORDS = {"check": "property", "grad": "gradients"}


def module_spec(
    result: dict[str, Any],
    init: str | None,
    name: str | None = None,
    generic: bool = True,
    check: str | None = None,
) -> MethodSpec:
    """An ``@modules`` test for a module with a ModuleInfo; else a test that builds it."""
    _probe_failed(result)
    query = result["query"]
    if "module" not in result:
        suggestions = result.get("suggestions") or []
        what = (
            "is not a torch.nn.Module subclass" if result.get("not_a_module") else "is not a module"
        )
        raise BadInput(
            f"'{query}' {what}",
            hint=f"did you mean: {', '.join(suggestions)}?"
            if suggestions
            else "e.g. --module torch.nn.Unfold",
        )
    info = result["module"]
    notes = []
    if "moduledb_error" in result:
        notes.append(f"module_db is not importable here ({result['moduledb_error']})")
    if "module_info" in info:
        return _module_info_spec(info, name, generic, notes, check)
    if info.get("shape") is None:
        _no_plain_module_test(info)
    return _plain_module_spec(info, init, name, generic, notes, check, result.get("devices"))


def _words(info: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The checks the test makes: the test name's words and what the docstring says."""
    checks = info["checks"]
    doc = MODULE_PROPERTIES.get(info["name"].rsplit(".", 1)[-1])
    words, what = [], []
    if checks.get("check"):
        words.append("property")
        what.append("the --check property")
    if checks.get("doc") and doc:
        words.append(doc[0])
        what.append("its documented property")
    if checks.get("grad"):
        words.append("gradients")
        what.append("gradients")
    return words, what


def _check_context(
    info: dict[str, Any], check: str | None, notes: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """The template's values for the checks, the test name's words; notes on what was left out."""
    qualname = info["name"]
    checks = info["checks"]
    doc = MODULE_PROPERTIES.get(qualname.rsplit(".", 1)[-1])
    words, what = _words(info)
    if not words:
        raise BadInput(
            f"{qualname} has no property to test here: gradients do not reach it "
            f"({info['checks_left_out'].get('grad', 'no gradients')})",
            hint="name the property to test: --check EXPR (over result, module, inputs); or "
            "start from a skeleton: --name NAME --area nn",
        )
    if not info["chosen"]:
        failures = "; ".join(f"{d}: {why}" for d, why in info["failures"].items())
        raise BadInput(
            f"the checks of {qualname} fail on CPU for every dtype ({failures})",
            hint="check --check EXPR, or write the test from a skeleton: --name NAME --area nn",
        )
    notes.extend(f"left out {d}: {why}" for d, why in info["failures"].items())
    for part, why in info["checks_left_out"].items():
        label = f"its documented property ({doc[2]})" if part == "doc" and doc else "gradients"
        notes.append(f"no check of {label}: {why}")
    context = {
        "check": check if checks.get("check") else "",
        "doc": doc[1] if checks.get("doc") and doc else "",
        "doc_text": f"{qualname}: {doc[2]}" if doc else "",
        "grad": bool(checks.get("grad")),
        "what": " and ".join([", ".join(what[:-1]), what[-1]] if len(what) > 1 else what),
        "mode": " in train mode" if info.get("train_dependent") else "",
    }
    return context, words


def _module_info_spec(
    info: dict[str, Any], name: str | None, generic: bool, notes: list[str], check: str | None
) -> MethodSpec:
    """``@modules`` over the ModuleInfo's inputs; train mode only where train and eval differ."""
    qualname = info["name"]
    context, words = _check_context(info, check, notes)
    _need_generic(generic, "a module")
    notes.append(
        f"{PARITY} already compares {qualname} on each device with CPU (and test_grad and "
        f"test_gradgrad gradcheck it): for a device mismatch, add the failing input to "
        f"{info['inputs_func']}, or a DecorateInfo(unittest.expectedFailure, 'TestModule', "
        "'test_cpu_gpu_parity', ...) entry to its ModuleInfo's skips, rather than a new comparison"
    )
    if info.get("parity_skipped"):
        notes.append(
            "its ModuleInfo skips test_cpu_gpu_parity: the CUDA variant may disagree with CPU"
        )
    dtypes = info["chosen"]
    arguments = [
        f"[info for info in module_db if info.module_cls is {qualname}],",
        allowed_dtypes(dtypes),
    ]
    imports = [
        TORCH,
        ImportSpec(COMMON_MODULES, "module_db"),
        ImportSpec(COMMON_MODULES, "modules"),
    ]
    if info.get("train_dependent"):
        arguments.append("train_eval_mode=TrainEvalMode.train_only,")
        imports.append(ImportSpec(COMMON_MODULES, "TrainEvalMode"))
        notes.append(
            f"{qualname}'s ModuleInfo says train and eval differ (train_and_eval_differ): the "
            "test runs it in train mode (test_modules.py's tests run both)"
        )
    decorator = "modules(\n" + "".join(f"    {a}\n" for a in arguments) + ")"
    if context["grad"]:
        imports.append(TREE_LEAVES)
    thing = slug(qualname.rsplit(".", 1)[-1], limit=60)
    test = name or f"test_{thing}_{'_'.join(words)}"
    method = render(
        "test_method.py.j2",
        kind="module_info",
        decorators=[decorator],
        name=test,
        params="self, device, dtype, module_info, training",
        qualname=qualname,
        **context,
    )
    area = "quantization" if qualname.startswith("torch.ao.") else "nn"
    return MethodSpec(
        source="module",
        name=test,
        method=method,
        imports=imports,
        generic=True,
        dtypes={"cpu": dtypes, "cuda": dtypes},
        only=None,
        dynamo=False,
        area=area,
        area_reason="the module's package",
        thing=thing,
        notes=notes,
        infix=info["formatted_name"],
    )


def _plain_module_spec(
    info: dict[str, Any],
    init: str | None,
    name: str | None,
    generic: bool,
    notes: list[str],
    check: str | None,
    devices: list[str] | None,
) -> MethodSpec:
    """The module built from --init (or filled-in arguments) on one input, checked in its train
    mode; with nothing to check, compared with CPU on CUDA only, where there is a second device."""
    qualname = info["name"]
    how = (
        " (from --init)"
        if init is not None
        else " (required arguments filled in by name; --init chooses others)"
        if info["required"]
        else ""
    )
    shape = str(tuple(info["shape"]))
    notes.append(
        f"{qualname} has no ModuleInfo: the test builds {qualname}({info['init']}){how} and "
        f"runs it on one input of shape {shape} in the default dtypes "
        f"({', '.join(DEFAULT_DTYPES)}); a ModuleInfo in common_modules.py would give it "
        "test_modules.py's suites"
    )
    thing = slug(qualname.rsplit(".", 1)[-1], limit=60)
    area = "quantization" if qualname.startswith("torch.ao.") else "nn"
    placement = (area, "the module's package", thing)
    if not any(info["checks"].values()) and "cuda" in (devices or []):
        failures = info.get("compare_failures", {})
        chosen = [d for d in DEFAULT_DTYPES if d not in failures]
        notes.extend(left_out(failures))
        notes.append("nothing to check but a comparison with CPU: on CUDA only")
        return dtype_test(
            "module",
            name or cpu_comparison_name(thing),
            [],
            chosen,
            [ImportSpec("copy"), MAKE_TENSOR],
            placement,
            notes,
            kind="module",
            qualname=qualname,
            init=info["init"],
            shape=shape,
        )
    context, words = _check_context(info, check, notes)
    _need_generic(generic, "a module")
    if info.get("train_dependent"):
        notes.append(
            f"{qualname} behaves differently in train mode: the test runs it in train mode"
        )
    return dtype_test(
        "module",
        name or f"test_{thing}_{'_'.join(words)}",
        info["chosen"],
        info["chosen"],
        [MAKE_TENSOR, *([TREE_LEAVES] if context["grad"] else [])],
        placement,
        notes,
        kind="module_checks",
        qualname=qualname,
        init=info["init"],
        shape=shape,
        **context,
    )


def _no_plain_module_test(info: dict[str, Any]) -> None:
    """Why a module without a ModuleInfo cannot be built and run (the probe's finding)."""
    qualname = info["name"]
    example = ", ".join(f"{p}=..." for p in info["required"]) or "..."
    init_hint = f"pass its constructor arguments: --init '{example}'"
    if "unfilled" in info:
        raise BadInput(
            f"{qualname} has no ModuleInfo in this torch, and contribkit cannot fill its "
            f"argument{'s' if len(info['unfilled']) > 1 else ''} {', '.join(info['unfilled'])}",
            hint=init_hint,
        )
    if "init_error" in info:
        text, error = info["init_error"]
        raise BadInput(
            f"{qualname} has no ModuleInfo in this torch, and {qualname}({text}) fails: {error}",
            hint=init_hint,
        )
    text, error = info["shape_error"]
    tried = ", ".join(str(tuple(s)) for s in PROBE_SHAPES)
    raise BadInput(
        f"{qualname}({text}) accepts no float input of shape {tried} (last error: {error})",
        hint=f"try other arguments with --init '{example}', or start from a skeleton: --name NAME --area nn",
    )
