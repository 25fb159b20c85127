"""``contribkit submit``: the gate on the latest run record, then the pull request.

The gate passes only when the latest record is for the current HEAD, was taken on a clean tree
that is still the same (diff hash), its files are unchanged, it covers the branch's work (the
repro of its issue and the test files it changes, as ``contribkit run`` finds them), and every
required cell is green for the fix (repros NOT_REPRODUCED). The title and body are
``contribkit pr``'s (or the user's), and must pass the PR rules (``contribkit pr --check``). The PR is opened with
``gh pr create --body-file`` when gh is installed and logged in, else with PyGithub's
``create_pull``. Nothing is pushed unless asked.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contribkit.conventions.branches import GHSTACK_NOTE, is_ghstack
from contribkit.core.errors import AuthRequired, BadInput, CheckFailed
from contribkit.core.proc import run_child
from contribkit.core.redact import redact
from contribkit.git import cmd as gitcmd
from contribkit.run.record import RunRecord, evaluate, latest_record, runs_dir
from contribkit.run.runner import classify, default_paths, file_digest, relpath

if TYPE_CHECKING:
    from contribkit.conventions.rules import Violation
    from contribkit.core.config import Settings
    from contribkit.core.workspace import Workspace
    from contribkit.git.facts import BranchFacts
    from contribkit.pr.draft import TitleRules

RUN_AGAIN = "run `contribkit run`"
GH_TIMEOUT_S = 120.0
PUSH_TIMEOUT_S = 300.0


# -- the gate ---------------------------------------------------------------------------------
def check_gate(root: Path, settings: Settings, facts: BranchFacts) -> tuple[Path, RunRecord]:
    """The latest record, if it vouches for this exact tree and the branch's work (its issue's
    repro and the test files it changes); else CheckFailed saying why not."""
    state = facts.state
    latest = latest_record(root)
    if latest is None:
        raise CheckFailed(
            f"no run record in {relpath(runs_dir(root), root)}: {RUN_AGAIN} first",
            hint="contribkit run  # the repro and the changed tests, on cpu and cuda",
        )
    path, record = latest
    if record.head != state.head:
        raise CheckFailed(
            f"the record is for {record.short_head}; HEAD is {state.short_head}: {RUN_AGAIN}"
        )
    if record.dirty:
        raise CheckFailed(
            f"the record was made with uncommitted changes: commit them, then {RUN_AGAIN}"
        )
    if state.dirty or state.diff_hash != record.diff_hash:
        shown = ", ".join(state.uncommitted[:3]) + (" …" if len(state.uncommitted) > 3 else "")
        raise CheckFailed(
            f"the tree has uncommitted changes ({shown}): commit or stash them, then {RUN_AGAIN}"
        )
    for name, digest in record.files.items():
        file = Path(name) if Path(name).is_absolute() else root / name
        if not file.is_file() or file_digest(file) != digest:
            raise CheckFailed(f"{name} changed since the record: {RUN_AGAIN}")
    paths, _ = default_paths(root, settings, facts)
    ran = {cell.file for cell in record.cells}
    missing = [f for f in (relpath(classify(p).path, root) for p in paths) if f not in ran]
    if missing:
        command = shlex.join(["contribkit", "run", *(relpath(p, root) for p in paths)])
        raise CheckFailed(
            f"the record does not cover {', '.join(missing)}: run `{command}`",
            hint="the gate needs the repro of the branch's issue and every test file it changes",
        )
    if record.keyword:
        raise CheckFailed(
            f"the record ran only the tests matching -k {record.keyword!r}: {RUN_AGAIN} without -k"
        )
    if record.expect == "reproduced":
        raise CheckFailed(
            f"the latest record confirms the bug (--expect reproduced): fix it, then {RUN_AGAIN}"
        )
    ok, reason = evaluate(record.cells, "not-reproduced")
    if not ok:
        raise CheckFailed(f"the record is not green: {reason}: fix it, then {RUN_AGAIN}")
    return path, record


# -- what would be sent -----------------------------------------------------------------------
@dataclass
class PullRequest:
    repo: str  # OWNER/NAME the PR is opened against
    base: str
    head: str  # USER:BRANCH, or BRANCH for a branch of repo itself
    title: str
    body: str
    draft: bool = False
    labels: list[str] = field(default_factory=list)
    reviewers: list[str] = field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        """The JSON of ``POST /repos/{repo}/pulls``."""
        return {
            "title": self.title,
            "head": self.head,
            "base": self.base,
            "body": self.body,
            "draft": self.draft,
        }


@dataclass
class Push:
    remote: str
    branch: str
    needed: bool
    state: str  # e.g. "origin/fix is at abc1234; HEAD is def5678"

    def argv(self) -> list[str]:
        return ["git", "push", "--set-upstream", self.remote, self.branch]


@dataclass
class Submission:
    record_path: Path
    record: RunRecord
    pr: PullRequest
    violations: list[Violation]  # PR rules (CKPxx) the title or body breaks: the gate refuses
    notes: list[str]  # what the body generator could not find (e.g. an uncached issue)
    comments: list[str]  # for the user to post once the PR is open (@pytorchbot label "…")
    push: Push | None  # None: no push remote, and --head names the branch
    push_required: bool  # False with --head: the branch is the user's to manage
    method: str  # "gh" or "api"
    gh: str | None  # the gh executable, for method "gh"
    body_path: Path
    github_url: str

    def gh_argv(self) -> list[str]:
        host = _gh_host(self.github_url)
        repo = self.pr.repo if host == "github.com" else f"{host}/{self.pr.repo}"
        argv = [self.gh or "gh", "pr", "create", "--repo", repo, "--title", self.pr.title]
        argv += ["--body-file", str(self.body_path), "--base", self.pr.base, "--head", self.pr.head]
        if self.pr.draft:
            argv.append("--draft")
        for label in self.pr.labels:
            argv += ["--label", label]
        for reviewer in self.pr.reviewers:
            argv += ["--reviewer", reviewer]
        return argv

    def api_calls(self) -> list[dict[str, Any]]:
        """The requests PyGithub makes, in order (the PR number is known only after the first)."""
        base = f"{self.github_url.rstrip('/')}/repos/{self.pr.repo}"
        calls: list[dict[str, Any]] = [
            {"method": "POST", "url": f"{base}/pulls", "json": self.pr.payload()}
        ]
        if self.pr.labels:
            calls.append(
                {
                    "method": "POST",
                    "url": f"{base}/issues/{{number}}/labels",
                    "json": self.pr.labels,
                }
            )
        if self.pr.reviewers:
            calls.append(
                {
                    "method": "POST",
                    "url": f"{base}/pulls/{{number}}/requested_reviewers",
                    "json": {"reviewers": self.pr.reviewers},
                }
            )
        return calls

    def describe(self, root: Path) -> dict[str, Any]:
        return {
            "record": relpath(self.record_path, root),
            "head_sha": self.record.head,
            "method": self.method,
            "pull_request": asdict(self.pr),
            "push": asdict(self.push) if self.push else None,
            "push_command": self.push.argv() if self.push and self.push.needed else None,
            "command": self.gh_argv() if self.method == "gh" else None,
            "api_calls": self.api_calls() if self.method == "api" else None,
            "body_path": relpath(self.body_path, root),
            "body_notes": self.notes,
            "comments": self.comments,
            "body_violations": [
                {"id": v.rule.id, "slug": v.rule.slug, "line": v.line, "message": v.message}
                for v in self.violations
            ],
        }


def _gh_host(github_url: str) -> str:
    from contribkit.github.auth import api_host

    return api_host(github_url)


def split_list(values: tuple[str, ...] | list[str]) -> list[str]:
    """Repeatable options that also take comma lists, as gh's --label and --reviewer do."""
    return list(dict.fromkeys(v.strip() for value in values for v in value.split(",") if v.strip()))


