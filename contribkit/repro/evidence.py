"""Oracles from evidence: which facts of the issue can decide its verdict, strongest first.

:func:`gather_evidence` reads the parsed issue, the code's facts and the edits made, and returns
an :class:`Evidence`: the ``evidence`` mapping the script's runtime reads (see
``target/reprolib.py``'s ``Repro``), the oracles in the order the runtime tries them, why each
applies, and what the user could add when none does.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from contribkit.core.astnames import dotted
from contribkit.issue.model import Issue, ParsedIssue, Signature
from contribkit.issue.parse.transcripts import prose_only
from contribkit.repro.codefacts import CodeFacts, parse_code
from contribkit.repro.edits import EditedCode
from contribkit.repro.errorclaims import (
    CODE_COMMENT,
    EXPECTS_ERROR,
    about_message,
    failure_unwanted,
    message_wants,
    reports_error,
    says_it_fails,
)
from contribkit.repro.printedpair import other_quantity
from contribkit.repro.statedvalues import StatedValue, section_pair, stated_values
from contribkit.repro.warned import WARNING_SHOWN, quoted_blocks, warning_claim

# "torch.compile crashes with …" in a title: a failure, which a raised error shows.
_CRASHES = re.compile(r"\bcrash(?:es|ed|ing)?\b", re.I)
# A process crash, not "it crashes" (which often means it raises): that needs a signature.
_CRASH = re.compile(
    r"segmentation\s+fault|seg\s?fault|\bSIGSEGV\b|\bSIGFPE\b|\bSIGABRT\b|\bSIGILL\b|\bSIGBUS\b"
    r"|floating[\s-]point\s+exception|core\s+dumped|illegal\s+instruction|\bbus\s+error\b",
    re.I,
)
_ENV_START = re.compile(
    r"^\s*(?:#+\s*(?:versions?|environment|env)\b|Collecting environment information"
    r"|PyTorch version:)",
    re.I | re.M,
)
# Code whose kernels depend on torch.backends.quantized.engine.
_QUANTIZED = re.compile(r"\bquantiz|\bnnq\b|\bnniq\b|\bnnqd\b|\bqnnpack\b|\bfbgemm\b|\bonednn\b")
_FULLGRAPH = re.compile(r"fullgraph['\"]?\s*[=:]\s*True")
_GRAPH_BREAKS = re.compile(r"\bgraph[\s_-]?breaks?\b", re.I)
_RECOMPILES = re.compile(
    r"\brecompil|\bcache_size_limit\b|\brecompile_limit\b|\bguard[\s_-]?failures?\b", re.I
)
# A missing recompile (a guard that should have fired, a stale result) is the opposite bug:
# counting recompiles would invert the verdict.
_WANTS_RECOMPILE = re.compile(
    r"\b(?:should|must|expected?\s+to|needs?\s+to|ought\s+to)\s+(?:be\s+)?recompil"
    r"|\b(?:does\s*n[o']t|did\s*n[o']t|do\s*n[o']t|never|not|no|without|fails?\s+to|failed\s+to)"
    r"\s+(?:\w+\s+)?recompil"
    r"|\bstale\b|\bmissing\s+guards?\b|\bguards?\s+(?:is|are)\s+missing\b",
    re.I,
)
# "It should not recompile (but does)" is the excessive kind: not a wish for a recompile.
_SHOULD_NOT_RECOMPILE = re.compile(
    r"\b(?:should|must|would)(?:\s+not|n't)\s+(?:\w+\s+)?recompil\w*", re.I
)
# An error on recompile is the bug, not the recompiles: other oracles judge it.
_RAISES = re.compile(r"\b(?:errors?|exceptions?|raises?|raised|throws?|thrown)\b", re.I)
_COUNT = r"(once|one|twice|two|three|\d+)(?:\s+times?)?"
# "should compile once", "expected 2 compilations", "should only recompile once", "should not
# recompile": the recompiles the issue allows (compilations - 1).
_ALLOWED = (
    (re.compile(r"\b(?:should|expected?\s+to|must)\s+(?:only\s+)?compile\s+" + _COUNT, re.I), -1),
    (re.compile(r"\bexpected?\s+(?:only\s+)?" + _COUNT + r"\s+compil(?:e|ation)s?\b", re.I), -1),
    (re.compile(r"\b(?:should|expected?\s+to)\s+(?:only\s+)?recompile\s+" + _COUNT, re.I), 0),
    (re.compile(r"\b(?:should(?:\s+not|n't)|must(?:\s+not|n't))\s+recompile\b", re.I), None),
)
_WORD_COUNT = {"once": 1, "one": 1, "twice": 2, "two": 2, "three": 3}
_NONDETERMINISM = re.compile(
    r"\bnon-?deterministic|\bnondeterminism\b|\bnot\s+deterministic\b"
    r"|\bdifferent\s+(?:results?|outputs?|values?)\s+(?:on\s+)?(?:each|every|between|across)"
    r"\s+(?:runs?|times?|executions?)\b"
    r"|\b(?:results?|outputs?)\s+(?:differs?|vary|varies|change)\s+(?:between|across|from)\s+runs?",
    re.I,
)


@dataclass
class Evidence:
    runtime: dict[str, Any] = field(default_factory=dict)  # the script's ``evidence=``
    oracles: list[str] = field(default_factory=list)  # names, strongest first
    why: list[str] = field(default_factory=list)  # one line per oracle
    to_add: list[str] = field(default_factory=list)  # what would give a definite verdict

    @property
    def decides(self) -> bool:
        return bool(self.oracles)


def _report_body(body: str) -> str:
    """The body (as the parser read it) above its environment section."""
    cut = _ENV_START.search(body)
    return body[: cut.start()] if cut else body


def _report_text(issue: Issue, body: str) -> str:
    """The title and the body above its environment section."""
    return f"{issue.title}\n{_report_body(body)}"


def gather_evidence(
    issue: Issue, parsed: ParsedIssue, facts: CodeFacts, edited: EditedCode, rewrite: bool
) -> Evidence:
    ev = Evidence()
    found: dict[str, Any] = {}
    text = _report_text(issue, parsed.body)
    if edited.own_checks:
        ev.oracles.append("assert")
        ev.why.append("the issue's code checks its result itself (assert / assert_close / raise)")
        found["own_checks"] = True  # on a path that runs: passing them to the end decides
        found["check_raises"] = edited.check_raises
    if parsed.signature is not None:
        ev.oracles.append("signature")
        ev.why.append(f"the issue reports the error {parsed.signature}")
        unseen = unseen_frame(parsed.body, parsed.code)
        if unseen:  # a clean run then says nothing of the failing line
            found["path_unseen"] = unseen
        if _swallows(edited, parsed.signature.exc_type):
            found["catches"] = True
        wants = message_wants(text, parsed.code)
        if wants:  # the message now saying these is the fix
            found["message_wants"] = wants
    prose = prose_only(_report_body(parsed.body), parsed.code)
    _warning_oracle(ev, found, issue, parsed, prose)
    units = _quoted_units(edited, parsed, prose)
    if units:
        found["units"] = units
        ev.oracles.append("quoted-output")
        ev.why.append(f"the issue quotes the output of {len(units)} part(s) of its code")
    stated = _stated(issue, parsed) if parsed.signature is None else []  # an error is stronger
    if stated:
        found["stated"] = [pair.runtime() for pair in stated]
        ev.oracles.append("stated-value")
        ev.why.append(
            "the issue states the value the code gives and the one it should: "
            + "; ".join(f"{p.actual} instead of {p.expected} ({p.where})" for p in stated[:3])
        )
    crash = bool(_CRASH.search(text))
    if crash:
        found["crash"] = True
        ev.oracles.append("crash")
        ev.why.append("the issue reports a process crash (segfault, floating point exception…)")
        if _QUANTIZED.search(parsed.code):
            found["quantized"] = True  # no crash counts only once every engine has run
            ev.why[-1] += (
                "; its quantized kernels differ by engine, so a crash is looked for under every"
                " quantized engine this torch supports"
            )
    if facts.comparison is not None:
        name = "compile-vs-eager" if facts.uses_compile else "compare"
        found["check_oracle"] = name
        ev.oracles.append(name)
        why = f"the code compares {facts.comparison.actual} with {facts.comparison.expected}"
        if facts.compiled_pair and parsed.signature is None:
            why += "; should the code raise, an error in eager alone (compiled returns) reproduces"
        ev.why.append(why)
    code_text = parsed.code
    if facts.uses_compile:
        _compile_oracles(ev, found, text, code_text, edited)
    if _NONDETERMINISM.search(text) and not EXPECTS_ERROR.search(text):
        found["determinism"] = True
        if _compares_within(edited):  # two equal runs do not clear a difference inside one
            found["determinism_within"] = True
        ev.oracles.append("determinism")
        ev.why.append(
            "the issue reports results that differ between runs: the code runs twice, in child"
            " processes with the same seeds, and what it prints is compared"
        )
    if parsed.signature is None and not crash and reports_error(text, code_text):
        found["reports_error"] = True
        if about_message(text, code_text):  # any error then is no evidence: its words are
            found["about_message"] = True
        if edited.made_inputs:  # an error from inputs we made is no evidence of the issue's
            found["inputs_made"] = True
        title = issue.title or ""
        if reports_error(title, "") or _CRASHES.search(title):  # torch.compile's error may count
            found["title_fails"] = True
        ev.oracles.append("no-error")
        ev.why.append("the issue reports an error (no traceback): a clean run does not reproduce")
    found["deterministic"] = edited.deterministic
    if edited.draws and not edited.deterministic:
        found["draws"] = True  # whole values (0.0, 2.0, True) may coincide from one run to another
    found.update(issue_claims(issue, parsed, facts, edited, rewrite))
    expected = bool(found.get("error_expected"))
    if failure_unwanted(text, code_text, parsed.signature, crash, expected):
        found["failure_unwanted"] = True
    if not ev.oracles:  # the weakest claims: every other oracle decides first
        _weak_claims(ev, found, edited, issue.title or "", text, parsed)
    ev.runtime = found
    if not ev.oracles:
        ev.to_add = [
            "the error's traceback (Type: message), or",
            "an assert (or torch.testing.assert_close) that fails while the bug is there, or",
            "the output the code prints now and the output it should print",
        ]
    return ev


def _weak_claims(
    ev: Evidence,
    found: dict[str, Any],
    edited: EditedCode,
    title: str,
    said: str,
    parsed: ParsedIssue,
) -> None:
    """Two printed results the prose says differ; else an error a code comment says its
    statement should raise (``said``: the issue's title and text)."""
    if edited.pair and not other_quantity(title):
        found["pair"] = edited.pair
        ev.oracles.append("printed-pair")
        ev.why.append("the prose says the two values the code prints last differ")
        return
    missing = _missing_error(edited, said, parsed)
    if missing is not None:
        found["missing_error"] = missing
        ev.oracles.append("missing-error")
        ev.why.append("a comment says its line should raise an error: a clean run reproduces")


def _missing_error(edited: EditedCode, text: str, parsed: ParsedIssue) -> dict[str, Any] | None:
    """The error a code comment says its statement should raise (repro.missingerror); None
    where none does, the issue quotes an error, sets CPU against CUDA (one device's error is
    the behaviour wanted), or is about an error's wording."""
    if not edited.raises or parsed.signature is not None or parsed.contrasts_devices:
        return None
    return None if about_message(text, parsed.code) else dict(edited.raises)


def _warning_oracle(
    ev: Evidence, found: dict[str, Any], issue: Issue, parsed: ParsedIssue, prose: str
) -> None:
    """The warning oracle, where the issue complains of a warning it quotes and no error."""
    quoted = quoted_blocks(_report_body(parsed.body), parsed.code)
    warned = warning_claim(issue.title or "", prose, quoted, parsed.expected or "", parsed.code)
    if warned is not None and parsed.signature is None:  # an error is stronger
        found["warning"] = warned.runtime()
        ev.oracles.append("warning")
        ev.why.append(f"the issue reports the warning {warned.category}: {warned.message[:120]}")


def _stated(issue: Issue, parsed: ParsedIssue) -> list[StatedValue]:
    """The value pairs the title, the prose (above the environment), the code's comments and
    the expected and actual sections state; see contribkit.repro.statedvalues."""
    prose = (
        prose_only(_report_body(parsed.body), parsed.code)
        + "\n"
        + "\n".join(CODE_COMMENT.findall(parsed.code))
    )
    found = stated_values(issue.title or "", prose)
    sections = section_pair(parsed.expected or "", parsed.actual or "")
    if sections is not None and not any(sections.same(f) for f in found):
        found.append(sections)
    return found


def _compile_oracles(
    ev: Evidence, found: dict[str, Any], text: str, code_text: str, edited: EditedCode
) -> None:
    """The oracles of code that calls torch.compile: graph breaks (fullgraph or counted) and
    recompiles."""
    # not a numerical error ("the max abs error is 0.3"), a missing one, nor "no error"; nor
    # where the complaint is the error's wording (whether a new one is still bad is a judgement)
    fails = says_it_fails(text, code_text) and not about_message(text, code_text)
    if _FULLGRAPH.search(code_text) and fails:
        found["graph_break"] = True
        ev.oracles.append("graph-break")
        ev.why.append("a fullgraph=True compile the issue says fails: a graph break reproduces it")
    if not found.get("graph_break") and _GRAPH_BREAKS.search(text):
        found["graph_breaks"] = True
        ev.oracles.append("graph-breaks")
        ev.why.append(
            "the issue reports graph breaks in a torch.compile: torch._dynamo's counters count them"
        )
    if (
        _RECOMPILES.search(text)
        and not _RAISES.search(text)
        and not _WANTS_RECOMPILE.search(_SHOULD_NOT_RECOMPILE.sub("", text))
        and "set_stance" not in code_text  # a stance decides what a recompile does
    ):
        found["recompiles"] = {"allowed": _allowed_recompiles(text), "repeats": _repeats(edited)}
        ev.oracles.append("recompiles")
        ev.why.append(
            "the issue reports recompiles of a torch.compile: torch._dynamo's compilation"
            f" metrics count them (it allows {found['recompiles']['allowed']})"
        )


def _quoted_units(edited: EditedCode, parsed: ParsedIssue, prose: str) -> list[dict[str, Any]]:
    """The output the issue quotes: under the code (unit 0), then per statement; the comments
    are the expected output where the prose says so."""
    units = list(edited.units)
    if _COMMENTS_EXPECTED.search(prose):  # the comments hold what it should print
        units = [{**u, "expected": u["actual"], "actual": None, "weak": False} for u in units]
    program = _program_unit(parsed)
    return units if program is None else [program, *units]


def _program_unit(parsed: ParsedIssue) -> dict[str, Any] | None:
    """The output quoted under the code (and the expected output), as runtime unit 0."""
    actual = [line for o in parsed.outputs if o.role == "actual" for line in _lines(o.text)]
    expected = [line for o in parsed.outputs if o.role == "expected" for line in _lines(o.text)]
    if not actual and not expected:
        return None
    return {
        "id": 0,
        "where": "the code",
        "actual": actual or None,
        "expected": expected or None,
    }


def _lines(text: str) -> list[str]:
    """The printed lines of a quoted output, less comment lines ("#### output ####") and the
    warnings Python wrote to stderr (each with the indented source line it shows after it)."""
    kept: list[str] = []
    after_warning = False
    for line in text.split("\n"):
        if after_warning and line[:1] in (" ", "\t"):
            after_warning = False
            continue
        after_warning = bool(WARNING_SHOWN.match(line))
        if line.strip() and line[:1] != "#" and not after_warning:
            kept.append(line.rstrip())
    return kept


def _allowed_recompiles(text: str) -> int:
    """The recompiles the issue says are expected, where it says so plainly (else 0); several
    different statements count as none."""
    said = set()
    for pattern, offset in _ALLOWED:
        for match in pattern.finditer(text):
            if offset is None:
                said.add(0)
                continue
            word = match.group(1).lower()
            count = int(word) if word.isdigit() else _WORD_COUNT[word]
            said.add(max(count + offset, 0))
    return said.pop() if len(said) == 1 else 0


# Calls that compare two results, and calls that repeat nothing worth comparing.
_COMPARING = ("allclose", "isclose", "equal", "assert_close", "assertEqual", "assert_allclose")
_NOT_REPEATS = {"print", "len", "str", "repr", "range", "float", "int", "torch.manual_seed"}


def _compares_within(edited: EditedCode) -> bool:
    """The code looks for the difference inside one run: a loop, a comparison of two results
    (``allclose``, ``==``, a subtraction), or the same call made twice with the same arguments;
    then two runs that print the same do not show the difference is gone."""
    tree = parse_code(edited.text)
    if tree is None:
        return True
    seen: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.comprehension)):
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            return True
        if isinstance(node, ast.Compare) and any(
            isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)) for op in node.ops
        ):
            return True
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            if name.rsplit(".", 1)[-1] in _COMPARING:
                return True
            if name and name not in _NOT_REPEATS:
                key = ast.dump(node)
                if key in seen:
                    return True
                seen.add(key)
    return False


