"""GitHub cannot hold a command, nor turn a bad reply into an internal error: the deadline, rate
limits reported instead of slept through, malformed and mistyped replies, redirect loops, bad
``--github-url`` values. Against the loopback GitHub: real sockets, real replies."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from contribkit.core.config import Settings, load_settings
from contribkit.core.errors import AuthRequired
from contribkit.github.auth import Token, resolve_token
from contribkit.github.client import BadReply, GitHubTimeout, GitHubUnavailable
from contribkit.github.sources import fetch_issue
from tests.conftest import RunCli
from tests.fakegithub import FakeGitHub

REPO = "pytorch/pytorch"
TOKEN = "ghp_valid"


def settings(fake: FakeGitHub, **more: object) -> Settings:
    return load_settings({"github_url": fake.url, **more})


def anon(fake: FakeGitHub) -> Token:
    return resolve_token(fake.url, use_gh=False)


def one_error(stderr: str) -> str:
    """The error line of a one-line error (plus at most one hint); no traceback."""
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr, stderr
    errors = [line for line in lines if line.startswith("contribkit: error: ")]
    assert len(errors) == 1, stderr
    assert all(
        line.startswith(("contribkit: error: ", "hint: ", "contribkit: warning: "))
        for line in lines
    ), stderr
    return errors[0]


# -- the deadline ---------------------------------------------------------------------------------
def test_a_dripping_reply_stops_at_the_deadline(fake_github: FakeGitHub) -> None:
    """One byte a second never trips the 15 s read timeout; the 2 s deadline stops it."""
    fake_github.drip(r"/issues/1$", interval=1.0)
    with pytest.raises(
        GitHubTimeout, match=r"did not answer issue #1 in pytorch/pytorch within 2 s"
    ):
        fetch_issue(settings(fake_github, github_timeout=2.0), REPO, 1, anon(fake_github))
    assert settings(fake_github).number("http_timeout") > 2  # a read timeout alone never fires


def test_the_deadline_falls_back_to_the_cache(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 2, title="Cached title")
    fetch_issue(settings(fake_github), REPO, 2, anon(fake_github))
    # A byte a second against a 2 s deadline, whose read timeout is 2 s too: the deadline ends it
    # (with a 1.5 s deadline the read timeout was 1 s, a byte's own gap: on a loaded machine
    # the read timeout won, and the warning named it instead). The warning is the deadline's.
    fake_github.drip(r"/issues/2$", interval=1.0)
    fetched = fetch_issue(
        settings(fake_github, github_timeout=2.0), REPO, 2, anon(fake_github), refresh=True
    )
    assert fetched.issue.title == "Cached title"
    assert fetched.origin == "cache (GitHub unavailable)"
    assert any("within 2 s" in w for w in fetched.warnings), fetched.warnings


def test_repro_timeout_option_is_one_line(
    run_cli: RunCli, fake_github: FakeGitHub, fork_repo: Path
) -> None:
    fake_github.drip(r"/issues/3$", interval=2.0)
    proc = run_cli(
        "repro", "3", "--github-timeout", "2", "--github-url", fake_github.url, cwd=fork_repo
    )
    assert proc.returncode == 1
    assert "did not answer issue #3 in pytorch/pytorch within 2 s" in one_error(proc.stderr)
    assert "--github-timeout" in proc.stderr
    assert not (fork_repo / "repros").exists()


def test_timeout_setting_and_no_limit(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 4, title="Quick")
    assert settings(fake_github).number("github_timeout") == 30.0
    quick = fetch_issue(settings(fake_github, github_timeout=0.0), REPO, 4, anon(fake_github))
    assert quick.issue.title == "Quick"


# -- rate limits ----------------------------------------------------------------------------------
def test_secondary_rate_limit_is_reported_not_slept(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 5)
    fake_github.secondary_rate_limit(retry_after=60)
    with pytest.raises(AuthRequired, match=r"rate limit exceeded; retry after 60 s \(at "):
        fetch_issue(settings(fake_github), REPO, 5, anon(fake_github))
    assert len(fake_github.requests_to(f"/repos/{REPO}/issues/5")) == 1


def test_primary_rate_limit_resetting_soon_is_reported_not_slept(
    fake_github: FakeGitHub, run_cli: RunCli, fork_repo: Path
) -> None:
    """PyGithub's own retry would sleep until a reset 20 s away; with a token it is exit 1."""
    fake_github.valid_tokens.add(TOKEN)
    fake_github.add_issue(REPO, 6)
    fake_github.rate_limit(reset_in=20)
    with pytest.raises(GitHubUnavailable, match=r"rate limit exceeded; it resets at \d\d:\d\d"):
        fetch_issue(settings(fake_github), REPO, 6, Token(TOKEN, "GH_TOKEN"))
    # Asked once: a retry is what would have waited for the reset.
    assert len(fake_github.requests_to(f"/repos/{REPO}/issues/6")) == 1
    proc = run_cli(
        "repro",
        "6",
        "--github-url",
        fake_github.url,
        cwd=fork_repo,
        env={"GH_ENTERPRISE_TOKEN": TOKEN},
    )
    assert proc.returncode == 1
    assert "rate limit exceeded; it resets at" in one_error(proc.stderr)


