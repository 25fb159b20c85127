"""GitHub access: the client factory (token chain, bounded retry, timeout) and the error policy.

Every command that talks to GitHub builds its client here and wraps calls in
:func:`github_errors`, so messages and exit codes are the same everywhere.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from contribkit.core.config import Settings
from contribkit.core.errors import AuthRequired, BadInput, CheckFailed, ContribkitError, ExitCode
from contribkit.github.auth import Token, api_host

if TYPE_CHECKING:
    from github import Github

AUTH_HINT = "authenticate with `gh auth login`, or export GH_TOKEN"
RETRY_TOTAL = 3
MAX_RATE_LIMIT_WAIT_S = 30


class GitHubUnavailable(ContribkitError):
    """GitHub could not answer now (network, server errors, rate limit with a token)."""

    exit_code = ExitCode.FAILED


def make_client(settings: Settings, token: Token) -> Github:
    """A PyGithub client that never sleeps long: bounded retry, request timeout, lazy objects."""
    from github import Auth, Github, GithubRetry

    logging.getLogger("github").setLevel(logging.CRITICAL)  # we report errors ourselves
    return Github(
        base_url=settings.text("github_url").rstrip("/"),
        auth=Auth.Token(token.value) if token.value else None,
        timeout=int(settings.number("http_timeout")),
        retry=GithubRetry(
            total=RETRY_TOTAL, max_rate_limit_wait=MAX_RATE_LIMIT_WAIT_S, secondary_rate_wait=10
        ),
        per_page=100,
        lazy=True,
    )


def _reset_time(headers: dict[str, str] | None) -> str:
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    reset = headers.get("x-ratelimit-reset")
    if reset and reset.isdigit():
        when = int(reset)
        minutes = max(0, round((when - time.time()) / 60))
        return f"; it resets at {time.strftime('%H:%M', time.localtime(when))} (in {minutes} min)"
    retry_after = headers.get("retry-after")
    return f"; retry after {retry_after} s" if retry_after else ""


@contextmanager
def github_errors(
    what: str, token: Token, github_url: str, *, offline: bool = True
) -> Iterator[None]:
    """Translate PyGithub and network exceptions into one-line contribkit errors.

    ``what`` names the object, e.g. "issue #12 in pytorch/pytorch". ``offline``: the command can
    work from the cache (``--offline``), so the hints may offer it.
    """
    cache = ", or use --offline to read the cache" if offline else ""
    import github
    import requests

    host = api_host(github_url)
    try:
        yield
    except github.RateLimitExceededException as exc:
        message = f"GitHub API rate limit exceeded{_reset_time(exc.headers)}"
        if not token:
            raise AuthRequired(
                message + " (anonymous requests get 60 per hour)", AUTH_HINT
            ) from exc
        raise GitHubUnavailable(message, f"wait for the reset{cache}") from exc
    except github.BadCredentialsException as exc:
        raise AuthRequired(
            f"GitHub rejected the token from {token.source} (Bad credentials)",
            "refresh it with `gh auth login`, or fix or unset the variable",
        ) from exc
    except github.UnknownObjectException as exc:
        hint = "check the number and --repo" + (
            "" if token else f"; for a private repository, {AUTH_HINT}"
        )
        raise BadInput(f"{what} not found", hint) from exc
    except github.GithubException as exc:
        detail = _api_message(exc)
        if exc.status == 429:
            message = f"GitHub API rate limit exceeded{_reset_time(exc.headers)}"
            if not token:
                raise AuthRequired(message, AUTH_HINT) from exc
            raise GitHubUnavailable(message, f"wait for the reset{cache}") from exc
        if exc.status in (401, 403):
            raise AuthRequired(
                f"GitHub refused access to {what} ({exc.status} {detail})",
                AUTH_HINT if not token else "check the token's scopes and SSO authorisation",
            ) from exc
        if exc.status >= 500:
            raise GitHubUnavailable(
                f"GitHub answered {exc.status} {detail} for {what}", "try again later"
            ) from exc
        raise CheckFailed(f"GitHub API error {exc.status}: {detail} ({what})") from exc
    except requests.exceptions.RetryError as exc:
        raise GitHubUnavailable(
            f"GitHub kept failing for {what} after {RETRY_TOTAL} tries ({_reason(exc)})",
            f"try again later{cache}",
        ) from exc
    except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
        raise GitHubUnavailable(
            f"cannot reach GitHub at {host} ({type(exc).__name__})",
            f"check your network{cache}",
        ) from exc


def _api_message(exc: Any) -> str:
    """GitHub's message plus the details of its ``errors`` list ("Validation Failed (…)")."""
    data = exc.data if isinstance(exc.data, dict) else {}
    message = str(data.get("message") or "no message")
    details = [
        str(e["message"])
        for e in data.get("errors") or []
        if isinstance(e, dict) and e.get("message")
    ]
    return message + (f" ({'; '.join(details)})" if details else "")


def _reason(exc: Exception) -> str:
    text = str(exc)
    marker = "ResponseError('"
    if marker in text:
        return text.split(marker, 1)[1].split("'", 1)[0]
    return type(exc).__name__
