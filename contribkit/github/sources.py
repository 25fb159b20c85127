"""Where issues come from: GitHub (cached with ETags), a saved file, or the bundled example."""

from __future__ import annotations

import codecs
import json
import re
import sys
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from contribkit.core.cache import JsonCache, cache_root
from contribkit.core.config import Settings
from contribkit.core.errors import BadInput
from contribkit.core.workspace import validate_slug
from contribkit.github.auth import Token, api_host
from contribkit.github.client import (
    URL_HINT,
    BadReply,
    Deadline,
    GitHubUnavailable,
    ReplyRefused,
    github_errors,
    make_client,
    origin_of,
)
from contribkit.issue.model import MAX_ISSUE_NUMBER, Comment, Issue, issue_number

if TYPE_CHECKING:
    from github import Github

MAX_COMMENTS = 500
PER_PAGE = 100  # GitHub's largest page
_REF = re.compile(r"^(?:(?P<repo>[\w.-]+/[\w.-]+))?#?(?P<number>[0-9]+)$")
_URL = re.compile(
    r"^https?://[^/]+/(?P<repo>[\w.-]+/[\w.-]+)/(?P<kind>issues|pull|pulls)/(?P<number>\d+)(?:[/?#].*)?$"
)


@dataclass
class Fetched:
    issue: Issue
    origin: str  # "github", "cache (not modified)", "cache (offline)", "file", "example"
    warnings: list[str]


def parse_issue_ref(text: str) -> tuple[str | None, int]:
    """``170398``, ``#170398``, ``pytorch/pytorch#170398`` or an issue URL -> (repo or None, number).

    The number must be one GitHub can have (:func:`~contribkit.issue.model.issue_number`)."""
    text = text.strip()
    m = _URL.match(text)
    if m:
        if m.group("kind") != "issues":
            raise BadInput(f"{text} is a pull request, not an issue", "pass the issue the PR fixes")
        return validate_slug(m.group("repo")), checked_number(m.group("number"), text)
    m = _REF.match(text)
    if not m:
        raise BadInput(f"'{text}' is not an issue number", REF_HINT)
    repo = m.group("repo")
    return (validate_slug(repo) if repo else None), checked_number(m.group("number"), text)


REF_HINT = "e.g. 170398, pytorch/pytorch#170398 or an issue URL"


def checked_number(value: object, shown: object = None) -> int:
    """``value`` as an issue number, else BadInput quoting ``shown`` (default: the value)."""
    number = issue_number(value)
    if number is None:
        raise BadInput(
            f"'{value if shown is None else shown}' is not an issue number "
            f"(issue numbers run from 1 to {MAX_ISSUE_NUMBER})",
            REF_HINT,
        )
    return number


def _login(user: Any) -> str | None:
    if isinstance(user, dict):
        return user.get("login")
    return user if isinstance(user, str) else None


GH_VIEW_FIELDS = "number,title,body,labels,comments,author,url,state,createdAt,updatedAt"


def issue_from_json(data: dict[str, Any], repo: str | None = None) -> Issue:
    """An Issue from GitHub's issue JSON, from ``gh issue view --json`` (``author``, ``url``,
    camelCase dates), or from a saved variant of either (string users and labels)."""
    labels = [
        lab.get("name", "") if isinstance(lab, dict) else str(lab)
        for lab in data.get("labels") or []
    ]
    raw_comments = data.get("comments")
    comments = []
    for c in raw_comments if isinstance(raw_comments, list) else []:  # the API gives a count here
        if isinstance(c, dict):
            comments.append(
                Comment(
                    author=_login(c.get("user")) or _login(c.get("author")) or "unknown",
                    body=valid_text(c.get("body") or ""),
                    created_at=c.get("created_at") or c.get("createdAt") or c.get("date"),
                )
            )
    state = data.get("state")
    url = data.get("html_url") or _web_url(data.get("url"))
    return Issue(
        title=valid_text(str(data.get("title") or "")),
        body=valid_text(data.get("body") or ""),
        number=issue_number(data.get("number")),
        repo=repo or data.get("repo") or _repo_from_url(url),
        url=url,
        labels=[lab for lab in labels if lab],
        state=state.lower() if isinstance(state, str) else None,
        author=_login(data.get("user")) or _login(data.get("author")),
        created_at=data.get("created_at") or data.get("createdAt"),
        updated_at=data.get("updated_at") or data.get("updatedAt"),
        comments=comments,
    )


