# Runs in the target interpreter (any Python 3.8+); prints one JSON line. Never imported by contribkit.
# `contribkit gaps`: the public callables of one module (argv[1] is JSON {"module": NAME or a .py
# path}): each one's kind, parameters (from its signature, or for a builtin from its docstring's
# first line, as add_docstr writes it), docstring, and the OpInfos or ModuleInfo covering it.
import ast
import enum
import importlib
import importlib.util
import inspect
import json
import os
import sys
import sysconfig
import warnings
from typing import Any

warnings.filterwarnings("ignore")
request = json.loads(sys.argv[1])
result: "dict[str, Any]" = {"purelib": sysconfig.get_paths()["purelib"], "query": request["module"]}


def emit() -> None:
    print("CONTRIBKIT_PROBE " + json.dumps(result))
    sys.exit(0)


def short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return type(exc).__name__ + (": " + text[0][:200] if text else "")


def load(target: str) -> Any:
    if target.endswith(".py"):
        name = os.path.splitext(os.path.basename(target))[0]
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
        spec = importlib.util.spec_from_file_location(name, target)
        if spec is None or spec.loader is None:
            raise ImportError("cannot load " + target)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(target)


try:
    module = load(request["module"])
except BaseException as exc:  # SystemExit and friends from a module's top level too
    result["error"] = short(exc)
    emit()
modname = module.__name__
result["module"] = modname
result["file"] = getattr(module, "__file__", None)
try:
    import torch

    result["torch_path"] = os.path.dirname(torch.__file__)
    result["torch_version"] = torch.__version__
except Exception:
    torch = None


def is_enum_like(obj: Any) -> bool:
    """An enumeration: a class whose ``__members__`` maps names to its own instances. Python's
    enum.Enum (torch.memory_format-like IntEnums) and pybind11's py::enum_ (F.ScalingType,
    F.SwizzleType, which are no Enum subclasses) both have that shape."""
    if not inspect.isclass(obj):
        return False
    if issubclass(obj, enum.Enum):
        return True
    members = getattr(obj, "__members__", None)
    try:
        values = list(members.values()) if members is not None else []
    except Exception:  # a __members__ that is no mapping
        return False
    return bool(values) and all(isinstance(v, obj) for v in values)


def is_public(name: str, obj: Any) -> bool:
    if name.startswith("_") or inspect.ismodule(obj) or not callable(obj):
        return False
    if is_enum_like(obj):
        return False  # a set of constants, not something to call
    owner = getattr(obj, "__module__", None) or ""
    if owner == modname or owner.startswith(modname + "."):
        return True
    # builtins bound from torch._C (F.conv2d is torch.conv2d, torch.linalg.svd is _linalg's)
    return inspect.isbuiltin(obj) and (owner in ("torch", "") or owner.startswith("torch._C"))


def kind_of(obj: Any) -> str:
    if inspect.isclass(obj):
        is_module = torch is not None and issubclass(obj, torch.nn.Module)
        return "module" if is_module else "class"
    return "builtin" if inspect.isbuiltin(obj) else "function"


def doc_params(doc: str, name: str) -> "list[str] | None":
    """Parameters from a docstring's first line, ``name(a, b=1, *, out=None) -> Tensor``."""
    first = doc.strip().splitlines()[0] if doc.strip() else ""
    if not first.startswith(name + "("):
        return None
    inner = first[len(name) + 1 :].rsplit(")", 1)[0]
    try:
        args = ast.parse("def f(" + inner + "): pass").body[0].args  # type: ignore[attr-defined]
    except SyntaxError:
        return None
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]


def sig_params(obj: Any) -> "list[str] | None":
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    skip = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [
        p.name
        for p in signature.parameters.values()
        if p.kind not in skip and p.name not in ("self", "cls") and not p.name.startswith("_")
    ]


def covering() -> "tuple[dict[int, list[str]], dict[int, str], dict[str, list[str]]]":
    """OpInfo names by the id of the function they test, and by their name; ModuleInfos by class."""
    by_id: dict[int, list[str]] = {}
    by_name: dict[str, list[str]] = {}
    modules: dict[int, str] = {}
    from torch.testing._internal.common_methods_invocations import op_db

    for info in op_db:
        full = info.name + ("." + info.variant_test_name if info.variant_test_name else "")
        for fn in (info.op, *(a.op for a in info.aliases)):
            by_id.setdefault(id(fn), []).append(full)
        for alias in (info.name, *(a.name for a in info.aliases)):
            by_name.setdefault(alias, []).append(full)
    try:
        from torch.testing._internal.common_modules import module_db

        for minfo in module_db:
            modules[id(minfo.module_cls)] = minfo.module_cls.__name__
    except Exception as exc:
        result["moduleinfo_error"] = short(exc)
    return by_id, modules, by_name


by_id: "dict[int, list[str]]" = {}
by_name: "dict[str, list[str]]" = {}
module_infos: "dict[int, str]" = {}
if torch is not None:
    try:
        by_id, module_infos, by_name = covering()
    except Exception as exc:
        result["opinfo_error"] = short(exc)
else:
    result["opinfo_error"] = "torch is not importable"
prefix = modname[len("torch.") :] + "." if modname.startswith("torch.") else ""
callables = []
for name in sorted(dir(module)):
    try:
        obj = getattr(module, name)
    except Exception:
        continue
    if not is_public(name, obj):
        continue
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    doc = inspect.cleandoc(doc) if isinstance(doc, str) else None  # a class's own, not inherited
    params = sig_params(obj)
    source = "signature"
    if params is None and doc:
        params, source = doc_params(doc, name), "docstring"
    opinfos = list(by_id.get(id(obj), []))
    opinfos += [n for n in by_name.get(prefix + name, []) if n not in opinfos]
    callables.append(
        {
            "name": name,
            "kind": kind_of(obj),
            "params": params,
            "params_from": source if params is not None else None,
            "doc": doc if isinstance(doc, str) and doc.strip() else None,
            "opinfo": list(dict.fromkeys(opinfos)),
            "moduleinfo": module_infos.get(id(obj)),
        }
    )
result["callables"] = callables
# The docstrings of a module such as torch.nn weigh megabytes: they go to the file the request
# names, and the marker line only says so.
with open(request["out"], "w", encoding="utf-8") as fh:
    json.dump(result["callables"], fh)
result["callables"] = {"file": request["out"]}
emit()
