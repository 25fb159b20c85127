"""``contribkit repro`` behind its options: find the issue, plan the repro, write its folder.

:func:`make_repro` takes a :class:`ReproRequest` (the command's options) and returns a
:class:`ReproResult`; the command only prints it.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contribkit.core.errors import BadInput
from contribkit.core.workspace import Workspace
from contribkit.repro.expect import check_expect
from contribkit.target.reproexpect import EXPECT_AUTO

if TYPE_CHECKING:
    from contribkit.github.sources import Fetched
    from contribkit.repro.plan import ReproPlan


@dataclass(frozen=True)
class ReproRequest:
    issue: str | None = None  # a number, OWNER/NAME#N or an issue URL
    from_file: str | None = None  # a saved issue ('-' for stdin)
    example: bool = False  # the bundled example issue
    token: str | None = None
    offline: bool = False
    refresh: bool = False
    output: Path | None = None  # the folder to write (default: <repo>/repros/issue-N)
    to_stdout: bool = False  # write nothing: the command prints repro.py
    force: bool = False
    dry_run: bool = False
    repo: str | None = None
    github_url: str | None = None
    github_timeout: float | None = None  # --github-timeout: seconds for all GitHub requests
    timeout: float = 300.0  # the script's default time limit (its --timeout)
    expect: str | None = None  # --expect: the oracle (on an existing folder: only it changes)


@dataclass
class ReproResult:
    plan: ReproPlan
    source: str  # where the issue came from (Fetched.origin)
    warnings: list[str]  # the source's, then the plan's
    out_dir: Path
    shown: str  # out_dir as the user reads it (relative below the working dir)
    dry_run: bool
    actions: dict[str, str] | None  # path -> "create" | "overwrite" | "exists"; None: --stdout
    oracle_was: str | None = None  # the folder existed: only its oracle changed, from this
    oracle_only: bool = False

    @property
    def script_text(self) -> str:
        return self.plan.files["repro.py"]

    @property
    def next_command(self) -> str:
        return f"contribkit run {self.shown}"

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self.plan.summary),
            "warnings": self.warnings,
            "source": self.source,
            "dir": str(self.out_dir),
            "script": str(self.out_dir / "repro.py"),
            "dry_run": self.dry_run,
            "files": self.actions,
            "next": self.next_command,
            "oracle_only": self.oracle_only,
            "oracle_was": self.oracle_was,
        }


def default_out_dir(ws: Workspace, name: str) -> Path:
    base = ws.root if ws.root is not None else Path.cwd()
    return base / str(ws.settings.text("repros_dir")) / name


def scratch_patterns(ws: Workspace, out_dir: Path, written: list[str]) -> tuple[str, ...]:
    """The ``.git/info/exclude`` lines that keep what was written out of commits.

    The repros folder is excluded whole; anywhere else in the repo (``-o test/x``), only the
    files written are, so that no other new file there is hidden from ``git status``.
    """
    assert ws.root is not None
    root = ws.root.resolve()
    target = out_dir.resolve()
    if not target.is_relative_to(root):
        return ()
    repros = default_out_dir(ws, "x").parent.resolve()
    if target.is_relative_to(repros) and repros != root:
        return (f"/{repros.relative_to(root).as_posix()}/",)
    return tuple(f"/{Path(path).resolve().relative_to(root).as_posix()}" for path in written)


def fetch(ws: Workspace, request: ReproRequest) -> Fetched:
    """The issue the request names: fetched (or cached), read from a file, or the example."""
    from contribkit.core.redact import registered
    from contribkit.github.auth import resolve_token
    from contribkit.github.sources import (
        example_issue,
        fetch_issue,
        load_issue_file,
        parse_issue_ref,
    )

    if request.issue:
        named, number = parse_issue_ref(request.issue)
        slug = named or ws.repo()[0]  # the remote lookup only when the reference names no repo
        github = ws.settings.text("github_url")
        return fetch_issue(
            ws.settings,
            slug,
            number,
            registered(resolve_token(github, request.token, use_gh=not request.offline)),
            offline=request.offline,
            refresh=request.refresh,
        )
    if request.from_file:
        return load_issue_file(request.from_file)
    return example_issue()


def folder_name(fetched: Fetched, from_file: str | None) -> str:
    if fetched.issue.number is not None:
        return f"issue-{fetched.issue.number}"
    # a saved body without a number: name the folder after the file
    stem = "stdin" if from_file in (None, "-") else Path(str(from_file)).stem
    return f"issue-{re.sub(r'[^A-Za-z0-9_.-]+', '-', stem).strip('-.') or 'saved'}"


def make_repro(request: ReproRequest) -> ReproResult:
    """Plan the repro of the requested issue and, unless ``to_stdout``, write its folder (and
    keep it out of commits)."""
    from contribkit.core.cache import JsonCache, cache_root
    from contribkit.core.render import write_outputs
    from contribkit.git.cmd import ensure_excluded
    from contribkit.repro.plan import plan_for

    sources = [bool(request.issue), bool(request.from_file), request.example]
    if sum(sources) != 1:
        raise BadInput(
            "give exactly one of ISSUE, --from-file or --example", "e.g. contribkit repro 170398"
        )
    expect = check_expect(request.expect) if request.expect is not None else None
    ws = Workspace.load(
        repo=request.repo, github_url=request.github_url, github_timeout=request.github_timeout
    )
    if expect is not None and not (request.force or request.to_stdout):
        existing = existing_folder(ws, request)
        if existing is not None:
            return change_oracle(existing, expect, request.dry_run)
    fetched = fetch(ws, request)
    out_dir = request.output or default_out_dir(ws, folder_name(fetched, request.from_file))
    stored = None if expect == EXPECT_AUTO else expect
    cache = JsonCache(cache_root(ws.settings), "renders")
    plan = plan_for(fetched.issue, cache, request.timeout, stored)
    if plan.summary.refused and not request.force:
        raise BadInput(
            f"no repro for {fetched.issue.ref}: {plan.summary.refused}",
            "pass --force to write a script anyway (it says CANNOT_RUN and why)",
        )
    actions = None
    if not request.to_stdout:
        dry_run = request.dry_run
        actions = write_outputs(plan.output_files(out_dir), force=request.force, dry_run=dry_run)
        if not dry_run and ws.root is not None:
            patterns = scratch_patterns(ws, out_dir, list(actions))
            if patterns:
                ensure_excluded(ws.root, patterns)
    here = Path.cwd().resolve()
    shown = os.path.relpath(out_dir) if out_dir.resolve().is_relative_to(here) else str(out_dir)
    return ReproResult(
        plan=plan,
        source=fetched.origin,
        warnings=[*fetched.warnings, *plan.summary.warnings],
        out_dir=out_dir,
        shown=shown,
        dry_run=request.dry_run,
        actions=actions,
    )


def existing_folder(ws: Workspace, request: ReproRequest) -> Path | None:
    """The repro folder the request names, when it was written already (for ``--expect``)."""
    from contribkit.github.sources import parse_issue_ref

    if request.output is not None:
        out_dir = request.output
    elif request.issue:
        out_dir = default_out_dir(ws, f"issue-{parse_issue_ref(request.issue)[1]}")
    else:
        out_dir = default_out_dir(ws, folder_name(fetch(ws, request), request.from_file))
    return out_dir if (out_dir / "repro.py").exists() or (out_dir / "meta.json").exists() else None


def change_oracle(out_dir: Path, expect: str, dry_run: bool) -> ReproResult:
    """Only the oracle of the repro in ``out_dir`` changes (meta.json and repro.py's header and
    ``expect=``); the issue's code and its edits stay as they are."""
    from contribkit.repro.expect import set_oracle
    from contribkit.repro.plan import ReproPlan, ReproSummary

    was, meta = set_oracle(out_dir, expect, dry_run)
    number = meta.get("number")
    repo = meta.get("repo") or ""
    summary = ReproSummary(
        issue=f"{repo}#{number}" if number else out_dir.name,
        title=str(meta.get("title") or ""),
        url=meta.get("url"),
        kind=str(meta.get("kind") or "unknown"),
        signature=meta.get("signature"),
        devices_needed=list(meta.get("devices_needed") or []),
        device_rewrite=bool(meta.get("device_rewrite")),
        incomplete=bool(meta.get("incomplete")),
        warnings=[],
        oracles=list(meta.get("oracles") or []),
        oracles_why=list(meta.get("oracles_why") or []),
        timeout_s=float(meta.get("timeout_s") or 300.0),
        expect=meta.get("expect"),
    )
    here = Path.cwd().resolve()
    shown = os.path.relpath(out_dir) if out_dir.resolve().is_relative_to(here) else str(out_dir)
    names = {str(out_dir / n): "change" for n in ("repro.py", "meta.json")}
    return ReproResult(
        plan=ReproPlan({}, summary),
        source=f"{shown}/meta.json",
        warnings=[],
        out_dir=out_dir,
        shown=shown,
        dry_run=dry_run,
        actions=names,
        oracle_was=was,
        oracle_only=True,
    )
