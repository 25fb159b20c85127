"""GitHub access: the client factory (token chain, bounded retry, timeout), the command's
deadline and the error policy.

Every command that talks to GitHub builds its client here, runs its requests through
:meth:`Deadline.run` and wraps them in :func:`github_errors`, so that no reply can hold a command
past its ``--github-timeout`` and messages and exit codes are the same everywhere. Rate limits are
reported with their reset time, never slept through.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from contribkit.core.config import Settings
from contribkit.core.errors import AuthRequired, BadInput, CheckFailed, ContribkitError, ExitCode
from contribkit.github.auth import Token, api_host, check_github_url

if TYPE_CHECKING:
    from github import Github

T = TypeVar("T")
URL_HINT = "check --github-url (the API, e.g. https://api.github.com or https://HOST/api/v3)"
AUTH_HINT = "authenticate with `gh auth login`, or export GH_TOKEN"
RETRY_TOTAL = 3
RETRY_BACKOFF_MAX_S = 1.0  # between retries of a server error; rate limits are never waited for
TIMEOUT_HINT = "raise --github-timeout (or the github_timeout setting)"


class GitHubUnavailable(ContribkitError):
    """GitHub could not answer now (network, server errors, rate limit with a token)."""

    exit_code = ExitCode.FAILED


class GitHubTimeout(GitHubUnavailable):
    """The command's deadline for GitHub passed (a slow or dripping reply)."""


class BadReply(ContribkitError):
    """What answered is not GitHub's API: malformed or mistyped JSON, a redirect loop. Most often
    ``--github-url`` points at something else, so it is bad input."""

    exit_code = ExitCode.USAGE


class Deadline:
    """The time one command's GitHub requests may take together (``--github-timeout``; 0: no limit).

    :meth:`run` runs the requests in a worker thread and stops waiting when the time is up: a
    read timeout bounds each read, but a reply that drips a byte every few seconds never trips it.
    The abandoned worker is a daemon thread blocked on a socket of a client that is closed next.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds if seconds > 0 else None

    @classmethod
    def from_settings(cls, settings: Settings) -> Deadline:
        return cls(settings.number("github_timeout"))

    def remaining(self) -> float | None:
        return None if self._end is None else max(0.0, self._end - time.monotonic())

    def request_timeout(self, http_timeout: float) -> int:
        """The read timeout of each request: never longer than the deadline itself."""
        bound = http_timeout if self._end is None else min(http_timeout, self.seconds)
        return max(1, int(bound))

    def run(self, what: str, call: Callable[[], T], *, offline: bool = True) -> T:
        """``call()``, or GitHubTimeout once the time is up (``offline``: the hint may offer
        ``--offline``)."""
        remaining = self.remaining()
        if remaining is None:
            return call()
        result: list[T] = []
        error: list[BaseException] = []

        def work() -> None:
            try:
                result.append(call())
            except BaseException as exc:  # re-raised in the caller's thread
                error.append(exc)

        worker = threading.Thread(target=work, name="contribkit-github", daemon=True)
        worker.start()
        worker.join(remaining)
        if worker.is_alive():
            cache = ", or use --offline to read the cache" if offline else ""
            raise GitHubTimeout(
                f"GitHub did not answer {what} within {self.seconds:g} s", TIMEOUT_HINT + cache
            )
        if error:
            raise error[0]
        return result[0]


def make_client(settings: Settings, token: Token, deadline: Deadline | None = None) -> Github:
    """A PyGithub client that never sleeps long: a few quick retries of server errors and none
    of rate limits (PyGithub's own retry sleeps until a reset), a read timeout within the
    deadline, lazy objects."""
    from github import Auth, Github
    from urllib3.util.retry import Retry

    logging.getLogger("github").setLevel(logging.CRITICAL)  # we report errors ourselves
    http_timeout = settings.number("http_timeout")
    return Github(
        base_url=check_github_url(settings.text("github_url")).rstrip("/"),
        auth=Auth.Token(token.value) if token.value else None,
        timeout=deadline.request_timeout(http_timeout) if deadline else max(1, int(http_timeout)),
        retry=Retry(
            total=RETRY_TOTAL,
            status_forcelist=(500, 502, 503, 504),
            backoff_factor=0.1,
            backoff_max=RETRY_BACKOFF_MAX_S,
            respect_retry_after_header=False,
        ),
        per_page=100,
        lazy=True,
    )


def _reset_time(headers: dict[str, str] | None) -> str:
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    reset = headers.get("x-ratelimit-reset", "")
    if reset.isascii() and reset.isdigit():
        when = int(reset)
        minutes = max(0, round((when - time.time()) / 60))
        return f"; it resets at {time.strftime('%H:%M', time.localtime(when))} (in {minutes} min)"
    retry_after = headers.get("retry-after", "")
    if retry_after.isascii() and retry_after.isdigit():
        when = int(time.time()) + int(retry_after)
        return (
            f"; retry after {retry_after} s (at {time.strftime('%H:%M:%S', time.localtime(when))})"
        )
    return ""


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
        if not token:  # a 401 to an anonymous request: no token was sent to reject
            raise AuthRequired(f"GitHub requires authentication for {what}", AUTH_HINT) from exc
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
        if 300 <= exc.status < 400:
            location = {k.lower(): v for k, v in (exc.headers or {}).items()}.get("location")
            raise BadReply(
                f"GitHub at {host} redirected {what} ({exc.status} to {location or 'nowhere'})",
                URL_HINT,
            ) from exc
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
    except (ValueError, github.BadAttributeException) as exc:  # JSONDecodeError is a ValueError
        raise BadReply(
            f"GitHub at {host} sent a malformed reply for {what} ({_short(exc)})", URL_HINT
        ) from exc
    except (RuntimeError, RecursionError, requests.exceptions.TooManyRedirects) as exc:
        # PyGithub follows a 301 itself: to itself it raises RuntimeError, in a ring it recurses
        raise BadReply(
            f"GitHub at {host} redirected {what} in a loop or elsewhere ({_short(exc)})", URL_HINT
        ) from exc
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


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return type(exc).__name__ + (f": {text[:120]}" if text else "")


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
