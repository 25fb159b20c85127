"""Fetching issues through PyGithub against the loopback GitHub: tokens, cache, ETags, errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from contribkit.core.config import Settings, load_settings
from contribkit.core.errors import AuthRequired, BadInput, CheckFailed
from contribkit.github.auth import Token, resolve_token
from contribkit.github.client import GitHubUnavailable
from contribkit.github.sources import fetch_issue, load_issue_file, parse_issue_ref
from contribkit.issue.parse import parse_issue
from tests.fakegithub import FakeGitHub

REPO = "pytorch/pytorch"


def settings(fake: FakeGitHub) -> Settings:
    return load_settings({"github_url": fake.url})


def anon(fake: FakeGitHub) -> Token:
    return resolve_token(fake.url, use_gh=False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("170398", (None, 170398)),
        ("#12", (None, 12)),
        ("me/fork#7", ("me/fork", 7)),
        ("https://github.com/pytorch/pytorch/issues/170398", (REPO, 170398)),
        ("https://github.com/pytorch/pytorch/issues/5#issuecomment-1", (REPO, 5)),
    ],
)
def test_parse_issue_ref(text: str, expected: tuple[str | None, int]) -> None:
    assert parse_issue_ref(text) == expected


@pytest.mark.parametrize("text", ["abc", "pytorch#", "https://github.com/pytorch/pytorch/pull/9"])
def test_parse_issue_ref_rejects(text: str) -> None:
    with pytest.raises(BadInput):
        parse_issue_ref(text)


def test_fetch_with_comments_in_two_requests_then_304(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(
        REPO,
        5,
        title="Crash",
        body="body",
        comments=[("alice", f"c{i}") for i in range(100)],
        labels=["module: nn"],
    )
    s = settings(fake_github)
    first = fetch_issue(s, REPO, 5, anon(fake_github))
    assert first.origin == "github"
    assert first.issue.title == "Crash" and first.issue.labels == ["module: nn"]
    assert [c.body for c in first.issue.comments] == [f"c{i}" for i in range(100)]
    assert first.issue.comments[0].author == "alice"
    assert len(fake_github.requests) <= 3
    assert any("60 an hour" in w for w in first.warnings)
    fake_github.requests.clear()
    second = fetch_issue(s, REPO, 5, anon(fake_github))
    assert second.origin == "cache (not modified)"
    assert second.issue == first.issue
    assert len(fake_github.requests) == 1
    assert fake_github.requests[0].headers.get("If-None-Match")
    fake_github.requests.clear()
    assert fetch_issue(s, REPO, 5, anon(fake_github), refresh=True).origin == "github"
    assert "If-None-Match" not in fake_github.requests[0].headers
    fake_github.requests.clear()
    assert fetch_issue(s, REPO, 5, anon(fake_github), offline=True).origin == "cache (offline)"
    assert fake_github.requests == []


def test_paginates_past_100_comments(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 6, comments=[f"c{i}" for i in range(230)])
    fetched = fetch_issue(settings(fake_github), REPO, 6, anon(fake_github))
    assert len(fetched.issue.comments) == 230
    assert len(fake_github.requests_to(f"/repos/{REPO}/issues/6/comments")) == 3


def test_token_never_reaches_the_cache(
    fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_github.valid_tokens.add("ghp_cachetest")
    fake_github.add_issue(REPO, 8, body="b")
    # the loopback server is a non-github.com host, so the Enterprise variable applies (as in gh)
    monkeypatch.setenv("GH_ENTERPRISE_TOKEN", "ghp_cachetest")
    token = resolve_token(fake_github.url, use_gh=False)
    assert token.source == "GH_ENTERPRISE_TOKEN"
    fetch_issue(settings(fake_github), REPO, 8, token)
    assert fake_github.requests[0].headers["Authorization"] == "token ghp_cachetest"
    cache_dir = Path(os.environ["CONTRIBKIT_CACHE_DIR"])
    for path in cache_dir.rglob("*.json"):
        assert "ghp_cachetest" not in path.read_text()


def test_token_chain_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gh = tmp_path / "gh"
    gh.write_text(
        '#!/bin/sh\n[ "$1 $2 $3 $4" = "auth token --hostname github.com" ] && echo gho_from_gh\n'
    )
    gh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert resolve_token().source == "gh auth token" and resolve_token().value == "gho_from_gh"
    monkeypatch.setenv("GITHUB_TOKEN", "b")
    assert resolve_token().source == "GITHUB_TOKEN"
    monkeypatch.setenv("GH_TOKEN", "a")
    assert resolve_token().source == "GH_TOKEN"
    assert resolve_token(cli_token="c").source == "--token"
    ghe = resolve_token("https://ghe.corp.com/api/v3")
    assert ghe.source == "anonymous"  # GH_TOKEN is for github.com only, as gh does
    monkeypatch.setenv("GH_ENTERPRISE_TOKEN", "e")
    assert resolve_token("https://ghe.corp.com/api/v3").source == "GH_ENTERPRISE_TOKEN"
    assert "gho_from_gh" not in repr(resolve_token(use_gh=True))


def test_not_found_and_pull_request(fake_github: FakeGitHub) -> None:
    s = settings(fake_github)
    with pytest.raises(BadInput, match=r"issue #404 in pytorch/pytorch not found"):
        fetch_issue(s, REPO, 404, anon(fake_github))
    fake_github.add_issue(REPO, 9, pull_request=True)
    with pytest.raises(BadInput, match="is a pull request, not an issue"):
        fetch_issue(s, REPO, 9, anon(fake_github))


def test_bad_credentials_is_auth_required(
    fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GH_ENTERPRISE_TOKEN", "expired")
    fake_github.add_issue(REPO, 1)
    with pytest.raises(
        AuthRequired, match=r"token from GH_ENTERPRISE_TOKEN \(Bad credentials\)"
    ) as info:
        fetch_issue(settings(fake_github), REPO, 1, resolve_token(fake_github.url, use_gh=False))
    assert info.value.exit_code == 4
    assert "expired" not in info.value.message + (info.value.hint or "")


@pytest.mark.parametrize("status", [403, 429])
def test_rate_limit_fails_fast_with_reset_time(fake_github: FakeGitHub, status: int) -> None:
    fake_github.add_issue(REPO, 2)
    fake_github.rate_limit(status=status, reset_in=3000)
    with pytest.raises(AuthRequired, match="rate limit exceeded; it resets at") as info:
        fetch_issue(settings(fake_github), REPO, 2, anon(fake_github))
    # Asked once: a retry is what would have waited for the reset.
    assert len(fake_github.requests_to(f"/repos/{REPO}/issues/2")) == 1
    assert "gh auth login" in (info.value.hint or "")


def test_server_errors_are_retried_then_reported(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 3)
    fake_github.fail("/issues/3$", 502, "Server Error")
    with pytest.raises(GitHubUnavailable, match="kept failing"):
        fetch_issue(settings(fake_github), REPO, 3, anon(fake_github))
    assert len(fake_github.requests_to(f"/repos/{REPO}/issues/3")) == 4  # 1 + 3 retries


def test_transient_error_recovers(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 4, title="Recovered")
    fake_github.fail("/issues/4$", 503, "Service Unavailable", times=1)
    assert fetch_issue(settings(fake_github), REPO, 4, anon(fake_github)).issue.title == "Recovered"


def test_network_down_uses_cache_or_fails(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 11, title="Cached")
    s = settings(fake_github)
    fetch_issue(s, REPO, 11, anon(fake_github))
    url = fake_github.url
    fake_github.stop()
    down = load_settings({"github_url": url})
    fetched = fetch_issue(down, REPO, 11, anon(fake_github))
    assert fetched.issue.title == "Cached" and fetched.origin == "cache (GitHub unavailable)"
    assert any("cannot reach GitHub" in w for w in fetched.warnings)
    with pytest.raises(GitHubUnavailable, match="cannot reach GitHub"):
        fetch_issue(down, REPO, 12, anon(fake_github))


def test_offline_without_cache_is_bad_input(fake_github: FakeGitHub) -> None:
    with pytest.raises(BadInput, match="not in the cache"):
        fetch_issue(settings(fake_github), REPO, 77, anon(fake_github), offline=True)


def test_load_saved_files(tmp_path: Path) -> None:
    md = tmp_path / "bug.md"
    md.write_text("# Title here\n\nbody text\n")
    assert load_issue_file(str(md)).issue.title == "Title here"
    saved = tmp_path / "issue.json"
    saved.write_text(
        json.dumps(
            {
                "number": 3,
                "repo": "o/r",
                "title": "T",
                "body": "B",
                "user": "someone",
                "labels": ["bug"],
                "comments": [{"author": "m", "date": "2020-01-01", "body": "c"}],
                "body_complete": False,
            }
        )
    )
    fetched = load_issue_file(str(saved))
    assert (
        fetched.issue.number == 3
        and fetched.issue.author == "someone"
        and fetched.issue.labels == ["bug"]
    )
    assert fetched.issue.comments[0].author == "m"
    assert any("cut short" in w for w in fetched.warnings)
    latin = tmp_path / "latin.md"
    latin.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(BadInput, match="not UTF-8"):
        load_issue_file(str(latin))
    with pytest.raises(BadInput, match="no such file"):
        load_issue_file(str(tmp_path / "missing.md"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(BadInput, match="invalid JSON"):
        load_issue_file(str(bad))


def test_forbidden_repository_needs_auth(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 13)
    fake_github.fail("/issues/13$", 403, "Resource not accessible by integration")
    with pytest.raises(
        AuthRequired, match=r"GitHub refused access to issue #13 .*403 Resource not accessible"
    ):
        fetch_issue(settings(fake_github), REPO, 13, anon(fake_github))


def test_unprocessable_answer_is_a_failed_check(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 14)
    fake_github.fail("/issues/14$", 410, "Issues are disabled for this repo")
    with pytest.raises(CheckFailed, match=r"GitHub API error 410: Issues are disabled"):
        fetch_issue(settings(fake_github), REPO, 14, anon(fake_github))


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[]", "a JSON list, not an object"),
        ('"str"', "a JSON str, not an object"),
        ('{"number": "abc", "body": "x"}', "'number' must be an issue number"),
        ('{"title": 1, "body": "x"}', "'title' must be a string"),
        ('{"body": ["x"]}', "'body' must be a string"),
        ('{"title": "t"}', "no 'body' key"),
    ],
)
def test_malformed_issue_json_is_rejected(tmp_path: Path, text: str, why: str) -> None:
    saved = tmp_path / "issue.json"
    saved.write_text(text)
    with pytest.raises(BadInput, match="is not GitHub issue JSON") as info:
        load_issue_file(str(saved))
    assert why in info.value.message


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="is a directory"):
        load_issue_file(str(tmp_path))


def test_gh_issue_view_json(tmp_path: Path) -> None:
    """The shape `gh issue view --json` writes: `author` objects, `url`, camelCase dates, and
    upper-case state. The author's comment is a code source like any other."""
    saved = tmp_path / "gh.json"
    saved.write_text(
        json.dumps(
            {
                "number": 77,
                "title": "sum is wrong",
                "body": "No code here, see below.",
                "author": {"login": "reporter", "name": "R"},
                "url": "https://github.com/pytorch/pytorch/issues/77",
                "state": "OPEN",
                "createdAt": "2026-01-02T03:04:05Z",
                "labels": [{"name": "module: nn", "color": "fff"}],
                "comments": [
                    {
                        "author": {"login": "reporter"},
                        "body": "```python\nimport torch\nprint(torch.ones(2).sum())\n```",
                        "createdAt": "2026-01-03T00:00:00Z",
                    }
                ],
            }
        )
    )
    issue = load_issue_file(str(saved)).issue
    assert (issue.author, issue.repo, issue.state) == ("reporter", REPO, "open")
    assert issue.url == "https://github.com/pytorch/pytorch/issues/77"
    assert issue.created_at == "2026-01-02T03:04:05Z" and issue.labels == ["module: nn"]
    assert [(c.author, c.created_at) for c in issue.comments] == [
        ("reporter", "2026-01-03T00:00:00Z")
    ]
    parsed = parse_issue(issue)
    assert "torch.ones(2).sum()" in parsed.code and parsed.code_source == "comment by @reporter"
