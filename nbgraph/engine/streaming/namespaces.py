"""Namespaces: where a graph run inside a node sits, and `stream(..., subgraphs=True)`.

LangGraph names the place of every run by its checkpoint namespace: `()` for the graph the
caller runs, `("node:<task id>",)` for a graph run inside node `node` (added as the node,
or invoked by the node's function), deeper for deeper graphs
(`("outer:<id>", "inner:<id>")`). The task id is the id of the parent task that ran it,
the one `stream_mode="tasks"` reports and the node's `config["configurable"]
["checkpoint_ns"]` ends with (that config joins the whole path with `|`).

A run started inside a node takes its namespace from the calling task (its `caller`, kept as
it starts: `engine.core.nesting`). When the caller streams, every task of the run carries
the stream's `_Relay` (on its writer), so a graph run inside the task finds it: with
`subgraphs=True` the inner run streams the caller's modes and hands each chunk to the
caller's queue with its namespace, as it comes (custom and messages chunks the moment they
are written, the others as the inner run yields them): the caller reads them in the order
LangGraph interleaves them, an inner run's chunks before the `updates` of the task that ran
it. With `subgraphs=False` only the chat model handler is shared, and it sends nothing from
inside (as LangGraph: a subgraph's tokens are not streamed; the message the node returns is).

Nothing here runs for `invoke()` outside a streamed run: a run pays a context variable read
(the writer's relay); its namespace is worked out only if asked for.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from nbgraph.engine.core.loop import Hooks
from nbgraph.engine.core.nesting import NS_SEP, namespace_of
from nbgraph.engine.streaming.streams import LIVE_MODES, LiveSink

__all__ = [
    "SKIP",
    "Nested",
    "aforward",
    "forward",
    "graph_namespace",
    "inherit_relay",
    "namespaced",
    "open_relay",
    "scope_sink",
    "with_namespaces",
]


class Nested:
    """A chunk of a run inside a node, on its way to the caller: its namespace and chunk."""

    __slots__ = ("chunk", "ns")

    def __init__(self, ns: tuple[str, ...], chunk: Any) -> None:
        self.ns, self.chunk = ns, chunk

    def __repr__(self) -> str:
        return f"Nested({self.ns!r}, {self.chunk!r})"


class _Relay:
    """What a streamed run hands the graphs run inside its tasks.

    Attributes:
        modes: the caller's stream modes.
        subgraphs: whether the caller streams the inner runs' chunks (`subgraphs=True`).
        sink: the caller's queue (the outermost run's `LiveSink`).
        chat: the outermost run's chat model handler (messages mode), shared by every run
            inside, so a message is sent once however deep it was seen.
        root: the outermost run (the one the caller streams); `base`, the length of its
            namespace (namespaces are streamed relative to it).
        outer: when `root` itself runs inside a node of a run streamed with
            `subgraphs=True` (a node calling `sub.stream(...)`), that stream's relay: it
            gets `root`'s chunks in its modes too, as in LangGraph (a custom chunk goes to
            one caller: to `outer` only if `root`'s own caller did not ask for custom).
            `asked` and `asked_subgraphs` are then what `root`'s own caller asked for;
            `modes` and `subgraphs` what the run streams for both.
    """

    __slots__ = (
        "asked", "asked_subgraphs", "base", "chat", "modes", "outer", "root", "sink",
        "subgraphs",
    )  # fmt: skip

    def __init__(
        self, root: Any, modes: frozenset[str], subgraphs: bool, outer: _Relay | None = None
    ) -> None:
        self.root, self.asked, self.asked_subgraphs, self.outer = root, modes, subgraphs, outer
        self.modes = modes | outer.modes if outer is not None else modes
        self.subgraphs = subgraphs or outer is not None
        self.base = len(namespace_of(root))
        self.sink: LiveSink | None = None
        self.chat: Any = None

    def ns(self, run: Any) -> tuple[str, ...]:
        """`run`'s namespace as the caller sees it (relative to the outermost run)."""
        return namespace_of(run)[self.base :]

    def inner_modes(self) -> frozenset[str]:
        """The modes a run inside streams: the caller's with `subgraphs=True`; else only
        `messages` (its nodes run under the shared handler, which sends none of theirs)."""
        if self.subgraphs:
            return self.modes
        return self.modes & {"messages"}


class _ForwardSink(LiveSink):
    """An inner run's queue: its tasks' custom chunks go on to the caller's queue at once,
    under the run's namespace; the tasks it waits for stay on its own queue."""

    def __init__(self, modes: frozenset[str], outer: LiveSink, ns: tuple[str, ...]) -> None:
        super().__init__(modes)
        self.outer, self.ns = outer, ns

    def put(self, mode: str, chunk: Any) -> None:
        self.outer.put(mode, Nested(self.ns, chunk))


