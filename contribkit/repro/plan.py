"""Turn a parsed issue into a repro folder: ``repro.py`` (verdict contract), ``issue.md``, ``meta.json``.

Pure planning: :func:`plan_repro` builds a :class:`~contribkit.repro.spec.ReproSpec` and renders
it into the files and a summary; the command writes them. :func:`plan_for` caches that result
per issue content and renderer version.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from contribkit import __version__
from contribkit.core.cache import JsonCache
from contribkit.core.datadirs import data_dir
from contribkit.core.render import OutputFile, one_line, render
from contribkit.core.termsafe import visible
from contribkit.core.verdict import RUNTIME_FILE
from contribkit.issue.model import Issue, ParsedIssue
from contribkit.repro.expect import describe as describe_expect
from contribkit.repro.spec import ReproSpec, build_spec

TEMPLATE = "repro.py.j2"


# The verdict runtime, beside repro.py: the folder is self-contained (copy it out of the tree for
# `git bisect run`), and repro.py stays the issue's code, short enough to read and to paste.
RUNTIME_MODULE = RUNTIME_FILE.removesuffix(".py")
REPRO_FILES = ("repro.py", RUNTIME_FILE, "issue.md", "meta.json")
# The sources whose content shapes a rendered repro: a change to any invalidates cached renders.
# Paths under contribkit/; a folder stands for every module in it.
_RENDER_SOURCES = (
    "issue",
    "repro",
    "target/reprosecrets.py",
    "target/reprojudge.py",
    "target/reprorules.py",
    "target/reproconfine.py",
    "target/reproexpect.py",
    "target/reprotrace.py",
    "target/reproerrors.py",
    "target/reprolib.py",
    "core/render.py",
    "core/termsafe.py",
    "core/astnames.py",
)


@dataclass
class ReproSummary:
    """What the command reports about a repro (without where it was written)."""

    issue: str  # the issue's ref, e.g. pytorch/pytorch#170398
    title: str
    url: str | None
    kind: str
    signature: str | None
    devices_needed: list[str]
    device_rewrite: bool
    incomplete: bool
    warnings: list[str]
    refused: str | None = None  # why no script should be written (feature request, docs issue)
    code_lines: int = 0  # lines of the issue's code extracted
    code_source: str = ""
    edits: list[str] = field(default_factory=list)
    oracles: list[str] = field(default_factory=list)  # strongest first
    oracles_why: list[str] = field(default_factory=list)
    to_add: list[str] = field(default_factory=list)  # what would give a definite verdict
    timeout_s: float = 300.0
    expect: str | None = None  # the oracle the user stated (--expect)


@dataclass
class ReproPlan:
    files: dict[str, str]  # file name -> content, in REPRO_FILES order
    summary: ReproSummary

    def output_files(self, out_dir: Path) -> list[OutputFile]:
        return [
            OutputFile(out_dir / name, content, mode=0o755 if name == "repro.py" else None)
            for name, content in self.files.items()
        ]


def render_fingerprint() -> str:
    """Identifies the code and templates that produce a repro (cheap: stat calls only)."""
    package = Path(__file__).resolve().parent.parent  # contribkit/
    paths: list[Path] = []
    for name in _RENDER_SOURCES:
        source = package / name
        paths += sorted(source.rglob("*.py")) if source.is_dir() else [source]
    paths += sorted(data_dir("templates").glob("*.j2"))
    stats = [
        (str(p.relative_to(package.parent)), p.stat().st_mtime_ns, p.stat().st_size)
        for p in paths
        if p.exists()
    ]
    return hashlib.sha256(json.dumps([__version__, stats]).encode()).hexdigest()[:16]


def plan_for(
    issue: Issue, cache: JsonCache | None, timeout: float = 300.0, expect: str | None = None
) -> ReproPlan:
    """Parse and render ``issue``, or take the result from ``cache`` when neither it nor the
    code that renders it changed (parsing and rendering import markdown-it and Jinja)."""
    digest = input_hash(issue)
    key = f"{digest}:{render_fingerprint()}:{timeout}:{expect}"
    doc = cache.get(key) if cache is not None else None
    if doc is not None:
        return ReproPlan(files=doc["files"], summary=ReproSummary(**doc["summary"]))
    from contribkit.issue.parse import parse_issue

    plan = plan_repro(issue, parse_issue(issue), timeout, expect, digest)
    if cache is not None:
        cache.put(key, {"files": plan.files, "summary": asdict(plan.summary)})
    return plan


RUNTIME_FILES = (  # joined in this order
    "reprosecrets.py",
    "reprojudge.py",
    "reprorules.py",
    "reproconfine.py",
    "reproexpect.py",
    "reprotrace.py",
    "reproerrors.py",
    "reprolib.py",
)
_JUDGE_IMPORT = re.compile(
    r"^# contribkit:judge-import\b.*?^# contribkit:end-judge-import\n", re.M | re.S
)
_RUNTIME_HEADER = f"""\
# {RUNTIME_FILE}: contribkit's repro runtime, the verdict contract of repro.py beside it
# (contribkit's target/{", ".join(RUNTIME_FILES[:3])},
# {", ".join(RUNTIME_FILES[3:])}, in that order).
# repro.py loads this file by path from its own folder; keep the two together.
# Standard library only, Python 3.9+.
"""


def _isort_key(name: str) -> tuple[int, str]:
    """isort's order of imported names (ruff's default): CONSTANTS, then Classes, then the rest."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def runtime_source() -> str:
    """The repro runtime as one module's text: the imports of every file (merged, sorted: the
    module is lint-clean), then each file's body in order (the judging functions, the
    confinement of the child, the user's oracle, the evidence recorder, the driver), the driver without its import of the others."""
    import ast

    folder = resources.files("contribkit.target")
    texts = [folder.joinpath(name).read_text(encoding="utf-8") for name in RUNTIME_FILES]
    modules: set[str] = set()
    names: dict[str, set[str]] = {}
    bodies = []
    for text in (_JUDGE_IMPORT.sub("", t) for t in texts):
        lines = text.splitlines(keepends=True)
        for node in ast.parse(text).body:
            if isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.setdefault(node.module, set()).update(a.name for a in node.names)
            else:
                continue
            for i in range(node.lineno - 1, node.end_lineno or node.lineno):
                lines[i] = ""
        bodies.append(re.sub(r"\n{4,}", "\n\n\n", "".join(lines)).strip("\n"))
    imports = [f"import {m}" for m in sorted(modules)] + [
        f"from {m} import {', '.join(sorted(names[m], key=_isort_key))}" for m in sorted(names)
    ]
    return _RUNTIME_HEADER + "\n".join(imports) + "\n\n" + "\n\n\n".join(bodies) + "\n"