def _repeats(edited: EditedCode) -> bool:
    """The code can call compiled code more than once (a loop, or two calls of one compiled
    name): a single call cannot recompile, so only then does no recompile mean anything."""
    tree = parse_code(edited.text)
    if tree is None:
        return False
    compiled: set[str] = set()
    calls: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.comprehension)):
            return True
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if dotted(node.value.func).endswith("compile"):
                compiled.update(dotted(t) for t in node.targets)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                if dotted(deco.func if isinstance(deco, ast.Call) else deco).endswith("compile"):
                    compiled.add(node.name)
        elif isinstance(node, ast.Call):
            name = dotted(node.func)
            if name.endswith(".compile") and not node.args:  # module.compile(): in place
                compiled.add(name.rsplit(".", 1)[0])
            calls[name] = calls.get(name, 0) + 1
    return any(calls.get(name, 0) >= 2 for name in compiled)


# A traceback frame of the reporter's own file, and the source line it shows.
_USER_FRAME = re.compile(
    r'^[ \t]*File "(?P<file>[^"]+)", line \d+, in [^\n]*\n[ \t]+(?P<src>\S[^\n]*)', re.M
)
_LIBRARY = re.compile(r"site-packages|dist-packages|[\\/]lib[\\/]python|[\\/]torch[\\/]|^<")