def graph_namespace(metadata: dict[str, Any]) -> tuple[str, ...]:
    """The namespace of the run a task's metadata belongs to (its checkpoint namespace
    without the task's own part)."""
    return tuple(str(metadata.get("langgraph_checkpoint_ns", "")).split(NS_SEP))[:-1]


def open_relay(run: Any, modes: frozenset[str], subgraphs: bool) -> _Relay:
    """Start streaming `run` for a caller: its tasks hand `_Relay(modes, subgraphs)` on.
    Returns the relay; its `modes` are the modes to run with."""
    outer = None
    caller = run.caller
    if caller is not None:  # (a node streams a graph itself)
        relay = caller.relay
        if relay is not None and relay.subgraphs and relay.sink is not None:
            outer = relay
    relay = _Relay(run, modes, subgraphs, outer)
    run.hook(Hooks(relay=relay))
    return relay


def inherit_relay(run: Any) -> frozenset[str]:
    """For a run started inside a node of a streamed run: take that stream's relay, and
    return the modes this run streams (nothing when the caller does not stream)."""
    caller = run.caller  # (asked once, as the run started: engine.core.nesting)
    relay = caller.relay if caller is not None else None
    if relay is None or (relay.sink is None and relay.chat is None):
        return _NONE
    run.hook(Hooks(relay=relay))
    return relay.inner_modes()


_NONE: frozenset[str] = frozenset()


def forward(run: Any, chunks: Iterator[tuple[str, Any]], shape: Callable | None) -> None:
    """Run an inner run's `chunks` to the end, handing each to the caller's queue under
    the run's namespace (chunks already nested, from deeper runs, as they are)."""
    relay = run.relay
    ns, sink = relay.ns(run), relay.sink if relay.subgraphs else None
    for mode, chunk in chunks:
        if sink is not None:
            sink.put(mode, _nested(ns, mode, chunk, shape))


async def aforward(
    run: Any, chunks: AsyncIterator[tuple[str, Any]], shape: Callable | None
) -> None:
    """`forward` for an inner run on the event loop."""
    relay = run.relay
    ns, sink = relay.ns(run), relay.sink if relay.subgraphs else None
    async for mode, chunk in chunks:
        if sink is not None:
            sink.put(mode, _nested(ns, mode, chunk, shape))


def _nested(ns: tuple[str, ...], mode: str, chunk: Any, shape: Callable | None) -> Nested:
    if type(chunk) is Nested:
        return chunk
    return Nested(ns, shape(mode, chunk) if shape is not None else chunk)


def scope_sink(run: Any, modes: frozenset[str]) -> LiveSink | None:
    """The queue a `StreamScope` gives its run's tasks: the caller's own `LiveSink` (made
    here, and kept on the relay, for the outermost run); for an inner run, a
    `_ForwardSink` onto it when the run streams custom or messages chunks."""
    relay = getattr(run, "relay", None)
    live = modes & LIVE_MODES
    if relay is None:
        return LiveSink(modes) if live else None
    if relay.root is run:
        if live or relay.subgraphs:
            relay.sink = LiveSink(modes)
        return relay.sink
    if live and relay.sink is not None:
        return _ForwardSink(modes, relay.sink, relay.ns(run))
    return None


SKIP = object()
"""What `namespaced` returns for a chunk the caller did not ask for."""


def with_namespaces(
    run: Any, chunks: Iterator[tuple[str, Any]], shape: Callable | None, single: bool
) -> Iterator[Any]:
    """The outermost run's chunks as `stream(subgraphs=...)` yields them (see
    `namespaced`)."""
    for mode, chunk in chunks:
        shown = namespaced(run, mode, chunk, shape, single)
        if shown is not SKIP:
            yield shown


def namespaced(run: Any, mode: str, chunk: Any, shape: Callable | None, single: bool) -> Any:
    """One chunk of the outermost run as its caller gets it: `(namespace, chunk)`, or
    `(namespace, mode, chunk)` for a list of modes, with `subgraphs=True`; as without
    namespaces otherwise. Handed to the relay's `outer` stream too, in its modes; `SKIP`
    when the run streams it only for that one."""
    if type(chunk) is Nested:
        ns, chunk = chunk.ns, chunk.chunk
    else:
        ns = ()
        if shape is not None:
            chunk = shape(mode, chunk)
    relay = run.relay
    outer = relay.outer
    to_outer = outer is not None and mode in outer.modes
    if to_outer and (mode != "custom" or mode not in relay.asked):  # (custom: to one)
        outer.sink.put(mode, Nested((*outer.ns(run), *ns), chunk))
    if not relay.asked_subgraphs:
        return SKIP if ns or mode not in relay.asked else chunk if single else (mode, chunk)
    if mode not in relay.asked:
        return SKIP
    return (ns, chunk) if single else (ns, mode, chunk)
