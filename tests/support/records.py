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
from tests.support.harness import Differs

IMPORT_DOC = "Reading a LangGraph app's runs"
"""docs/langgraph.md's heading on imported records and where they differ from nbgraph's."""


@dataclass(frozen=True)
class Why:
    """Why a program's imported records differ from nbgraph's (or why there is nothing to
    import); `at(*keys)` is the `Differs` a program declares with it."""

    text: str
    doc: str = IMPORT_DOC

    def at(self, *keys: str) -> Differs:
        return Differs(tuple(keys), self.text, self.doc)


NO_RUN = Why("no graph runs (a drawing, the store, a function called directly): nothing to import")
NBGRAPH_ONLY = Why("it runs nbgraph only (an nbgraph feature, not a differential run)")
PAIRING = Why(
    "the calls cannot be paired one to one: batch runs them on threads at once, a chain or a "
    "refused context calls the app another way on each engine"
)
APPLY = Why(
    "an error raised while LangGraph applies a step's writes (InvalidUpdateError, a "
    "MessageTypeError of the reducer) or a recursion limit: the history keeps no error and "
    "shows the step still to run (status 'interrupted', with a note)"
)
SAVER_RECORD = Why(
    "the thread ends failed or paused: nbgraph's record rebuilt from its saver keeps no failed "
    "or paused step, LangGraph's history keeps it, so the import shows it as nbgraph's live "
    "run does"
)
PARENT = Why(
    "Command.PARENT: LangGraph's subgraph history keeps no trace of the node that handed the "
    "command up (it raised before a checkpoint), so the subrun shows that node still to run "
    "(status 'interrupted', with a note) where nbgraph's shows it and status 'to_parent'"
)
UNDETECTED = Why(
    "a graph built inside a node's function: LangGraph does not detect it as a subgraph, so "
    "its checkpoints cannot be read with its graph; not imported, said in run.warnings"
)
NS_REUSE = Why(
    "a replay or fork runs the subgraph again in a new namespace on LangGraph (its task id "
    "comes from the checkpoint), in the same one on nbgraph (step-based task ids), whose "
    "rebuilt subrun then has the earlier runs as forks"
)
OWN_THREAD = Why(
    "a subgraph compiled with checkpointer=True is not imported (said in run.warnings)"
)
DROPPED = Why(
    "keys a subgraph's parent lacks: LangGraph drops them before writing, so the history has "
    "no dropped_key rows"
)
UPDATE = Why(
    "update_state of a past checkpoint: LangGraph keeps no writes for it, so they are read "
    "from the values it made (an Overwrite of the list, with a note)"
)
SERDE = Why("LangGraph's saver keeps tuples as lists (its serializer): the values read back differ")
CONFIG = Why(
    "the nodes write what they see of their config, and the saver the proof gives LangGraph's "
    "call adds checkpoint keys to it"
)
RECURSION_AT_END = Why(
    "GraphRecursionError is raised after the last step, whose checkpoint has nothing left to "
    "run: the history is that of a finished thread"
)
UNKNOWN_KEYS = Why(
    "LangGraph drops a key that is not a channel before it is written: the history has no "
    "trace of it, so the record has no dropped_key row"
)
REASONS = {name: why for name, why in globals().items() if isinstance(why, Why)}
"""Every reason a record imported from LangGraph differs, by name."""


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
    return kept(lib, recorder, returned, error)


def kept(lib: str, recorder: "Recorder", returned: Any = None, error: Any = None) -> Records:
    """What `recorder` saw on `lib`, with the threads of its checkpointed apps read now."""
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
