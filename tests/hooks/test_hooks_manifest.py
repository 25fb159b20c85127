"""The published hooks agree everywhere they are declared; their console scripts are light."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from contribkit.conventions.hooklist import HOOK_MODULES, HOOK_RUNS
from contribkit.conventions.rules import RULES
from contribkit.core.config import read_toml
from contribkit.setup.hookinstall import render_config, render_snippet
from tests.conftest import commit_files, git

ROOT = Path(__file__).resolve().parent.parent.parent
MANIFEST = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
BY_ID = {hook["id"]: hook for hook in MANIFEST}
# the keys that decide when a hook runs and what it receives
BEHAVIOUR = (
    "stages",
    "always_run",
    "pass_filenames",
    "files",
    "types",
    "verbose",
    "require_serial",
)
HEAVY = ("click", "jinja2", "github", "git", "yaml", "rich", "torch", "markdown_it", "requests")
# What the commit-msg hook, run on every commit, must not import (each costs milliseconds).
SLOW_STDLIB = (
    "argparse",
    "dataclasses",
    "typing",
    "tomllib",
    "pathlib",
    "platformdirs",
    "subprocess",  # in the main work tree the branch is read from .git/HEAD
)
RULE_FAMILY = {
    "contribkit-commit-msg": "CK1",
    "contribkit-branch-name": "CK2",
    "contribkit-no-debug-leftovers": "CK3",
    "contribkit-no-scratch-files": "CK4",
    "contribkit-test-conventions": "CK5",
    "contribkit-tests-required": "CK6",
    "contribkit-pr-scope": "CK7",
    "contribkit-lintrunner": "CK8",
}


# each hook module's HookSpec, which names its hook id and rule family
SPECS = {
    hook_id: importlib.import_module(f"contribkit.hooks.{module}").SPEC
    for hook_id, module in HOOK_MODULES.items()
}
README = (ROOT / "README.md").read_text()


def script(hook_id: str) -> str:
    return str(Path(sys.executable).parent / hook_id)


def test_manifest_validates_with_precommit_files() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pre_commit",
            "validate-manifest",
            str(ROOT / ".pre-commit-hooks.yaml"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_manifest_scripts_and_modules_agree() -> None:
    scripts = read_toml(ROOT / "pyproject.toml")["project"]["scripts"]
    assert list(BY_ID) == list(HOOK_MODULES) == list(RULE_FAMILY)
    for hook_id, module in HOOK_MODULES.items():
        hook = BY_ID[hook_id]
        assert hook["entry"] == hook_id and hook["language"] == "python"
        assert hook["minimum_pre_commit_version"] == "3.2.0"
        assert scripts[hook_id] == f"contribkit.hooks.{module}:main"
        assert SPECS[hook_id].hook_id == hook_id
        assert SPECS[hook_id].rule_prefix == RULE_FAMILY[hook_id]
    hook_scripts = [name for name in scripts if name != "contribkit"]
    assert hook_scripts == list(HOOK_MODULES)  # no console script for a hook that is not listed
    assert BY_ID["contribkit-commit-msg"]["stages"] == ["commit-msg"]
    assert BY_ID["contribkit-commit-msg"]["always_run"] is True
    for pre_push in ("contribkit-tests-required", "contribkit-pr-scope"):
        assert BY_ID[pre_push]["stages"] == ["pre-push"]
        assert BY_ID[pre_push]["pass_filenames"] is False
    assert re.search(BY_ID["contribkit-test-conventions"]["files"], "test/nn/test_relu.py")
    assert not re.search(BY_ID["contribkit-test-conventions"]["files"], "torch/nn/test_x.py")


def test_stage_runner_follows_the_manifest() -> None:
    """The native stage runner gives each hook what pre-commit would: HOOK_RUNS says what the
    manifest says, with pre-commit's defaults."""
    assert list(HOOK_RUNS) == list(BY_ID)
    for hook_id, run in HOOK_RUNS.items():
        hook = BY_ID[hook_id]
        assert list(run.stages) == hook["stages"], hook_id
        assert run.files == hook.get("files", ""), hook_id
        assert run.exclude == hook.get("exclude", "^$"), hook_id
        assert list(run.types) == hook.get("types", ["file"]), hook_id
        assert run.always_run == hook.get("always_run", False), hook_id
        assert run.pass_filenames == hook.get("pass_filenames", True), hook_id
    assert [h for h, run in HOOK_RUNS.items() if run.opt_in] == ["contribkit-lintrunner"]