def target_repo(ws: Workspace) -> str:
    """The repository the PR goes to: --repo or the repo setting, else the upstream remote's."""
    from contribkit.core.workspace import validate_slug

    configured = ws.settings.optional_text("repo")
    if configured:
        return validate_slug(configured)
    upstream = ws.settings.text("upstream_remote")
    slug = ws.remote_slug(upstream)
    if slug is None:
        raise BadInput(
            f"no remote named '{upstream}' to open the pull request against",
            hint=f"git remote add {upstream} https://github.com/pytorch/pytorch.git, or pass --repo OWNER/NAME",
        )
    return slug


def push_state(root: Path, remote: str, branch: str, head: str) -> Push:
    if gitcmd.git("remote", "get-url", remote, cwd=root, check=False) == "":
        raise BadInput(
            f"no remote named '{remote}' (your fork) to push {branch} to",
            hint=f"git remote add {remote} <your fork's URL>, or pass --head USER:BRANCH",
        )
    tracking = gitcmd.git(
        "rev-parse", "--verify", "--quiet", f"refs/remotes/{remote}/{branch}", cwd=root, check=False
    )
    if tracking == head:
        return Push(remote, branch, False, f"{remote}/{branch} is at {head[:7]}")
    if not tracking:
        return Push(remote, branch, True, f"{branch} is not on {remote}")
    return Push(remote, branch, True, f"{remote}/{branch} is at {tracking[:7]}; HEAD is {head[:7]}")


