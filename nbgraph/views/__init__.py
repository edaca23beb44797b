"""Pictures and tables for Jupyter: the inspector, its panels, the drawings, the shared page,
the comparison view and the quiz, each in its own folder.

The modules sat in this one folder before they were foldered; their former paths
(`nbgraph.views.display`, `nbgraph.views.render`, ...) still import, as the same module
objects as their new ones (`nbgraph.views.drawings.display`, ...), so code written against
the flat folder keeps running.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

FOLDERS = ("inspector", "panels", "drawings", "share", "compare", "quiz")
"""The folders, by what a person sees."""


@cache
def former_paths() -> dict[str, str]:
    """Each module's name in the flat folder -> its module path now."""
    here = Path(__file__).parent
    return {
        path.stem: f"{__name__}.{folder}.{path.stem}"
        for folder in FOLDERS
        for path in sorted((here / folder).glob("*.py"))
        if path.stem != "__init__" and path.stem not in FOLDERS  # (a folder's own module's
    }  # names: the folder's `__getattr__`)


class FormerPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A `sys.meta_path` finder: `nbgraph.views.X` (the flat folder's path) is the module
    `nbgraph.views.<folder>.X`, the same object."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        package, _, name = fullname.rpartition(".")
        if package != __name__ or name not in former_paths():
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(former_paths()[spec.name.rpartition(".")[2]])
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # importlib has set the module's __spec__ to the former path's: it stays its own
        alias = module.__spec__
        if alias is not None and alias.loader_state is not None:
            module.__spec__ = alias.loader_state


if not any(isinstance(finder, FormerPaths) for finder in sys.meta_path):
    sys.meta_path.append(FormerPaths())
