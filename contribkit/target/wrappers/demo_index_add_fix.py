"""The demo's stand-in for a fix in aten/: ``contribkit demo`` commits it as ``sitecustomize.py``.

The demo cannot rebuild torch, so this file, on the PYTHONPATH of the processes the demo's runs
start, changes ``index_add`` the way a fix to its dtype check in
``aten/src/ATen/native/TensorAdvancedIndexing.cpp`` would: a source of another dtype is cast to
the destination's dtype (as ``copy_`` casts) instead of being refused. torch is patched when it
is imported; a process that never imports torch is not touched. Read as text, never imported by
contribkit.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any


def _cast_source(original: Callable[..., Any]) -> Callable[..., Any]:
    def index_add(self: Any, dim: int, index: Any, source: Any, *args: Any, **kwargs: Any) -> Any:
        if source.dtype != self.dtype:
            source = source.to(self.dtype)
        return original(self, dim, index, source, *args, **kwargs)

    return index_add


def _patch(torch: Any) -> None:
    for name in ("index_add_", "index_add"):
        setattr(torch.Tensor, name, _cast_source(getattr(torch.Tensor, name)))
    torch.index_add = _cast_source(torch.index_add)


class _PatchTorchOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when torch is imported, it wraps torch's loader to patch it after."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "torch":
            return None
        sys.meta_path.remove(self)  # once: the real finders locate torch
        spec = importlib.util.find_spec(fullname)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_and_patch(module: ModuleType) -> None:
            exec_module(module)
            _patch(module)

        loader.exec_module = exec_and_patch  # type: ignore[method-assign]
        return spec


sys.meta_path.insert(0, _PatchTorchOnImport())
