"""Installing contribkit's hooks beside the tracked tree: the core of ``contribkit init``.

PyTorch uses lintrunner, not pre-commit, so a PR must never gain a ``.pre-commit-config.yaml``.
Three engines install the pre-commit, commit-msg and pre-push hooks, all inside the git directory:

- ``native`` (the default): a small script per git hook that runs all of that stage's checks in
  one Python process (:mod:`contribkit.hooks.stage`, :mod:`contribkit.setup.nativehooks`).
- ``pre-commit`` and ``prek``: contribkit writes a config at
  ``.git/contribkit/pre-commit-config.yaml`` and has that runner install its hooks from it. The
  config's hooks are ``repo: local`` ones whose entries are the console scripts beside
  ``sys.executable``, so they run offline with no hook environment to build.

A repository that tracks its own pre-commit config gets a snippet to add to it instead.

Nothing here touches a tracked file. :func:`plan_install` and :func:`plan_uninstall` only look;
:func:`apply` makes the changes a plan describes.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import string
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from contribkit import __version__
from contribkit.conventions.hooklist import HOOK_MODULES
from contribkit.core.datadirs import data_dir
from contribkit.core.errors import BadInput, CheckFailed
from contribkit.core.fsutil import atomic_write
from contribkit.git import cmd as gitcmd
from contribkit.setup import nativehooks
from contribkit.setup.hookstate import (
    HookState,
    contribkit_config_path,
    hook_states,
    hooks_path_override,
)

ENGINES = ("native", "pre-commit", "prek")

TEMPLATE = "pre-commit-config.yaml"
SNIPPET = "pre-commit-snippet.yaml"
REPO_URL = "https://github.com/contribkit/contribkit"
TRACKED_CONFIG = ".pre-commit-config.yaml"
MIN_PRE_COMMIT = (3, 2, 0)
UNSUPPORTED_LANGUAGE_SINCE = (4, 4, 0)  # "system" was renamed "unsupported" in pre-commit 4.4.0
CHECKSUM_PREFIX = "# contribkit-checksum: sha256:"
# Beside the config: the .git/info/exclude lines init added, so that --uninstall removes only those.
EXCLUDES_RECORD = "excludes-added.json"


@dataclass
class HookChange:
    hook_type: str
    before: str  # none | contribkit | pre-commit (CONFIG) | your own script
    action: str  # install | keep | replace | remove | none
    note: str = ""


@dataclass
class Plan:
    root: Path
    mode: str  # install | snippet | uninstall
    config_path: Path
    config_action: str  # write | update | unchanged | remove | absent | skipped
    hooks: list[HookChange]
    excludes: list[str]  # to add (install, snippet) or remove (uninstall)
    pre_commit_version: str  # "" when pre-commit is not needed (and not installed)
    lintrunner: bool = False
    engine: str = "native"  # native | pre-commit | prek
    engine_version: str = ""  # of pre-commit or prek; contribkit's own for native
    config_text: str | None = None
    excludes_kept: list[str] = field(default_factory=list)  # uninstall: the path still exists
    excludes_added: list[str] = field(default_factory=list)  # uninstall: what init recorded
    snippet: str | None = None

    @property
    def changes_anything(self) -> bool:
        return (
            self.config_action in ("write", "update", "remove")
            or any(h.action not in ("keep", "none") for h in self.hooks)
            or bool(self.excludes)
        )

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("config_text")
        data.pop("excludes_added")
        data["root"] = str(self.root)
        data["config_path"] = str(self.config_path)
        data["changes"] = self.changes_anything
        return data


# --- facts ------------------------------------------------------------------------------------


def pre_commit_version() -> str:
    """The version of pre-commit beside contribkit; refuses a missing or too old one."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("pre-commit")
    except PackageNotFoundError:
        raise BadInput(
            f"pre-commit is not installed in {sys.prefix}",
            hint=f"{sys.executable} -m pip install 'pre-commit>=3.2.0'",
        ) from None
    if _version_tuple(found) < MIN_PRE_COMMIT:
        raise BadInput(
            f"pre-commit {found} is too old (the hooks need 3.2.0 or newer)",
            hint=f"{sys.executable} -m pip install -U pre-commit",
        )
    return found


