"""Values pinned for fields whose reducer another process cannot call, kept linear.

A checkpoint (or a run file) keeps, for a field whose reducer is a lambda or the user's own
function, what the field was after each step that wrote it, so the record can be rebuilt
where that function does not exist. Most such fields only grow (`lambda a, b: a + b`), so a
value that extends the one before is kept as what was added (`Grown`), not as a whole: the
storage grows with the writes, not with the steps times the state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING

__all__ = [
    "Grown",
    "growth",
    "kept_copy",
    "pinned_data",
    "pinned_from_data",
    "pinned_map",
    "value_after",
]

_SEQUENCES = (list, tuple, str)
_SETS = (set, frozenset)
_KINDS = ("value", "extend", "update", "union")


@dataclass(frozen=True, slots=True)
class Grown:
    """A field's value after a step, as what was added to its value before the step.

    Attributes:
        kind: `"extend"` (a list, tuple or string: the old value, then `part`), `"update"`
            (a dict: the old one updated by `part`) or `"union"` (a set: old | part).
        part: what was added.

    >>> Grown("extend", [3]).apply([1, 2]), Grown("update", {"b": 2}).apply({"a": 1})
    ([1, 2, 3], {'a': 1, 'b': 2})
    """

    kind: str
    part: Any

    def apply(self, old: Any) -> Any:
        """The value after: `old` grown by `part` (a new object; `old` is not changed)."""
        if self.kind == "extend":
            return old + isolate(self.part)
        if self.kind == "update":
            return {**old, **isolate(self.part)}
        return old | isolate(self.part)


def growth(before: Any, after: Any) -> Grown | None:
    """How `after` grew from `before` when it only grew (same type, nothing removed or
    changed), else None.

    >>> growth([1, 2], [1, 2, 3]), growth([1, 2], [2, 3])
    (Grown(kind='extend', part=[3]), None)
    """
    try:
        return _growth(before, after)
    except Exception:  # items whose `==` raises (arrays, say): keep the value whole
        return None


def _growth(before: Any, after: Any) -> Grown | None:
    kind = type(after)
    if type(before) is not kind or before is after:
        return None
    if kind in _SEQUENCES:
        size = len(before)
        if len(after) >= size and after[:size] == before:
            return Grown("extend", after[size:])
        return None
    if kind is dict:
        if any(key not in after for key in before):
            return None
        part = {k: v for k, v in after.items() if k not in before or not _same(before[k], v)}
        return Grown("update", part)
    if kind in _SETS and before <= after:
        return Grown("union", after - before)
    return None


def _same(a: Any, b: Any) -> bool:
    try:
        return a is b or bool(a == b)
    except Exception:
        return False


def kept_copy(value: Any) -> Any:
    """What to compare the next step's value with: a shallow copy of a mutable container
    (a reducer may extend it in place), the value itself otherwise."""
    kind = type(value)
    return kind(value) if kind in (list, dict, set) else value


def value_after(pinned: Any, old: Any) -> Any:
    """A pinned field's value after its step: `old` grown, or the pinned value itself.

    Args:
        pinned: a `Grown`, or the whole value after the step.
        old: the field's value before the step (after its resets); MISSING if none.
    """
    if type(pinned) is Grown:
        if old is MISSING or old is None:
            raise ValueError(
                f"A pinned value grows the field's value before the step, and there is none "
                f"({pinned.kind} of {pinned.part!r})."
            )
        return pinned.apply(old)
    return isolate(pinned)


def pinned_data(pinned: Any) -> list[Any]:
    """A pinned value as plain data: `["value", v]` or `[kind, part]`."""
    if type(pinned) is Grown:
        return [pinned.kind, pinned.part]
    return ["value", pinned]


def pinned_from_data(data: Any, where: str) -> Any:
    """A pinned value back from `pinned_data`.

    Raises:
        ValueError: data of another shape (naming `where`).
    """
    if type(data) not in (list, tuple) or len(data) != 2 or data[0] not in _KINDS:
        raise ValueError(
            f"{where}: a kept value should be [kind, value] with kind one of {_KINDS}; "
            f"found {data!r:.80}."
        )
    kind, part = data
    return part if kind == "value" else Grown(kind, part)


def pinned_map(data: Any, where: str) -> dict[str, Any]:
    """`{field: pinned_data}` read back (an absent entry is an empty map)."""
    if not data:
        return {}
    if type(data) is not dict:
        raise ValueError(f"{where}: kept values should be a mapping, found {type(data).__name__}.")
    return {name: pinned_from_data(item, f"{where}, field {name!r}") for name, item in data.items()}