def unseen_frame(body: str, code: str) -> str | None:
    """The failing line of the issue's traceback, in the reporter's own file, where no line of
    the issue's code shows it (the snippet is not the program that failed); else None."""
    wanted = [
        m["src"].strip()
        for m in _USER_FRAME.finditer(body)
        if not _LIBRARY.search(m["file"]) and not set(m["src"].strip()) <= set("^~ ")
    ]
    if not wanted:
        return None
    have = {_SPACES.sub("", line) for line in code.splitlines() if line.strip()}
    seen = any(_SPACES.sub("", src) in line for src in wanted for line in have)
    return None if seen else wanted[-1][:120]


_SPACES = re.compile(r"\s+")
_BROAD = {"", "Exception", "BaseException", "RuntimeError"}


def _swallows(edited: EditedCode, exc_type: str) -> bool:
    """The code catches the reported error (or any error) without raising it again: a clean
    run may then have hidden it."""
    tree = parse_code(edited.text)
    if tree is None:
        return False
    caught = _BROAD | {exc_type.rsplit(".", 1)[-1]}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ExceptHandler):
            continue
        types = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
        names = {dotted(t).rsplit(".", 1)[-1] if t is not None else "" for t in types}
        if names & caught and not any(isinstance(n, ast.Raise) for n in ast.walk(node)):
            return True
    return False


