"""`Run.from_langgraph` and `nbgraph.trace`: a LangGraph thread's run imported into nbgraph's
record. The proof: every program of the compat suite (tests/parity/compat_programs.py) runs on
real LangGraph with an `InMemorySaver`, its thread is imported, the same program runs on
nbgraph, and the two records must agree (effects, steps, final state, tree shape).
"""

import asyncio
import contextlib
import operator
import re
from typing import Annotated, Any, TypedDict

import pytest

import nbgraph
from tests.parity.compat_programs import CASES, CHECKPOINT_CASES, asking_graph
from tests.record.import_views import capture_apps, differences, record_view, thread_view
from tests.support.harness import api_for, both, known_difference

pytestmark = pytest.mark.langgraph

THREAD = {"configurable": {"thread_id": "t"}}
# --- running a program both ways ------------------------------------------------------------


def _config(config: Any) -> dict:
    config = dict(config or {})
    config["configurable"] = {**config.get("configurable", {}), "thread_id": "t"}
    return config


def langgraph_record(case: Any) -> tuple[Any, Any]:
    """The case run on LangGraph with an InMemorySaver, its thread imported (or the error
    raised before there was a thread), and how the invoke ended."""
    from langgraph.checkpoint.memory import InMemorySaver

    try:
        app, graph_input, config = case(api_for("langgraph"))
    except Exception as exc:
        return None, ("build", type(exc).__name__)
    app.checkpointer = InMemorySaver()
    config = _config(config)
    try:
        if getattr(case, "is_async", False):
            asyncio.run(app.ainvoke(graph_input, config))
        else:
            app.invoke(graph_input, config)
        ended = "ok"
    except Exception as exc:
        ended = type(exc).__name__
    try:
        return nbgraph.Run.from_langgraph(app, config), ended
    except nbgraph.LangGraphHistoryError as exc:
        return None, ("no history", ended, str(exc))


def nbgraph_record(case: Any) -> Any:
    app, graph_input, config = case(api_for("nbgraph"))
    if getattr(case, "is_async", False):
        with contextlib.suppress(Exception):  # the record keeps the error
            asyncio.run(app.ainvoke(graph_input, config))
        return app.last_run
    return app.run(graph_input, config)


# --- the proof -------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.__name__.removeprefix("case_") for c in CASES])
def test_imported_record_agrees_with_nbgraph(case):
    pytest.importorskip("langgraph")
    imported, ended = langgraph_record(case)
    if imported is None and ended[0] == "build":  # no graph on LangGraph: nothing to import
        with pytest.raises(Exception, match=""):
            case(api_for("nbgraph"))
        return
    if imported is None:  # the run raised before LangGraph kept a readable checkpoint
        assert ended[1] != "ok", ended
        with pytest.raises(Exception, match=""):  # nbgraph raises before a run exists too
            nbgraph_record(case)
        return
    ours = nbgraph_record(case)
    found = differences(record_view(imported), record_view(ours))
    known = known_difference(case)  # (`@differs` on the case: what the history cannot tell)
    expected = list(known.keys) if known else []
    assert found == expected, (found, record_view(imported), record_view(ours))
    if not expected:  # and compare(), the record's own comparison, finds nothing either
        assert len(imported.compare(ours)) == 0, imported.compare(ours).to_dict("records")
    if "status" in expected:
        assert imported.warnings or imported.status == "done", imported.warnings


# --- checkpointed programs: resumes, updates, replays, forks -------------------------------


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
@pytest.mark.parametrize(
    "program", CHECKPOINT_CASES, ids=[c.__name__.removeprefix("ckpt_") for c in CHECKPOINT_CASES]
)
def test_imported_thread_agrees_with_nbgraph(program, saver, tmp_path):
    pytest.importorskip("langgraph.checkpoint.sqlite")
    known = known_difference(program)  # (where the imported thread knows more than the saver)
    expected = list(known.keys) if known else []
    lg, nb = both(program, saver=saver, folder=tmp_path, records=True)
    assert [t for t, _ in lg.threads] == [t for t, _ in nb.threads]
    for (_, imported_run), (_, our_run) in zip(lg.threads, nb.threads, strict=True):
        imported, ours = thread_view(imported_run), thread_view(our_run)
        imported["compare"] = imported_run.compare(our_run).to_dict("records")
        ours["compare"] = []
        assert differences(imported, ours) == expected, (imported, ours)


