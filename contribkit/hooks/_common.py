"""What every hook shares: arguments, the ``[hooks]`` settings, rule switches and the report.

A hook module declares a :class:`HookSpec` and a ``check(args, ctx) -> Findings`` function;
:func:`run_hook` does the rest. Output is one violation per line in the gitlint style,
``LOCATION: CK101 title-too-long: title is 91 characters, limit 72 ("…")``, each followed by one
fix hint, then the recovery command once. Colour only on a TTY, and never with ``NO_COLOR``.

Hooks run on every commit, so this module is standard library only and keeps imports cheap:
arguments are parsed by a small parser here, and argparse is imported only to print ``--help``
or a usage error from the same declarations.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from types import SimpleNamespace

from contribkit.conventions.rules import RULES, Violation, resolve_rule_names
from contribkit.core.config import REPO_CONFIG_NAME, ConfigError, Settings, load_settings
from contribkit.core.errors import BadInput, ContribkitError, print_error, warn
from contribkit.git import cmd as gitcmd

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and argparse are slow to import; annotations only
    import argparse
    from typing import TextIO

PRAGMA = "contribkit: allow"


class HookContext:
    __slots__ = ("branch", "disabled", "hook_id", "root", "settings")

    def __init__(
        self,
        hook_id: str,
        root: str | None,
        settings: Settings,
        disabled: frozenset[str],
        branch: str | None = None,
    ) -> None:
        self.hook_id = hook_id
        self.root = root  # the git work tree, None when run outside one
        self.settings = settings
        self.disabled = disabled
        self.branch = branch  # the checked-out branch, None when detached

    def enabled(self, rule_id: str) -> bool:
        return rule_id not in self.disabled

    def get(self, key: str) -> object:
        return self.settings.get(f"hooks.{key}")

    def get_int(self, key: str) -> int:
        value = self.get(key)
        assert isinstance(value, int)
        return value

    def get_str(self, key: str) -> str:
        value = self.get(key)
        assert isinstance(value, str)
        return value

    def get_list(self, key: str) -> list[str]:
        value = self.get(key)
        assert isinstance(value, list)
        return value

    def require_root(self) -> str:
        if self.root is None:
            raise BadInput("not inside a git repository", hint="run the hook from your fork")
        return self.root


class Findings:
    __slots__ = ("output", "recovery", "violations")

    def __init__(
        self,
        violations: list[Violation] | None = None,
        recovery: str | None = None,
        output: str = "",
    ) -> None:
        self.violations = [] if violations is None else violations
        self.recovery = recovery  # the command that gets the user back on track
        self.output = output  # a tool's own output, printed before the violations


# --- arguments ----------------------------------------------------------------------------------


class Option:
    """A ``--long`` option: a ``flag``, a single ``value``, or a repeatable ``append``."""

    __slots__ = ("choices", "default", "dest", "flag", "help", "kind", "metavar")

    def __init__(
        self,
        flag: str,
        help: str,
        kind: str = "value",
        choices: tuple[str, ...] = (),
        default: object = None,
        metavar: str | None = None,
    ) -> None:
        self.flag = flag
        self.dest = flag.lstrip("-").replace("-", "_")
        self.help = help
        self.kind = kind
        self.choices = choices
        self.default = default
        self.metavar = metavar


COMMON_OPTIONS = (
    Option(
        "--disable",
        "comma-separated rule ids or slugs to switch off (adds to hooks.disable)",
        kind="append",
        metavar="RULES",
    ),
    Option(
        "--color",
        "colour the output (auto: only on a terminal without NO_COLOR)",
        choices=("auto", "always", "never"),
        default="auto",
    ),
)


class HookSpec:
    """A hook's command line: its id, help text, rule family, options and positional files."""

    __slots__ = ("doc", "files", "files_help", "hook_id", "options", "rule_prefix")

    def __init__(
        self,
        hook_id: str,
        doc: str | None,
        rule_prefix: str,
        options: Sequence[Option] = (),
        files: str | None = None,  # "one" (a message file), "many" (staged files) or None
        files_help: str = "",
    ) -> None:
        self.hook_id = hook_id
        self.doc = (doc or "").strip()
        self.rule_prefix = rule_prefix
        self.options = (*COMMON_OPTIONS, *options)
        self.files = files
        self.files_help = files_help


