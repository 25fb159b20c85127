"""`contribkit pr`: titles and bodies from a real fork (real git, real run records, the loopback
GitHub), the fork's PR template, placeholders, --template, and `pr --check` from the command line.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest

from contribkit.core.trust import trust
from contribkit.git import facts as gitfacts
from contribkit.git.cmd import ensure_excluded
from contribkit.git.facts import Commit
from contribkit.pr.draft import LABEL_INSTRUCTION, commit_text, environment_lines
from contribkit.pr.gather import IssueFacts
from contribkit.pr.title import Title, make_title
from contribkit.run.record import (
    Cell,
    Interpreter,
    RunRecord,
    new_record_id,
    write_record,
)
from contribkit.run.record import TestCounts as Counts
from tests.conftest import commit_files, git, make_fork
from tests.fakegithub import FakeGitHub

GOLDEN = Path(__file__).parent.parent / "golden"
BRANCH = "fix/issue-4242-relu-sign"
FIX_MESSAGE = """\
Keep the sign of negative zero in relu

relu called clamp(min=0), which returns +0.0 for -0.0; relu must return
its input unchanged where it is not negative.

Root cause: clamp compares with >=, so -0.0 was replaced by the bound.

Solution: return the input where it is zero, and the bound elsewhere.

Fixes #4242

Signed-off-by: Test Contributor <contributor@example.com>
"""
TESTS = """\
# Owner(s): ["module: nn"]


def test_relu_keeps_negative_zero():
    pass


def test_relu_positive():
    pass
"""
ISSUE_BODY = "relu(-0.0) returns +0.0.\n\n```python\nimport torch\n```\n\ncc @albanD @mruberry\n"

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def fork(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fork on a fix branch with one commit (code and tests), with fixed dates: stable SHAs."""
    for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(name, "2026-01-02T03:04:05+00:00")
    root = make_fork(tmp_path / "pytorch")
    monkeypatch.chdir(root)
    git("update-ref", "refs/remotes/upstream/main", "HEAD", cwd=root)
    git("switch", "-q", "-c", BRANCH, cwd=root)
    (root / "torch/nn/functional.py").write_text(
        "def relu(x):\n    return x.where(x == 0, x.clamp(min=0))\n"
    )
    (root / "test/test_nn.py").write_text(TESTS)
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", FIX_MESSAGE, cwd=root)
    return root


def _record(
    head: str, day: int, cells: list[Cell], expect: str = "not-reproduced", diff_hash: str = ""
) -> RunRecord:
    return RunRecord(
        id=new_record_id(head, datetime(2026, 1, day, 3, 4, 5, tzinfo=timezone.utc)),
        created=f"2026-01-0{day}T03:04:05+00:00",
        head=head,
        branch=BRANCH,
        dirty=False,
        diff_hash=diff_hash,
        expect=expect,
        devices=["cpu", "cuda"],
        require=[],
        interpreters=[
            Interpreter(
                1,
                "/venv/bin/python",
                python_version="3.11.7",
                torch_version="2.13.0+cpu",
                git_version="cf30153c4c13f2a1b0d9",
            )
        ],
        cells=cells,
        files={},
        ok=True,
        reason="all required cells are green",
    )


def repro_cell(status: str, detail: str, device: str = "cpu") -> Cell:
    return Cell("repros/issue-4242/repro.py", "repro", device, 1, status, detail=detail)


def write_records(root: Path) -> None:
    """The repro REPRODUCED at the merge-base; after the fix, the matrix of a CPU-only machine."""
    ensure_excluded(root)  # as `contribkit run` does: records leave the tree clean
    base = git("rev-parse", "HEAD~1", cwd=root)
    head = git("rev-parse", "HEAD", cwd=root)
    clean = gitfacts.tree_state(root).diff_hash
    write_record(
        root,
        _record(
            base,
            2,
            [repro_cell("REPRODUCED", "AssertionError: relu(-0.0) is +0.0")],
            "reproduced",
            clean,
        ),
    )
    write_record(
        root,
        _record(
            head,
            3,
            [
                repro_cell("NOT_REPRODUCED", "check passed on cpu"),
                repro_cell("NOT_AVAILABLE", "no CUDA device", "cuda"),
                Cell(
                    "test/test_nn.py",
                    "pytest",
                    "cpu",
                    1,
                    "PASS",
                    counts=Counts(total=2, passed=2),
                ),
            ],
            diff_hash=clean,
        ),
    )


