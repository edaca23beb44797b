"""Replaying the differential suites with every run recorded on both libraries: the proof of
tests/record/test_langgraph_import_subgraphs.py that each LangGraph run imported into nbgraph's
record (`Run.from_langgraph`) agrees with nbgraph's own record of the same program.

A `Recorder` sees every top-level call of a compiled app while a program runs, on LangGraph
(each imported right after) or on nbgraph (its record kept). `differential_programs()` lists
the programs of the suites in `MODULES` and their other test functions, each with its
parameter sets, ready to run under both recorders.
"""

import contextlib
from typing import Any

import pytest

import nbgraph
from nbgraph.checkpoint.subthreads import SEP
from tests.record.import_views import checkpointed, deep_differences, deep_view
from tests.support.harness import Ids, api_for


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


def by_structure(view: Any) -> Any:
    """A view's text with each id (message and tool-call ids) as its label (`Ids`)."""
    return Ids().text(repr(view))


def run_both(run_langgraph: Any, run_nbgraph: Any) -> tuple[Recorder, Recorder]:
    """Each callable run under its engine's recorder (what it raises is its own business:
    the differential tests judge it)."""
    lg, nb = Recorder(), Recorder()
    with lg.on_langgraph(), contextlib.suppress(Exception):
        run_langgraph()
    with nb.on_nbgraph(), contextlib.suppress(Exception):
        run_nbgraph()
    return lg, nb


def paired_records(lg: Recorder, nb: Recorder) -> list[tuple[str, Any, Any]]:
    """`(what, imported, nbgraph's)`: each top-level call without a saver (nbgraph's live
    record), then each thread of each app compiled with a saver (nbgraph's record rebuilt
    from its saver), in order."""
    if len(lg.records) != len(nb.records):
        return [("calls", f"{len(lg.records)} calls recorded", f"{len(nb.records)}")]
    pairs = zip(lg.records, nb.records, strict=True)
    found = [(f"call {i}", a, b) for i, (a, b) in enumerate(pairs)]
    lg_roots, nb_roots = checkpointed(lg.apps), checkpointed(nb.apps)
    if len(lg_roots) != len(nb_roots):
        return [("apps", f"{len(lg_roots)} apps with a saver", f"{len(nb_roots)}")]
    for index, (lg_app, nb_app) in enumerate(zip(lg_roots, nb_roots, strict=True)):
        for thread_id in nb_app.checkpointer.threads():
            if SEP in thread_id:
                continue
            config = {"configurable": {"thread_id": thread_id}}
            try:
                imported: Any = nbgraph.Run.from_langgraph(lg_app, config)
            except nbgraph.LangGraphHistoryError as exc:
                imported = f"no history: {exc}"
            ours = nbgraph.Run.from_checkpointer(nb_app.checkpointer, thread_id, graph=nb_app)
            found.append((f"app {index} thread {thread_id}", imported, ours))
    return found


def record_differences(lg: Recorder, nb: Recorder) -> list[list[str]]:
    """Per call and thread, the keys of `deep_view` that differ (ids by structure)."""
    found = []
    for _what, imported, ours in paired_records(lg, nb):
        if isinstance(imported, str):
            found.append([imported.split(":")[0]])
            continue
        a, b = input_rows_sorted(deep_view(imported)), input_rows_sorted(deep_view(ours))
        keys = deep_differences(a, b)
        found.append([k for k in keys if by_structure(_at(a, k)) != by_structure(_at(b, k))])
    return found


def call_differences(program: Any, lg_api: Any, nb_api: Any) -> list[list[str]]:
    """`record_differences` of a program written against an api namespace."""
    return record_differences(*run_both(lambda: program(lg_api), lambda: program(nb_api)))


def input_rows_sorted(view: dict) -> dict:
    """A `deep_view` with each subrun's step-0 effect rows (its input, one row per field)
    sorted by field: a subgraph's input fields are written in the parent's field order on
    nbgraph and in LangGraph's channel order on LangGraph (same writes, rows in another
    order)."""
    subruns = []
    for task, sub in view["subruns"]:
        sub = input_rows_sorted(sub)
        head = sorted(row for row in sub["effects"] if row[0] == "0")
        sub["effects"] = head + [row for row in sub["effects"] if row[0] != "0"]
        subruns.append((task, sub))
    return {**view, "subruns": subruns}