def input_hash(issue: Issue) -> str:
    """Identifies everything the output is made from: the whole issue (identity, labels, state,
    comments and their authors), the template and the generator version."""
    data = {"issue": issue.as_dict(), "template": TEMPLATE, "version": __version__}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def plan_repro(
    issue: Issue,
    parsed: ParsedIssue,
    timeout: float = 300.0,
    expect: str | None = None,
    digest: str | None = None,
) -> ReproPlan:
    """The repro's files and summary; ``digest`` is ``input_hash(issue)`` where the caller has
    it already (hashing a large issue's JSON costs milliseconds)."""
    spec = build_spec(issue, parsed, digest or input_hash(issue), timeout, expect)
    snapshot = visible(render("issue.md.j2", **issue.as_dict(), ref=issue.ref, version=__version__))
    meta = meta_document(spec)
    runtime = runtime_source()
    meta["runtime"] = {"file": RUNTIME_FILE, "sha256": hashlib.sha256(runtime.encode()).hexdigest()}
    files = (render_script(spec), runtime, snapshot, json.dumps(meta, indent=2) + "\n")
    return ReproPlan(dict(zip(REPRO_FILES, files, strict=True)), summarise(spec))


def render_script(spec: ReproSpec) -> str:
    """``repro.py``: the verdict contract around the issue's code. Always valid Python: when the
    edited code would not compile, it is kept as comments and the script says INCOMPLETE."""
    script = _render_script(spec)
    error = _compile_error(script)
    if error is None or not spec.code.runs:
        return script
    spec.code.runs = False
    spec.code.incomplete = (
        f"the edited code does not compile ({error}); fix it in repro.py, uncomment it,"
        " and set incomplete=None"
    )
    spec.check = "none"
    return _render_script(spec)