def pr_cli(run_cli: Run, root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli("pr", *args, cwd=root, env=env)


def check_golden(name: str, text: str) -> None:
    """Compare with tests/golden/NAME; UPDATE_GOLDEN=1 rewrites it instead."""
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert text == path.read_text(), f"differs from {path} (UPDATE_GOLDEN=1 updates)"


# -- the body ----------------------------------------------------------------------------------
def test_body_from_a_fork_with_a_run_record(
    run_cli: Run, fork: Path, fake_github: FakeGitHub
) -> None:
    fake_github.add_issue(
        "pytorch/pytorch",
        4242,
        title="relu drops the sign of -0.0",
        body=ISSUE_BODY,
        labels=["module: nn", "triaged"],
    )
    write_records(fork)
    fake_github.valid_tokens.add("ghp_test")
    online = {"CONTRIBKIT_GITHUB_URL": fake_github.url, "GH_ENTERPRISE_TOKEN": "ghp_test"}
    proc = pr_cli(run_cli, fork, **online)
    assert proc.returncode == 0, proc.stderr
    check_golden("pr_body_relu.md", proc.stdout)
    assert proc.stderr.splitlines() == [
        "title: [nn] Keep the sign of negative zero in relu",
        "label: release notes: nn (`torch/nn/functional.py` matches `torch/nn/**` in the "
        "bundled table)",
        '  comment on the PR: @pytorchbot label "release notes: nn"',
        "placeholders left: none",
    ]
    as_json = json.loads(pr_cli(run_cli, fork, "--json", **online).stdout)
    assert as_json["title"] == "[nn] Keep the sign of negative zero in relu"
    assert as_json["body"] == proc.stdout
    assert as_json["labels"] == ["release notes: nn"] and as_json["placeholders"] == []
    # the label's comment is printed and in --json, never in the body (the landed commit message)
    assert as_json["comments"] == ['@pytorchbot label "release notes: nn"']
    assert as_json["instructions"] == [] and "pytorchbot" not in proc.stdout
    # PyTorch's template, as written: its checklist is "[ ] …" lines, under no new heading
    template = (fork / ".github/PULL_REQUEST_TEMPLATE.md").read_text().splitlines()
    assert proc.stdout.startswith("Fixes #4242\n")
    assert "\n" + "\n".join(template[2:]) + "\n\ncc @albanD" in proc.stdout
    assert as_json["issue"]["cc"] == "cc @albanD @mruberry"
    assert as_json["issue"]["source"] in ("github", "cache (not modified)")
    assert as_json["record_path"].startswith(".contribkit/runs/20260103T030405")
    # the body it wrote passes its own check
    body = fork / "body.md"
    body.write_text(proc.stdout)
    check = pr_cli(run_cli, fork, "--check", str(body), "--title", as_json["title"])
    assert (check.returncode, check.stdout) == (0, f"ok: {body} follows the PR rules\n")


def test_no_performance_section_without_a_bench_record(run_cli: Run, fork: Path) -> None:
    write_records(fork)
    plain = pr_cli(run_cli, fork, "--offline")
    assert plain.returncode == 0, plain.stderr
    assert "Performance" not in plain.stdout
    bench = fork / ".contribkit/bench"
    bench.mkdir(parents=True)
    record = {
        "schema": 1,
        "head": git("rev-parse", "HEAD", cwd=fork),
        "baseline": "upstream/main",
        "command": "python benchmarks/relu.py",
        "device": "cpu",
        "unit": "us",
        "results": [{"name": "relu 1e6", "baseline": 100.0, "candidate": 80.0}],
    }
    stale = {**record, "head": git("rev-parse", "HEAD~1", cwd=fork)}
    (bench / "0-stale.json").write_text(json.dumps(stale))
    assert "Performance" not in pr_cli(run_cli, fork, "--offline").stdout
    (bench / "1-broken.json").write_text('{"schema": 1}')
    (bench / "2-head.json").write_text(json.dumps(record))
    proc = pr_cli(run_cli, fork, "--offline")
    assert (
        "## Performance\n\n`python benchmarks/relu.py` on cpu, against upstream/main:\n\n"
        "| benchmark | baseline (us) | this PR (us) | change |\n|---|---|---|---|\n"
        "| relu 1e6 | 100 | 80 | -20.0% |\n"
    ) in proc.stdout
    assert "1-broken.json: not a bench record ('head' is missing or not a string); ignored" in (
        proc.stderr
    )
    body = fork / "body.md"
    body.write_text(proc.stdout)
    # with the record the section is allowed; without it, --check flags it
    assert pr_cli(run_cli, fork, "--check", str(body)).returncode == 0
    (bench / "2-head.json").unlink()
    flagged = pr_cli(run_cli, fork, "--check", str(body))
    assert flagged.returncode == 0  # advice
    assert (
        "warning CKP04 performance-without-bench: 'Performance' section, but no bench record"
        in (flagged.stdout)
    )


def test_the_forks_pr_template_is_honoured(run_cli: Run, fork: Path) -> None:
    template = fork / ".github/PULL_REQUEST_TEMPLATE.md"
    template.write_text(
        "Closes #ISSUE_NUMBER\n\n<!-- describe your change -->  \n\n"
        "### Agent details (AI)\n\n"
        "* [ ] I read the AI policy.\n"
        "- [x] The change has a test.\n"
    )
    git("commit", "-q", "--amend", "--no-edit", "--trailer", "Assisted-by: Copilot", cwd=fork)
    proc = pr_cli(run_cli, fork, "--offline")
    body = proc.stdout
    assert body.startswith("Closes #4242\n")
    # the template's other lines follow the test plan as written, trailing space included; the
    # AI account goes under the template's own AI heading
    sha = git("rev-parse", "--short=7", "HEAD", cwd=fork)
    assert body.endswith(
        "\n<!-- describe your change -->  \n\n### Agent details (AI)\n\n"
        "<!-- contribkit: say what the AI tool did, and what you reviewed, tested and changed "
        "yourself -->\n\n"
        f"AI trailers in the commits: `{sha} Assisted-by: Copilot`.\n\n"
        "* [ ] I read the AI policy.\n- [x] The change has a test.\n"
    )
    assert (
        "## Checklist" not in body and "lintrunner" not in body
    )  # the fork's items, not PyTorch's
    assert body.count("Agent details") == 1
    # a folder of templates: the first by name, with a warning
    template.unlink()
    folder = fork / ".github/PULL_REQUEST_TEMPLATE"
    folder.mkdir()
    (folder / "b.md").write_text("Fixes #ISSUE_NUMBER\n- [ ] B item\n")
    (folder / "a.md").write_text("Resolves #ISSUE_NUMBER\n- [ ] A item\n")
    proc = pr_cli(run_cli, fork, "--offline")
    assert proc.stdout.startswith("Resolves #4242\n") and "- [ ] A item" in proc.stdout
    assert "2 PR templates in .github/PULL_REQUEST_TEMPLATE; kept the lines of a.md" in proc.stderr


def test_what_is_unknown_is_a_listed_placeholder(run_cli: Run, fork: Path) -> None:
    git("switch", "-q", "-c", "docs-tweak", "main", cwd=fork)
    (fork / "docs/source/index.rst").write_text("PyTorch docs\n")
    git("commit", "-qam", "Reword the docs index", cwd=fork)
    proc = pr_cli(run_cli, fork, "--offline", "--json")
    result = json.loads(proc.stdout)
    # no issue: the template's line stays as written, visible; the label is not the body's
    assert result["body"].startswith("Fixes #ISSUE_NUMBER\n")
    assert result["placeholders"] == [
        "the issue number (ISSUE_NUMBER)",
        "describe the change in prose: what was wrong, why, and how this fixes it (no bullet "
        "list of the changes)",
        "name the test that covers this change, e.g. python test/test_nn.py -k test_relu",
        "run `contribkit run` and regenerate, for the device matrix",
    ]
    assert result["labels"] == [] and result["bot_command"] is None
    assert result["comments"] == [] and result["instructions"] == [LABEL_INSTRUCTION]
    assert "label" not in result["body"]
    plain = pr_cli(run_cli, fork, "--offline")
    assert f"\n  {LABEL_INSTRUCTION}\n" in plain.stderr
    assert result["title"] == "Reword the docs index"
    assert "no run record for HEAD" in " ".join(result["warnings"])
    body = fork / "body.md"
    body.write_text(result["body"])
    check = pr_cli(run_cli, fork, "--check", str(body))
    assert check.returncode == 1
    found = [
        line.split(": ", 2)[1].split()[1] for line in check.stdout.splitlines() if " CKP" in line
    ]
    assert found == ["CKP01", "CKP02", "CKP03", "CKP03", "CKP03", "CKP03"]


def test_an_ai_trailer_beside_a_test_plan_line(run_cli: Run, fork: Path) -> None:
    """git's own trailer parser refuses this last paragraph ("Test Plan" has a space): the
    Co-authored-by must still be found, and neither line may leak into the prose."""
    message = FIX_MESSAGE.replace(
        "Signed-off-by: Test Contributor <contributor@example.com>\n",
        "Test Plan: python test/test_nn.py -k test_relu_keeps_negative_zero\n"
        "Co-authored-by: Claude <noreply@anthropic.com>\n",
    )
    git("commit", "-q", "--amend", "-m", message, cwd=fork)
    result = json.loads(pr_cli(run_cli, fork, "--offline", "--json").stdout)
    body = result["body"]
    assert "## Agent details\n" in body
    assert "`" + git("rev-parse", "--short=7", "HEAD", cwd=fork) + " Co-authored-by: Claude" in body
    assert body.count("Co-authored-by") == 1  # only as the evidence, never in the prose
    plan = body.split("## Test plan\n", 1)[1].split("\n## ", 1)[0]
    # the trailer's command is already in the block (its -k names are): it is not repeated
    # as a bare line after it
    assert plan.startswith(
        "\nThe tests this PR adds or changes:\n\n```\n"
        "python test/test_nn.py -k test_relu_keeps_negative_zero -k test_relu_positive\n```\n"
        "New in `test/test_nn.py`: `test_relu_keeps_negative_zero`, `test_relu_positive`.\n\n"
    )
    assert plan.count("-k test_relu_keeps_negative_zero") == 1
    assert "Test Plan:" not in body
    assert any("AI tool" in what for what in result["placeholders"])
    # a body without the section is refused
    bare = fork / "bare.md"
    bare.write_text(body.split("## Agent details", 1)[0])
    check = pr_cli(run_cli, fork, "--check", str(bare))
    assert check.returncode == 1 and "CKP05 ai-disclosure-missing: AI helped (" in check.stdout


def test_references_go_by_the_fixes_line_and_lists_are_left_out(run_cli: Run, fork: Path) -> None:
    message = FIX_MESSAGE.replace(
        "Root cause:",
        "- Add a fast path for zero\n- Drop the old comparison\n\nRefs #123\n\nRoot cause:",
    )
    git("commit", "-q", "--amend", "-m", message, cwd=fork)
    proc = pr_cli(run_cli, fork, "--offline")
    assert proc.stdout.startswith(
        "Fixes #4242\nRefs #123\n\nrelu called clamp(min=0), which returns +0.0 for -0.0; relu "
        "must return\nits input unchanged where it is not negative.\n\n## Root cause\n\nClamp"
    )
    assert "fast path" not in proc.stdout and proc.stdout.count("#123") == 1
    sha = git("rev-parse", "--short=7", "HEAD", cwd=fork)
    assert (
        f"contribkit: warning: the bullet list in commit {sha} was left out of the summary: "
        "PyTorch asks for prose, so say what changed and why in sentences"
    ) in proc.stderr


def test_a_title_cut_to_fit_is_a_warning(run_cli: Run, fork: Path) -> None:
    subject = "Keep the sign of negative zero in relu, hardtanh, leaky_relu and their backward"
    git(
        "commit",
        "-q",
        "--amend",
        "-m",
        FIX_MESSAGE.replace(FIX_MESSAGE.split("\n")[0], subject),
        cwd=fork,
    )
    assert "title was cut" not in pr_cli(run_cli, fork, "--offline").stderr  # 85 fits in 90
    (fork / ".contribkit.toml").write_text("[hooks]\ntitle_max_length = 82\n")
    proc = pr_cli(run_cli, fork, "--offline")
    title = "[nn] Keep the sign of negative zero in relu, hardtanh, leaky_relu and"
    assert f"title: {title}\n" in proc.stderr
    warning = (
        "contribkit: warning: the title was cut to 72 characters (82 as it lands with ' (#N)', "
        f'hooks.title_max_length) from "[nn] {subject}"; write a shorter one with --title'
    )
    assert warning in proc.stderr
    as_json = json.loads(pr_cli(run_cli, fork, "--offline", "--json").stdout)
    assert (
        as_json["title"] == title
        and warning.removeprefix("contribkit: warning: ") in (as_json["warnings"])
    )
    given = pr_cli(run_cli, fork, "--offline", "--title", "[nn] Keep the sign of -0.0 in relu")
    assert "title was cut" not in given.stderr


def test_output_file_ai_section_and_conventional_title(run_cli: Run, fork: Path) -> None:
    out = fork / "body.md"
    proc = pr_cli(
        run_cli,
        fork,
        "--offline",
        "-o",
        str(out),
        "--title-style",
        "conventional",
        "--ai-assisted",
        "Claude drafted the tests; I reviewed and rewrote them.",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:2] == [
        f"wrote {out}",
        "title: fix(nn): keep the sign of negative zero in relu",
    ]
    assert "## Agent details\n\nClaude drafted the tests; I reviewed and rewrote them.\n" in (
        out.read_text()
    )
    refused = pr_cli(run_cli, fork, "--offline", "-o", str(out))
    assert refused.returncode == 2
    assert refused.stderr.startswith(f"contribkit: error: {out} already exists\n")
    assert pr_cli(run_cli, fork, "--offline", "-o", str(out), "--force").returncode == 0
    assert pr_cli(run_cli, fork, "--offline", "-o", "-").stdout.startswith("Fixes #4242\n")


def test_a_user_template_renders_in_the_sandbox(run_cli: Run, fork: Path, tmp_path: Path) -> None:
    git(
        "commit",
        "-q",
        "--amend",
        "-m",
        "Keep relu's sign\n\nSee {{ 7 * 7 }} and {% raw %}.",
        cwd=fork,
    )
    mine = tmp_path / "mine.md.j2"
    mine.write_text(
        "{{ fixes_line }}\n\n{{ summary }}\n\n"
        "{% for t in tests %}{{ t.command }}\n{% endfor %}{{ ph.matrix }}\n"
    )
    proc = pr_cli(run_cli, fork, "--offline", "--template", str(mine))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        "Fixes #4242\n\nSee {{ 7 * 7 }} and {% raw %}.\n\n"  # commit text is a value, not source
        "python test/test_nn.py -k test_relu_keeps_negative_zero -k test_relu_positive\n"
        "<!-- contribkit: run `contribkit run` and regenerate, for the device matrix -->\n"
    )
    assert "placeholders left (1): run `contribkit run`" in proc.stderr
    mine.write_text("{{ no_such_thing }}\n")
    undefined = pr_cli(run_cli, fork, "--offline", "--template", str(mine))
    assert undefined.returncode == 2
    assert f"contribkit: error: {mine}: 'no_such_thing' is undefined" in undefined.stderr
    assert "hint: the template can use: ai, cc_line, checklist," in undefined.stderr
    mine.write_text("{{ ''.__class__.__mro__[1].__subclasses__() }}\n")
    escape = pr_cli(run_cli, fork, "--offline", "--template", str(mine))
    assert escape.returncode == 2 and "SecurityError" in escape.stderr
    mine.write_text("{% if %}\n")
    syntax = pr_cli(run_cli, fork, "--offline", "--template", str(mine))
    assert syntax.returncode == 2 and f"{mine}:1: template syntax error" in syntax.stderr


