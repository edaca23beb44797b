"""A program's runs as each library's record: what `both(program, records=True)` observes
(tests/support/harness.py).

While a program runs under a `Recorder`, every top-level call of an app without a saver of its
own is recorded, and every app compiled is kept; after it, each thread of each app compiled
with a saver is read as a record too. On LangGraph a record is the thread imported into
nbgraph's record (`Run.from_langgraph`), on nbgraph the run's own record (`app.last_run`) or
the thread rebuilt from its saver (`Run.from_checkpointer`). A record that cannot be read is
the text of why (`"no history: ..."`).
"""

import contextlib
from dataclasses import dataclass, field
from typing import Any

import nbgraph
from nbgraph.checkpoint.subthreads import SEP


@dataclass
class Records:
    """What one library recorded of a program: `calls`, a record per top-level call without a
    saver, in order; `threads`, `(thread_id, record)` for each thread of each app compiled
    with a saver (apps in compile order, threads sorted); `returned`, what the program
    returned."""

    calls: list[Any] = field(default_factory=list)
    threads: list[tuple[str, Any]] = field(default_factory=list)
    returned: Any = None
    error: Exception | None = None
    apps: list[Any] = field(default_factory=list)


def recorded(lib: str, program: Any) -> Records:
    """`program()` run under `lib`'s recorder; its records, the threads read after it. What
    it raised is kept in `error` (the records made before it are kept too)."""
    recorder = Recorder()
    returned = error = None
    with recorder.on(lib):
        try:
            returned = program()
        except Exception as exc:
            error = exc
    records = Records(recorder.records, [], returned, error, recorder.apps)
    for app in checkpointed(recorder.apps):
        for thread_id in thread_ids(lib, app.checkpointer):
            records.threads.append((thread_id, thread_record(lib, app, thread_id)))
    return records


def checkpointed(apps: list) -> list:
    """The apps compiled with a saver of their own (the roots of the program's threads)."""
    return [app for app in apps if app.checkpointer not in (None, True, False)]


def thread_ids(lib: str, saver: Any) -> list[str]:
    """The threads a saver holds, sorted; on nbgraph without its subgraphs' own threads (a
    LangGraph subgraph keeps its checkpoints in its parent's thread)."""
    if lib == "nbgraph":
        return sorted(t for t in saver.threads() if SEP not in t)
    return sorted({str(c.config["configurable"]["thread_id"]) for c in saver.list(None)})


def thread_record(lib: str, app: Any, thread_id: str) -> Any:
    """One thread's record: imported from LangGraph, rebuilt from nbgraph's saver."""
    if lib == "nbgraph":
        return nbgraph.Run.from_checkpointer(app.checkpointer, thread_id, graph=app)
    try:
        return nbgraph.Run.from_langgraph(app, {"configurable": {"thread_id": thread_id}})
    except nbgraph.LangGraphHistoryError as exc:
        return f"no history: {exc}"


class Recorder:
    """While a program runs, every top-level call of a compiled app that has no checkpointer
    of its own is recorded: on LangGraph it runs with an `InMemorySaver` on a fresh thread
    (`import-<n>`, unless the call names one) and the thread is imported right after
    (`Run.from_langgraph`); on nbgraph the call's own record is kept (`app.last_run`,
    subruns included). Calls inside a run (subgraphs) pass through. `records` holds, per
    call, the run or why there is none; `apps`, every app compiled meanwhile."""

    def __init__(self) -> None:
        self.depth = 0
        self.records: list[Any] = []
        self.apps: list[Any] = []

    @contextlib.contextmanager
    def compiling(self, builder: Any) -> Any:
        """Keep every app `builder.compile` makes (the checkpointed ones hold threads)."""
        compile_, apps = builder.compile, self.apps

        def compile(graph, *args, **kwargs):
            app = compile_(graph, *args, **kwargs)
            apps.append(app)
            return app

        builder.compile = compile
        try:
            yield
        finally:
            builder.compile = compile_

    @contextlib.contextmanager
    def on_langgraph(self) -> Any:
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.pregel import Pregel

        stream, astream, recorder = Pregel.stream, Pregel.astream, self

        def own(app: Any, config: Any) -> Any:
            if recorder.depth or app.checkpointer is not None:
                return None
            app.checkpointer = InMemorySaver()
            config = dict(config or {})
            configurable = {**config.get("configurable", {})}  # (a fresh saver per call)
            configurable.setdefault("thread_id", f"import-{len(recorder.records)}")
            config["configurable"] = configurable
            return config

        def done(app: Any, config: Any) -> None:
            try:
                recorder.records.append(nbgraph.Run.from_langgraph(app, config))
            except nbgraph.LangGraphHistoryError as exc:
                recorder.records.append(f"no history: {exc}")
            finally:
                app.checkpointer = None

        def recorded_stream(app, input, config=None, **kwargs):
            config_ = own(app, config)
            recorder.depth += 1
            try:
                yield from stream(app, input, config_ or config, **kwargs)
            finally:
                recorder.depth -= 1
                if config_ is not None:
                    done(app, config_)

        async def recorded_astream(app, input, config=None, **kwargs):
            config_ = own(app, config)
            recorder.depth += 1
            try:
                async for chunk in astream(app, input, config_ or config, **kwargs):
                    yield chunk
            finally:
                recorder.depth -= 1
                if config_ is not None:
                    done(app, config_)

        from langgraph.graph import StateGraph

        Pregel.stream, Pregel.astream = recorded_stream, recorded_astream
        try:
            with self.compiling(StateGraph):
                yield self
        finally:
            Pregel.stream, Pregel.astream = stream, astream

    @contextlib.contextmanager
    def on_nbgraph(self) -> Any:
        from nbgraph.engine.app import CompiledGraph

        running, recorder = CompiledGraph._running, self

        @contextlib.contextmanager
        def recorded_running(app, run):
            top = recorder.depth == 0 and app.checkpointer is None
            recorder.depth += 1
            try:
                with running(app, run):
                    yield
            finally:
                recorder.depth -= 1
                if top:
                    recorder.records.append(app.last_run)

        CompiledGraph._running = recorded_running
        try:
            with self.compiling(nbgraph.StateGraph):
                yield self
        finally:
            CompiledGraph._running = running

    def on(self, lib: str) -> Any:
        """The recorder's context on `lib` ("langgraph" or "nbgraph")."""
        return self.on_langgraph() if lib == "langgraph" else self.on_nbgraph()
