"""Small value types shared by the builder, the engine and node code (the basics layer).

`MISSING`, `START`/`END`, `Send`, `Command`, `Overwrite`, `Mutation`, the
field markers `Ephemeral`, `RemainingSteps` and `IsLastStep`, and (from `nbgraph.policies`, where
LangGraph's `langgraph.types` has them) `RetryPolicy` and `CachePolicy`, and (from
`nbgraph.errors`, beside the `GraphInterrupt` that carries it) `Interrupt`.

Users import these from `nbgraph.types`, LangGraph's spelling (`langgraph.types`), which adds
the names that need the engine (`interrupt`); the package's own modules import them from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Generic, Literal, NamedTuple, TypeVar

from nbgraph.errors import Interrupt, wrong_argument
from nbgraph.policies import CachePolicy, RetryPolicy

__all__ = [
    "END",
    "MISSING",
    "OVERWRITE_KEY",
    "START",
    "CachePolicy",
    "Command",
    "Ephemeral",
    "EphemeralValue",
    "GraphOutput",
    "Interrupt",
    "IsLastStep",
    "Mutation",
    "Overwrite",
    "RemainingSteps",
    "RetryPolicy",
    "Send",
    "StateSnapshot",
    "StateUpdate",
    "Transient",
    "is_overwrite",
    "overwrite_value",
]

START = "__start__"
END = "__end__"


class _Missing:
    """The single value meaning "no value here" (no old value, no new value)."""

    _instance: ClassVar[_Missing | None] = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __copy__(self) -> _Missing:
        return self

    def __deepcopy__(self, memo: dict) -> _Missing:
        return self

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""What a reducer sees for "no old value" or "no new value"."""


@dataclass(frozen=True, slots=True)
class Send:
    """Run `node` once more in the next superstep, with `arg` as its whole input.

    >>> Send("worker", {"item": 3})
    Send(node='worker', arg={'item': 3})
    """

    node: str
    arg: Any

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Send) and (self.node, self.arg) == (other.node, other.arg)

    def __hash__(self) -> int:
        return hash(self.node)


@dataclass(frozen=True, slots=True)
class Overwrite:
    """Write `value` past the field's reducer, once.

    >>> Overwrite(["fresh"]).value
    ['fresh']
    """

    value: Any
    type: Literal["__overwrite__"] = "__overwrite__"  # (LangGraph's tag of its JSON form)


OVERWRITE_KEY = "__overwrite__"
"""The key of `Overwrite`'s JSON form: a write `{"__overwrite__": value}` to a field with a
reducer is an `Overwrite(value)`, as in LangGraph (to a field without one, a plain dict)."""


def is_overwrite(value: Any) -> bool:
    """Whether a write to a field with a reducer bypasses it: an `Overwrite`, or its JSON
    form `{"__overwrite__": value}` (a dict with that one key).

    >>> is_overwrite(Overwrite([1])), is_overwrite({"__overwrite__": [1]}), is_overwrite([1])
    (True, True, False)
    """
    kind = type(value)
    return kind is Overwrite or (kind is dict and len(value) == 1 and OVERWRITE_KEY in value)


def overwrite_value(value: Any) -> Any:
    """The value an `is_overwrite` write puts in place of the field's value."""
    return value.value if type(value) is Overwrite else value[OVERWRITE_KEY]


N = TypeVar("N")


@dataclass(slots=True)
class Command(Generic[N]):
    """What a node may return to update the state and choose where to go next.

    Args:
        update: writes, applied as if the node had returned them (a dict, a model,
            or a list of `(field, value)` pairs).
        goto: node names, `Send`s, or a mix; they are *added* to the static edges.
        resume: graph input that answers pending interrupts.
        graph: `Command.PARENT` to address the parent graph: the subgraph's run stops and
            the parent's task that ran it takes the command as its output.

    >>> Command(update={"n": 1}, goto="next").goto
    'next'
    """

    update: Any = None
    goto: Any = ()
    resume: Any = None
    graph: str | None = None

    PARENT: ClassVar[str] = "__parent__"

    def __post_init__(self) -> None:
        goto = self.goto
        if goto is None or isinstance(goto, (str, Send)):
            return
        if isinstance(goto, (list, tuple)) and all(isinstance(g, (str, Send)) for g in goto):
            return
        raise wrong_argument("Command(goto=)", "a node name, a Send, or a list of them", goto)

    def goto_targets(self) -> list[str | Send]:
        """The `goto` as a list of node names and `Send`s."""
        goto = self.goto
        if goto is None or goto == ():
            return []
        if isinstance(goto, (str, Send)):
            return [goto]
        return list(goto)


