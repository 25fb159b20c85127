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
