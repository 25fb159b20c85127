"""The user's oracle (``contribkit repro N --expect KIND[:ARG]``) on contribkit's side.

The script decides by it (``target/reproexpect.py``); here it is validated (:func:`check_expect`),
described for the script's header, meta.json and the summary (:func:`describe`), given the facts
of the code the runtime needs (:func:`expect_facts`), suggested where the tool abstains
(:func:`suggestion`), and set on a folder already written without touching the issue's code
(:func:`set_oracle`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from contribkit.core.errors import BadInput
from contribkit.target.reproexpect import EXPECT_AUTO, parse_expect

# What each kind decides: REPRODUCED when ..., NOT_REPRODUCED when ... ("{arg}": its argument).
MEANINGS = {
    "error": (
        "the code raises an error{holding}",
        "it runs to its end without one",
    ),
    "no-error": ("the code runs to its end without an error", "it raises one"),
    "output": ("what the code prints holds {arg!r}", "it runs to its end without printing it"),
    "compile-vs-eager": (
        "eager (TORCH_COMPILE_DISABLE=1) and compiled runs print different values, or one"
        " raises and the other does not",
        "both print the same values",
    ),
    "device-vs-cpu": (
        "runs on the device and on CPU print different values, or one raises and the other"
        " does not",
        "they agree (CANNOT_RUN without the device)",
    ),
    "recompiles": (
        "torch.compile recompiles more than {arg} time(s) (automatic dynamic shapes aside)",
        "at most {arg}",
    ),
    "graph-breaks": (
        "torch._dynamo counts more than {arg} graph break(s)",
        "at most {arg}",
    ),
    "determinism": (
        "two runs with the same seeds print different output",
        "they print the same",
    ),
    "crash": (
        "a signal kills the process (segfault, abort, floating point exception)",
        "the code ends, with or without a Python exception",
    ),
    "warning": (
        "a warning the code raises (or what it writes to stderr) holds {arg!r}",
        "it runs to its end without one",
    ),
}
# The prose of an issue whose bug is an error that is missing (a prose pattern that states what
# the issue claims; it only picks the --expect a hint suggests): "should raise", "silently".
# Each branch starts with s, e, o, d or n: the lookahead skips other positions of a long text
# fast (2-3x on 200,000 characters) and matches what the branches do (the same re.I folding).
WANTS_ERROR = re.compile(
    r"(?=[sedon])(?:\bsilently\b|\b(?:should|expected?\s+to|supposed\s+to|ought\s+to)\s+"
    r"(?:(?!not\b|never\b)\w+\s+)?(?:raise|throw|error|fail)"
    r"|\b(?:does\s*n[o']t|did\s*n[o']t|never)\s+(?:raise|throw|error))",
    re.I,
)


def describe(value: str | None) -> str:
    """One line on what the oracle decides, for the header, meta.json and the summary."""
    if not value or value == EXPECT_AUTO:
        return "auto: the oracles below, as the issue gives them (state one with --expect)"
    kind, arg = parse_expect(value)
    holding = f" whose type or message holds {arg!r}" if arg else ""
    yes, no = (text.format(arg=arg, holding=holding) for text in MEANINGS[kind])
    return f"{value} (stated with --expect): REPRODUCED when {yes}; NOT_REPRODUCED when {no}"


def suggestion(runtime: dict[str, Any], has_signature: bool) -> str | None:
    """The ``--expect`` that could decide a repro whose issue gives no oracle, or None."""
    facts = runtime.get("expect_facts") or {}
    if has_signature:
        return None
    if facts.get("uses_compile"):
        return "--expect compile-vs-eager"
    if facts.get("contrasts_devices") and facts.get("uses_device"):
        return "--expect device-vs-cpu"
    if facts.get("wants_error"):
        return "--expect no-error"
    return "--expect output:TEXT (TEXT: what the code prints while the bug is there)"


_HEADER = re.compile(r"^  Oracle:    .*$", re.M)
_CALL = re.compile(r"^_repro = (?:_runtime\(\)\.)?Repro\($(?P<args>.*?)^\)$", re.M | re.S)
_KWARG = re.compile(r"^    expect=.*,$", re.M)


def set_oracle(
    folder: Path, value: str, dry_run: bool = False
) -> tuple[str | None, dict[str, Any]]:
    """Set the oracle of the repro in ``folder``: its meta.json and repro.py's header line and
    ``expect=`` argument, both files at once; nothing else changes. Returns the oracle it had and
    the new meta.json."""
    from contribkit.core.fsutil import write_all
    from contribkit.core.render import docstring_text, python_literal

    script, meta_path = folder / "repro.py", folder / "meta.json"
    regenerate = f"regenerate it: contribkit repro ... -o {folder} --force --expect {value}"
    try:
        text = script.read_text(encoding="utf-8")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(f"{folder} is not a readable repro folder ({exc})", hint=regenerate) from exc
    call = _CALL.search(text)
    head = text[: call.start()] if call else ""
    if not isinstance(meta, dict) or call is None:
        raise BadInput(f"{folder} is not a contribkit repro folder", hint=regenerate)
    if len(_HEADER.findall(head)) != 1 or len(_KWARG.findall(call["args"])) != 1:
        raise BadInput(
            f"{script} has no oracle line to change (written before --expect, or edited)",
            hint=regenerate,
        )
    stored = None if value == EXPECT_AUTO else value
    old = meta.get("expect")
    header = "  Oracle:    " + docstring_text(describe(stored))
    args = _KWARG.sub(lambda _: f"    expect={python_literal(stored)},", call["args"])
    new_text = (
        _HEADER.sub(lambda _: header, head)
        + text[call.start() : call.start("args")]
        + args
        + text[call.end("args") :]
    )
    meta.update(expect=stored, expect_means=describe(stored))
    if not dry_run:
        write_all(
            [(script, new_text, 0o755), (meta_path, json.dumps(meta, indent=2) + "\n", None)],
            force=True,
        )
    return (old if isinstance(old, str) else None), meta
