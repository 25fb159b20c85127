from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from contribkit.core import trust
from contribkit.core.config import KEYS, ConfigError, env_name, load_settings
from contribkit.core.workspace import DEFAULT_REPO, Workspace, parse_remote_url
from tests.conftest import RunCli, git


def test_precedence_cli_over_env_over_repo_over_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user.toml"
    user.write_text(
        'repo = "user/one"\nbase_branch = "user-branch"\nrepros_dir = "user-repros"\nhttp_timeout = 3\n'
    )
    monkeypatch.setenv("CONTRIBKIT_CONFIG", str(user))
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".contribkit.toml").write_text('repo = "repo/two"\nbase_branch = "repo-branch"\n')
    env = {"CONTRIBKIT_REPO": "env/three"}
    s = load_settings({"repo": None}, root, env)
    assert s.get("repo") == "env/three" and s.sources["repo"] == "CONTRIBKIT_REPO"
    assert s.get("base_branch") == "repo-branch"
    assert s.get("repros_dir") == "user-repros"
    assert s.get("http_timeout") == 3.0
    assert s.get("upstream_remote") == "upstream"  # default
    s = load_settings({"repo": "cli/four"}, root, env)
    assert s.get("repo") == "cli/four" and s.sources["repo"] == "command line"


def test_unknown_key_warns_with_file_and_key(tmp_path: Path) -> None:
    (tmp_path / ".contribkit.toml").write_text('reop = "typo/here"\n[run]\nfoo = 1\n')
    s = load_settings({}, tmp_path, {})
    assert any(".contribkit.toml: unknown key 'reop'" in w for w in s.warnings)
    assert any("unknown key 'run.foo'" in w for w in s.warnings)
    assert any(w.endswith("unknown key 'reop' (ignored); did you mean 'repo'?") for w in s.warnings)


def test_config_shows_the_values_worked_out_at_run_time(run_cli: RunCli, fork_repo: Path) -> None:
    proc = run_cli("config", "--json", cwd=fork_repo)
    settings = json.loads(proc.stdout)["settings"]
    assert settings["repo"] == {
        "value": "pytorch/pytorch",
        "source": "default: git remote 'upstream'",
    }
    assert settings["python"]["source"] == "default: the interpreter running contribkit"
    assert settings["python"]["value"] == sys.executable
    assert settings["cache_dir"]["value"]  # the suite sets CONTRIBKIT_CACHE_DIR
    lines = run_cli("config", cwd=fork_repo).stdout.splitlines()
    for key in ("repo", "python", "cache_dir"):
        row = next(line for line in lines if line.split()[:1] == [key])
        assert "None" not in row, row


def test_list_from_env_and_type_errors(tmp_path: Path) -> None:
    s = load_settings({}, None, {"CONTRIBKIT_SCRUB_ENV": "CORP_*, MY_VAR"})
    assert s.get("scrub_env") == ["CORP_*", "MY_VAR"]
    with pytest.raises(ConfigError, match="http_timeout"):
        load_settings({}, None, {"CONTRIBKIT_HTTP_TIMEOUT": "never"})


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/pytorch/pytorch.git", ("github.com", "pytorch/pytorch")),
        ("https://github.com/pytorch/pytorch", ("github.com", "pytorch/pytorch")),
        ("git@github.com:alice/pytorch.git", ("github.com", "alice/pytorch")),
        ("ssh://git@github.com/alice/pytorch.git", ("github.com", "alice/pytorch")),
        ("https://user@ghe.corp.com:8443/team/pytorch/", ("ghe.corp.com", "team/pytorch")),
        ("/local/path/repo.git", None),
        ("", None),
    ],
)
def test_parse_remote_url(url: str, expected: tuple[str, str] | None) -> None:
    assert parse_remote_url(url) == expected


def test_repo_resolution_order(fork_repo: Path) -> None:
    assert Workspace.load().repo() == ("pytorch/pytorch", "git remote 'upstream'")
    git("remote", "remove", "upstream", cwd=fork_repo)
    assert Workspace.load().repo() == ("contributor/pytorch", "git remote 'origin'")
    git("remote", "remove", "origin", cwd=fork_repo)
    assert Workspace.load().repo() == (DEFAULT_REPO, "default")
    assert Workspace.load(repo="me/mine").repo() == ("me/mine", "command line")


def test_repo_config_is_kept_out_of_git(fork_repo: Path) -> None:
    (fork_repo / ".contribkit.toml").write_text('base_branch = "main"\n')
    Workspace.load()
    assert "/.contribkit.toml" in (fork_repo / ".git" / "info" / "exclude").read_text()
    assert git("status", "--porcelain", cwd=fork_repo) == ""


def test_typed_accessors_check_the_declared_type(tmp_path: Path) -> None:
    s = load_settings({"run.jobs": 3}, None, {"CONTRIBKIT_HOOKS_ALLOW_WIP": "yes"})
    assert s.integer("run.jobs") == 3 and s.number("run.timeout") == 900.0
    assert s.flag("hooks.allow_wip") is True
    assert s.names("run.devices") == ["cpu", "cuda"]
    assert s.text("base_branch") == "main" and s.optional_text("repo") is None
    with pytest.raises(TypeError, match=r"'run\.jobs' is a int, not a str"):
        s.text("run.jobs")
    with pytest.raises(TypeError, match="has no default"):
        s.text("repo")
    with pytest.raises(KeyError):
        s.flag("no.such.key")


# -- trust for the repository's config ------------------------------------------------------------
EVIL_CONFIG = (
    'python = "./evil.sh"\n'
    'github_url = "http://evil.example/api"\n'
    'base_branch = "dev"\n'
    "[run]\n"
    'cuda_host = "evil-host"\n'
    'cuda_python = "./evil.sh"\n'
)