# -- what the issue claims, for the rules over the execution evidence (target/reprojudge.py) --
# A torch callable named in a title or an error message: ``torch.linalg.eigh``, ``F.pad``,
# ``x.index_add_(``, ``chain_matmul()``, or a backticked name.
_NAMED_CALL = re.compile(
    r"\b(?:torch|F|nn|Tensor|functional|linalg|fft|special)\.(?:\w+\.)*(\w+)"
    r"|\.(\w+)\(|\b(\w+)\(\)|`(?:\w+\.)*(\w+)(?:\(\))?`"
)
# Names that say where or how code runs, not which operation: never "the operation named".
_NOT_OPS = {"compile", "cuda", "cpu", "to", "type", "device", "dtype", "nn", "functional"}
_TITLE_GPU = re.compile(r"\b(?:cuda|gpus?)\b", re.I)
_TITLE_CPU = re.compile(r"\bcpu\b", re.I)
_TITLE_MPS = re.compile(r"\bmps\b", re.I)
# A title naming an operating system or CPU architecture: the bug is claimed there, and a clean
# run elsewhere says nothing of it (as for a device). Class from issue #21's kept-aside sets
# ("NOT_REPRODUCED for a claim about Windows, run on a Linux CPU"): "... crashes on Windows",
# "wrong result on Apple silicon", "segfault on aarch64"; the dev set has none (tests hold them).
_TITLE_PLATFORMS = (
    # "Windows" the OS, not "sliding windows" (unfold, stft): capitalised, or after "on".
    ("windows", re.compile(r"\bWindows\b|(?i:\b(?:on|under) windows\b|\bwin(?:32|64|10|11)\b)")),
    ("macos", re.compile(r"\bmac ?os\b|\bos ?x\b|\bapple silicon\b|\bmacbook\b", re.I)),
    ("arm64", re.compile(r"\baarch64\b|\barm64\b|\bgraviton\b", re.I)),
)
_DEFINING = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