def _compile_error(script: str) -> str | None:
    try:
        compile(script, "repro.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return f"{getattr(exc, 'msg', exc)} at line {getattr(exc, 'lineno', '?')}"
    return None


def _render_script(spec: ReproSpec) -> str:
    issue, parsed, signature = spec.issue, spec.parsed, spec.signature
    env = parsed.env
    return visible(  # the issue's text and code, without what would hide a line from `cat`
        render(
            TEMPLATE,
            ref=issue.ref,
            title=issue.title,
            url=issue.url,
            kind_text=spec.kind_text,
            signature_text=str(signature) if signature else "(none found)",
            expected=parsed.expected or "(not stated)",
            actual=parsed.actual or "(not stated)",
            reporter_env=[
                (name.replace("_", " "), value)
                for name, value in (asdict(env).items() if env else [])
                if value is not None
            ],
            code_source=parsed.code_source or "(no code in the issue)",
            code_notes=notes_lines(spec.header_notes),
            version=__version__,
            input_hash=spec.digest,
            runtime_file=RUNTIME_FILE,
            runtime_module=RUNTIME_MODULE,
            signature=spec.signature_parts,
            default_device=spec.default_device,
            requires_cuda=spec.code.requires_cuda,
            seed_numpy=spec.facts.imports_numpy,
            incomplete=spec.code.incomplete,
            code_runs=spec.code.runs,
            code=spec.code.text,
            check=spec.check,
            check_args=spec.check_args,
            exact_args=spec.exact_args,
            differential=spec.differential,
            future=spec.code.edited.future,
            evidence=spec.evidence.runtime,
            timeout=spec.timeout,
            expect=spec.expect,
            oracle_line=describe_expect(spec.expect),
        )
    )


def notes_lines(notes: list[str]) -> str:
    """The header's notes as comment lines, each on one line: joined here, not in the template's
    sandbox, where each of an issue's thousands of notes (a warning per block) cost a filter call.
    """
    return "\n".join(f"#   {one_line(note)}" for note in notes) or "#   (none)"


def meta_document(spec: ReproSpec) -> dict[str, Any]:
    """``meta.json``: what the repro needs and how it decides, for ``contribkit run`` and people."""
    issue, facts, code = spec.issue, spec.facts, spec.code
    env = spec.parsed.env
    return {
        "number": issue.number,
        "repo": issue.repo,
        "url": issue.url,
        "title": issue.title,
        "kind": spec.kind,
        "signature": str(spec.signature) if spec.signature else None,
        "signature_parts": spec.signature_parts,
        "reporter_env": asdict(env) if env else None,
        "devices_needed": spec.devices,
        "default_device": spec.default_device,
        "requires_cuda": code.requires_cuda,
        "device_rewrite": [asdict(e) for e in facts.edits] if code.rewrite else [],
        "uses_compile": facts.uses_compile,
        "compile_backends": facts.compile_backends,
        "third_party": facts.third_party,
        "downloads": facts.downloads,
        "code_source": spec.parsed.code_source,
        "check": spec.check,
        "edits": spec.edits,
        "oracles": spec.evidence.oracles,
        "oracles_why": spec.evidence.why,
        # What the oracles compare at run time (Repro's evidence=): the quoted output units
        # (id, where, actual and expected lines), the crash flag, the issue's own checks.
        "evidence": spec.evidence.runtime,
        "expected_text": spec.parsed.expected,  # the issue's expected behaviour, as it says it
        "to_add": spec.evidence.to_add,
        "expect": spec.expect,  # the oracle the user stated (--expect), else null
        "expect_means": describe_expect(spec.expect),
        "timeout_s": spec.timeout,
        "comparison": asdict(facts.comparison) if facts.comparison else None,
        "check_args": spec.check_args or None,
        "exact_args": spec.exact_args or None,
        "incomplete": spec.incomplete,
        "labels": issue.labels,
        "generator": f"contribkit {__version__}",
        "template": TEMPLATE,
        "input_sha256": spec.digest,
    }


def summarise(spec: ReproSpec) -> ReproSummary:
    issue = spec.issue
    return ReproSummary(
        issue=issue.ref,
        title=issue.title,
        url=issue.url,
        kind=spec.kind,
        signature=str(spec.signature) if spec.signature else None,
        devices_needed=spec.devices,
        device_rewrite=spec.code.rewrite,
        incomplete=spec.incomplete,
        warnings=spec.warnings,
        refused=spec.refusal,
        code_lines=len([line for line in spec.parsed.code.split("\n") if line.strip()]),
        code_source=spec.parsed.code_source,
        edits=spec.edits,
        oracles=spec.evidence.oracles,
        oracles_why=spec.evidence.why,
        to_add=spec.evidence.to_add,
        timeout_s=spec.timeout,
        expect=spec.expect,
    )
