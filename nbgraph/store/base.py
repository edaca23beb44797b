"""`BaseStore`, the store API LangGraph's nodes use (`put`, `get`, `search`, `delete`,
`list_namespaces` and their async forms), and the `Item`s it returns.

A store keeps JSON-like dicts under `(namespace, key)`; a namespace is a tuple of non-empty
string labels, the first of which may not be `"langgraph"`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Literal, NamedTuple, TypedDict

from nbgraph.errors import NbgraphError

__all__ = [
    "NOT_PROVIDED",
    "BaseStore",
    "GetOp",
    "IndexConfig",
    "InvalidNamespaceError",
    "Item",
    "ListNamespacesOp",
    "MatchCondition",
    "NamespaceMatchType",
    "NamespacePath",
    "Op",
    "PutOp",
    "SearchItem",
    "SearchOp",
    "TTLConfig",
    "batch_order",
    "check_namespace",
    "op_call",
]


class IndexConfig(TypedDict, total=False):
    """A store's semantic index, as LangGraph spells it (`InMemoryStore(index=...)`): `embed`
    (a function from texts to vectors, a langchain `Embeddings`, or a provider string),
    `dims` (the vectors' length), `fields` (the paths of a value to embed)."""

    dims: int
    embed: Any
    fields: list[str] | None


class TTLConfig(TypedDict, total=False):
    """A store's TTLs, as LangGraph spells them (`InMemoryStore(ttl=...)`): `default_ttl`
    (minutes an item lives), `refresh_on_read`, `sweep_interval_minutes`."""

    refresh_on_read: bool
    default_ttl: float | None
    sweep_interval_minutes: int | None


NamespacePath = tuple[str, ...]
"""A namespace, or a pattern of one (`"*"` matches any label)."""

NamespaceMatchType = Literal["prefix", "suffix"]


class GetOp(NamedTuple):
    """`store.get(namespace, key)` as one op of `store.batch`."""

    namespace: tuple[str, ...]
    key: str
    refresh_ttl: bool = True


class SearchOp(NamedTuple):
    """`store.search(namespace_prefix, ...)` as one op of `store.batch`."""

    namespace_prefix: tuple[str, ...]
    filter: dict[str, Any] | None = None
    limit: int = 10
    offset: int = 0
    query: str | None = None
    refresh_ttl: bool = True


class PutOp(NamedTuple):
    """`store.put(namespace, key, value, ...)` as one op of `store.batch` (a None value
    deletes; `ttl` None: the item does not expire)."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any] | None
    index: Literal[False] | list[str] | None = None
    ttl: float | None = None


class MatchCondition(NamedTuple):
    """A namespace pattern `list_namespaces` keeps: its `"prefix"` or its `"suffix"`."""

    match_type: NamespaceMatchType
    path: NamespacePath


class ListNamespacesOp(NamedTuple):
    """`store.list_namespaces(...)` as one op of `store.batch`."""

    match_conditions: tuple[MatchCondition, ...] | None = None
    max_depth: int | None = None
    limit: int = 100
    offset: int = 0


Op = GetOp | SearchOp | PutOp | ListNamespacesOp


class _NotProvided:
    def __repr__(self) -> str:
        return "NOT_PROVIDED"


NOT_PROVIDED: Any = _NotProvided()
"""`put`'s `ttl` when none was given: the store's `default_ttl` (LangGraph's sentinel)."""


class InvalidNamespaceError(NbgraphError, ValueError):
    """A namespace that is empty, or has a label that is not a non-empty string without
    periods, or starts with `"langgraph"`."""


class Item:
    """A stored value with its address and times.

    Attributes:
        value: the stored dict.
        key: its key within the namespace.
        namespace: the namespace, a tuple of labels.
        created_at, updated_at: when it was written (UTC).
    """

    __slots__ = ("created_at", "key", "namespace", "updated_at", "value")

    def __init__(
        self,
        *,
        value: dict[str, Any],
        key: str,
        namespace: Sequence[str],
        created_at: datetime | str,
        updated_at: datetime | str,
    ) -> None:
        self.value = value
        self.key = key
        self.namespace = tuple(namespace)
        self.created_at = _time(created_at)
        self.updated_at = _time(updated_at)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Item):
            return False
        return self.dict() == other.dict()

    def __hash__(self) -> int:
        return hash((self.namespace, self.key))

    def dict(self) -> dict[str, Any]:
        """The item as plain JSON-like values (times as ISO text)."""
        return {
            "namespace": list(self.namespace),
            "key": self.key,
            "value": self.value,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.dict().items())
        return f"Item({shown})"  # (a SearchItem too, as LangGraph shows it)


class SearchItem(Item):
    """An `Item` found by `search`, with its relevance `score` (None: not ranked)."""

    __slots__ = ("score",)

    def __init__(
        self,
        namespace: Sequence[str],
        key: str,
        value: dict[str, Any],
        created_at: datetime | str,
        updated_at: datetime | str,
        score: float | None = None,
    ) -> None:
        super().__init__(
            value=value, key=key, namespace=namespace, created_at=created_at, updated_at=updated_at
        )
        self.score = score

    def dict(self) -> dict[str, Any]:
        return {**super().dict(), "score": self.score}


def _time(value: datetime | str) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def check_namespace(namespace: Any, *, prefix: bool = False) -> tuple[str, ...]:
    """`namespace` as a tuple, checked as LangGraph checks it.

    Raises:
        InvalidNamespaceError: naming the label that is wrong and why.

    >>> check_namespace(["memories", "1"])
    ('memories', '1')
    """
    if isinstance(namespace, str) or not isinstance(namespace, Sequence):
        raise InvalidNamespaceError(
            f"A namespace is a tuple of string labels, like ('memories', user_id); "
            f"got {namespace!r}."
        )
    namespace = tuple(namespace)
    if not namespace and not prefix:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"Invalid namespace label {label!r} found in {namespace}. Namespace labels "
                f"must be strings, but got {type(label).__name__}."
            )
        if not label or "." in label or "\x00" in label:
            raise InvalidNamespaceError(
                f"Invalid namespace label {label!r} found in {namespace}. Namespace labels "
                "must be non-empty and cannot contain periods ('.') or NUL bytes."
            )
    if namespace and namespace[0] == "langgraph" and not prefix:
        raise InvalidNamespaceError(
            f'Root label for namespace cannot be "langgraph". Got: {namespace}'
        )
    return namespace


