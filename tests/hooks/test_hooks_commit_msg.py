"""contribkit-commit-msg: main() on message files, in and out of a real repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from contribkit.conventions import commitmsg
from contribkit.conventions.commitmsg import check_message, clean_message, imperative_of
from contribkit.core.trust import trust
from contribkit.hooks.commit_msg import main
from tests.branchcases import BRANCH_ISSUES
from tests.conftest import git

FIXTURES = Path(__file__).parent.parent / "fixtures"
MESSAGES = FIXTURES / "messages"


@pytest.fixture(autouse=True)
def outside_any_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from a folder that is no git repository unless a test makes one."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def write(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(path)


def rule_ids(output: str) -> list[str]:
    return re.findall(r"\bCK\d{3}\b(?= )", output)


def test_good_message_from_git_commit_verbose_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, str(MESSAGES / "good_verbose.txt"))
    assert (code, out) == (0, "")


def test_bad_message_warns_by_default_and_blocks_under_strict(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default profile: style findings are warnings, shown, exit 0 (the title is 97
    characters as it lands, under 100; no body width). hooks.strict with the old limits: the
    same findings, and more, are errors."""
    path = str(MESSAGES / "bad_everything.txt")
    code, out = run(capsys, path)
    assert code == 0
    assert rule_ids(out) == ["CK102", "CK103", "CK105", "CK107"]
    assert all(
        line.startswith("1: warning ") or line.startswith("2: warning ")
        for line in out.splitlines()
        if re.match(r"^\d+: ", line)
    )
    assert "4 warnings. Warnings do not block (hooks.strict = true makes them errors)." in out
    assert "To recover" not in out
    monkeypatch.setenv("CONTRIBKIT_HOOKS_STRICT", "true")
    monkeypatch.setenv("CONTRIBKIT_HOOKS_TITLE_MAX_LENGTH", "72")
    monkeypatch.setenv("CONTRIBKIT_HOOKS_BODY_MAX_LENGTH", "80")
    code, out = run(capsys, path)
    assert code == 1
    assert rule_ids(out) == ["CK101", "CK102", "CK103", "CK105", "CK107", "CK108"]
    lines = out.splitlines()
    assert lines[0] == (
        "1: error CK101 title-too-long: title is 87 characters, 97 as it lands with ' (#N)', "
        'limit 72 ("Fixed the relu gradient '
        'for negative zero inputs in the functional API and the module.")'
    )
    # every violation is followed by exactly one hint
    for i, line in enumerate(lines):
        if re.match(r"^\d+: (error|warning) CK\d{3} ", line):
            assert lines[i + 1].startswith("    hint: ")
    assert (
        '1: error CK102 title-trailing-period: title ends with a period ("…negative zero inputs in the functional API and the module.")'
        in out
    )
    assert '"Fixed" is not imperative' in out and 'write "Fix …"' in out
    assert "3: error CK108 body-line-too-long: line is 99 characters, limit 80" in out
    assert "6 errors. To recover" in out
    assert f"To recover: git commit --edit --file={path}" in out
    assert 'hooks.disable = ["CK101"]' in out


