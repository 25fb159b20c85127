"""In a PyTorch checkout: where an operator's kernels are defined and registered, and which test
files mention it (``git grep``, which reads only tracked files and is fast on a large tree)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from contribkit.git.cmd import GitError, git
from contribkit.ops.findings import CheckoutFindings, CodeSite, TestFile
from contribkit.ops.model import NativeEntry

NATIVE_DIR = "aten/src/ATen/native"
KERNEL_SUFFIXES = (".cpp", ".cu", ".h", ".cuh", ".mm", ".hip")
MAX_KERNEL_SITES = 40
MAX_TEST_FILES = 15
_IDENT = re.compile(r"^\w+$")


def kernel_names(entries: Iterable[NativeEntry]) -> list[str]:
    """The C++ names the yaml's dispatch tables give, plus the default for implicit composites."""
    names: list[str] = []
    for entry in entries:
        kernels = [d.kernel for d in entry.dispatch]
        if entry.composite_implicit:
            op, _, overload = entry.name.partition(".")
            kernels.append(f"{op}_out" if overload == "out" else op)
        for kernel in kernels:
            kernel = kernel.rsplit("::", 1)[-1]
            if _IDENT.match(kernel) and kernel not in names:
                names.append(kernel)
    return names


def _kinds(family: str, kernels: list[str]) -> list[tuple[str, re.Pattern[str]]]:
    alternatives = "|".join(map(re.escape, kernels)) or "$^"
    return [
        ("structured kernel", re.compile(rf"TORCH_IMPL_FUNC\(\s*({alternatives})\s*\)")),
        ("meta function", re.compile(rf"TORCH_META_FUNC2?\(\s*{re.escape(family)}\s*[,)]")),
        (
            "dispatch stub",
            re.compile(rf"(REGISTER|DEFINE|DECLARE)_\w*DISPATCH\(.*\b{re.escape(family)}_stub\b"),
        ),
        (
            "definition",
            re.compile(rf"^[A-Za-z_][\w:<>, ]*[\s&*]+(?:at::native::)?({alternatives})\s*\([^;]*$"),
        ),
    ]


def _git_grep(root: Path, patterns: list[str], *paths: str, extra: tuple[str, ...] = ()) -> str:
    args = ["grep", "-I", "-E", *extra]
    for pattern in patterns:
        args += ["-e", pattern]
    try:
        return git(*args, "--", *paths, cwd=root, check=False)
    except GitError:
        return ""


def find_kernels(root: Path, family: str, entries: list[NativeEntry]) -> list[CodeSite]:
    """Kernel definitions and registrations under aten/src/ATen/native for the family."""
    kernels = kernel_names(entries)
    kinds = _kinds(family, kernels)
    # git grep's ERE has no \s or \w: a loose pre-filter, then the exact Python patterns above.
    words = [*kernels, f"{family}_stub", family]
    prefilter = [rf"(^|[^A-Za-z0-9_]){re.escape(w)}([^A-Za-z0-9_]|$)" for w in words]
    out = _git_grep(root, prefilter, NATIVE_DIR, extra=("-n",))
    sites: list[CodeSite] = []
    for line in out.splitlines():
        path, _, rest = line.partition(":")
        number, _, text = rest.partition(":")
        if not path.endswith(KERNEL_SUFFIXES) or not number.isdigit():
            continue
        for kind, pattern in kinds:
            if pattern.search(text):
                sites.append(CodeSite(path, int(number), kind, text.strip()[:160]))
                break
    ufunc = f"{NATIVE_DIR}/ufunc/{family}.h"
    if (root / ufunc).is_file():
        sites.append(
            CodeSite(ufunc, 1, "ufunc inner loop", f"ufunc::{family} (CPU and CUDA codegen)")
        )
    order = {kind: i for i, (kind, _) in enumerate(kinds)}
    sites.sort(key=lambda s: (order.get(s.kind, len(order)), s.path, s.line))
    return sites[:MAX_KERNEL_SITES]


def find_tests(root: Path, names: list[str]) -> tuple[list[TestFile], int]:
    """Test files under test/ that mention the op (``torch.NAME``, ``.NAME(``, ``aten.NAME``,
    ``F.NAME``, a quoted ``"NAME"``), most mentions first, and how many files in all."""
    words = "|".join(re.escape(n) for n in names if _IDENT.match(n))
    if not words:
        return [], 0
    pattern = rf"(\.({words})[^A-Za-z0-9_]|['\"]({words})['\"])"
    out = _git_grep(root, [pattern], "test", extra=("-c",))
    counts = []
    for line in out.splitlines():
        path, _, count = line.rpartition(":")
        if path.endswith(".py") and count.isdigit():
            counts.append(TestFile(path, int(count)))
    counts.sort(key=lambda t: (-t.mentions, t.path))
    return counts[:MAX_TEST_FILES], len(counts)


def search_checkout(root: Path, family: str, entries: list[NativeEntry]) -> CheckoutFindings:
    op_names = sorted({e.name.split(".", 1)[0] for e in entries})
    tests, total = find_tests(root, op_names)
    return CheckoutFindings(find_kernels(root, family, entries), tests, total)
