"""Reducers: plain `(old, new) -> merged` functions, and the registry of their names.

A field declared `Annotated[list, "append"]` uses the reducer registered as ``"append"``;
`Annotated[list, operator.add]` uses the callable itself. Registered reducers are called with
`MISSING` for a missing old or new value; a bare callable (LangGraph's style) is not: the
first write to a field that has no starting value is taken as it is.
"""

from __future__ import annotations

import builtins
import inspect
import operator
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nbgraph.errors import ReplayLimitError
from nbgraph.messages import add_messages, add_messages_in_place, with_ids
from nbgraph.primitives import MISSING

__all__ = [
    "Reducer",
    "ReducerFn",
    "add",
    "append",
    "callable_anywhere",
    "check_reducer_callable",
    "first_write_wins",
    "function_from_ref",
    "function_ref",
    "get_reducer",
    "last_write_wins",
    "maximum",
    "merge",
    "minimum",
    "overwrite",
    "reducer_from_callable",
    "register_reducer",
    "registered_names",
    "union",
]

ReducerFn = Callable[[Any, Any], Any]


@dataclass(frozen=True, slots=True)
class Reducer:
    """A reducer as the engine uses it.

    Attributes:
        name: what tables and drawings call it (`"append"`, `"add"`, `"<lambda>"`).
        fn: the pure `(old, new) -> merged` function.
        takes_missing: True if `fn` expects `MISSING` for a missing old value.
        in_place: an optional `(old, new) -> merged` that may extend `old` in place; the
            engine uses it only on values it owns, so a run costs what was written.
        prepare: an optional `(new) -> new` the engine applies to each write as it takes it
            in (`append_messages` gives messages their ids there, so replays agree).
    """

    name: str
    fn: ReducerFn
    takes_missing: bool = False
    in_place: ReducerFn | None = None
    prepare: Callable[[Any], Any] | None = None


_REGISTRY: dict[str, Reducer] = {}