class BaseStore(ABC):
    """What a store does; subclasses implement the five operations, the async forms call
    them."""

    @abstractmethod
    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """The item at `(namespace, key)`, or None."""

    @abstractmethod
    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Items under `namespace_prefix` whose values match `filter`."""

    @abstractmethod
    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        index: Any = None,
        *,
        ttl: Any = NOT_PROVIDED,
    ) -> None:
        """Store `value` at `(namespace, key)`, replacing what was there; `index`: which of
        its fields a store with an index embeds (False: none); `ttl`: minutes it lives."""

    @abstractmethod
    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Remove the item at `(namespace, key)` (nothing happens if there is none)."""

    @abstractmethod
    def list_namespaces(
        self,
        *,
        prefix: Sequence[str] | None = None,
        suffix: Sequence[str] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """The namespaces that hold items, sorted, filtered by prefix/suffix."""

    async def aget(self, namespace: tuple[str, ...], key: str, **kwargs: Any) -> Item | None:
        return self.get(namespace, key, **kwargs)

    async def asearch(
        self, namespace_prefix: tuple[str, ...], /, **kwargs: Any
    ) -> list[SearchItem]:
        return self.search(namespace_prefix, **kwargs)

    async def aput(
        self, namespace: tuple[str, ...], key: str, value: dict[str, Any], *args: Any, **kwargs: Any
    ) -> None:
        self.put(namespace, key, value, *args, **kwargs)

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        self.delete(namespace, key)

    async def alist_namespaces(self, **kwargs: Any) -> list[tuple[str, ...]]:
        return self.list_namespaces(**kwargs)

    # --- LangGraph's batch of ops ----------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Any]:
        """Run a batch of ops (`GetOp`, `SearchOp`, `PutOp`, `ListNamespacesOp`) as
        LangGraph's stores do: the reads first, in order, on the store as it was before the
        batch, then the puts (the last one of each key); the results in the ops' order
        (None for a put)."""
        ops = list(ops)
        results: list[Any] = [None] * len(ops)
        for index, op in batch_order(ops):
            method, args, kwargs = op_call(op)
            result = getattr(self, method)(*args, **kwargs)
            if index is not None:
                results[index] = result
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Any]:
        """`batch`, awaitable: each op through the awaitable methods."""
        ops = list(ops)
        results: list[Any] = [None] * len(ops)
        for index, op in batch_order(ops):
            method, args, kwargs = op_call(op)
            result = await getattr(self, "a" + method)(*args, **kwargs)
            if index is not None:
                results[index] = result
        return results


def batch_order(ops: list[Any]) -> list[tuple[int | None, Any]]:
    """The order a batch runs in: `(index, op)` of each read, then `(None, put)` of the last
    put of each `(namespace, key)`."""
    reads = [(index, op) for index, op in enumerate(ops) if not isinstance(op, PutOp)]
    puts: dict[tuple[Any, str], PutOp] = {}
    for op in ops:
        if isinstance(op, PutOp):
            puts[(tuple(op.namespace), op.key)] = op
    return [*reads, *((None, op) for op in puts.values())]


def op_call(op: Any) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    """The store method (and its arguments) an op of `batch` stands for.

    Raises:
        TypeError: not one of the four ops.
    """
    if isinstance(op, GetOp):
        return "get", (op.namespace, op.key), {"refresh_ttl": op.refresh_ttl}
    if isinstance(op, SearchOp):
        options = {"filter": op.filter, "limit": op.limit, "offset": op.offset}
        return (
            "search",
            (op.namespace_prefix,),
            {**options, "query": op.query, "refresh_ttl": op.refresh_ttl},
        )
    if isinstance(op, PutOp):
        return "put", (op.namespace, op.key, op.value, op.index), {"ttl": op.ttl}
    if isinstance(op, ListNamespacesOp):
        kinds = {"prefix": None, "suffix": None}
        for condition in op.match_conditions or ():
            kinds[condition.match_type] = condition.path
        options = {"max_depth": op.max_depth, "limit": op.limit, "offset": op.offset}
        return "list_namespaces", (), {**kinds, **options}
    raise TypeError(
        f"store.batch: {op!r} is not an op; expected GetOp, SearchOp, PutOp or ListNamespacesOp."
    )
