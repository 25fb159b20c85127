"""`contribkit submit`: the gate on real run records in a real fork, a stand-in `gh` on PATH,
and PR creation through PyGithub against the loopback GitHub server."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from contribkit.target.reprolib import VERDICT_PREFIX
from tests.conftest import Ck, git
from tests.fakegithub import FakeGitHub
from tests.runhelpers import write

# Every test makes a real run record first (a CLI run in a subprocess): seconds each.
pytestmark = pytest.mark.slow

BRANCH = "fix/issue-4242-clamp-sign"
FIXED_REPRO = f"print('{VERDICT_PREFIX} NOT_REPRODUCED clamp keeps the sign')\n"
BUGGY_REPRO = f"import sys\nprint('{VERDICT_PREFIX} REPRODUCED clamp lost the sign')\nsys.exit(1)\n"
TOKEN = "ghp_contributor_token"


@pytest.fixture
def gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in `gh` first on PATH: logs its argv (and the body file) as JSON lines.

    `gh auth status` exits $GH_AUTH_RC (default 0); `gh pr create` prints a PR URL, or $GH_FAIL
    on stderr with exit $GH_FAIL_RC.
    """
    bindir = tmp_path / "ghbin"
    bindir.mkdir()
    log = tmp_path / "gh-calls.jsonl"
    script = bindir / "gh"
    script.write_text(
        textwrap.dedent(f"""\
            #!{sys.executable}
            import json, os, sys
            args = sys.argv[1:]
            entry = {{"argv": args}}
            if "--body-file" in args:
                entry["body"] = open(args[args.index("--body-file") + 1]).read()
            with open({str(log)!r}, "a") as fh:
                fh.write(json.dumps(entry) + "\\n")
            if args[:2] == ["auth", "status"]:
                sys.exit(int(os.environ.get("GH_AUTH_RC", "0")))
            if args[:2] == ["pr", "create"]:
                if os.environ.get("GH_FAIL"):
                    print(os.environ["GH_FAIL"], file=sys.stderr)
                    sys.exit(int(os.environ.get("GH_FAIL_RC", "1")))
                print("https://github.com/pytorch/pytorch/pull/170999")
                sys.exit(0)
            sys.exit(1)
        """)
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return log


def gh_calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


TEST_FILE = (
    '# Owner(s): ["module: nn"]\nimport math\n\n\n'
    "def test_relu_keeps_sign():\n    assert math.copysign(1.0, -0.0) == -1.0\n"
)


def commit_fix(root: Path, text: str = "def relu(x):\n    return x.clamp(min=0)\n") -> None:
    write(root, "torch/nn/functional.py", text)
    write(root, "test/test_nn.py", TEST_FILE)
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", "Fix clamp losing the sign of -0.0\n\nKeep the sign bit.", cwd=root)


@pytest.fixture
def green(ck: Ck, fork_repo: Path) -> Path:
    """A fix branch with a green run record for HEAD, pushed (its remote-tracking ref is HEAD)."""
    git("switch", "-q", "-c", BRANCH, cwd=fork_repo)
    commit_fix(fork_repo)
    write(fork_repo, "repros/issue-4242/repro.py", FIXED_REPRO)
    proc = ck("run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    git("update-ref", f"refs/remotes/origin/{BRANCH}", "HEAD", cwd=fork_repo)
    return fork_repo


def refused(proc: Any, code: int, needle: str) -> None:
    assert proc.returncode == code, proc.stdout + proc.stderr
    first = next(line for line in proc.stderr.splitlines() if "warning:" not in line)
    assert first.startswith("contribkit: error: ") and needle in first, proc.stderr
    assert "Traceback" not in proc.stderr


# -- the gate ---------------------------------------------------------------------------------
def test_dry_run_passes_the_gate_and_prints_the_gh_command(ck: Ck, green: Path, gh: Path) -> None:
    proc = ck("submit", "--dry-run", "--draft", "--label", "module: nn", "--reviewer", "albanD")
    assert proc.returncode == 0, proc.stderr
    head = git("rev-parse", "--short=7", "HEAD", cwd=green)
    out = proc.stdout
    assert out.startswith("gate: ok: .contribkit/runs/") and f"is for {head} on a clean tree" in out
    assert f"push: not needed (origin/{BRANCH} is at {head})" in out
    expected = (
        f"would run: {gh.parent / 'ghbin/gh'} pr create --repo pytorch/pytorch "
        f"--title '[nn] Fix clamp losing the sign of -0.0' --body-file {green}/.contribkit/pr-body-{head}.md "
        f"--base main --head contributor:{BRANCH} --draft --label 'module: nn' --reviewer albanD"
    )
    assert expected in out
    body = out.split(f"--- body (.contribkit/pr-body-{head}.md) ---\n", 1)[1]
    # contribkit pr's body: the issue, the commit's prose, the new test by name, the matrix
    assert body.startswith("Fixes #4242\n\nKeep the sign bit.\n\n## Test plan\n")
    assert "python test/test_nn.py -k test_relu_keeps_sign\n" in body
    assert "| repros/issue-4242/repro.py | NOT_REPRODUCED | NOT_AVAILABLE no CUDA device |" in body
    assert "<!-- contribkit:" not in body
    # the label's bot command is a next step, never in the body (the landed commit message)
    assert "pytorchbot" not in body
    assert '\nthen: comment on the PR: @pytorchbot label "release notes: nn"\n--- body' in out
    # the issue is neither cached nor in a repro folder: the body goes without its cc line
    assert "contribkit: warning: PR body: issue #4242 is not cached" in proc.stderr
    # Nothing was created, pushed or written: gh was only asked whether it is logged in.
    assert [c["argv"][:2] for c in gh_calls(gh)] == [["auth", "status"]]
    assert not (green / f".contribkit/pr-body-{head}.md").exists()

    as_json = json.loads(ck("submit", "--dry-run", "--json").stdout)
    assert as_json["dry_run"] and not as_json["created"] and as_json["method"] == "gh"
    assert as_json["command"][1:4] == ["pr", "create", "--repo"]
    assert as_json["pull_request"]["head"] == f"contributor:{BRANCH}"
    assert as_json["comments"] == ['@pytorchbot label "release notes: nn"']


def test_gate_refuses_a_stale_record(ck: Ck, green: Path, gh: Path) -> None:
    recorded = git("rev-parse", "--short=7", "HEAD", cwd=green)
    commit_fix(green, "def relu(x):\n    return x.clamp(min=0.0)\n")
    now = git("rev-parse", "--short=7", "HEAD", cwd=green)
    refused(
        ck("submit", "--dry-run"),
        1,
        f"the record is for {recorded}; HEAD is {now}: run `contribkit run`",
    )


def test_gate_refuses_a_dirty_tree(ck: Ck, green: Path, gh: Path) -> None:
    write(green, "torch/nn/functional.py", "def relu(x):\n    return x\n")
    refused(
        ck("submit", "--dry-run"),
        1,
        "the tree has uncommitted changes (torch/nn/functional.py): commit or stash them",
    )
    git("add", "-A", cwd=green)  # staged is still not committed
    refused(ck("submit", "--dry-run"), 1, "the tree has uncommitted changes")


def test_gate_refuses_a_record_made_on_a_dirty_tree(ck: Ck, green: Path, gh: Path) -> None:
    write(green, "test/notes.txt", "scratch\n")
    assert ck("run").returncode == 0
    (green / "test/notes.txt").unlink()
    refused(ck("submit", "--dry-run"), 1, "the record was made with uncommitted changes")


def test_gate_refuses_red_confirming_and_edited_records(ck: Ck, green: Path, gh: Path) -> None:
    repro = green / "repros/issue-4242/repro.py"
    repro.write_text(FIXED_REPRO.replace("the sign", "the sign!"))  # excluded from git, yet tracked
    refused(ck("submit", "--dry-run"), 1, "repros/issue-4242/repro.py changed since the record")

    repro.write_text(BUGGY_REPRO)
    assert ck("run").returncode == 1
    refused(
        ck("submit", "--dry-run"),
        1,
        "the record is not green: repros/issue-4242/repro.py on cpu is REPRODUCED",
    )
    assert ck("run", "--expect", "reproduced").returncode == 0
    refused(
        ck("submit", "--dry-run"), 1, "the latest record confirms the bug (--expect reproduced)"
    )


def test_gate_refuses_a_record_that_misses_the_branchs_work(ck: Ck, green: Path, gh: Path) -> None:
    write(green, "repros/other/repro.py", FIXED_REPRO)
    assert ck("run", "repros/other").returncode == 0  # green, but about something else
    refused(
        ck("submit", "--dry-run"),
        1,
        "the record does not cover repros/issue-4242/repro.py, test/test_nn.py: "
        "run `contribkit run repros/issue-4242 test/test_nn.py`",
    )
    assert ck("run", "repros/issue-4242", "repros/other").returncode == 0
    proc = ck("submit", "--dry-run")
    refused(
        proc,
        1,
        "the record does not cover test/test_nn.py: "
        "run `contribkit run repros/issue-4242 test/test_nn.py`",
    )
    assert "hint: the gate needs the repro of the branch's issue and every test file" in proc.stderr
    assert ck("run", "repros/issue-4242", "test/test_nn.py", "repros/other").returncode == 0
    assert ck("submit", "--dry-run").returncode == 0


def test_gate_refuses_a_record_filtered_with_k(ck: Ck, green: Path, gh: Path) -> None:
    """`run -k` ran only some tests: good for iterating, not evidence for a PR."""
    assert ck("run", "-k", "relu").returncode == 0
    refused(
        ck("submit", "--dry-run"),
        1,
        "the record ran only the tests matching -k 'relu': run `contribkit run` without -k",
    )
    assert ck("run").returncode == 0
    assert ck("submit", "--dry-run").returncode == 0


def test_gate_checks_the_body_with_the_pr_rules(
    ck: Ck, green: Path, gh: Path, tmp_path: Path
) -> None:
    drafted = tmp_path / "body.md"
    proc = ck("pr", "--offline", "-o", str(drafted))
    assert proc.returncode == 0, proc.stderr
    edited = drafted.read_text().replace("Keep the sign bit.", "<!-- contribkit: say why -->")
    drafted.write_text(edited)
    refusal = ck("submit", "--dry-run", "--body-file", str(drafted))
    refused_lines = [line for line in refusal.stderr.splitlines() if "CKP" in line]
    assert refused_lines == [f"{drafted}:3: error CKP03 placeholder-left: say why"], refusal.stderr
    assert "contribkit: error: the PR title or body breaks 1 PR rule (above)" in refusal.stderr
    assert refusal.returncode == 1
    as_json = json.loads(ck("submit", "--dry-run", "--json", "--body-file", str(drafted)).stdout)
    assert [v["id"] for v in as_json["body_violations"]] == ["CKP03"]
    # a title in poor style is advice (the commit-msg hook's title rules): not refused ...
    bad_title = ck("submit", "--dry-run", "--title", "Fixed the clamp.")
    assert bad_title.returncode == 0, bad_title.stderr
    # ... unless hooks.strict, which refuses it
    (green / ".contribkit.toml").write_text("[hooks]\nstrict = true\n")
    bad_title = ck("submit", "--dry-run", "--title", "Fixed the clamp.")
    assert "title: error CKP06 pr-title-style: title ends with a period" in bad_title.stderr
    assert bad_title.returncode == 1
    # a rule switched off in hooks.disable does not refuse
    (green / ".contribkit.toml").write_text('[hooks]\ndisable = ["placeholder-left"]\n')
    assert (
        ck("config", "--trust").returncode == 0
    )  # a repository's file may switch rules off once trusted
    proc = ck("submit", "--body-file", str(drafted))
    assert proc.returncode == 0, proc.stderr
    assert gh_calls(gh)[-1]["body"] == edited


def test_body_file_must_exist(ck: Ck, green: Path, gh: Path) -> None:
    refused(ck("submit", "--dry-run", "--body-file", "nope.md"), 2, "nope.md: no such file")


def test_bad_input_before_the_gate(ck: Ck, fork_repo: Path, gh: Path) -> None:
    refused(ck("submit", "--dry-run"), 2, "you are on 'main', the base branch")
    git("switch", "-q", "-c", BRANCH, cwd=fork_repo)
    refused(
        ck("submit", "--dry-run"),
        1,
        "no run record in .contribkit/runs: run `contribkit run` first",
    )
    git("remote", "remove", "upstream", cwd=fork_repo)
    refused(
        ck("submit", "--dry-run"), 2, "no remote named 'upstream' to open the pull request against"
    )
    git("checkout", "-q", "--detach", cwd=fork_repo)
    refused(ck("submit", "--dry-run"), 2, "HEAD is detached")


# -- creating the PR --------------------------------------------------------------------------
def test_gh_pr_create_gets_the_body_file(ck: Ck, green: Path, gh: Path) -> None:
    proc = ck("submit", "--draft", "-l", "module: nn,triaged", "-r", "albanD", "--base", "main")
    assert proc.returncode == 0, proc.stderr
    assert "opened https://github.com/pytorch/pytorch/pull/170999" in proc.stdout
    assert 'next: comment on the PR: @pytorchbot label "release notes: nn"\n' in proc.stdout
    assert (
        green / f".contribkit/pr-body-{git('rev-parse', '--short=7', 'HEAD', cwd=green)}.md"
    ).is_file()
    create = gh_calls(gh)[-1]
    argv = create["argv"]
    assert argv[:4] == ["pr", "create", "--repo", "pytorch/pytorch"]
    assert argv[argv.index("--head") + 1] == f"contributor:{BRANCH}"
    assert argv.count("--label") == 2 and "triaged" in argv and "--draft" in argv
    assert create["body"].startswith("Fixes #4242\n")
    again = json.loads(ck("submit", "--json").stdout)
    assert again["created"] and again["number"] == 170999 and again["method"] == "gh"


def test_gh_failure_is_passed_through(ck: Ck, green: Path, gh: Path) -> None:
    message = f'a pull request for branch "contributor:{BRANCH}" into branch "main" already exists:'
    proc = ck("submit", env={"GH_FAIL": message})
    refused(proc, 1, f"gh pr create failed: {message}")
    assert "hint: the body is saved in .contribkit/pr-body-" in proc.stderr
    refused(
        ck("submit", env={"GH_FAIL": "HTTP 401: Bad credentials", "GH_FAIL_RC": "4"}),
        4,
        "Bad credentials",
    )


def test_unpushed_branch_is_never_pushed_without_asking(
    ck: Ck, green: Path, gh: Path, tmp_path: Path
) -> None:
    bare = tmp_path / "fork.git"
    git("update-ref", "-d", f"refs/remotes/origin/{BRANCH}", cwd=green)
    git("remote", "set-url", "--push", "origin", str(bare), cwd=green)
    failed = ck("submit", "--push")  # the fork does not exist yet: git's own message comes back
    refused(failed, 1, "git push failed: ")
    assert "does not appear to be a git repository" in failed.stderr
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    dry = ck("submit", "--dry-run", "--push")
    assert f"would push: git push --set-upstream origin {BRANCH}" in dry.stdout
    refused(ck("submit"), 1, f"the branch is not pushed ({BRANCH} is not on origin)")
    assert git("branch", "--list", cwd=bare) == ""  # nothing was pushed
    assert all(c["argv"][:2] != ["pr", "create"] for c in gh_calls(gh))

    proc = ck("submit", "--push")
    assert proc.returncode == 0, proc.stderr
    assert git("rev-parse", BRANCH, cwd=bare) == git("rev-parse", "HEAD", cwd=green)
    assert gh_calls(gh)[-1]["argv"][:2] == ["pr", "create"]


def _drain(fd: int, into: bytearray) -> threading.Thread:
    """Read a pty's master end until every slave end is closed."""

    def read() -> None:
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the slave ends are closed
                return
            if not chunk:
                return
            into.extend(chunk)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_push_prompt_goes_to_stderr_so_json_stays_clean(
    green: Path, gh: Path, tmp_path: Path, shared_cache: str
) -> None:
    bare = tmp_path / "fork.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    git("update-ref", "-d", f"refs/remotes/origin/{BRANCH}", cwd=green)
    git("remote", "set-url", "--push", "origin", str(bare), cwd=green)
    terminal, terminal_end = os.openpty()  # stdin and stderr: where a person answers
    stdout, stdout_end = os.openpty()  # a terminal too: the prompt must still not go there
    proc = subprocess.Popen(
        [sys.executable, "-m", "contribkit", "submit", "--json"],
        cwd=green,
        env={**os.environ, "CONTRIBKIT_CACHE_DIR": shared_cache},
        stdin=terminal_end,
        stdout=stdout_end,
        stderr=terminal_end,
    )
    os.close(terminal_end)
    os.close(stdout_end)
    seen, printed = bytearray(), bytearray()
    readers = [_drain(terminal, seen), _drain(stdout, printed)]
    os.write(terminal, b"maybe\ny\n")  # a first answer that is asked again
    try:
        assert proc.wait(timeout=120) == 0, seen.decode()
    finally:
        if proc.poll() is None:
            proc.kill()
        for reader in readers:
            reader.join(timeout=10)
        os.close(terminal)
        os.close(stdout)
    assert f"{BRANCH} is not on origin. Push it (git push --set-upstream origin".encode() in seen
    assert b"Error: invalid input" in seen
    result = json.loads(printed.decode().replace("\r\n", "\n"))
    assert result["created"] and result["push"]["branch"] == BRANCH
    assert git("rev-parse", BRANCH, cwd=bare) == git("rev-parse", "HEAD", cwd=green)


def test_pygithub_creates_the_pr_when_gh_is_not_logged_in(
    ck: Ck, green: Path, gh: Path, fake_github: FakeGitHub
) -> None:
    fake_github.valid_tokens.add(TOKEN)
    # The loopback host counts as an Enterprise host, whose token variable gh names so.
    env = {
        "GH_AUTH_RC": "1",
        "GH_ENTERPRISE_TOKEN": TOKEN,
        "CONTRIBKIT_GITHUB_URL": fake_github.url,
    }
    dry = ck("submit", "--dry-run", "--label", "module: nn", env=env)
    assert f"would send: POST {fake_github.url}/repos/pytorch/pytorch/pulls" in dry.stdout
    assert not fake_github.pulls and TOKEN not in dry.stdout

    proc = ck(
        "submit", "--draft", "--label", "module: nn", "--reviewer", "albanD", "--json", env=env
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["created"] and result["method"] == "api"
    assert (
        result["url"] == "https://github.com/pytorch/pytorch/pull/5001" and result["number"] == 5001
    )
    (pull,) = fake_github.pulls
    assert pull["head"]["label"] == f"contributor:{BRANCH}" and pull["base"]["ref"] == "main"
    assert pull["draft"] and pull["title"] == "[nn] Fix clamp losing the sign of -0.0"
    assert pull["body"].startswith("Fixes #4242\n")
    assert [label["name"] for label in pull["labels"]] == ["module: nn"]
    assert [r["login"] for r in pull["requested_reviewers"]] == ["albanD"]
    (create,) = [r for r in fake_github.requests if r.path == "/repos/pytorch/pytorch/pulls"]
    assert create.headers["Authorization"] == f"token {TOKEN}"
    assert TOKEN not in proc.stdout + proc.stderr


def test_api_errors_are_one_line(ck: Ck, green: Path, gh: Path, fake_github: FakeGitHub) -> None:
    env = {"GH_AUTH_RC": "1", "CONTRIBKIT_GITHUB_URL": fake_github.url}
    no_token = ck("submit", env=env)
    refused(no_token, 4, "opening a pull request needs a GitHub token")
    assert "export GH_ENTERPRISE_TOKEN" in no_token.stderr
    refused(
        ck("submit", env={**env, "GH_ENTERPRISE_TOKEN": "ghp_wrong"}),
        4,
        "GitHub rejected the token from GH_ENTERPRISE_TOKEN (Bad credentials)",
    )
    fake_github.valid_tokens.add(TOKEN)
    fake_github.fail(r"/pulls$", 422, "Validation Failed")
    refused(
        ck("submit", env={**env, "GH_ENTERPRISE_TOKEN": TOKEN}),
        1,
        "GitHub API error 422: Validation Failed",
    )
    assert not fake_github.pulls


def test_a_ghstack_branch_passes_the_gate_then_is_left_to_ghstack(
    ck: Ck, fork_repo: Path, gh: Path
) -> None:
    git("switch", "-q", "-c", "gh/alice/3/head", cwd=fork_repo)
    commit_fix(fork_repo)
    write(fork_repo, "test/test_relu_clamp.py", "def test_clamp():\n    assert True\n")
    git("add", "-A", cwd=fork_repo)
    git("commit", "-qm", "Test relu's clamp", cwd=fork_repo)
    refused(ck("submit", "--dry-run"), 1, "no run record")  # the same gate first
    assert ck("run").returncode == 0
    proc = ck("submit", "--dry-run")
    refused(proc, 2, "gh/alice/3/head is a ghstack branch")
    assert "hint: the run record is green and current: run `ghstack`" in proc.stderr
    body = json.loads(ck("pr", "--offline", "--json").stdout)
    assert any("run `ghstack`" in line for line in body["instructions"])


def test_the_body_hint_followed_literally_leads_to_a_submit(ck: Ck, green: Path, gh: Path) -> None:
    """A body that breaks a rule (a commit without prose leaves the why as a placeholder):
    the hint's `pr -o FILE --force` writes where git does not look, the user fixes it there,
    and the hint's `submit --body-file FILE` passes the gate (the tree is still clean)."""
    git("commit", "-q", "--amend", "-m", "Fix clamp losing the sign of -0.0", cwd=green)
    assert ck("run").returncode == 0
    git("update-ref", f"refs/remotes/origin/{BRANCH}", "HEAD", cwd=green)
    refusal = ck("submit", "--dry-run")
    assert refusal.returncode == 1 and "CKP03" in refusal.stderr, refusal.stderr
    hint = next(line for line in refusal.stderr.splitlines() if line.startswith("hint: contribkit"))
    write_body, _, send = hint[len("hint: ") :].partition(", fix it there, then: ")
    written = ck(*shlex.split(write_body)[1:])
    assert written.returncode == 0, written.stderr
    body_file = green / shlex.split(send)[-1]
    placeholder = re.compile(r"<!-- contribkit:.*?-->", re.S)
    body_file.write_text(placeholder.sub("Keep the sign bit.", body_file.read_text()))
    assert git("status", "--porcelain", cwd=green) == ""
    sent = ck(*shlex.split(send)[1:], "--dry-run")
    assert sent.returncode == 0, sent.stderr
