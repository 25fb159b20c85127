"""What GitHub sends back is bounded and checked: reply size (as sent and inflated), pagination
links that leave the API's origin, issue numbers GitHub cannot have, and a reply for another
issue. Against the loopback GitHub (and a second one as "another host"): real sockets."""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from contribkit.core.config import Settings, load_settings
from contribkit.core.errors import BadInput
from contribkit.github.auth import Token, resolve_token
from contribkit.github.client import BadReply
from contribkit.github.sources import fetch_issue, load_issue_file, parse_issue_ref
from contribkit.issue.model import MAX_ISSUE_NUMBER
from tests.conftest import RunCli
from tests.fakegithub import FakeGitHub
from tests.github.test_github_limits import one_error

REPO = "pytorch/pytorch"
MB = 1024 * 1024


def settings(fake: FakeGitHub, **more: object) -> Settings:
    return load_settings({"github_url": fake.url, **more})


def anon(fake: FakeGitHub) -> Token:
    return resolve_token(fake.url, use_gh=False)


def issue_json(fake: FakeGitHub, number: int, body: str = "") -> bytes:
    issue = fake.add_issue(REPO, number, body=body)
    return json.dumps(issue).encode()


def gzip_bomb(inflated: int) -> bytes:
    """A gzip stream of ``inflated`` bytes of JSON-ish padding, made a MB at a time."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip header
    out = [packer.compress(b'{"number": 1, "title": "t", "body": "')]
    chunk = b" " * MB
    for _ in range(inflated // MB):
        out.append(packer.compress(chunk))
    out.append(packer.compress(b'"}') + packer.flush())
    return b"".join(out)


# -- size -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("length", [True, False], ids=["content-length", "until-close"])
def test_a_reply_over_the_cap_is_refused(fake_github: FakeGitHub, length: bool) -> None:
    """Without a Content-Length the bytes read are counted; with one, nothing is read."""
    body = issue_json(fake_github, 1, body="x" * (3 * MB))
    fake_github.reply_raw(r"/issues/1$", body, length=length)
    with pytest.raises(BadReply, match=r"sent a reply .*over 1 MB.* for issue #1") as info:
        fetch_issue(settings(fake_github, github_max_reply_mb=1), REPO, 1, anon(fake_github))
    assert info.value.hint is not None and "github_max_reply_mb" in info.value.hint
    # the same reply under the default cap (20 MB) is read whole
    fetched = fetch_issue(settings(fake_github), REPO, 1, anon(fake_github))
    assert len(fetched.issue.body) == 3 * MB


def test_a_gzip_bomb_is_refused_once_inflated(fake_github: FakeGitHub) -> None:
    bomb = gzip_bomb(8 * MB)
    assert len(bomb) < MB  # small on the wire: only the inflated size gives it away
    fake_github.reply_raw(r"/issues/2$", bomb, headers={"Content-Encoding": "gzip"})
    with pytest.raises(BadReply, match=r"over 1 MB once inflated for issue #2"):
        fetch_issue(settings(fake_github, github_max_reply_mb=1), REPO, 2, anon(fake_github))


def test_a_large_gzip_bomb_costs_little_memory(
    fake_github: FakeGitHub, fork_repo: Path, tmp_path: Path
) -> None:
    """A 512 MB bomb (about 0.5 MB sent) under the default 20 MB cap: exit 2 on one line, and the
    command's peak memory stays far below the bomb (it took 926 MB before the cap)."""
    bomb = gzip_bomb(512 * MB)
    fake_github.reply_raw(r"/issues/3$", bomb, headers={"Content-Encoding": "gzip"})
    peak_file = tmp_path / "peak"
    # The command's own high-water mark (VmHWM of its memory, read as it exits). Not wait4's
    # ru_maxrss: Linux counts there the memory of the process that exec'd it, this test run's.
    measured = (
        "import atexit, runpy, sys\n"
        "def peak():\n"
        "    with open('/proc/self/status') as f:\n"
        "        kib = [l.split()[1] for l in f if l.startswith('VmHWM:')][0]\n"
        f"    open({str(peak_file)!r}, 'w').write(kib)\n"
        "atexit.register(peak)\n"
        "sys.argv = ['contribkit', *sys.argv[1:]]\n"
        "runpy.run_module('contribkit', run_name='__main__')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", measured, "repro", "3", "--github-url", fake_github.url],
        cwd=fork_repo,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    assert "over 20 MB once inflated for issue #3" in one_error(proc.stderr)
    peak_mb = int(peak_file.read_text()) / 1024  # KiB
    assert 10 < peak_mb < 256, peak_mb  # read, and far below the bomb