def valid_text(text: str) -> str:
    """``text`` with any lone surrogate (JSON's ``"\\ud800"``, which no file can hold) replaced
    by U+FFFD, so that everything made from it can be written."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def _web_url(url: Any) -> str | None:
    """gh's ``url`` is the web address; the REST API's is the API's, which a reader can't open."""
    return url if isinstance(url, str) and _URL.match(url) else None


def _repo_from_url(url: Any) -> str | None:
    m = _URL.match(url) if isinstance(url, str) else None
    return m.group("repo") if m else None


def decode_text(raw: bytes, name: str) -> str:
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if raw.startswith(bom):
            return raw.decode(encoding)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(
            f"{name} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
            f"convert it first, e.g. iconv -f latin1 -t utf-8 {name}",
        ) from exc


def load_issue_file(path: str) -> Fetched:
    """A saved issue: GitHub issue JSON, or a markdown body (``-`` reads stdin)."""
    if path == "-":
        raw, name = sys.stdin.buffer.read(), "<stdin>"
    else:
        file = Path(path)
        if file.is_dir():
            raise BadInput(
                f"{path} is a directory", "pass a saved issue body (.md) or GitHub issue JSON"
            )
        if not file.is_file():
            raise BadInput(
                f"{path}: no such file", "pass a saved issue body (.md) or GitHub issue JSON"
            )
        raw, name = file.read_bytes(), path
    text = decode_text(raw, name)
    if not text.strip():
        raise BadInput(
            f"{name} is empty", "save the issue's body there first, or pass the issue number"
        )
    warnings: list[str] = []
    if name.endswith(".json") or text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise BadInput(
                f"{name}: invalid JSON ({reason})",
                f"save the issue with `gh issue view N --json {GH_VIEW_FIELDS}`",
            ) from exc
        problem = _not_issue_json(data)
        if problem:
            raise BadInput(
                f"{name} is not GitHub issue JSON ({problem})",
                f"save it with `gh issue view N --json {GH_VIEW_FIELDS}`",
            )
        if data.get("body_complete") is False:
            warnings.append(
                f"{name}: the saved body was cut short; code or tracebacks may be missing"
            )
        issue = issue_from_json(data)
    else:
        title = next(
            (ln.lstrip("# ").strip() for ln in text.splitlines() if ln.startswith("# ")), ""
        )
        issue = Issue(title=title or Path(name).stem, body=text)
    return Fetched(issue, "file", warnings)


def _not_issue_json(data: Any) -> str | None:
    """Why ``data`` is not an issue in GitHub's JSON shape, or None when it is."""
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not an object"
    if "body" not in data:
        return "no 'body' key"
    for key in ("body", "title", "html_url", "state"):
        if data.get(key) is not None and not isinstance(data[key], str):
            return f"'{key}' must be a string"
    number = data.get("number")
    if number is not None and issue_number(number) is None:
        return f"'number' must be an issue number, from 1 to {MAX_ISSUE_NUMBER}"
    for key in ("labels", "comments"):
        if data.get(key) is not None and not isinstance(data[key], (list, int)):
            return f"'{key}' must be a list"
    return None


def example_issue() -> Fetched:
    """The bundled example (written for contribkit; used by the README quickstart and `demo`)."""
    data = json.loads(
        resources.files("contribkit.data")
        .joinpath("example_issue.json")
        .read_text(encoding="utf-8")
    )
    return Fetched(issue_from_json(data), "example", [])


def _cache_key(settings: Settings, repo: str, number: int) -> str:
    return f"{api_host(settings.text('github_url'))}/{repo.lower()}/{number}"


def _download(
    gh: Github, base_url: str, repo: str, number: int, headers: dict[str, str] | None
) -> tuple[dict[str, Any], Any, list[Comment]]:
    """The issue's reply headers and JSON (None: 304) and its comments: every request of
    :func:`fetch_issue`, run under its deadline."""
    response_headers, data = gh.requester.requestJsonAndCheck(
        "GET", f"/repos/{repo}/issues/{number}", headers=headers
    )
    location = {k.lower(): v for k, v in response_headers.items()}.get("location")
    if data is None and location:  # a 302 or 307: PyGithub follows only a 301
        raise BadReply(f"GitHub redirected issue #{number} in {repo} to {location}", URL_HINT)
    comments: list[Comment] = []
    if isinstance(data, dict) and isinstance(data.get("comments"), int) and data["comments"]:
        comments = _comments(gh, base_url, f"/repos/{repo}/issues/{number}/comments")
    return response_headers, data, comments


