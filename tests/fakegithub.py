"""A loopback GitHub REST server for tests: real HTTP, GitHub's shapes and exact error messages.

PyGithub is pointed at it with ``base_url``; the code under test takes its production path.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

DOCS = "https://docs.github.com/rest"
RATE_LIMIT_MESSAGE = (
    "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a "
    "higher rate limit. Check out the documentation for more details.)"
)


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Failure:
    status: int
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    times: int | None = None  # None: every time


@dataclass
class Raw:
    """A reply sent as given: ``body`` bytes, or a drip of them (one byte every ``drip`` s);
    ``length=False``: no Content-Length, the body ends when the connection closes."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    drip: float = 0.0
    length: bool = True


class FakeGitHub:
    def __init__(self) -> None:
        self.issues: dict[tuple[str, int], dict[str, Any]] = {}
        self.comments: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.private: set[str] = set()
        self.valid_tokens: set[str] = set()
        self.failures: list[tuple[re.Pattern[str], Failure]] = []
        self.requests: list[Request] = []
        self.pulls: list[dict[str, Any]] = []
        self.raw: list[tuple[re.Pattern[str], Raw]] = []
        self.stopped = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # -- set-up -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeGitHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()  # ends any drip
        self._server.shutdown()
        self._server.server_close()

    def add_issue(
        self,
        repo: str,
        number: int,
        *,
        title: str = "Something is broken",
        body: str | None = "",
        comments: list[str | tuple[str, str]] | None = None,
        labels: list[str] | None = None,
        author: str = "reporter",
        state: str = "open",
        pull_request: bool = False,
    ) -> dict[str, Any]:
        base = f"{self.url}/repos/{repo}/issues/{number}"
        issue: dict[str, Any] = {
            "url": base,
            "html_url": f"https://github.com/{repo}/issues/{number}",
            "comments_url": f"{base}/comments",
            "id": 1000 + number,
            "number": number,
            "title": title,
            "body": body,
            "user": {"login": author, "id": 1, "type": "User"},
            "labels": [{"name": name, "color": "ededed"} for name in (labels or [])],
            "state": state,
            "state_reason": None,
            "locked": False,
            "comments": len(comments or []),
            "created_at": "2026-01-02T03:04:05Z",
            "updated_at": "2026-01-03T03:04:05Z",
            "closed_at": None,
            "author_association": "NONE",
        }
        if pull_request:
            issue["pull_request"] = {"url": f"{self.url}/repos/{repo}/pulls/{number}"}
        self.issues[(repo, number)] = issue
        self.comments[(repo, number)] = [
            self._comment(repo, number, i, c) for i, c in enumerate(comments or [], start=1)
        ]
        return issue

    def _comment(
        self, repo: str, number: int, index: int, comment: str | tuple[str, str]
    ) -> dict[str, Any]:
        author, body = comment if isinstance(comment, tuple) else ("commenter", comment)
        cid = number * 1000 + index
        return {
            "id": cid,
            "url": f"{self.url}/repos/{repo}/issues/comments/{cid}",
            "html_url": f"https://github.com/{repo}/issues/{number}#issuecomment-{cid}",
            "body": body,
            "user": {"login": author, "id": 2, "type": "User"},
            "created_at": f"2026-01-04T00:00:{index % 60:02d}Z",
            "updated_at": f"2026-01-04T00:00:{index % 60:02d}Z",
            "author_association": "NONE",
        }

    def fail(
        self,
        path_regex: str,
        status: int,
        message: str,
        headers: dict[str, str] | None = None,
        times: int | None = None,
    ) -> None:
        self.failures.append(
            (re.compile(path_regex), Failure(status, message, headers or {}, times))
        )

    def rate_limit(self, path_regex: str = ".*", status: int = 403, reset_in: int = 3000) -> None:
        headers = {
            "X-RateLimit-Limit": "60",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Used": "60",
            "X-RateLimit-Reset": str(int(time.time()) + reset_in),
            "X-RateLimit-Resource": "core",
        }
        self.fail(path_regex, status, RATE_LIMIT_MESSAGE, headers)

    def secondary_rate_limit(self, path_regex: str = ".*", retry_after: int = 60) -> None:
        """GitHub's secondary limit: 403, a Retry-After header, no X-RateLimit-Remaining: 0."""
        self.fail(
            path_regex,
            403,
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
            "again.",
            {"Retry-After": str(retry_after)},
        )

    def reply_raw(
        self,
        path_regex: str,
        body: bytes,
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        drip: float = 0.0,
        length: bool = True,
    ) -> None:
        """Answer matching paths with ``body`` as is (malformed JSON), or one byte every ``drip``
        seconds after the headers (a reply that never trips a read timeout); ``length=False``
        sends no Content-Length (the reply runs until the connection closes)."""
        self.raw.append((re.compile(path_regex), Raw(status, body, headers or {}, drip, length)))

    def drip(self, path_regex: str, interval: float = 1.0) -> None:
        """A valid-looking JSON reply that arrives one byte every ``interval`` seconds."""
        self.reply_raw(path_regex, b'{"number": 1, "title": "slow", "body": ""}', drip=interval)

    def redirect(self, path_regex: str, to: str, status: int = 301) -> None:
        """Redirect matching paths to the path ``to`` (a loop when ``to`` leads back)."""
        self.reply_raw(path_regex, b"", status=status, headers={"Location": f"{self.url}{to}"})

    def requests_to(self, path_prefix: str) -> list[Request]:
        return [r for r in self.requests if r.path.startswith(path_prefix)]

    # -- serving ------------------------------------------------------------------------
    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self, method: str) -> None:
                parsed = urlparse(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                req = Request(
                    method, parsed.path, parse_qs(parsed.query), dict(self.headers.items()), body
                )
                fake.requests.append(req)
                canned = next((r for pattern, r in fake.raw if pattern.search(req.path)), None)
                if canned is not None:
                    self._send_raw(canned)
                    return
                status, payload, headers = fake._route(req)
                data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _send_raw(self, raw: Raw) -> None:
                self.send_response(raw.status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                if raw.length:
                    self.send_header("Content-Length", str(len(raw.body)))
                else:
                    self.close_connection = True
                for name, value in raw.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if not raw.drip:
                    with contextlib.suppress(OSError):  # the client refused the reply
                        self.wfile.write(raw.body)
                    return
                self.wfile.flush()
                try:
                    for i in range(len(raw.body)):
                        if fake.stopped.wait(raw.drip):
                            return
                        self.wfile.write(raw.body[i : i + 1])
                        self.wfile.flush()
                except OSError:  # the client gave up and closed the connection
                    return

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

        return Handler

    def _error(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        return (
            status,
            {"message": message, "documentation_url": DOCS, "status": str(status)},
            headers or {},
        )

    def _route(self, req: Request) -> tuple[int, Any, dict[str, str]]:
        for pattern, failure in self.failures:
            if pattern.search(req.path) and failure.times != 0:
                if failure.times is not None:
                    failure.times -= 1
                return self._error(failure.status, failure.message, failure.headers)
        auth = req.headers.get("Authorization", "")
        token = auth.split(" ", 1)[1] if " " in auth else None
        if token is not None and token not in self.valid_tokens:
            return self._error(401, "Bad credentials")
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)?", req.path)
        if not m:
            if req.path == "/user" and token:
                return 200, {"login": "contributor", "id": 7, "type": "User"}, {}
            return self._error(404, "Not Found")
        repo, rest = m.group(1), m.group(2) or ""
        if repo in self.private and token is None:
            return self._error(404, "Not Found")
        if rest == "" and req.method == "GET":
            owner, name = repo.split("/")
            return (
                200,
                {
                    "id": 65600975,
                    "name": name,
                    "full_name": repo,
                    "private": repo in self.private,
                    "owner": {"login": owner, "id": 3, "type": "Organization"},
                    "url": f"{self.url}/repos/{repo}",
                    "html_url": f"https://github.com/{repo}",
                    "default_branch": "main",
                },
                {},
            )
        m = re.fullmatch(r"/issues/(\d+)", rest)
        if m and req.method == "GET":
            issue = self.issues.get((repo, int(m.group(1))))
            if issue is None:
                return self._error(404, "Not Found")
            etag = '"' + hashlib.sha1(json.dumps(issue, sort_keys=True).encode()).hexdigest() + '"'
            if req.headers.get("If-None-Match") == etag:
                return 304, None, {"ETag": etag}
            return 200, issue, {"ETag": etag}
        m = re.fullmatch(r"/issues/(\d+)/comments", rest)
        if m and req.method == "GET":
            key = (repo, int(m.group(1)))
            if key not in self.issues:
                return self._error(404, "Not Found")
            return self._page(req, self.comments[key])
        if rest == "/pulls" and req.method == "POST":
            if token is None:
                return self._error(401, "Requires authentication")
            body = req.body or {}
            missing = [k for k in ("title", "head", "base") if not body.get(k)]
            if missing:
                return self._error(422, "Validation Failed")
            number = 5000 + len(self.pulls) + 1
            created: dict[str, Any] = {
                "id": number,
                "number": number,
                "state": "open",
                "title": body["title"],
                "body": body.get("body"),
                "draft": bool(body.get("draft")),
                "url": f"{self.url}/repos/{repo}/pulls/{number}",
                "issue_url": f"{self.url}/repos/{repo}/issues/{number}",
                "html_url": f"https://github.com/{repo}/pull/{number}",
                "labels": [],
                "requested_reviewers": [],
                "head": {"label": body["head"], "ref": body["head"].split(":")[-1]},
                "base": {"label": body["base"], "ref": body["base"]},
                "user": {"login": "contributor", "id": 7, "type": "User"},
            }
            self.pulls.append(created)
            return 201, created, {}
        m = re.fullmatch(r"/(issues|pulls)/(\d+)/(labels|requested_reviewers)", rest)
        if m and req.method == "POST":
            if token is None:
                return self._error(401, "Requires authentication")
            pull = next((p for p in self.pulls if p["number"] == int(m.group(2))), None)
            if pull is None:
                return self._error(404, "Not Found")
            if m.group(3) == "labels":  # a list of names, or {"labels": [...]}
                body = (
                    req.body if isinstance(req.body, list) else (req.body or {}).get("labels", [])
                )
                pull["labels"] += [{"name": name, "color": "ededed"} for name in body]
                return 200, pull["labels"], {}
            for login in (req.body or {}).get("reviewers", []):
                pull["requested_reviewers"].append({"login": login, "id": 9, "type": "User"})
            return 201, pull, {}
        return self._error(404, "Not Found")

    def _page(self, req: Request, items: list[dict[str, Any]]) -> tuple[int, Any, dict[str, str]]:
        per_page = min(int(req.query.get("per_page", ["30"])[0]), 100)
        page = int(req.query.get("page", ["1"])[0])
        chunk = items[(page - 1) * per_page : page * per_page]
        last = max(1, -(-len(items) // per_page))
        links = []
        base = f"{self.url}{req.path}?per_page={per_page}"
        if page < last:
            links.append(f'<{base}&page={page + 1}>; rel="next"')
            links.append(f'<{base}&page={last}>; rel="last"')
        if page > 1:
            links.append(f'<{base}&page={page - 1}>; rel="prev"')
            links.append(f'<{base}&page=1>; rel="first"')
        return 200, chunk, ({"Link": ", ".join(links)} if links else {})
