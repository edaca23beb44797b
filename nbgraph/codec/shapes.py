"""The shape of JSON data, checked before any of it is used: a small schema language.

`Is`, `ListOf`, `Pair`, `MapOf` and `Obj` describe what a JSON value must look like; `problems`
yields what is wrong, each naming the path of the entry, and `fits` is the fast check. The
graph description (`nbgraph.blueprint.description`), the run files
(`nbgraph.record.files.log_shape`) and
the checkpoints (`nbgraph.engine.persistence.checkpoint_shape`) describe their data with it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

__all__ = ["ANY", "BOOL", "NAMES", "STR", "Is", "ListOf", "MapOf", "Obj", "Pair", "Shape"]

_NUMBER_LIMIT = 2**62  # a step number, an index, a time: well inside an int64 column


class Shape:
    """A check of one JSON value; `problems` yields what is wrong, each naming its path."""

    def problems(self, value: Any, path: str) -> Iterator[str]:
        raise NotImplementedError

    def fits(self, value: Any) -> bool:
        """Whether `value` has this shape (the fast check; `problems` says what is wrong)."""
        return not any(True for _ in self.problems(value, ""))


class Is(Shape):
    """One of some JSON types: `Is(str)`, `Is(int, None)`; `Is(float)` takes an int too,
    `Is(object)` anything. Numbers must be finite and fit a table's int64 column."""

    def __init__(self, *kinds: Any, choices: tuple[Any, ...] = ()) -> None:
        self.kinds, self.choices = kinds, choices
        self.anything = object in kinds
        self.exact = frozenset(k if k is not None else type(None) for k in kinds) - {int, float}

    def fits(self, value: Any) -> bool:
        if self.anything:
            return True
        kind = type(value)
        if kind in self.exact:
            return not self.choices or value in self.choices
        if kind is int and (int in self.kinds or float in self.kinds):
            return -_NUMBER_LIMIT < value < _NUMBER_LIMIT
        if kind is float and float in self.kinds:
            return -_NUMBER_LIMIT < value < _NUMBER_LIMIT  # nan fails both
        return False

    def problems(self, value: Any, path: str) -> Iterator[str]:
        if object in self.kinds or (value is None and None in self.kinds):
            return
        kind = type(value)
        fits = kind in self.kinds or (float in self.kinds and kind is int)
        if fits and kind in (int, float):  # steps, indices, times: what tables hold
            fits = math.isfinite(value) and abs(value) < _NUMBER_LIMIT
        if not fits:
            names = " or ".join("null" if k is None else k.__name__ for k in self.kinds)
            article = "an" if names[0] in "aeiou" else "a"
            yield f"{path} should be {article} {names}, found {_show(value)}"
        elif self.choices and value not in self.choices:
            choices = ", ".join(map(repr, self.choices))
            yield f"{path} should be one of {choices}, found {_show(value)}"


class ListOf(Shape):
    """A list whose items all have `item`'s shape (exactly `size` of them if given)."""

    def __init__(self, item: Shape, size: int | None = None, nullable: bool = False) -> None:
        self.item, self.size, self.nullable = item, size, nullable

    def fits(self, value: Any) -> bool:
        if type(value) is not list:
            return value is None and self.nullable
        if self.size is not None and len(value) != self.size:
            return False
        fits = self.item.fits
        return all(map(fits, value))

    def problems(self, value: Any, path: str) -> Iterator[str]:
        if value is None and self.nullable:
            return
        if type(value) is not list:
            yield f"{path} should be a list, found {_show(value)}"
            return
        if self.size is not None and len(value) != self.size:
            yield f"{path} should be a list of {self.size} items, found {len(value)}"
            return
        for index, item in enumerate(value):
            yield from self.item.problems(item, f"{path}[{index}]")


class Pair(Shape):
    """A list of fixed length whose items have the given shapes, in order."""

    def __init__(self, *items: Shape) -> None:
        self.items = items

    def fits(self, value: Any) -> bool:
        if type(value) is not list or len(value) != len(self.items):
            return False
        return all(shape.fits(item) for shape, item in zip(self.items, value, strict=True))

    def problems(self, value: Any, path: str) -> Iterator[str]:
        if type(value) is not list or len(value) != len(self.items):
            yield f"{path} should be a list of {len(self.items)} items, found {_show(value)}"
            return
        for index, (shape, item) in enumerate(zip(self.items, value, strict=True)):
            yield from shape.problems(item, f"{path}[{index}]")


class MapOf(Shape):
    """An object whose values all have `item`'s shape."""

    def __init__(self, item: Shape, nullable: bool = False) -> None:
        self.item, self.nullable = item, nullable

    def fits(self, value: Any) -> bool:
        if type(value) is not dict:
            return value is None and self.nullable
        return all(map(self.item.fits, value.values()))

    def problems(self, value: Any, path: str) -> Iterator[str]:
        if value is None and self.nullable:
            return
        if type(value) is not dict:
            yield f"{path} should be an object, found {_show(value)}"
            return
        for key, item in value.items():
            yield from self.item.problems(item, f"{path}[{key!r}]")


class Obj(Shape):
    """An object with `required` entries (and maybe `optional` ones), each of its shape."""

    def __init__(
        self, required: dict[str, Shape], optional: dict[str, Shape] | None = None,
        nullable: bool = False,
    ) -> None:  # fmt: skip
        self.required, self.optional, self.nullable = required, optional or {}, nullable

    def fits(self, value: Any) -> bool:
        if type(value) is not dict:
            return value is None and self.nullable
        for key, shape in self.required.items():
            if key not in value or not shape.fits(value[key]):
                return False
        for key, shape in self.optional.items():
            if key in value and not shape.fits(value[key]):
                return False
        return True

    def problems(self, value: Any, path: str) -> Iterator[str]:
        if value is None and self.nullable:
            return
        if type(value) is not dict:
            yield f"{path} should be an object, found {_show(value)}"
            return
        for key, shape in self.required.items():
            if key not in value:
                yield f"{path}: the entry {key!r} is missing"
            else:
                yield from shape.problems(value[key], f"{path}[{key!r}]")
        for key, shape in self.optional.items():
            if key in value:
                yield from shape.problems(value[key], f"{path}[{key!r}]")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


ANY = Is(object)
STR = Is(str)
NAMES = ListOf(STR)
BOOL = Is(bool)