def register_reducer(
    name: str,
    *,
    in_place: ReducerFn | None = None,
    prepare: Callable[[Any], Any] | None = None,
) -> Callable[[ReducerFn], ReducerFn]:
    """Register `fn(old, new) -> merged` under `name` (EvoFabric's `StateUpdater.register`).

    The function receives `MISSING` when there is no old value (or no new value).
    Registering a name again from the same place (the same module and qualified name, as
    when a notebook cell is re-run) replaces the function; registering another function
    under a taken name is a `ValueError` naming both.

    Args:
        name: the string used in `Annotated[T, name]`.
        in_place: optional faster variant allowed to change `old` in place.
        prepare: optional `(new) -> new` applied to each write as the engine takes it in.

    Returns:
        A decorator that registers the function and returns it unchanged.

    >>> @register_reducer("longest_doc")
    ... def longest(old, new):
    ...     return new if old is MISSING or len(new) > len(old) else old
    >>> longest("ab", "abc")
    'abc'
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"A reducer name must be a non-empty string, got {name!r}.")

    def decorator(fn: ReducerFn) -> ReducerFn:
        _refuse_duplicate(name, fn)
        problem = check_reducer_callable(fn)
        if problem:
            raise ValueError(f"Reducer {name!r}: {problem}")
        _REGISTRY[name] = Reducer(name, fn, True, in_place, prepare)
        return fn

    return decorator


def _refuse_duplicate(name: str, fn: ReducerFn) -> None:
    """Refuse `name` if another function holds it; the same place (a re-run cell) may."""
    registered = _REGISTRY.get(name)
    if registered is None or registered.fn is fn:
        return
    old, new = _place(registered.fn), _place(fn)
    if old == new and not old.startswith("nbgraph."):
        return
    raise ValueError(
        f"A reducer named {name!r} is already registered ({old}); {new} is another "
        "function: choose another name."
    )


def _place(fn: object) -> str:
    """Where a function was defined, as `module:qualname`."""
    module = getattr(fn, "__module__", None) or "?"
    return f"{module}:{getattr(fn, '__qualname__', None) or repr(fn)}"


def get_reducer(name: str) -> Reducer | None:
    """The reducer registered under `name`, or None."""
    return _REGISTRY.get(name)


def registered_names() -> list[str]:
    """Every registered reducer name, sorted."""
    return sorted(_REGISTRY)


def reducer_from_callable(fn: ReducerFn) -> Reducer:
    """Wrap a bare two-argument callable (LangGraph's style) as a `Reducer`."""
    for registered in _REGISTRY.values():
        if registered.fn is fn:
            return registered
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return Reducer(name, fn, takes_missing=False)


def check_reducer_callable(fn: object) -> str | None:
    """Why `fn` cannot be a reducer, or None if it can take `(old, new)`."""
    if not callable(fn):
        return f"expected a callable (old, new) -> merged, got {type(fn).__name__} {fn!r}"
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None  # some builtins have no signature; trust them
    try:
        signature.bind(MISSING, MISSING)
    except TypeError:
        shown = getattr(fn, "__qualname__", repr(fn))
        return f"{shown}{signature} cannot be called with two arguments (old, new)"
    return None


# --- the built-ins ------------------------------------------------------------------------


def _is_missing(value: Any) -> bool:
    return value is MISSING or value is None


def overwrite(old: Any, new: Any) -> Any:
    """The new value replaces the old one (missing new keeps the old).

    >>> overwrite(1, 2)
    2
    """
    return old if new is MISSING else new


def append(old: Any, new: Any) -> list:
    """A list extended by a list (or tuple), or one item appended.

    >>> append(["a"], ["b", "c"]), append(["a"], "b")
    (['a', 'b', 'c'], ['a', 'b'])
    """
    result = [] if _is_missing(old) else list(old)
    if new is MISSING:
        return result
    if isinstance(new, (list, tuple)):
        result.extend(new)
    else:
        result.append(new)
    return result


def _append_in_place(old: Any, new: Any) -> list:
    if old is MISSING or old is None:  # (`_is_missing`: this runs for every append)
        return append(old, new)
    if new is MISSING:
        return old
    if isinstance(new, (list, tuple)):
        old.extend(new)
    else:
        old.append(new)
    return old


def add(old: Any, new: Any) -> Any:
    """`old + new` (numbers add, lists and strings concatenate).

    >>> add(2, 3), add([1], [2])
    (5, [1, 2])
    """
    if old is MISSING:
        return new
    if new is MISSING:
        return old
    return old + new


def merge(old: Any, new: Any) -> dict:
    """A dict updated by another dict (new keys win).

    >>> merge({"a": 1, "b": 1}, {"b": 2})
    {'a': 1, 'b': 2}
    """
    result = {} if _is_missing(old) else dict(old)
    if new is not MISSING and new is not None:
        result.update(new)
    return result


def _merge_in_place(old: Any, new: Any) -> dict:
    if _is_missing(old):
        return merge(old, new)
    if new is not MISSING and new is not None:
        old.update(new)
    return old


def union(old: Any, new: Any) -> list:
    """Ordered unique items: the old ones, then new ones not seen yet.

    >>> union(["a", "b"], ["b", "c", "a", "d"])
    ['a', 'b', 'c', 'd']
    """
    result = [] if _is_missing(old) else list(old)
    if new is MISSING or new is None:
        return result
    items = new if isinstance(new, (list, tuple, set, frozenset)) else [new]
    seen = list(result)
    for item in items:
        if item not in seen:
            seen.append(item)
            result.append(item)
    return result


def maximum(old: Any, new: Any) -> Any:
    """The larger of old and new.

    >>> maximum(3, 5), maximum(MISSING, 4)
    (5, 4)
    """
    if old is MISSING:
        return new
    if new is MISSING:
        return old
    return new if new > old else old


def minimum(old: Any, new: Any) -> Any:
    """The smaller of old and new.

    >>> minimum(3, 5)
    3
    """
    if old is MISSING:
        return new
    if new is MISSING:
        return old
    return new if new < old else old


register_reducer("overwrite")(overwrite)
register_reducer("append", in_place=_append_in_place)(append)
register_reducer("add")(add)
_REGISTRY["sum"] = Reducer("sum", add, takes_missing=True)
register_reducer("merge", in_place=_merge_in_place)(merge)
register_reducer("union")(union)
register_reducer("max")(maximum)
register_reducer("min")(minimum)
register_reducer("append_messages", prepare=with_ids, in_place=add_messages_in_place)(add_messages)


# --- functions any process can find again ------------------------------------------------

_OPERATOR_NAMES = (
    "add", "and_", "concat", "iadd", "iand", "iconcat", "imul", "ior", "isub", "ixor",
    "matmul", "mul", "or_", "sub", "truediv", "floordiv", "xor",
)  # fmt: skip
_KNOWN: dict[str, ReducerFn] = {
    **{f"operator.{name}": getattr(operator, name) for name in _OPERATOR_NAMES},
    "builtins.max": builtins.max,
    "builtins.min": builtins.min,
}
REPEAT_LIMIT = 1 << 16
"""The most items a sequence repeated by a file's `operator.mul` may hold (docs/VALUES.md)."""


def _bounded(multiply: ReducerFn) -> ReducerFn:
    """`multiply` (`operator.mul` or `imul`) as a file may name it: a str, bytes, list or
    tuple repeated past `REPEAT_LIMIT` items is refused before it is built."""

    def bounded(old: Any, new: Any) -> Any:
        count, items = (new, old) if type(new) is int else (old, new)
        if type(count) is int and isinstance(items, (str, bytes, bytearray, list, tuple)):
            size = len(items) * max(count, 0)
            if size > max(REPEAT_LIMIT, len(items)):
                raise ReplayLimitError(
                    f"{multiply.__name__} would repeat a {type(items).__name__} of "
                    f"{len(items):,} items {count:,} times ({size:,} items); a reducer a file "
                    f"names may make at most {REPEAT_LIMIT:,}."
                )
        return multiply(old, new)

    bounded.__name__ = bounded.__qualname__ = multiply.__name__
    return bounded


_FROM_FILES: dict[str, ReducerFn] = {
    **_KNOWN,
    "operator.mul": _bounded(operator.mul),
    "operator.imul": _bounded(operator.imul),
}
"""What a file's reducer name resolves to: the function itself, or a bounded form of it."""
_OPTIONAL = {"langgraph.graph.message.add_messages": ("langgraph.graph.message", "add_messages")}


def function_ref(fn: object) -> str | None:
    """The name under which another process may find `fn` again, or None.

    Only well-known reducers have one: the `operator` module's functions (`"operator.add"`),
    `max` and `min`, and LangGraph's `add_messages` (found again only where LangGraph is
    already imported). nbgraph's own reducers go by their registered names instead.

    >>> function_ref(operator.add), function_ref(lambda a, b: a)
    ('operator.add', None)
    """
    for ref, known in _KNOWN.items():
        if known is fn or _FROM_FILES[ref] is fn:
            return ref
    for ref, (module, attribute) in _OPTIONAL.items():
        loaded = sys.modules.get(module)
        if loaded is not None and getattr(loaded, attribute, None) is fn:
            return ref
    return None


def function_from_ref(ref: str) -> ReducerFn | None:
    """The function `function_ref` named, if this process has it; never imports a module."""
    if ref in _FROM_FILES:
        return _FROM_FILES[ref]
    module, attribute = _OPTIONAL.get(ref, ("", ""))
    loaded = sys.modules.get(module) if module else None
    return getattr(loaded, attribute, None) if loaded is not None else None


def callable_anywhere(reducer: Reducer) -> bool:
    """Whether any process can call this reducer again: one of nbgraph's own registered
    reducers, or a function `function_ref` always finds (the `operator` module's, say)."""
    registered = _REGISTRY.get(reducer.name)
    module = getattr(reducer.fn, "__module__", None) or ""
    if registered is not None and registered.fn is reducer.fn and module.startswith("nbgraph."):
        return True
    ref = function_ref(reducer.fn)
    return ref is not None and ref in _KNOWN and not reducer.takes_missing


# --- merge strategies for joins (the Rust seed's `MergeStrategy`) ----------------------------


def last_write_wins(states: list[Any]) -> Any:
    """A join's `merge=` strategy: the last arriving branch's whole state wins.

    >>> last_write_wins([{"n": 1}, {"n": 2}])
    {'n': 2}
    """
    if not states:
        raise ValueError("last_write_wins: no branch states to merge.")
    return states[-1]


def first_write_wins(states: list[Any]) -> Any:
    """A join's `merge=` strategy: the first arriving branch's whole state wins.

    >>> first_write_wins([{"n": 1}, {"n": 2}])
    {'n': 1}
    """
    if not states:
        raise ValueError("first_write_wins: no branch states to merge.")
    return states[0]
