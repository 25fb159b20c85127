"""``contribkit doctor``: is this machine and fork set up for contributing to PyTorch?"""

from __future__ import annotations

import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from contribkit.cli import options
from contribkit.core.errors import ContribkitError
from contribkit.core.workspace import Workspace, parse_remote_url

if TYPE_CHECKING:
    from contribkit.setup.hookstate import HookState


@dataclass
class Check:
    name: str
    status: str  # OK, WARN, FAIL
    detail: str
    hint: str = ""


def looks_like_pytorch(root: Path) -> bool:
    return (root / "torch").is_dir() and (root / "aten").is_dir()


def is_source_checkout(root: Path) -> bool:
    return (
        looks_like_pytorch(root)
        and (root / "setup.py").is_file()
        and (root / "CMakeLists.txt").is_file()
    )


def check_repo(ws: Workspace) -> list[Check]:
    if ws.root is None:
        return [
            Check(
                "git repo",
                "WARN",
                "not inside a git repository; fork checks skipped",
                "cd into your PyTorch fork to check it",
            )
        ]
    checks = [Check("git repo", "OK", str(ws.root))]
    upstream_name = ws.settings.text("upstream_remote")
    checks.append(upstream_check(ws, upstream_name))
    checks.append(fork_check(ws, "origin"))
    repo, source = ws.repo()
    checks.append(Check("target repo", "OK", f"{repo} (from {source})"))
    return checks


PYTORCH_URL = "https://github.com/pytorch/pytorch.git"


def _remote(ws: Workspace, name: str) -> tuple[str | None, str | None, str]:
    """The remote's URL, its GitHub OWNER/NAME (None for a local path or another host's URL),
    and how doctor shows it."""
    url = ws.remote_url(name)
    parsed = parse_remote_url(url) if url else None
    slug = parsed[1] if parsed else None
    shown = f"'{name}' -> {slug or url}"
    if url and slug is None:
        shown += " (not a GitHub URL: the target repo comes from `repo` or the default)"
    return url, slug, shown


def upstream_check(ws: Workspace, name: str) -> Check:
    url, slug, shown = _remote(ws, name)
    if url is None:
        return Check(
            "upstream remote",
            "WARN",
            f"no remote named '{name}'",
            f"git remote add {name} {PYTORCH_URL}",
        )
    if slug is not None and slug.lower() != "pytorch/pytorch":
        return Check("upstream remote", "WARN", shown, f"git remote set-url {name} {PYTORCH_URL}")
    return Check("upstream remote", "OK", shown)


def fork_check(ws: Workspace, name: str) -> Check:
    url, slug, shown = _remote(ws, name)
    if url is None:
        return Check(
            "fork remote",
            "WARN",
            f"no remote named '{name}'",
            f"git remote add {name} <your fork's URL>",
        )
    if slug is not None and slug.lower() == "pytorch/pytorch":
        return Check(
            "fork remote",
            "WARN",
            f"'{name}' is pytorch/pytorch itself, not your fork",
            f"fork on GitHub, then: git remote rename {name} upstream && git remote add {name} <your fork>",
        )
    return Check("fork remote", "OK", shown)


def check_torch(ws: Workspace) -> list[Check]:
    from contribkit.core.cache import JsonCache, cache_root
    from contribkit.run.probe import probe_torch

    python = ws.python()
    try:
        info = probe_torch(
            python,
            JsonCache(cache_root(ws.settings), "probes"),
            scrub=ws.settings.names("scrub_env"),
        )
    except ContribkitError as exc:
        return [Check("torch", "FAIL", exc.message, exc.hint or "")]
    if not info.torch:
        return [
            Check(
                "torch",
                "WARN",
                f"not importable by {python} ({info.error})",
                "install torch in that interpreter, or pass --python PATH",
            ),
            test_deps_check(ws, python),
        ]
    build = "debug build" if info.debug else "release build"
    detail = (
        f"{info.torch_version} ({build}, git {(info.git_version or 'unknown')[:12]}) in {python}"
    )
    checks = [Check("torch", "OK", detail)]
    if info.cuda_available:
        names = ", ".join(info.device_names) or "?"
        checks.append(Check("CUDA", "OK", f"{info.device_count} device(s): {names}"))
    elif info.cuda_build:
        checks.append(
            Check(
                "CUDA",
                "WARN",
                f"built with CUDA {info.cuda_build}, but no GPU is available",
                "CUDA cells will be NOT_AVAILABLE; run them on a GPU machine",
            )
        )
    else:
        checks.append(Check("CUDA", "OK", "CPU-only build; CUDA cells will be NOT_AVAILABLE"))
    return [*checks, test_deps_check(ws, python)]