# --- an imported run in every view ------------------------------------------------------------


class Plan(TypedDict):
    log: Annotated[list, operator.add]
    total: Annotated[int, operator.add]
    note: str


def plan_program(api: Any) -> Any:
    """START -> plan -> (work x3 by Send, check) -> done: sends, a router, parallel appends."""

    def plan(state):
        return {"log": ["plan"], "note": "planned"}

    def work(arg):
        return {"log": [f"work {arg['n']}"], "total": arg["n"]}

    def check(state):
        return {"log": ["check"]}

    def fan(state):
        return [api.Send("work", {"n": n}) for n in (3, 1, 2)] + ["check"]

    graph = api.StateGraph(Plan)
    graph.add_node("plan", plan)
    graph.add_node("work", work)
    graph.add_node("check", check)
    graph.add_node("done", lambda state: {"note": f"total {state['total']}"})
    graph.add_edge(api.START, "plan")
    graph.add_conditional_edges("plan", fan, ["work", "check"])
    graph.add_edge("work", "done")
    graph.add_edge("check", "done")
    return graph


PLAN_INPUT = {"log": [], "total": 0, "note": ""}


@pytest.fixture(scope="module")
def both_runs() -> tuple[Any, Any]:
    """The plan program's run imported from LangGraph, and the same program's nbgraph run."""
    pytest.importorskip("langgraph")
    lg, nb = both(lambda api: plan_program(api).compile().invoke(PLAN_INPUT), records=True)
    (imported,), (ours,) = lg.calls, nb.calls
    return imported, ours


def test_compare_with_the_nbgraph_run_shows_no_difference(both_runs):
    imported, ours = both_runs
    assert (
        imported.output
        == ours.output
        == {
            "log": ["plan", "check", "work 3", "work 1", "work 2"],
            "total": 6,
            "note": "total 6",
        }
    )
    assert len(imported.compare(ours)) == 0
    assert len(ours.compare(imported)) == 0
    assert record_view(imported) == record_view(ours)


def test_tables_of_an_imported_run(both_runs):
    imported, ours = both_runs
    assert imported.steps[["step", "node", "kind"]].values.tolist() == (
        ours.steps[["step", "node", "kind"]].values.tolist()
    )
    assert imported.effects["reducer"].tolist() == ours.effects["reducer"].tolist()
    assert imported.states.to_dict("records") == ours.states.to_dict("records")
    history = imported.field_history("total")
    assert history["value"].tolist() == ours.field_history("total")["value"].tolist()
    diff = imported.diff(0, imported.last_step)
    assert set(diff["field"]) == {"log", "total", "note"}
    assert imported.state_at(("done", 0))["total"] == 6
    assert imported.custom.empty and imported.warnings == []


def test_writers_and_remerge_of_an_imported_run(both_runs):
    imported, ours = both_runs
    assert imported.writers().to_dict("records") == ours.writers().to_dict("records")
    again = imported.remerge({"total": "overwrite"})
    other = ours.remerge({"total": "overwrite"})
    assert (again.status, type(again.error).__name__) == (other.status, type(other.error).__name__)
    assert imported.remerge({"log": "append"}).output == ours.remerge({"log": "append"}).output


def test_drawings_and_inspector_of_an_imported_run(both_runs):
    imported, _ = both_runs
    source = imported.draw().source
    assert all(name in source for name in ("plan", "work", "check", "done"))
    assert "task:2:1:work" in imported.draw_tree().source or "work" in imported.draw_tree().source
    assert "text/html" in imported._repr_mimebundle_()
    pytest.importorskip("ipywidgets")
    assert imported.inspect() is not None


def test_save_and_load_an_imported_run(both_runs, tmp_path):
    imported, _ = both_runs
    back = nbgraph.Run.load(imported.save(tmp_path / "imported.json"))
    assert record_view(back) == record_view(imported)
    assert back.output == imported.output


