"""LangGraph code run unchanged on nbgraph: `import langgraph.X` loads `nbgraph.X`.

Three ways to switch it on, each before the first `import langgraph`:

    python -m nbgraph.as_langgraph SCRIPT.py [ARGS]     # or: -m MODULE [ARGS]
    pytest -p nbgraph.as_langgraph [PYTEST ARGS]
    %load_ext nbgraph.as_langgraph                       # a notebook's first cell

A finder on `sys.meta_path` answers every `langgraph` module with nbgraph's module of the same
path: `sys.modules["langgraph.types"] is sys.modules["nbgraph.types"]`, so a class imported
under either name is one class (`isinstance` and `except` clauses agree). Only `langgraph`
itself is aliased; `langchain` and `langchain_core` stay LangChain's, and what they import from
`langgraph` loads nbgraph's modules too. If the real `langgraph` is already imported, switching
on refuses with `LangGraphAlreadyImportedError` rather than mix the two libraries.

In tests of your own (in a process that has not imported the real langgraph):

    from nbgraph.as_langgraph import as_langgraph

    with as_langgraph():
        from langgraph.types import Command    # nbgraph.types.Command
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from nbgraph.errors import NbgraphError

__all__ = [
    "LangGraphAlreadyImportedError",
    "LangGraphFinder",
    "as_langgraph",
    "install",
    "installed",
    "load_ipython_extension",
    "real_langgraph_modules",
    "uninstall",
    "unload_ipython_extension",
]

ALIASED = "langgraph"
HOME = "nbgraph"

IN_A_NOTEBOOK = (
    "Restart the kernel, then run `%load_ext nbgraph.as_langgraph` in the notebook's first "
    "cell, before any cell imports langgraph."
)
IN_PYTEST = (
    "Give `-p nbgraph.as_langgraph` before any other `-p` option, and check that no "
    "sitecustomize or .pth file imports langgraph."
)
BEFORE_THE_PROGRAM = (
    "Something imported it before the program started: a sitecustomize or usercustomize "
    "module or a .pth file; remove that import for this run."
)
IN_A_PROGRAM = (
    "Call nbgraph.as_langgraph.install() before the first `import langgraph`, or run the "
    "program with `python -m nbgraph.as_langgraph SCRIPT.py` in a fresh process."
)


class LangGraphAlreadyImportedError(NbgraphError, RuntimeError):
    """`import langgraph` cannot be switched to nbgraph: the real langgraph is already loaded.

    `modules` names the real langgraph modules found in `sys.modules`.
    """

    def __init__(self, modules: list[str], advice: str) -> None:
        self.modules = list(modules)
        public = [m for m in self.modules if not any(p.startswith("_") for p in m.split("."))]
        shown = ", ".join(public[:6])
        if len(self.modules) > len(public[:6]):
            shown += f" and {len(self.modules) - len(public[:6])} more"
        super().__init__(
            f"The real langgraph is already imported in this process ({shown}), so "
            "`import langgraph` cannot load nbgraph now: the objects made so far are "
            f"LangGraph's, and mixing the two libraries fails in confusing ways. {advice}"
        )


def _is_aliased(name: str) -> bool:
    return name == ALIASED or name.startswith(ALIASED + ".")


def _is_nbgraph(module: Any) -> bool:
    name = getattr(module, "__name__", "")
    return isinstance(name, str) and (name == HOME or name.startswith(HOME + "."))


def real_langgraph_modules() -> list[str]:
    """The names of the real langgraph modules in `sys.modules` (not nbgraph's aliases)."""
    return sorted(
        name
        for name, module in list(sys.modules.items())
        if _is_aliased(name) and module is not None and not _is_nbgraph(module)
    )


def _importer() -> str | None:
    """The module whose `import` statement is being answered (import machinery skipped)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not frame.f_code.co_filename.startswith("<frozen importlib") and name not in (
            __name__,
            "importlib",
            "importlib.util",
        ):
            return name
        frame = frame.f_back
    return None


def _in_langgraph(name: str) -> bool:
    """Whether the installed LangGraph has the module `name`: its files are looked up on
    `sys.path`, none is run."""
    path, spec = None, None
    parts = name.split(".")
    for depth in range(1, len(parts) + 1):
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:depth]), path)
        if spec is None:
            return False
        path = spec.submodule_search_locations
        if path is None and depth < len(parts):
            return False
    return True


def _missing(name: str, home: str) -> ModuleNotFoundError:
    """The error for a langgraph module nbgraph has no module for, saying who asked."""
    if not _in_langgraph(name):
        why = "the installed LangGraph has no such module either"
    elif any(part.startswith("_") for part in name.split(".")[1:]):
        why = "LangGraph's private modules are not mirrored"
    else:
        why = "nbgraph does not mirror this module of LangGraph's; see docs/as-langgraph.md"
    importer = _importer()
    asked = f" Imported by {importer}." if importer and not _is_aliased(importer) else ""
    message = (
        f"No module named {name!r}: under nbgraph.as_langgraph, `{name}` is `{home}`, which "
        f"does not exist ({why}).{asked}"
    )
    if not why.startswith("the installed"):
        message += (
            " A program that needs it runs on the real LangGraph, without "
            "nbgraph.as_langgraph (`nbgraph.trace(app, input)` then records a run)."
        )
    return ModuleNotFoundError(message, name=name)


class LangGraphFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A `sys.meta_path` finder: `langgraph.X` is the module `nbgraph.X`, the same object."""

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not _is_aliased(fullname):
            return None
        home = HOME + fullname[len(ALIASED) :]
        try:
            found = importlib.util.find_spec(home)
        except ModuleNotFoundError:
            found = None
        if found is None:
            raise _missing(fullname, home)
        state = {"home": home, "spec": None}
        package = found.submodule_search_locations is not None
        return importlib.machinery.ModuleSpec(
            fullname, self, is_package=package, loader_state=state
        )

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(spec.loader_state["home"])
        spec.loader_state["spec"] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # importlib has set the module's __spec__ to the alias's; the module stays nbgraph's
        alias = module.__spec__
        if alias is not None and isinstance(alias.loader_state, dict):
            module.__spec__ = alias.loader_state["spec"]

    def __repr__(self) -> str:
        return "<nbgraph.as_langgraph: import langgraph.X loads nbgraph.X>"


def installed() -> bool:
    """Whether `import langgraph` loads nbgraph in this process."""
    return any(isinstance(finder, LangGraphFinder) for finder in sys.meta_path)


def install(advice: str = IN_A_PROGRAM) -> None:
    """From now on `import langgraph.X` loads `nbgraph.X` (a no-op if it already does).

    Raises:
        LangGraphAlreadyImportedError: the real langgraph is already imported; `advice` ends
            the message (what to do in the caller's setting).
    """
    if installed():
        return
    real = real_langgraph_modules()
    if real:
        raise LangGraphAlreadyImportedError(real, advice)
    sys.meta_path.insert(0, LangGraphFinder())


def uninstall() -> None:
    """Undo `install`: the finder is removed and the `langgraph` aliases leave `sys.modules`
    (nbgraph's modules stay loaded under their own names)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, LangGraphFinder)]
    for name, module in list(sys.modules.items()):
        if _is_aliased(name) and _is_nbgraph(module):
            del sys.modules[name]


@contextlib.contextmanager
def as_langgraph() -> Iterator[None]:
    """`import langgraph` loads nbgraph inside the block; after it, as before."""
    already = installed()
    install()
    try:
        yield
    finally:
        if not already:
            uninstall()


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext nbgraph.as_langgraph`: the notebook's `import langgraph` loads nbgraph."""
    install(IN_A_NOTEBOOK)
    print("nbgraph.as_langgraph: `import langgraph` now loads nbgraph; every run is recorded")


def unload_ipython_extension(ipython: Any) -> None:
    """`%unload_ext nbgraph.as_langgraph`: `import langgraph` is LangGraph's again."""
    uninstall()


def pytest_plugin_registered(plugin: Any) -> None:
    """`pytest -p nbgraph.as_langgraph`: switched on as the plugin is registered, before
    conftest files and the test modules are imported (and before setuptools plugins)."""
    if plugin is sys.modules[__name__]:
        install(IN_PYTEST)


def pytest_report_header() -> str:
    return "nbgraph.as_langgraph: import langgraph loads nbgraph"