def installed_pre_commit_version() -> str:
    """pre-commit's version, or "" when it is not installed beside contribkit."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pre-commit")
    except PackageNotFoundError:
        return ""


def prek_program() -> str:
    """prek (a pre-commit-compatible runner in Rust): beside contribkit, else on PATH."""
    import shutil

    found = shutil.which("prek", path=str(Path(sys.executable).parent)) or shutil.which("prek")
    if not found:
        raise BadInput(
            "prek is not installed (--engine prek uses it)",
            hint=f"{sys.executable} -m pip install prek  (or leave out --engine: the native "
            "hooks need nothing else)",
        )
    return found


def engine_version(engine: str) -> str:
    """The version of the engine's runner; refuses a missing or too old one."""
    if engine == "pre-commit":
        return pre_commit_version()
    if engine == "prek":
        from contribkit.core.proc import run_child, scrubbed_env

        out = run_child(
            [prek_program(), "--version"], env=scrubbed_env(), timeout=30
        ).output.split()
        return out[1] if len(out) > 1 else "?"
    return __version__


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def tracks_pre_commit_config(root: Path) -> bool:
    return bool(gitcmd.git("ls-files", "--", TRACKED_CONFIG, cwd=root))


def hook_command(hook_id: str) -> str:
    """The command that runs a hook: its console script beside sys.executable, else ``-m``."""
    bin_dir = Path(sys.executable).parent
    for name in (hook_id, f"{hook_id}.exe"):
        script = bin_dir / name
        if script.is_file():
            return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m contribkit.hooks.{HOOK_MODULES[hook_id]}"


def render_config(pre_commit: str, lintrunner: bool, engine: str = "pre-commit") -> str:
    """The config file's text, headed by a checksum so that later runs can tell it is unedited.
    ``pre_commit`` is pre-commit's version (prek knows the newer language name)."""
    template = string.Template((data_dir("hooks") / TEMPLATE).read_text(encoding="utf-8"))
    new = engine == "prek" or _version_tuple(pre_commit) >= UNSUPPORTED_LANGUAGE_SINCE
    language = "unsupported" if new else "system"
    body = template.substitute(
        {module: hook_command(hook_id) for hook_id, module in HOOK_MODULES.items()},
        version=__version__,
        language=language,
        lintrunner_stage="pre-commit" if lintrunner else "manual",
    )
    return f"{CHECKSUM_PREFIX}{_digest(body)}\n{body}"


def render_snippet() -> str:
    template = string.Template((data_dir("hooks") / SNIPPET).read_text(encoding="utf-8"))
    return template.substitute(repo_url=REPO_URL, version=__version__)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def written_by_contribkit(text: str) -> bool:
    """Whether a config file is exactly as some contribkit wrote it (nobody edited it since)."""
    first, _, body = text.partition("\n")
    return first.startswith(CHECKSUM_PREFIX) and first[len(CHECKSUM_PREFIX) :] == _digest(body)


def installed_python(state: HookState) -> str | None:
    """The interpreter a pre-commit hook script runs pre-commit with (its INSTALL_PYTHON)."""
    for line in state.path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("INSTALL_PYTHON="):
            value = shlex.split(line.removeprefix("INSTALL_PYTHON="))
            return value[0] if value else None
    return None


def _describe(state: HookState) -> str:
    if state.ours:
        return "contribkit"
    if not state.installed:
        return "none"
    if state.by_pre_commit:
        text = state.path.read_text(encoding="utf-8", errors="replace")
        marker = "--config="
        at = text.find(marker)
        config = text[at + len(marker) :].split()[0].strip("')") if at != -1 else "?"
        return f"{state.runner} ({config})"
    return "your own script"


def scratch_patterns(settings_repros_dir: str) -> tuple[str, ...]:
    """What goes into .git/info/exclude: the scratch outputs, and the repros folder if renamed."""
    repros = "/" + settings_repros_dir.strip("/") + "/"
    return tuple(dict.fromkeys((*gitcmd.SCRATCH_EXCLUDES, repros)))


# --- plans --------------------------------------------------------------------------------------


def _require_hooks_path_unset(root: Path) -> None:
    override = hooks_path_override(root)
    if override:
        raise BadInput(
            f"core.hooksPath is set to {override}, so git ignores .git/hooks and pre-commit "
            "will not install",
            hint="git config --unset core.hooksPath  (then run contribkit init again)",
        )


def _require_main_worktree(root: Path, config: Path) -> None:
    """pre-commit stores the config path relative to the work tree it was installed from, and
    git shares the hooks with every worktree: install from the main one (in linked worktrees the
    hooks then skip, since the path does not resolve there)."""
    main = config.parent.parent.parent  # <main>/.git/contribkit/pre-commit-config.yaml
    if main.resolve() != root.resolve() and (main / ".git").is_dir():
        raise BadInput(
            f"{root} is a linked worktree; git shares hooks between worktrees, so install "
            "them from the main one",
            hint=f"cd {main} && contribkit init",
        )