def test_init_config_declares_the_same_hooks(tmp_path: Path) -> None:
    text = render_config("4.7.0", lintrunner=True)
    config = yaml.safe_load(text)
    (local,) = config["repos"]
    assert local["repo"] == "local"
    assert config["default_install_hook_types"] == ["pre-commit", "commit-msg", "pre-push"]
    hooks = {hook["id"]: hook for hook in local["hooks"]}
    assert list(hooks) == list(BY_ID)
    for hook_id, hook in hooks.items():
        assert hook["language"] == "unsupported"
        assert hook["entry"].endswith(hook_id) or hook["entry"].endswith(HOOK_MODULES[hook_id])
        for key in BEHAVIOUR:
            assert hook.get(key) == BY_ID[hook_id].get(key), (hook_id, key)
    path = tmp_path / "config.yaml"  # what init writes for the pre-commit installed here is valid
    path.write_text(render_config(importlib.metadata.version("pre-commit"), lintrunner=True))
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", str(path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # older pre-commit calls the language "system"; lintrunner is on demand unless asked for
    older = yaml.safe_load(render_config("3.8.0", lintrunner=False))["repos"][0]["hooks"]
    assert {hook["language"] for hook in older} == {"system"}
    assert older[-1]["stages"] == ["manual"]


def test_snippet_lists_the_published_hooks() -> None:
    snippet = yaml.safe_load("repos:\n" + render_snippet())
    (repo,) = snippet["repos"]
    assert repo["repo"].startswith("https://github.com/")
    assert [hook["id"] for hook in repo["hooks"]] == list(BY_ID)[:-1]  # lintrunner opt-in
    assert "contribkit-lintrunner" in render_snippet()


def test_readme_lists_the_same_hooks() -> None:
    """The README's hook table (id, rules) and its pre-commit snippet follow the hook list."""
    rows = re.findall(r"^\| `(contribkit-[a-z-]+)` \|.*\| (CK\d+)(?:–(CK\d+))? \|$", README, re.M)
    assert [hook_id for hook_id, _, _ in rows] == list(HOOK_MODULES)
    for hook_id, first, last in rows:
        family = sorted(r for r in RULES if r.startswith(RULE_FAMILY[hook_id]))
        assert (first, last or first) == (family[0], family[-1]), hook_id
    snippet = README.split("  - repo: https://github.com/contribkit/contribkit\n", 1)[1]
    listed = re.findall(r"^      - id: (\S+)$", snippet.split("```", 1)[0], re.M)
    assert listed == list(HOOK_MODULES)[:-1]  # lintrunner is opt-in, as in render_snippet()


def test_rule_catalog() -> None:
    slugs = [rule.slug for rule in RULES.values()]
    assert len(set(slugs)) == len(slugs)
    for rule_id, rule in RULES.items():
        assert re.fullmatch(r"CK[1-8]\d\d|CKP\d\d", rule_id) and rule.id == rule_id
        assert rule.severity in ("error", "warning") and rule.hint
    missing = [rule_id for rule_id in RULES if rule_id not in README]
    assert not missing, f"README.md does not document {missing}"


GUARD = """
import sys
from contribkit.hooks.{module} import main
code = main({argv!r})
print(f"CODE={{code}}", file=sys.stderr)
modules = {{m.split(".")[0] for m in sys.modules}}
print("HEAVY=" + ",".join(sorted(modules & set({heavy!r}))), file=sys.stderr)
print("SLOW=" + ",".join(sorted(modules & set({slow!r}))), file=sys.stderr)
"""
FAKE_LINTRUNNER = "#!/bin/sh\necho 'Error (FLAKE8) torch/bad.py:1: BAD'\nexit 1\n"