def test_an_untrusted_repo_config_chooses_no_executable(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    config = root / ".contribkit.toml"
    config.write_text(EVIL_CONFIG)
    s = load_settings({}, root, {})
    assert s.optional_text("python") is None
    assert s.text("github_url") == "https://api.github.com"
    assert s.optional_text("run.cuda_host") is None
    assert s.text("run.cuda_python") == "python3"
    assert s.text("base_branch") == "dev"  # the rest of the file counts
    ignored = [w for w in s.warnings if "ignored: it is not trusted" in w]
    assert len(ignored) == 4
    assert all("`contribkit config --trust`" in w for w in ignored)
    assert any("'run.cuda_host' ignored" in w for w in ignored)

    trust.trust(config)
    s = load_settings({}, root, {})
    assert (
        s.optional_text("python") == "./evil.sh" and s.optional_text("run.cuda_host") == "evil-host"
    )
    assert s.warnings == []

    config.write_text(EVIL_CONFIG.replace("evil-host", "other-host"))  # trust goes with content
    s = load_settings({}, root, {})
    assert s.optional_text("run.cuda_host") is None
    assert any("it changed since you trusted it" in w for w in s.warnings)

    trust.trust(config)
    assert trust.untrust(config) and not trust.untrust(config)
    assert load_settings({}, root, {}).optional_text("python") is None


def test_an_untrusted_repo_config_sends_no_leg_anywhere(tmp_path: Path) -> None:
    """A branch's own file may not pick the engine, the cluster or the shared folder."""
    root = tmp_path / "repo"
    root.mkdir()
    config = root / ".contribkit.toml"
    config.write_text(
        '[run]\nengine = "ray"\n[ray]\naddress = "ray://evil:10001"\nnum_cpus = 1\n'
        '[slurm]\npartition = "theirs"\nfolder = "/tmp/theirs"\ncluster = "slurm"\n'
    )
    s = load_settings({}, root, {})
    assert s.text("run.engine") == "local"
    assert s.optional_text("ray.address") is None
    assert s.optional_text("slurm.partition") is None
    assert s.optional_text("slurm.folder") is None
    assert s.text("slurm.cluster") == "auto"
    assert s.integer("ray.num_cpus") == 1  # the size of a local cluster sends nothing anywhere
    assert len([w for w in s.warnings if "ignored: it is not trusted" in w]) == 5
    trust.trust(config)
    s = load_settings({}, root, {})
    assert s.text("run.engine") == "ray" and s.optional_text("ray.address") == "ray://evil:10001"


def test_the_users_own_config_needs_no_trust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user.toml"
    user.write_text('python = "/usr/bin/python3"\n')
    monkeypatch.setenv("CONTRIBKIT_CONFIG", str(user))
    assert load_settings({}, None, {}).optional_text("python") == "/usr/bin/python3"


@pytest.mark.parametrize(
    ("key", "guarded"),
    [
        ("python", True),
        ("github_url", True),
        ("run.cuda_host", True),
        ("run.cuda_python", True),
        ("build.command", True),
        ("run.engine", True),
        ("ray.address", True),
        ("slurm.partition", True),
        ("slurm.folder", True),
        ("slurm.cluster", True),
        ("ray.num_cpus", False),
        ("slurm.max_parallel", False),
        ("base_branch", False),
        ("http_timeout", False),
        ("hooks.scratch_patterns", False),
    ],
)
def test_which_keys_need_trust(key: str, guarded: bool) -> None:
    assert trust.needs_trust(key) is guarded


def test_doctor_never_runs_an_untrusted_python(
    run_cli: RunCli, fork_repo: Path, shared_cache: str
) -> None:
    marker = fork_repo / "evil-ran"
    evil = fork_repo / "evil.sh"
    evil.write_text(f"#!/bin/sh\ntouch {marker}\necho '{{}}'\n")
    evil.chmod(0o755)
    (fork_repo / ".contribkit.toml").write_text('python = "./evil.sh"\n')
    proc = run_cli("doctor", cwd=fork_repo, env={"CONTRIBKIT_CACHE_DIR": shared_cache})
    assert not marker.exists(), proc.stdout + proc.stderr
    assert "'python' ignored: it is not trusted" in proc.stderr
    assert "contribkit config --trust" in proc.stderr

    trusted = run_cli("config", "--trust", cwd=fork_repo)
    assert trusted.returncode == 0 and "trusted: " in trusted.stdout
    shown = json.loads(run_cli("config", "--json", cwd=fork_repo).stdout)
    assert shown["settings"]["python"]["value"] == "./evil.sh"
    untrusted = run_cli("config", "--untrust", cwd=fork_repo)
    assert untrusted.returncode == 0 and "untrusted: " in untrusted.stdout
    shown = json.loads(run_cli("config", "--json", cwd=fork_repo).stdout)
    assert shown["settings"]["python"]["value"] == sys.executable


def test_trust_needs_a_file_in_a_repository(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli("config", "--trust", cwd=tmp_path)
    assert proc.returncode == 2 and "not inside a git repository" in proc.stderr
    git("init", "-q", cwd=tmp_path)
    proc = run_cli("config", "--trust", cwd=tmp_path)
    assert proc.returncode == 2 and ".contribkit.toml: no such file" in proc.stderr


def test_the_readme_documents_every_key_with_its_env_var() -> None:
    readme = (Path(__file__).resolve().parent.parent.parent / "README.md").read_text(
        encoding="utf-8"
    )
    rows = re.findall(r"^\| `([a-z_.]+)` \| `(CONTRIBKIT_[A-Z_]+)` \|", readme, re.M)
    assert [key for key, _ in rows] == list(KEYS)  # every key, once, in KEYS' order
    assert all(env == env_name(key) for key, env in rows)
