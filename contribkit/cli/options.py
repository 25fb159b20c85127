"""Options shared by several commands, so that each reads and behaves the same everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from contribkit.cli.app import set_verbose

F = TypeVar("F", bound=Callable[..., Any])

repo = click.option(
    "-R",
    "--repo",
    metavar="OWNER/NAME",
    default=None,
    help="Target repository (default: config, else remote 'upstream', else 'origin', else pytorch/pytorch).",
)
github_url = click.option(
    "--github-url",
    metavar="URL",
    default=None,
    help="GitHub API base URL, e.g. https://HOST/api/v3 for Enterprise.",
)
github_timeout = click.option(
    "--github-timeout",
    "github_timeout",
    metavar="SECONDS",
    type=click.FloatRange(min=0),
    default=None,
    help="Seconds all GitHub requests of this command may take together (default: the "
    "github_timeout setting, 30; 0: no limit).",
)
python = click.option(
    "--python",
    "python",
    metavar="PATH",
    default=None,
    help="Interpreter whose torch is used (default: the one running contribkit).",
)
json_output = click.option(
    "--json", "as_json", is_flag=True, help="Print the result as one JSON object."
)
verbose = click.option(
    "-v",
    "--verbose",
    count=True,
    expose_value=False,
    callback=set_verbose,
    help="Show more detail, and a traceback on errors.",
)
force = click.option("-f", "--force", is_flag=True, help="Overwrite files that already exist.")
dry_run = click.option(
    "-n", "--dry-run", is_flag=True, help="Show what would be written; write nothing."
)
engine = click.option(
    "--engine",
    type=click.Choice(["local", "ray", "slurm"]),
    default=None,
    help="Where the legs run (default: run.engine, i.e. local): ray (pip install "
    "'contribkit[ray]'; ray.address, else RAY_ADDRESS, else a local cluster) or slurm "
    "(pip install 'contribkit[slurm]'; slurm.folder). --python then names interpreters on "
    "the workers; see docs/scale-out.md.",
)
cuda_host = click.option(
    "--cuda-host",
    metavar="HOST",
    default=None,
    help="Run the CUDA legs on HOST over ssh (default: run.cuda_host; see docs/remote-cuda.md).",
)
cuda_python = click.option(
    "--cuda-python",
    metavar="PATH",
    default=None,
    help="Interpreter on the CUDA host (default: run.cuda_python, i.e. python3).",
)


def devices(more: str = "") -> Callable[[F], F]:
    """``--devices LIST`` of the commands that run legs (``more``: what else it does there)."""
    return click.option(
        "--devices",
        metavar="LIST",
        default=None,
        help="Comma-separated devices: cpu, cuda, mps (default: run.devices, i.e. cpu,cuda)."
        + (f" {more}" if more else ""),
    )


def pythons(help_text: str) -> Callable[[F], F]:
    """``--python PATH``, repeatable: one interpreter per column group or triage row."""
    return click.option("--python", "pythons", multiple=True, metavar="PATH", help=help_text)


jobs = click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    metavar="N",
    default=None,
    help="CPU legs at once (default: run.jobs, else min(4, CPUs)); CUDA legs run one per GPU. "
    "With --engine ray|slurm: legs in flight (default: ray.max_parallel, slurm.max_parallel).",
)


def timeout(what: str, default: str = "run.timeout") -> Callable[[F], F]:
    """``--timeout S`` (a positive number of seconds): ``what`` happens past it."""
    return click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        metavar="S",
        default=None,
        help=f"Seconds before {what} (default: {default}).",
    )


def allow_network(who: str) -> Callable[[F], F]:
    """``--allow-network``: ``who`` (the legs, the repro) may use the network."""
    return click.option(
        "--allow-network",
        is_flag=True,
        help=f"{who} use the network (the sandbox cuts it off; see run.sandbox).",
    )