def real_inputs(hook_id: str, repo: Path, tmp_path: Path) -> tuple[list[str], dict[str, str], str]:
    """Inputs on which a hook's check() goes all the way, and a rule id it must then report:
    ``(argv, extra environment, rule id)``."""
    git("switch", "-q", "-c", "fix/12345-relu", cwd=repo)
    if hook_id == "contribkit-commit-msg":  # git's editor template: comment rules from git config
        (repo / ".git" / "COMMIT_EDITMSG").write_text(
            "[nn] Fixed relu\n\nA body.\n# Please enter the commit message for your changes. "
            "Lines starting\n# with '#' will be ignored.\n"
            "# ------------------------ >8 ------------------------\ndiff --git a/x b/x\n"
        )
        return [".git/COMMIT_EDITMSG"], {}, "CK109"
    if hook_id == "contribkit-branch-name":  # a pushed range: the WIP check reads git log
        git("switch", "-q", "-c", "my-feature", cwd=repo)
        commit_files(repo, {"torch/nn/functional.py": "x = 1\n"}, "fixup! Fix relu")
        return ["--from-ref", "main"], {}, "CK204"
    if hook_id == "contribkit-no-debug-leftovers":
        (repo / "torch" / "dbg.py").write_text("import pdb\n\n\ndef f():\n    breakpoint()\n")
        return ["torch/dbg.py", "torch/nn/functional.py"], {}, "CK301"
    if hook_id == "contribkit-no-scratch-files":
        (repo / "repros" / "issue-1").mkdir(parents=True)
        (repo / "repros" / "issue-1" / "repro.py").write_text("print(1)\n")
        return ["repros/issue-1/repro.py", "torch/nn/functional.py"], {}, "CK401"
    if hook_id == "contribkit-test-conventions":
        (repo / "test" / "test_relu.py").write_text(
            "from torch.testing._internal.common_utils import TestCase\n\n\n"
            "class TestRelu(TestCase):\n    def test_relu(self, device):\n"
            "        x = make('cuda')\n"
        )
        return ["test/test_relu.py"], {}, "CK501"
    if hook_id == "contribkit-tests-required":
        commit_files(repo, {"torch/nn/functional.py": "def relu(x):\n    return x\n\n"}, "Fix relu")
        return ["--from-ref", "main"], {}, "CK601"
    if hook_id == "contribkit-pr-scope":
        many = {f"{top}/x.py": "x = 1\n" for top in ("torch", "aten", "c10", "docs", "tools")}
        commit_files(repo, many, "Touch everything")
        return ["--from-ref", "main"], {}, "CK701"
    assert hook_id == "contribkit-lintrunner"
    (repo / ".lintrunner.toml").write_text("[[linter]]\ncode = 'FLAKE8'\n")
    (repo / "torch" / "bad.py").write_text("BAD = 1\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "lintrunner").write_text(FAKE_LINTRUNNER)
    (bin_dir / "lintrunner").chmod(0o755)
    saved = tmp_path / "data" / "lintrunner" / "0123abcd"  # as `lintrunner init` leaves it
    saved.mkdir(parents=True)
    (saved / ".lintrunner.toml").write_text((repo / ".lintrunner.toml").read_text())
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    return ["torch/bad.py"], env, "CK803"


def guarded_run(module: str, argv: list[str], repo: Path, env: dict[str, str]) -> dict[str, str]:
    """Run the hook's real main() in a fresh interpreter; what it printed, and what it imported."""
    base = {k: v for k, v in os.environ.items() if k != "CONTRIBKIT_CONFIG"}
    base["XDG_CONFIG_HOME"] = str(repo / "no-config")
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            GUARD.format(module=module, argv=argv, heavy=HEAVY, slow=SLOW_STDLIB),
        ],
        capture_output=True,
        text=True,
        cwd=repo,
        env={**base, **env},
    )
    found = dict(
        line.split("=", 1)
        for line in proc.stderr.splitlines()
        if line.startswith(("CODE=", "HEAVY=", "SLOW="))
    )
    assert set(found) == {"CODE", "HEAVY", "SLOW"}, proc.stdout + proc.stderr
    return {**found, "output": proc.stdout}


