"""The ``contribkit`` command: a Click group whose subcommands load lazily.

``contribkit --help`` and ``--version`` import Click and nothing heavy: each subcommand's module
is imported only when that subcommand runs. Errors follow the contract in docs/architecture.md.
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import click

from contribkit import __version__
from contribkit.core.errors import DISK_FULL, ContribkitError, ExitCode, Terminated, print_error
from contribkit.core.termsafe import guard_streams

# name -> (module, attribute, one-line help). The help lives here so --help needs no imports.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "repro": (
        "contribkit.cli.commands.repro",
        "repro",
        "Turn a GitHub issue into a runnable repro script with a bisect verdict.",
    ),
    "demo": (
        "contribkit.cli.commands.demo",
        "demo",
        "Walk the whole workflow offline on the bundled example, in a scratch fork.",
    ),
    "doctor": (
        "contribkit.cli.commands.doctor",
        "doctor",
        "Check that your fork, torch, gh and hooks are set up.",
    ),
    "config": (
        "contribkit.cli.commands.config",
        "config",
        "Show the effective configuration and every key.",
    ),
    "debug": (
        "contribkit.cli.commands.debug",
        "debug",
        "Write or run a debug environment for torch.compile, CUDA and dispatch issues.",
    ),
    "run": (
        "contribkit.cli.commands.run",
        "run",
        "Run repros and tests on each device and interpreter; record the result.",
    ),
    "bench": (
        "contribkit.cli.commands.bench",
        "bench",
        "Time a statement before and after your change; record it for the PR body.",
    ),
    "bisect": (
        "contribkit.cli.commands.bisect",
        "bisect",
        "Find the commit that broke a repro: git bisect, each step decided by its verdict.",
    ),
    "triage": (
        "contribkit.cli.commands.triage",
        "triage",
        "Run repros on each interpreter and device: where they reproduce, and from which version.",
    ),
    "submit": (
        "contribkit.cli.commands.submit",
        "submit",
        "Open the pull request, if a fresh green run record vouches for HEAD.",
    ),
    "test": (
        "contribkit.cli.commands.test",
        "test",
        "Scaffold a device-generic PyTorch test, or a regression test from a repro.",
    ),
    "pr": (
        "contribkit.cli.commands.pr",
        "pr",
        "Write the PR title and body in PyTorch's conventions; --check a body.",
    ),
    "op": (
        "contribkit.cli.commands.op",
        "op",
        "Trace an operator from Python to its kernels, derivatives and tests; --new plans one.",
    ),
    "gaps": (
        "contribkit.cli.commands.gaps",
        "gaps",
        "Rank a module's public callables by missing docstring entries and tests.",
    ),
    "init": (
        "contribkit.cli.commands.init",
        "init",
        "Install the hooks in your fork without touching a tracked file.",
    ),
}

_state = {"verbose": False, "terminating": False}
TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def verbose() -> bool:
    """Whether -v/--verbose was given (commands show full details then)."""
    return _state["verbose"]


def set_verbose(ctx: click.Context, param: click.Parameter, value: int) -> int:
    if value:
        _state["verbose"] = True
    return value


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module_name, attr, _ = COMMANDS[cmd_name]
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="Exit codes: 0 success, 1 a check failed, 2 bad usage or input, 4 authentication needed. "
    "Run 'contribkit COMMAND --help' for a command's options.",
)
@click.version_option(__version__, "-V", "--version", prog_name="contribkit")
@click.option(
    "-v",
    "--verbose",
    count=True,
    expose_value=False,
    callback=set_verbose,
    is_eager=True,
    help="Show more detail, and a traceback on errors.",
)
def cli() -> None:
    """Make contributing to PyTorch fast and correct: issue repros, debug environments,
    device-matrix runs, PR bodies and pre-commit hooks."""


def _terminate(signum: int, frame: object) -> None:
    if not _state["terminating"]:  # once: a second signal must not cut the clean-up short
        _state["terminating"] = True
        raise Terminated(signum)


@contextlib.contextmanager
def _signals_unwind() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`Terminated`, which unwinds like Ctrl-C: running legs and
    probes have their process groups killed (``proc``), and nothing half-done is recorded."""
    previous = {sig: signal.signal(sig, _terminate) for sig in TERMINATING_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    from contribkit.core.redact import redacted_streams

    args = list(sys.argv[1:] if argv is None else argv)
    guard_streams()  # no escape sequence from an issue or a child reaches a terminal
    with _signals_unwind(), redacted_streams():  # no known secret is ever printed
        return _main(args)


def _main(args: list[str]) -> int:
    if not args:  # as click >= 8.2 does for a group (8.1 exits 0): the help, and usage's exit code
        click.echo(cli.get_help(click.Context(cli, info_name="contribkit")))
        return int(ExitCode.USAGE)
    try:
        rv: Any = cli.main(args=args, prog_name="contribkit", standalone_mode=False)
    except ContribkitError as exc:
        _print_traceback()
        print_error(exc.message, exc.hint)
        return int(exc.exit_code)
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "contribkit"
        print_error(exc.format_message(), f"see '{command} --help'")
        return int(ExitCode.USAGE)
    except click.ClickException as exc:
        print_error(exc.format_message())
        return int(exc.exit_code)
    except (KeyboardInterrupt, click.Abort):
        print_error("interrupted")
        return int(ExitCode.INTERRUPTED)
    except Terminated as exc:
        print_error(f"terminated by {signal.Signals(exc.signum).name}")
        return 128 + exc.signum
    except BrokenPipeError:  # `contribkit … | head`: the reader left; nothing to report
        sys.stderr.close()
        return int(ExitCode.FAILED)
    except OSError as exc:
        if exc.errno in DISK_FULL:  # ENOSPC, EDQUOT, EFBIG, wherever it was written
            _print_traceback()
            where = f" {exc.filename}" if exc.filename else ""
            print_error(
                f"cannot write{where}: {exc.strerror or exc}",
                "free some space (or raise the quota or file size limit), then run it again",
            )
            return int(ExitCode.FAILED)
        if not exc.filename:  # not about a path: too many files, a bug…
            return _internal_error(exc)
        _print_traceback()  # a path the user gave cannot be read or written
        print_error(
            f"{exc.strerror or type(exc).__name__}: {exc.filename}",
            "check that the path exists and that you may read or write it",
        )
        return int(ExitCode.USAGE)
    except Exception as exc:
        return _internal_error(exc)
    return int(rv) if isinstance(rv, int) else 0


def _internal_error(exc: Exception) -> int:
    """An unexpected failure: still one line unless -v."""
    _print_traceback()
    print_error(
        f"internal error: {type(exc).__name__}: {exc}",
        "rerun with -v for a traceback, and please report it",
    )
    return int(ExitCode.FAILED)


def _print_traceback() -> None:
    if _state["verbose"]:
        import traceback

        traceback.print_exc()
