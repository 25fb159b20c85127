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
from urllib.parse import urlparse

from contribkit.core.config import Settings
from contribkit.core.errors import AuthRequired, BadInput, CheckFailed, ContribkitError, ExitCode
from contribkit.github.auth import Token, api_host, check_github_url

if TYPE_CHECKING:
    import requests
    from github import Github

T = TypeVar("T")
URL_HINT = "check --github-url (the API, e.g. https://api.github.com or https://HOST/api/v3)"
AUTH_HINT = "authenticate with `gh auth login`, or export GH_TOKEN"
RETRY_TOTAL = 3
RETRY_BACKOFF_MAX_S = 1.0  # between retries of a server error; rate limits are never waited for
TIMEOUT_HINT = "raise --github-timeout (or the github_timeout setting)"
SIZE_HINT = "check --github-url; if it is GitHub, raise the github_max_reply_mb setting"
READ_CHUNK = 64 * 1024


class GitHubUnavailable(ContribkitError):
    """GitHub could not answer now (network, server errors, rate limit with a token)."""

    exit_code = ExitCode.FAILED


class GitHubTimeout(GitHubUnavailable):
    """The command's deadline for GitHub passed (a slow or dripping reply)."""


class BadReply(ContribkitError):
    """What answered is not GitHub's API: malformed or mistyped JSON, a redirect loop. Most often
    ``--github-url`` points at something else, so it is bad input."""

    exit_code = ExitCode.USAGE


class ReplyRefused(Exception):
    """A reply refused while PyGithub reads it (too large, or from another origin);
    :func:`github_errors` turns it into a :class:`BadReply` naming what it was for."""

    def __init__(self, reason: str, hint: str = URL_HINT) -> None:
        super().__init__(reason)
        self.reason = reason
        self.hint = hint


Origin = tuple[str, str, int]  # scheme, host, port


def origin_of(url: str) -> Origin:
    """``url``'s scheme, lower-case host and port (the scheme's default when none is given)."""
    parsed = urlparse(url)
    scheme = parsed.scheme.lower()
    return (
        scheme,
        (parsed.hostname or "").lower(),
        parsed.port or (443 if scheme == "https" else 80),
    )


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
    base_url = check_github_url(settings.text("github_url")).rstrip("/")
    _bound_connections(origin_of(base_url), max_reply_bytes(settings))
    return Github(
        base_url=base_url,
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


def max_reply_bytes(settings: Settings) -> int:
    """The most bytes one GitHub reply may have, on the wire and inflated (github_max_reply_mb)."""
    return max(1, int(settings.number("github_max_reply_mb") * 1024 * 1024))


def _bound_connections(origin: Origin, max_bytes: int) -> None:
    """Make PyGithub's connections refuse any origin but ``origin`` (a ``Link``, a redirect to
    another host, port or scheme) and any reply over ``max_bytes`` raw or inflated (a huge body,
    a gzip bomb), before it is held in memory. PyGithub picks its connection classes when a
    client is made, so this goes before each ``Github(...)``."""
    from github.Requester import (
        HTTPRequestsConnectionClass,
        HTTPSRequestsConnectionClass,
        Requester,
        RequestsResponse,
    )

    def bounded(conn: Any) -> RequestsResponse:
        where = (conn.protocol, str(conn.host).lower(), int(conn.port))
        if where != origin:
            raise ReplyRefused(
                f"a link or redirect to another origin ({conn.protocol}://{conn.host}:{conn.port})"
            )
        response = getattr(conn.session, conn.verb.lower())(
            f"{conn.protocol}://{conn.host}:{conn.port}{conn.url}",
            headers=conn.headers,
            data=conn.input,
            timeout=conn.timeout,
            verify=conn.verify,
            allow_redirects=False,
            stream=True,
        )
        try:
            body = read_capped(response, max_bytes)
        finally:
            response.close()
        return Reply(response, body.decode(response.encoding or "utf-8", "replace"))

    class Reply(RequestsResponse):
        """PyGithub's reply, its text read (and bounded) already."""

        def __init__(self, response: requests.Response, text: str) -> None:
            super().__init__(response)
            self.text = text

        def read(self) -> str:
            return self.text

    class BoundHTTP(HTTPRequestsConnectionClass):
        def getresponse(self) -> RequestsResponse:
            return bounded(self)

    class BoundHTTPS(HTTPSRequestsConnectionClass):
        def getresponse(self) -> RequestsResponse:
            return bounded(self)

    Requester.injectConnectionClasses(BoundHTTP, BoundHTTPS)


def read_capped(response: requests.Response, max_bytes: int) -> bytes:
    """The body of ``response`` (opened with ``stream=True``), or ReplyRefused once it passes
    ``max_bytes`` as sent (Content-Length, then the bytes read) or inflated (gzip, deflate):
    a reply is never read, nor decompressed, far past the limit."""
    limit = f"{max_bytes / 1024 / 1024:g} MB"
    length = response.headers.get("content-length", "")
    if length.isascii() and length.isdigit() and int(length) > max_bytes:
        raise ReplyRefused(f"a reply of {int(length)} bytes (over {limit})", SIZE_HINT)
    raw = response.raw
    chunks: list[bytes] = []
    size = 0
    # iter_content reads raw.stream (inflating) and turns urllib3's errors into requests' own,
    # the ones the error policy knows (a read timeout while the body drips in, a cut reply)
    for chunk in response.iter_content(READ_CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise ReplyRefused(f"a reply over {limit} once inflated", SIZE_HINT)
        if raw.tell() > max_bytes:
            raise ReplyRefused(f"a reply over {limit}", SIZE_HINT)
        chunks.append(chunk)
    return b"".join(chunks)


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
    except ReplyRefused as exc:
        raise BadReply(f"GitHub at {host} sent {exc.reason} for {what}", exc.hint) from exc
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
