"""What a node or router is handed: a dict that copies a field only when it is read.

The engine's values are private. A node gets a `StateView`, a real `dict` whose values are
copied the first time they are read, so a node that mutates its input changes neither the
engine's state nor the record, and a step costs what its nodes read, not the state's size.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from nbgraph.messages import MESSAGE_TYPES
from nbgraph.messages.langchain_messages import SHARED_TYPES
from nbgraph.messages.merge import shared_messages
from nbgraph.primitives import MISSING

__all__ = ["ATOMS", "Pending", "StateView", "isolate"]

ATOMS = frozenset({int, float, str, bool, type(None), bytes, complex, range, type(MISSING)})
"""The immutable types `isolate` shares instead of copying."""
_ATOMS = ATOMS
_FROZEN = MESSAGE_TYPES  # frozen types that say whether they can be shared
_SHARED = SHARED_TYPES  # langchain's message classes: shared, as LangGraph shares them


def isolate(value: Any) -> Any:
    """An independent copy of `value` (immutable atoms are returned as they are).

    A value that cannot be copied (a lock, a socket) is kept as it is: not isolated, but
    not lost either.
    """
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is list or kind is tuple:
        if len(value) == 1 and type(value[0]) in _ATOMS:  # (a node's usual list write)
            return value[:] if kind is list else value
        if not _items_shared(value):
            copied = _flat_copy(value) if kind is list and len(value) <= 8 else None
            return _deepcopy(value) if copied is None else copied
        return value[:] if kind is list else value
    if kind is dict:
        for item in value.values():
            if type(item) not in _ATOMS:
                return _deepcopy(value)
        return value.copy()
    return _deepcopy(value)


def _items_shared(items: list | tuple) -> bool:
    """Whether a list's items can be shared by its copy: atoms, langchain messages, and
    frozen messages that say so (a long list's kinds are read at C speed first; a list of
    one message class asks it, `Message.all_shareable`)."""
    if len(items) > 8:
        if shared_messages(items):  # the engine's conversation, known shareable
            return True
        kinds = set(map(type, items))
        if kinds <= _ATOMS:
            return True
        if len(kinds) == 1 and kinds <= _FROZEN:  # a conversation: one message class
            return next(iter(kinds)).all_shareable(items)
        kinds -= _ATOMS
        kinds.difference_update(_SHARED)
        if not kinds:
            return True
        if not kinds <= _FROZEN:
            return False
    for item in items:
        item_kind = type(item)
        if (
            item_kind not in _ATOMS
            and item_kind not in _SHARED
            and not (item_kind in _FROZEN and item.shareable())
        ):
            return False
    return True


def _flat_copy(items: list) -> list | None:
    """A short list's copy when its items are shareable or dicts of atoms (a node's write
    of a few messages as dicts), each dict copied; None: copy it deeply."""
    copied = []
    for item in items:
        item_kind = type(item)
        if item_kind is dict:
            for key, inner in item.items():
                if type(key) not in _ATOMS or type(inner) not in _ATOMS:
                    return None
            copied.append(item.copy())
        elif item_kind in _ATOMS or item_kind in _SHARED:
            copied.append(item)
        else:
            return None
    if len(set(map(id, items))) != len(items):  # one object twice: deepcopy keeps that
        return None
    return copied


def _deepcopy(value: Any) -> Any:
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


class Pending:
    """A value computed on first read (a router's fresh view); subclass and define compute."""

    __slots__ = ()

    def compute(self) -> Any:
        raise NotImplementedError


class StateView(dict):
    """A dict over the engine's values that copies each value on its first read.

    Keys, `len`, `in` and iteration are those of the state; reading a value (by `[]`,
    `get`, `items`, `values`, `pop`, `copy`, `dict(view)`, `{**view}`) returns a copy
    that the node may change freely. Writing to the view changes only the view.

    >>> engine_values = {"log": ["a"]}
    >>> view = StateView(engine_values)
    >>> view["log"].append("b")
    >>> view["log"], engine_values["log"]
    (['a', 'b'], ['a'])
    """

    __slots__ = ("_fresh",)  # the keys read (or written) since: their values are the view's
    # (no __init__ of its own: dict's, in C, as a view is made for every node and router;
    # `_fresh` is made on the first read that copies)

    def _fresh_keys(self) -> set[str]:
        try:
            return self._fresh
        except AttributeError:
            self._fresh = fresh = set()
            return fresh

    def set_pending(self, key: str, pending: Pending) -> None:
        """Make `key` read as `pending.compute()` (evaluated once, on first read)."""
        dict.__setitem__(self, key, pending)
        self._fresh_keys().discard(key)

    def __getitem__(self, key: str) -> Any:
        value = dict.__getitem__(self, key)
        if type(value) in _ATOMS:  # (an atom needs no copy)
            return value
        try:
            fresh = self._fresh
        except AttributeError:
            fresh = self._fresh = set()
        if key in fresh:
            return value
        value = value.compute() if isinstance(value, Pending) else isolate(value)
        dict.__setitem__(self, key, value)
        fresh.add(key)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        dict.__setitem__(self, key, value)
        self._fresh_keys().add(key)

    def __iter__(self) -> Iterator[str]:
        # Overriding __iter__ keeps dict(view) and {**view} on the copying path.
        return dict.__iter__(self)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if dict.__contains__(self, key) else default

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        return [(key, self[key]) for key in dict.keys(self)]

    def values(self) -> list[Any]:  # type: ignore[override]
        return [self[key] for key in dict.keys(self)]

    def pop(self, key: str, *default: Any) -> Any:
        if not dict.__contains__(self, key):
            if default:
                return default[0]
            raise KeyError(key)
        value = self[key]
        dict.__delitem__(self, key)
        return value

    def popitem(self) -> tuple[str, Any]:
        key = next(reversed(dict.keys(self)))
        return key, self.pop(key)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return self[key]
        self[key] = default
        return default

    def copy(self) -> dict[str, Any]:  # type: ignore[override]
        return dict(self.items())

    def resolved(self) -> dict[str, Any]:
        """A plain dict of copies of every value."""
        return dict(self.items())

    def __or__(self, other: Any) -> dict[str, Any]:  # type: ignore[override]
        result = self.resolved()
        result.update(other)
        return result

    def __eq__(self, other: object) -> bool:
        return self.resolved() == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.resolved())

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self.resolved(),))

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return copy.deepcopy(self.resolved(), memo)

    def __copy__(self) -> dict[str, Any]:
        return self.resolved()
