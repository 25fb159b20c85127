"""contribkit-commit-msg: check a commit message against PyTorch's conventions (commit-msg stage).

Checks the title (length, trailing period, whitespace, WIP, imperative mood, style), the blank
second line, body line length (URLs, code and trailers exempt), and that a branch named after an
issue references it. Comment lines (core.commentChar) are ignored where git strips them (a
message written in the editor, or commit.cleanup=strip; not `git commit -m`), and so is
everything below the `git commit -v` scissors line. Merge, fixup, squash, amend and revert
commits are skipped unless --all-commits. An empty message passes: git aborts that commit itself.

Example: contribkit-commit-msg .git/COMMIT_EDITMSG
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import SimpleNamespace

from contribkit.conventions.branches import issue_from_branch
from contribkit.conventions.commitmsg import (
    TITLE_STYLES,
    check_message,
    clean_message,
    cleanup_rules,
    decode_message,
    skip_kind,
)
from contribkit.conventions.report import Findings
from contribkit.core.errors import BadInput
from contribkit.git import cmd as gitcmd
from contribkit.hooks._common import HookContext, HookSpec, Option, run_hook

HOOK_ID = "contribkit-commit-msg"


def editor_was_used() -> bool | None:
    """Whether git opened the editor for the message: it sets ``GIT_EDITOR=:`` for its commit
    hooks when it did not (and always ``GIT_INDEX_FILE``); None outside ``git commit``."""
    if not os.environ.get("GIT_INDEX_FILE"):
        return None
    return os.environ.get("GIT_EDITOR") != ":"


def _git_config(root: str | None, pattern: str) -> list[tuple[str, str]]:
    """``(key, value)`` of the git config entries whose keys match ``pattern`` (a regex), in
    git's order (the last one wins)."""
    out = gitcmd.git("config", "--get-regexp", pattern, cwd=root, check=False)
    return [(key, value) for key, _, value in (line.partition(" ") for line in out.splitlines())]


def check(args: SimpleNamespace, ctx: HookContext) -> Findings:
    style = ctx.get_str("title_style")
    if style not in TITLE_STYLES:
        raise BadInput(
            f"hooks.title_style is '{style}'", hint=f"use one of: {', '.join(TITLE_STYLES)}"
        )
    try:
        with open(args.filename, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise BadInput(f"cannot read {args.filename}: {exc.strerror}") from exc
    text, encoding_violation = decode_message(raw)
    if encoding_violation:  # git may be set up for another encoding
        encoding = _git_config(ctx.root, r"^i18n\.commitencoding$")
        if encoding:
            text, encoding_violation = decode_message(raw, encoding[-1][1])
    comment, strip = cleanup_rules(
        text,
        lambda: _git_config(ctx.root, r"^(core\.comment(char|string)|commit\.cleanup)$"),
        editor_was_used(),
    )
    lines = clean_message(text, comment, strip)
    if lines and skip_kind(lines[0]) and not args.all_commits:
        return Findings()
    violations = check_message(
        lines,
        title_max_length=ctx.get_int("title_max_length"),
        body_max_length=ctx.get_int("body_max_length"),
        title_style=style,
        conventional_types=ctx.get_list("conventional_types"),
        allow_wip=ctx.get_flag("allow_wip"),
        issue=issue_from_branch(ctx.branch),
        strict=args.all_commits,
    )
    if encoding_violation:
        violations.insert(0, encoding_violation)
    return Findings(violations, recovery=f"git commit --edit --file={args.filename}")


SPEC = HookSpec(
    HOOK_ID,
    __doc__,
    "CK1",
    [
        Option(
            "--all-commits",
            "also check merge, fixup, squash, amend and revert commits (--strict: the old name;"
            " warnings still block only under hooks.strict)",
            "flag",
            aliases=("--strict",),
        )
    ],
    files="one",
    files_help="the commit message file git passes to the hook",
)


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(SPEC, check, argv)


if __name__ == "__main__":
    raise SystemExit(main())