def test_deps_check(ws: Workspace, python: str) -> Check:
    """What PyTorch's test files need beside torch (``contribkit test``, ``run`` of a test file,
    ``demo``), with the one line that installs what is missing."""
    from contribkit.core.cache import JsonCache, cache_root
    from contribkit.run.testdeps import check_test_deps

    try:
        deps = check_test_deps(
            python,
            JsonCache(cache_root(ws.settings), "probes"),
            scrub=ws.settings.names("scrub_env"),
            root=ws.root,
        )
    except ContribkitError as exc:
        return Check("test deps", "WARN", exc.message, exc.hint or "")
    if deps.missing:
        return Check(
            "test deps",
            "WARN",
            f"{', '.join(deps.missing)} missing in {deps.python}: `test` and `run` of test files fail",
            deps.fix,
        )
    return Check("test deps", "OK", f"{', '.join(deps.checked)} importable")


def check_github(ws: Workspace) -> list[Check]:
    from contribkit.github.auth import resolve_token

    gh = shutil.which("gh")
    token = resolve_token(ws.settings.text("github_url"))
    if token:
        detail = f"token from {token.source}" + ("" if gh else "; gh not installed")
        hint = "" if gh else "install gh (https://cli.github.com) for `contribkit submit`"
        return [Check("GitHub auth", "OK" if gh else "WARN", detail, hint)]
    if gh:
        return [
            Check(
                "GitHub auth",
                "WARN",
                "gh is installed but not logged in; requests are anonymous (60/hour)",
                "gh auth login",
            )
        ]
    return [
        Check(
            "GitHub auth",
            "WARN",
            "no gh and no GH_TOKEN; requests are anonymous (60/hour)",
            "install gh and run `gh auth login`, or export GH_TOKEN",
        )
    ]


def check_hooks(ws: Workspace) -> list[Check]:
    from importlib.metadata import PackageNotFoundError, version

    from contribkit.setup.hookstate import hook_states, hooks_path_override

    states = hook_states(ws.root) if ws.root is not None else []
    try:
        checks = [Check("pre-commit", "OK", f"pre-commit {version('pre-commit')}")]
    except PackageNotFoundError:
        if any(s.engine == "pre-commit" for s in states):
            checks = [
                Check(
                    "pre-commit",
                    "WARN",
                    "not installed beside contribkit, and the hooks run it",
                    "pip install pre-commit  (or contribkit init, for the native hooks)",
                )
            ]
        else:
            checks = [Check("pre-commit", "OK", "not installed (the native hooks need none)")]
    if ws.root is None:
        return checks
    override = hooks_path_override(ws.root)
    if override:
        checks.append(
            Check(
                "git hooks",
                "WARN",
                f"core.hooksPath is set to {override}; pre-commit will not install",
                "git config --unset core.hooksPath",
            )
        )
    ours = [s.hook_type for s in states if s.ours]
    others = [s.hook_type for s in states if s.installed and not s.ours]
    missing = [s.hook_type for s in states if not s.ours]
    detail = f"contribkit: {', '.join(ours) or 'none'}"
    if others:
        detail += f"; other hooks: {', '.join(others)}"
    status = "OK" if not missing else "WARN"
    hint = (
        ""
        if not missing
        else f"contribkit init  (installs {', '.join(missing)}; commit-msg and pre-push hooks do nothing until installed)"
    )
    checks.append(Check("git hooks", status, detail, hint))
    if any(s.ours and not s.native for s in states):
        checks.append(check_hook_config(ws.root))
    native = [s for s in states if s.native]
    if native:
        checks.append(check_native_hooks(native))
    return checks


def check_native_hooks(states: list[HookState]) -> Check:
    """The native hooks run the interpreter that installed them: it must still exist."""
    from contribkit.setup.hookinstall import installed_python

    for state in states:
        python = installed_python(state)
        if not python or not Path(python).exists():
            return Check(
                "hook runner",
                "FAIL",
                f"the {state.hook_type} hook runs {python or '?'}, which no longer exists "
                "(moved or deleted environment?)",
                "contribkit init  (from the environment contribkit is installed in now)",
            )
    return Check("hook runner", "OK", f"native, run by {installed_python(states[0])}")


