"""`Run.from_langgraph` of threads whose nodes run subgraphs: each subgraph's run, read from
its `checkpoint_ns` in the same saver and thread, is a subrun of the task that ran it
(`run.subruns`, `.parent`, `.task`), nested to any depth, paused ones too. The proof: every
checkpointed program of tests/test_langgraph_subgraph_checkpoints.py runs on LangGraph and on
nbgraph, and each thread imported from LangGraph agrees with nbgraph's record of it rebuilt
from its saver (`Run.from_checkpointer`), subruns included (effects, steps, final state).
"""

import contextlib
import operator
import re
from typing import Annotated, Any, TypedDict

import pytest
import test_langgraph_subgraph_checkpoints as sc
from test_langgraph_import import capture_apps, differences, thread_view

import nbgraph
from nbgraph.checkpoint.subthreads import SEP

pytestmark = pytest.mark.langgraph

THREAD = {"configurable": {"thread_id": "t"}}


def deep_view(run: Any) -> dict:
    """`thread_view` of a run and, under `subruns`, of each subrun (with its task id)."""
    view = thread_view(run)
    view["subruns"] = [(sub.task, deep_view(sub)) for sub in run.subruns]
    return view


def deep_differences(a: dict, b: dict, where: str = "run") -> list[str]:
    """The keys of two `deep_view`s that differ, named by where (`run/1:0:sub/...`)."""
    found = [f"{where}:{key}" for key in differences(a, b) if key != "subruns"]
    if [task for task, _ in a["subruns"]] != [task for task, _ in b["subruns"]]:
        return [*found, f"{where}:subruns"]
    for (task, sub_a), (_, sub_b) in zip(a["subruns"], b["subruns"], strict=True):
        found.extend(deep_differences(sub_a, sub_b, f"{where}/{task}"))
    return found


def checkpointed(apps: list) -> list:
    """The apps compiled with a saver of their own (the roots of the program's threads)."""
    return [app for app in apps if app.checkpointer not in (None, True, False)]


def both_subgraph_threads(program: Any) -> list[tuple[str, dict, dict, Any, Any]]:
    """The program run on LangGraph and on nbgraph; each thread of each checkpointed app,
    imported from LangGraph and rebuilt from nbgraph's saver: `(thread, view, view, run,
    run)`."""
    lg_api, nb_api = sc.langgraph_api(), sc.nbgraph_api()
    lg_apps, nb_apps = capture_apps(lg_api), capture_apps(nb_api)
    program(lg_api)
    program(nb_api)
    lg_roots, nb_roots = checkpointed(lg_apps), checkpointed(nb_apps)
    assert len(lg_roots) == len(nb_roots)
    found = []
    for lg_app, nb_app in zip(lg_roots, nb_roots, strict=True):
        for thread_id in nb_app.checkpointer.threads():
            if SEP in thread_id:  # a subgraph's thread: read through its parent's
                continue
            config = {"configurable": {"thread_id": thread_id}}
            imported = nbgraph.Run.from_langgraph(lg_app, config)
            ours = nbgraph.Run.from_checkpointer(nb_app.checkpointer, thread_id, graph=nb_app)
            found.append((thread_id, deep_view(imported), deep_view(ours), imported, ours))
    return found


SUBGRAPH_HISTORY_CANNOT_TELL = {
    "refusals_program": (
        ["run:steps", "run:tree", "run:subruns"],
        "the thread is left paused inside the subgraph: nbgraph's record rebuilt from its "
        "saver keeps no paused step (as THREAD_DIFFERENCES in test_langgraph_import.py), "
        "LangGraph's history keeps the paused task, so the import shows it and its paused "
        "subrun, as nbgraph's live run does (test_a_paused_nested_subgraph_then_resumed)",
    ),
    "replay_and_fork_program": (
        ["run/3:0:sub:tree", "run/3:0:sub:forks"],
        "a replay or fork runs the subgraph again in a new namespace on LangGraph (its task "
        "id comes from the checkpoint), while nbgraph's step-based task id names the same "
        "namespace each time, so nbgraph's rebuilt subrun has the earlier runs as forks",
    ),
}
"""Programs whose imported threads differ from nbgraph's record, with the keys and why."""