def gh_ready(github_url: str) -> str | None:
    """The gh executable when it is installed and logged in to the API's host, else None."""
    gh = shutil.which("gh")
    if gh is None:
        return None
    # gh is the user's own authenticated tool: it gets their environment, tokens included.
    result = run_child(
        [gh, "auth", "status", "--hostname", _gh_host(github_url)],
        env=dict(os.environ),
        timeout=30,
    )
    return gh if result.returncode == 0 else None


def check_body(
    ws: Workspace, facts: BranchFacts, rules: TitleRules, title: str, body: str, name: str
) -> list[Violation]:
    """The PR rules (``contribkit pr --check``) the title and body break so that they block (the
    errors; the warnings too under hooks.strict), less hooks.disable."""
    from contribkit.conventions.rules import resolve_rule_names
    from contribkit.pr.check import check_pr
    from contribkit.pr.draft import check_context

    disabled, _ = resolve_rule_names(list(ws.settings.names("hooks.disable")))
    context = check_context(ws.root, facts, rules, title=title)
    strict = ws.settings.flag("hooks.strict")
    return [
        v
        for v in check_pr(body, context, path=name)
        if v.blocks(strict) and v.rule.id not in disabled
    ]


def plan_submission(
    ws: Workspace,
    *,
    base: str | None,
    head: str | None,
    title: str | None,
    draft: bool,
    labels: list[str],
    reviewers: list[str],
    body_file: Path | None = None,
) -> Submission:
    """Check everything, and decide what would be sent, without sending or pushing anything.

    The body is ``body_file``, else the one ``contribkit pr`` writes (from the cached issue: no
    request is made for it); the title is ``title``, else ``contribkit pr``'s.
    """
    from contribkit.git import facts as gitfacts
    from contribkit.pr import draft as prdraft
    from contribkit.pr.gather import gather

    root = ws.require_root()
    settings = ws.settings
    branch = gitcmd.current_branch(root)
    if branch is None:
        raise BadInput(
            "HEAD is detached: submit opens a PR for a branch",
            hint="git switch -c fix/issue-NUMBER-short-name",
        )
    base_branch = base or settings.text("base_branch")
    if branch == base_branch:
        raise BadInput(
            f"you are on '{branch}', the base branch: a PR needs a branch of its own",
            hint="git switch -c fix/issue-NUMBER-short-name",
        )
    repo = target_repo(ws)
    facts: BranchFacts = gitfacts.branch_facts(root, settings.text("upstream_remote"), base_branch)
    record_path, record = check_gate(root, settings, facts)
    if is_ghstack(branch):  # after the gate: a stack needs the same evidence
        raise BadInput(
            f"{branch} is {GHSTACK_NOTE}: submit does not open it",
            hint="the run record is green and current: run `ghstack` to open or update the stack",
        )
    if facts.merge_base is not None and not facts.commits:
        raise BadInput(
            f"'{branch}' has no commits since {facts.merge_base.ref}: there is nothing to propose",
            hint="commit your fix first",
        )
    remote = settings.text("push_remote")
    has_remote = gitcmd.git("remote", "get-url", remote, cwd=root, check=False) != ""
    push_required = head is None
    push = (
        push_state(root, remote, branch, facts.state.head) if has_remote or push_required else None
    )
    if head is None:
        fork = ws.remote_slug(remote)
        owner = fork.split("/")[0] if fork else None
        head = f"{owner}:{branch}" if owner and fork != repo else branch
    rules = prdraft.TitleRules.from_settings(settings)
    written = prdraft.draft(gather(ws, facts, offline=True), rules, title=title or None)
    body, body_name = written.body, "the generated body"
    if body_file is not None:
        body, body_name = redact(read_body_file(body_file)), str(body_file)
    pr = PullRequest(
        repo=repo,
        base=base_branch,
        head=head,
        title=written.title,
        body=body,
        draft=draft,
        labels=labels,
        reviewers=reviewers,
    )
    from contribkit.github.auth import check_github_url

    github_url = check_github_url(settings.text("github_url"))
    gh = gh_ready(github_url)
    return Submission(
        record_path=record_path,
        record=record,
        pr=pr,
        violations=check_body(ws, facts, rules, pr.title, pr.body, body_name),
        notes=written.warnings if body_file is None else [],
        comments=written.comments,
        push=push,
        push_required=push_required,
        method="gh" if gh else "api",
        gh=gh,
        body_path=root / ".contribkit" / f"pr-body-{record.short_head}.md",
        github_url=github_url,
    )


