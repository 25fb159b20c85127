"""``contribkit config``: the effective settings, where each came from, and every known key."""

from __future__ import annotations

import click

from contribkit.cli import options
from contribkit.core.config import KEYS, REPO_CONFIG_NAME, env_name, user_config_path
from contribkit.core.workspace import Workspace


def change_trust(trust_file: bool, untrust_file: bool) -> int:
    from contribkit.core import trust
    from contribkit.core.errors import BadInput
    from contribkit.git.cmd import repo_root

    if trust_file and untrust_file:
        raise BadInput("give one of --trust and --untrust")
    root = repo_root()
    if root is None:
        raise BadInput("not inside a git repository", hint="cd into your fork first")
    path = root / REPO_CONFIG_NAME
    if untrust_file:
        done = trust.untrust(path)
        click.echo(f"{'untrusted' if done else 'was not trusted'}: {path}")
        return 0
    if not path.is_file():
        raise BadInput(f"{path}: no such file", hint="there is nothing to trust")
    digest = trust.trust(path)
    click.echo(f"trusted: {path} (sha256 {digest[:12]}; any change withdraws the trust)")
    return 0


def resolved_defaults(ws: Workspace) -> dict[str, tuple[str, str]]:
    """The keys whose default is worked out at run time: the value and how, as doctor finds them."""
    from contribkit.core.cache import cache_root

    repo, source = ws.repo()
    return {
        "repo": (repo, "default" if source == "default" else f"default: {source}"),
        "python": (ws.python(), "default: the interpreter running contribkit"),
        "cache_dir": (str(cache_root(ws.settings)), "default: the platform cache folder"),
    }


@click.command()
@click.option(
    "--list",
    "list_keys",
    is_flag=True,
    help="List every key with its env var, default and meaning.",
)
@click.option(
    "--trust",
    "trust_file",
    is_flag=True,
    help="Trust this repository's .contribkit.toml as it is now: its python, hosts and URLs "
    "are used from then on (until the file changes).",
)
@click.option(
    "--untrust",
    "untrust_file",
    is_flag=True,
    help="Withdraw the trust in this repository's .contribkit.toml.",
)
@options.json_output
@options.verbose
def config(list_keys: bool, trust_file: bool, untrust_file: bool, as_json: bool) -> int:
    """Show the effective configuration and every key.

    Settings come from, highest first: command-line options, CONTRIBKIT_* environment
    variables, .contribkit.toml at the repository root, and the user config file. A
    repository's .contribkit.toml may not choose an executable, a host or where legs are sent
    (python, github_url, run.cuda_host, run.cuda_python, run.engine, ray.address, slurm.*'s
    cluster, folder and partition) until you trust it with --trust, after reading it: a
    checked-out branch could carry one. Any change to the file withdraws the trust.

    \b
    Examples:
      contribkit config
      contribkit config --list --json
      contribkit config --trust
    """
    from contribkit.cli.output import print_json, print_table

    if trust_file or untrust_file:
        return change_trust(trust_file, untrust_file)
    if list_keys:
        rows = [(k, env_name(k), repr(v.default), v.help) for k, v in KEYS.items()]
        if as_json:
            print_json(
                [dict(zip(("key", "env", "default", "help"), row, strict=True)) for row in rows]
            )
        else:
            print_table(["key", "env var", "default", "meaning"], rows)
        return 0
    ws = Workspace.load()
    files = {
        "user": str(user_config_path()),
        "repo": str(ws.root / REPO_CONFIG_NAME) if ws.root else None,
    }
    values = {
        k: {"value": ws.settings.get(k), "source": ws.settings.sources.get(k, "default")}
        for k in KEYS
    }
    for key, (value, source) in resolved_defaults(ws).items():
        if values[key]["value"] is None:
            values[key] = {"value": value, "source": source}
    if as_json:
        print_json({"files": files, "settings": values})
    else:
        click.echo(f"user config: {files['user']}")
        click.echo(f"repo config: {files['repo'] or '(not in a git repository)'}")
        print_table(
            ["key", "value", "from"],
            [(k, repr(v["value"]), v["source"]) for k, v in values.items()],
        )
    return 0
