# Runs in the target interpreter (any Python 3.8+); prints one JSON line. Never imported by contribkit.
# `contribkit op`'s view of the target torch. Two modes:
#   (no arguments)  what holds for every operator (cached per torch build): where torchgen's packaged
#                   yaml lives, the decompositions (torch._decomp, torch._refs), inductor's lowerings,
#                   fallbacks and decompositions, the OpInfos by aten name, the torch.nn.functional
#                   wrappers by the op they call, and the public names of torch's namespaces.
#   trace OVERLOAD  the dispatch table torch computed for aten::OVERLOAD, and the aten ops that run
#                   for one small sample call (under a TorchDispatchMode).
import ast
import contextlib
import json
import os
import re
import sys
import sysconfig
import warnings
from typing import Any

warnings.filterwarnings("ignore")
for name in ("TORCH_LOGS", "TORCH_LOGS_OUT", "TORCH_TRACE"):
    os.environ.pop(name, None)
result: "dict[str, Any]" = {"purelib": sysconfig.get_paths()["purelib"], "errors": {}}


def emit() -> None:
    print("CONTRIBKIT_PROBE " + json.dumps(result))
    sys.exit(0)


def short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return type(exc).__name__ + (": " + text[0][:200] if text else "")


def op_name(op: Any) -> str:
    """aten.add.Tensor -> add.Tensor; aten.relu.default -> relu; a packet aten.add -> add.*"""
    text = str(op)
    if not text.startswith("aten."):
        return ""
    text = text[len("aten.") :]
    if text.endswith(".default"):
        return text[: -len(".default")]
    return text if "." in text else text + ".*"


def names(ops: Any) -> "list[str]":
    return sorted({n for n in map(op_name, ops) if n})


try:
    import torch
except Exception as exc:
    result["error"] = short(exc)
    emit()
result["torch_path"] = os.path.dirname(torch.__file__)
result["torch_version"] = torch.__version__
try:
    import torchgen

    result["torchgen_dir"] = os.path.dirname(torchgen.__file__)
except Exception as exc:
    result["errors"]["torchgen"] = short(exc)


def decompositions() -> None:
    import torch._decomp
    import torch._refs

    result["decompositions"] = names(torch._decomp.decomposition_table)
    result["refs"] = sorted(n for n in dir(torch._refs) if not n.startswith("_"))


def inductor() -> None:
    from torch._inductor import decomposition, lowering

    result["inductor_lowerings"] = names(lowering.lowerings)
    result["inductor_fallbacks"] = names(lowering.fallbacks)
    result["inductor_decompositions"] = names(decomposition.select_decomp_table())


def opinfos() -> None:
    from torch.testing._internal.common_methods_invocations import op_db

    by_aten: dict[str, list[str]] = {}
    for info in op_db:
        full = info.name + ("." + info.variant_test_name if info.variant_test_name else "")
        aten = getattr(info, "aten_name", None) or info.name
        keys = {aten, *(n for n in [info.name, *(a.name for a in info.aliases)] if "." not in n)}
        for key in keys:
            by_aten.setdefault(key, [])
            if full not in by_aten[key]:
                by_aten[key].append(full)
    result["opinfo"] = by_aten


_CALL = re.compile(r"\b(?:torch\._C\._nn|torch\.ops\.aten|torch|_VF|_infer_size)\.(\w+)\s*[(.]")


def functional() -> None:
    import torch.nn.functional as F

    path = F.__file__
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    lines = source.splitlines()
    public = {n for n in dir(F) if not n.startswith("_")}
    wrappers: dict[str, list[str]] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef) or node.name not in public:
            continue
        body = "\n".join(lines[node.lineno - 1 : node.end_lineno])
        for called in sorted(set(_CALL.findall(body))):
            wrappers.setdefault(called, []).append("torch.nn.functional." + node.name)
    result["functional"] = wrappers


def namespaces() -> None:
    import torch.nn.functional as F

    spaces = {"torch": torch, "Tensor": torch.Tensor, "nn": torch._C._nn}
    for sub in ("linalg", "special", "fft", "nested", "sparse"):
        spaces[sub] = getattr(torch, sub, None)
    found = {
        key: sorted(n for n in dir(space) if not n.startswith("__"))
        for key, space in spaces.items()
        if space is not None
    }
    # F's own bindings of aten ops (F.conv2d is torch.conv2d); its Python functions are in
    # "functional" above, by the ops they call (F.unfold calls im2col, not unfold).
    found["functional"] = sorted(
        n
        for n in dir(F)
        if not n.startswith("_") and type(getattr(F, n)).__name__ == "builtin_function_or_method"
    )
    result["namespaces"] = found