@pytest.mark.parametrize("name", ["merge", "fixup", "squash", "amend", "revert"])
def test_tool_written_commits_are_skipped_unless_all_commits(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("CONTRIBKIT_HOOKS_TITLE_MAX_LENGTH", "72")  # the revert's title is long
    path = str(MESSAGES / f"{name}.txt")
    assert run(capsys, path) == (0, "")
    code, out = run(capsys, "--all-commits", path)  # checked: advice only, as for any commit
    assert code == 0 and rule_ids(out), out
    assert run(capsys, "--strict", path) == (code, out)  # the old name of the same option


def test_empty_message_passes_so_that_git_aborts_the_commit_itself(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(capsys, str(MESSAGES / "empty.txt")) == (0, "")
    assert run(capsys, write(Path.cwd(), "")) == (0, "")


def test_non_utf8_message_is_reported_and_still_checked(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, str(MESSAGES / "latin1.txt"))
    assert code == 1  # blocks in the default profile
    assert "1: error CK110 message-not-utf8: byte 0xe9 at offset 21 is not utf-8" in out
    assert rule_ids(out) == ["CK110"]  # the rest of the message is fine


def test_message_in_the_configured_commit_encoding_passes(
    capsys: pytest.CaptureFixture[str], fork_repo: Path, tmp_path: Path
) -> None:
    git("config", "i18n.commitEncoding", "gbk", cwd=fork_repo)
    assert run(capsys, str(MESSAGES / "gbk.txt")) == (0, "")
    git("config", "--unset", "i18n.commitEncoding", cwd=fork_repo)
    code, out = run(capsys, str(MESSAGES / "gbk.txt"))
    assert code == 1 and rule_ids(out) == ["CK110"]


def test_comment_char_and_cleanup_mode_from_git_config(
    capsys: pytest.CaptureFixture[str], fork_repo: Path
) -> None:
    text = "[nn] Fix relu\n\n; a comment line, far too long for a body line of a commit message, that git strips as a comment\n"
    path = write(fork_repo / ".git", text)
    (fork_repo / ".contribkit.toml").write_text("[hooks]\nbody_max_length = 80\n")  # opt-in
    git("config", "core.commentChar", ";", cwd=fork_repo)
    # no editor template: git's default cleanup (whitespace) keeps the line, so it is checked
    code, out = run(capsys, path)
    assert code == 0 and rule_ids(out) == ["CK108"]  # a warning
    git("config", "commit.cleanup", "strip", cwd=fork_repo)
    assert run(capsys, path) == (0, "")
    git("config", "core.commentChar", "#", cwd=fork_repo)
    assert rule_ids(run(capsys, path)[1]) == ["CK108"]  # ';' is no comment now


def test_comment_char_and_scissors_from_gits_own_lines(capsys: pytest.CaptureFixture[str]) -> None:
    # core.commentChar=auto (or any char): git's prompt and scissors lines name it
    assert run(capsys, str(MESSAGES / "semicolon_comments.txt")) == (0, "")


def test_clean_message_drops_comments_scissors_and_outer_blank_lines() -> None:
    text = "\n\nTitle\n# comment\n\nBody\n\n# ------------------------ >8 ------------------------\ndiff\n"
    assert clean_message(text, "#") == ["Title", "", "Body"]
    assert clean_message(text, "#", strip_comments=False) == ["Title", "# comment", "", "Body"]


@pytest.mark.parametrize(
    ("how", "config", "kept"),
    [
        ("-m", None, True),  # git commit -m: cleanup is "whitespace", '#' lines stay
        ("editor", None, False),  # the editor: "strip", git's template says so
        ("editor -v", None, False),  # with the scissors line
        ("editor --no-status", None, False),  # no template: git's GIT_EDITOR tells the hook
        ("rewriting-editor", None, False),  # the template replaced (or in another language)
        ("-m", "strip", False),
        ("editor", "whitespace", True),
        ("-m", "scissors", True),
        ("editor", "verbatim", True),
    ],
)
def test_comment_lines_follow_gits_cleanup(
    fork_repo: Path, tmp_path: Path, how: str, config: str | None, kept: bool
) -> None:
    """A real `git commit`, once without the hook to see what git keeps, then with it: the hook
    warns that the issue is not referenced (CK109) exactly when git would strip "#123"."""
    git("switch", "-q", "-c", "fix/issue-123-foo", cwd=fork_repo)
    if config:
        git("config", "commit.cleanup", config, cwd=fork_repo)
    editor = tmp_path / "editor.sh"  # writes the message above git's template, as a user does
    keep = "" if how == "rewriting-editor" else '| cat - "$1" '  # or instead of it
    editor.write_text(
        f'#!/bin/sh\nprintf \'[nn] Fix relu\\n\\n#123\\n\' {keep}> "$1.new" && mv "$1.new" "$1"\n'
    )
    editor.chmod(0o755)
    args = ["-m", "[nn] Fix relu", "-m", "#123"] if how == "-m" else how.split()[1:]
    env = {**os.environ, "GIT_EDITOR": str(editor)}

    def commit(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "commit", "--allow-empty", *extra, *args],
            cwd=fork_repo,
            env=env,
            capture_output=True,
            text=True,
        )

    assert commit("--no-verify").returncode == 0
    stored = git("log", "-1", "--format=%B", cwd=fork_repo)
    assert ("\n#123" in stored) is kept, stored
    git("reset", "-q", "--soft", "HEAD~1", cwd=fork_repo)
    hook = fork_repo / ".git" / "hooks" / "commit-msg"
    hook.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m contribkit.hooks.commit_msg "$1"\n')
    hook.chmod(0o755)
    proc = commit()
    assert proc.returncode == 0, proc.stdout + proc.stderr  # advice never blocks
    if kept:
        assert "CK109" not in proc.stderr, proc.stderr
    else:  # git passes the hook's output on to stderr
        assert "warning CK109 issue-not-referenced: the branch names issue #123" in proc.stderr
        assert "hint: add 'Fixes #123' to the body (or 'Refs #123'" in proc.stderr


@pytest.mark.parametrize(
    ("word", "imperative"),
    [
        ("Fixed", "Fix"),
        ("Adds", "Add"),
        ("fixes", "fix"),
        ("Applied", "Apply"),
        ("Used", "Use"),
        ("Made", "Make"),
        ("Fix", None),
        ("Add", None),
        ("Speed", None),
        ("Process", None),
        ("Relu", None),
        ("Bias", None),
    ],
)
def test_imperative_mood(word: str, imperative: str | None) -> None:
    assert imperative_of(word) == imperative


@pytest.mark.parametrize(
    ("title", "style", "expected"),
    [
        ("[inductor] Fix the cache key", "pytorch", []),
        ("[dynamo][inductor] Fix the cache key", "pytorch", []),
        ("Fix the cache key", "pytorch", []),
        ("[inductor]Fix the cache key", "pytorch", ["CK106"]),
        ("[inductor", "pytorch", ["CK106"]),
        ("[] Fix it", "pytorch", ["CK106"]),
        ("[inductor] Fixed the cache key", "pytorch", ["CK105"]),
        ("fix(inductor): repair the cache key", "conventional", []),
        ("feat!: drop python 3.9", "conventional", []),
        ("Fix the cache key", "conventional", ["CK106"]),
        ("oops(inductor): repair the cache key", "conventional", ["CK106"]),
        ("fix: fixed the cache key", "conventional", ["CK105"]),
        ("anything goes here", "none", []),
    ],
)
def test_title_styles(title: str, style: str, expected: list[str]) -> None:
    found = check_message([title], title_style=style, conventional_types=["feat", "fix", "docs"])
    assert [v.rule.id for v in found] == expected


@pytest.mark.parametrize(
    ("title", "allow", "expected"),
    [
        ("WIP: relu", False, ["CK104"]),
        ("[WIP] Fix relu", False, ["CK104"]),
        ("Fix relu (wip)", False, ["CK104"]),
        ("WIP: relu", True, []),
        ("Fix the wiping of buffers", False, []),
    ],
)
def test_wip(title: str, allow: bool, expected: list[str]) -> None:
    assert [v.rule.id for v in check_message([title], allow_wip=allow)] == expected


def test_issue_from_the_branch_must_be_referenced(
    capsys: pytest.CaptureFixture[str], fork_repo: Path
) -> None:
    git("switch", "-q", "-c", "fix/12345-relu", cwd=fork_repo)
    code, out = run(capsys, write(fork_repo, "[nn] Fix relu\n\nA body.\n"))
    assert code == 0 and rule_ids(out) == ["CK109"]
    assert "the branch names issue #12345" in out and "Fixes #12345" in out
    for body in ("Fixes #12345", "See #12345.", "https://github.com/pytorch/pytorch/issues/12345"):
        assert run(capsys, write(fork_repo, f"[nn] Fix relu\n\n{body}\n")) == (0, "")
    # a longer number that merely starts with the same digits is no reference
    code, out = run(capsys, write(fork_repo, "[nn] Fix relu\n\nFixes #123456\n"))
    assert rule_ids(out) == ["CK109"]


def test_the_issue_a_branch_is_for(capsys: pytest.CaptureFixture[str], fork_repo: Path) -> None:
    """The hook reads the branch with the same parser as ``pr``: the shared table holds."""
    message = write(fork_repo / ".git", "[nn] Fix relu\n\nA body.\n")
    for branch, number in BRANCH_ISSUES:
        git("switch", "-q", *(["-c"] if branch != "main" else []), branch, cwd=fork_repo)
        code, out = run(capsys, message)
        if number is None:
            assert (branch, code, out) == (branch, 0, "")
        else:
            assert (branch, rule_ids(out)) == (branch, ["CK109"])
            assert f"the branch names issue #{number}," in out
            fixed = write(fork_repo / "test", f"[nn] Fix relu\n\nFixes #{number}\n")
            assert run(capsys, fixed) == (0, "")
        git("switch", "-q", "main", cwd=fork_repo)


def test_rules_are_tuned_and_switched_off_in_contribkit_toml(
    capsys: pytest.CaptureFixture[str], fork_repo: Path
) -> None:
    path = write(fork_repo, "Fixed a thing that is fifty characters long, or so.\n")
    code, out = run(capsys, path)
    assert rule_ids(out) == ["CK102", "CK105"]
    (fork_repo / ".contribkit.toml").write_text(
        '[hooks]\ndisable = ["title-trailing-period"]\ntitle_max_length = 40\nstrict = true\n'
    )
    trust(fork_repo / ".contribkit.toml")  # a repository's file switches rules off once trusted
    code, out = run(capsys, path)
    assert code == 1 and rule_ids(out) == ["CK101", "CK105"]
    assert "limit 40" in out
    assert run(capsys, "--disable", "CK101,CK105", path) == (0, "")
    assert run(capsys, "--disable=CK101", "--disable", "title-not-imperative", path) == (0, "")


def test_bad_config_is_a_usage_error(capsys: pytest.CaptureFixture[str], fork_repo: Path) -> None:
    (fork_repo / ".contribkit.toml").write_text('[hooks]\ntitle_style = "fancy"\n')
    code, out = run(capsys, write(fork_repo, "Fix relu\n"))
    assert code == 2
    assert "contribkit: error: hooks.title_style is 'fancy'" in out
    assert "hint: use one of: pytorch, conventional, none" in out
    (fork_repo / ".contribkit.toml").write_text('[hooks]\ntitle_max_length = "long"\n')
    code, out = run(capsys, write(fork_repo, "Fix relu\n"))
    assert code == 2 and "'hooks.title_max_length' must be a int" in out


def test_unknown_rule_names_warn(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "--disable", "CK999", str(MESSAGES / "good_verbose.txt"))
    assert code == 0
    assert "contribkit: warning: hooks.disable: no rule named 'CK999' (ignored)" in out


def test_missing_message_file_and_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "no-such-file")
    assert code == 2 and "cannot read no-such-file" in out
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    assert "the following arguments are required: filename" in capsys.readouterr().err


