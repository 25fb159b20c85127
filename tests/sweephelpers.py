"""Fixtures of the bisect and triage tests (and their benchmarks): interpreters with a small
stand-in torch, a git repository whose history breaks a small package, and issues to make
repros of.

A stand-in torch is a real package in a real venv (``python -m venv --without-pip``): enough
of torch's surface for the probe and the repro runtime (``__version__``, ``version``,
``cuda``, ``backends.mps``, ``manual_seed``), plus what a test's issue code calls. The repro is
made by the real ``contribkit repro --from-file`` from an issue written here.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

STANDIN_TORCH = """\
__version__ = "{version}"
from . import version, cuda, backends

def manual_seed(seed):
    return None

class Tensor:
    def __init__(self, values):
        self.values = [float(v) for v in values]

    def tolist(self):
        return list(self.values)

def tensor(values, device="cpu", dtype=None):
    return Tensor(values)

def relu(x):
{relu_body}

def sum(x):
{sum_body}
"""
SUM_OK = "    return Tensor([__builtins__['sum'](x.values)])\n"
SUM_BROKEN = (
    "    if not x.values:\n"
    '        raise RuntimeError("sum: empty tensors are not supported")\n'
    "    return Tensor([__builtins__['sum'](x.values)])\n"
)
RELU_OK = "    return Tensor([max(v, 0.0) for v in x.values])\n"
RELU_BROKEN = (
    "    if any(v < 0 for v in x.values):\n"
    '        raise RuntimeError("relu: negative inputs are not supported")\n'
    "    return Tensor(x.values)\n"
)

RELU_ISSUE = """\
### 🐛 Describe the bug

`torch.relu` raises on negative inputs since the last release.

```python
import torch

x = torch.tensor([-1.0, 2.0])
print(torch.relu(x).tolist())
```

```
Traceback (most recent call last):
  File "bug.py", line 4, in <module>
    print(torch.relu(x).tolist())
RuntimeError: relu: negative inputs are not supported
```

### Versions

PyTorch version: 2.9.0
"""

SUM_ISSUE = """\
### 🐛 Describe the bug

Summing an empty tensor raises instead of giving 0.

```python
import torch

print(torch.sum(torch.tensor([])).tolist())
```

```
RuntimeError: sum: empty tensors are not supported
```
"""


def venv(path: Path, pth: list[str] | None = None) -> Path:
    """An empty venv at ``path`` (its interpreter's path), with ``pth`` on its sys.path (a
    ``.pth`` file: what an editable install writes)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    if pth:
        (site_packages(path) / "contribkit_test.pth").write_text("\n".join(pth) + "\n")
    return path / "bin" / "python"


def site_packages(venv_dir: Path) -> Path:
    return next((venv_dir / "lib").glob("python3*/site-packages"))


def write_standin_torch(
    site: Path, version: str, *, relu_broken: bool = False, sum_broken: bool = False
) -> None:
    """A stand-in torch package in ``site``: its ``relu`` raises on negatives when
    ``relu_broken``, its ``sum`` on an empty tensor when ``sum_broken``."""
    torch = site / "torch"
    (torch / "backends").mkdir(parents=True, exist_ok=True)
    text = STANDIN_TORCH.format(
        version=version,
        relu_body=RELU_BROKEN if relu_broken else RELU_OK,
        sum_body=SUM_BROKEN if sum_broken else SUM_OK,
    )
    (torch / "__init__.py").write_text(text)
    git = version.replace(".", "")[:6].ljust(6, "0")
    (torch / "version.py").write_text(f'git_version = "{git}standin"\ncuda = None\n')
    (torch / "cuda.py").write_text(
        "def is_available():\n    return False\n\ndef device_count():\n    return 0\n"
    )
    (torch / "backends" / "__init__.py").write_text("from . import mps\n")
    (torch / "backends" / "mps.py").write_text("def is_available():\n    return False\n")


def standin_python(
    path: Path, version: str, *, relu_broken: bool = False, sum_broken: bool = False
) -> str:
    """An interpreter whose torch is a stand-in of ``version``."""
    python = venv(path)
    write_standin_torch(
        site_packages(path), version, relu_broken=relu_broken, sum_broken=sum_broken
    )
    return str(python)


# -- a repository whose history breaks a small package -----------------------------------------
TINYVEC_OK = """\
import math


def norm(values):
    total = math.sqrt(sum(v * v for v in values))
    if total < 0:
        raise ValueError(f"norm went negative: {total}")
    return total
"""
TINYVEC_BROKEN = TINYVEC_OK.replace("total = math.sqrt", "total = -math.sqrt")
TINYVEC_RAISING = TINYVEC_OK.replace(
    "    total = math.sqrt", '    raise TypeError("values must be a tuple")\n    total = math.sqrt'
)

TINYVEC_ISSUE = """\
### 🐛 Describe the bug

`tinyvec.norm` raises for a plain vector.

```python
import torch
import tinyvec

print(tinyvec.norm([3.0, 4.0]))
```

```
Traceback (most recent call last):
  File "bug.py", line 4, in <module>
    print(tinyvec.norm([3.0, 4.0]))
  File "tinyvec/__init__.py", line 6, in norm
    raise ValueError(f"norm went negative: {total}")
ValueError: norm went negative: -5.0
```

### Versions

PyTorch version: 2.9.0
"""

BUILD_OK = "#!/bin/sh\necho building\n"
BUILD_BROKEN = "#!/bin/sh\necho 'error: this commit does not build' >&2\nexit 1\n"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def make_history(
    repo: Path,
    commits: int,
    bug_at: int,
    unbuildable: frozenset[int] = frozenset(),
    raising: frozenset[int] = frozenset(),
) -> list[str]:
    """A repository whose commit ``k`` (0-based) writes ``tinyvec``, broken from ``bug_at`` on,
    raising an unrelated TypeError at the ``raising`` commits, and a ``build.sh`` that fails at
    the ``unbuildable`` commits. Returns the shas in order. The bug's commit names its PR the
    ghstack way; the others end their subject with (#N)."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    shas = []
    for k in range(commits):
        (repo / "tinyvec").mkdir(exist_ok=True)
        code = TINYVEC_BROKEN if k >= bug_at else TINYVEC_OK
        (repo / "tinyvec" / "__init__.py").write_text(TINYVEC_RAISING if k in raising else code)
        (repo / "build.sh").write_text(BUILD_BROKEN if k in unbuildable else BUILD_OK)
        (repo / "history.txt").write_text(f"commit {k}\n")
        git(repo, "add", "-A")
        if k == bug_at:
            message = (
                "Make tinyvec.norm faster\n\nPull Request resolved: "
                "https://github.com/example/tinyvec/pull/4242\n"
            )
        else:
            message = f"Change number {k} (#{1000 + k})"
        git(repo, "commit", "-q", "-m", message)
        shas.append(git(repo, "rev-parse", "HEAD"))
    return shas


def dedent(text: str) -> str:
    return textwrap.dedent(text)