# The reporter says the bug shows on the CPU too: their CUDA code is only where they met it.
# Class: a device-independent check hit on the GPU ("The error is the same on CPU", the bundled
# example; "it also happens on the CPU", "both on CPU and GPU"); a title naming CPU is handled
# by _TITLE_CPU.
_SAYS_CPU_TOO = re.compile(
    r"\b(?:same|also|too|as well|happens|reproduces|fails)\b[^.\n]{0,30}\bon (?:the )?cpu\b"
    r"|\bon (?:the )?cpu,? (?:as well|too)\b|\bboth (?:on )?(?:the )?cpu and (?:the )?(?:gpu|cuda)\b",
    re.IGNORECASE,
)


def issue_claims(
    issue: Issue, parsed: ParsedIssue, facts: CodeFacts, edited: EditedCode, rewrite: bool
) -> dict[str, Any]:
    """What the issue claims, as the runtime's rules read it: the torch operations it names
    (title, quoted error), the device it reports the bug on, whether it is about compile or sets
    CPU against CUDA, whether its code only defines things, whether it quotes its error as the
    expected result. The runtime checks the names against the torch that runs."""
    title = issue.title or ""
    said = title + "\n" + (parsed.signature.message if parsed.signature else "")
    named: list[str] = []
    for match in _NAMED_CALL.finditer(said):
        name = next(group for group in match.groups() if group)
        if len(name) > 2 and name not in _NOT_OPS and name not in named:
            named.append(name)
    claims: dict[str, Any] = {
        "named_ops": named[:8],
        "about_compile": facts.uses_compile,
        "contrast": parsed.contrasts_devices,
        "defines_only": defines_only(edited.text),
        "compiled_object": compiled_object_only(edited.text, parsed.signature, parsed.body),
        "error_expected": error_expected(parsed),
    }
    # Where the title names one device (the bug "on GPU", "on MPS"), or the code's CUDA calls
    # were rewritten to --device: the bug is reported there. Classes: a title naming the GPU
    # (dev 76571 by davidberard98), CUDA snippets rewritten for the CPU (dev 96613 by
    # yuantailing, 174172 by Cookiee235).
    # A device the title names is a claim about the bug (an error raised elsewhere is not it);
    # a rewrite only says where the reporter ran (a clean run elsewhere says nothing).
    # One operating system and one architecture at most ("macOS arm64"; "Windows and macOS"
    # claims neither), each held to this machine.
    named = [name for name, pattern in _TITLE_PLATFORMS if pattern.search(title)]
    systems = [n for n in named if n != "arm64"]
    parts = (systems if len(systems) == 1 else []) + [n for n in named if n == "arm64"]
    if parts:
        claims["reported_platform"] = "-".join(parts)
    if _TITLE_GPU.search(title) and not _TITLE_CPU.search(title):
        claims["reported_device"], claims["device_claimed"] = "cuda", True
    elif _TITLE_MPS.search(title) and not _TITLE_CPU.search(title):
        claims["reported_device"], claims["device_claimed"] = "mps", True
    elif rewrite and not _SAYS_CPU_TOO.search(parsed.body or issue.body or ""):
        claims["reported_device"] = "cuda"
    return claims


