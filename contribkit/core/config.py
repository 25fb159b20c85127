"""Layered configuration, highest precedence first:

1. CLI options;
2. ``CONTRIBKIT_*`` environment variables (``CONTRIBKIT_GITHUB_URL``, ``CONTRIBKIT_RUN_TIMEOUT``);
3. ``.contribkit.toml`` at the repository root (kept out of git via ``.git/info/exclude``); its
   keys that choose an executable or a host, or weaken safety (the sandbox, the limits, where
   output goes, hook rules switched off) count only once the user trusts the file
   (:mod:`contribkit.core.trust`);
4. the user config file (``$CONTRIBKIT_CONFIG`` or ``<platform config dir>/contribkit/config.toml``).

Standard library only, and cheap to import: the hooks read it on every commit, so it avoids
``dataclasses``, ``typing`` and an eager TOML parser. Every key is declared in :data:`KEYS`; the README's
configuration table is generated from the same declarations (``contribkit config --list``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

REPO_CONFIG_NAME = ".contribkit.toml"


class Key:
    __slots__ = ("default", "help", "type")

    def __init__(self, type: type, default: Any, help: str) -> None:
        self.type = type
        self.default = default
        self.help = help

    def __repr__(self) -> str:
        return f"Key({self.type.__name__}, {self.default!r}, {self.help!r})"


KEYS: dict[str, Key] = {
    "repo": Key(
        str,
        None,
        "GitHub repository OWNER/NAME (default: remote 'upstream', else 'origin', else pytorch/pytorch).",
    ),
    "github_url": Key(
        str,
        "https://api.github.com",
        "GitHub REST API base URL; for Enterprise use https://HOST/api/v3.",
    ),
    "python": Key(
        str, None, "Interpreter whose torch is used (default: the one running contribkit)."
    ),
    "upstream_remote": Key(
        str, "upstream", "Name of the git remote that points at pytorch/pytorch."
    ),
    "base_branch": Key(
        str, "main", "Upstream branch that PRs target and merge-bases are taken against."
    ),
    "repros_dir": Key(
        str, "repros", "Where `contribkit repro` writes, relative to the repository root."
    ),
    "cache_dir": Key(
        str,
        None,
        "Where fetched issues and torch probes are cached (default: the platform cache dir).",
    ),
    "http_timeout": Key(float, 15.0, "Seconds before a GitHub request times out."),
    "github_timeout": Key(
        float,
        30.0,
        "Seconds all of one command's GitHub requests may take together (--github-timeout; 0: no limit).",
    ),
    "github_max_reply_mb": Key(
        float,
        20.0,
        "Largest GitHub reply read, in MB, as sent and once inflated (gzip); a larger one is "
        "refused.",
    ),
    "debug.timeout": Key(
        float, 1800.0, "Seconds before a `contribkit debug --run` run is stopped (0: no limit)."
    ),
    "scrub_env": Key(
        list, [], "Extra environment variable patterns (fnmatch) removed from child processes."
    ),
    "push_remote": Key(
        str, "origin", "Remote (your fork) that `contribkit submit --push` pushes the branch to."
    ),
    "run.devices": Key(list, ["cpu", "cuda"], "Devices `contribkit run` tries by default."),
    "run.timeout": Key(float, 900.0, "Seconds before `contribkit run` kills a leg."),
    "run.jobs": Key(int, 0, "CPU legs run at once by `contribkit run` (0: min(4, CPU count))."),
    "run.sandbox": Key(
        str,
        "auto",
        "How `run` and `debug --run` confine issue and test code: auto (bubblewrap where it "
        "works, else none, said once), bwrap (required) or none (a scrubbed environment only).",
    ),
    "run.memory_limit_mb": Key(
        int,
        0,
        "Address space one leg of `run`, `debug --run` or `test --from-repro` may use, in MiB "
        "(0: half the machine's memory; GPU legs have none, as CUDA maps more than it uses).",
    ),
    "run.process_limit": Key(
        int,
        1024,
        "Processes one leg may have at once, counted in the sandbox's user namespace (bwrap "
        "only; 0: no limit).",
    ),
    "run.file_size_limit_mb": Key(
        int, 4096, "Largest file one leg may write, in MiB (a log, a trace, a cache entry)."
    ),
    "run.cuda_host": Key(
        str, None, "ssh host that runs the CUDA legs of `contribkit run` (see docs/remote-cuda.md)."
    ),
    "run.cuda_python": Key(
        str, "python3", "Interpreter on run.cuda_host that has a CUDA build of torch."
    ),
    "run.engine": Key(
        str,
        "local",
        "Where `contribkit run` sends its legs: local, ray or slurm (see docs/scale-out.md).",
    ),
    "ray.address": Key(
        str,
        None,
        "Ray cluster for --engine ray, e.g. ray://head:10001 (default: RAY_ADDRESS, else a "
        "local cluster).",
    ),
    "ray.num_cpus": Key(int, 2, "CPUs of the local Ray cluster that --engine ray starts."),
    "ray.num_gpus": Key(
        int, -1, "GPUs of the local Ray cluster that --engine ray starts (-1: Ray counts them)."
    ),
    "ray.max_parallel": Key(
        int, 0, "Legs in flight at once on Ray (0: the cluster's CPU count; -j overrides)."
    ),
    "slurm.cluster": Key(
        str,
        "auto",
        "auto (Slurm where sbatch is, else submitit's local executor), slurm or local.",
    ),
    "slurm.folder": Key(
        str,
        None,
        "Folder shared by this machine and the Slurm nodes, for submitit's job files.",
    ),
    "slurm.partition": Key(str, None, "Slurm partition for --engine slurm's jobs."),
    "slurm.max_parallel": Key(int, 16, "Slurm jobs in flight at once (-j overrides)."),
    # The [hooks] table: read by the pre-commit hooks (contribkit/hooks/).
    "hooks.disable": Key(
        list,
        [],
        "Hook rules (and the CKPxx rules of `pr --check`) switched off, by id or slug, "
        'e.g. ["CK105", "pr-too-large"]; a hook id switches off the whole hook.',
    ),
    "hooks.strict": Key(
        bool,
        False,
        "Make every warning an error: the style rules block commits, and `pr --check` fails "
        "on them.",
    ),
    "hooks.title_max_length": Key(
        int,
        100,
        "Longest title as it lands, with the ' (#N)' the merge appends, before CK101 warns; "
        "also the PR titles of `contribkit pr`.",
    ),
    "hooks.body_max_length": Key(
        int,
        0,
        "Longest commit body line before CK108 warns (0: no limit, bodies are markdown); URLs, "
        "code and trailers are exempt.",
    ),
    "hooks.title_style": Key(
        str,
        "pytorch",
        "Commit title style (CK106): pytorch ('[area] Summary', prefix optional), "
        "conventional ('type(scope): summary') or none; also the PR titles of `contribkit pr`.",
    ),
    "hooks.conventional_types": Key(
        list,
        [
            "build",
            "chore",
            "ci",
            "docs",
            "feat",
            "fix",
            "perf",
            "refactor",
            "revert",
            "style",
            "test",
        ],
        "Types allowed when hooks.title_style is conventional.",
    ),
    "hooks.allow_wip": Key(bool, False, "Allow 'WIP' commit titles (CK104)."),
    "hooks.branch_pattern": Key(
        str,
        r"^(fix|feat|docs|test|perf|refactor|ci)/[A-Za-z0-9][A-Za-z0-9._/-]*$",
        "Regular expression every branch name must match (CK201).",
    ),
    "hooks.protected_branches": Key(
        list, ["main", "master", "viable/strict"], "Branches never committed to directly (CK203)."
    ),
    "hooks.debug_markers": Key(
        list,
        ["[DEBUG]", "DEBUG:", "XXX", ">>>>"],
        "Text that marks a print() as a debug leftover when the printed text starts with it (CK304).",
    ),
    "hooks.scratch_patterns": Key(
        list, [], 'Extra fnmatch patterns of paths never to commit, e.g. ["notes/*"] (CK401).'
    ),
    "hooks.max_file_kb": Key(int, 500, "Largest file, in KiB, that may be committed (CK402)."),
    "hooks.source_globs": Key(
        list,
        ["torch/**", "aten/**", "c10/**"],
        "Source paths whose changes need a test in the pushed range (CK601).",
    ),
    "hooks.test_globs": Key(list, ["test/**"], "Paths that count as tests (CK601)."),
    "hooks.max_areas": Key(
        int, 4, "Top-level folders a pushed range may touch before CK701 warns."
    ),
    "hooks.max_changed_lines": Key(
        int, 500, "Changed lines (added + deleted) a pushed range may have before CK702 warns."
    ),
}


def env_name(key: str) -> str:
    return "CONTRIBKIT_" + key.upper().replace(".", "_")


def user_config_path() -> Path:
    from pathlib import Path

    return Path(_user_config_file())


def _user_config_file() -> str:
    override = os.environ.get("CONTRIBKIT_CONFIG")
    if override:
        return override
    platform = sys.platform  # a variable: the answer differs by platform, mypy must see both
    if platform.startswith("linux"):
        # platformdirs' answer on Linux, without importing it on the hooks' path
        xdg = os.environ.get("XDG_CONFIG_HOME", "")
        base = xdg if os.path.isabs(xdg) else os.path.expanduser("~/.config")
        return os.path.join(base, "contribkit", "config.toml")
    import platformdirs  # deferred: only needed when a command reads config

    return str(platformdirs.user_config_path("contribkit") / "config.toml")


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in table.items():
        dotted = f"{prefix}{name}"
        if isinstance(value, dict) and dotted not in KEYS:
            flat.update(_flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def _coerce(key: str, value: Any, origin: str) -> Any:
    kind = KEYS[key].type
    if kind is list:
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
    elif kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in {
            "1",
            "true",
            "yes",
            "on",
            "0",
            "false",
            "no",
            "off",
        }:
            return value.lower() in {"1", "true", "yes", "on"}
    elif kind in (int, float):
        try:
            return kind(value)
        except (TypeError, ValueError):
            pass
    elif isinstance(value, kind):
        return value
    raise ConfigError(f"{origin}: '{key}' must be a {kind.__name__}, got {value!r}")


def _did_you_mean(key: str) -> str:
    import difflib  # only when a key is unknown

    close = difflib.get_close_matches(key, list(KEYS), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


class ConfigError(Exception):
    pass


class Settings:
    __slots__ = ("sources", "values", "warnings")

    def __init__(
        self,
        values: dict[str, Any],
        sources: dict[str, str],
        warnings: list[str] | None = None,
    ) -> None:
        self.values = values
        self.sources = sources
        self.warnings = [] if warnings is None else warnings

    def __repr__(self) -> str:
        return f"Settings({self.values!r}, {self.sources!r}, {self.warnings!r})"

    def get(self, key: str) -> Any:
        """The value of any key, untyped: for listing settings. Code reads one key with the typed
        accessor for its declared type (:meth:`text`, :meth:`optional_text`, :meth:`integer`,
        :meth:`number`, :meth:`flag`, :meth:`names`)."""
        if key not in KEYS:
            raise KeyError(key)
        return self.values.get(key, KEYS[key].default)

    def _typed(self, key: str, kind: type) -> Any:
        if KEYS[key].type is not kind:
            raise TypeError(
                f"setting '{key}' is a {KEYS[key].type.__name__}, not a {kind.__name__}"
            )
        return self.get(key)

    def optional_text(self, key: str) -> str | None:
        """A string key; None when it is unset and has no default (``repo``, ``python``, …)."""
        value: str | None = self._typed(key, str)
        return value

    def text(self, key: str) -> str:
        """A string key that always has a value (its default is a string)."""
        value = self.optional_text(key)
        if value is None:
            raise TypeError(f"setting '{key}' has no default: read it with optional_text()")
        return value

    def integer(self, key: str) -> int:
        value: int = self._typed(key, int)
        return value

    def number(self, key: str) -> float:
        value: float = self._typed(key, float)
        return value

    def flag(self, key: str) -> bool:
        value: bool = self._typed(key, bool)
        return value

    def names(self, key: str) -> list[str]:
        """A list-of-strings key (patterns, devices, rule ids)."""
        value: list[str] = self._typed(key, list)
        return value


def read_toml(path: Path | str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        with open(path, "rb") as fh:
            data: dict[str, Any] = tomllib.load(fh)
            return data
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc


def _untrusted_keys(path: str, flat: Mapping[str, Any]) -> dict[str, str]:
    """The keys of a repository's config file that choose an executable or a host, with the
    warning each gets, unless the user trusts the file as it is (``contribkit config --trust``)."""
    from contribkit.core import trust  # only a repo file is checked, and only when needed

    guarded = [key for key, value in flat.items() if key in KEYS and trust.needs_trust(key, value)]
    if not guarded:
        return {}
    state = trust.trust_state(path)
    if state == "trusted":
        return {}
    why = "it changed since you trusted it" if state == "changed" else "it is not trusted"
    return {
        key: f"{path}: '{key}' ignored: {why}; after reading the file, run "
        f"`{trust.TRUST_COMMAND}` to use it"
        for key in guarded
    }


def load_settings(
    cli: Mapping[str, Any] | None = None,
    repo_root: Path | str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Merge the four layers. Unknown keys in files produce warnings naming file and key."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    warnings: list[str] = []
    files = [(_user_config_file(), False)]
    if repo_root is not None:
        files.append((os.path.join(repo_root, REPO_CONFIG_NAME), True))
    for path, from_repo in files:  # lowest precedence first
        if not os.path.isfile(path):
            continue
        flat = _flatten(read_toml(path))
        refused = _untrusted_keys(path, flat) if from_repo else {}
        for key, value in flat.items():
            if key not in KEYS:
                warnings.append(f"{path}: unknown key '{key}' (ignored){_did_you_mean(key)}")
                continue
            if key in refused:
                warnings.append(refused[key])
                continue
            values[key] = _coerce(key, value, path)
            sources[key] = path
    for key in KEYS:
        name = env_name(key)
        if environ.get(name):
            values[key] = _coerce(key, environ[name], name)
            sources[key] = name
    for key, value in (cli or {}).items():
        if value is not None:
            values[key] = value
            sources[key] = "command line"
    return Settings(values, sources, warnings)
