"""Table cells for fields that grow: one shared list per field, each row a view of a prefix.

A field that grows by a few items per step (an append log, a message list) would cost
1 + 2 + ... + N item pointers if every row of `run.effects` held its own copy of the value.
Instead each row's `before`/`after` cell is a `ListPrefix`: the first `n` items of a list
that all the field's rows share and that only ever grows at its end, so the table costs
what was written.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any, SupportsIndex, overload

__all__ = ["ListPrefix", "ListTrails", "TextPrefix", "TextTrail", "plain"]


class ListPrefix(Sequence):
    """A read-only list: the first `length` items of a list shared with other table cells.

    It reads like the list it stands for (indexing, slicing, iteration, `len`, `in`, `==`
    with lists, repr); `list(cell)` or `cell.copy()` gives a real list to change.

    >>> shared = [1, 2, 3]
    >>> cell = ListPrefix(shared, 2)
    >>> cell, cell == [1, 2], cell[-1], cell + [9], list(cell)
    ([1, 2], True, 2, [1, 2, 9], [1, 2])
    """

    __slots__ = ("_items", "_length")
    __hash__ = None  # type: ignore[assignment]  # a list is not hashable either

    def __init__(self, items: list, length: int) -> None:
        self._items = items
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: SupportsIndex) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list: ...
    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self.copy()[index]
        position = index.__index__()
        if position < 0:
            position += self._length
        if not 0 <= position < self._length:
            raise IndexError("list index out of range")
        return self._items[position]

    def __iter__(self) -> Iterator[Any]:
        return islice(self._items, self._length)

    def copy(self) -> list:
        """The items as a new list of their own."""
        items = self._items
        return items.copy() if len(items) == self._length else items[: self._length]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ListPrefix):
            if other._length != self._length:
                return False
            if other._items is self._items:  # one trail: the same items
                return True
            return self.copy() == other.copy()
        if isinstance(other, list):
            return len(other) == self._length and self.copy() == other
        return NotImplemented

    def __add__(self, other: Any) -> list:
        return self.copy() + (other.copy() if isinstance(other, ListPrefix) else other)

    def __radd__(self, other: Any) -> list:
        return other + self.copy()

    def __repr__(self) -> str:
        return repr(self.copy())

    def __copy__(self) -> list:
        return self.copy()

    def __deepcopy__(self, memo: dict) -> list:
        return copy.deepcopy(self.copy(), memo)

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (self.copy(),))  # pickles as the list it stands for


def plain(value: Any) -> Any:
    """`value` itself, or the real list (str) a `ListPrefix` (`TextPrefix`) cell stands for."""
    kind = type(value)
    return value.copy() if kind is ListPrefix or kind is TextPrefix else value


class TextTrail:
    """A str that a replay grows at its end (`operator.add` on a transcript): its pieces,
    joined only when read, so N steps that each add k characters cost N*k, not N*N*k/2.

    >>> trail = TextTrail("ab", "c")
    >>> trail.add("de")
    >>> trail.head(2), trail.text(4), len(trail)
    ('ab', 'abcd', 5)
    """

    __slots__ = ("length", "pieces")

    def __init__(self, *pieces: str) -> None:
        self.pieces = list(pieces)
        self.length = sum(map(len, pieces))

    def __len__(self) -> int:
        return self.length

    def add(self, piece: str) -> None:
        self.pieces.append(piece)
        self.length += len(piece)

    def text(self, length: int | None = None) -> str:
        """The first `length` characters (default: all), as one str."""
        if len(self.pieces) > 1:
            self.pieces[:] = ["".join(self.pieces)]  # (joined once, kept joined)
        whole = self.pieces[0] if self.pieces else ""
        return whole if length is None or length >= len(whole) else whole[:length]

    def head(self, count: int) -> str:
        """At most the first `count` characters, reading only the pieces they are in."""
        taken, size = [], 0
        for piece in self.pieces:
            if size >= count:
                break
            taken.append(piece[: count - size])
            size += len(taken[-1])
        return "".join(taken)


class TextPrefix:
    """A table cell: the first `length` characters of a `TextTrail` shared with other
    cells; `str(cell)`, `cell.copy()` and `Effect.before`/`after` give the str itself.

    >>> trail = TextTrail("ab"); cell = TextPrefix(trail, 2); trail.add("c")
    >>> cell, cell == "ab", len(cell), str(cell)
    ('ab', True, 2, 'ab')
    """

    __slots__ = ("length", "trail")

    def __init__(self, trail: TextTrail, length: int) -> None:
        self.trail = trail
        self.length = length

    def __len__(self) -> int:
        return self.length

    def copy(self) -> str:
        return self.trail.text(self.length)

    def head(self, count: int) -> str:
        return self.trail.head(min(count, self.length))

    def __str__(self) -> str:
        return self.copy()

    def __repr__(self) -> str:
        return repr(self.copy())

    def __hash__(self) -> int:
        return hash(self.copy())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TextPrefix):
            if other.length != self.length:
                return False
            return other.trail is self.trail or self.copy() == other.copy()
        if isinstance(other, str):
            return len(other) == self.length and self.copy() == other
        return NotImplemented

    def __reduce__(self) -> tuple[Any, ...]:
        return (str, (self.copy(),))


class ListTrails:
    """Per field, the list its cells share: grown at its end, never changed before it.

    `cell(field, value)` gives a `ListPrefix` of the field's trail when `value` starts with
    everything the trail holds (checked with `==` at C speed, or, when the caller knows the
    value only grew at its end, not at all), after appending the new items; otherwise a new
    trail starts from a copy of `value` (the old one stays with the cells that read it).
    """

    def __init__(self) -> None:
        self.trails: dict[str, list] = {}

    def cell(self, name: str, value: list, appended: bool = False) -> ListPrefix:
        """A cell showing `value` (a list), sharing what it can with the field's trail.

        Args:
            name: the field (each field has its own trail).
            value: the field's value now (read, never kept).
            appended: the caller knows `value` is the previous cell's list with items added
                at its end (an in-place append): the prefix is not compared.
        """
        trail = self.trails.get(name)
        length = len(value)
        if trail is not None and len(trail) <= length:
            known = len(trail)
            if appended or _starts_with(value, trail):
                trail.extend(value[known:])
                return ListPrefix(trail, length)
        trail = self.trails[name] = value.copy()
        return ListPrefix(trail, length)

    def forget(self, name: str) -> None:
        """The field stopped being a list: its next list starts a new trail."""
        self.trails.pop(name, None)


def _starts_with(value: list, prefix: list) -> bool:
    head = value if len(value) == len(prefix) else value[: len(prefix)]
    try:
        return bool(head == prefix)
    except Exception:  # an item whose == raises or is ambiguous (a numpy array): no sharing
        return False