# -- pagination links -----------------------------------------------------------------------------
@pytest.fixture
def other_host() -> Iterator[FakeGitHub]:
    server = FakeGitHub().start()
    yield server
    server.stop()


def comments_page(fake: FakeGitHub, number: int, link: str) -> None:
    fake.add_issue(REPO, number, comments=[f"c{i}" for i in range(150)])
    page = [fake._comment(REPO, number, i, f"c{i}") for i in range(1, 101)]
    fake.reply_raw(
        rf"/issues/{number}/comments$", json.dumps(page).encode(), headers={"Link": link}
    )


@pytest.mark.parametrize(
    "where",
    [
        "http://localhost:{other}",  # another host (the same machine, by another name)
        "http://127.0.0.1:{other}",  # the same host, another port
        "https://127.0.0.1:{port}",  # the same host and port, another scheme
    ],
)
def test_a_comments_link_off_the_api_origin_is_refused_not_followed(
    fake_github: FakeGitHub, other_host: FakeGitHub, where: str
) -> None:
    other_port = other_host.url.rsplit(":", 1)[1]
    port = fake_github.url.rsplit(":", 1)[1]
    base = where.format(other=other_port, port=port)
    other_host.add_issue(REPO, 4, comments=["planted"] * 150)
    comments_page(
        fake_github, 4, f'<{base}/repos/{REPO}/issues/4/comments?per_page=100&page=2>; rel="next"'
    )
    with pytest.raises(BadReply, match=r"comments page link to another origin") as info:
        fetch_issue(settings(fake_github), REPO, 4, anon(fake_github))
    assert "for issue #4 in pytorch/pytorch" in info.value.message
    assert other_host.requests == []  # never followed
    assert len(fake_github.requests_to(f"/repos/{REPO}/issues/4/comments")) == 1


def test_a_comments_link_on_the_origin_is_followed(fake_github: FakeGitHub) -> None:
    fake_github.add_issue(REPO, 5, comments=[f"c{i}" for i in range(250)])
    fetched = fetch_issue(settings(fake_github), REPO, 5, anon(fake_github))
    assert [c.body for c in fetched.issue.comments] == [f"c{i}" for i in range(250)]
    assert len(fake_github.requests_to(f"/repos/{REPO}/issues/5/comments")) == 3


def test_a_comments_link_that_loops_stops(fake_github: FakeGitHub) -> None:
    """A next link back to the first page: the pages MAX_COMMENTS needs, then it stops."""
    comments_page(
        fake_github, 6, f'<{fake_github.url}/repos/{REPO}/issues/6/comments?page=1>; rel="next"'
    )
    fetched = fetch_issue(settings(fake_github), REPO, 6, anon(fake_github))
    assert len(fetched.issue.comments) == 500
    assert len(fake_github.requests_to(f"/repos/{REPO}/issues/6/comments")) == 5


def test_a_foreign_link_exits_2_from_the_cli(
    run_cli: RunCli, fake_github: FakeGitHub, fork_repo: Path
) -> None:
    comments_page(fake_github, 7, '<https://evil.example/steal?page=2>; rel="next"')
    proc = run_cli("repro", "7", "--github-url", fake_github.url, cwd=fork_repo)
    assert proc.returncode == 2, proc.stderr
    assert "link to another origin or path (https://evil.example/steal?page=2)" in one_error(
        proc.stderr
    )
    assert not (fork_repo / "repros" / "issue-7").exists()