def _argparse_parser(spec: HookSpec) -> argparse.ArgumentParser:
    import argparse

    rules = "\n".join(
        f"  {rule.id} {rule.slug}" + ("" if rule.severity == "error" else " (warning)")
        for rule in RULES.values()
        if rule.id.startswith(spec.rule_prefix)
    )
    parser = argparse.ArgumentParser(
        prog=spec.hook_id,
        description=spec.doc,
        epilog=f"rules:\n{rules}\n\nSwitch rules off with --disable, or hooks.disable in "
        f"{REPO_CONFIG_NAME}. Exit codes: 0 ok, 1 a rule failed, 2 bad usage or config.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for opt in spec.options:
        if opt.kind == "flag":
            parser.add_argument(opt.flag, action="store_true", help=opt.help)
        else:
            parser.add_argument(
                opt.flag,
                action="append" if opt.kind == "append" else "store",
                choices=opt.choices or None,
                default=[] if opt.kind == "append" else opt.default,
                metavar=opt.metavar,
                help=opt.help,
            )
    if spec.files:
        parser.add_argument(
            "files" if spec.files == "many" else "filename",
            nargs="*" if spec.files == "many" else None,
            help=spec.files_help,
        )
    return parser


def parse_args(spec: HookSpec, argv: Sequence[str]) -> SimpleNamespace:
    """Parse ``argv`` without importing argparse; argparse handles --help and bad usage."""
    values: dict[str, object] = {
        o.dest: False if o.kind == "flag" else o.default for o in spec.options if o.kind != "append"
    }
    appended: dict[str, list[str]] = {o.dest: [] for o in spec.options if o.kind == "append"}
    by_flag = {o.flag: o for o in spec.options}
    positional: list[str] = []
    args = list(argv)
    i = 0
    ok = True
    while i < len(args) and ok:
        token = args[i]
        i += 1
        if token == "--":
            positional += args[i:]
            break
        if not token.startswith("-") or token == "-":
            positional.append(token)
            continue
        flag, eq, value = token.partition("=")
        opt = by_flag.get(flag)
        if opt is None or (opt.kind == "flag" and eq):
            ok = False
        elif opt.kind == "flag":
            values[opt.dest] = True
        else:
            if not eq:
                if i >= len(args):
                    ok = False
                    break
                value = args[i]
                i += 1
            if opt.choices and value not in opt.choices:
                ok = False
            elif opt.kind == "append":
                appended[opt.dest].append(value)
            else:
                values[opt.dest] = value
    if spec.files == "one":
        ok = ok and len(positional) == 1
        values["filename"] = positional[0] if positional else None
    elif spec.files == "many":
        values["files"] = positional
    elif positional:
        ok = False
    if not ok:  # let argparse print the usage error (exit 2), or the help (exit 0)
        return SimpleNamespace(**vars(_argparse_parser(spec).parse_args(args)))
    return SimpleNamespace(**values, **appended)


# --- settings and output ------------------------------------------------------------------------


def load_context(hook_id: str, disable_args: Sequence[str]) -> HookContext:
    root, branch = gitcmd.root_and_branch()
    try:
        settings = load_settings(repo_root=root)
    except ConfigError as exc:
        raise BadInput(str(exc), hint=f"fix the [hooks] section of {REPO_CONFIG_NAME}") from exc
    for message in settings.warnings:
        warn(message)
    names = list(settings.get("hooks.disable"))
    for arg in disable_args:
        names.extend(arg.split(","))
    disabled, unknown = resolve_rule_names(names)
    for name in unknown:
        warn(f"hooks.disable: no rule named '{name}' (ignored)")
    return HookContext(hook_id, root, settings, disabled, branch)


def use_color(choice: str, stream: TextIO) -> bool:
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return stream.isatty()


def _paint(text: str, code: str, color: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if color else text


def format_violation(v: Violation, color: bool = False) -> str:
    location = ":".join(str(p) for p in (v.path, v.line) if p is not None)
    tag = _paint(f"{v.rule.id} {v.rule.slug}", "1;31" if v.is_error else "1;33", color)
    return f"{location + ': ' if location else ''}{tag}: {v.message}"


def quote(text: str, limit: int = 60, tail: bool = False) -> str:
    """``("text")`` for a violation message, shortened to ``limit`` characters (keeping the end
    when ``tail``)."""
    text = text.strip()
    if len(text) > limit:
        text = "…" + text[-(limit - 1) :].lstrip() if tail else text[: limit - 1].rstrip() + "…"
    return f'("{text}")'


def write_report(ctx: HookContext, findings: Findings, color: bool, out: TextIO) -> int:
    """Print the enabled violations; 1 if any is an error, else 0."""
    shown = [v for v in findings.violations if ctx.enabled(v.rule.id)]
    if not shown:
        return 0
    if findings.output:
        print(findings.output.rstrip(), file=out)
    for v in shown:
        print(format_violation(v, color), file=out)
        print(_paint(f"    hint: {v.fix}", "2", color), file=out)
    errors = sum(v.is_error for v in shown)
    warnings = len(shown) - errors
    counts = ", ".join(
        f"{n} {word}{'s' if n != 1 else ''}"
        for n, word in ((errors, "error"), (warnings, "warning"))
        if n
    )
    summary = f"{ctx.hook_id}: {counts}."
    if errors and findings.recovery:
        summary += f" To recover: {findings.recovery}"
    print(summary, file=out)
    print(
        f'To switch a rule off: hooks.disable = ["{shown[0].rule.id}"] in {REPO_CONFIG_NAME}',
        file=out,
    )
    return 1 if errors else 0


def run_hook(
    spec: HookSpec,
    check: Callable[[SimpleNamespace, HookContext], Findings],
    argv: Sequence[str] | None,
) -> int:
    """Parse ``argv``, load settings, run ``check`` and print its findings; return the exit code."""
    args = parse_args(spec, sys.argv[1:] if argv is None else argv)
    try:
        ctx = load_context(spec.hook_id, args.disable)
        findings = check(args, ctx)
    except ContribkitError as exc:
        print_error(exc.message, exc.hint)
        return int(exc.exit_code)
    except gitcmd.GitError as exc:
        print_error(f"git failed: {exc}")
        return 2
    return write_report(ctx, findings, use_color(args.color, sys.stdout), sys.stdout)


# --- files ----------------------------------------------------------------------------------------


def read_source(path: str) -> str | None:
    """A source file's text (undecodable bytes replaced), or None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return None


def allowed_by_pragma(lines: Sequence[str], first: int, last: int, rule_id: str) -> bool:
    """Whether a ``# contribkit: allow`` pragma on lines ``first..last`` (1-based) silences it.

    ``# contribkit: allow`` silences every rule on its line; ``# contribkit: allow CK304``
    (ids or slugs, comma-separated) silences only those.
    """
    for number in range(max(first, 1), min(last, len(lines)) + 1):
        text = lines[number - 1]
        at = text.find("#")
        while at != -1:
            comment = text[at + 1 :].strip()
            if comment.startswith(PRAGMA):
                named = comment[len(PRAGMA) :].replace(",", " ").split()
                if not named or rule_id in resolve_rule_names(named)[0]:
                    return True
            at = text.find("#", at + 1)
    return False


def glob_matcher(patterns: Sequence[str]) -> Callable[[str], bool]:
    """A test of repo-relative, ``/``-separated paths against fnmatch patterns, compiled once.

    ``*`` crosses ``/`` (so ``torch/**`` is everything under ``torch/``).
    """
    from fnmatch import translate

    if not patterns:
        return lambda path: False
    regex = re.compile("|".join(f"(?:{translate(p)})" for p in patterns))
    return lambda path: regex.match(path) is not None


# --- git facts ----------------------------------------------------------------------------------

# The issue a branch is for (README, "Which issue a branch is for"). The one parser of branch
# names: the hooks, `pr` and `submit` use it.
# 1. after the word issue/issues/gh at the start of a name part: issue-123, issue_123, issue123,
#    issue#123, gh-123, fix/relu-issue-123 (not "tissue-5");
_BRANCH_ISSUE_WORD = re.compile(r"(?:^|[/_.-])(?:issues?|gh)[-_#]?(\d+)(?![0-9A-Za-z])", re.I)
# 2. else a path segment that starts with a number of two or more digits, then "-", "_" or its
#    end: 123-relu, fix/123, fix/123_relu (not "fix/2.1-regression", "python-312", "3-way-merge").
_BRANCH_ISSUE_SEGMENT = re.compile(r"(?:^|/)(\d{2,})(?=[-_/]|$)")


def issue_from_branch(branch: str | None) -> int | None:
    """The issue number a branch name carries, e.g. 12345 for ``fix/12345-relu``, else None."""
    if not branch:
        return None
    m = _BRANCH_ISSUE_WORD.search(branch) or _BRANCH_ISSUE_SEGMENT.search(branch)
    return int(m.group(1)) if m else None


RANGE_OPTIONS = (
    Option(
        "--from-ref",
        "start of the pushed range (default: $PRE_COMMIT_FROM_REF, else the merge-base with "
        "the upstream base branch)",
        metavar="REF",
    ),
    Option("--to-ref", "end of the range (default: $PRE_COMMIT_TO_REF, else HEAD)", metavar="REF"),
)


def push_range(args: SimpleNamespace, ctx: HookContext) -> tuple[str, str] | None:
    """The ``(from, to)`` commits being pushed, or None when there is no base to compare with."""
    root = ctx.require_root()
    to_ref = args.to_ref or os.environ.get("PRE_COMMIT_TO_REF") or "HEAD"
    from_ref = args.from_ref or os.environ.get("PRE_COMMIT_FROM_REF")
    if from_ref:
        return str(from_ref), str(to_ref)
    base = ctx.settings.get("base_branch")
    for remote in dict.fromkeys((ctx.settings.get("upstream_remote"), "origin")):
        out = gitcmd.git("merge-base", to_ref, f"{remote}/{base}", cwd=root, check=False)
        if out:
            return out, str(to_ref)
    return None


def changed_files(root: str, from_ref: str, to_ref: str) -> list[str]:
    out = gitcmd.git("diff", "--name-only", "--no-renames", "-z", from_ref, to_ref, cwd=root)
    return [name for name in out.split("\0") if name]
