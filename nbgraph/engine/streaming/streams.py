"""Live streams: what a node sends out while it runs — `get_stream_writer()`'s custom chunks
and, with langchain_core, the chat model tokens of `stream_mode="messages"`.

Each task runs with its writer (`engine.core.writer.TaskStream`) in context.
What a node writes is kept on the task (`Task.custom`, for the record) and, when the caller
streams `"custom"`, put on the run's `LiveSink` the moment it is written. The drivers read
the sink while a step's tasks run, so custom and messages chunks reach the caller
interleaved with the other modes' chunks as LangGraph interleaves them: a task's chunks come
before its `updates` chunk, those of tasks running in parallel as they are written.
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from nbgraph.engine.core.loop import Hooks
from nbgraph.engine.core.tasks import Task
from nbgraph.engine.core.writer import TaskStream, current_writer
from nbgraph.errors import InvalidArgumentError
from nbgraph.primitives import Command

if TYPE_CHECKING:
    import asyncio

__all__ = ["LIVE_MODES", "Chunk", "LiveSink", "StreamScope", "callbacks_inside_node"]

LIVE_MODES = frozenset({"custom", "messages"})
_RETURNED_MODES = frozenset({"updates", "tasks"})  # (chunks that show a task's writes)
"""The stream modes whose chunks a node sends while it runs."""

Chunk = tuple[str, Any]


class LiveSink:
    """Where a run's live chunks wait for the driver: a queue safe to put on from any thread.

    The sync driver reads it directly; the async driver is woken on its event loop (`bind`).
    A finished task is put on it too (`finished`), after the chunks it wrote: reading the
    sink in order gives every task's chunks before the task itself.
    """

    def __init__(self, modes: frozenset[str]) -> None:
        self.custom = "custom" in modes
        self.messages = "messages" in modes
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._loop_thread = 0

    def put(self, mode: str, chunk: Any) -> None:
        """Send `(mode, chunk)` to the caller (from any thread)."""
        self.queue.put((mode, chunk))
        self._notify()

    def finished(self, item: Any) -> None:
        """A task (or the future that holds it) is done: after its chunks, it is next."""
        self.queue.put(_Done(item))
        self._notify()

    def drain(self) -> Iterator[Chunk]:
        """The chunks waiting now (the sync driver, after a task it ran inline)."""
        while True:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                return
            yield item

    def until_done(self, count: int) -> Iterator[Chunk | Task]:
        """Chunks as they come, and each of `count` tasks as it finishes (sync driver)."""
        while count:
            item = self.queue.get()
            count -= type(item) is _Done
            yield _taken(item)

    def bind(self) -> None:
        """Wake the running event loop when something is put (the async driver)."""
        import asyncio  # (here: `import nbgraph` does not load asyncio)

        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._loop_thread = threading.get_ident()

    async def auntil_done(self, count: int) -> AsyncIterator[Chunk | Task]:
        """`until_done` on the event loop."""
        assert self._wake is not None, "bind() the sink to the event loop first"
        while count:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                self._wake.clear()
                if self.queue.empty():
                    await self._wake.wait()
                continue
            count -= type(item) is _Done
            yield _taken(item)

    def _notify(self) -> None:
        loop, wake = self._loop, self._wake
        if loop is None or wake is None:
            return
        if threading.get_ident() == self._loop_thread:
            wake.set()
        else:
            with contextlib.suppress(RuntimeError):  # (the loop closed: nobody reads now)
                loop.call_soon_threadsafe(wake.set)


class _Done:
    __slots__ = ("item",)

    def __init__(self, item: Any) -> None:
        self.item = item


def _taken(item: Any) -> Chunk | Task:
    """What the sink's queue held: a live chunk as it is; a finished task (or the future
    holding it: its result, or its error raised)."""
    if type(item) is not _Done:
        return item
    done = item.item
    return done if type(done) is Task else done.result()


class StreamScope:
    """Runs a run's tasks each with its writer in context (and, for `"messages"`, in a
    langchain config that sends its chat models' tokens).

    Attributes:
        sink: where live chunks go, when the caller streams `"custom"` or `"messages"`.
    """

    def __init__(self, run: Any, modes: frozenset[str], name: str = "LangGraph") -> None:
        self.run = run
        self.relay = relay = getattr(run, "relay", None)  # (a streamed run: namespaces)
        self.quiet = False  # (a run inside a node whose tokens the caller does not stream)
        self.chat: Any = None
        self.checkpoints: Any = None
        """`stream_mode="checkpoints"`'s reader (`engine.checkpoint_stream`), set by the
        driver when the caller asks for it."""
        self.events: Any = None
        """The run's langchain chain runs (`engine.streaming.chain_events.ChainRuns`), when
        its config has callbacks (`astream_events`, a tracer)."""
        self.returned: dict[Task, Any] | None = None
        """What each task's node returned, when the caller streams `"updates"` or `"tasks"`
        and a field's reducer prepares what it is written (messages): those chunks show a
        write as the node returned it, as LangGraph's do (`returned_writes`)."""
        tap = None  # (the run's hooks: handed to it once, and only when there are some)
        if modes & _RETURNED_MODES and not run.spec.unprepared.issuperset(run.spec.fields):
            self.returned = {}
            tap = self._returned
        if run.config.get("callbacks"):
            self.events = _chain_runs(run, name)
            tap = self._returned
        if relay is None:
            self.sink = LiveSink(modes) if modes and modes & LIVE_MODES else None
            if self.sink is None:  # (invoke(): nothing live)
                if tap is not None:
                    run.hook(Hooks(tap=tap, observer=self.events))
                return
        else:
            self._relayed(relay, modes)
        if self.sink is not None and self.sink.messages and self.chat is None:
            self.chat = _chat_handler(self.sink)
            if relay is not None:  # (shared by the runs inside: see engine.namespaces)
                relay.chat = self.chat
                self.chat.subgraphs, self.chat.base = relay.subgraphs, relay.base
        task_path = None
        if self.chat is not None:
            tap = self._returned
            task_path = (self.execute, self.aexecute)  # (`@task` calls: engine.core.calls)
        run.hook(  # (each task's writer sends to the sink: `RunLoop.execute`)
            Hooks(tap=tap, observer=self.events, sink=self.sink, task_path=task_path)
        )

    def _relayed(self, relay: Any, modes: frozenset[str]) -> None:
        from nbgraph.engine.streaming.namespaces import scope_sink

        self.sink = scope_sink(self.run, modes)
        if relay.root is not self.run and "messages" in modes:
            self.chat, self.quiet = relay.chat, not relay.subgraphs

    @property
    def plain(self) -> bool:
        """Whether a task runs as it is: no langchain config around it."""
        return self.chat is None and self.events is None

    def started(self, graph_input: Any, on_event_loop: bool = False) -> None:
        """The run starts (its chain run opens, when its config has callbacks)."""
        if self.events is not None:
            self.events.started(graph_input, on_event_loop)

    def ended(self, error: BaseException | None) -> None:
        """The run ended, with its final state or `error` (its chain run closes)."""
        if self.events is not None:
            self.events.ended(None if error is not None else self.run.output(), error)

    def execute(self, task: Task) -> Task:
        """`run.execute(task)`, in the langchain config that streams its chat models' tokens
        when the caller streams `"messages"`, and in its own chain run when the run's config
        has callbacks."""
        if self.plain:
            return self.run.execute(task)
        stream = TaskStream(task, self.sink, self.relay)
        entered = self._enter(stream)
        try:
            return self.run.execute(task, stream)
        finally:
            self._leave(entered, task)

    async def aexecute(self, task: Task) -> Task:
        """`run.aexecute(task)`, as `execute`."""
        if self.plain:
            return await self.run.aexecute(task)
        stream = TaskStream(task, self.sink, self.relay)
        entered = self._enter(stream)
        try:
            return await self.run.aexecute(task, stream)
        finally:
            self._leave(entered, task)

    def _enter(self, stream: TaskStream) -> Any:
        task = stream.task
        if self.events is None or task.cached:  # (a task not run again has no chain run)
            return None if self.events is not None else self._enter_chat(stream)
        state = self.run.runner.node_input(task)  # (what the node is called with)
        entered, metadata = self.events.enter(task, state, self.chat)
        if self.chat is not None:
            stream.metadata = metadata
            self._chat_started(stream)
        return entered

    def _leave(self, entered: Any, task: Task) -> None:
        if self.events is None:
            _leave_chat(entered)
        elif entered is not None:
            self.events.leave(entered, task)

    def _enter_chat(self, stream: TaskStream) -> Any:
        from nbgraph.engine.streaming.chat_stream import enter_node

        token, stream.metadata = enter_node(self.chat, self.run, stream.task)
        self._chat_started(stream)
        return token

    def _chat_started(self, stream: TaskStream) -> None:
        task = stream.task
        if self.quiet:  # (LangGraph: the handler hears nothing of a subgraph's nodes)
            stream.metadata = None
        elif not task.cached:
            self.chat.node_started(task.arg if task.kind == "send" else self.run.read(task))

    def _returned(self, task: Task, output: Any) -> None:
        if self.returned is not None:
            self.returned[task] = output
        if self.events is not None:
            self.events.returned(task, output)
        if self.chat is None:
            return
        stream = current_writer()
        if stream is not None and stream.metadata is not None:
            self.chat.node_returned(output, stream.metadata)

    def returned_writes(self, task: Task) -> list[tuple[str, Any]]:
        """`task`'s writes, each to a field whose reducer prepares its writes as the node
        returned it (a dict, or a `Command`'s dict `update`); the others as written."""
        output = self.returned.pop(task, None) if self.returned is not None else None
        if isinstance(output, Command):
            output = output.update
        if type(output) is not dict:
            return task.writes
        unprepared = self.run.spec.unprepared
        return [
            (key, _as_returned(output[key], value) if key not in unprepared and key in output
             else value)
            for key, value in task.writes
        ]  # fmt: skip