def _comments(gh: Github, base_url: str, path: str) -> list[Comment]:
    """Up to MAX_COMMENTS comments, page by page along the ``Link: rel="next"`` headers.

    A next page must be on the API's own origin (scheme, host and port) and under its path:
    a link elsewhere (``https://evil.example/…``, ``http://`` where the API is ``https://``,
    another port) is refused, never followed. At most the pages that MAX_COMMENTS needs are
    read, so a link that leads back to a page cannot loop."""
    comments: list[Comment] = []
    url: str | None = path
    params: dict[str, Any] | None = {"per_page": PER_PAGE}
    for _ in range(-(-MAX_COMMENTS // PER_PAGE)):
        if url is None or len(comments) >= MAX_COMMENTS:
            break
        headers, page = gh.requester.requestJsonAndCheck("GET", url, parameters=params)
        if not isinstance(page, list) or not all(isinstance(c, dict) for c in page):
            raise ValueError(f"a comments page is a JSON {type(page).__name__}, not a list")
        comments += issue_from_json({"body": "", "comments": page}).comments
        url, params = _next_page(headers, base_url), None
    return comments[:MAX_COMMENTS]


def _next_page(headers: dict[str, Any], base_url: str) -> str | None:
    """The ``rel="next"`` URL of a ``Link`` header, checked to be on ``base_url``'s origin."""
    link = {k.lower(): v for k, v in headers.items()}.get("link")
    if not isinstance(link, str):
        return None
    for part in link.split(","):
        m = re.fullmatch(r'\s*<([^>]*)>\s*;(?:.*;)?\s*rel="?next"?\s*(?:;.*)?', part)
        if not m:
            continue
        target = m.group(1)
        base = urlparse(base_url)
        if origin_of(target) != origin_of(base_url) or not urlparse(target).path.startswith(
            base.path.rstrip("/") + "/"
        ):
            raise ReplyRefused(f"a comments page link to another origin or path ({target})")
        return target
    return None


def fetch_issue(
    settings: Settings,
    repo: str,
    number: int,
    token: Token,
    *,
    offline: bool = False,
    refresh: bool = False,
) -> Fetched:
    """The issue and its comments, through the cache: ``If-None-Match`` makes an unchanged issue free.

    At most ``1 + ceil(comments / 100)`` requests; a 304 costs one request and no rate limit.
    A number GitHub cannot have is refused before any request; a reply for another issue is
    refused (:class:`BadReply`).
    """
    number = checked_number(number)
    cache = JsonCache(cache_root(settings), "issues")
    key = _cache_key(settings, repo, number)
    cached = cache.get(key)
    what = f"issue #{number} in {repo}"
    if offline:
        if not cached:
            raise BadInput(
                f"{what} is not in the cache", f"run `contribkit repro {repo}#{number}` once online"
            )
        return Fetched(Issue.from_dict(cached["issue"]), "cache (offline)", [])
    deadline = Deadline.from_settings(settings)
    gh = make_client(settings, token, deadline)
    headers = (
        {"If-None-Match": cached["etag"]} if cached and cached.get("etag") and not refresh else None
    )
    warnings = (
        []
        if token
        else ["no GitHub token: anonymous requests are limited to 60 an hour (gh auth login)"]
    )
    try:
        with github_errors(what, token, settings.text("github_url")):
            download = deadline.run(
                what, lambda: _download(gh, settings.text("github_url"), repo, number, headers)
            )
    except GitHubUnavailable as exc:
        if not cached:
            raise
        note = f"{exc.message}; using the cached copy from {cached.get('fetched_at', 'earlier')}"
        return Fetched(
            Issue.from_dict(cached["issue"]), "cache (GitHub unavailable)", [*warnings, note]
        )
    finally:
        gh.close()
    response_headers, data, comments = download
    if data is None and cached:  # 304 Not Modified
        return Fetched(Issue.from_dict(cached["issue"]), "cache (not modified)", warnings)
    if not isinstance(data, dict):
        raise BadReply(f"GitHub returned no issue data for {what}", URL_HINT)
    problem = _not_issue_json(data)
    if problem:
        raise BadReply(f"GitHub's reply for {what} is not an issue ({problem})", URL_HINT)
    if issue_number(data.get("number")) != number:  # a proxy or server that mixes replies up
        named = data.get("number")
        raise BadReply(
            f"GitHub's reply for {what} "
            + ("names no issue number" if named is None else f"is issue #{named}"),
            URL_HINT,
        )
    if data.get("pull_request"):
        raise BadInput(
            f"#{number} in {repo} is a pull request, not an issue",
            f"gh pr view {number} -R {repo}",
        )
    issue = issue_from_json(data, repo)
    issue.comments += comments
    count = data.get("comments")
    if isinstance(count, int) and count > MAX_COMMENTS:
        warnings.append(f"only the first {MAX_COMMENTS} of {count} comments were read")
    etag = {k.lower(): v for k, v in response_headers.items()}.get("etag")
    cache.put(
        key,
        {
            "etag": etag,
            "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "issue": issue.as_dict(),
        },
    )
    return Fetched(issue, "github", warnings)
