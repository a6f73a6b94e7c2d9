"""One import name for every module: ``memwarden.db.audit``, never ``db.audit``.

The layers are folders at the repository's top (``db/``, ``governance/`` …) mapped into the
``memwarden`` namespace by symlinks. Tests and benchmarks run with the repository on ``sys.path``
(for ``tests``, ``testing`` and ``bench``), so ``import db.audit`` would find the folder too — a
second module beside ``memwarden.db.audit``, with state of its own (two actor ``ContextVar``\\ s,
two registries). :func:`install` makes such an import fail at once, saying the right name."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
LAYERS = frozenset(p.name for p in (REPO / "memwarden").iterdir() if p.is_symlink())


class SecondName(ImportError):
    pass


class _OneName(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if "." in fullname or fullname not in LAYERS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname)
        if spec is None:
            return None
        folder = (REPO / fullname).resolve()  # the layer's own folder, not a package of the same name elsewhere
        places = [spec.origin, *(spec.submodule_search_locations or ())]
        if any(p is not None and Path(p).resolve() in (folder, folder / "__init__.py") for p in places):
            raise SecondName(f"import memwarden.{fullname}, not {fullname}: one module has one name")
        return None


def install() -> None:
    """Refuse a layer's second name in this interpreter (idempotent)."""
    if not any(isinstance(f, _OneName) for f in sys.meta_path):
        sys.meta_path.insert(0, _OneName())