def check_hook_config(root: Path) -> Check:
    """contribkit's hooks need their config, and the programs it names."""
    from contribkit.setup.hookstate import contribkit_config_path, missing_hook_commands

    config = contribkit_config_path(root)
    if not config.is_file():
        return Check(
            "hook config",
            "FAIL",
            f"{config} is missing: every commit will fail",
            "contribkit init",
        )
    gone = missing_hook_commands(config)
    if gone:
        return Check(
            "hook config",
            "FAIL",
            f"the hooks run {gone[0]}, which no longer exists (moved or deleted environment?)",
            "contribkit init  (from the environment contribkit is installed in now)",
        )
    return Check("hook config", "OK", str(config))


def check_pytorch_tools(ws: Workspace) -> list[Check]:
    if ws.root is None or not looks_like_pytorch(ws.root):
        return []
    checks = []
    if (ws.root / ".lintrunner.toml").is_file():
        if not shutil.which("lintrunner"):
            checks.append(
                Check(
                    "lintrunner",
                    "WARN",
                    "not installed",
                    "pip install lintrunner && lintrunner init",
                )
            )
        else:
            from contribkit.setup.lintrunner import initialised

            state = initialised(ws.root)
            if state is None:
                checks.append(
                    Check(
                        "lintrunner",
                        "FAIL",
                        "installed, but `lintrunner init` was never run here",
                        "lintrunner init",
                    )
                )
            elif state is False:
                checks.append(
                    Check(
                        "lintrunner",
                        "WARN",
                        ".lintrunner.toml changed since the last init",
                        "lintrunner init",
                    )
                )
            else:
                checks.append(Check("lintrunner", "OK", "installed and initialised"))
    if is_source_checkout(ws.root):
        for tool, why in (("ninja", "faster incremental builds"), ("ccache", "cached rebuilds")):
            found = shutil.which(tool)
            checks.append(
                Check(
                    tool,
                    "OK" if found else "WARN",
                    found or f"not found ({why})",
                    "" if found else f"install {tool}",
                )
            )
        checks.append(max_jobs_check())
    return checks


def max_jobs_check() -> Check:
    cores = os.cpu_count() or 1
    try:
        mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        mem_gib = 0.0
    suggested = max(1, min(cores, int(mem_gib // 3))) if mem_gib else cores
    current = os.environ.get("MAX_JOBS")
    if current:
        return Check("MAX_JOBS", "OK", f"MAX_JOBS={current} ({cores} cores, {mem_gib:.0f} GiB RAM)")
    if suggested < cores:
        return Check(
            "MAX_JOBS",
            "WARN",
            f"unset: a build uses all {cores} cores, but {mem_gib:.0f} GiB RAM "
            f"fits about {suggested} compile jobs",
            f"export MAX_JOBS={suggested}",
        )
    return Check("MAX_JOBS", "OK", f"unset; {cores} cores and {mem_gib:.0f} GiB RAM are enough")


@click.command()
@options.python
@options.repo
@options.github_url
@options.json_output
@options.verbose
def doctor(python: str | None, repo: str | None, github_url: str | None, as_json: bool) -> int:
    """Check that your fork, torch, gh and hooks are set up.

    Every check is OK, WARN or FAIL with a one-line fix. Exits 1 when any check FAILs.

    \b
    Example:
      contribkit doctor --python ~/pytorch/venv/bin/python
    """
    from contribkit.cli.output import print_json, print_table

    ws = Workspace.load(python=python, repo=repo, github_url=github_url)
    checks = [
        *check_repo(ws),
        *check_torch(ws),
        *check_github(ws),
        *check_hooks(ws),
        *check_pytorch_tools(ws),
    ]
    failed = any(c.status == "FAIL" for c in checks)
    if as_json:
        print_json({"ok": not failed, "checks": [asdict(c) for c in checks]})
    else:
        print_table(
            ["check", "status", "detail", "fix"],
            [(c.name, c.status, c.detail, c.hint) for c in checks],
        )
        counts = {s: sum(c.status == s for c in checks) for s in ("OK", "WARN", "FAIL")}
        click.echo(f"\n{counts['OK']} ok, {counts['WARN']} warning(s), {counts['FAIL']} failure(s)")
    return 1 if failed else 0
