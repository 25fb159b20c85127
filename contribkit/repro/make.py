"""``contribkit repro`` behind its options: find the issue, plan the repro, write its folder.

:func:`make_repro` takes a :class:`ReproRequest` (the command's options) and returns a
:class:`ReproResult`; the command only prints it.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contribkit.core.errors import BadInput
from contribkit.core.fsutil import refuse_links
from contribkit.core.verdict import check_expect
from contribkit.core.workspace import Workspace
from contribkit.target.reproexpect import EXPECT_AUTO

if TYPE_CHECKING:
    from contribkit.core.render import OutputFile
    from contribkit.github.sources import Fetched
    from contribkit.repro.plan import ReproPlan


@dataclass(frozen=True)
class ReproRequest:
    issue: str | None = None  # a number, OWNER/NAME#N or an issue URL
    from_file: str | None = None  # a saved issue ('-' for stdin)
    number: int | None = None  # --number: the saved issue's number, where the file holds none
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
    in_repo: bool = True  # written inside a git repository, where `contribkit run` works
    oracle_was: str | None = None  # the folder existed: only its oracle changed, from this
    oracle_only: bool = False

    @property
    def script_text(self) -> str:
        return self.plan.files["repro.py"]

    @property
    def next_command(self) -> str:
        """What to do next, as a command that works where the folder is: `run` needs a git
        repository; outside one, the script itself (on CPU where its CUDA use was rewritten)."""
        if self.in_repo:  # before a fix, the repro is expected to reproduce
            return f"contribkit run {self.shown} --expect reproduced"
        device = " --device cpu" if self.plan.summary.device_rewrite else ""
        return f"python {os.path.join(self.shown, 'repro.py')}{device}"

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
    from contribkit.core.workspace import repros_path

    base = ws.root if ws.root is not None else Path.cwd()
    return repros_path(base, ws.settings) / name


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


def write_excluded(
    ws: Workspace, out_dir: Path, files: list[OutputFile], *, force: bool
) -> dict[str, str]:
    """Write ``files`` and keep them out of commits, both or neither: the ``.git/info/exclude``
    lines go first (a lock held by another process stops the command before anything is
    written), and are taken back when the write fails."""
    from contribkit.core.errors import ContribkitError
    from contribkit.core.render import write_outputs
    from contribkit.git.cmd import ensure_excluded, remove_excluded

    assert ws.root is not None
    patterns = scratch_patterns(ws, out_dir, [str(f.path) for f in files])
    added = ensure_excluded(ws.root, patterns) if patterns else []
    try:
        return write_outputs(files, force=force)
    except BaseException:
        if added:
            with contextlib.suppress(ContribkitError, OSError):  # a line too many is harmless
                remove_excluded(ws.root, added)
        raise


def fetch(ws: Workspace, request: ReproRequest) -> Fetched:
    """The issue the request names: fetched (or cached), read from a file, or the example."""
    from contribkit.core.redact import registered
    from contribkit.github.auth import resolve_token
    from contribkit.github.client import GitHubUnavailable
    from contribkit.github.sources import (
        example_issue,
        fetch_issue,
        load_issue_file,
        parse_issue_ref,
    )

    if request.issue:
        named, number = parse_issue_ref(request.issue)
        if number < 1:  # before any lookup: GitHub numbers issues from 1
            raise BadInput(
                f"'{request.issue}' is not an issue number", "e.g. contribkit repro 170398"
            )
        slug = named or ws.repo()[0]  # the remote lookup only when the reference names no repo
        github = ws.settings.text("github_url")
        try:
            return fetch_issue(
                ws.settings,
                slug,
                number,
                registered(resolve_token(github, request.token, use_gh=not request.offline)),
                offline=request.offline,
                refresh=request.refresh,
            )
        except GitHubUnavailable as exc:  # and nothing cached: offer what works offline
            cache = ", or use --offline to read the cache"  # nothing is cached: it would fail
            exc.hint = (
                f"{(exc.hint or '').replace(cache, '')}; offline: save the issue as issue.md, then "
                f"`contribkit repro --from-file issue.md --number {number}`, "
                "or try `contribkit repro --example`"
            )
            raise
    if request.from_file:
        fetched = load_issue_file(request.from_file)
        if request.number is not None:
            fetched.issue.number = request.number
        return fetched
    return example_issue()


# A saved issue's file named by its number: 170398.md, issue-170398.json, issue_170398.md.
_NUMBERED_FILE = re.compile(r"(?:issue[-_]?)?(\d+)", re.I)


def folder_name(fetched: Fetched, from_file: str | None) -> str:
    """``issue-N``: the issue's number, else a saved file's numeric name. A markdown body holds
    no number, and a folder named after any other file name (``issue-issue``) would say nothing."""
    if fetched.issue.number is not None:
        return f"issue-{fetched.issue.number}"
    stem = "" if from_file in (None, "-") else Path(str(from_file)).stem
    numbered = _NUMBERED_FILE.fullmatch(stem)
    if numbered:
        return f"issue-{int(numbered[1])}"
    shown = "stdin" if not stem else str(from_file)
    raise BadInput(
        f"{shown} holds no issue number to name repros/issue-N after",
        f"pass the issue's number: `contribkit repro --from-file {from_file} --number N` (or -o DIR)",
    )


def make_repro(request: ReproRequest) -> ReproResult:
    """Plan the repro of the requested issue and, unless ``to_stdout``, write its folder (and
    keep it out of commits)."""
    from contribkit.core.cache import JsonCache, cache_root
    from contribkit.core.render import write_outputs
    from contribkit.repro.plan import plan_for

    sources = [bool(request.issue), bool(request.from_file), request.example]
    if sum(sources) != 1:
        raise BadInput(
            "give exactly one of ISSUE, --from-file or --example", "e.g. contribkit repro 170398"
        )
    expect = check_expect(request.expect) if request.expect is not None else None
    if request.number is not None and not request.from_file:
        raise BadInput(
            "--number goes with --from-file (an issue fetched or bundled has its own)",
            "e.g. contribkit repro --from-file issue.md --number 170398",
        )
    ws = Workspace.load(
        repo=request.repo, github_url=request.github_url, github_timeout=request.github_timeout
    )
    if expect is not None and not (request.force or request.to_stdout):
        existing = existing_folder(ws, request)
        if existing is not None:
            return change_oracle(existing, expect, request.dry_run)
    fetched = fetch(ws, request)
    stored = None if expect == EXPECT_AUTO else expect
    plan = plan_for(
        fetched.issue, JsonCache(cache_root(ws.settings), "renders"), request.timeout, stored
    )
    if plan.summary.refused and not request.force:
        raise BadInput(
            f"no repro for {fetched.issue.ref}: {plan.summary.refused}",
            "pass --force to write a script anyway (it says CANNOT_RUN and why)",
        )
    # Named after the issue only where a folder is written (--stdout writes none), and once the
    # issue's own problems (code too deep to compile, say) have been reported.
    out_dir = request.output or (
        Path.cwd()
        if request.to_stdout
        else default_out_dir(ws, folder_name(fetched, request.from_file))
    )
    actions = None
    if not request.to_stdout:
        files = plan.output_files(out_dir)
        if ws.root is not None:
            refuse_links(ws.root, out_dir)
        if request.dry_run or ws.root is None:
            actions = write_outputs(files, force=request.force, dry_run=request.dry_run)
        else:
            actions = write_excluded(ws, out_dir, files, force=request.force)
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
        in_repo=ws.root is not None and out_dir.resolve().is_relative_to(ws.root.resolve()),
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