@dataclass(frozen=True)
class SubmitRequest:
    base: str | None = None  # default: the base_branch setting
    head: str | None = None  # USER:BRANCH; default: your fork's owner and the current branch
    title: str | None = None  # default: contribkit pr's
    body_file: Path | None = None  # default: contribkit pr's body
    draft: bool = False
    labels: tuple[str, ...] = ()  # repeatable, each possibly a comma list
    reviewers: tuple[str, ...] = ()
    push: bool = False  # push the branch first when it is not there, without asking
    dry_run: bool = False
    repo: str | None = None
    github_url: str | None = None
    github_timeout: float | None = None  # --github-timeout: seconds for all GitHub requests


@dataclass
class SubmitOutcome:
    root: Path
    plan: Submission
    url: str | None = None  # the pull request opened; None for a dry run
    number: int | None = None

    @property
    def exit_code(self) -> int:
        """A dry run that got this far fails only when the body breaks PR rules."""
        return 1 if self.url is None and self.plan.violations else 0


def submit(
    request: SubmitRequest,
    *,
    review: Callable[[Path, Submission], None],
    confirm: Callable[[Push], bool],
) -> SubmitOutcome:
    """Plan the pull request and let ``review`` show it (it refuses by raising); then, unless
    ``dry_run``, push the branch when needed (``confirm`` is asked unless ``push``) and open it."""
    from contribkit.core.fsutil import atomic_write
    from contribkit.core.workspace import Workspace

    ws = Workspace.load(
        repo=request.repo, github_url=request.github_url, github_timeout=request.github_timeout
    )
    root = ws.require_root()
    plan = plan_submission(
        ws,
        base=request.base,
        head=request.head,
        title=request.title,
        draft=request.draft,
        labels=split_list(request.labels),
        reviewers=split_list(request.reviewers),
        body_file=request.body_file,
    )
    review(root, plan)
    if request.dry_run:
        return SubmitOutcome(root, plan)
    push = plan.push
    if push is not None and push.needed and (request.push or plan.push_required):
        if not (request.push or confirm(push)):
            raise CheckFailed(
                f"the branch is not pushed ({push.state})",
                hint=f"pass --push, or run: {shlex.join(push.argv())}",
            )
        do_push(root, push)
    if plan.method == "gh":
        atomic_write(plan.body_path, plan.pr.body, force=True)
        url, number = create_with_gh(root, plan)
    else:
        url, number = create_with_api(ws.settings, plan)
    return SubmitOutcome(root, plan, url, number)