class Mutation:
    """A write that knows how to change one field (the Rust seed's `StateMutation`).

    Subclass it, set `field`, and implement `apply(value) -> new value`. A node returns
    mutations on their own, in a list, or as values in its update dict. The field's
    reducer is not used: the mutation decides. `combine(other)` may fold two
    consecutive mutations of the same field into one (return `None` to refuse).

    >>> class Increment(Mutation):
    ...     def __init__(self, field, by):
    ...         self.field, self.by = field, by
    ...     def apply(self, value):
    ...         return (0 if value is MISSING else value) + self.by
    >>> Increment("count", 2).apply(3)
    5
    """

    field: str = ""

    def apply(self, value: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement apply(value)")

    def combine(self, other: Mutation) -> Mutation | None:
        return None

    def __repr__(self) -> str:
        attrs = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if k != "field")
        return f"{type(self).__name__}({self.field!r}{', ' if attrs else ''}{attrs})"


class Ephemeral:
    """Field marker: `Annotated[T, Ephemeral]` lives for exactly one superstep."""


class Transient:
    """Field marker: `Annotated[T, Transient(factory)]` lives in the running state but is never
    saved in a checkpoint or a run file, nor returned by `invoke`; a restored thread gets a
    fresh `factory()` (the Rust seed's checkpoint projection: caches, clients, handles).

    >>> Transient(dict).factory()
    {}
    """

    def __init__(self, factory: Any = None) -> None:
        if factory is not None and not callable(factory):
            raise TypeError(f"Transient(factory): the factory must be callable, got {factory!r}")
        self.factory = factory

    def __repr__(self) -> str:
        return f"Transient({getattr(self.factory, '__name__', self.factory)!r})"


EphemeralValue = Ephemeral
"""LangGraph's name for `Ephemeral` (`Annotated[T, EphemeralValue]`)."""


class _RemainingStepsMarker:
    """Marks the managed field that counts the supersteps left before the limit."""


RemainingSteps = Annotated[int, _RemainingStepsMarker]
"""A managed, never-stored field: `recursion_limit - current_step`."""


class _IsLastStepMarker:
    """Marks the managed field that says whether this superstep is the last one allowed."""


IsLastStep = Annotated[bool, _IsLastStepMarker]
"""A managed, never-stored field: True in the last superstep the recursion limit allows
(when `RemainingSteps` would be 1), as LangGraph's `langgraph.managed.IsLastStep`."""


class StateSnapshot(NamedTuple):
    """A thread at one checkpoint (`app.get_state(config)`), as LangGraph shapes it."""

    values: dict[str, Any]
    next: tuple[str, ...]
    config: dict[str, Any]
    metadata: dict[str, Any] | None
    created_at: str | None
    parent_config: dict[str, Any] | None
    tasks: tuple[Any, ...] = ()
    interrupts: tuple[Any, ...] = ()


class StateUpdate(NamedTuple):
    """One update of `bulk_update_state`'s supersteps: `values` written as `as_node`
    (`task_id` is accepted, as LangGraph's)."""

    values: dict[str, Any] | None
    as_node: str | None = None
    task_id: str | None = None


@dataclass(frozen=True)
class GraphOutput(Generic[N]):
    """What `invoke`/`ainvoke` return with `version="v2"` (LangGraph's): the final output
    (`value`, in the output schema's own form) and the questions that paused the run.

    `result["__interrupt__"]`, `result[key]` and `key in result` still read as a v1 result
    did, with a `DeprecationWarning` (as LangGraph's).
    """

    value: Any
    interrupts: tuple[Interrupt, ...] = ()

    def __getitem__(self, key: str) -> Any:
        _warn_item_access()
        if key == "__interrupt__":
            return self.interrupts
        if isinstance(self.value, dict):
            return self.value[key]
        try:
            return getattr(self.value, key)
        except AttributeError:
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        _warn_item_access()
        if key == "__interrupt__":
            return bool(self.interrupts)
        if isinstance(self.value, dict):
            return key in self.value
        return isinstance(key, str) and hasattr(self.value, key)


def _warn_item_access() -> None:
    import warnings

    warnings.warn(
        "Reading a GraphOutput as a dict is deprecated: use result.value for the output and "
        "result.interrupts for the questions that paused the run.",
        DeprecationWarning,
        stacklevel=3,
    )