def test_a_reducer_from_the_channels():
    pytest.importorskip("langgraph")
    from langgraph.channels import EphemeralValue
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph

    class S(MessagesState):
        flash: Annotated[str, EphemeralValue]
        seen: Annotated[list, lambda old, new: old + new]

    graph = StateGraph(S)
    graph.add_node("a", lambda s: {"messages": [("ai", "hi")], "flash": "x", "seen": [1]})
    graph.add_node("b", lambda s: {"seen": [s.get("flash")]})
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    app = graph.compile(checkpointer=InMemorySaver())
    app.invoke({"messages": [("user", "hello")]}, THREAD)
    run = nbgraph.Run.from_langgraph(app, THREAD)
    fields = run.graph.fields
    ours = nbgraph.StateGraph(nbgraph.MessagesState).add_node("a", lambda s: {})
    ours = ours.add_edge(nbgraph.START, "a").compile()
    assert fields["messages"].reducer_name == ours.spec.fields["messages"].reducer_name
    assert (fields["flash"].reducer_name, fields["seen"].reducer_name) == ("ephemeral", "<lambda>")
    assert run.output["seen"] == [1, "x"] and "flash" not in run.output
    assert [m.content for m in run.output["messages"]] == ["hello", "hi"]
    assert run.warnings == []


# --- nbgraph.trace ----------------------------------------------------------------------------


def test_trace_runs_an_app_without_a_checkpointer(both_runs):
    _, ours = both_runs
    app = plan_program(api_for("langgraph")).compile()
    run = nbgraph.trace(app, PLAN_INPUT)
    assert record_view(run) == record_view(ours)
    assert app.checkpointer is None  # the app given is left as it was


def test_trace_keeps_the_error_the_history_cannot_tell():
    pytest.importorskip("langgraph")
    case = next(c for c in CASES if c.__name__ == "case_self_loop_recursion_limit_n_minus_1")
    app, graph_input, config = case(api_for("langgraph"))
    run = nbgraph.trace(app, graph_input, config)
    assert run.status == "failed"
    assert type(run.error).__name__ == "GraphRecursionError"
    ours = nbgraph_record(case)
    assert record_view(run) == record_view(ours)


def test_trace_with_the_apps_own_checkpointer_needs_a_thread():
    pytest.importorskip("langgraph")
    from langgraph.checkpoint.memory import InMemorySaver

    app = plan_program(api_for("langgraph")).compile(checkpointer=InMemorySaver())
    with pytest.raises(nbgraph.LangGraphHistoryError, match="thread_id"):
        nbgraph.trace(app, PLAN_INPUT)
    run = nbgraph.trace(app, PLAN_INPUT, THREAD)
    assert run.output["total"] == 6 and run.status == "done"


# --- bad input --------------------------------------------------------------------------------


def test_not_a_langgraph_graph():
    app = plan_program(api_for("nbgraph")).compile()
    with pytest.raises(nbgraph.NotALangGraphError, match=r"compiled LangGraph graph.*app\.run"):
        nbgraph.Run.from_langgraph(app, THREAD)
    with pytest.raises(nbgraph.NotALangGraphError, match=r"got builtins\.object"):
        nbgraph.trace(object(), {})
    assert issubclass(nbgraph.NotALangGraphError, TypeError)


def test_no_checkpointer_no_thread_no_checkpoints():
    pytest.importorskip("langgraph")
    from langgraph.checkpoint.memory import InMemorySaver

    bare = plan_program(api_for("langgraph")).compile()
    with pytest.raises(nbgraph.LangGraphHistoryError, match=r"without a checkpointer.*trace"):
        nbgraph.Run.from_langgraph(bare, THREAD)
    app = plan_program(api_for("langgraph")).compile(checkpointer=InMemorySaver())
    with pytest.raises(nbgraph.LangGraphHistoryError, match="names no thread"):
        nbgraph.Run.from_langgraph(app, {})
    with pytest.raises(nbgraph.LangGraphHistoryError, match="'nobody' has no checkpoints"):
        nbgraph.Run.from_langgraph(app, {"configurable": {"thread_id": "nobody"}})
    app.invoke(PLAN_INPUT, THREAD)
    missing = {"configurable": {"thread_id": "t", "checkpoint_id": "not-there"}}
    with pytest.raises(nbgraph.LangGraphHistoryError, match="no checkpoint 'not-there'"):
        nbgraph.Run.from_langgraph(app, missing)


