"""A compact index of native_functions.yaml and derivatives.yaml, parsed once and cached.

Each yaml is parsed once (PyYAML's C loader when built) into its families' entries, stored in the
user cache under the file's real path with its mtime and size (a change rebuilds it): a document
of the family names and ``BUCKETS`` documents of entries. A warm query reads the names and the
one bucket of the family it asks for: the yaml is not opened.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

from contribkit.core.cache import JsonCache
from contribkit.core.errors import BadInput
from contribkit.core.record import Record, as_dict, field
from contribkit.ops.model import DerivativeEntry, DispatchEntry, Formula, NativeEntry

INDEX_VERSION = 1
BUCKETS = 32  # a warm query reads the names and one of these
_DERIVATIVE_META = {"name", "output_differentiability", "dispatch", "result"}


def family_of(name: str) -> str:
    """The operator an overload belongs to: ``add_.Tensor`` and ``add.out`` -> ``add``."""
    op = name.split(".", 1)[0]
    if op.endswith("_") and not op.endswith("__"):
        op = op[:-1]
    return op


class YamlIndex(Record):
    """One yaml file's index: the family names, and the families' entries in buckets that are
    read from the cache on demand (a query reads the names and one bucket)."""

    path: str
    family_names: list[str]
    status: str  # "built" now or "cached"
    cache: JsonCache
    key: list[Any]  # [version, kind, real path]; a bucket's key appends its number
    stamp: list[int]
    buckets: dict[int, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    name_set: frozenset[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.name_set = frozenset(self.family_names)

    def names(self) -> list[str]:
        return self.family_names

    def has(self, family: str) -> bool:
        return family in self.name_set

    def raw(self, family: str) -> list[dict[str, Any]]:
        if not self.has(family):
            return []
        number = bucket_of(family)
        if number not in self.buckets:
            doc = self.cache.get(json.dumps([*self.key, number]))
            if doc is None or doc.get("stamp") != self.stamp:  # removed or replaced since
                raise BadInput(
                    f"the cached index of {self.path} changed while it was read",
                    hint="run the command again",
                )
            self.buckets[number] = doc["families"]
        return list(self.buckets[number].get(family, []))

    def native(self, family: str) -> list[NativeEntry]:
        return [NativeEntry.from_dict(d) for d in self.raw(family)]

    def derivatives(self, family: str) -> list[DerivativeEntry]:
        return [DerivativeEntry.from_dict(d) for d in self.raw(family)]


def bucket_of(family: str) -> int:
    import zlib

    return zlib.crc32(family.encode()) % BUCKETS


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


def _lines(text: str, key: str) -> dict[str, int]:
    """Line of each ``- key: NAME(`` entry, by overload name (the C loader keeps no marks)."""
    found: dict[str, int] = {}
    pattern = re.compile(rf"^- {key}:\s*([\w.]+)\(", re.MULTILINE)
    for m in pattern.finditer(text):
        found.setdefault(m.group(1), text.count("\n", 0, m.start()) + 1)
    return found


def native_entry(raw: dict[str, Any], line: int) -> NativeEntry:
    func = str(raw["func"])
    name = func.split("(", 1)[0]
    dispatch = [
        DispatchEntry(key.strip(), str(kernel))
        for keys, kernel in (raw.get("dispatch") or {}).items()
        for key in str(keys).split(",")
    ]
    delegate = raw.get("structured_delegate")
    return NativeEntry(
        name=name,
        schema=func,
        line=line,
        variants=_as_list(raw.get("variants", "function")),
        dispatch=dispatch,
        composite_implicit=not dispatch and not delegate,
        structured=bool(raw.get("structured", False)),
        structured_delegate=str(delegate) if delegate else None,
        tags=_as_list(raw.get("tags")),
        autogen=_as_list(raw.get("autogen")),
        python_module=raw.get("python_module"),
        ufunc_inner_loop={str(k): str(v) for k, v in (raw.get("ufunc_inner_loop") or {}).items()},
    )


def _formulas(raw: dict[str, Any]) -> list[Formula]:
    return [Formula(str(k), str(v)) for k, v in raw.items() if k not in _DERIVATIVE_META]


def derivative_entry(raw: dict[str, Any], line: int) -> DerivativeEntry:
    schema = str(raw["name"])
    dispatch = raw.get("dispatch") or {}
    default = dispatch.get("Default", raw) if dispatch else raw
    differentiability = raw.get("output_differentiability")
    return DerivativeEntry(
        name=schema.split("(", 1)[0],
        schema=schema,
        line=line,
        formulas=_formulas(default),
        forward=str(default["result"]) if "result" in default else None,
        output_differentiability=[bool(v) for v in differentiability]
        if differentiability
        else None,
        dispatch_formulas={k: _formulas(v) for k, v in dispatch.items() if k != "Default"},
    )


def parse_yaml(path: Path, kind: str) -> dict[str, list[dict[str, Any]]]:
    """Parse one yaml (``native`` or ``derivatives``) into ``{family: [entry as a dict]}``."""
    import yaml

    text = path.read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        entries = yaml.load(text, Loader=loader) or []
    except yaml.YAMLError as exc:
        raise BadInput(f"cannot parse {path}: {exc}".splitlines()[0]) from exc
    key = "func" if kind == "native" else "name"
    lines = _lines(text, key)
    families: dict[str, list[dict[str, Any]]] = {}
    for raw in entries:
        if not isinstance(raw, dict) or key not in raw:
            continue
        name = str(raw[key]).split("(", 1)[0]
        line = lines.get(name, 0)
        entry = native_entry(raw, line) if kind == "native" else derivative_entry(raw, line)
        families.setdefault(family_of(name), []).append(as_dict(entry))
    return families


def load_index(path: Path, kind: str, cache: JsonCache) -> YamlIndex:
    """The index of ``path``: from the cache when the file's path, mtime and size match."""
    try:
        st = path.stat()
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror or exc}") from exc
    real = os.path.realpath(path)
    key: list[Any] = [INDEX_VERSION, kind, real]  # one set of documents per file
    stamp = [st.st_mtime_ns, st.st_size]
    doc = cache.get(json.dumps(key))
    if doc is not None and doc.get("stamp") == stamp and isinstance(doc.get("names"), list):
        return YamlIndex(real, doc["names"], "cached", cache, key, stamp)
    families = parse_yaml(path, kind)
    buckets: dict[int, dict[str, list[dict[str, Any]]]] = {n: {} for n in range(BUCKETS)}
    for family, entries in families.items():
        buckets[bucket_of(family)][family] = entries
    index = YamlIndex(real, sorted(families), "built", cache, key, stamp, buckets)
    with contextlib.suppress(OSError):  # an unwritable cache costs the next query a parse
        for number, content in buckets.items():  # the buckets first: the names vouch for them
            cache.put(json.dumps([*key, number]), {"stamp": stamp, "families": content})
        cache.put(json.dumps(key), {"stamp": stamp, "names": index.family_names})
    return index
