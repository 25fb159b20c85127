"""``contribkit gaps``' one core function: a module's public callables, ranked by what their
docstrings and tests lack, each with what a contributor could do about it."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contribkit.core.errors import BadInput
from contribkit.gaps.docstrings import check_docstring

if TYPE_CHECKING:
    from contribkit.core.cache import JsonCache

SCHEMA_VERSION = 1


@dataclass
class GapsRequest:
    module: str
    python: str | None = None
    limit: int | None = None
    refresh: bool = False  # probe again, replacing the cached answer


@dataclass(frozen=True)
class PublicCallable:
    """One public callable as the probe saw it in the target interpreter."""

    name: str
    kind: str  # function, builtin, module (an nn.Module class), class
    params: list[str] | None  # None: neither a signature nor a docstring's first line gives them
    params_from: str | None
    doc: str | None
    opinfo: list[str]
    moduleinfo: str | None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PublicCallable:
        return cls(
            name=str(data["name"]),
            kind=str(data["kind"]),
            params=data.get("params"),
            params_from=data.get("params_from"),
            doc=data.get("doc"),
            opinfo=list(data.get("opinfo") or []),
            moduleinfo=data.get("moduleinfo"),
        )


@dataclass
class Gap:
    name: str
    kind: str
    need: int  # higher first: 2 for untested, 2 for no docstring, 1 for undocumented parameters
    docstring: str  # ok, missing, incomplete, unchecked (no parameters known)
    doc_style: str | None
    undocumented: list[str]
    tested: bool
    test_mentions: int | None  # None without a checkout
    opinfo: list[str]
    moduleinfo: str | None
    todo: list[str]


@dataclass
class GapsReport:
    module: str
    file: str | None
    torch_version: str | None
    checkout: str | None
    tests_searched: bool
    opinfo_checked: bool
    gaps: list[Gap]
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA_VERSION, **asdict(self)}


def probe_module(
    python: str,
    module: str,
    scrub: list[str],
    cache: JsonCache | None = None,
    *,
    refresh: bool = False,
) -> dict[str, Any]:
    """gaps_module.py's answer; the callables come back in a file (docstrings weigh megabytes).

    Cached on what the answer is read from: the probe's text, the interpreter (path, mtime,
    size), its site-packages and torch install (``run.probe.validators``), and the module's own
    file (a ``.py`` path, or the file an installed module was imported from). An edit to any of
    them, a reinstall or a torch rebuild re-probes.
    """
    import tempfile

    from contribkit.core.cache import sha256_hex
    from contribkit.core.workspace import resolve_python
    from contribkit.run.probe import fingerprint, probe_source, run_probe, still_valid, validators

    python = resolve_python(python)
    source = probe_source("gaps_module.py")
    key = json.dumps([python, module, sha256_hex(source)[:16]])
    if cache is not None and not refresh:
        doc = cache.get(key)
        if (
            doc
            and isinstance(doc.get("info"), dict)
            and still_valid(doc, python)
            and _file_stamp(doc["info"].get("file")) == doc.get("file_stamp")
        ):
            cached: dict[str, Any] = doc["info"]
            return cached
    with tempfile.TemporaryDirectory(prefix="contribkit-gaps-") as scratch:
        out = str(Path(scratch, "callables.json"))
        args = [json.dumps({"module": module, "out": out})]
        raw = run_probe(python, source, scrub=scrub, args=args)
        if "callables" in raw:
            raw["callables"] = json.loads(Path(out).read_text(encoding="utf-8"))
    if "error" in raw:
        raise BadInput(
            f"cannot import '{module}' in {python}: {raw['error']}",
            hint="give an importable module (torch.nn.functional) or a .py file path; --python picks the interpreter",
        )
    if cache is not None:
        cache.put(
            key,
            {
                "fingerprint": fingerprint(python),
                "validators": validators(raw),
                "file_stamp": _file_stamp(raw.get("file")),
                "info": raw,
            },
        )
    return raw


def _file_stamp(path: object) -> list[float] | None:
    """A file's mtime and size, or None for no file (a builtin module) or one that is gone."""
    if not isinstance(path, str):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime, float(st.st_size)]


