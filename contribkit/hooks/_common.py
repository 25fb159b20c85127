"""What every hook shares: arguments, the ``[hooks]`` settings, rule switches, the pushed range.

A hook module declares a :class:`HookSpec` and a ``check(args, ctx) -> Findings`` function;
:func:`run_hook` does the rest, and prints the findings with
:func:`contribkit.conventions.report.write_report` (gitlint style, colour only on a TTY).

Hooks run on every commit, so this module is standard library only and keeps imports cheap:
arguments are parsed by a small parser here, and argparse is imported only to print ``--help``
or a usage error from the same declarations.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from types import SimpleNamespace

from contribkit.conventions.report import Findings, use_color, write_report
from contribkit.conventions.rules import RULES, resolve_rule_names
from contribkit.core.config import REPO_CONFIG_NAME, ConfigError, Settings, load_settings
from contribkit.core.errors import BadInput, ContribkitError, print_error, warn
from contribkit.git import cmd as gitcmd

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and argparse are slow to import; annotations only
    import argparse

PRAGMA = "contribkit: allow"


class HookContext:
    __slots__ = ("branch", "disabled", "hook_id", "root", "settings", "switched_off")

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
        self.switched_off = False  # hooks.disable names the hook itself

    def enabled(self, rule_id: str) -> bool:
        return rule_id not in self.disabled

    def get_int(self, key: str) -> int:
        return self.settings.integer(f"hooks.{key}")

    def get_str(self, key: str) -> str:
        return self.settings.text(f"hooks.{key}")

    def get_list(self, key: str) -> list[str]:
        return self.settings.names(f"hooks.{key}")

    def get_flag(self, key: str) -> bool:
        return self.settings.flag(f"hooks.{key}")

    def require_root(self) -> str:
        if self.root is None:
            raise BadInput("not inside a git repository", hint="run the hook from your fork")
        return self.root


# --- arguments ----------------------------------------------------------------------------------


class Option:
    """A ``--long`` option: a ``flag``, a single ``value``, or a repeatable ``append``."""

    __slots__ = ("aliases", "choices", "default", "dest", "flag", "help", "kind", "metavar")

    def __init__(
        self,
        flag: str,
        help: str,
        kind: str = "value",
        choices: tuple[str, ...] = (),
        default: object = None,
        metavar: str | None = None,
        aliases: tuple[str, ...] = (),  # older spellings, still accepted
    ) -> None:
        self.flag = flag
        self.aliases = aliases
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
        f"  {rule.id} {rule.slug}" + (" (blocks)" if rule.severity == "error" else " (warning)")
        for rule in RULES.values()
        if rule.id.startswith(spec.rule_prefix)
    )
    parser = argparse.ArgumentParser(
        prog=spec.hook_id,
        description=spec.doc,
        epilog=f"rules:\n{rules}\n\nWarnings never block unless hooks.strict = true. Switch "
        f"rules off with --disable, or hooks.disable in {REPO_CONFIG_NAME}. Exit codes: 0 ok "
        "(warnings at most), 1 a rule blocked, 2 bad usage or config.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for opt in spec.options:
        if opt.kind == "flag":
            parser.add_argument(
                opt.flag, *opt.aliases, dest=opt.dest, action="store_true", help=opt.help
            )
        else:
            parser.add_argument(
                opt.flag,
                *opt.aliases,
                dest=opt.dest,
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
    by_flag = {flag: o for o in spec.options for flag in (o.flag, *o.aliases)}
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


# The stage runner (contribkit.hooks.stage) runs several hooks in one process: it asks for the
# work tree and settings to be read once, for all of them (see share_settings).
_shared: dict[str, tuple[str | None, str | None, Settings]] | None = None


def share_settings() -> None:
    """Read the work tree, branch and settings once for every hook this process runs next."""
    global _shared
    _shared = {}


def _root_and_settings() -> tuple[str | None, str | None, Settings]:
    if _shared is not None and "base" in _shared:
        return _shared["base"]
    root, branch = gitcmd.root_and_branch()
    try:
        settings = load_settings(repo_root=root)
    except ConfigError as exc:
        raise BadInput(str(exc), hint=f"fix the [hooks] section of {REPO_CONFIG_NAME}") from exc
    for message in settings.warnings:
        warn(message)
    if _shared is not None:
        _shared["base"] = (root, branch, settings)
    return root, branch, settings


def disabled_names(settings: Settings, disable_args: Sequence[str] = ()) -> list[str]:
    """What ``hooks.disable`` and ``--disable`` name: rule ids or slugs, and hook ids."""
    names = list(settings.names("hooks.disable"))
    for arg in disable_args:
        names.extend(arg.split(","))
    return [name.strip() for name in names if name.strip()]


def load_context(hook_id: str, disable_args: Sequence[str]) -> HookContext:
    from contribkit.conventions.hooklist import HOOK_MODULES

    root, branch, settings = _root_and_settings()
    names = disabled_names(settings, disable_args)
    disabled, unknown = resolve_rule_names([n for n in names if n not in HOOK_MODULES])
    for name in unknown:
        warn(f"hooks.disable: no rule named '{name}' (ignored)")
    ctx = HookContext(hook_id, root, settings, disabled, branch)
    ctx.switched_off = hook_id in names
    return ctx


def run_hook(
    spec: HookSpec,
    check: Callable[[SimpleNamespace, HookContext], Findings],
    argv: Sequence[str] | None,
) -> int:
    """Parse ``argv``, load settings, run ``check`` and print its findings; return the exit code."""
    args = parse_args(spec, sys.argv[1:] if argv is None else argv)
    try:
        ctx = load_context(spec.hook_id, args.disable)
        if ctx.switched_off:
            return 0
        findings = check(args, ctx)
    except ContribkitError as exc:
        print_error(exc.message, exc.hint)
        return int(exc.exit_code)
    except gitcmd.GitError as exc:
        print_error(f"git failed: {exc}")
        return 2
    color = use_color(args.color, sys.stdout)
    strict = ctx.settings.flag("hooks.strict")
    return write_report(ctx.hook_id, findings, color, sys.stdout, ctx.disabled, strict)


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


# --- the pushed range --------------------------------------------------------------------------

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
    """The ``(from, to)`` commits being pushed, or None when there is no base to compare with.

    pre-commit passes the pushed range; without it, the branch against its base
    (:func:`contribkit.git.cmd.merge_base`, the one policy ``pr`` and ``submit`` use too)."""
    to_ref = args.to_ref or os.environ.get("PRE_COMMIT_TO_REF") or "HEAD"
    from_ref = args.from_ref or os.environ.get("PRE_COMMIT_FROM_REF")
    if from_ref:
        return str(from_ref), str(to_ref)
    return branch_range(ctx, str(to_ref))


def branch_range(ctx: HookContext, to_ref: str = "HEAD") -> tuple[str, str] | None:
    """``(merge base, to_ref)``: the whole branch, whatever part of it this push sends."""
    found = gitcmd.merge_base(
        ctx.require_root(),
        ctx.settings.text("upstream_remote"),
        ctx.settings.text("base_branch"),
        to_ref,
    )
    return (found[0], to_ref) if found else None


def changed_files(root: str, from_ref: str, to_ref: str) -> list[str]:
    out = gitcmd.git("diff", "--name-only", "--no-renames", "-z", from_ref, to_ref, cwd=root)
    return [name for name in out.split("\0") if name]