def test_help_lists_the_rules(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "CK101 title-too-long" in out and "--strict" in out and "Example:" in out


def test_colour_only_when_asked_or_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(MESSAGES / "bad_everything.txt")
    assert "\033[" not in run(capsys, path)[1]  # captured output is not a TTY
    painted = run(capsys, "--color", "always", path)[1]
    assert "\033[1;33mwarning CK102 title-trailing-period\033[0m" in painted
    painted = run(capsys, "--color", "always", str(MESSAGES / "latin1.txt"))[1]
    assert "\033[1;31merror CK110 message-not-utf8\033[0m" in painted
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\033[" not in run(capsys, path)[1]


def test_pure_check_is_reusable_for_pr_titles() -> None:
    found = check_message(["Fixed relu."], title_max_length=20)  # 11 + " (#123456)" = 21
    assert [v.rule.id for v in found] == ["CK101", "CK102", "CK105"]
    assert check_message(["Fixed relu."], title_max_length=21)[0].rule.id == "CK102"
    assert commitmsg.skip_kind('Revert "x"') == "revert"


@pytest.mark.parametrize(
    ("body", "text", "trailers"),
    [
        ("Why.\n\nSigned-off-by: A <a@b.c>", "Why.", [("Signed-off-by", "A <a@b.c>")]),
        (
            "Why.\n\nTest Plan: python test/test_nn.py\nCo-authored-by: Claude <c@a.b>",
            "Why.",
            [("Test Plan", "python test/test_nn.py"), ("Co-authored-by", "Claude <c@a.b>")],
        ),
        (
            "Why.\n\ntest plan:\n  python test/x.py\n  -k relu",
            "Why.",
            [("test plan", "python test/x.py -k relu")],
        ),
        # a paragraph of mixed lines is a block when a known key is in it (git also wants a
        # quarter of its lines to be trailers; an AI trailer counts whatever the rest)
        (
            "Why.\n\nFixes #12\nCo-authored-by: Claude <c@a.b>",
            "Why.\n\nFixes #12",
            [("Co-authored-by", "Claude <c@a.b>")],
        ),
        (
            "Why.\n\nOne.\nTwo.\nThree.\nFour.\nCo-authored-by: Claude <c@a.b>",
            "Why.\n\nOne.\nTwo.\nThree.\nFour.",
            [("Co-authored-by", "Claude <c@a.b>")],
        ),
        (
            "Why.\n\nThe fix, in short: cast.\nNote: x",
            "Why.\n\nThe fix, in short: cast.\nNote: x",
            [],
        ),
        ("Why.\n\nNote: read the docs first.", "Why.", [("Note", "read the docs first.")]),
        ("Why.\n\nhttps://example.com/x", "Why.\n\nhttps://example.com/x", []),
        ("Co-authored-by: Claude <c@a.b>", "", [("Co-authored-by", "Claude <c@a.b>")]),
        ("", "", []),
    ],
)
def test_split_trailers(body: str, text: str, trailers: list[tuple[str, str]]) -> None:
    assert commitmsg.split_trailers(body) == (text, tuple(trailers))


def test_gits_prompt_answers_without_a_git_call() -> None:
    def no_git() -> list[tuple[str, str]]:
        raise AssertionError("git config was asked")

    prompt = "# Please enter the commit message for your changes. Lines starting\n"
    strip = (
        "Title\n\n#123\n" + prompt + "# with '#' will be ignored, and an empty message aborts.\n"
    )
    kept = "Title\n\n#123\n" + prompt + "# with '#' will be kept; you may remove them yourself.\n"
    assert commitmsg.cleanup_rules(strip, no_git) == ("#", True)
    assert commitmsg.cleanup_rules(kept, no_git) == ("#", False)
    assert commitmsg.cleanup_rules("[nn] Title\n\nBody\n", no_git) == ("#", False)
    # no prompt: git config decides, and whether git opened the editor
    assert commitmsg.cleanup_rules("T\n\n;x\n", lambda: [("core.commentchar", ";")]) == (
        ";",
        False,
    )
    config = [("core.commentchar", ";")]
    assert commitmsg.cleanup_rules("T\n\n;x\n", lambda: config, editor=True) == (";", True)
    config.append(("commit.cleanup", "whitespace"))
    assert commitmsg.cleanup_rules("T\n\n;x\n", lambda: config, editor=True) == (";", False)


# --- calibrated on the shapes of titles PyTorch merges (tests/fixtures/conventions/) ----------


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("[BE]: Drop a stale comment", []),  # the common "[BE]: …" form
        ("[BE][Easy]: Tidy the imports", []),
        ("[BE]:Tidy the imports", ["CK106"]),
        ("[CUDA] Fixes to the launch bounds", []),  # a noun, not a verb
        ("Updates for the nightly wheel", []),
        ("[dynamo] fixes to lru_cache messages", []),
        ("docs: Mention the flag", []),  # a conventional prefix is not a verb
        ("docs: Fixed the flag", ["CK105"]),  # its summary is checked
        ("Fixes: the stride check", []),
        ("Adds the stride check", ["CK105"]),
        ("Bump the build image ", []),  # trailing whitespace: git strips it
        (" Bump the build image", ["CK103"]),
        ("x" * 90, []),  # 100 as it lands with " (#123456)"
        ("x" * 91, ["CK101"]),
        ("x" * 90 + " (#123)", []),  # already landed: measured as it is
    ],
)
def test_titles_as_pytorch_merges_them(title: str, expected: list[str]) -> None:
    found = check_message([title])
    assert [v.rule.id for v in found] == expected
    assert not any(v.is_error for v in found)  # the default profile blocks no title style


def test_fixture_titles_are_never_blocked() -> None:
    titles = json.loads((FIXTURES / "conventions" / "titles.json").read_text())
    blocked = [t["title"] for t in titles if any(v.is_error for v in check_message([t["title"]]))]
    assert blocked == []
    warned = [t["title"] for t in titles if check_message([t["title"]])]
    assert len(warned) == 2  # a trailing period, and a long past-tense title


def test_body_width_is_opt_in() -> None:
    body = ["[nn] Fix relu", "", "A markdown paragraph that runs on and on " * 4]
    assert check_message(body) == []
    (found,) = check_message(body, body_max_length=80)
    assert found.rule.id == "CK108" and not found.is_error
