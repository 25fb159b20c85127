"""Test files: a new file holding one test method (:func:`plan_new_file`), or an existing test
file with the method's lines inserted into one of its classes (:func:`plan_into`), or either,
wherever PyTorch keeps such tests (:func:`plan_default`).

Pure planning: each returns a :class:`FilePlan`, the file's text before and after plus a
summary, checked against the test-file conventions; the caller writes it.
"""

from __future__ import annotations

import ast
import difflib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contribkit.conventions.testfiles import check_test_source, instantiated_classes
from contribkit.core.astnames import source_lines
from contribkit.core.errors import BadInput
from contribkit.core.render import render
from contribkit.pr.labels import owner_label
from contribkit.testgen.areas import IDENTIFIER, area_target, class_name_for
from contribkit.testgen.pyedit import (
    EditError,
    ImportSpec,
    find_test_classes,
    imports_of,
    indent_block,
    match_quotes,
    module_bindings,
    parse_file,
    plan_insertion,
    render_imports,
)
from contribkit.testgen.specs import COMMON_UTILS, MethodSpec, file_imports

# How many sibling test files are read for their base class.
SIBLINGS_READ = 50


@dataclass
class FilePlan:
    path: Path
    display: str  # the path as shown to the user
    before: str | None  # None for a new file
    after: str
    summary: dict[str, Any]

    def diff(self) -> str:
        before = source_lines(self.before or "")
        after = source_lines(self.after)
        origin = f"a/{self.display}" if self.before is not None else "/dev/null"
        return "".join(difflib.unified_diff(before, after, origin, f"b/{self.display}"))


def default_target(spec: MethodSpec, area: str | None) -> tuple[str, str | None, str]:
    """Where the test goes without --path or --into: the file, the class it joins there (None:
    the file's own), and why."""
    path, cls = area_target(area or spec.area, spec.thing)
    return path, cls, "--area" if area else spec.area_reason


def plan_default(
    build: Callable[[bool], MethodSpec], area: str | None, base: Path, root: Path | None
) -> FilePlan:
    """The test where PyTorch keeps such tests: inserted into that file's class when the fork has
    the file (exactly as --into FILE::CLASS), else written as a new file there."""
    spec = build(True)
    rel, cls, reason = default_target(spec, area)
    if not (base / rel).is_file():
        return plan_new_file(spec, base / rel, rel, root, reason, cls)
    plan = plan_into(build, base / rel, rel, None, root, prefer=cls)
    into = f"{rel}::{plan.summary['class']}"
    plan.summary.update(
        placed_by=reason,
        notes=[
            *plan.summary["notes"],
            f"added to the fork's {rel}, as --into {into} does; --path FILE writes a new file",
        ],
    )
    return plan