def _config_action(path: Path, text: str | None, force: bool) -> str:
    """What happens to contribkit's pre-commit config: ``text`` is the config the engine needs
    (None for the native engine, which needs none, so an old one goes)."""
    if not path.exists():
        return "write" if text is not None else "absent"
    current = path.read_text(encoding="utf-8", errors="replace")
    if current == text:
        return "unchanged"
    if written_by_contribkit(current) or force:
        return "update" if text is not None else "remove"
    raise BadInput(
        f"{path} was edited since contribkit wrote it",
        hint="pass --force to "
        + ("rewrite" if text is not None else "remove")
        + " it (tune the hooks in .contribkit.toml [hooks] instead)",
    )


def _plan_ours(state: HookState, engine: str, lintrunner: bool) -> HookChange:
    """A hook that is contribkit's already: kept, rewritten, or moved to another engine."""
    if state.engine != engine:
        legacy = nativehooks.legacy_path(state.path)
        note = f"now run by {engine}" if engine != "native" else "now runs natively"
        if engine == "native" and legacy.exists():
            note += f"; your {legacy.name} is kept as {nativehooks.chained_path(state.path).name}"
        return HookChange(state.hook_type, f"contribkit ({state.engine})", "replace", note)
    python = installed_python(state)
    # another environment's bin folder (python and python3 there are the same one)
    if python and Path(python).parent != Path(sys.executable).parent:
        return HookChange(
            state.hook_type,
            f"contribkit, run by {python}",
            "install",
            f"now run by {sys.executable}",
        )
    if engine == "native":
        text = state.path.read_text(encoding="utf-8", errors="replace")
        if text != nativehooks.render_script(state.hook_type, lintrunner):
            return HookChange(state.hook_type, "contribkit", "install", "updated")
    return HookChange(state.hook_type, "contribkit", "keep")


def _plan_hook(state: HookState, engine: str, lintrunner: bool, force: bool) -> HookChange:
    before = _describe(state)
    if state.ours:
        return _plan_ours(state, engine, lintrunner)
    if before == "none":
        return HookChange(state.hook_type, before, "install")
    if engine == "native":  # any hook already there is chained: it still runs, first
        kept = nativehooks.chained_path(state.path)
    elif state.by_pre_commit:
        if not force:
            raise BadInput(
                f"the {state.hook_type} hook already runs {before}; contribkit init would "
                "replace it with contribkit's",
                hint="pass --force to replace it, or add contribkit's hooks to that config "
                "(the native engine, the default, keeps it and runs it first)",
            )
        return HookChange(state.hook_type, before, "replace")
    else:
        kept = nativehooks.legacy_path(state.path)
    if kept.exists() and not force:
        raise BadInput(
            f"{state.path} is your own hook and {kept.name} exists too; installing "
            f"would overwrite {kept.name}",
            hint=f"merge the two scripts by hand, or pass --force to lose {kept.name}",
        )
    return HookChange(
        state.hook_type,
        before,
        "install",
        f"your hook is kept as {kept.name} and still runs first",
    )


def plan_install(
    root: Path, *, lintrunner: bool, force: bool, repros_dir: str, engine: str = "native"
) -> Plan:
    path = contribkit_config_path(root)
    excludes = gitcmd.missing_excludes(root, scratch_patterns(repros_dir))
    if tracks_pre_commit_config(root):
        return Plan(
            root=root,
            mode="snippet",
            config_path=root / TRACKED_CONFIG,
            config_action="skipped",
            hooks=[],
            excludes=excludes,
            pre_commit_version=pre_commit_version(),
            lintrunner=lintrunner,
            snippet=render_snippet(),
            engine="pre-commit",
        )
    if engine not in ENGINES:
        raise BadInput(f"no engine named {engine!r}", hint=f"use one of: {', '.join(ENGINES)}")
    version = engine_version(engine)
    _require_hooks_path_unset(root)
    _require_main_worktree(root, path)
    text = None if engine == "native" else render_config(version, lintrunner, engine)
    return Plan(
        root=root,
        mode="install",
        config_path=path,
        config_action=_config_action(path, text, force),
        hooks=[_plan_hook(state, engine, lintrunner, force) for state in hook_states(root)],
        excludes=excludes,
        pre_commit_version=version if engine == "pre-commit" else installed_pre_commit_version(),
        lintrunner=lintrunner,
        config_text=text,
        engine=engine,
        engine_version=version,
    )


