"""What a repro is made of, decided once: :func:`build_spec` turns a parsed issue into a
:class:`ReproSpec`, which the renderers (``repro.py``, ``meta.json``, the summary) only read.

The issue's code is analysed and (when safe) device-rewritten here, but never executed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from contribkit.issue.model import Issue, ParsedIssue, Signature
from contribkit.issue.parse.transcripts import prose_only
from contribkit.repro.codefacts import DEVICE_NAME, CodeFacts, Comparison, analyse, apply_edits
from contribkit.repro.edits import EditedCode, edit_code
from contribkit.repro.evidence import Evidence, gather_evidence
from contribkit.repro.expect import WANTS_ERROR, suggestion
from contribkit.repro.unpaste import unpaste

_ALLCLOSE_DEFAULTS = {"rtol": "1e-05", "atol": "1e-08"}
KIND_TEXTS = {
    "crash": "crash (REPRODUCED when the code raises the signature below)",
    "wrong-result": "wrong result (REPRODUCED when check() fails)",
}


@dataclass
class ReproCode:
    """The issue's code as ``repro.py`` holds it."""

    text: str  # the code (device-rewritten when safe), the code marked where it breaks, or a note
    facts: CodeFacts
    runs: bool  # there is code and it parses
    rewrite: bool  # its CUDA uses were rewritten to --device
    requires_cuda: bool
    incomplete: str | None  # what the user must do before the script can give a verdict
    notes: list[str] = field(default_factory=list)  # for the script's header, in order
    edited: EditedCode = field(default_factory=lambda: EditedCode(""))  # the edit actions made


@dataclass
class ReproSpec:
    """Everything the repro's files are rendered from."""

    issue: Issue
    parsed: ParsedIssue
    code: ReproCode
    check: str  # "none" (the signature decides), "compare" (the issue's comparison) or "fill"
    kind: str  # "crash", "wrong-result" or "unknown"
    digest: str  # input_hash of the issue
    evidence: Evidence = field(default_factory=Evidence)
    timeout: float = 300.0  # the script's default time limit, in seconds
    refusal: str | None = None  # why the issue gets no repro (a feature request, a docs issue)
    expect: str | None = None  # the oracle the user stated (--expect), else None: inferred ones

    @property
    def signature(self) -> Signature | None:
        return self.parsed.signature

    @property
    def facts(self) -> CodeFacts:
        return self.code.facts

    @property
    def kind_text(self) -> str:
        if self.kind in KIND_TEXTS:
            return KIND_TEXTS[self.kind]
        if self.check == "fill":
            return "unknown (no traceback or comparison found: fill in check())"
        return "unknown (no traceback or comparison found)"

    @property
    def signature_parts(self) -> dict[str, str] | None:
        """The signature as the script's ``SIGNATURE`` constant (and meta.json) hold it."""
        s = self.signature
        return {"exc_type": s.exc_type, "message": s.message} if s else None

    @property
    def devices(self) -> list[str]:
        if self.code.requires_cuda:
            return ["cuda"]
        return ["cpu", "cuda"] if self.code.rewrite else ["cpu"]

    @property
    def default_device(self) -> str:
        return "cuda" if self.facts.needs_cuda else "cpu"

    @property
    def check_args(self) -> list[str]:
        """The arguments of each ``assert_close`` in check(): every comparison the code makes."""
        return [check_arguments(c) for c in self.facts.comparisons]

    @property
    def exact_args(self) -> list[str]:
        """The arguments of each ``assert_close`` in check_exact(): the measured differences,
        with no tolerance (the code states none; see :attr:`Comparison.measured`)."""
        return [check_arguments(c, exact=True) for c in self.facts.comparisons if c.measured]

    @property
    def differential(self) -> tuple[str, str] | None:
        """The compiled and eager calls the script compares should the issue's code raise: only
        where the code compares the two and the issue reports no error of its own."""
        if self.signature is not None or not self.code.runs:
            return None
        return self.facts.compiled_pair

    @property
    def edits(self) -> list[str]:
        """The edit actions made to the issue's code, in order (the device rewrite first)."""
        rewrite = [n for n in self.code.notes if n.startswith("Device rewrite")]
        return [*rewrite, *self.code.edited.edits]

    @property
    def header_notes(self) -> list[str]:
        """The notes in the script's header: the code's, the edits, the oracles, the warnings."""
        edits = [f"Edit: {e}" for e in self.code.edited.edits]
        oracles = [
            f"Oracle {o}: {w}"
            for o, w in zip(self.evidence.oracles, self.evidence.why, strict=True)
        ]
        return self.code.notes + edits + oracles + self.parsed.warnings

    @property
    def incomplete(self) -> bool:
        """The verdict is CANNOT_RUN until the user edits the script."""
        return bool(self.code.incomplete) or (self.check == "fill" and not self.expect)

    @property
    def warnings(self) -> list[str]:
        warnings = [
            *self.parsed.warnings,
            *(f"not self-contained: {d}" for d in self.facts.downloads),
        ]
        if self.code.incomplete:
            warnings.append("INCOMPLETE: " + self.code.incomplete)
        elif self.check == "fill" and not self.expect:
            warnings.append(
                "INCOMPLETE: fill in check() in repro.py (the verdict is CANNOT_RUN until then)"
            )
        return warnings