# -- issue numbers --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "0",
        "#0",
        "-1",
        "true",
        "1e3",
        str(10**40),
        str(MAX_ISSUE_NUMBER + 1),
        "pytorch/pytorch#0",
        "https://github.com/pytorch/pytorch/issues/0",
        f"https://github.com/pytorch/pytorch/issues/{10**40}",
        "\u0661\u0662",  # Arabic-Indic digits: digits to str.isdigit, no issue number
    ],
)
def test_numbers_github_cannot_have_exit_2_before_any_request(
    run_cli: RunCli, fake_github: FakeGitHub, fork_repo: Path, text: str
) -> None:
    with pytest.raises(BadInput, match="is not an issue number"):
        parse_issue_ref(text)
    proc = run_cli("repro", "--github-url", fake_github.url, "--", text, cwd=fork_repo)
    assert proc.returncode == 2, proc.stderr
    assert "is not an issue number" in one_error(proc.stderr)
    assert fake_github.requests == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", (None, 1)),
        ("#42", (None, 42)),
        ("me/fork#7", ("me/fork", 7)),
        (str(MAX_ISSUE_NUMBER), (None, MAX_ISSUE_NUMBER)),
        ("https://github.com/pytorch/pytorch/issues/170398", (REPO, 170398)),
    ],
)
def test_the_forms_of_an_issue_reference(text: str, expected: tuple[str | None, int]) -> None:
    assert parse_issue_ref(text) == expected


@pytest.mark.parametrize("number", ["0", "-3", "true", str(10**40), '"12x"'])
def test_a_saved_issue_with_no_issue_number_is_refused(
    run_cli: RunCli, tmp_path: Path, number: str
) -> None:
    saved = tmp_path / "issue.json"
    saved.write_text('{"title": "t", "body": "x", "number": ' + number + "}")
    with pytest.raises(BadInput, match="'number' must be an issue number"):
        load_issue_file(str(saved))
    proc = run_cli("repro", "--from-file", str(saved), "-o", "out", cwd=tmp_path)
    assert proc.returncode == 2 and "must be an issue number" in one_error(proc.stderr)
    assert not (tmp_path / "out").exists()


def test_fetch_refuses_a_number_before_any_request(fake_github: FakeGitHub) -> None:
    """What reaches fetch_issue from elsewhere (a branch name, a commit's "Fixes #0")."""
    for number in (0, -5, 10**40, True):
        with pytest.raises(BadInput, match="is not an issue number"):
            fetch_issue(settings(fake_github), REPO, number, anon(fake_github))
    assert fake_github.requests == []


def test_pr_issue_option_has_the_same_bound(run_cli: RunCli, fork_repo: Path) -> None:
    proc = run_cli("pr", "--issue", str(MAX_ISSUE_NUMBER + 1), cwd=fork_repo)
    assert proc.returncode == 2 and "--issue" in proc.stderr and "Traceback" not in proc.stderr


# -- a reply for another issue --------------------------------------------------------------------
@pytest.mark.parametrize("sent", [8, None])
def test_a_reply_for_another_issue_is_refused(
    run_cli: RunCli, fake_github: FakeGitHub, fork_repo: Path, sent: int | None
) -> None:
    other = fake_github.add_issue(REPO, 8, title="Another issue")
    if sent is None:
        del other["number"]
    fake_github.reply_raw(r"/issues/9$", json.dumps(other).encode())
    shown = "names no issue number" if sent is None else "is issue #8"
    with pytest.raises(BadReply, match=f"reply for issue #9 in pytorch/pytorch {shown}"):
        fetch_issue(settings(fake_github), REPO, 9, anon(fake_github))
    proc = run_cli("repro", "9", "--github-url", fake_github.url, cwd=fork_repo)
    assert proc.returncode == 2 and shown in one_error(proc.stderr)
    assert not (fork_repo / "repros" / "issue-9").exists()
    assert not (fork_repo / "repros" / "issue-8").exists()


@pytest.mark.parametrize(
    "listed", ["0\n", "#0\n", f"{10**40}\n", "pytorch/pytorch#0\n", "[0]", f"[{10**40}]", "[true]"]
)
def test_triage_issue_lists_have_the_same_bound(tmp_path: Path, listed: str) -> None:
    from contribkit.triage.sources import read_issue_list

    source = tmp_path / "issues.txt"
    source.write_text(listed)
    with pytest.raises(BadInput, match="is not an issue"):
        read_issue_list(str(source))
    source.write_text("[7]" if listed.startswith("[") else "#7\n")
    assert read_issue_list(str(source)) == [7]
