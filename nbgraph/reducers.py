"""Reducers: plain `(old, new) -> merged` functions, and the registry of their names.

A field declared `Annotated[list, "append"]` uses the reducer registered as ``"append"``;
`Annotated[list, operator.add]` uses the callable itself. Registered reducers are called with
`MISSING` for a missing old or new value; a bare callable (LangGraph's style) is not: the
first write to a field that has no starting value is taken as it is.
"""

from __future__ import annotations

import builtins
import contextlib
import contextvars
import inspect
import math
import operator
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
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
    "for_files",
    "function_from_ref",
    "function_ref",
    "get_reducer",
    "is_registered",
    "last_write_wins",
    "maximum",
    "merge",
    "minimum",
    "overwrite",
    "plain_function",
    "reducer_from_callable",
    "register_reducer",
    "registered_names",
    "replay_budget",
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
        appends: folding a list into a list keeps the old items, in order, and adds the
            written ones after them (`append`; `operator.add` on lists). Declared where the
            reducer is made; False for a reducer nobody declared (nothing is assumed).
        order: whether folding concurrent writes in another order could give another
            value: `"free"` (`max`, `min`), `"free for numbers"` (addition), or
            `"matters"` (the default: a reducer nobody declared).

    What a reducer is, it says here: the record, the replays and the what-if analysis ask
    it (`appends`, `extends_in_place`, `order_matters`), never guess from its function.
    """

    name: str
    fn: ReducerFn
    takes_missing: bool = False
    in_place: ReducerFn | None = None
    prepare: Callable[[Any], Any] | None = None
    appends: bool = False
    order: str = "matters"

    @property
    def extends_in_place(self) -> bool:
        """Whether its in-place form grows the old list itself (`appends`, with an
        `in_place`): a replay's list keeps its items and only grows.

        >>> get_reducer("append").extends_in_place, get_reducer("merge").extends_in_place
        (True, False)
        """
        return self.appends and self.in_place is not None

    def order_matters(self, numbers: bool = False) -> bool:
        """Whether concurrent writes folded in another order could give another value;
        `numbers`: every value folded is a number (addition commutes on numbers).

        >>> get_reducer("max").order_matters(), get_reducer("add").order_matters(True)
        (False, False)
        >>> unknown = reducer_from_callable(lambda old, new: new)
        >>> get_reducer("add").order_matters(), unknown.order_matters(), unknown.appends
        (True, True, False)
        """
        return self.order != "free" and not (numbers and self.order == "free for numbers")


_REGISTRY: dict[str, Reducer] = {}
_ORDERS = ("matters", "free", "free for numbers")


def register_reducer(
    name: str,
    *,
    in_place: ReducerFn | None = None,
    prepare: Callable[[Any], Any] | None = None,
    appends: bool = False,
    order: str = "matters",
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
        appends: True if folding a list into a list only adds the written items after
            the old ones (`Reducer.appends`; left False, nothing is assumed).
        order: `"free"` if the order writes are folded in never changes the result,
            `"free for numbers"` if it does not on numbers (`Reducer.order`).

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
        if order not in _ORDERS:
            raise ValueError(f"Reducer {name!r}: order must be one of {_ORDERS}, got {order!r}.")
        _REGISTRY[name] = Reducer(name, fn, True, in_place, prepare, appends, order)
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


def is_registered(reducer: Reducer) -> bool:
    """Whether `reducer` is the one registered under its name (`operator.add`'s "add" is not).

    >>> is_registered(get_reducer("add")), is_registered(reducer_from_callable(operator.add))
    (True, False)
    """
    registered = _REGISTRY.get(reducer.name)
    return registered is not None and registered.fn is plain_function(reducer.fn)


def registered_names() -> list[str]:
    """Every registered reducer name, sorted."""
    return sorted(_REGISTRY)


def reducer_from_callable(fn: ReducerFn, name: str | None = None) -> Reducer:
    """Wrap a bare two-argument callable (LangGraph's style) as a `Reducer` (named `name`,
    or the function's name); a well-known function says what it is (`_DECLARED`), any
    other declares nothing."""
    fn = plain_function(fn)
    if name is None:
        for registered in _REGISTRY.values():
            if registered.fn is fn:
                return registered
        name = getattr(fn, "__name__", None) or type(fn).__name__
    appends, order = _DECLARED.get(id(fn), (False, "matters"))
    return Reducer(name, fn, False, appends=appends, order=order)


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
    hashed, listed = set(), []  # (seen items: hashable ones in a set, the others listed)
    for item in result:
        _remember(item, hashed, listed)
    for item in items:
        if not _seen(item, hashed, listed):
            _remember(item, hashed, listed)
            result.append(item)
    return result


def _remember(item: Any, hashed: set, listed: list) -> None:
    try:
        hashed.add(item)
    except TypeError:  # (unhashable: a list, a dict)
        listed.append(item)


def _seen(item: Any, hashed: set, listed: list) -> bool:
    """`item in seen` as a list would say (identity or ==), in time linear in `listed`."""
    try:
        if item in hashed:
            return True
    except TypeError:
        pass
    return item in listed


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
register_reducer("append", in_place=_append_in_place, appends=True)(append)
register_reducer("add", appends=True, order="free for numbers")(add)
_REGISTRY["sum"] = replace(_REGISTRY["add"], name="sum")
register_reducer("merge", in_place=_merge_in_place)(merge)
register_reducer("union")(union)
register_reducer("max", order="free")(maximum)
register_reducer("min", order="free")(minimum)
register_reducer("append_messages", prepare=with_ids, in_place=add_messages_in_place)(add_messages)


_DECLARED: dict[int, tuple[bool, str]] = {
    id(operator.add): (True, "free for numbers"),
    id(operator.iadd): (True, "free for numbers"),
    id(operator.concat): (True, "matters"),
    id(operator.iconcat): (True, "matters"),
    id(builtins.max): (False, "free"),
    id(builtins.min): (False, "free"),
}
"""What the well-known bare callables are, `(appends, order)`, by the function's id (they
live as long as the process): `Annotated[list, operator.add]` appends, `max` is free of
order. A callable not here declares nothing (`Reducer`'s defaults)."""


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
REPLAY_ALLOWANCE = 1 << 23
"""The work (in units: see `units`) a file's replay may do beyond what its writes earn."""
REPLAY_WORK_PER_UNIT = 256
"""The work each unit of a file's writes earns its replay (docs/VALUES.md)."""

_SEQUENCES = (str, bytes, bytearray, list, tuple)


def units(value: Any) -> int:
    """What a value weighs for the replay bounds: the length of a str, bytes or collection
    (shallow: a copy copies references), the bytes of an int, the elements of a numpy
    array, else 1. Reads no item.

    >>> units("abc"), units([1, [2, 3]]), units(2**64), units(None)
    (3, 2, 9, 1)
    """
    kind = type(value)
    if kind is int:
        return value.bit_length() // 8 + 1
    if isinstance(value, (*_SEQUENCES, dict, set, frozenset)):
        return len(value)
    size = getattr(value, "size", None) if _is_numpy(value) else None
    return size if type(size) is int else 1


def _is_numpy(value: Any) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, (np.ndarray, np.generic))


class ReplayBudget:
    """The work one load may still do in reducers a file names: `REPLAY_ALLOWANCE` to start
    with, and `REPLAY_WORK_PER_UNIT` more for each unit of each write folded."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = REPLAY_ALLOWANCE


_LOAD_BUDGET: contextvars.ContextVar[ReplayBudget | None] = contextvars.ContextVar(
    "nbgraph_replay_budget", default=None
)


@contextlib.contextmanager
def replay_budget(budget: ReplayBudget | None = None) -> Iterator[ReplayBudget]:
    """One budget for every file-named reducer called inside (a whole load, its subruns'):
    a new one, or `budget` again (a load whose steps are checked as they are first read)."""
    budget = ReplayBudget() if budget is None else budget
    token = _LOAD_BUDGET.set(budget)
    try:
        yield budget
    finally:
        _LOAD_BUDGET.reset(token)


class FileReducer:
    """A reducer function as a file may name it: before each call, the value it would make
    and the work it would do are worked out from its operands' sizes (`units`), and a call
    past a bound is refused with `ReplayLimitError` before it allocates.

    The bounds (docs/VALUES.md, "What loading a file may cost"): a value no larger than its
    two operands together (numpy broadcasting and `matmul` included), a repeated sequence
    at most `REPEAT_LIMIT` items (whatever type its count: `operator.index`), and a load's
    total work at most `REPLAY_ALLOWANCE` plus `REPLAY_WORK_PER_UNIT` per unit written.

    The work is counted during a load (`replay_budget`): the load replays every write, so
    once it passed, the views' replays of the same writes (`state_at`, `compare`) are not
    counted again; each of their calls keeps the size bounds.
    """

    __slots__ = ("field", "function", "kind")

    def __init__(self, function: ReducerFn, field: str = "?") -> None:
        self.function = function
        self.field = field
        name = getattr(function, "__name__", "")
        self.kind = name.rstrip("_").lstrip("i") if name in _SHAPED else name

    @property
    def __name__(self) -> str:  # (what tables call it)
        return getattr(self.function, "__name__", type(self.function).__name__)

    def __repr__(self) -> str:
        return f"<{self.__name__}, bounded for a file>"

    def __call__(self, old: Any, new: Any) -> Any:
        made, work = _predict(self.kind, old, new)
        bound = units(old) + units(new) + 8
        if self.kind == "mul" and made > bound:
            bound = max(REPEAT_LIMIT, units(old), units(new))
        if made > bound:
            self._refuse(
                f"would make a value of {made:,} units from operands of "
                f"{units(old):,} and {units(new):,}; a reducer a file names may make "
                f"at most {bound:,}"
            )
        self.charge(work, units(new))
        return self.function(old, new)

    def charge(self, work: int, written: int) -> None:
        """Count `work` against the load's budget (if a load is under way), which a write of
        `written` units adds to; refuse the call past it."""
        budget = _LOAD_BUDGET.get()
        if budget is None:
            return
        budget.left += REPLAY_WORK_PER_UNIT * written - work
        if budget.left < 0:
            self._refuse(
                f"would pass the work a file's replay may do ({REPLAY_ALLOWANCE:,} "
                f"units plus {REPLAY_WORK_PER_UNIT} per unit the file's writes hold); "
                "load it with graph=app to replay it with the program's own reducers"
            )

    def _refuse(self, why: str) -> None:
        raise ReplayLimitError(f"field {self.field!r}: {self.__name__} {why}.")


_SHAPED = frozenset({"mul", "imul", "matmul", "imatmul"})


def _predict(kind: str, old: Any, new: Any) -> tuple[int, int]:
    """The size of what `kind(old, new)` makes and the work it does, in `units`, from the
    operands' sizes alone."""
    if old is MISSING or new is MISSING:
        old = () if old is MISSING else old
        new = () if new is MISSING else new
    a, b = units(old), units(new)
    if kind == "mul":  # (a sequence repeated: whatever the count's type)
        for items, count in ((old, new), (new, old)):
            if isinstance(items, _SEQUENCES) and not isinstance(count, _SEQUENCES):
                repeats = _index(count)
                if repeats is not None:
                    made = len(items) * max(repeats, 0)
                    return made, made + a + b
    if _is_numpy(old) or _is_numpy(new):
        return _numpy_prediction(kind, old, new)
    if kind == "mul" and type(old) is int and type(new) is int:  # (schoolbook: limbs x limbs)
        return a + b, (a // 8 + 1) * (b // 8 + 1) + a + b
    if kind == "union":  # (an unhashable item is looked for among the others: quadratic)
        unhashable = sum(
            1
            for value in (old, new)
            if isinstance(value, (list, tuple, set, frozenset))
            for item in value
            if type(item).__hash__ is None
        )
        return a + b, a + b + unhashable * unhashable
    return a + b, a + b


def _index(count: Any) -> int | None:
    """`operator.index(count)`, or None if `count` is no integer (an enum, a numpy integer
    and a bool are)."""
    try:
        return operator.index(count)
    except TypeError:
        return None


def _numpy_prediction(kind: str, old: Any, new: Any) -> tuple[int, int]:
    np = sys.modules["numpy"]
    for value in (old, new):
        if isinstance(value, np.ndarray) and value.dtype.kind == "O":
            raise ReplayLimitError("a reducer a file names does not replay object arrays.")
    try:
        a, b = np.shape(old), np.shape(new)
        shape = _matmul_shape(a, b) if kind == "matmul" else np.broadcast_shapes(a, b)
    except (ValueError, TypeError):  # (numpy refuses them too, saying why)
        return 1, 1
    made = math.prod(shape)
    inner = (a[-1] if a else 1) if kind == "matmul" else 1
    return made, made * max(inner, 1) + math.prod(a) + math.prod(b)


def _matmul_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The shape `a @ b` has (numpy's rules: 1-D operands, broadcast batch dimensions)."""
    np = sys.modules["numpy"]
    if not a or not b:
        raise ValueError("matmul: a scalar operand")
    left = (1, *a) if len(a) == 1 else a
    right = (*b, 1) if len(b) == 1 else b
    if left[-1] != right[-2]:
        raise ValueError("matmul: the inner sizes differ")
    batch = np.broadcast_shapes(left[:-2], right[:-2])
    shape = (*batch, left[-2], right[-1])
    if len(a) == 1:
        shape = (*shape[:-2], shape[-1])
    if len(b) == 1:
        shape = shape[:-1]
    return shape


def for_files(reducer: Reducer, field: str) -> Reducer:
    """`reducer` as a file may name it for `field`: its function a `FileReducer` (an
    in-place form is kept: `append`'s and `merge`'s only extend, linear in what is written)."""
    if isinstance(reducer.fn, FileReducer):
        return reducer
    return replace(reducer, fn=FileReducer(reducer.fn, field))


def plain_function(fn: Any) -> Any:
    """The function a reducer calls: `fn` itself, or the one a `FileReducer` bounds."""
    return fn.function if type(fn) is FileReducer else fn


_FROM_FILES: dict[str, ReducerFn] = dict(_KNOWN)
"""What a file's reducer name resolves to (`for_files` bounds it for the field)."""
_OPTIONAL = {"langgraph.graph.message.add_messages": ("langgraph.graph.message", "add_messages")}


def function_ref(fn: object) -> str | None:
    """The name under which another process may find `fn` again, or None.

    Only well-known reducers have one: the `operator` module's functions (`"operator.add"`),
    `max` and `min`, and LangGraph's `add_messages` (found again only where LangGraph is
    already imported). nbgraph's own reducers go by their registered names instead.

    >>> function_ref(operator.add), function_ref(lambda a, b: a)
    ('operator.add', None)
    """
    fn = plain_function(fn)
    for ref, known in _KNOWN.items():
        if known is fn:
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
    fn = plain_function(reducer.fn)
    module = getattr(fn, "__module__", None) or ""
    if registered is not None and registered.fn is fn and module.startswith("nbgraph."):
        return True
    ref = function_ref(fn)
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
