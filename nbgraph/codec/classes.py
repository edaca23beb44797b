"""Which classes a value read from a file may become: never one the file makes us import.

A run file or a checkpoint names the class of each model, dataclass or Enum member it holds
(`"module:QualName"`). Reading it must not run code because the file says so, so a name is
resolved only to

1. a class the caller named (`Run.load(path, models=[Order])`, `SqliteSaver(path,
   models=[Order])`): first by its exact `"module:QualName"`, else by its `QualName` alone
   when exactly one named class has it (a notebook's `__main__.Order` read in a script that
   imports `shop.Order`); or
2. a class of a module this process has already imported (found in `sys.modules`, read with
   `vars()` so no module `__getattr__` runs: nothing is imported, even lazily).

Either way the class must be of the kind the value was saved as (a pydantic model, a
dataclass, an Enum). Anything else is read back as a placeholder that shows the data
(`UnloadedModel`, `UnloadedEnum`). The classes found this way are trusted: a pydantic model's
validators run on the file's data, as they would on any input the program validates.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import sys
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Any

from nbgraph.errors import NbgraphError

__all__ = [
    "ModelsArgumentError",
    "check_models",
    "imported_class",
    "named_classes",
    "pydantic_base",
    "qualified_name",
    "resolve_class",
]

_KINDS = ("pydantic", "dataclass", "enum")
"""The kinds of class a file may name: a pydantic model, a dataclass, an Enum."""

_NAMED: ContextVar[tuple[type, ...]] = ContextVar("nbgraph_named_classes", default=())


class ModelsArgumentError(NbgraphError, TypeError):
    """`models=` holds something that is not a pydantic model, dataclass or Enum class."""


def check_models(models: Iterable[Any] | None) -> tuple[type, ...]:
    """`models` as a tuple of classes, each a pydantic model, a dataclass or an Enum.

    Raises:
        ModelsArgumentError: one entry is not such a class (naming it) or `models` is not a
            list of classes.
    """
    if models is None:
        return ()
    if isinstance(models, type) or not isinstance(models, Iterable):
        raise ModelsArgumentError(
            f"models= takes a list of classes (models=[Order]); got {models!r}."
        )
    found = tuple(models)
    wrong = [repr(item) for item in found if _kind_of(item) is None]
    if wrong:
        raise ModelsArgumentError(
            f"models= takes pydantic model, dataclass and Enum classes; these are none: "
            f"{', '.join(wrong)}."
        )
    return found


@contextlib.contextmanager
def named_classes(models: Iterable[type] | None) -> Iterator[None]:
    """Within the block, values read back may become the classes of `models` too."""
    named = check_models(models)
    if not named:
        yield
        return
    token = _NAMED.set(_NAMED.get() + named)
    try:
        yield
    finally:
        _NAMED.reset(token)


def pydantic_base() -> Any:
    """pydantic's `BaseModel`, or `()` (no class) while pydantic's models are not loaded:
    then no value is a model, and nbgraph does not import pydantic to find that out."""
    main = sys.modules.get("pydantic.main")
    return () if main is None else main.BaseModel


def _kind_of(cls: Any) -> str | None:
    """`"pydantic"`, `"dataclass"` or `"enum"` for such a class, else `None`."""
    if not isinstance(cls, type):
        return None
    if issubclass(cls, pydantic_base()):
        return "pydantic"
    if issubclass(cls, enum.Enum):
        return "enum"
    if dataclasses.is_dataclass(cls):
        return "dataclass"
    return None


def qualified_name(cls: type) -> str:
    """The class as `"module:QualName"`, the form `resolve_class` reads back."""
    return f"{cls.__module__}:{cls.__qualname__}"


def resolve_class(name: Any, kind: str) -> type | None:
    """The class `name` (`"module:QualName"`) stands for, if the caller named it or its
    module is imported already, and it is of `kind`; else `None`. Never imports."""
    if type(name) is not str:
        return None
    named = _NAMED.get()
    if named:
        found = _from_named(name, named)
        if found is not None:
            return found if _kind_of(found) == kind else None
    found = imported_class(name)
    return found if found is not None and _kind_of(found) == kind else None


def _from_named(name: str, named: tuple[type, ...]) -> type | None:
    exact = [cls for cls in named if qualified_name(cls) == name]
    if exact:
        return exact[0]
    qualname = name.partition(":")[2]
    same = {cls for cls in named if cls.__qualname__ == qualname}
    return same.pop() if len(same) == 1 else None


def imported_class(name: str) -> type | None:
    """The class `"module:QualName"` of a module already in `sys.modules`, else `None`.

    Attributes are read from the objects' `__dict__`, so no module `__getattr__` (which may
    import lazily) and no descriptor runs.

    >>> imported_class("collections:OrderedDict").__name__
    'OrderedDict'
    >>> imported_class("not_imported_anywhere:Thing") is None
    True
    """
    module_name, _, qualname = name.partition(":")
    if not qualname or "<locals>" in qualname:
        return None
    found: Any = sys.modules.get(module_name)
    for part in qualname.split("."):
        if found is None:
            return None
        try:
            found = vars(found).get(part)
        except TypeError:  # an object without a __dict__
            return None
    return found if isinstance(found, type) else None