def read_body_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise BadInput(
            f"{path}: no such file", hint="write it with: contribkit pr -o FILE"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {path}: {exc}") from exc


# -- sending ----------------------------------------------------------------------------------
def _message(output: str) -> str:
    """A tool's failure in one line: its ``fatal:``/``error:`` lines, else its last lines."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    errors = [line for line in lines if line.lower().startswith(("fatal:", "error:"))]
    return " ".join(errors[:2] or lines[-3:]) or "no output"


def do_push(root: Path, push: Push) -> None:
    result = run_child(
        push.argv(),
        # git may need the user's credentials (ssh agent, helpers); no prompt can reach it here.
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        cwd=root,
        timeout=PUSH_TIMEOUT_S,
    )
    if result.returncode != 0:
        raise CheckFailed(
            f"git push failed: {_message(result.output)}",
            hint=f"push by hand ({shlex.join(push.argv())}), then run submit again",
        )


def create_with_gh(root: Path, submission: Submission) -> tuple[str, int | None]:
    """Run ``gh pr create``; return the PR's URL and number. gh's message is passed through."""
    result = run_child(submission.gh_argv(), env=dict(os.environ), cwd=root, timeout=GH_TIMEOUT_S)
    if result.timed_out:
        raise CheckFailed(f"gh pr create did not finish in {GH_TIMEOUT_S:g}s")
    if result.returncode != 0:
        message = f"gh pr create failed: {_message(result.output)}"
        hint = f"the body is saved in {relpath(submission.body_path, root)}"
        if result.returncode == 4:
            raise AuthRequired(message, hint="gh auth login")
        raise CheckFailed(message, hint=hint)
    urls = re.findall(r"https?://\S+", result.output)
    url = urls[-1] if urls else result.output.strip()
    number = re.search(r"/pull/(\d+)$", url)
    return url, int(number.group(1)) if number else None


def create_with_api(settings: Settings, submission: Submission) -> tuple[str, int]:
    """``create_pull`` (then labels and reviewers); return the PR's URL and number."""
    from contribkit.core.redact import registered
    from contribkit.github.auth import api_host, is_enterprise, resolve_token
    from contribkit.github.client import Deadline, github_errors, make_client

    github_url = settings.text("github_url")
    token = registered(resolve_token(github_url))
    if not token:
        host = api_host(github_url)
        variable = "GH_ENTERPRISE_TOKEN" if is_enterprise(host) else "GH_TOKEN"
        raise AuthRequired(
            "opening a pull request needs a GitHub token",
            hint=f"run `gh auth login --hostname {host}`, or export {variable}",
        )
    pr = submission.pr
    deadline = Deadline.from_settings(settings)
    client = make_client(settings, token, deadline)

    def create() -> tuple[str, int]:
        repo = client.get_repo(pr.repo)
        pull = repo.create_pull(
            base=pr.base, head=pr.head, title=pr.title, body=pr.body, draft=pr.draft
        )
        if pr.labels:
            pull.add_to_labels(*pr.labels)
        if pr.reviewers:
            pull.create_review_request(reviewers=pr.reviewers)
        return pull.html_url, pull.number

    try:
        with github_errors(f"repository {pr.repo}", token, github_url, offline=False):
            return deadline.run(f"the pull request to {pr.repo}", create, offline=False)
    finally:
        client.close()