def plan_uninstall(root: Path) -> Plan:
    path = contribkit_config_path(root)
    changes = []
    for state in hook_states(root):
        before = _describe(state)
        if state.native:
            yours = nativehooks.chained_path(state.path)
        else:
            yours = nativehooks.legacy_path(state.path)
        if state.ours:
            note = f"your {yours.name} is restored" if yours.exists() else ""
            changes.append(HookChange(state.hook_type, before, "remove", note))
        else:
            changes.append(HookChange(state.hook_type, before, "none"))
    added = read_excludes_record(root)
    patterns = [p for p in added if p and p != gitcmd.EXCLUDE_HEADER]
    missing = set(gitcmd.missing_excludes(root, tuple(patterns)))
    ours = [p for p in patterns if p not in missing]
    kept = [p for p in ours if (root / p.strip("/")).exists()]
    return Plan(
        root=root,
        mode="uninstall",
        config_path=path,
        config_action="remove" if path.exists() else "absent",
        hooks=changes,
        excludes=[p for p in ours if p not in kept],
        excludes_kept=kept,
        excludes_added=added,
        pre_commit_version=installed_pre_commit_version(),
        engine="",
    )


def _excludes_record(root: Path) -> Path:
    return contribkit_config_path(root).with_name(EXCLUDES_RECORD)


def read_excludes_record(root: Path) -> list[str]:
    """The .git/info/exclude lines that init added and uninstall has not removed yet."""
    try:
        data = json.loads(_excludes_record(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    lines = data.get("lines") if isinstance(data, dict) else None
    return [line for line in lines if isinstance(line, str)] if isinstance(lines, list) else []


def _write_excludes_record(root: Path, lines: list[str]) -> None:
    path = _excludes_record(root)
    if lines:
        atomic_write(path, json.dumps({"lines": lines}, indent=1) + "\n", force=True)
    else:
        path.unlink(missing_ok=True)


# --- doing it -------------------------------------------------------------------------------------


def _runner(root: Path, program: list[str], *args: str) -> None:
    """Run pre-commit or prek (``program``) in ``root``; CheckFailed when it fails."""
    from contribkit.core.proc import run_child, scrubbed_env

    result = run_child([*program, *args], env=scrubbed_env(), cwd=root, timeout=120)
    if result.returncode != 0:
        last = result.output.strip().splitlines()[-1:] or ["no output"]
        name = Path(program[-1]).name.replace("pre_commit", "pre-commit")
        raise CheckFailed(
            f"{name} {args[0]} failed (exit {result.returncode}): {last[0]}",
            hint=f"run it yourself to see why: {shlex.join([*program, *args])}",
        )


def _take_out(state: HookState) -> None:
    """Remove contribkit's hook of ``state``, putting back the hook of yours it kept."""
    if state.native:
        nativehooks.uninstall(state.path)
    else:  # pre-commit's or prek's script: what `pre-commit uninstall` does
        nativehooks.remove_runner_hook(state.path)


def _install_hooks(plan: Plan) -> None:
    types = [h.hook_type for h in plan.hooks if h.action in ("install", "replace")]
    for state in hook_states(plan.root):
        if state.hook_type in types and state.ours and state.engine != plan.engine:
            _take_out(state)  # another engine's: the hook of yours it kept comes back first
    if not types:
        return
    if plan.engine == "native":
        for state in hook_states(plan.root):
            if state.hook_type in types:
                chain = state.path if state.installed and not state.native else None
                text = nativehooks.render_script(state.hook_type, plan.lintrunner)
                nativehooks.install(state.path, text, chain)
        return
    # --allow-missing-config: in linked worktrees the (relative) path does not resolve;
    # the hooks say so and skip there instead of failing every commit
    args = ["install", "--allow-missing-config", "-c", str(plan.config_path)]
    for hook_type in types:
        args += ["-t", hook_type]
    if plan.engine == "prek":
        _runner(plan.root, [prek_program()], *args)
    else:
        _runner(plan.root, [sys.executable, "-m", "pre_commit"], *args)


def apply(plan: Plan) -> None:
    """Make the changes ``plan`` describes."""
    if plan.mode == "install":
        if plan.config_action in ("write", "update"):
            assert plan.config_text is not None
            atomic_write(plan.config_path, plan.config_text, force=True)
        elif plan.config_action == "remove":
            plan.config_path.unlink()
        _install_hooks(plan)
    elif plan.mode == "uninstall":
        removed = {h.hook_type for h in plan.hooks if h.action == "remove"}
        for state in hook_states(plan.root):
            if state.hook_type in removed:
                _take_out(state)
        if plan.config_action == "remove":
            plan.config_path.unlink()
        _, left = gitcmd.remove_excluded(plan.root, plan.excludes_added, plan.excludes_kept)
        _write_excludes_record(plan.root, left)  # what is kept, for a later --uninstall
        folder = plan.config_path.parent
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        return
    if plan.excludes:
        added = gitcmd.ensure_excluded(plan.root, tuple(plan.excludes))
        recorded = read_excludes_record(plan.root)
        _write_excludes_record(plan.root, recorded + [a for a in added if a not in recorded])