@pytest.mark.parametrize("hook_id", list(HOOK_MODULES))
def test_hooks_import_nothing_heavy(hook_id: str, fork_repo: Path, tmp_path: Path) -> None:
    """Each hook's main() runs its whole check on real inputs (a repo, a message, source files, a
    pushed range) until it reports a rule; only then is sys.modules inspected."""
    argv, env, rule_id = real_inputs(hook_id, fork_repo, tmp_path)
    found = guarded_run(HOOK_MODULES[hook_id], argv, fork_repo, env)
    assert re.search(rf"^(.*: )?(error|warning) {rule_id} ", found["output"], re.M), found[
        "output"
    ]  # it ran
    assert found["CODE"] == ("1" if RULES[rule_id].severity == "error" else "0")
    assert found["HEAVY"] == "", found


def test_the_stage_runner_imports_nothing_heavy(fork_repo: Path) -> None:
    """One process runs every pre-commit-stage check on staged files, standard library only."""
    git("switch", "-q", "-c", "fix/12345-relu", cwd=fork_repo)
    (fork_repo / "torch" / "dbg.py").write_text("import pdb\n")
    (fork_repo / "test" / "test_relu.py").write_text("x = 1\n")
    git("add", "-A", cwd=fork_repo)
    found = guarded_run("stage", ["pre-commit"], fork_repo, {})
    assert "torch/dbg.py:1: error CK302 debugger-import" in found["output"]
    assert "test/test_relu.py:1: error CK501 owner-missing" in found["output"]
    assert found["CODE"] == "1" and found["HEAVY"] == "", found


def test_the_commit_msg_hook_stays_on_the_lean_path(fork_repo: Path) -> None:
    """What every commit costs: a good message on an issue branch, in the main work tree."""
    git("switch", "-q", "-c", "fix/12345-relu", cwd=fork_repo)
    (fork_repo / ".git" / "COMMIT_EDITMSG").write_text("[nn] Fix relu\n\nFixes #12345\n")
    found = guarded_run("commit_msg", [".git/COMMIT_EDITMSG"], fork_repo, {})
    assert (found["CODE"], found["output"]) == ("0", "")
    assert found["HEAVY"] == "" and found["SLOW"] == "", found


@pytest.mark.parametrize("hook_id", list(HOOK_MODULES))
def test_console_scripts_have_help(hook_id: str) -> None:
    proc = subprocess.run([script(hook_id), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"usage: {hook_id} ")
    family = [r for r in RULES if r.startswith(RULE_FAMILY[hook_id])]
    assert family and all(rule_id in proc.stdout for rule_id in family)
    assert "Example:" in proc.stdout


def test_console_scripts_check_and_exit(fork_repo: Path) -> None:
    message = fork_repo / ".git" / "COMMIT_EDITMSG"
    message.write_text("Fixed relu.\n")
    proc = subprocess.run(
        [script("contribkit-commit-msg"), ".git/COMMIT_EDITMSG"], capture_output=True, text=True
    )
    assert proc.returncode == 0  # style advice: shown, never blocking
    assert proc.stdout.startswith("1: warning CK102 title-trailing-period: ")
    proc = subprocess.run(
        [script("contribkit-commit-msg"), ".git/COMMIT_EDITMSG"],
        capture_output=True,
        text=True,
        env={**os.environ, "CONTRIBKIT_HOOKS_STRICT": "1"},
    )
    assert proc.returncode == 1  # hooks.strict: the same finding blocks
    assert proc.stdout.startswith("1: error CK102 title-trailing-period: ")
    message.write_text("[nn] Fix relu\n")
    proc = subprocess.run(
        [script("contribkit-commit-msg"), ".git/COMMIT_EDITMSG"], capture_output=True, text=True
    )
    assert (proc.returncode, proc.stdout) == (0, "")
    (fork_repo / "torch" / "dbg.py").write_text("breakpoint()\n")
    proc = subprocess.run(
        [script("contribkit-no-debug-leftovers"), "torch/dbg.py"], capture_output=True, text=True
    )
    assert proc.returncode == 1 and "torch/dbg.py:1: error CK301 breakpoint" in proc.stdout
    proc = subprocess.run(
        [script("contribkit-branch-name"), "--bogus"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "unrecognized arguments: --bogus" in proc.stderr
