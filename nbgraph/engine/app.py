"""`CompiledGraph`: the engine's runnable graph — invoke, stream, their async forms, and the
thread's checkpoints (get_state, its history, update_state). Each run's `RunLog` is kept in
`last_log`; `nbgraph.CompiledStateGraph` (the notebook layer) adds `run()`, `last_run` and
the drawings on top.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any

from nbgraph.blueprint import GraphSpec
from nbgraph.engine.branches.run import BranchLoop
from nbgraph.engine.core.caching import clear_node_cache
from nbgraph.engine.core.config import run_config
from nbgraph.engine.core.loop import DEFAULT_RECURSION_LIMIT, RunLoop
from nbgraph.engine.core.nesting import caller_now
from nbgraph.engine.core.node_context.runtime import coerce_context, inherited
from nbgraph.engine.core.root_state import root_chunks, root_output
from nbgraph.engine.core.runlog import RunLog
from nbgraph.engine.drive import STREAM_MODES, adrive, drive
from nbgraph.engine.nested.checkpoints import inherited_thread, refuse_root_true
from nbgraph.engine.nested.states import held_tasks, named_thread, with_subgraph_states
from nbgraph.engine.nested.subruns import keep_subrun, pass_pause_up
from nbgraph.engine.persistence.durability import durability_of, finish
from nbgraph.engine.persistence.history_snapshots import blocks, history_snapshots
from nbgraph.engine.persistence.listing import ThreadStates as ThreadStates  # (saver.list())
from nbgraph.engine.persistence.persist import Thread
from nbgraph.engine.persistence.snapshots import (
    checkpoint_config,
    last_writer,
    start_empty,
    state_snapshot,
    write_as_nodes,
)
from nbgraph.engine.runnable import RunnableHabits, refuse_non_saver
from nbgraph.engine.streaming.namespaces import (
    SKIP,
    aforward,
    forward,
    inherit_relay,
    namespaced,
    open_relay,
    with_namespaces,
)
from nbgraph.engine.streaming.parts import (
    aoutput_of,
    aparts_of,
    aprinted,
    check_version,
    chunk_shape,
    output_keys_of,
    output_of,
    parts_of,
    printed,
    wants_chunks,
)
from nbgraph.engine.streaming.streams import callbacks_inside_node
from nbgraph.errors import (
    CheckpointFileError,
    InvalidArgumentError,
    InvalidUpdateError,
    check_names,
    wrong_argument,
)
from nbgraph.primitives import START, StateSnapshot

__all__ = ["CompiledGraph"]


class CompiledGraph(RunnableHabits):
    """A checked graph, ready to run. Every run is logged; the latest log is `last_log`
    (`nbgraph.CompiledStateGraph` adds `last_run`, its record).

    Each call (`invoke`, `stream`, their async forms) logs its own run: calls from several
    threads, or a node that runs this same graph, never share a log.

    Attributes:
        spec: the frozen graph (nodes, edges, fields) the drawings read.
        last_log: the `RunLog` of the run that most recently started or finished, or None.
    """

    def __init__(
        self,
        spec: GraphSpec,
        *,
        checkpointer: Any = None,
        name: str = "",
        store: Any = None,
        context_schema: Any = None,
    ) -> None:
        refuse_non_saver(checkpointer)
        self.spec = spec
        self.name = name
        self.builder: Any = None  # (the `StateGraph` compiled, set by the notebook layer)
        self.checkpointer = checkpointer
        self.store = store
        self.context_schema = context_schema
        self.last_log: RunLog | None = None
        self._last_run: Any = None  # (the notebook layer's record of the latest run)
        self.stream_mode = "updates"

    def __repr__(self) -> str:
        return f"<CompiledStateGraph {self.name!r}: {_nodes_text(len(self.spec.nodes))}>"

    # --- checkpoints -------------------------------------------------------------------------

    def clear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Drop the node cache's entries of these nodes (all if None); see `compile(cache=)`.

        Raises:
            ValueError: the graph was compiled without `cache=`.
        """
        clear_node_cache(self.spec, nodes)

    async def aclear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """`clear_cache`, awaitable."""
        clear_node_cache(self.spec, nodes)

    def _thread(self, config: dict[str, Any] | None, strict: bool = False) -> Thread:
        """The thread `config` names (a subgraph's, with a `checkpoint_ns`; `strict`: an
        unknown subgraph raises instead of reading as an empty thread)."""
        refuse_root_true(self)
        if config is not None and not isinstance(config, Mapping):
            raise InvalidArgumentError(
                "config must be a dict like {'configurable': {'thread_id': '1'}}, got "
                f"{type(config).__name__} {str(config)[:40]!r}."
            )
        if self.checkpointer is None or isinstance(self.checkpointer, bool):
            raise ValueError(
                "This graph has no checkpointer: compile(checkpointer=MemorySaver()) to keep "
                "threads that get_state can read (a subgraph's are read through its parent)."
            )
        config = dict(config or {})
        return named_thread(self, config, strict) or Thread(self.checkpointer, self.spec, config)

    def get_state(self, config: dict[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
        """The thread at its latest checkpoint (or `configurable.checkpoint_id`'s: then, as
        LangGraph, the checkpoint as recorded, without the writes of tasks that finished in
        its step since).

        `values` is the full state, `next` the nodes that run when the thread resumes. A
        thread without checkpoints (new, or deleted) has LangGraph's empty snapshot: no
        values, nothing next, `metadata` None. A `checkpoint_ns` in the config reads a
        subgraph's thread; a subgraph task's `state` is the config of its thread, or with
        `subgraphs=True` its snapshot (see `engine.subgraph_states`).
        """
        thread = self._thread(config)
        restored = thread.restore()
        if restored is None:
            return StateSnapshot({}, (), config, None, None, None)
        current = not (config.get("configurable") or {}).get("checkpoint_id")  # (LangGraph's)
        snapshot = state_snapshot(thread.spec, thread, restored, current=current)
        return with_subgraph_states(thread, snapshot, subgraphs, held_tasks(restored))

    def get_state_history(
        self,
        config: dict[str, Any],
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[StateSnapshot]:
        """Every checkpoint of the thread, newest first (step numbers continue across runs).

        As LangGraph's: `filter` keeps those whose metadata has each of its items, `before`
        (a checkpoint's config) those older than that checkpoint, `limit` at most that many.
        """
        _check_history_arguments(filter, before, limit)
        snapshots = history_snapshots(self._thread(config), with_subgraph_states)
        for block in blocks(snapshots, filter, before, limit):  # (the collector paused)
            yield from block

    def update_state(
        self, config: dict[str, Any], values: Any, as_node: str | None = None
    ) -> dict[str, Any]:
        """Write `values` to the thread as if `as_node` had returned them; return the new
        checkpoint's config.

        The values go through the reducers, and `as_node`'s edges and routers decide what runs
        next. On a past checkpoint (`configurable.checkpoint_id`) this forks the thread: the
        new checkpoint grows from that one, and `invoke(None, new_config)` continues the fork.

        Without `as_node`, the node whose task made the checkpoint is used (START at an input
        checkpoint), as LangGraph does.

        Raises:
            ValueError: no checkpointer, an empty thread, or a `checkpoint_ns` that names
                no subgraph (a subgraph's thread is updated through its parent, with its
                task's `state` config).
            InvalidUpdateError: an unknown `as_node` (LangGraph's class), or no `as_node`
                and several nodes made the checkpoint.
        """
        return self._write_step(config, [(values, as_node)])

    def bulk_update_state(
        self, config: dict[str, Any], supersteps: Sequence[Sequence[Any]]
    ) -> dict[str, Any]:
        """Several `update_state`s: each superstep's updates (`(values, as_node)` or
        `(values, as_node, task_id)`) written together as one checkpoint, the supersteps
        one after another; the last checkpoint's config.

        Raises:
            ValueError: no supersteps, or a superstep without updates.
        """
        if (
            isinstance(supersteps, (str, bytes))
            or not isinstance(supersteps, Sequence)
            or any(
                isinstance(updates, (str, bytes)) or not isinstance(updates, Sequence)
                for updates in supersteps
            )
        ):
            raise wrong_argument(
                "bulk_update_state(config, supersteps)",
                "a list of supersteps, each a list of (values, as_node) updates",
                supersteps,
            )
        if len(supersteps) == 0:
            raise ValueError("No supersteps provided")
        if any(len(updates) == 0 for updates in supersteps):
            raise ValueError("No updates provided")
        for updates in supersteps:
            pairs = [(update[0], update[1] if len(update) > 1 else None) for update in updates]
            config = self._write_step(config, pairs)
        return config

    async def abulk_update_state(
        self, config: dict[str, Any], supersteps: Sequence[Sequence[Any]]
    ) -> dict[str, Any]:
        """`bulk_update_state`, awaitable."""
        return await asyncio.to_thread(self.bulk_update_state, config, supersteps)

    def _write_step(
        self, config: dict[str, Any], updates: Sequence[tuple[Any, str | None]]
    ) -> dict[str, Any]:
        """`update_state`'s one checkpoint: each `(values, as_node)` written as its node in
        one step (`bulk_update_state` writes a superstep's updates so)."""
        thread = self._thread(config, strict=True)
        spec = thread.spec
        restored = thread.restore()
        if any(as_node == COPY for _, as_node in updates):  # (LangGraph's fork of a checkpoint)
            return _copied(thread, restored, len(updates))
        if restored is None and (thread.ns or spec.semantics == "branches"):
            raise ValueError(
                f"Thread {thread.root_id!r}{f' (checkpoint_ns {thread.ns!r})' if thread.ns else ''}"
                " has no checkpoint to update; run it first."
            )
        first = START if restored is None else None  # (an empty thread: written as START)
        restored = _before_commands(restored)
        writes = [(as_node or first or last_writer(restored), v) for v, as_node in updates]
        for (node, _), (_, given) in zip(writes, updates, strict=True):
            if node not in spec.nodes and node != START:
                if given is None:  # (read from the thread: another graph's, or a damaged file)
                    raise CheckpointFileError(
                        f"Thread {thread.root_id!r}'s last checkpoint was written by node "
                        f"{node!r}, which this graph does not have (nodes: {list(spec.nodes)}): "
                        "the thread was made by another graph or its file is damaged; pass "
                        "as_node=."
                    )
                raise InvalidUpdateError(  # (LangGraph's class and first words)
                    f"Node {node} does not exist: as_node={node!r} is not a node of this "
                    f"graph; nodes: {list(spec.nodes)}."
                )
        merged = {"recursion_limit": DEFAULT_RECURSION_LIMIT, "configurable": {}}
        merged.update(config)
        run = _loop_class(spec)(spec, merged, thread)
        with self._claimed(run):  # (LangGraph: source "update", on a past checkpoint too)
            _start_update(run, restored)
            write_as_nodes(run, writes, due=restored.control["pull"] if restored else {})
        return checkpoint_config(thread.root_id, thread.ns, thread.head, thread.parents)

    # --- running ---------------------------------------------------------------------------

    def _start(self, config: dict[str, Any] | None, kwargs: dict[str, Any]) -> RunLoop:
        caller = caller_now(self.checkpointer is True, starts=True)  # (a run inside a node:
        # asked once, here; engine.core.nesting)
        config, context, store, nested = inherited(
            config if self._bound_config is None else self._with_bound(config),
            kwargs.pop("context", None),
            self.store,
            caller,
        )  # (with_config's first; a graph run inside a node inherits that node's context)
        merged = run_config(config, kwargs)
        if caller is not None and caller.run.observer is not None and not merged.get("callbacks"):
            merged["callbacks"] = callbacks_inside_node()  # (a run with chain runs: the node's)
        durability = durability_of(kwargs)
        before, after = kwargs.pop("interrupt_before", None), kwargs.pop("interrupt_after", None)
        if before is not None or after is not None:  # (the common case: no call at all)
            check_names("invoke(interrupt_before=)", before)
            check_names("invoke(interrupt_after=)", after)
        caller = nested  # (None for a call inside a node naming a thread or checkpoint of its
        # own: a run of its own; `inherited` asks, once. Below: the keys its chunks show)
        saver = self.checkpointer
        if caller is not None:  # a subgraph: its parent's saver or None (own too, as LangGraph's)
            thread = None if caller.env.run.thread is None else inherited_thread(self, caller)
        elif saver is None or saver is False:  # a plain run: none
            thread = None
        elif saver is True:  # (refused outside a node)
            thread = refuse_root_true(self)
        else:
            thread = Thread(saver, self.spec, merged)
            thread.defer(durability if self.spec.semantics != "branches" else "sync")
        keys = output_keys_of(self.spec, kwargs) if "output_keys" in kwargs else None
        context = None if context is None else coerce_context(self.context_schema, context)
        loop = BranchLoop if self.spec.semantics == "branches" else RunLoop  # (`_loop_class`)
        run = loop(self.spec, merged, thread, caller, store=store, context=context, keys=keys)
        if before or after:
            run.breakpoints(before, after)
        self.last_log = run.log
        if caller is not None:  # a graph run inside a node: its log goes on that task
            keep_subrun(run)
        return run

    def _running(self, run: RunLoop) -> Any:
        """Hold the run's thread id for the whole run (a second run of it is refused); when
        the run ends, however it ends, it becomes the latest run again (`_claimed_run`; a
        run without a thread has nothing to claim or finish: `_LatestRun`)."""
        return _LatestRun(self, run) if run.thread is None else _claimed_run(self, run)

    def _claimed(self, run: RunLoop) -> Any:
        """Hold the run's thread id for the whole run (a second run of it is refused)."""
        if run.thread is None:
            return contextlib.nullcontext()
        return run.thread.saver.claim(run.thread.thread_id)

    def invoke(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """Run the graph to the end and return the final state (output schema applied).

        Args:
            input: the initial values (dict or model of the input schema).
            config: `{"recursion_limit": int, "max_concurrency": int, "configurable": {...}}`.
            **kwargs: `stream_mode=` (not `"values"`: the chunks), `version="v2"` (a
                `GraphOutput`), `output_keys=`, as LangGraph's (`engine.streaming.parts`).

        Raises:
            GraphRecursionError: more supersteps than `recursion_limit`.
            EmptyInputError: `input` is None.
            InvalidUpdateError: a node returned something the state cannot take.
            Exception: whatever a node raised, with a note naming the node and step.
        """
        if kwargs and wants_chunks(kwargs):  # (read from what `stream` yields, as LangGraph's)
            return output_of(self.stream, input, config, kwargs)
        run = self._start(config, kwargs)
        caller = run.caller  # (the modes of a streamed caller's relay)
        modes = inherit_relay(run) if caller is not None and caller.relay is not None else _NO_MODES
        with self._running(run):
            if modes:  # (inside a node of a streamed run: its chunks go to that stream)
                forward(run, drive(run, input, modes, self.name), root_chunks(self.spec))
            else:
                for _ in drive(run, input, modes, self.name):  # (warnings point at the caller)
                    pass
        run.release()  # (it ended without raising: nothing runs in it any more)
        if caller is not None and (run.paused or run.at_breakpoint):  # (a question inside
            pass_pause_up(run)  # pauses the calling task too)
        return _with_interrupts(run)

    def stream(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        stream_mode: str | Sequence[str] | None = None,
        version: str = "v1",
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Run the graph, yielding as it goes.

        Args:
            stream_mode: `"updates"` (default: `{node: writes}` per task as it finishes),
                `"values"` (the full state after each step, from step 0), `"debug"` (typed
                events), `"custom"` (what nodes write with `get_stream_writer()`, as they
                write it), `"messages"` (`(message, metadata)` pairs from langchain chat
                models called in nodes, and messages nodes return; needs langchain_core),
                `"tasks"` (each task's start and result, in LangGraph's shape),
                `"checkpoints"` (each checkpoint the run saves, as `get_state()` shows it, in
                LangGraph's dict shape; only with a checkpointer), or a list of them (then
                `(mode, chunk)` pairs are yielded).
            subgraphs: also stream the chunks of the graphs run inside nodes (subgraphs, and
                graphs a node's function invokes), each chunk as `(namespace, chunk)` or
                `(namespace, mode, chunk)`, LangGraph's namespaces (`()` for this graph,
                `("node:<task id>",)` for a graph run inside node `node`, deeper for deeper
                graphs; see `nbgraph.engine.streaming.namespaces`).
            version: `"v2"`: each chunk as LangGraph's `StreamPart` dict, `{"type": mode,
                "ns": namespace, "data": chunk}` (`nbgraph.engine.streaming.parts`).
        """
        if check_version(version) == "v2" or kwargs.get("print_mode"):
            show = parts_of if version == "v2" else printed
            yield from show(self, input, config, stream_mode, kwargs)
            return
        run, relay, shape, single = _open_stream(self, config, stream_mode, kwargs)
        with (
            self._running(run),
            contextlib.closing(drive(run, input, relay.modes, self.name)) as chunks,
        ):
            if relay.subgraphs:  # (closed before the claim goes, if the caller stops)
                yield from with_namespaces(run, chunks, shape, single)
            else:
                for mode, chunk in chunks:
                    if shape is not None:
                        chunk = shape(mode, chunk)
                    yield chunk if single else (mode, chunk)
        if run.caller is not None:  # (a question inside pauses the calling task too)
            pass_pause_up(run)

    async def ainvoke(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """`invoke` on the event loop: `async def` nodes are awaited, sync ones use threads."""
        if kwargs and wants_chunks(kwargs):
            return await aoutput_of(self.astream, input, config, kwargs)
        run = self._start(config, kwargs)
        caller = run.caller  # (the modes of a streamed caller's relay)
        modes = inherit_relay(run) if caller is not None and caller.relay is not None else _NO_MODES
        with self._running(run):
            if modes:  # (inside a node of a streamed run: its chunks go to that stream)
                await aforward(run, adrive(run, input, modes, self.name), root_chunks(self.spec))
            else:
                async for _ in adrive(run, input, frozenset(), self.name):
                    pass
        run.release()  # (it ended without raising: nothing runs in it any more)
        if caller is not None and (run.paused or run.at_breakpoint):  # (a question inside
            pass_pause_up(run)  # pauses the calling task too)
        return _with_interrupts(run)

    async def astream(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        stream_mode: str | Sequence[str] | None = None,
        version: str = "v1",
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """`stream` on the event loop (`subgraphs=True` and `version="v2"` too)."""
        if check_version(version) == "v2" or kwargs.get("print_mode"):
            show = aparts_of if version == "v2" else aprinted
            async for part in show(self, input, config, stream_mode, kwargs):
                yield part
            return
        run, relay, shape, single = _open_stream(self, config, stream_mode, kwargs)
        with self._running(run):
            chunks = adrive(run, input, relay.modes, self.name)
            try:
                async for mode, chunk in chunks:
                    if relay.subgraphs:
                        shown = namespaced(run, mode, chunk, shape, single)
                        if shown is not SKIP:
                            yield shown
                        continue
                    if shape is not None:
                        chunk = shape(mode, chunk)
                    yield chunk if single else (mode, chunk)
            finally:  # the caller stopped early: end the run before the claim goes
                await chunks.aclose()
        if run.caller is not None:  # (a question inside pauses the calling task too)
            pass_pause_up(run)


@contextlib.contextmanager
def _claimed_run(app: CompiledGraph, run: RunLoop) -> Iterator[None]:
    """`CompiledGraph._running` for a run with a thread. A run stopped before its nodes
    ended (a second Ctrl-C) keeps the claim until they have: a resume meanwhile is refused
    rather than run alongside them."""
    try:
        with contextlib.ExitStack() as claim:
            claim.enter_context(app._claimed(run))
            try:
                yield
            finally:
                if run.thread is not None and not run.thread.ns:  # (not a subgraph's)
                    _finish_thread(run)  # (durability: what waits is written now)
                if run.unsettled is not None:
                    _release_later(run.unsettled, claim.pop_all())
    finally:
        app.last_log = run.log


class _LatestRun:
    """`CompiledGraph._running` for a run without a thread, nothing to claim or finish (a
    plain run, and most runs inside a node): when the run ends, however it ends, it becomes
    the latest run again. (A class: no generator, `ExitStack` or `nullcontext` to make.)"""

    __slots__ = ("app", "run")

    def __init__(self, app: CompiledGraph, run: RunLoop) -> None:
        self.app, self.run = app, run

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        self.app.last_log = self.run.log


def _finish_thread(run: RunLoop) -> None:
    """Write what the run's thread holds back; a write the saver refuses fails the run.

    A run that ended well (finished or paused) becomes failed with the saver's error, which
    is raised. A run that failed already keeps its own error, which is propagating: the
    saver's, if another, is added to it as a note.
    """
    try:
        finish(run.thread)
    except BaseException as error:
        log = run.log
        if log.status != "failed" or log.error is None:
            log.status, log.error = "failed", error
            raise
        if error is not log.error:
            log.error.add_note(f"Its checkpoints could not all be saved: {error!r}")


def _release_later(wait: Callable[[], object], claim: contextlib.ExitStack) -> None:
    """Release `claim` once `wait()` returns, from a thread of its own."""

    def settle() -> None:
        try:
            wait()
        finally:
            claim.close()

    threading.Thread(target=settle, name="nbgraph-settle", daemon=True).start()


_NO_MODES: frozenset[str] = frozenset()


COPY = "__copy__"
"""`update_state(config, None, as_node=COPY)` copies the checkpoint (LangGraph's constant)."""


def _copied(thread: Thread, restored: Any, count: int) -> dict[str, Any]:
    """`update_state`'s `as_node="__copy__"`: the checkpoint copied as its sibling
    (`Thread.copy`), alone in its superstep; the copy's config.

    Raises:
        InvalidUpdateError: no checkpoint to copy, or other updates in the same superstep.
    """
    if restored is None:
        raise InvalidUpdateError(
            f"update_state(as_node='__copy__'): thread {thread.root_id!r} has no checkpoint "
            "to copy (Cannot copy a non-existent checkpoint); run it first."
        )
    if count > 1:
        raise InvalidUpdateError(
            "as_node='__copy__' copies a checkpoint and takes no other update in its superstep "
            f"(got {count}; Cannot copy checkpoint with multiple updates): put the updates in "
            "a superstep of their own after it (bulk_update_state)."
        )
    with thread.saver.claim(thread.thread_id):
        checkpoint_id = thread.copy(restored)
    return checkpoint_config(thread.root_id, thread.ns, checkpoint_id, thread.parents)


def _before_commands(restored: Any) -> Any:
    """A checkpoint as `update_state` writes on it: without the update of a `Command` kept
    pending there (LangGraph's update starts from the checkpoint's own values)."""
    if restored is None or restored.base is None:
        return restored
    return dataclasses.replace(restored, values=restored.base)


def _start_update(run: RunLoop, restored: Any) -> None:
    """Start `update_state`'s run: from nothing on an empty thread (LangGraph: the thread's
    first checkpoint is the update), else from `restored`, keeping what waits there."""
    if restored is None:
        start_empty(run)
        return
    run.resume(restored, keep_next=False)  # (a branch run: its lineages merged)
    if run.spec.semantics == "supersteps":  # (LangGraph's deferred and barrier channels)
        run.schedule.keep_waiting(restored.control)


def _loop_class(spec: GraphSpec) -> type[RunLoop]:
    """The state machine for the graph's semantics: supersteps, or branch lineages."""
    return BranchLoop if spec.semantics == "branches" else RunLoop


def _with_interrupts(run: RunLoop) -> dict[str, Any]:
    """`invoke`'s result: the output, and what the run is waiting for if it paused."""
    output = run.output()
    if run.paused:
        output["__interrupt__"] = list(run.paused)
    field = run.plans.bare  # (`bare_field(run.spec)`, worked out once per graph)
    return output if field is None else root_output(output, field)


def _open_stream(
    app: CompiledGraph, config: Any, stream_mode: Any, kwargs: dict[str, Any]
) -> tuple[RunLoop, Any, Any, bool]:
    """`stream`'s and `astream`'s start: the run, its relay (the modes it drives, and whether
    the chunks carry namespaces), the chunks' shape, and whether one mode was asked for."""
    subgraphs = bool(kwargs.pop("subgraphs", False))
    modes, single = _modes(stream_mode or app.stream_mode)
    shape = chunk_shape(app.spec, kwargs)  # (before `_start` takes `output_keys`)
    run = app._start(config, kwargs)
    return run, open_relay(run, modes, subgraphs), shape, single


def _modes(stream_mode: str | Sequence[str]) -> tuple[frozenset[str], bool]:
    single = isinstance(stream_mode, str)
    if not single and not (
        isinstance(stream_mode, (list, tuple)) and all(isinstance(m, str) for m in stream_mode)
    ):
        raise wrong_argument(
            "stream(stream_mode=)", f"one of {list(STREAM_MODES)} or a list of them", stream_mode
        )
    modes = [stream_mode] if single else list(stream_mode)
    unknown = [m for m in modes if m not in STREAM_MODES]
    if unknown or not modes:
        raise ValueError(
            f"Unknown stream_mode {unknown or stream_mode!r}; choose from {list(STREAM_MODES)}."
        )
    return frozenset(modes), single


def _check_history_arguments(filter: Any, before: Any, limit: Any) -> None:
    """Refuse `get_state_history`'s `filter`, `before` or `limit` of another type."""
    if filter is not None and not isinstance(filter, Mapping):
        raise wrong_argument("get_state_history(filter=)", "a dict of metadata or None", filter)
    if before is not None and not isinstance(before, Mapping):
        raise wrong_argument("get_state_history(before=)", "a checkpoint's config or None", before)
    if limit is not None and (type(limit) is not int):
        raise wrong_argument("get_state_history(limit=)", "an int or None", limit)


def _nodes_text(count: int) -> str:
    """`1 node`, `2 nodes` (a compiled graph's repr)."""
    return f"{count} node{'s' * (count != 1)}"