def build_spec(
    issue: Issue,
    parsed: ParsedIssue,
    digest: str,
    timeout: float = 300.0,
    expect: str | None = None,
) -> ReproSpec:
    code = prepare_code(parsed)
    refusal = refusal_reason(parsed)
    if refusal:  # written only with --force: a script that says CANNOT_RUN and why
        code.incomplete = refusal
        code.runs = False
    evidence = gather_evidence(issue, parsed, code.facts, code.edited, code.rewrite)
    # the text the parser read (the cut body), as every other step reads
    evidence.runtime["expect_facts"] = expect_facts(code, parsed, f"{issue.title}\n{parsed.body}")
    if expect is None and not evidence.oracles:
        found = suggestion(evidence.runtime, parsed.signature is not None)
        evidence.to_add += [f"or state the oracle: {found}"] if found else []
    check = choose_check(code, parsed.signature is not None, evidence.decides)
    kind = "crash" if parsed.signature else ("wrong-result" if check == "compare" else "unknown")
    return ReproSpec(
        issue=issue,
        parsed=parsed,
        code=code,
        check=check,
        kind=kind,
        digest=digest,
        evidence=evidence,
        timeout=timeout,
        refusal=refusal,
        expect=expect,
    )


def refusal_reason(parsed: ParsedIssue) -> str | None:
    """Why ``repro`` writes no script: a feature request or RFC whose code shows nothing to
    decide on, or a docs issue without code.

    A feature request whose code shows the behaviour it asks to change (the error it quotes)
    is reproduced as a docs issue with code is (dev 100584 by
    khushi-411: ``torch.scalar_tensor.__doc__`` still empty): REPRODUCED while the behaviour
    is there. Class: "X is not supported" requests that paste the NotImplementedError or the
    graph break (issue #21's kept-aside sets: a compile issue labelled ``feature`` whose code
    still runs)."""
    # Only the error: a request's quoted output is as often the behaviour it wants elsewhere
    # (numpy's nanpercentile printing what torch should) as the behaviour it wants changed.
    shows = bool(parsed.code.strip()) and parsed.signature is not None
    if parsed.nature == "feature" and not shows:
        return (
            f"this is a feature request or RFC ({parsed.nature_why}), not a bug: there is"
            " nothing to reproduce"
        )
    if parsed.nature == "docs" and not parsed.code.strip():
        return (
            f"this is a docs issue ({parsed.nature_why}) with no code: it is decided by reading"
            " the docs, not by running code"
        )
    return None