def _as_returned(returned: Any, written: Any) -> Any:
    """A write as the node returned it, with each message object in it as written: LangGraph
    streams the node's own objects, and its `add_messages` gives an id to a message object
    in place (so its chunk shows that id), while a dict or a tuple becomes a new message."""
    if type(written) is list:
        if type(returned) is list and len(returned) == len(written):
            return [w if type(r) is type(w) else r for r, w in zip(returned, written, strict=True)]
        if len(written) == 1 and type(returned) is type(written[0]):
            return written[0]
    return returned


def callbacks_inside_node() -> Any:
    """The langchain callbacks of the node run this code runs in (a graph run inside a
    node whose run has callbacks: its run is a child of the node's), or None. Reads
    langchain's config only if langchain_core is loaded already."""
    module = sys.modules.get("langchain_core.runnables.config")
    if module is None:
        return None
    return (module.var_child_runnable_config.get() or {}).get("callbacks")


def _chain_runs(run: Any, name: str) -> Any:
    try:
        from nbgraph.engine.streaming.chain_events import ChainRuns
    except ImportError as error:
        raise InvalidArgumentError(
            "config['callbacks'] are langchain callbacks, and need langchain_core: pip install "
            f"nbgraph[langchain] ({error})."
        ) from None
    return ChainRuns(run, name)


def _chat_handler(sink: LiveSink) -> Any:
    try:
        from nbgraph.engine.streaming.chat_stream import ChatStream
    except ImportError as error:
        raise InvalidArgumentError(
            'stream_mode="messages" streams the tokens of langchain chat models called in '
            "nodes, and needs langchain_core: pip install nbgraph[langchain] "
            f"({error})."
        ) from None
    return ChatStream(sink)


def _leave_chat(token: Any) -> None:
    from nbgraph.engine.streaming.chat_stream import leave_node

    leave_node(token)