def _at(view: dict, key: str) -> Any:
    """The part of a `deep_view` a `deep_differences` key names."""
    where, _, name = key.rpartition(":")
    for task in where.split("/")[1:]:
        view = dict(view["subruns"])[task]
    return view[name] if name != "subruns" else [t for t, _ in view["subruns"]]


def parametrized(fn: Any) -> list[tuple[str, dict]]:
    """A test function's parameter sets from its `parametrize` marks: `(id, kwargs)` each."""
    sets: list[tuple[str, dict]] = [("", {})]
    for mark in getattr(fn, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        rows = []
        for index, value in enumerate(values):
            value = value.values if hasattr(value, "values") and hasattr(value, "marks") else value
            value = tuple(value) if len(names) > 1 else (value,)
            rows.append((f"{names[0]}{index}", dict(zip(names, value, strict=True))))
        sets = [(f"{a}-{b}".strip("-"), {**ka, **kb}) for a, ka in sets for b, kb in rows]
    return sets


def run_test_function(fn: Any, kwargs: dict) -> tuple[Recorder, Recorder]:
    """A differential test function (it runs LangGraph and nbgraph itself) run under both
    recorders; its fixtures `sleeps`, `monkeypatch`, `tmp_path` given as pytest would."""
    import inspect
    import tempfile
    import time
    from pathlib import Path

    lg, nb = Recorder(), Recorder()
    with lg.on_langgraph(), nb.on_nbgraph(), pytest.MonkeyPatch.context() as patch:
        for name in inspect.signature(fn).parameters:
            if name == "sleeps":
                kwargs = {**kwargs, name: []}
                patch.setattr(time, "sleep", kwargs[name].append)
            elif name == "monkeypatch":
                kwargs = {**kwargs, name: patch}
            elif name == "tmp_path":
                kwargs = {**kwargs, name: Path(tempfile.mkdtemp())}
        outcomes = (Exception, pytest.fail.Exception, pytest.skip.Exception)
        with contextlib.suppress(*outcomes):  # (the differential test itself judges them)
            fn(**kwargs)
    return lg, nb


MODULES = (
    "test_langgraph_subgraphs", "test_langgraph_subgraph_checkpoints",
    "test_langgraph_subgraph_edges", "test_langgraph_messages", "test_langgraph_tools",
    "test_langgraph_retry", "test_langgraph_context",
)  # fmt: skip
"""The differential suites of tests/parity whose programs the proof widens to (the 51
programs of compat_programs.py are test_langgraph_import.py's). They are replayed, not
used: nothing of theirs is called but their programs and test functions."""


def differential_programs() -> list[tuple[str, Any]]:
    """`(id, run)` for every program of `MODULES`: a `PROGRAMS` list's programs (run on the
    harness's two apis), and every other test function of the module with each of its
    parameter sets (it runs both engines itself). `run()` gives `(lg, nb)` recorders."""
    import importlib

    found = []
    for name in MODULES:
        module = importlib.import_module(f"tests.parity.{name}")
        for program in getattr(module, "PROGRAMS", ()):
            found.append((f"{name}::{program.__name__}", _program_run(program)))
        for attr, fn in vars(module).items():
            if attr.startswith("test_") and callable(fn):
                sets = parametrized(fn)
                if any("program" in kwargs for _, kwargs in sets):
                    continue  # it runs the PROGRAMS above
                for param, kwargs in sets:
                    ident = f"{name}::{attr}" + (f"[{param}]" if param else "")
                    found.append((ident, _test_run(fn, kwargs)))
    return found


def _program_run(program: Any) -> Any:
    def run() -> tuple[Recorder, Recorder]:
        return run_both(lambda: program(api_for("langgraph")), lambda: program(api_for("nbgraph")))

    return run


def _test_run(fn: Any, kwargs: dict) -> Any:
    return lambda: run_test_function(fn, kwargs)


def program_differences(run: Any) -> tuple[int, list[str]]:
    """How many records a program made (calls and threads) and the keys that differ in any
    of them (first-level subrun paths kept), sorted."""
    lg, nb = run()
    per_record = record_differences(lg, nb)
    return len(per_record), sorted({key for keys in per_record for key in keys})
