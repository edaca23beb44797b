"""What a value read from a file becomes when the file cannot give it back as it was.

A kept repr (`Unrepresentable`), a model, dataclass or Enum member whose class is not at hand
(`UnloadedModel`, `UnloadedEnum`), an exception (`RecordedError`), a `Mutation`
(`RecordedMutation`). Each shows what the file holds and says what it stands for.
"""

from __future__ import annotations

from typing import Any

from nbgraph.errors import NbgraphError
from nbgraph.primitives import Mutation

__all__ = [
    "RecordedError",
    "RecordedMutation",
    "UnavailableFunctionError",
    "UnknownTagError",
    "UnloadedEnum",
    "UnloadedModel",
    "Unrepresentable",
]


class UnavailableFunctionError(NbgraphError, RuntimeError):
    """A function of a run loaded from a file was called; files keep no functions."""


class UnknownTagError(NbgraphError, ValueError):
    """A value is tagged by a `"$type"` this nbgraph does not know (`tag` says which)."""

    def __init__(self, tag: Any) -> None:
        super().__init__(f"a value is tagged {tag!r}, which this nbgraph does not know")
        self.tag = tag


class RecordedError(Exception):
    """An exception as a saved run kept it: its type's name and its message.

    `RecordedError("ValueError", "boom")` is an instance of a subclass named `ValueError`,
    so tables show `ValueError: boom` as they did for the original run.

    >>> error = RecordedError("ValueError", "boom")
    >>> type(error).__name__, str(error), isinstance(error, RecordedError)
    ('ValueError', 'boom', True)
    """

    def __new__(cls, type_name: str, message: str) -> RecordedError:
        if cls is RecordedError:
            cls = _ERROR_CLASSES.get(type_name) or _error_class(type_name)
        return super().__new__(cls, type_name, message)

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(type_name, message)
        self.type_name, self.message = type_name, message

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"RecordedError({self.type_name!r}, {self.message!r})"


_ERROR_CLASSES: dict[str, type[RecordedError]] = {}


def _error_class(type_name: str) -> type[RecordedError]:
    cls = type(type_name, (RecordedError,), {"__module__": __name__, "__qualname__": type_name})
    _ERROR_CLASSES[type_name] = cls
    return cls


class Unrepresentable:
    """A value a saved run could only keep as its `repr` (and its class's name).

    Attributes:
        text: the value's repr (also this object's repr).
        class_name: its class, as `"module:QualName"`.

    >>> Unrepresentable("<Lock>", "_thread:lock")
    <Lock>
    """

    __slots__ = ("class_name", "text")

    def __init__(self, text: str, class_name: str) -> None:
        self.text, self.class_name = text, class_name

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Unrepresentable):
            return NotImplemented
        return (self.text, self.class_name) == (other.text, other.class_name)

    def __hash__(self) -> int:
        return hash((self.text, self.class_name))

    def __deepcopy__(self, memo: dict) -> Unrepresentable:
        return self


class UnloadedModel(dict):
    """A pydantic model or dataclass whose class is not at hand (or refused the data): its
    data, and the class it was saved as.

    Attributes:
        class_name: the class, as `"module:QualName"`.
        kind: `"pydantic"` or `"dataclass"`.

    >>> UnloadedModel("shop:Order", {"id": 3})
    UnloadedModel('shop:Order', {'id': 3})
    """

    def __init__(self, class_name: str, data: dict[str, Any], kind: str = "pydantic") -> None:
        super().__init__(data)
        self.class_name, self.kind = class_name, kind

    def __repr__(self) -> str:
        if self.kind == "pydantic":
            return f"UnloadedModel({self.class_name!r}, {dict(self)!r})"
        return f"UnloadedModel({self.class_name!r}, {dict(self)!r}, kind={self.kind!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnloadedModel)
            and (self.class_name, self.kind) == (other.class_name, other.kind)
            and dict.__eq__(self, other)
        )

    __hash__ = None  # type: ignore[assignment]  # a dict: mutable


class UnloadedEnum:
    """An Enum member whose class is not at hand (or has no member of that value): the
    class it was saved as and the member's value.

    >>> UnloadedEnum("shop:Color", "red")
    <shop:Color member of value 'red' (class not loaded)>
    """

    __slots__ = ("class_name", "value")

    def __init__(self, class_name: str, value: Any) -> None:
        self.class_name, self.value = class_name, value

    def __repr__(self) -> str:
        return f"<{self.class_name} member of value {self.value!r} (class not loaded)>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UnloadedEnum):
            return NotImplemented
        return (self.class_name, self.value) == (other.class_name, other.value)

    def __hash__(self) -> int:
        try:
            return hash((self.class_name, self.value))
        except TypeError:
            return hash(self.class_name)

    def __deepcopy__(self, memo: dict) -> UnloadedEnum:
        return self


class RecordedMutation(Mutation):
    """A `Mutation` a saved run wrote: kept as its repr; it cannot be applied again."""

    def __init__(self, field: str, text: str, class_name: str) -> None:
        self.field, self.text, self.class_name = field, text, class_name

    def apply(self, value: Any) -> Any:
        raise UnavailableFunctionError(
            f"{self.text} cannot be applied: this run was loaded from a file, and a file keeps "
            "a Mutation only as its repr."
        )

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordedMutation) and (self.text, self.class_name) == (
            other.text,
            other.class_name,
        )

    def __hash__(self) -> int:
        return hash((self.text, self.class_name))
