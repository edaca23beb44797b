"""Where two values first differ: a path a person reads ("index 3", "key 'name'"), so a
comparison of long values that look alike when cut short points at the difference."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nbgraph.record.text import safe_repr, short

__all__ = ["first_difference"]

_DEPTH = 12  # nested this deep, stop and report the place reached


def first_difference(left: Any, right: Any) -> str:
    """Where `left` and `right` first differ, as a readable path; "" if they are equal.

    Lists and tuples are compared index by index, mappings key by key (left's keys first),
    objects with `__dict__` field by field; elsewhere the values themselves differ.

    >>> first_difference([1, 2, {"a": "x"}], [1, 2, {"a": "y"}])
    "index 2 → key 'a': 'x' vs 'y'"
    >>> first_difference([1, 2], [1, 2, 3])
    'length 2 vs 3: index 2 only on the right'
    >>> first_difference("1", 1)
    "type str vs int: '1' vs 1"
    """
    path: list[str] = []
    for _ in range(_DEPTH):
        step = _step(left, right)
        if step is None:
            return ""
        where, inner = step
        if inner is None:
            return ": ".join(filter(None, [" → ".join(path), where]))
        path.append(where)
        left, right = inner
    return " → ".join(path)


def _step(left: Any, right: Any) -> tuple[str, tuple[Any, Any] | None] | None:
    """None: equal; (text, None): differ here; (place, (l, r)): go into that place."""
    try:
        if type(left) is type(right) and left == right:
            return None
    except Exception:  # a value whose == raises: compare what they show
        if safe_repr(left) == safe_repr(right):
            return None
    both_seq = _is_seq(left) and _is_seq(right)
    both_map = isinstance(left, Mapping) and isinstance(right, Mapping)
    if type(left) is not type(right) and not (both_seq or both_map):
        kinds = f"type {type(left).__name__} vs {type(right).__name__}"
        return f"{kinds}: {_short(left)} vs {_short(right)}", None
    if isinstance(left, str) and isinstance(right, str):
        return _text_difference(left, right), None
    if _is_seq(left) and _is_seq(right):
        for index, (a, b) in enumerate(zip(left, right, strict=False)):
            if _step(a, b) is not None:
                return f"index {index}", (a, b)
        if len(left) == len(right):  # same items, other sequence types
            return f"type {type(left).__name__} vs {type(right).__name__}", None
        shorter = min(len(left), len(right))
        side = "right" if len(right) > len(left) else "left"
        return f"length {len(left)} vs {len(right)}: index {shorter} only on the {side}", None
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        for key in [*left, *(k for k in right if k not in left)]:
            if key not in right or key not in left:
                side = "left" if key in left else "right"
                return f"key {_short(key)} only on the {side}", None
            if _step(left[key], right[key]) is not None:
                return f"key {_short(key)}", (left[key], right[key])
        return f"type {type(left).__name__} vs {type(right).__name__}", None
    fields = _fields(left), _fields(right)
    if fields[0] is not None and fields[1] is not None:
        return _step(fields[0], fields[1])
    return f"{_short(left)} vs {_short(right)}", None


def _text_difference(left: str, right: str) -> str:
    """Short strings whole; long ones: the first character where they differ, with a little
    of each from there."""
    if max(len(left), len(right)) <= 30:
        return f"{_short(left)} vs {_short(right)}"
    index = next((i for i, (a, b) in enumerate(zip(left, right, strict=False)) if a != b), None)
    if index is None:
        index = min(len(left), len(right))
        return f"length {len(left)} vs {len(right)}: character {index} on only one side"
    return f"character {index}: {_short(left[index:], 20)} vs {_short(right[index:], 20)}"


def _is_seq(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray)


def _fields(value: Any) -> dict[str, Any] | None:
    fields = getattr(value, "__dict__", None)
    return dict(fields) if isinstance(fields, dict) else None


def _short(value: Any, width: int = 40) -> str:
    return short(value, width)  # (reads only what it shows)
