"""Turn a parsed issue into a repro folder: ``repro.py`` (verdict contract), ``issue.md``, ``meta.json``.

Pure planning: :func:`plan_repro` returns the files and a summary; the command writes them.
:func:`plan_for` caches that result per issue content and renderer version.
The issue's code is analysed and (when safe) device-rewritten here, but never executed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from contribkit import __version__
from contribkit.core.cache import JsonCache
from contribkit.core.datadirs import data_dir
from contribkit.core.render import OutputFile, render
from contribkit.issue.model import Issue, ParsedIssue
from contribkit.repro.codefacts import DEVICE_NAME, CodeFacts, Comparison, analyse, apply_edits

TEMPLATE = "repro.py.j2"
_ALLCLOSE_DEFAULTS = {"rtol": "1e-05", "atol": "1e-08"}


REPRO_FILES = ("repro.py", "issue.md", "meta.json")
# The sources whose content shapes a rendered repro: a change to any invalidates cached renders.
# Paths under contribkit/; a folder stands for every module in it.
_RENDER_SOURCES = ("issue", "repro", "target/reprolib.py", "core/render.py")


@dataclass
class ReproPlan:
    files: dict[str, str]  # file name -> content, in REPRO_FILES order
    summary: dict[str, Any]  # what the command reports (without where it was written)

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


def plan_for(issue: Issue, cache: JsonCache | None) -> ReproPlan:
    """Parse and render ``issue``, or take the result from ``cache`` when neither it nor the
    code that renders it changed (parsing and rendering import markdown-it and Jinja)."""
    key = f"{input_hash(issue)}:{render_fingerprint()}"
    doc = cache.get(key) if cache is not None else None
    if doc is not None:
        return ReproPlan(files=doc["files"], summary=doc["summary"])
    from contribkit.issue.parse import parse_issue

    plan = plan_repro(issue, parse_issue(issue))
    if cache is not None:
        cache.put(key, {"files": plan.files, "summary": plan.summary})
    return plan


def runtime_source() -> str:
    return (
        resources.files("contribkit.target")
        .joinpath("reprolib.py")
        .read_text(encoding="utf-8")
        .rstrip("\n")
    )


def input_hash(issue: Issue) -> str:
    """Identifies everything the output is made from: the whole issue (identity, labels, state,
    comments and their authors), the template and the generator version."""
    data = {"issue": issue.as_dict(), "template": TEMPLATE, "version": __version__}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def check_arguments(comparison: Comparison) -> str:
    keywords = dict(comparison.keywords)
    if comparison.style == "allclose":
        keywords = {**_ALLCLOSE_DEFAULTS, **keywords}
    elif comparison.style == "equal":
        keywords = {"rtol": "0", "atol": "0"}
    args = [
        comparison.actual,
        comparison.expected,
        *(f"{k}={v}" for k, v in sorted(keywords.items())),
    ]
    return ", ".join([*args, "check_device=False"])


def code_notes(facts: CodeFacts, rewrite: bool, contrast: bool) -> list[str]:
    notes = []
    if rewrite:
        rewritten = ", ".join(f"line {e.line} {e.before} -> {e.after}" for e in facts.edits)
        notes.append(f"Device rewrite (issue code lines): {rewritten}.")
        notes.append(
            f"The code now runs on {DEVICE_NAME}: try `--device cpu` where there is no GPU."
        )
    elif facts.compares_devices:
        notes.append("Needs CUDA: the code compares CPU with CUDA, so it is kept as written.")
    elif contrast and facts.needs_cuda:
        notes.append(
            "Needs CUDA: the issue contrasts CPU with CUDA, so the code is kept as written."
        )
    elif facts.unsafe_cuda:
        notes.append(
            "Needs CUDA: kept as written because of " + "; ".join(facts.unsafe_cuda[:3]) + "."
        )
    if facts.uses_compile:
        notes.append(
            f"Uses torch.compile (backends: {', '.join(facts.compile_backends) or 'default'})."
        )
    if facts.third_party:
        notes.append(f"Third-party imports: {', '.join(facts.third_party)}.")
    for item in facts.downloads:
        notes.append(f"Not self-contained: {item}.")
    if facts.comparison:
        notes.append(
            f"check() compares {facts.comparison.actual} with {facts.comparison.expected}."
        )
    return notes


def mark_line(code: str, line: int | None, why: str | None) -> str:
    """``code`` with a comment line under ``line`` that points at the syntax error."""
    lines = code.split("\n")
    at = min(max(line or len(lines), 1), len(lines))
    return "\n".join([*lines[:at], f"# ^^^ contribkit: does not parse here ({why})", *lines[at:]])


def plan_repro(issue: Issue, parsed: ParsedIssue) -> ReproPlan:
    code = parsed.code.strip("\n")
    facts = analyse(code) if code else CodeFacts()
    signature = parsed.signature
    code_runs = bool(code) and facts.parses
    # An issue about CPU-vs-CUDA differences is meaningless when rewritten to one device.
    rewrite = facts.rewritable and not parsed.contrasts_devices
    requires_cuda = facts.requires_cuda or (facts.needs_cuda and not rewrite)
    if code and rewrite:
        code = apply_edits(code, facts.edits)
    incomplete = None
    notes = code_notes(facts, rewrite, parsed.contrasts_devices)
    if code and not facts.parses:
        incomplete = (
            f"the issue's code does not parse (line {facts.syntax_error_line} of the code: "
            f"{facts.syntax_error}); fix it in repro.py, uncomment it, and set incomplete=None"
        )
        notes.insert(
            0,
            f"Kept as comments: line {facts.syntax_error_line} does not parse "
            f"({facts.syntax_error}); a 'contribkit:' line below it marks the place.",
        )
        code = mark_line(code, facts.syntax_error_line, facts.syntax_error)
    elif not code and signature:  # a crash without code: the signature decides, once written
        incomplete = (
            "the issue has no code: write the reproduction in repro.py, then set incomplete=None"
        )
        code = (
            "The issue has no code. Write the reproduction here: "
            "it is REPRODUCED when it raises the signature above."
        )
    elif not code:
        code = "The issue has no code. Write the reproduction here, then fill in check()."
    if not code_runs:
        check = "none" if incomplete else "fill"
    elif signature:
        check = "none"
    elif facts.comparison:
        check = "compare"
    else:
        check = "fill"
    kind = "crash" if signature else ("wrong-result" if check == "compare" else "unknown")
    kind_text = {
        "crash": "crash (REPRODUCED when the code raises the signature below)",
        "wrong-result": "wrong result (REPRODUCED when check() fails)",
        "unknown": "unknown (no traceback or comparison found: fill in check())"
        if check == "fill"
        else "unknown (no traceback or comparison found)",
    }[kind]
    env = parsed.env
    reporter_env = [
        (name.replace("_", " "), value)
        for name, value in (asdict(env).items() if env else [])
        if value is not None
    ]
    devices = ["cuda"] if requires_cuda else (["cpu", "cuda"] if rewrite else ["cpu"])
    digest = input_hash(issue)
    context: dict[str, Any] = {
        "ref": issue.ref,
        "title": issue.title,
        "url": issue.url,
        "kind_text": kind_text,
        "signature_text": str(signature) if signature else "(none found)",
        "expected": parsed.expected or "(not stated)",
        "actual": parsed.actual or "(not stated)",
        "reporter_env": reporter_env,
        "code_source": parsed.code_source or "(no code in the issue)",
        "code_notes": notes + parsed.warnings,
        "version": __version__,
        "input_hash": digest,
        "runtime": runtime_source(),
        "signature": {"exc_type": signature.exc_type, "message": signature.message}
        if signature
        else None,
        "default_device": "cuda" if facts.needs_cuda else "cpu",
        "requires_cuda": requires_cuda,
        "seed_numpy": facts.imports_numpy,
        "incomplete": incomplete,
        "code_runs": code_runs,
        "code": code,
        "check": check,
        "check_args": check_arguments(facts.comparison) if facts.comparison else "",
    }
    script = render(TEMPLATE, **context)
    snapshot = render("issue.md.j2", **issue.as_dict(), ref=issue.ref, version=__version__)
    warnings = [*parsed.warnings, *(f"not self-contained: {d}" for d in facts.downloads)]
    if incomplete:
        warnings.append("INCOMPLETE: " + incomplete)
    elif check == "fill":
        warnings.append(
            "INCOMPLETE: fill in check() in repro.py (the verdict is CANNOT_RUN until then)"
        )
    meta = {
        "number": issue.number,
        "repo": issue.repo,
        "url": issue.url,
        "title": issue.title,
        "kind": kind,
        "signature": str(signature) if signature else None,
        "signature_parts": context["signature"],
        "reporter_env": asdict(env) if env else None,
        "devices_needed": devices,
        "default_device": context["default_device"],
        "requires_cuda": requires_cuda,
        "device_rewrite": [asdict(e) for e in facts.edits] if rewrite else [],
        "uses_compile": facts.uses_compile,
        "compile_backends": facts.compile_backends,
        "third_party": facts.third_party,
        "downloads": facts.downloads,
        "code_source": parsed.code_source,
        "check": check,
        "comparison": asdict(facts.comparison) if facts.comparison else None,
        "check_args": context["check_args"] or None,
        "incomplete": bool(incomplete) or check == "fill",
        "labels": issue.labels,
        "generator": f"contribkit {__version__}",
        "template": TEMPLATE,
        "input_sha256": digest,
    }
    files = dict(
        zip(REPRO_FILES, (script, snapshot, json.dumps(meta, indent=2) + "\n"), strict=True)
    )
    summary = {
        "issue": issue.ref,
        "title": issue.title,
        "url": issue.url,
        "kind": kind,
        "signature": meta["signature"],
        "devices_needed": devices,
        "device_rewrite": bool(meta["device_rewrite"]),
        "incomplete": meta["incomplete"],
        "warnings": warnings,
    }
    return ReproPlan(files, summary)
