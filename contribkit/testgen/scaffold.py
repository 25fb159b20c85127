"""``contribkit test``'s core: the command's options in, one test planned and written out.

The options are checked, the test is built (for --op and --module by probing the target
interpreter), placed (``--into``, ``--path`` or the area's file) and, unless it goes to stdout,
written. The command prints the result.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from contribkit.core.errors import BadInput
from contribkit.core.render import OutputFile, write_outputs
from contribkit.core.workspace import Workspace
from contribkit.testgen.areas import check_area, method_name
from contribkit.testgen.files import FilePlan, plan_default, plan_into, plan_new_file, split_into
from contribkit.testgen.fromrepro import read_repro, repro_spec, resolve_repro_dir
from contribkit.testgen.modulespecs import module_spec
from contribkit.testgen.specs import (
    MethodSpec,
    _need_generic,
    check_dotted,
    check_expression,
    check_init,
    check_ref,
    op_spec,
    probe_target,
    skeleton_spec,
    target_request,
)
from contribkit.testgen.verdict import judge, recorded_verdicts, run_verdicts


@dataclass
class ScaffoldRequest:
    """``contribkit test``'s options, as given."""

    op: str | None = None
    module: str | None = None
    init: str | None = None
    check: str | None = None
    ref: str | None = None
    from_repro: str | None = None
    name: str | None = None
    area: str | None = None
    path: Path | None = None
    into: str | None = None
    to_stdout: bool = False
    force: bool = False
    dry_run: bool = False
    python: str | None = None


@dataclass
class ScaffoldResult:
    plan: FilePlan
    # The plan's summary; once written (not with to_stdout), with dry_run and "file": "insert"
    # or what write_outputs did with the new file.
    summary: dict[str, Any]


def scaffold(request: ScaffoldRequest) -> ScaffoldResult:
    """Plan the test the options ask for, and write it unless it goes to stdout."""
    _check_options(request)
    ws = Workspace.load(python=request.python)
    base = ws.root if ws.root is not None else Path.cwd()
    test_name = method_name(request.name) if request.name else None
    area = check_area(request.area) if request.area else None
    build = _builder(request, ws, base, test_name, area)
    plan = _place(request, build, area, base, ws.root)
    if request.to_stdout:
        return ScaffoldResult(plan, plan.summary)
    return ScaffoldResult(plan, _write(plan, request.force, request.dry_run))


def _check_options(request: ScaffoldRequest) -> None:
    sources = [s for s in (request.op, request.module, request.from_repro) if s]
    if len(sources) > 1:
        raise BadInput(
            "give only one of --op, --module and --from-repro", "see contribkit test --help"
        )
    if not sources and not request.name:
        raise BadInput(
            "nothing to test: give --op, --module, --from-repro, or --name for a skeleton",
            "e.g. contribkit test --op index_add",
        )
    if request.check is not None and not (request.op or request.module):
        raise BadInput(
            "--check goes with --op or --module",
            "e.g. --op index_add --check 'result.isfinite().all()'",
        )
    if request.ref is not None and not request.op:
        raise BadInput("--ref goes with --op", "e.g. --op relu --ref numpy.positive")
    if request.init is not None and not request.module:
        raise BadInput(
            "--init goes with --module", "e.g. --module torch.nn.Unfold --init 'kernel_size=2'"
        )
    if request.path and request.into:
        raise BadInput(
            "give --path or --into, not both", "--path writes a new file; --into adds to one"
        )
    if not sources and not (request.area or request.path or request.into):
        raise BadInput(
            "a skeleton needs --area (or --path / --into)",
            "e.g. --name empty_index --area indexing",
        )


def _builder(
    request: ScaffoldRequest, ws: Workspace, base: Path, test_name: str | None, area: str | None
) -> Callable[[bool], MethodSpec]:
    """The test, as a function of whether the class it goes into is device-generic."""
    if request.op:
        check = check_expression(request.check) if request.check else None
        ref = check_ref(request.ref) if request.ref else None
        probe = target_request("op", check_dotted(request.op, "--op"), check=check, ref=ref)

        def op_test(generic: bool) -> MethodSpec:
            _need_generic(generic, "an operator")  # before the probe, which takes seconds
            result = probe_target(ws.python(), probe, ws.settings)
            return op_spec(result, test_name, generic, check=check, ref=ref)

        return op_test
    if request.module:
        init_args = check_init(request.init) if request.init else None
        check = check_expression(request.check) if request.check else None
        qualname = check_dotted(request.module, "--module")
        probe = target_request("module", qualname, init_args, check=check)

        def module_test(generic: bool) -> MethodSpec:
            _need_generic(generic, "a module")
            result = probe_target(ws.python(), probe, ws.settings)
            return module_spec(result, init_args, test_name, generic, check=check)

        return module_test
    if request.from_repro:
        from contribkit.core.workspace import repros_path

        folder = resolve_repro_dir(request.from_repro, repros_path(base, ws.settings))
        source = read_repro(folder)
        script = folder / "repro.py"
        verdicts = recorded_verdicts(ws.root, script) if ws.root is not None else None
        if verdicts is None:
            from contribkit.core.sandbox import from_settings

            verdicts = run_verdicts(
                ws.python(), script, ws.settings.names("scrub_env"), from_settings(ws.settings)
            )
        gate = replace(judge(verdicts, request.force), force=request.force)
        checked: list[list[str]] = []  # the self-check's notes, once it has run

        def repro_test(generic: bool) -> MethodSpec:
            if not checked:  # once, on the file-of-its-own rendering the check runs
                from contribkit.core.sandbox import from_settings
                from contribkit.testgen.selfcheck import self_check

                alone = repro_spec(source, test_name, True, gate=gate)
                scrub = ws.settings.names("scrub_env")
                checked.append(
                    self_check(alone, gate, ws.python(), scrub, from_settings(ws.settings))
                )
            spec = repro_spec(source, test_name, generic, gate=gate)
            spec.notes += checked[0]
            return spec

        return repro_test
    assert test_name is not None
    return partial(skeleton_spec, test_name, area or "tests")


def _place(
    request: ScaffoldRequest,
    build: Callable[[bool], MethodSpec],
    area: str | None,
    base: Path,
    root: Path | None,
) -> FilePlan:
    """The file the test goes to: --into's, a new one at --path, else the area's."""
    if request.into:
        file, cls = split_into(request.into)
        return plan_into(build, Path(file), file, cls, root)
    path = request.path
    if path is None:
        return plan_default(build, area, base, root)
    plan = plan_new_file(build(True), path, str(path), root, "--path")
    if path.exists() and not request.force and not (request.to_stdout or request.dry_run):
        raise BadInput(
            f"{path} already exists",
            f"add the test to it with --into {path}, or pass --force to replace it",
        )
    return plan


def _write(plan: FilePlan, force: bool, dry_run: bool) -> dict[str, Any]:
    """Write the plan (or not, with dry_run); its summary with what was done."""
    inserting = plan.summary["action"] == "insert"
    # An insertion (--into, or the area's existing file) only adds lines: it needs no --force.
    # A new test file is an ordinary source file; an edited one keeps its mode (an executable
    # test stays executable).
    mode = stat.S_IMODE(plan.path.stat().st_mode) if inserting else 0o644
    actions = write_outputs(
        [OutputFile(plan.path, plan.after, mode=mode)],
        force=force or inserting,
        dry_run=dry_run,
    )
    return {
        **plan.summary,
        "dry_run": dry_run,
        "file": "insert" if inserting else actions[str(plan.path)],
    }
