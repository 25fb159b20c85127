"""The rules the hooks enforce: one catalog of ids, slugs and fix hints, and the Violation type.

Standard library only, and plain classes rather than dataclasses: the hooks import this on every
commit, and importing ``dataclasses`` costs more than the whole check. Every rule has an id (``CK1xx``
commit message, ``CK2xx`` branch, ``CK3xx`` debug leftovers, ``CK4xx`` scratch files, ``CK5xx``
test-file conventions, ``CK6xx`` tests with a change, ``CK7xx`` PR scope, ``CK8xx`` lintrunner,
``CKPxx`` PR title and body, checked by ``contribkit pr --check`` and the ``submit`` gate) and a
slug; either switches it off in ``hooks.disable``. The README's rule tables follow this
catalog, and ``tests/test_hooks_manifest.py`` keeps the two in step.

Two profiles. Each rule carries its default severity: an ``error`` blocks (the hook exits 1), and
is kept for what is wrong in any PyTorch PR (a template placeholder left, an empty title, a
conflict marker, scratch or oversized files, debug leftovers, a missing AI disclosure, WIP or
fixup commits pushed); a ``warning`` is style advice, printed but never blocking. A violation may
carry its own severity where one rule is advice in one case and wrong in another (CKP01).
``hooks.strict = true`` turns every warning into an error (:meth:`Violation.blocks`).
"""

from __future__ import annotations

ERROR = "error"
WARNING = "warning"


class Rule:
    __slots__ = ("hint", "id", "severity", "slug")

    def __init__(self, id: str, slug: str, hint: str, severity: str = ERROR) -> None:
        self.id = id
        self.slug = slug
        self.hint = hint  # the one fix hint printed under each violation
        self.severity = severity  # a WARNING is printed but never fails the hook

    def __repr__(self) -> str:
        return f"Rule({self.id!r}, {self.slug!r})"


class Violation:
    __slots__ = ("hint", "line", "message", "path", "rule", "severity")

    def __init__(
        self,
        rule: Rule,
        message: str,
        line: int | None = None,
        path: str | None = None,
        hint: str | None = None,
        severity: str | None = None,
    ) -> None:
        self.rule = rule
        self.message = message
        self.line = line
        self.path = path
        self.hint = hint  # overrides rule.hint when the fix is specific
        self.severity = severity or rule.severity  # overrides the rule's default when given

    def __repr__(self) -> str:
        where = ":".join(str(p) for p in (self.path, self.line) if p is not None)
        return f"Violation({self.rule.id} {where} {self.message!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Violation) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[str, str, int | None, str | None, str | None, str]:
        return (self.rule.id, self.message, self.line, self.path, self.hint, self.severity)

    @property
    def fix(self) -> str:
        return self.hint or self.rule.hint

    @property
    def is_error(self) -> bool:
        """Whether it blocks in the default profile."""
        return self.severity == ERROR

    def blocks(self, strict: bool = False) -> bool:
        """Whether it blocks: an error always, a warning too under ``hooks.strict``."""
        return strict or self.severity == ERROR


def _catalog(*rules: Rule) -> dict[str, Rule]:
    return {rule.id: rule for rule in rules}