# The prose says the code's comments hold the output it should print, not what it prints:
# "I expect it to round half away from zero, as in the comments", "the comments show the
# expected values".
_COMMENTS_EXPECTED = re.compile(
    r"\b(?:expect\w*|should|want\w*|desired|correct)\b[^.\n]{0,60}\b(?:in|as\s+in|per)\s+"
    r"(?:the\s+|my\s+)?comments?\b|\bcomments?\s+(?:show|hold|give|are|is|say)\s+"
    r"(?:the\s+|what\s+(?:(?:it|they|this|torch|each)\s+)?)?"
    r"(?:expected|correct|desired|right|should)\b",
    re.I,
)
# The compiler's own failures: an issue quoting one is about a compiled frame.
_COMPILER_ERROR = re.compile(
    r"_dynamo|_inductor|BackendCompilerFailed|Unsupported|InductorError|TorchRuntimeError"
)


def compiled_object_only(code: str, signature: Signature | None, body: str) -> bool:
    """The code binds each torch.compile result to a name and never calls one (``opt(x)``,
    ``opt.forward(x)``): it reads the compiled object's attributes or calls its methods (a
    wrapper's ``.training`` after ``.eval()``, dev 132986; its ``state_dict()`` keys), so no
    frame is to be compiled. Not for a decorator, a result thrown away or passed on, nor an
    issue that quotes the compiler's error or traceback."""
    tree = parse_code(code)
    if tree is None or _COMPILER_ERROR.search(f"{signature or ''}\n{body}"):
        return False
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    compiles = {id(n) for n in calls if dotted(n.func) == "torch.compile"}
    binds = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and id(n.value) in compiles]
    names = {t.id for n in binds for t in n.targets if isinstance(t, ast.Name)}
    if not compiles or len(binds) != len(compiles) or not names:
        return False
    for call in calls:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ("forward", "__call__"):
            func = func.value
        if isinstance(func, ast.Name) and func.id in names:
            return False
    return True


def defines_only(code: str) -> bool:
    """The code's top level only imports, defines classes and functions, and binds constants:
    running it executes no operation (the inputs were never shown)."""
    tree = parse_code(code)
    if tree is None or not tree.body:
        return False
    for stmt in tree.body:
        constant = isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr)) and isinstance(
            stmt.value, ast.Constant
        )
        if not (isinstance(stmt, (*_DEFINING, ast.Pass)) or constant):
            return False
    return True


def error_expected(parsed: ParsedIssue) -> bool:
    """The issue's expected behaviour quotes its error (the error is what it wants, as on the
    correct side of a CPU-vs-CUDA contrast), and its actual behaviour does not."""
    signature, expected = parsed.signature, parsed.expected or ""
    if signature is None or len(signature.message) < 12:
        return False
    key = _SPACES.sub(" ", signature.message[:60]).lower()
    expected, actual = (_SPACES.sub(" ", t).lower() for t in (expected, parsed.actual or ""))
    return key in expected and key not in actual