CANNOT_IMPORT = {
    "root_checkpointer_modes_program": "no graph of it is compiled with a checkpointer "
    "(checkpointer=True alone is refused by both, a parent without one keeps no history)",
}
"""Programs with no thread to import, and why (each checked to have none)."""


@pytest.mark.parametrize("program", sc.PROGRAMS, ids=lambda p: p.__name__)
def test_imported_subgraph_threads_agree_with_nbgraphs_record(program):
    pytest.importorskip("langgraph")
    expected, _why = SUBGRAPH_HISTORY_CANNOT_TELL.get(program.__name__, ([], ""))
    threads = both_subgraph_threads(program)
    assert bool(threads) == (program.__name__ not in CANNOT_IMPORT)
    for thread_id, imported, ours, run, _ in threads:
        assert deep_differences(imported, ours) == expected, (thread_id, imported, ours)
        if program.__name__ == "checkpointer_true_program":
            assert any("checkpointer=True" in note for note in run.warnings)


# --- one program, step by step ---------------------------------------------------------------


class S(TypedDict):
    log: Annotated[list, operator.add]


def nested(api: Any, saver: Any) -> Any:
    """`sub` runs `x` then `deep`, a subgraph whose `ask` asks; then `b`."""
    deepest = api.StateGraph(S).add_node("y", lambda s: {"log": ["y"]})
    deepest.add_node("ask", lambda s: {"log": [api.interrupt("q?")]})
    deepest.add_edge(api.START, "y").add_edge("y", "ask")
    inner = api.StateGraph(S).add_node("x", lambda s: {"log": ["x"]})
    inner.add_node("deep", deepest.compile()).add_edge(api.START, "x").add_edge("x", "deep")
    outer = api.StateGraph(S).add_node("sub", inner.compile())
    outer.add_node("b", lambda s: {"log": ["b"]})
    outer.add_edge(api.START, "sub").add_edge("sub", "b")
    return outer.compile(checkpointer=saver)


def test_a_paused_nested_subgraph_then_resumed():
    pytest.importorskip("langgraph")
    lg_api = sc.langgraph_api()
    app = nested(lg_api, lg_api.saver())
    app.invoke({"log": []}, THREAD)
    paused = nbgraph.Run.from_langgraph(app, THREAD)
    assert paused.status == "interrupted"
    (sub,) = paused.subruns
    assert (sub.parent, sub.task, sub.status) == (paused, "1:0:sub", "interrupted")
    (deep,) = sub.subruns
    assert (deep.task, deep.status, deep.output) == ("2:0:deep", "interrupted", {"log": ["x", "y"]})
    asked = [t for t in deep.log.tasks() if t.interrupts]
    assert [(t.node, t.interrupts[0].value) for t in asked] == [("ask", "q?")]
    app.invoke(lg_api.Command(resume="A"), THREAD)
    done = nbgraph.Run.from_langgraph(app, THREAD)
    assert done.output == {"log": ["x", "x", "y", "A", "b"]}
    assert done.subruns[0].subruns[0].output == {"log": ["x", "y", "A"]}
    assert list(done.steps.subruns) == [[0], []]
    assert not [w for w in done.warnings if "subgraph" in w]
    nb_api = sc.nbgraph_api()
    ours = nested(nb_api, nb_api.saver())
    ours.invoke({"log": []}, THREAD)
    ours.invoke(nb_api.Command(resume="A"), THREAD)
    rebuilt = nbgraph.Run.from_checkpointer(ours.checkpointer, "t", graph=ours)
    assert deep_differences(deep_view(done), deep_view(rebuilt)) == []
    assert len(done.compare(rebuilt)) == 0
    assert len(done.subruns[0].compare(rebuilt.subruns[0])) == 0