RULES: dict[str, Rule] = _catalog(
    # contribkit-commit-msg: style advice, apart from an undecodable message
    Rule(
        "CK101",
        "title-too-long",
        "keep the title short; move the detail into the body",
        WARNING,
    ),
    Rule("CK102", "title-trailing-period", "drop the period at the end of the title", WARNING),
    Rule("CK103", "title-whitespace", "remove the leading whitespace in the title", WARNING),
    Rule(
        "CK104",
        "title-wip",
        "fine while you work; squash or reword it before you push (CK204 blocks the push)",
        WARNING,
    ),
    Rule(
        "CK105",
        "title-not-imperative",
        'write the title as a command: "Fix …", not "Fixed …"',
        WARNING,
    ),
    Rule(
        "CK106",
        "title-style",
        "follow the configured title style (hooks.title_style)",
        WARNING,
    ),
    Rule("CK107", "body-separator", "leave the second line of the message blank", WARNING),
    Rule(
        "CK108",
        "body-line-too-long",
        "wrap the body; URLs, code and trailers may stay long",
        WARNING,
    ),
    Rule(
        "CK109",
        "issue-not-referenced",
        "reference the branch's issue, e.g. 'Fixes #N'",
        WARNING,
    ),
    Rule("CK110", "message-not-utf8", "save the message as UTF-8 (or set i18n.commitEncoding)"),
    # contribkit-branch-name
    Rule(
        "CK201",
        "branch-name",
        "rename the branch: git branch -m fix/<issue>-<what>",
        WARNING,
    ),
    Rule(
        "CK202",
        "branch-no-issue",
        "put the issue number in the branch name, e.g. fix/12345-<what>",
        WARNING,
    ),
    Rule(
        "CK203",
        "protected-branch",
        "work on a topic branch: git switch -c fix/<issue>-<what>",
        WARNING,
    ),
    Rule(
        "CK204",
        "wip-pushed",
        "squash or reword it first: git rebase -i --autosquash <base>",
    ),
    # contribkit-no-debug-leftovers
    Rule("CK301", "breakpoint", "remove the breakpoint() call"),
    Rule("CK302", "debugger-import", "remove the debugger import"),
    Rule("CK303", "set-trace", "remove the set_trace() call"),
    Rule("CK304", "debug-print", "remove the debug print, or log it with logging at DEBUG level"),
    Rule("CK305", "debug-config", "remove the debug setting; pass TORCH_LOGS when you run instead"),
    Rule(
        "CK306",
        "debug-env-var",
        "don't set debug variables in library code; export them when running",
    ),
    # contribkit-no-scratch-files
    Rule(
        "CK401",
        "scratch-file",
        "unstage it: git restore --staged <path> (contribkit init excludes it)",
    ),
    Rule(
        "CK402",
        "file-too-large",
        "don't commit large files; raise hooks.max_file_kb if it is needed",
    ),
    Rule(
        "CK403",
        "conflict-marker",
        "resolve the conflict: keep the right lines and delete the markers",
    ),
    # contribkit-test-conventions (shared with the test scaffold, see contribkit.conventions.testfiles)
    Rule("CK501", "owner-missing", 'add a first line like: # Owner(s): ["module: nn"]'),
    Rule("CK502", "owner-malformed", 'write a JSON list of labels: # Owner(s): ["module: nn"]'),
    Rule("CK503", "run-tests-main", 'end the file with: if __name__ == "__main__": run_tests()'),
    Rule(
        "CK504",
        "device-tests-not-instantiated",
        "add at module level: instantiate_device_type_tests(TestClass, globals())",
        WARNING,
    ),
    Rule(
        "CK505",
        "hard-coded-cuda",
        'use the `device` argument instead of "cuda" (or mark the test @onlyCUDA)',
        WARNING,
    ),
    Rule("CK506", "test-unparsable", "fix the syntax error so the conventions can be checked"),
    # contribkit-tests-required
    Rule(
        "CK601",
        "tests-missing",
        "add a test (contribkit test --from-repro repros/issue-N), or explain in a "
        "'Test Plan:' line of a commit message",
    ),
    # contribkit-pr-scope
    Rule("CK701", "pr-too-many-areas", "consider splitting the PR by area", WARNING),
    Rule("CK702", "pr-too-large", "consider splitting the PR into smaller ones", WARNING),
    # contribkit-lintrunner
    Rule("CK801", "lintrunner-missing", "pip install lintrunner && lintrunner init"),
    Rule("CK802", "lintrunner-not-initialised", "run: lintrunner init"),
    Rule("CK803", "lintrunner-failed", "run: lintrunner -a  (applies the fixes it can)"),
    # contribkit pr --check (and the submit gate): the PR title and body. CKP01 is an error
    # when the branch names an issue the body does not link; CKP06 when the title is empty.
    Rule(
        "CKP01",
        "fixes-link",
        "start the body with 'Fixes #N' for the issue the PR fixes",
        WARNING,
    ),
    Rule(
        "CKP02",
        "test-plan-names-test",
        "add a '## Test plan' naming the test, e.g. python test/test_nn.py -k test_relu",
        WARNING,
    ),
    Rule("CKP03", "placeholder-left", "replace the placeholder with the real text, or delete it"),
    Rule(
        "CKP04",
        "performance-without-bench",
        "drop the Performance section, or record a benchmark in .contribkit/bench/",
        WARNING,
    ),
    Rule(
        "CKP05",
        "ai-disclosure-missing",
        "add an '## Agent details' section saying what the AI did and what you checked",
    ),
    Rule(
        "CKP06",
        "pr-title-style",
        'write the title as "[area] Imperative summary", ≤ 90 characters',
        WARNING,
    ),
)


def resolve_rule_names(names: list[str]) -> tuple[frozenset[str], list[str]]:
    """Rule ids for ``names`` (ids or slugs, any case), and the names that match no rule."""
    by_slug = {rule.slug: rule.id for rule in RULES.values()}
    ids: set[str] = set()
    unknown: list[str] = []
    for name in names:
        key = name.strip()
        if key.upper() in RULES:
            ids.add(key.upper())
        elif key.lower() in by_slug:
            ids.add(by_slug[key.lower()])
        elif key:
            unknown.append(key)
    return frozenset(ids), unknown