def test_401_without_a_token_says_to_log_in(fake_github: FakeGitHub) -> None:
    fake_github.fail(r"/issues/7$", 401, "Bad credentials")
    with pytest.raises(AuthRequired, match="GitHub requires authentication") as info:
        fetch_issue(settings(fake_github), REPO, 7, anon(fake_github))
    assert "anonymous" not in info.value.message
    assert "gh auth login" in (info.value.hint or "")


# -- replies that are not GitHub's --------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"number": 8, "title": "cut sh', "malformed reply"),
        (b"[1, 2, 3]", "no issue data"),
        (b'{"number": 8, "title": ["x"], "body": "b"}', "'title' must be a string"),
        (b'{"number": 8, "title": "t", "body": 5}', "'body' must be a string"),
        (b'{"number": "\xc2\xb2", "title": "t", "body": ""}', "'number' must be an issue number"),
        (b'{"title": "t", "body": "b", "comments": "many"}', "'comments' must be a list"),
        (b"<html>a proxy's login page</html>", "no 'body' key"),
    ],
)
def test_malformed_and_mistyped_replies_are_bad_input(
    fake_github: FakeGitHub, body: bytes, why: str
) -> None:
    fake_github.reply_raw(r"/issues/8$", body)
    with pytest.raises(BadReply, match=why) as info:
        fetch_issue(settings(fake_github), REPO, 8, anon(fake_github))
    assert info.value.exit_code == 2
    assert "--github-url" in (info.value.hint or "")


@pytest.mark.parametrize(
    ("status", "ring"),
    [(301, True), (301, False), (302, False), (307, False)],
)
def test_redirect_loops_are_bad_input(fake_github: FakeGitHub, status: int, ring: bool) -> None:
    a, b = f"/repos/{REPO}/issues/9", f"/repos/{REPO}/issues/10"
    fake_github.redirect(r"/issues/9$", b if ring else a, status)
    fake_github.redirect(r"/issues/10$", a, status)
    # No deadline (github_timeout 0): the loop must end by counting hops, on a loaded machine too
    # (under the default 30 s deadline, a starved run ended in GitHubTimeout instead).
    with pytest.raises(BadReply, match="redirected issue #9") as info:
        fetch_issue(settings(fake_github, github_timeout=0.0), REPO, 9, anon(fake_github))
    assert info.value.exit_code == 2
    # PyGithub follows a 301 ring itself, recursing: the recursion limit bounds the hops (~930).
    hops = len(fake_github.requests_to(f"/repos/{REPO}/issues/"))
    assert 1 <= hops <= sys.getrecursionlimit(), hops


def test_mistyped_reply_exits_2_from_the_cli(
    run_cli: RunCli, fake_github: FakeGitHub, fork_repo: Path
) -> None:
    fake_github.reply_raw(r"/issues/11$", json.dumps({"title": 1, "body": "b"}).encode())
    proc = run_cli("repro", "11", "--github-url", fake_github.url, cwd=fork_repo)
    assert proc.returncode == 2
    assert "is not an issue ('title' must be a string)" in one_error(proc.stderr)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("notaurl", "is not an http(s) URL"),
        ("file:///etc/passwd", "is not an http(s) URL"),
        ("http://127.0.0.1:99999", "is invalid (Port out of range"),
        ("https://", "names no host"),
    ],
)
def test_bad_github_urls_exit_2(run_cli: RunCli, fork_repo: Path, url: str, why: str) -> None:
    proc = run_cli("repro", "12", "--github-url", url, cwd=fork_repo)
    assert proc.returncode == 2
    assert why in one_error(proc.stderr)


def test_dot_dot_is_no_repository_part(run_cli: RunCli, fake_github: FakeGitHub) -> None:
    proc = run_cli("repro", "x/..#1", "--github-url", fake_github.url)
    assert proc.returncode == 2
    assert "'x/..' is not a repository in OWNER/NAME form" in one_error(proc.stderr)
    assert fake_github.requests == []  # /repos/x/../issues/1 (that is, /x/issues/1) never asked