def test_a_history_without_task_results():
    pytest.importorskip("langgraph")
    from langgraph.checkpoint.memory import InMemorySaver

    app = plan_program(api_for("langgraph")).compile(checkpointer=InMemorySaver())
    app.invoke(PLAN_INPUT, THREAD)

    class OldTask:  # a PregelTask as LangGraph before 0.3 had it: no result
        def __init__(self, task):
            self.id, self.name, self.path = task.id, task.name, task.path

    class OldSnapshot:
        def __init__(self, snap):
            self.__dict__.update(snap._asdict())
            self.tasks = tuple(OldTask(t) for t in snap.tasks)

    class OldApp:
        builder, checkpointer = app.builder, app.checkpointer

        def get_state_history(self, config):
            return (OldSnapshot(s) for s in app.get_state_history(config))

    OldApp.__module__ = "langgraph.pregel"
    with pytest.raises(nbgraph.LangGraphHistoryError, match=r"no task results.*upgrade"):
        nbgraph.Run.from_langgraph(OldApp(), THREAD)


# --- the benchmark, the README, the extra ---------------------------------------------------


def test_import_benchmark_quick(monkeypatch, capsys):
    pytest.importorskip("langgraph")
    import sys
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    monkeypatch.delitem(sys.modules, "langgraph_import", raising=False)
    import langgraph_import

    langgraph_import.main(["--quick"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if " steps: run " in line]
    assert len(rows) == 2, out
    assert all(float(row.split(" = ")[1].split("x")[0]) > 0 for row in rows), out


def test_readme_langgraph_section_starts_with_the_one_line():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = (root / "README.md").read_text()
    section = text.split("## nbgraph and LangGraph", 1)[1].lstrip()
    assert section.startswith("**Already have a LangGraph app?**")
    first = section.split("\n\n", 1)[0]
    assert "`run = nbgraph.Run.from_langgraph(app, config)`" in first
    pyproject = (root / "pyproject.toml").read_text()
    assert 'langgraph = ["langgraph>=1.0,<2"]' in pyproject


@pytest.mark.parametrize("with_side", [False, True], ids=["alone", "with_a_finished_sibling"])
def test_a_thread_paused_by_interrupt_agrees_with_nbgraphs_paused_run(with_side):
    pytest.importorskip("langgraph")
    app = asking_graph(api_for("langgraph"), with_side)
    app.invoke({"log": []}, THREAD)
    imported = nbgraph.Run.from_langgraph(app, THREAD)
    ours = asking_graph(api_for("nbgraph"), with_side)
    ours = ours.run({"log": []}, THREAD)
    assert imported.status == ours.status == "interrupted"
    assert record_view(imported) == record_view(ours)
    asked = [task for task in imported.log.tasks() if task.interrupts]
    assert [(t.node, t.interrupts[0].value) for t in asked] == [("ask", "name?")]


def test_a_subgraph_node_is_imported_with_its_subrun():
    pytest.importorskip("langgraph")
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, StateGraph

    class S(TypedDict):
        log: Annotated[list, operator.add]

    inner = StateGraph(S)
    inner.add_node("x", lambda s: {"log": ["x"]})
    inner.add_edge(START, "x")
    outer = StateGraph(S)
    outer.add_node("sub", inner.compile())
    outer.add_edge(START, "sub")
    app = outer.compile(checkpointer=InMemorySaver())
    app.invoke({"log": []}, THREAD)
    run = nbgraph.Run.from_langgraph(app, THREAD)
    assert run.output == {"log": ["x"]}
    (sub,) = run.subruns
    assert (sub.parent, sub.task, sub.status) == (run, "1:0:sub", "done")
    assert sub.output == {"log": ["x"]}
    assert list(sub.steps.node) == ["x"]
    assert not [note for note in run.warnings if "subgraph" in note]


def test_a_thread_named_by_a_uuid():
    pytest.importorskip("langgraph")
    import uuid

    from langgraph.checkpoint.memory import InMemorySaver

    app = plan_program(api_for("langgraph")).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4()}}  # LangGraph files it as text
    app.invoke(PLAN_INPUT, config)
    run = nbgraph.Run.from_langgraph(app, config)
    assert run.output == app.get_state(config).values and len(run.log.steps) == 4


