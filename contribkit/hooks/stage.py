"""All of contribkit's checks for one git hook stage, in one process (``contribkit init``'s native
engine).

    python -m contribkit.hooks.stage [--lintrunner] pre-commit
    python -m contribkit.hooks.stage commit-msg .git/COMMIT_EDITMSG
    python -m contribkit.hooks.stage pre-push REMOTE URL < pushed refs

It gives each hook of the stage what pre-commit would (:data:`HOOK_RUNS`, which mirrors
``.pre-commit-hooks.yaml``): the staged files, filtered by the hook's ``files``, ``exclude`` and
``types`` (during a merge, the files pre-commit takes then); the message file; the pushed range of
each pushed ref, in pre-commit's ``PRE_COMMIT_*`` variables. Then it calls each hook's
``main(argv)`` here, importing a hook's module only when it runs, and prints each hook's report
as the hook would (warnings included). ``SKIP=id,id`` (pre-commit's variable) skips hooks, and so
does a hook id in ``hooks.disable``. The exit code is the largest of the hooks' (0 nothing
blocks, 1 a rule blocked, 2 bad usage or configuration).

Like pre-commit, it sets unstaged changes aside while the pre-commit stage runs
(:mod:`contribkit.git.unstaged`): the checks see what is being committed, not the work tree.
Standard library only, like the hooks.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from contribkit.conventions.hooklist import HOOK_MODULES, HOOK_RUNS, HookRun
from contribkit.core.shebang import shebang_words

STAGES = ("pre-commit", "commit-msg", "pre-push")
USAGE = (
    "usage: python -m contribkit.hooks.stage [--lintrunner] {pre-commit,commit-msg,pre-push} "
    "[git's hook arguments]"
)
# identify's tags, as pre-commit reads them: the names and extensions it calls python
PYTHON_EXTENSIONS = frozenset({"py", "pyw", "pyt", "gyp", "gypi", "tac", "wsgi"})
PYTHON_NAMES = frozenset({".pdbrc", "wscript"})
PYTHON_INTERPRETERS = frozenset({"python", "python2", "python3"})


def skipped(environ: Mapping[str, str]) -> set[str]:
    """The hook ids in ``SKIP``, as pre-commit reads it."""
    return {name.strip() for name in environ.get("SKIP", "").split(",") if name.strip()}


def stage_hooks(stage: str, lintrunner: bool) -> list[str]:
    """The hooks of ``stage``, in the hook list's order (opt-in ones only when asked for)."""
    return [
        hook_id
        for hook_id, run in HOOK_RUNS.items()
        if stage in run.stages and (lintrunner or not run.opt_in)
    ]


# --- which files each hook gets ----------------------------------------------------------------


def _shebang_is_python(path: str) -> bool:
    words = shebang_words(path, 256)
    if words and words[0].endswith("/env"):
        words = [w for w in words[1:] if not w.startswith("-")]
    name = words[0].rpartition("/")[2] if words else ""
    return name.split(".")[0] in PYTHON_INTERPRETERS


def file_tags(path: str) -> frozenset[str]:
    """The tags pre-commit's ``types`` are matched against, of those the hooks use: ``file`` for
    a regular file (not a symlink, folder or submodule), ``python`` for Python source (by name,
    else an executable's shebang)."""
    import stat

    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return frozenset()
    if not stat.S_ISREG(mode):
        return frozenset()
    base = os.path.basename(path)
    ext = base.rpartition(".")[2].lower() if "." in base.lstrip(".") else ""
    if base in PYTHON_NAMES or ext in PYTHON_EXTENSIONS:
        return frozenset({"file", "python"})
    if not ext and os.access(path, os.X_OK) and _shebang_is_python(path):
        return frozenset({"file", "python"})
    return frozenset({"file"})


def files_for(run: HookRun, files: Sequence[str], tags: dict[str, frozenset[str]]) -> list[str]:
    """The files of ``files`` that pre-commit would give a hook (``tags`` caches file_tags)."""
    import re

    include, exclude = re.compile(run.files), re.compile(run.exclude)
    chosen = []
    for name in files:
        if not include.search(name) or exclude.search(name):
            continue
        if name not in tags:
            tags[name] = file_tags(name)
        if tags[name].issuperset(run.types):
            chosen.append(name)
    return chosen


def _git_dir() -> str:
    if not os.environ.get("GIT_DIR") and os.path.isdir(".git"):
        return ".git"
    from contribkit.git import cmd as gitcmd

    return gitcmd.git("rev-parse", "--git-dir")


def changed_files() -> list[str]:
    """The files a commit changes, as pre-commit takes them: the staged ones that still exist,
    or during a merge the conflicted ones and those changed since (not all that the merge
    brings in)."""
    from contribkit.git import cmd as gitcmd

    git_dir = _git_dir()
    in_merge = all(os.path.exists(os.path.join(git_dir, f)) for f in ("MERGE_MSG", "MERGE_HEAD"))
    if in_merge:
        with open(os.path.join(git_dir, "MERGE_MSG"), "rb") as fh:
            conflicts = [
                line.lstrip(b"#").strip().decode("utf-8", "replace")
                for line in fh.read().splitlines()
                if line.startswith((b"\t", b"#\t"))
            ]
        tree = gitcmd.git("write-tree")
        out = gitcmd.git(
            "diff", "--name-only", "--no-ext-diff", "-z", "-m", tree, "HEAD", "MERGE_HEAD", "--"
        )
        names = sorted(set(conflicts) | {n for n in out.split("\0") if n})
    else:  # the common case: git started without importing subprocess
        out = gitcmd.git_lean(
            "diff", "--staged", "--name-only", "--no-ext-diff", "-z", "--diff-filter=ACMRTUXB"
        )
        names = [n for n in out.split("\0") if n]
    return [n for n in names if os.path.lexists(n)]