def test_a_paused_subgraph_agrees_with_nbgraphs_live_run():
    pytest.importorskip("langgraph")
    lg_api, nb_api = sc.langgraph_api(), sc.nbgraph_api()
    app = nested(lg_api, lg_api.saver())
    app.invoke({"log": []}, THREAD)
    imported = nbgraph.Run.from_langgraph(app, THREAD)
    live = nested(nb_api, nb_api.saver()).run({"log": []}, THREAD)
    assert live.status == imported.status == "interrupted"
    assert deep_differences(deep_view(imported), deep_view(live)) == []


def test_a_subgraph_that_keeps_no_checkpoints_is_said():
    pytest.importorskip("langgraph")
    lg_api = sc.langgraph_api()
    inner = lg_api.StateGraph(S).add_node("x", lambda s: {"log": ["x"]})
    inner.add_edge(lg_api.START, "x")
    outer = lg_api.StateGraph(S).add_node("sub", inner.compile(checkpointer=False))
    app = outer.add_edge(lg_api.START, "sub").compile(checkpointer=lg_api.saver())
    app.invoke({"log": []}, THREAD)
    run = nbgraph.Run.from_langgraph(app, THREAD)
    assert run.output == {"log": ["x"]}
    assert run.subruns == []
    assert any("'sub'" in w and "checkpointer=False" in w for w in run.warnings)


# --- every differential program: each top-level call recorded on both ----------------------


class Recorder:
    """While a program runs, every top-level call of a compiled app that has no checkpointer
    of its own is recorded: on LangGraph it runs with an `InMemorySaver` on a fresh thread
    (`import-<n>`) and the thread is imported right after (`Run.from_langgraph`); on nbgraph
    the call's own record is kept (`app.last_run`, subruns included). Calls inside a run
    (subgraphs) pass through. `records` holds, per call, the run or why there is none."""

    def __init__(self) -> None:
        self.depth = 0
        self.records: list[Any] = []

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
            thread = f"import-{len(recorder.records)}"
            config["configurable"] = {**config.get("configurable", {}), "thread_id": thread}
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

        Pregel.stream, Pregel.astream = recorded_stream, recorded_astream
        try:
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
            yield self
        finally:
            CompiledGraph._running = running


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def by_structure(view: Any) -> Any:
    """A view with each uuid (message and tool-call ids) named by its first appearance."""
    labels: dict[str, str] = {}
    text = repr(view)
    return _UUID.sub(lambda m: labels.setdefault(m.group(), f"<id{len(labels)}>"), text)


def recorded_calls(program: Any, lg_api: Any, nb_api: Any) -> list[tuple[Any, Any]]:
    """The program run on both; its top-level calls paired: `(imported, nbgraph's run)`."""
    lg, nb = Recorder(), Recorder()
    with lg.on_langgraph(), contextlib.suppress(Exception):
        program(lg_api)
    with nb.on_nbgraph(), contextlib.suppress(Exception):
        program(nb_api)
    assert len(lg.records) == len(nb.records), (lg.records, nb.records)
    return list(zip(lg.records, nb.records, strict=True))


def call_differences(program: Any, lg_api: Any, nb_api: Any) -> list[list[str]]:
    """Per top-level call, the keys of `deep_view` that differ (ids by structure)."""
    found = []
    for imported, ours in recorded_calls(program, lg_api, nb_api):
        if isinstance(imported, str):
            found.append([imported.split(":")[0]])
            continue
        a, b = input_rows_sorted(deep_view(imported)), input_rows_sorted(deep_view(ours))
        keys = deep_differences(a, b)
        found.append([k for k in keys if by_structure(_at(a, k)) != by_structure(_at(b, k))])
    return found


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