def schema_sample(schema: Any) -> "tuple[list[Any], dict[str, Any], str]":
    """Required arguments filled with small values; described for the report."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    shown = []
    for arg in schema.arguments:
        if arg.has_default_value() or str(arg.type).endswith("?"):
            continue
        kind = str(arg.type)
        if kind == "Tensor":
            value: Any = torch.randn(2, 3, requires_grad=True) * 1  # not a leaf: in-place works
            text = "randn(2, 3, requires_grad=True)"
        elif kind in ("Scalar", "number", "float"):
            value, text = 2, "2"
        elif kind in ("int", "SymInt"):
            value, text = 1, "1"
        elif kind == "bool":
            value, text = False, "False"
        elif kind in ("int[]", "SymInt[]", "int[1]", "SymInt[1]"):
            value, text = [1], "[1]"
        elif kind == "Tensor[]":
            value, text = [torch.randn(2, 3)], "[randn(2, 3)]"
        else:
            raise TypeError("no sample value for an argument of type " + kind)
        if arg.kwarg_only:
            kwargs[arg.name] = value
        else:
            args.append(value)
        shown.append(arg.name + "=" + text)
    return args, kwargs, ", ".join(shown)


def describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        grad = ", requires_grad=True" if value.requires_grad else ""
        return (
            "tensor("
            + str(list(value.shape))
            + ", "
            + str(value.dtype).replace("torch.", "")
            + grad
            + ")"
        )
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(describe, value)) + "]"
    return repr(value)


def opinfo_samples(family: str) -> "list[tuple[list[Any], dict[str, Any], str]]":
    """The first few OpInfo samples (float32, requiring grad; tensors cloned so in-place works)."""
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.utils._pytree import tree_map

    def unleaf(value: Any) -> Any:
        return value.clone() if isinstance(value, torch.Tensor) and value.requires_grad else value

    found = []
    for info in op_db:
        if (getattr(info, "aten_name", None) or info.name) != family:
            continue
        if torch.float32 not in info.supported_dtypes("cpu"):
            continue
        for sample in list(info.sample_inputs("cpu", torch.float32, requires_grad=True))[:8]:
            args = tree_map(unleaf, [sample.input, *sample.args])
            kwargs = tree_map(unleaf, dict(sample.kwargs))
            shown = ", ".join(
                [*map(describe, args), *(k + "=" + describe(v) for k, v in kwargs.items())]
            )
            found.append((args, kwargs, shown))
        break
    return found


def parse_table(text: str) -> "list[dict[str, str]]":
    rows = []
    for line in text.splitlines():
        key, sep, rest = line.partition(": ")
        if not sep:
            continue
        m = re.match(r"(fallthrough )?registered at (.*?)(?: \[(.*)\])?$", rest.strip())
        kernel = m.group(2) if m else rest.strip()
        kind = ("fallthrough" if m and m.group(1) else (m.group(3) if m else "")) or "kernel"
        rows.append({"key": key.strip(), "kernel": kernel, "kind": kind})
    return rows


def first_that_runs(
    op: Any, samples: "list[Any]", mode: Any, ran: "list[str]"
) -> "tuple[int, str | None]":
    """Run the samples in turn under ``mode`` until one returns: its index and None, else the
    first sample's index (0) and the last error. ``ran`` holds the ops of the one that ran."""
    error = None
    for i, (args, kwargs, _shown) in enumerate(samples):
        ran.clear()
        try:
            with mode():
                op(*args, **kwargs)
        except Exception as exc:
            error = short(exc)
            continue
        return i, None
    ran.clear()
    return 0, error


def trace(overload: str) -> None:
    from torch.utils._python_dispatch import TorchDispatchMode

    name, _, over = overload.partition(".")
    packet = getattr(torch.ops.aten, name)
    op = getattr(packet, over or "default")
    table = parse_table(torch._C._dispatch_dump_table("aten::" + overload))
    result["table"] = table
    ran: list[str] = []

    class Record(TorchDispatchMode):  # type: ignore[misc]
        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            ran.append(str(func).replace("aten.", "", 1).replace(".default", ""))
            return func(*args, **(kwargs or {}))

    # The schema's own sample first: it needs no OpInfo database (whose import costs seconds);
    # the OpInfo samples are loaded only when the schema gives none, or none that runs.
    samples: list[tuple[list[Any], dict[str, Any], str]] = []
    with contextlib.suppress(TypeError):
        samples.append(schema_sample(op._schema))
    index, error = first_that_runs(op, samples, Record, ran)
    if error is not None or not samples:
        try:
            more = opinfo_samples(name.rstrip("_"))
        except Exception:  # op_db needs numpy
            more = []
        if more:
            samples = more + samples
            index, error = first_that_runs(op, samples, Record, ran)
    if not samples:
        error = "no sample input could be built for this schema"
    if error:
        result["trace_error"] = error
    chosen = samples[index] if samples else ([], {}, "")
    result["sample"] = "torch.ops.aten." + overload + "(" + chosen[2] + ")" if samples else None
    tensors = [a for a in chosen[0] if isinstance(a, torch.Tensor)]
    keys = str(torch._C._dispatch_keys(tensors[0])) if tensors else ""
    result["input_keys"] = re.findall(r"\w+", keys.partition("(")[2])
    by_key = {row["key"]: row for row in table}
    result["path"] = [
        by_key[k]
        for k in reversed(result["input_keys"])
        if by_key.get(k, {}).get("kind") not in (None, "fallthrough")
    ]
    result["ops_run"] = ran


if len(sys.argv) > 2 and sys.argv[1] == "trace":
    try:
        trace(sys.argv[2])
    except Exception as exc:
        result["trace_error"] = short(exc)
    emit()
for section in (decompositions, inductor, opinfos, functional, namespaces):
    try:
        section()
    except Exception as exc:  # one missing piece (numpy for op_db, sympy for inductor) is a note
        result["errors"][section.__name__] = short(exc)
emit()
