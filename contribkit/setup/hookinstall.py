"""Installing contribkit's hooks beside the tracked tree: the core of ``contribkit init``.

PyTorch uses lintrunner, not pre-commit, so a PR must never gain a ``.pre-commit-config.yaml``.
contribkit writes its config inside the git directory (``.git/contribkit/pre-commit-config.yaml``)
and has pre-commit install the pre-commit, commit-msg and pre-push hooks from it. The config's
hooks are ``repo: local`` ones whose entries are the console scripts beside ``sys.executable``, so
they run offline with no hook environment to build. A repository that tracks its own pre-commit
config gets a snippet to add to it instead.

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
from contribkit.setup.hookstate import (
    HookState,
    contribkit_config_path,
    hook_states,
    hooks_path_override,
)

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
    pre_commit_version: str
    lintrunner: bool = False
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


def render_config(pre_commit: str, lintrunner: bool) -> str:
    """The config file's text, headed by a checksum so that later runs can tell it is unedited."""
    template = string.Template((data_dir("hooks") / TEMPLATE).read_text(encoding="utf-8"))
    language = (
        "unsupported" if _version_tuple(pre_commit) >= UNSUPPORTED_LANGUAGE_SINCE else "system"
    )
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
    if state.contribkit_config:
        return "contribkit"
    if not state.installed:
        return "none"
    if state.by_pre_commit:
        text = state.path.read_text(encoding="utf-8", errors="replace")
        marker = "--config="
        at = text.find(marker)
        config = text[at + len(marker) :].split()[0].strip("')") if at != -1 else "?"
        return f"pre-commit ({config})"
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


def plan_install(root: Path, *, lintrunner: bool, force: bool, repros_dir: str) -> Plan:
    version = pre_commit_version()
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
            pre_commit_version=version,
            lintrunner=lintrunner,
            snippet=render_snippet(),
        )
    _require_hooks_path_unset(root)
    _require_main_worktree(root, path)
    text = render_config(version, lintrunner)
    if not path.exists():
        config_action = "write"
    else:
        current = path.read_text(encoding="utf-8", errors="replace")
        if current == text:
            config_action = "unchanged"
        elif written_by_contribkit(current) or force:
            config_action = "update"
        else:
            raise BadInput(
                f"{path} was edited since contribkit wrote it",
                hint="pass --force to rewrite it (tune the hooks in .contribkit.toml [hooks] instead)",
            )
    changes = []
    for state in hook_states(root):
        before = _describe(state)
        if before == "contribkit":
            python = installed_python(state)
            # another environment's bin folder (python and python3 there are the same one)
            if python and Path(python).parent != Path(sys.executable).parent:
                changes.append(
                    HookChange(
                        state.hook_type,
                        f"contribkit, run by {python}",
                        "install",
                        f"now run by {sys.executable}",
                    )
                )
            else:
                changes.append(HookChange(state.hook_type, before, "keep"))
        elif before == "none":
            changes.append(HookChange(state.hook_type, before, "install"))
        elif state.by_pre_commit:
            if not force:
                raise BadInput(
                    f"the {state.hook_type} hook already runs {before}; contribkit init would "
                    "replace it with contribkit's",
                    hint="pass --force to replace it, or add contribkit's hooks to that config",
                )
            changes.append(HookChange(state.hook_type, before, "replace"))
        else:
            legacy = state.path.with_name(state.path.name + ".legacy")
            if legacy.exists() and not force:
                raise BadInput(
                    f"{state.path} is your own hook and {legacy.name} exists too; installing "
                    f"would overwrite {legacy.name}",
                    hint=f"merge the two scripts by hand, or pass --force to lose {legacy.name}",
                )
            changes.append(
                HookChange(
                    state.hook_type,
                    before,
                    "install",
                    f"your hook is kept as {legacy.name} and still runs first",
                )
            )
    return Plan(
        root=root,
        mode="install",
        config_path=path,
        config_action=config_action,
        hooks=changes,
        excludes=excludes,
        pre_commit_version=version,
        lintrunner=lintrunner,
        config_text=text,
    )


def plan_uninstall(root: Path) -> Plan:
    path = contribkit_config_path(root)
    changes = []
    for state in hook_states(root):
        before = _describe(state)
        legacy = state.path.with_name(state.path.name + ".legacy")
        if before == "contribkit":
            note = f"your {legacy.name} is restored" if legacy.exists() else ""
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
        pre_commit_version=pre_commit_version(),
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


def _pre_commit(root: Path, *args: str) -> None:
    from contribkit.core.proc import run_child, scrubbed_env

    result = run_child(
        [sys.executable, "-m", "pre_commit", *args], env=scrubbed_env(), cwd=root, timeout=120
    )
    if result.returncode != 0:
        last = result.output.strip().splitlines()[-1:] or ["no output"]
        raise CheckFailed(
            f"pre-commit {args[0]} failed (exit {result.returncode}): {last[0]}",
            hint=f"run it yourself to see why: {sys.executable} -m pre_commit {shlex.join(args)}",
        )


def apply(plan: Plan) -> None:
    """Make the changes ``plan`` describes."""
    if plan.mode == "install":
        if plan.config_action in ("write", "update"):
            assert plan.config_text is not None
            atomic_write(plan.config_path, plan.config_text, force=True)
        types = [h.hook_type for h in plan.hooks if h.action in ("install", "replace")]
        if types:
            # --allow-missing-config: in linked worktrees the (relative) path does not resolve;
            # the hooks say so and skip there instead of failing every commit
            args = ["install", "--allow-missing-config", "-c", str(plan.config_path)]
            for hook_type in types:
                args += ["-t", hook_type]
            _pre_commit(plan.root, *args)
    elif plan.mode == "uninstall":
        types = [h.hook_type for h in plan.hooks if h.action == "remove"]
        if types:
            args = ["uninstall"]
            for hook_type in types:
                args += ["-t", hook_type]
            _pre_commit(plan.root, *args)
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
