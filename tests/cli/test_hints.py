"""Every ``hint:`` the code can print names only options that exist.

The hints are read from the source (every ``hint=`` argument, f-strings included, with their
formatted parts left out); each ``--option`` in a hint is checked against the ``--help`` of the
command it is for: the one the hint names (``contribkit CMD …``), else the command whose stage
package printed it. Options of other programs named in a hint (git, gh, pip, …) are theirs.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from contribkit.cli.app import COMMANDS

PACKAGE = Path(__file__).resolve().parent.parent.parent / "contribkit"
# The stage package (or module) that printed a hint -> the commands it can be printed by.
STAGE_COMMANDS = {
    "repro": ["repro"],
    "testgen": ["test"],
    "debug": ["debug"],
    "run": ["run"],
    "pr/submit.py": ["submit"],
    "pr": ["pr", "submit"],
    "demo": ["demo"],
    "setup/hookinstall.py": ["init"],
    "setup": ["init", "doctor"],
    "github": ["repro", "pr", "submit"],
    "ops": ["op"],
    "gaps": ["gaps"],
    "bisect": ["bisect"],
    "triage": ["triage"],
}
OTHER_PROGRAMS = {"git", "gh", "pip", "python", "python3", "pytest", "ssh", "lintrunner", "ghstack"}
SEPARATORS = re.compile(r"[,;()`]| or | then |: ")
# Hook entry points parse their own arguments (argparse), not a contribkit command's.
SKIPPED = ("hooks/", "conventions/", "target/")


def options_of(command: str) -> set[str]:
    module, attribute, _ = COMMANDS[command]
    cmd = getattr(importlib.import_module(module), attribute)
    assert isinstance(cmd, click.Command)
    names = {"--help"}
    for param in cmd.params:
        names.update(o for o in (*param.opts, *param.secondary_opts) if o.startswith("--"))
    return names


def literal_text(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "X"
            for v in node.values
        )
    return None


def hints() -> Iterator[tuple[str, int, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(SKIPPED):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for value in hint_values(node):
                text = literal_text(value)
                if text and "--" in text:
                    yield rel, value.lineno, text


# Errors take (message, hint): ContribkitError and its kinds, print_error.
_ERROR_CALL = re.compile(r"(Error|Unavailable|Required|Failed|BadInput|print_error)$")


def hint_values(node: ast.AST) -> Iterator[ast.expr]:
    if isinstance(node, ast.keyword) and node.arg == "hint":
        yield node.value
    elif isinstance(node, ast.Call) and len(node.args) >= 2:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if _ERROR_CALL.search(name):
            yield node.args[1]


def commands_for(rel: str) -> tuple[list[str], bool]:
    """The commands that can print a hint from ``rel``, and whether the hint must hold for every
    one of them (a stage's hints), or for one (the shared modules': core/, git/, cli/)."""
    if rel.startswith("cli/commands/"):
        return [Path(rel).stem], True
    for stage in sorted(STAGE_COMMANDS, key=len, reverse=True):
        if rel == stage or rel.startswith(stage + "/"):
            return STAGE_COMMANDS[stage], True
    return list(COMMANDS), False


def claims(hint: str, default: list[str]) -> Iterator[tuple[str, list[str]]]:
    """``(option, commands it must belong to one of)`` for each contribkit option in ``hint``."""
    for segment in SEPARATORS.split(hint):
        owner: list[str] | None = default
        words = segment.split()
        for i, word in enumerate(words):
            if word in OTHER_PROGRAMS:
                owner = None
            elif word == "contribkit" and i + 1 < len(words) and words[i + 1] in COMMANDS:
                owner = [words[i + 1]]
            elif re.match(r"--[a-z]", word) and owner is not None:
                yield word.split("=", 1)[0].rstrip(".,'\""), owner


ALL_HINTS = list(hints())


def test_the_walker_finds_the_hints() -> None:
    assert len(ALL_HINTS) > 30
    assert any(rel.startswith("cli/commands/") for rel, _, _ in ALL_HINTS)


@pytest.mark.parametrize(
    ("rel", "line", "hint"), ALL_HINTS, ids=[f"{r}:{n}" for r, n, _ in ALL_HINTS]
)
def test_every_option_in_a_hint_exists(rel: str, line: int, hint: str) -> None:
    default, every = commands_for(rel)
    for option, commands in claims(hint, default):
        having = [c for c in commands if option in options_of(c)]
        missing = sorted(set(commands) - set(having))
        assert having and not (every and missing), (
            f"{rel}:{line}: hint names {option}, which {missing or commands} lack: {hint!r}"
        )
