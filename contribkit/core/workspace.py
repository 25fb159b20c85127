"""Where a command runs: the repository root, the merged settings, the target repo and interpreter."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from contribkit.core import redact
from contribkit.core.config import REPO_CONFIG_NAME, ConfigError, Settings, load_settings
from contribkit.core.errors import BadInput, warn
from contribkit.core.record import Record
from contribkit.git import cmd as gitcmd

DEFAULT_REPO = "pytorch/pytorch"
# What makes a repository a PyTorch checkout (op reads it; gaps searches such a checkout's test/).
NATIVE_IN_CHECKOUT = "aten/src/ATen/native/native_functions.yaml"

# Compiled on first use (re keeps them): a command that never reads a remote compiles neither.
_REMOTE_RE = r"""^(?:
        (?:https?|git|ssh)://(?:[^@/]+@)?(?P<host1>[^/:]+)(?::\d+)?/   # scheme://[user@]host[:port]/
      | (?:[^@/]+@)?(?P<host2>[^/:]+):                                 # [user@]host:
    )(?P<owner>[^/]+)/(?P<name>[^/]+?)(?:\.git)?/?$"""
_SLUG_RE = r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"


def parse_remote_url(url: str) -> tuple[str, str] | None:
    """``(host, "owner/name")`` from a git remote URL, or None when it is not host/owner/name."""
    m = re.match(_REMOTE_RE, url.strip(), re.VERBOSE)
    if not m:
        return None
    host = m.group("host1") or m.group("host2")
    return host, f"{m.group('owner')}/{m.group('name')}"


def is_slug(slug: str) -> bool:
    """OWNER/NAME, neither part ``.`` or ``..`` (``x/..`` would request ``/repos/x/..``)."""
    return bool(re.match(_SLUG_RE, slug)) and not any(
        part in {".", ".."} for part in slug.split("/")
    )


def validate_slug(slug: str) -> str:
    if not is_slug(slug):
        raise BadInput(
            f"'{slug}' is not a repository in OWNER/NAME form", hint="e.g. --repo pytorch/pytorch"
        )
    return slug


class Workspace(Record):
    root: Path | None
    settings: Settings

    @classmethod
    def load(cls, cwd: Path | None = None, **cli: Any) -> Workspace:
        root = gitcmd.repo_root(cwd)
        try:
            settings = load_settings(cli, root)
        except ConfigError as exc:
            raise BadInput(str(exc), hint="fix or remove the offending setting") from exc
        for message in settings.warnings:
            warn(message)
        redact.add_patterns(settings.names("scrub_env"))  # their values are never shown
        if root is not None and (root / REPO_CONFIG_NAME).is_file():
            gitcmd.ensure_excluded(root, (f"/{REPO_CONFIG_NAME}",))  # never committed to PyTorch
        return cls(root, settings)

    def require_root(self) -> Path:
        if self.root is None:
            raise BadInput("not inside a git repository", hint="cd into your PyTorch fork first")
        return self.root

    def remote_url(self, remote: str) -> str | None:
        """The URL of the remote named ``remote`` (any form: https, ssh, a local path), or None
        when there is no such remote."""
        if self.root is None:
            return None
        return gitcmd.git("remote", "get-url", remote, cwd=self.root, check=False) or None

    def remote_slug(self, remote: str) -> str | None:
        url = self.remote_url(remote)
        parsed = parse_remote_url(url) if url else None
        return parsed[1] if parsed and is_slug(parsed[1]) else None

    def repo(self) -> tuple[str, str]:
        """The target repository and where it came from."""
        configured = self.settings.optional_text("repo")
        if configured:
            return validate_slug(configured), self.settings.sources["repo"]
        for remote in (self.settings.text("upstream_remote"), "origin"):
            slug = self.remote_slug(remote)
            if slug:
                return slug, f"git remote '{remote}'"
        return DEFAULT_REPO, "default"

    def python(self) -> str:
        """The target interpreter: --python, config, else the one running contribkit."""
        configured = self.settings.optional_text("python")
        return resolve_python(configured) if configured else sys.executable


def checkout_root(root: Path | None) -> Path | None:
    """The repository root when it is a PyTorch checkout (it has native_functions.yaml)."""
    if root is not None and (root / NATIVE_IN_CHECKOUT).is_file():
        return root
    return None


def resolve_python(name: str) -> str:
    """An interpreter given as a path or a command name, as an absolute path; BadInput when it is
    not an executable file (the one check of ``--python`` and the ``python`` setting)."""
    if os.sep in name:
        found: str | None = name
    else:
        import shutil  # here: a warm query that names no interpreter loads no shutil

        found = shutil.which(name)
    if not found or not Path(found).is_file():
        raise BadInput(f"interpreter '{name}' not found", hint="pass a path to a python executable")
    if not os.access(found, os.X_OK):
        raise BadInput(
            f"interpreter '{name}' is not executable",
            hint="pass a path to a python executable, e.g. ~/pytorch/venv/bin/python",
        )
    return str(Path(found).absolute())


def repros_path(root: Path, settings: Settings) -> Path:
    """``<root>/<repros_dir>``: where repro folders live, always inside ``root``, trusted
    setting or not. A value that leaves it (an absolute path like ``/tmp/x``, ``../x``, or a
    link inside the repository that points out of it) is bad input."""
    from contribkit.core.fsutil import refuse_links

    value = settings.text("repros_dir")
    folder = root / value
    if not os.path.isabs(value):
        refuse_links(root, folder)  # a link on the way is named as one (repros -> ~)
    real_root = os.path.realpath(root)
    real = os.path.realpath(folder)
    if os.path.isabs(value) or not (real == real_root or real.startswith(real_root + os.sep)):
        raise BadInput(
            f"repros_dir {value!r} is outside the repository ({real})",
            hint='set repros_dir to a folder inside it, e.g. repros_dir = "repros"',
        )
    return folder