def test_forks_of_an_imported_thread_are_branches_of_its_tree():
    pytest.importorskip("langgraph")
    program = next(
        p for p in CHECKPOINT_CASES if p.__name__ == "ckpt_fork_twice_from_one_checkpoint"
    )
    api = api_for("langgraph")
    apps = capture_apps(api)
    program(api)
    run = nbgraph.Run.from_langgraph(apps[-1], THREAD)
    forks = [node for node in run.tree.nodes.values() if node.kind == "fork"]
    assert len(forks) == len(run.log.branches) > 0
    for node in forks:
        shown = apps[-1].get_state(
            {"configurable": {"thread_id": "t", "checkpoint_id": node.id[5:]}}
        )
        assert run.state_at(node.id) == shown.values
    assert run.output == apps[-1].get_state(THREAD).values
    source = run.draw_tree().source  # one connected tree: a box per fork, each reached
    boxes = re.findall(r"^\t(t\d+) \[label=\"([^\"]*)", source, re.M)
    edges = re.findall(r"^\t(t\d+) -> (t\d+)", source, re.M)
    assert len(edges) == len(boxes) - 1
    assert {child for _, child in edges} == {box for box, _ in boxes[1:]}
    assert sum(" branch, step " in label for _, label in boxes) == len(forks)


def test_new_input_over_a_paused_thread_drops_the_paused_step():
    pytest.importorskip("langgraph")
    app = asking_graph(api_for("langgraph"), with_side=True)
    app.invoke({"log": []}, THREAD)
    app.invoke({"log": ["again"]}, THREAD)  # not a resume: a new input, paused again
    run = nbgraph.Run.from_langgraph(app, THREAD)
    assert [(s.step, s.applied, [t.node for t in s.tasks]) for s in run.log.steps] == [
        (0, True, ["__start__"]),
        (2, True, ["__start__"]),
        (3, False, ["ask", "side"]),
    ]
    assert run.status == "interrupted" and run.output == {"log": ["again"]}


def test_a_channel_kind_read_as_overwrite_is_said():
    pytest.importorskip("langgraph")
    from langgraph.channels import AnyValue
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, StateGraph

    class S(TypedDict):
        pick: Annotated[str, AnyValue]
        log: Annotated[list, operator.add]

    graph = StateGraph(S)
    graph.add_node("a", lambda s: {"pick": "a", "log": ["a"]})
    graph.add_edge(START, "a")
    app = graph.compile(checkpointer=InMemorySaver())
    app.invoke({"log": []}, THREAD)
    run = nbgraph.Run.from_langgraph(app, THREAD)
    assert run.output == {"pick": "a", "log": ["a"]}
    assert run.warnings == [
        "field 'pick' is a LangGraph AnyValue channel; the record folds its writes as "
        "overwrite (the values shown are LangGraph's where they differ)."
    ]


@pytest.mark.parametrize("accumulate", [True, False])
def test_a_topic_channel(accumulate):
    pytest.importorskip("langgraph")
    from langgraph.channels import Topic
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, StateGraph

    class S(TypedDict):
        t: Annotated[list, Topic(str, accumulate=accumulate)]
        n: int

    graph = StateGraph(S)
    graph.add_node("a", lambda s: {"t": ["a1", "a2"], "n": 1})
    graph.add_node("b", lambda s: {"t": "b", "n": 2})
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    app = graph.compile(checkpointer=InMemorySaver())
    final = app.invoke({"n": 0}, THREAD)
    run = nbgraph.Run.from_langgraph(app, THREAD)
    assert run.output == final
    rows = run.effects[run.effects["field"] == "t"][["step", "after"]].values.tolist()
    if accumulate:
        assert rows == [[1, ["a1", "a2"]], [2, ["a1", "a2", "b"]]] and run.warnings == []
    else:  # LangGraph's value each step; the fold that differs is said
        assert rows[:2] == [[1, ["a1", "a2"]], [2, ["b"]]]
        assert len(run.warnings) == 1 and "'t'" in run.warnings[0]
