"""The GitHub token chain (first found wins), shared by every command that talks to GitHub:

1. ``--token``; 2. ``GH_TOKEN``; 3. ``GITHUB_TOKEN`` (on an Enterprise host ``GH_ENTERPRISE_TOKEN``
or ``GITHUB_ENTERPRISE_TOKEN``); 4. ``gh auth token --hostname HOST``; 5. anonymous.

A token is never printed, logged or written; only its *source* is reported.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlparse

from contribkit.core.errors import BadInput
from contribkit.core.proc import run_child, scrubbed_env

PUBLIC_API = "https://api.github.com"


@dataclass(frozen=True)
class Token:
    value: str | None = field(repr=False)
    source: str  # "--token", "GH_TOKEN", "gh auth token", "anonymous"

    def __bool__(self) -> bool:
        return bool(self.value)


def check_github_url(github_url: str) -> str:
    """``github_url`` if it is an http(s) URL with a host and a valid port; else BadInput naming
    what is wrong (``notaurl``, ``file://…``, ``http://host:99999``)."""
    hint = "e.g. --github-url https://api.github.com, or https://HOST/api/v3 for Enterprise"
    try:
        parsed = urlparse(github_url)
        _ = parsed.port  # ValueError when out of range
    except ValueError as exc:
        raise BadInput(f"GitHub URL '{github_url}' is invalid ({exc})", hint) from exc
    if parsed.scheme not in ("http", "https"):
        raise BadInput(f"GitHub URL '{github_url}' is not an http(s) URL", hint)
    if not parsed.hostname:
        raise BadInput(f"GitHub URL '{github_url}' names no host", hint)
    return github_url


def api_host(github_url: str) -> str:
    """The host gh knows a server by: github.com for the public API, else the URL's host."""
    host = urlparse(github_url).hostname or "github.com"
    return "github.com" if host in {"api.github.com", "github.com"} else host


def is_enterprise(host: str) -> bool:
    return host != "github.com" and not host.endswith(".ghe.com")


def gh_auth_token(host: str) -> str | None:
    gh = shutil.which("gh")
    if not gh:
        return None
    try:
        result = run_child(
            [gh, "auth", "token", "--hostname", host], env=scrubbed_env(), timeout=15
        )
    except OSError:
        return None
    token = result.output.strip()
    if result.returncode != 0 or not token or "\n" in token or " " in token:
        return None
    return token


def resolve_token(
    github_url: str = PUBLIC_API,
    cli_token: str | None = None,
    environ: Mapping[str, str] | None = None,
    use_gh: bool = True,
) -> Token:
    env = os.environ if environ is None else environ
    if cli_token:
        return Token(cli_token, "--token")
    host = api_host(github_url)
    names = (
        ("GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")
        if is_enterprise(host)
        else ("GH_TOKEN", "GITHUB_TOKEN")
    )
    for name in names:
        if env.get(name):
            return Token(env[name], name)
    if use_gh:
        token = gh_auth_token(host)
        if token:
            return Token(token, "gh auth token")
    return Token(None, "anonymous")