def todo(
    item: PublicCallable, docstring: str, undocumented: list[str], mentions: int | None
) -> list[str]:
    steps = []
    if item.kind == "module" and not item.moduleinfo:
        steps.append("add a ModuleInfo (module_inputs_func) in common_modules.py")
    elif item.kind in ("function", "builtin") and not item.opinfo:
        steps.append("add an OpInfo with a sample_inputs function in common_methods_invocations.py")
    if mentions == 0:
        steps.append("add a test: no file under test/ mentions it")
    if docstring == "missing":
        steps.append("write a docstring with an Args: section")
    elif undocumented:
        steps.append(f"add Args: entries for {', '.join(undocumented)}")
    return steps


def assess(item: PublicCallable, mentions: int | None) -> Gap:
    check = check_docstring(item.doc, item.params)
    if item.doc is None:
        docstring = "missing"
    elif item.params is None:
        docstring = "unchecked"
    else:
        docstring = "incomplete" if check.missing else "ok"
    undocumented = check.missing if item.doc and item.params is not None else []
    tested = bool(item.opinfo or item.moduleinfo or mentions)
    need = (0 if tested else 2) + {"missing": 2, "incomplete": 1}.get(docstring, 0)
    return Gap(
        name=item.name,
        kind=item.kind,
        need=need,
        docstring=docstring,
        doc_style=check.style,
        undocumented=undocumented,
        tested=tested,
        test_mentions=mentions,
        opinfo=item.opinfo,
        moduleinfo=item.moduleinfo,
        todo=todo(item, docstring, undocumented, mentions),
    )


def find_gaps(request: GapsRequest) -> GapsReport:
    """Probe the module in the target interpreter, count test mentions in the checkout (if the
    current repository is one), and rank the callables by need."""
    from contribkit.core.workspace import Workspace, checkout_root

    ws = Workspace.load(python=request.python)
    module = request.module
    if module.endswith(".py") and not Path(module).is_file():
        raise BadInput(f"{module}: no such file", hint="give a module name or an existing .py file")
    if module.endswith(".py"):
        module = str(Path(module).resolve())
    from contribkit.core.cache import JsonCache, cache_root

    cache = JsonCache(cache_root(ws.settings), "gaps")
    raw = probe_module(
        ws.python(), module, ws.settings.get("scrub_env"), cache, refresh=request.refresh
    )
    checkout = checkout_root(ws.root) or (
        ws.root if ws.root and (ws.root / "test").is_dir() else None
    )
    counts = None
    if checkout is not None:
        from contribkit.gaps.coverage import count_mentions

        counts = count_mentions(checkout, str(raw["module"]))
    items = [PublicCallable.from_dict(c) for c in raw.get("callables", [])]
    gaps = [
        assess(item, counts.get(item.name, 0) if counts is not None else None) for item in items
    ]
    gaps.sort(key=lambda g: (-g.need, g.test_mentions or 0, g.name))
    notes = []
    if counts is None:
        notes.append("not in a checkout with test/: only OpInfo and ModuleInfo coverage is known")
    if raw.get("opinfo_error"):
        notes.append(f"OpInfo coverage is unknown: {raw['opinfo_error']}")
    return GapsReport(
        module=str(raw["module"]),
        file=raw.get("file"),
        torch_version=raw.get("torch_version"),
        checkout=str(checkout) if checkout else None,
        tests_searched=counts is not None,
        opinfo_checked=not raw.get("opinfo_error"),
        gaps=gaps[: request.limit] if request.limit else gaps,
        notes=notes,
    )


def markdown(report: GapsReport) -> str:
    """The report as a Markdown table to paste into an issue."""
    tests = "test/ mentions" if report.tests_searched else "tests"
    lines = [
        f"### Gaps in `{report.module}`",
        "",
        f"| callable | docstring | {tests} | OpInfo / ModuleInfo | what to do |",
        "|---|---|---|---|---|",
    ]
    for gap in report.gaps:
        doc = gap.docstring + (f" ({', '.join(gap.undocumented)})" if gap.undocumented else "")
        mentions = str(gap.test_mentions) if gap.test_mentions is not None else "-"
        covered = ", ".join(gap.opinfo) or gap.moduleinfo or "none"
        lines.append(
            f"| `{gap.name}` | {doc} | {mentions} | {covered} | {'; '.join(gap.todo) or '-'} |"
        )
    lines += ["", *(f"_{note}_" for note in report.notes)]
    return "\n".join(lines).rstrip() + "\n"