def test_issue_facts_offline_come_from_the_repro_folder(run_cli: Run, fork: Path) -> None:
    folder = fork / "repros/issue-4242"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(
        json.dumps(
            {"number": 4242, "repo": "me/example", "title": "relu drops the sign", "labels": ["x"]}
        )
    )
    (folder / "issue.md").write_text(
        "# relu drops the sign\n\n## Body\n\nBroken.\n\ncc @albanD\n\n"
        "## Comment by @someone (2026-01-04)\n\ncc @not-this-one\n"
    )
    result = json.loads(pr_cli(run_cli, fork, "--offline", "--json").stdout)
    assert result["issue"] == {
        "number": 4242,
        "repo": "me/example",
        "title": "relu drops the sign",
        "url": None,
        "labels": ["x"],
        "cc": "cc @albanD",
        "source": "repros/issue-4242/meta.json",
    }
    assert result["body"].endswith("\ncc @albanD\n")


def test_github_down_never_fails_the_body(
    run_cli: Run, fork: Path, fake_github: FakeGitHub
) -> None:
    fake_github.fail(r"/issues/4242$", 502, "Bad Gateway")
    proc = pr_cli(run_cli, fork, CONTRIBKIT_GITHUB_URL=fake_github.url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Fixes #4242\n")
    assert "contribkit: warning: issue #4242: GitHub kept failing for issue #4242" in proc.stderr
    # --issue overrides the branch's number, with a warning
    other = pr_cli(run_cli, fork, "--offline", "--issue", "77")
    assert other.stdout.startswith("Fixes #77\n")
    assert "--issue 77 overrides #4242 (from the branch fix/issue-4242-relu-sign)" in other.stderr


def test_a_slow_github_falls_back_to_what_is_on_disk(
    run_cli: Run, fork: Path, fake_github: FakeGitHub
) -> None:
    """A reply that drips a byte every 2 s: at the --github-timeout, pr writes the body from disk."""
    fake_github.drip(r"/issues/4242$", interval=2.0)
    proc = pr_cli(run_cli, fork, "--github-timeout", "2", CONTRIBKIT_GITHUB_URL=fake_github.url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Fixes #4242\n")
    assert (
        "contribkit: warning: issue #4242: GitHub did not answer issue #4242 in pytorch/pytorch "
        "within 2 s; the body uses what is on disk"
    ) in proc.stderr


def test_the_base_given_is_the_base_named(run_cli: Run, fork: Path) -> None:
    proc = pr_cli(run_cli, fork, "--offline", "-B", "nosuch")
    assert proc.returncode == 0, proc.stderr
    assert (
        "contribkit: warning: no merge-base with upstream/nosuch (nor with its local or origin "
        "branch): no commits or changed files to describe"
    ) in proc.stderr
    assert "upstream/main" not in proc.stderr
    # a base that exists only locally is used, with a note naming both
    git("branch", "-q", "stable", "HEAD~1", cwd=fork)
    local = pr_cli(run_cli, fork, "--offline", "-B", "stable")
    assert "no 'upstream/stable' ref (run `git fetch upstream`); used 'stable' instead" in (
        local.stderr
    )
    assert local.stdout.startswith("Fixes #4242\n\nrelu called")


def test_bad_input(run_cli: Run, fork: Path, tmp_path: Path) -> None:
    outside = run_cli("pr", cwd=tmp_path)
    assert outside.returncode == 2 and "not inside a git repository" in outside.stderr
    missing = pr_cli(run_cli, fork, "--check", "nope.md")
    assert (missing.returncode, missing.stderr.splitlines()[0]) == (
        2,
        "contribkit: error: nope.md: no such file",
    )
    assert pr_cli(run_cli, fork, "--disable", "CKP01").returncode == 2


# -- pr --check from the command line -----------------------------------------------------------
GOOD = "Fixes #4242\n\nWhy.\n\n## Test plan\n\npython test/test_nn.py -k test_relu\n"


def test_check_reports_in_the_hooks_style(run_cli: Run, fork: Path, tmp_path: Path) -> None:
    bad = "About relu\n\n## Performance\n\nfaster\n<!-- contribkit: fill me -->\n"
    proc = run_cli("pr", "--check", "-", cwd=fork, input=bad)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        # the branch (fix/4242-…) names an issue the body never links: that blocks
        "<stdin>:1: error CKP01 fixes-link: the branch is for #4242, but the body never links it",
        "    hint: add 'Fixes #4242' (or fix the branch name)",
        "<stdin>: warning CKP02 test-plan-names-test: no Test plan section, and no test named",
        "    hint: add a '## Test plan' naming the test, e.g. python test/test_nn.py -k test_relu",
        "<stdin>:6: error CKP03 placeholder-left: fill me",
        "    hint: replace the placeholder with the real text, or delete it",
        "<stdin>:3: warning CKP04 performance-without-bench: 'Performance' section, but no bench "
        "record for HEAD",
        "    hint: drop the Performance section, or record a benchmark in .contribkit/bench/",
        "contribkit pr --check: 2 errors, 2 warnings.",
        'To switch a rule off: hooks.disable = ["CKP01"] in .contribkit.toml, then contribkit config --trust',
    ]
    off = run_cli(
        "pr", "--check", "-", "--disable", "CKP01,performance-without-bench", cwd=fork, input=bad
    )
    assert [line.split()[2] for line in off.stdout.splitlines() if " CKP" in line] == [
        "CKP02",
        "CKP03",
    ]
    (fork / ".contribkit.toml").write_text('[hooks]\ndisable = ["CKP02", "CKP03"]\n')
    trust(fork / ".contribkit.toml")  # a repository's file switches rules off once trusted
    assert (
        run_cli("pr", "--check", "-", "--disable", "CKP01,CKP04", cwd=fork, input=bad).returncode
        == 0
    )
    good = run_cli("pr", "--check", "-", "--json", "--title", "Fix relu", cwd=fork, input=GOOD)
    assert json.loads(good.stdout) == {
        "ok": True,
        "file": "<stdin>",
        "title_checked": True,
        "violations": [],
    }


def test_check_knows_the_branch(run_cli: Run, fork: Path, tmp_path: Path) -> None:
    git(
        "commit",
        "-q",
        "--amend",
        "--no-edit",
        "--trailer",
        "Co-authored-by: Claude <c@a.b>",
        cwd=fork,
    )
    wrong = GOOD.replace("#4242", "#1")
    proc = run_cli("pr", "--check", "-", "--json", cwd=fork, input=wrong)
    found = {v["id"]: v["message"] for v in json.loads(proc.stdout)["violations"]}
    assert found["CKP01"] == "the body links #1, but the branch is for #4242"
    assert found["CKP05"].startswith("AI helped (")
    assert "Co-authored-by: Claude <c@a.b>), but no section says so" in found["CKP05"]
    # outside a repository only the body itself is checked
    (tmp_path / "b.md").write_text(wrong)
    alone = run_cli("pr", "--check", "b.md", cwd=tmp_path)
    assert alone.returncode == 0 and "ok: b.md follows the PR rules" in alone.stdout


# -- titles and commit text (pure) ---------------------------------------------------------------
def commit(subject: str, body: str = "") -> Commit:
    return Commit("c" * 40, subject, body)


@pytest.mark.parametrize(
    ("subject", "style", "areas", "title"),
    [
        ("Fix relu for -0.0", "pytorch", ("nn",), "[nn] Fix relu for -0.0"),
        (
            "Fix relu for -0.0",
            "pytorch",
            ("dynamo", "inductor"),
            "[dynamo, inductor] Fix relu for -0.0",
        ),
        ("fix relu", "pytorch", (), "Fix relu"),
        ("[mps][nn] Fix relu", "pytorch", ("cuda",), "[mps, nn] Fix relu"),
        ("fix(mps): handle relu", "pytorch", (), "[mps] Handle relu"),
        ("Fix relu for -0.0", "conventional", ("nn",), "fix(nn): relu for -0.0"),
        ("Add a relu fast path", "conventional", (), "feat: add a relu fast path"),
        ("Document relu", "conventional", ("nn",), "docs(nn): document relu"),
        ("[nn] Speed up relu", "conventional", (), "perf(nn): speed up relu"),
        ("CUDA: keep relu", "conventional", (), "fix(CUDA): keep relu"),
        ("CUDA: keep relu", "pytorch", ("nn",), "[CUDA] Keep relu"),
        ("Fix: relu", "conventional", (), "fix: relu"),
        (
            "Fix " + "the relu kernel " * 6,
            "pytorch",
            ("nn",),
            "[nn] Fix the relu kernel the relu kernel the relu kernel the relu kernel",
        ),
    ],
)
def test_titles(subject: str, style: str, areas: tuple[str, ...], title: str) -> None:
    made = make_title([commit(subject)], issue=None, areas=areas, style=style)
    assert made.text == title and len(made.text) <= 72
    assert (made.cut_from is not None) is (len(subject) > 72)


def test_title_sources_besides_the_subject() -> None:
    issue = IssueFacts(4242, title="relu drops the sign")
    fixup = [commit("fixup! Fix relu"), commit("Fix relu"), commit("Merge branch 'main' into x")]
    assert make_title(fixup, issue=issue, areas=(), style="pytorch").text == "Fix relu"
    assert make_title([], issue=issue, areas=("nn",), style="pytorch").text == (
        "[nn] Fix #4242: relu drops the sign"
    )
    made = make_title([], issue=None, areas=(), style="pytorch", branch="me/relu-sign_fix")
    assert made == Title("Relu sign fix")


def test_the_title_comes_from_the_fix_not_its_tests() -> None:
    tests = Commit("a" * 40, "Add a test for relu's sign", "")
    fix = Commit("b" * 40, "Keep the sign of -0.0 in relu", "")
    for commits in ([tests, fix], [fix, tests]):  # newest first, either order
        made = make_title(commits, issue=None, areas=(), style="pytorch", tests_only={tests.sha})
        assert made.text == "Keep the sign of -0.0 in relu"
    # tests only: the oldest of them
    only = make_title([tests], issue=None, areas=(), style="pytorch", tests_only={tests.sha})
    assert only.text == "Add a test for relu's sign"


@pytest.mark.parametrize("tests_first", [True, False])
def test_a_tests_commit_does_not_title_the_pr(run_cli: Run, fork: Path, tests_first: bool) -> None:
    git("reset", "-q", "--hard", "HEAD~1", cwd=fork)
    fix = ({"torch/nn/functional.py": "def relu(x):\n    return x.clamp(min=0)\n"}, FIX_MESSAGE)
    tests = ({"test/test_nn.py": TESTS}, "Add tests for relu and negative zero")
    for files, message in (tests, fix) if tests_first else (fix, tests):
        commit_files(fork, files, message)
    result = json.loads(pr_cli(run_cli, fork, "--offline", "--json").stdout)
    assert result["title"] == "[nn] Keep the sign of negative zero in relu"


def test_a_test_plan_is_said_once(run_cli: Run, fork: Path) -> None:
    """A "Test Plan:" label with its commands on the next lines (fenced or not) is the test plan,
    not an empty trailer with prose after it; a command the block runs is not repeated, another
    joins the block; prose is kept once."""
    message = FIX_MESSAGE.replace(
        "Signed-off-by:",
        "Test Plan:\n```\npython test/test_nn.py -k test_relu_positive\n"
        "python test/test_nn.py -k test_relu_other\n```\nSigned-off-by:",
    )
    git("commit", "-q", "--amend", "-m", message, cwd=fork)
    (fork / "torch/nn/functional.py").write_text("def relu(x):\n    return x\n")
    git("commit", "-qam", "Tidy relu\n\nTest Plan:\nran the nn tests by hand", cwd=fork)
    git(
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "Note\n\nTest Plan: ran the nn tests by hand",
        cwd=fork,
    )
    body = pr_cli(run_cli, fork, "--offline").stdout
    plan = body.split("## Test plan\n", 1)[1].split("\n## ", 1)[0]
    assert plan.startswith(
        "\nThe tests this PR adds or changes, and the commits' test plan:\n\n```\n"
        "python test/test_nn.py -k test_relu_keeps_negative_zero -k test_relu_positive\n"
        "python test/test_nn.py -k test_relu_other\n```\n"
    )
    assert body.count("ran the nn tests by hand") == 1 and "Test Plan" not in body
    assert body.count("test_relu_other") == 1 and "```\n\n```" not in body
    summary = body.split("\n## ", 1)[0]
    assert "python" not in summary


def test_commit_text_is_split_into_sections() -> None:
    older = commit(
        "Fix relu",
        "relu lost the sign.\n\nRoot cause: clamp.\n\nSolution: where().\n\nFixes #7\n"
        "Closes #8\n\nTest Plan: python test/test_nn.py -k relu\n\nSigned-off-by: A <a@b.c>",
    )
    newer = commit("Add tests", "More tests.\n\nTest-Plan: pytest test/test_x.py")
    text = commit_text([newer, older], issue=7)
    assert text.summary == ["relu lost the sign.", "More tests."]
    assert text.references == ["Closes #8"]  # it goes by the Fixes line; "Fixes #7" is that line
    assert text.root_cause == ["Clamp."] and text.solution == ["where()."]  # code stays as is
    assert text.test_plan == ["python test/test_nn.py -k relu", "pytest test/test_x.py"]
    # Every label a paragraph may carry is also read as a trailer.
    trailer = commit("Fix relu", "Why.\n\nTesting: python test/test_nn.py -k relu\nCause: clamp.")
    text = commit_text([trailer], issue=None)
    assert text.summary == ["Why."] and text.root_cause == ["Clamp."]
    assert text.test_plan == ["python test/test_nn.py -k relu"]


@pytest.mark.parametrize(
    ("said", "section"),
    [
        ("the kernel checked it.", "The kernel checked it."),
        ("clamp.", "Clamp."),
        ("torch.compile cached it.", "torch.compile cached it."),
        ("index_add_ refused it.", "index_add_ refused it."),
        ("`clamp` did.", "`clamp` did."),
    ],
)
def test_sections_start_as_sentences_unless_with_code(said: str, section: str) -> None:
    text = commit_text([commit("Fix relu", f"Root cause: {said}\n\nSolution: {said}")], None)
    assert text.root_cause == [section] and text.solution == [section]


@pytest.mark.parametrize(
    ("body", "summary", "bullets"),
    [
        ("Why.\n\n- add a path\n- drop a check\n  that was wrong", ["Why."], True),
        ("This PR:\n1. adds a path\n2) drops a check\n\nWhy.", ["Why."], True),
        ("Why:\n\n```\n- not a list\n```", ["Why:", "```\n- not a list\n```"], False),
        ("A -- B is fine.\n-1 is a number", ["A -- B is fine.\n-1 is a number"], False),
    ],
)
def test_bullet_lists_are_left_out_of_the_summary(
    body: str, summary: list[str], bullets: bool
) -> None:
    text = commit_text([commit("Fix relu", body)], issue=None)
    assert text.summary == summary
    assert text.bullet_lists == (["ccccccc"] if bullets else [])


@pytest.mark.parametrize(
    ("line", "reference"),
    [
        ("Fixes #7", None),
        ("fixes pytorch/pytorch#7.", None),
        ("Closes https://github.com/pytorch/pytorch/issues/7", None),
        ("Refs #12", "Refs #12"),
        ("Refs:  #12, #13", "Refs: #12, #13"),
        ("See also pytorch/pytorch#12", "See also pytorch/pytorch#12"),
        ("Fixes #7 and #12", "Fixes #7 and #12"),
        ("Related to #12", "Related to #12"),
        ("See #12 for the history of this check.", "prose"),
    ],
)
def test_lines_that_only_point_at_issues_leave_the_prose(line: str, reference: str | None) -> None:
    text = commit_text([commit("Fix relu", f"Why.\n{line}")], issue=7)
    if reference == "prose":
        assert text.summary == [f"Why.\n{line}"] and text.references == []
    else:
        assert text.summary == ["Why."]
        assert text.references == ([reference] if reference else [])


def test_the_cuda_line_says_what_ran() -> None:
    cpu_only = _record("a" * 40, 3, [repro_cell("NOT_REPRODUCED", "ok")])
    cpu_only.devices = ["cpu"]
    assert (
        environment_lines(cpu_only)[1] == "CUDA: not run (the run's devices did not include cuda)"
    )
    gpu = _record(
        "a" * 40,
        3,
        [repro_cell("NOT_REPRODUCED", "ok"), repro_cell("NOT_REPRODUCED", "ok", "cuda")],
    )
    gpu.interpreters[0].cuda_available = True
    gpu.interpreters[0].device_names = ["NVIDIA H100 80GB HBM3"]
    gpu.interpreters[0].host = "gpu-box"
    lines, cuda = environment_lines(gpu)
    assert cuda == "CUDA: ran on NVIDIA H100 80GB HBM3"
    assert lines == ["Python 3.11.7, torch 2.13.0+cpu (git cf30153c4c13) on gpu-box"]
    skipped = _record("a" * 40, 3, [repro_cell("SKIP", "needs sm_90", "cuda")])
    assert environment_lines(skipped)[1] == "CUDA: skipped (needs sm_90)"