# --- the pushed refs ---------------------------------------------------------------------------


def _is_zero(sha: str) -> bool:
    return not sha.strip("0")


def pushed_refs(remote_name: str, remote_url: str, stdin: str) -> list[dict[str, str]]:
    """For each ref git pushes, the ``PRE_COMMIT_*`` variables pre-commit would set for its
    pre-push hooks (deletions and refs with nothing new to push are left out). pre-commit checks
    only the first such ref; every one is checked here."""
    from contribkit.git import cmd as gitcmd

    found = []
    for line in stdin.splitlines():
        parts = line.rsplit(maxsplit=3)
        if len(parts) != 4 or _is_zero(parts[1]):
            continue
        local_branch, local_sha, remote_branch, remote_sha = parts
        env = {
            "PRE_COMMIT_LOCAL_BRANCH": local_branch,
            "PRE_COMMIT_REMOTE_BRANCH": remote_branch,
            "PRE_COMMIT_REMOTE_NAME": remote_name,
            "PRE_COMMIT_REMOTE_URL": remote_url,
        }
        source = ""
        known = (
            gitcmd.git("cat-file", "-t", remote_sha, check=False)
            if not _is_zero(remote_sha)
            else ""
        )
        if known == "commit":
            source = remote_sha
        else:  # a new branch: from the parent of its first commit the remote lacks
            ancestors = gitcmd.git(
                "rev-list", local_sha, "--topo-order", "--reverse", "--not",
                f"--remotes={remote_name}", check=False,
            ).split()  # fmt: skip
            if not ancestors:
                continue
            roots = gitcmd.git("rev-list", "--max-parents=0", local_sha, check=False).split()
            if ancestors[0] not in roots:  # else the whole history: no range, as pre-commit
                source = gitcmd.git("rev-parse", f"{ancestors[0]}^")
        if source:
            env.update(
                PRE_COMMIT_FROM_REF=source,
                PRE_COMMIT_TO_REF=local_sha,
                PRE_COMMIT_ORIGIN=source,
                PRE_COMMIT_SOURCE=local_sha,
            )
        found.append(env)
    return found


# --- running them --------------------------------------------------------------------------------


def run_hooks(runs: Sequence[tuple[str, list[str]]]) -> int:
    """Call each hook's ``main(argv)`` in this process; the largest exit code."""
    from contribkit.hooks import _common

    _common.share_settings()
    worst = 0
    for hook_id, argv in runs:
        module = __import__(f"contribkit.hooks.{HOOK_MODULES[hook_id]}", fromlist=["main"])
        code = int(module.main(argv))
        sys.stdout.flush()
        if code:
            print(
                f"contribkit: {hook_id} failed (exit {code}); to skip it once: "
                f"SKIP={hook_id} git …",
                file=sys.stderr,
            )
        worst = max(worst, code)
    return worst


def pre_commit_runs(hook_ids: Sequence[str]) -> list[tuple[str, list[str]]]:
    files: list[str] | None = None
    tags: dict[str, frozenset[str]] = {}
    runs: list[tuple[str, list[str]]] = []
    for hook_id in hook_ids:
        run = HOOK_RUNS[hook_id]
        if not run.pass_filenames and run.always_run:
            runs.append((hook_id, []))
            continue
        if files is None:
            files = changed_files()
        chosen = files_for(run, files, tags)
        if chosen or run.always_run:
            runs.append((hook_id, ["--", *chosen] if run.pass_filenames else []))
    return runs


def run_stage(stage: str, args: Sequence[str], lintrunner: bool = False) -> int:
    hook_ids = [h for h in stage_hooks(stage, lintrunner) if h not in skipped(os.environ)]
    if stage == "commit-msg":
        if len(args) != 1:
            print(f"{USAGE}\ncommit-msg takes the message file", file=sys.stderr)
            return 2
        return run_hooks([(hook_id, ["--", args[0]]) for hook_id in hook_ids])
    if stage == "pre-commit":
        if not hook_ids:
            return 0
        from contribkit.git.unstaged import on_staged_content

        return on_staged_content(_git_dir(), lambda: run_hooks(pre_commit_runs(hook_ids)))
    if len(args) != 2:
        print(f"{USAGE}\npre-push takes the remote's name and URL", file=sys.stderr)
        return 2
    stdin = sys.stdin.buffer.read().decode("utf-8", "replace")
    worst = 0
    for env in pushed_refs(args[0], args[1], stdin) if hook_ids else []:
        saved = {name: os.environ.get(name) for name in env}
        os.environ.update(env)
        try:
            worst = max(worst, run_hooks([(hook_id, []) for hook_id in hook_ids]))
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return worst


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    lintrunner = "--lintrunner" in args[:1]
    if lintrunner:
        args = args[1:]
    if not args or args[0] not in STAGES:
        print(USAGE, file=sys.stderr)
        return 0 if args[:1] in (["-h"], ["--help"]) else 2
    if not os.path.exists(".git"):  # git runs hooks at the top of the work tree; a person may not
        from contribkit.git import cmd as gitcmd

        top = gitcmd.git("rev-parse", "--show-toplevel", check=False)
        if top:
            os.chdir(top)
    try:
        return run_stage(args[0], args[1:], lintrunner)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP, once unstaged changes are back
        print("contribkit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