def prepare_code(parsed: ParsedIssue) -> ReproCode:
    """Analyse the issue's code, rewrite its devices when safe, and mark what stops it running."""
    code = (parsed.transcript or parsed.code).strip("\n")
    unpasted = unpaste(code) if code else None
    if unpasted is not None:
        code = unpasted[0]
    facts = analyse(code) if code else CodeFacts()
    # An issue about CPU-vs-CUDA differences is meaningless when rewritten to one device.
    rewrite = facts.rewritable and not parsed.contrasts_devices
    if code and rewrite:
        code = apply_edits(code, facts.edits)
    incomplete = None
    edited = EditedCode(code)
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
        text = mark_line(code, facts.syntax_error_line, facts.syntax_error)
    elif not code and parsed.signature:  # a crash without code: the signature decides, once written
        incomplete = (
            "the issue has no code: write the reproduction in repro.py, then set incomplete=None"
        )
        text = (
            "The issue has no code. Write the reproduction here: "
            "it is REPRODUCED when it raises the signature above."
        )
    elif not code:  # no --expect decides code that is not there: say what is missing first
        incomplete = (
            "the issue has no code: write the reproduction in repro.py and fill in check(),"
            " then set incomplete=None"
        )
        text = "The issue has no code. Write the reproduction here, then fill in check()."
    else:
        edited = edit_code(code, prose_only(parsed.body, parsed.code), parsed.inline_spans)
        if unpasted is not None:
            edited.edits.insert(0, unpasted[1])
        text = edited.text
    return ReproCode(
        text=text,
        facts=facts,
        runs=bool(code) and facts.parses,
        rewrite=rewrite,
        requires_cuda=facts.requires_cuda or (facts.needs_cuda and not rewrite),
        incomplete=incomplete,
        notes=notes,
        edited=edited,
    )


def choose_check(code: ReproCode, has_signature: bool, has_evidence: bool = False) -> str:
    """How the script decides REPRODUCED: see :attr:`ReproSpec.check`. ``has_evidence``: an
    oracle other than the signature (quoted output, own checks, a crash) can decide."""
    if not code.runs:
        return "none" if code.incomplete else "fill"
    if has_signature:
        return "none"
    if code.facts.comparison:  # with the code's own asserts too: they may miss the values
        return "compare"
    return "none" if has_evidence else "fill"


def check_arguments(comparison: Comparison, exact: bool = False) -> str:
    keywords = dict(comparison.keywords)
    if exact:
        keywords = {"rtol": "0", "atol": "0", "equal_nan": "True"}
    elif comparison.style == "allclose":
        keywords = {**_ALLCLOSE_DEFAULTS, **keywords}
    elif comparison.style == "equal":
        keywords = {"rtol": "0", "atol": "0"}
    if comparison.measured:  # a - b promotes: the code compares values across dtypes
        keywords["check_dtype"] = "False"
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
    if facts.comparisons:
        pairs = "; ".join(f"{c.actual} with {c.expected}" for c in facts.comparisons)
        notes.append(f"check() compares {pairs}.")
    return notes


def mark_line(code: str, line: int | None, why: str | None) -> str:
    """``code`` with a comment line under ``line`` that points at the syntax error."""
    lines = code.split("\n")
    at = min(max(line or len(lines), 1), len(lines))
    return "\n".join([*lines[:at], f"# ^^^ contribkit: does not parse here ({why})", *lines[at:]])


def expect_facts(code: ReproCode, parsed: ParsedIssue, report: str) -> dict[str, Any]:
    """What the runtime needs to decide by any stated oracle: whether the code takes its device
    from --device (device-vs-cpu runs it on two), calls compiled code more than once
    (recompiles), uses quantized kernels (crash: every engine), compiles, contrasts devices, and
    whether the issue says an error is missing (the hint's ``no-error``)."""
    from contribkit.repro.evidence import _QUANTIZED, _repeats

    text = code.edited.text or code.text
    return {
        "uses_device": code.rewrite or bool(re.search(r"\bDEVICE\b", text)),
        "uses_compile": code.facts.uses_compile,
        "repeats": _repeats(code.edited) if code.facts.uses_compile else False,
        "quantized": bool(_QUANTIZED.search(parsed.code)),
        "contrasts_devices": bool(parsed.contrasts_devices or code.facts.compares_devices),
        "wants_error": bool(WANTS_ERROR.search(report)),
    }