def _rel(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return path.as_posix()


def convention_problems(path: str, text: str) -> list[str]:
    """The test-file conventions (Owner(s) header, run_tests main block, instantiated generic
    classes, no hard-coded CUDA in device-generic tests) as the hooks check them; a generated
    file must pass. The single call site of the hooks' rule code."""
    return [f"{v.rule.id} {v.message}" for v in check_test_source(text, path)]


def _verify(path: str, text: str, before: str | None = None) -> None:
    try:
        ast.parse(text)
    except SyntaxError as exc:  # our bug, never the user's
        raise AssertionError(
            f"generated {path} does not parse: line {exc.lineno}: {exc.msg}"
        ) from exc
    old = set(convention_problems(path, before)) if before is not None else set()
    new = [p for p in convention_problems(path, text) if p not in old]
    if new:
        raise AssertionError(f"generated {path} breaks the test-file conventions: {'; '.join(new)}")


def _summary(spec: MethodSpec, plan_path: str, cls: str, generic: bool) -> dict[str, Any]:
    return {
        "source": spec.source,
        "path": plan_path,
        "class": cls,
        "device_generic": generic,
        "test": spec.name,
        "dtypes": spec.dtypes if spec.dtypes.get("cpu") or spec.dtypes.get("cuda") else None,
        "only": spec.only,
        "variants": spec.variants() if generic else {},
        "dynamo": spec.dynamo,
        "notes": spec.notes,
        "run": f"python {plan_path} -k {spec.name}",
    }


def sibling_base(path: Path) -> ImportSpec | None:
    """The base class most test classes of the new file's sibling test files derive from
    (``NNTestCase`` in test/nn/, ``JitTestCase`` in test/jit/), as they import it; None when
    that is common_utils' ``TestCase`` or there is no sibling."""
    counts: Counter[ImportSpec] = Counter()
    for sibling in sorted(path.parent.glob("test_*.py"))[:SIBLINGS_READ]:
        if sibling.name == path.name:
            continue
        try:
            tree = ast.parse(sibling.read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        imported = {
            spec.bound: spec
            for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.level == 0
            for spec in imports_of(node)
        }
        for cls in find_test_classes(tree):
            first = cls.bases[0] if cls.bases else None
            if isinstance(first, ast.Name) and first.id in imported:
                counts[imported[first.id]] += 1
    if not counts:
        return None
    base = counts.most_common(1)[0][0]
    return None if base.name == "TestCase" and base.module == COMMON_UTILS else base


def plan_new_file(
    spec: MethodSpec,
    path: Path,
    display: str,
    root: Path | None,
    placed: str,
    class_name: str | None = None,
) -> FilePlan:
    rel = _rel(path, root)
    owner = owner_label(rel, root)
    cls = class_name or class_name_for(path)
    imports = [*file_imports(spec.dynamo), *spec.imports]
    base = None if spec.dynamo else sibling_base(path)
    if base is not None:
        imports = [i for i in imports if i != ImportSpec(COMMON_UTILS, "TestCase")] + [base]
        spec.notes.append(f"based on {base.bound}, as the test classes of its sibling files are")
    text = render(
        "test_file.py.j2",
        owner_json=json.dumps([owner.label]),
        imports=render_imports(imports),
        class_name=cls,
        base=base.bound if base is not None else "TestCase",
        method=indent_block(spec.method, "    ").rstrip("\n"),
    )
    _verify(rel, text)
    summary = {
        **_summary(spec, display, cls, True),
        "action": "create",
        "owner": owner.label,
        "owner_source": owner.origin
        + (f" ({owner.glob})" if owner.origin == "labeler.yml" else ""),
        "placed_by": placed,
    }
    return FilePlan(path, display, None, text, summary)


def _resets_dynamo(cls: ast.ClassDef, tree: ast.Module) -> bool:
    """The class derives from dynamo's or inductor's TestCase (directly or by an imported name)."""
    bound = module_bindings(tree)
    for base in cls.bases:
        text = ast.unparse(base)
        origin = text + " " + bound.get(text.split(".")[0], "")
        if "_dynamo" in origin or "_inductor" in origin:
            return True
    return False


def split_into(value: str) -> tuple[str, str | None]:
    """``FILE[::Class]``."""
    file, sep, cls = value.partition("::")
    if sep and not IDENTIFIER.match(cls):
        raise BadInput(f"'{cls}' is not a class name", hint="--into test/test_foo.py::TestFoo")
    return file, cls or None


def plan_into(
    build: Callable[[bool], MethodSpec],
    path: Path,
    display: str,
    class_name: str | None,
    root: Path | None,
    prefer: str | None = None,
) -> FilePlan:
    """Insert the test built by ``build(generic)`` into a class of an existing test file: the
    class named, else ``prefer`` when the file has it, else the file's one device-generic class."""
    if not path.exists():
        raise BadInput(
            f"{display} does not exist",
            hint="--into adds to an existing test file; a new file needs --path",
        )
    if path.is_dir() or path.suffix != ".py":
        raise BadInput(
            f"{display} is not a Python test file",
            hint="pass a test_*.py file: --into test/test_foo.py::TestFoo",
        )
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(
            f"{display} cannot be read as UTF-8 text ({exc})", hint="pass a Python test file"
        ) from exc
    # A UTF-8 byte order mark is not Python source: edit without it, write it back as it was.
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    source = text[len(bom) :]
    try:
        tree = parse_file(source, display)
    except EditError as exc:
        raise BadInput(str(exc), hint=exc.hint) from exc
    classes = find_test_classes(tree)
    if not classes:
        raise BadInput(
            f"{display} is not a Python test file: it defines no TestCase class",
            hint="pass a file with a test class, or write a new file with --path",
        )
    generic_names = instantiated_classes(tree)
    names = [c.name for c in classes]
    if class_name:
        cls = next(
            (c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == class_name), None
        )
        if cls is None:
            raise BadInput(
                f"class {class_name} not found in {display}", hint=f"classes: {', '.join(names)}"
            )
    else:
        candidates = (
            [c for c in classes if c.name == prefer]
            or [c for c in classes if c.name in generic_names]
            or classes
        )
        if len(candidates) > 1:
            raise BadInput(
                f"{display} has several test classes: {', '.join(c.name for c in candidates)}",
                hint=f"pick one: --into {display}::{candidates[0].name}",
            )
        cls = candidates[0]
    generic = cls.name in generic_names
    spec = build(generic)
    existing = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if spec.name in existing:
        raise BadInput(
            f"{cls.name} already has {spec.name}", hint="choose another name with --name"
        )
    try:
        method = match_quotes(spec.method, source)
        after, added = plan_insertion(source, display, cls, tree, method, spec.imports)
    except EditError as exc:
        raise BadInput(str(exc), hint=exc.hint) from exc
    _verify(_rel(path, root), after, before=source)
    if spec.dynamo and not _resets_dynamo(cls, tree):
        spec.notes.append(
            f"a torch.compile test in {cls.name}, whose TestCase does not reset dynamo between "
            "tests: consider a class based on torch._dynamo.test_case.TestCase"
        )
    summary = {
        **_summary(spec, display, cls.name, generic),
        "action": "insert",
        "imports_added": [s.statement() for s in added],
    }
    return FilePlan(path, display, text, bom + after, summary)
