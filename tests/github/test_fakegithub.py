"""The loopback GitHub server speaks what PyGithub expects (the fixture later issues reuse)."""

from __future__ import annotations

import github
import pytest
from github import Auth, Github

from tests.fakegithub import FakeGitHub


def client(fake: FakeGitHub, token: str | None = None) -> Github:
    return Github(
        base_url=fake.url,
        auth=Auth.Token(token) if token else None,
        retry=None,
        per_page=100,
        lazy=True,
    )


def test_issue_comments_and_pagination(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(
        "pytorch/pytorch", 5, title="t", body="b", comments=[f"c{i}" for i in range(150)]
    )
    issue = client(fake_github).get_repo("pytorch/pytorch").get_issue(5)
    assert issue.title == "t"
    bodies = [c.body for c in issue.get_comments()]
    assert bodies == [f"c{i}" for i in range(150)]
    assert len(fake_github.requests_to("/repos/pytorch/pytorch/issues/5/comments")) == 2


def test_exact_error_classes(fake_github: FakeGitHub) -> None:
    gh = client(fake_github)
    with pytest.raises(github.UnknownObjectException):
        gh.get_repo("pytorch/pytorch").get_issue(404).title  # noqa: B018
    with pytest.raises(github.BadCredentialsException):
        client(fake_github, "wrong").get_repo("pytorch/pytorch").get_issue(1).title  # noqa: B018
    fake_github.rate_limit("/issues/7")
    with pytest.raises(github.RateLimitExceededException):
        gh.get_repo("pytorch/pytorch").get_issue(7).title  # noqa: B018


def test_pull_creation_needs_a_token(fake_github: FakeGitHub) -> None:
    fake_github.valid_tokens.add("good")
    repo = client(fake_github, "good").get_repo("pytorch/pytorch")
    pull = repo.create_pull(
        title="Fix it", body="Fixes #1", head="contributor:fix", base="main", draft=True
    )
    assert pull.number == 5001 and fake_github.pulls[0]["draft"] is True
