"""Checkpointed runs: a checkpoint per superstep, history, resume, replay, one run per thread."""

import re
import threading
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, MemorySaver, Mutation, Run, SqliteSaver, StateGraph
from nbgraph.checkpoint import ThreadBusyError
from nbgraph.codec.values import UnavailableFunctionError
from nbgraph.errors import GraphMismatchError
from nbgraph.types import MISSING


class S(TypedDict):
    log: Annotated[list, "append"]
    n: int


def config(thread: str = "t1", **extra) -> dict:
    return {"configurable": {"thread_id": thread, **extra}}


@pytest.fixture(params=["memory", "sqlite"])
def saver(request, tmp_path):
    if request.param == "memory":
        return MemorySaver()
    return SqliteSaver(tmp_path / "threads.sqlite")


def fan_app(saver, calls: list, fail: dict):
    def node(name: str):
        def run(state):
            calls.append(name)
            if fail.get(name):
                raise RuntimeError(f"{name} is down")
            return {"log": [name], "n": state["n"] + 1} if name == "a" else {"log": [name]}

        return run

    return (
        StateGraph(S)
        .add_node("a", node("a"))
        .add_node("b", node("b"))
        .add_node("c", node("c"))
        .add_node("d", node("d"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("a", "c")
        .add_edge(["b", "c"], "d")
        .compile(checkpointer=saver)
    )


def test_a_checkpointed_run_needs_a_thread_id(saver):
    app = fan_app(saver, [], {})
    with pytest.raises(ValueError, match="thread_id"):
        app.invoke({"log": [], "n": 0})
    empty = app.get_state(config("never-ran"))  # LangGraph's snapshot of a thread with none
    assert (empty.values, empty.next, empty.metadata, empty.parent_config) == ({}, (), None, None)


def test_one_checkpoint_per_superstep_newest_first_and_steps_continue(saver):
    app = fan_app(saver, [], {})
    assert app.invoke({"log": [], "n": 0}, config()) == {"log": ["a", "b", "c", "d"], "n": 1}
    history = list(app.get_state_history(config()))
    assert [h.metadata["step"] for h in history] == [3, 2, 1, 0, -1]  # as LangGraph keeps it
    assert [h.metadata["source"] for h in history] == ["loop", "loop", "loop", "loop", "input"]
    assert history[-1].values == {"log": []} and history[-1].next == ("__start__",)
    assert history[-1].parent_config is None and history[-2].parent_config == history[-1].config
    assert history[2].next == ("b", "c") and history[0].next == ()
    assert history[1].values == {"log": ["a", "b", "c"], "n": 1}
    assert history[0].parent_config == history[1].config
    latest = app.get_state(config())
    assert latest.values == {"log": ["a", "b", "c", "d"], "n": 1}
    assert (
        latest.config["configurable"]["checkpoint_id"]
        == history[0].config["configurable"]["checkpoint_id"]
    )
    # new input on the same thread goes through the reducers onto its state
    assert app.invoke({"log": ["more"]}, config())["log"][-5:] == ["more", "a", "b", "c", "d"]
    steps = [h.metadata["step"] for h in app.get_state_history(config())]
    assert steps == [8, 7, 6, 5, 4, 3, 2, 1, 0, -1]  # input checkpoint 4, START 5, a, b+c, d


def test_resume_after_a_failure_does_not_rerun_finished_siblings(saver):
    calls, fail = [], {"c": True}
    app = fan_app(saver, calls, fail)
    with pytest.raises(RuntimeError, match="c is down"):
        app.invoke({"log": [], "n": 0}, config())
    assert calls == ["a", "b", "c"] or calls == ["a", "c", "b"]
    state = app.get_state(config())
    # as in LangGraph: only the unfinished task is next; b's pending writes are shown applied
    assert state.next == ("c",) and state.values == {"log": ["a", "b"], "n": 1}
    fail["c"] = False
    assert app.invoke(None, config()) == {"log": ["a", "b", "c", "d"], "n": 1}
    assert sorted(calls[3:]) == ["c", "d"]  # b's writes came from the checkpoint
    resumed = app.last_run
    assert resumed.tree["reset:1:" + state.config["configurable"]["checkpoint_id"]].reason == (
        "resume"
    )
    assert resumed.output == {"log": ["a", "b", "c", "d"], "n": 1}


def test_replay_from_a_past_checkpoint_reruns_only_what_follows(saver):
    calls = []
    app = fan_app(saver, calls, {})
    app.invoke({"log": [], "n": 0}, config())
    after_a = next(h for h in app.get_state_history(config()) if h.metadata["step"] == 1)
    calls.clear()
    past = after_a.config["configurable"]["checkpoint_id"]
    assert app.invoke(None, config(checkpoint_id=past)) == {"log": ["a", "b", "c", "d"], "n": 1}
    assert sorted(calls) == ["b", "c", "d"]
    history = list(app.get_state_history(config()))
    assert len(history) == 8  # the replay branched from step 1 (a "fork" checkpoint), then 2, 3
    assert [h.metadata["step"] for h in history[:3]] == [4, 3, 2]  # LangGraph: the fork is a step
    assert history[2].metadata["source"] == "fork"
    assert history[0].parent_config["configurable"]["checkpoint_id"] != past
    with pytest.raises(ValueError, match="no checkpoint 'nope'"):
        app.invoke(None, config(checkpoint_id="nope"))


def test_invoke_none_on_a_new_thread_is_empty_input(saver):
    from nbgraph import EmptyInputError

    with pytest.raises(EmptyInputError, match="no checkpoint"):
        fan_app(saver, [], {}).invoke(None, config("fresh"))


def test_the_same_thread_twice_at_once_is_refused_other_threads_run(saver):
    entered, release = threading.Event(), threading.Event()

    def slow(state):
        entered.set()
        assert release.wait(10)
        return {"n": 1}

    app = StateGraph(S).add_node("slow", slow).add_edge(START, "slow").compile(checkpointer=saver)
    errors = []
    worker = threading.Thread(
        target=lambda: errors.append(app.invoke({"log": [], "n": 0}, config("busy")))
    )
    worker.start()
    assert entered.wait(10)
    try:
        with pytest.raises(ThreadBusyError, match="busy"):
            app.invoke({"log": [], "n": 0}, config("busy"))
        quick = StateGraph(S).add_node("q", lambda s: {"n": 2}).add_edge(START, "q")
        assert quick.compile(checkpointer=saver).invoke({"n": 0}, config("other"))["n"] == 2
    finally:
        release.set()
        worker.join(10)
    assert errors == [{"log": [], "n": 1}]


class Bump(Mutation):
    def __init__(self, by: int) -> None:
        self.field, self.by = "n", by

    def apply(self, value):
        return (0 if value is MISSING else value) + self.by


def test_mutation_writes_are_kept_as_values_and_long_threads_store_deltas(tmp_path):
    saver = SqliteSaver(tmp_path / "long.sqlite")
    app = (
        StateGraph(S)
        .add_node("tick", lambda s: {"log": [s["n"]], "n": Bump(1)})
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= 300 else "tick")
        .compile(checkpointer=saver)
    )
    app.invoke({"log": [], "n": 0}, config("long", recursion_limit=400) | {"recursion_limit": 400})
    reopened = StateGraph(S).add_node("tick", lambda s: None).add_edge(START, "tick")
    state = reopened.compile(checkpointer=SqliteSaver(tmp_path / "long.sqlite")).get_state(
        config("long")
    )
    assert state.values["n"] == 300 and state.values["log"] == list(range(300))
    records = saver.history("long")
    snapshots = [r for r in records if r.snapshot is not None]
    assert len(records) == 302 and len(snapshots) < 15  # deltas, with a few snapshots


def test_the_record_of_a_thread_is_rebuilt_from_its_saver_alone(tmp_path):
    import subprocess
    import sys
    import textwrap

    from nbgraph import Run

    path = tmp_path / "record.sqlite"
    app = fan_app(SqliteSaver(path), [], {})
    app.invoke({"log": [], "n": 0}, config("r"))
    live = app.last_run
    rebuilt = Run.from_checkpointer(SqliteSaver(path), "r")
    columns = ["step", "field", "reducer", "before", "writes", "after", "changed"]
    assert rebuilt.effects[columns].equals(live.effects[columns])
    assert list(rebuilt.steps.node) == list(live.steps.node)
    assert rebuilt.output == live.output and rebuilt.draw().source == live.draw().source
    code = textwrap.dedent(
        f"""
        from nbgraph import Run, SqliteSaver
        run = Run.from_checkpointer(SqliteSaver({str(path)!r}), "r")
        print(run.state_at(2)["log"], len(run.effects))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:3] == ["['a',", "'b',", "'c']"]
    with pytest.raises(ValueError, match="no checkpoints"):
        Run.from_checkpointer(SqliteSaver(path), "missing")


def test_transient_fields_live_in_the_run_but_are_never_saved_and_are_rebuilt(tmp_path):
    from nbgraph import Transient

    made = []

    def fresh_cache():
        made.append(1)
        return {"warm": False}

    class T(TypedDict):
        log: Annotated[list, "append"]
        cache: Annotated[dict, Transient(fresh_cache)]

    def use(state):
        assert isinstance(state["cache"], dict)  # the node sees it
        return {"cache": {"warm": True, "handle": object()}, "log": [state["cache"]["warm"]]}

    path = tmp_path / "transient.sqlite"
    app = StateGraph(T).add_node("use", use).add_edge(START, "use").add_edge("use", END)
    first = app.compile(checkpointer=SqliteSaver(path))
    assert first.invoke({"log": []}, config("tr")) == {"log": [False]}  # not in the output
    assert first.last_run.state_at(1)["cache"]["warm"] is True  # but in the run's record
    saved = SqliteSaver(path).history("tr")
    assert all("cache" not in (r.snapshot or {}) for r in saved)
    assert all("cache" not in str(r.payload["tasks"]) for r in saved)
    made.clear()
    again = app.compile(checkpointer=SqliteSaver(path))
    assert again.get_state(config("tr")).values["cache"] == {"warm": False}  # rebuilt
    assert made == [1]


def test_a_rebuilt_record_shows_the_threads_forks_as_branches_of_its_tree():
    from nbgraph import Run

    saver = MemorySaver()
    app = fan_app(saver, [], {})
    app.invoke({"log": [], "n": 0}, config("f"))
    after_a = next(h for h in app.get_state_history(config("f")) if h.metadata["step"] == 1)
    forked = app.update_state(after_a.config, {"log": ["edited"]}, as_node="b")
    app.invoke(None, forked)  # the fork continues: c never ran there, so d waits... then ends
    main = next(h for h in app.get_state_history(config("f")) if h.metadata["step"] == 3)
    run = Run.from_checkpointer(saver, "f", main.config["configurable"]["checkpoint_id"])
    forks = [node for node in run.tree if node.kind == "fork"]
    assert forks and forks[0].parents == ("merge:1",)  # the fork grows from step 1
    assert forks[0].reason == "update" and dict(forks[0].writes) == {"log": ["edited"]}
    assert run.state_at(forks[0]) == app.get_state(forked).values
    assert "update branch, step 2" in run.draw_tree().source
    assert list(run.steps.node) == ["a", "b", "c", "d"]  # the tables are the chosen branch's


def test_history_in_one_pass_equals_each_checkpoint_restored_on_its_own(saver):
    app = fan_app(saver, [], {})
    app.invoke({"log": [], "n": 0}, config())
    past = next(h for h in app.get_state_history(config()) if h.metadata["step"] == 1)
    forked = app.update_state(past.config, {"log": ["edited"]}, as_node="a")
    app.invoke(None, forked)
    app.invoke({"log": ["again"], "n": 10}, config())
    history = list(app.get_state_history(config()))
    assert len(history) > 8
    for snapshot in history:  # forks, replays and new input included
        alone = app.get_state(snapshot.config)
        assert (snapshot.values, snapshot.next, snapshot.metadata) == (
            alone.values,
            alone.next,
            alone.metadata,
        )


# --- a thread reopened in another process, whatever its reducers ----------------------------

REOPEN_WRITER = """
import operator, sys
from pathlib import Path
import nbgraph
from nbgraph import START, SqliteSaver, StateGraph, register_reducer

@register_reducer("keep_max_reopen")
def keep_max(old, new):
    return new if old is nbgraph.MISSING or new > old else old

def dedupe(old, new):  # grows, but is not old + new
    return old + [item for item in new if item not in old]

def reducer_of(kind):
    if kind == "langgraph add_messages":
        from langgraph.graph.message import add_messages
        return add_messages, lambda i: [("user", f"m{i}")]
    return {
        "operator.add": (operator.add, lambda i: [i]),
        "operator.or_ on sets": (operator.or_, lambda i: {i}),
        "lambda": (lambda a, b: a + b, lambda i: [i]),
        "user function": (dedupe, lambda i: [i, 0]),
        "dict lambda": (lambda a, b: {**a, **b}, lambda i: {f"k{i}": i}),
        "registered name": ("keep_max_reopen", lambda i: i),
        "add_messages": (nbgraph.add_messages, lambda i: [("user", f"m{i}")]),
        "built-in name": ("append", lambda i: [i]),
        "built-in max": (max, lambda i: i),
    }[kind]

def run_and_save(kind, db, file):
    reducer, wrap = reducer_of(kind)
    app = (
        StateGraph(dict, reducers={"f": reducer})
        .add_node("a", lambda s: {"f": wrap(1)})
        .add_node("b", lambda s: {"f": wrap(2)})
        .add_node("c", lambda s: {"f": wrap(3)})
        .add_node("d", lambda s: {"f": wrap(4), "n": 1})
        .add_edge(START, "a").add_edge("a", "b").add_edge("a", "c").add_edge(["b", "c"], "d")
        .compile(checkpointer=SqliteSaver(db))
    )
    app.invoke({"f": wrap(0), "n": 0}, {"configurable": {"thread_id": kind}})
    app.last_run.save(file)
    return app.last_run

db, folder, kinds = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
for number, kind in enumerate(kinds):
    print(fingerprint(run_and_save(kind, db, folder / f"{number}.json")))
"""

FINGERPRINT = """
def fingerprint(run):
    columns = ["step", "field", "reducer", "before", "writes", "after", "changed"]
    effects = run.effects[columns].values.tolist()
    states = [run.state_at(step) for step in range(run.last_step + 1)]
    return repr((effects, states, run.states.values.tolist(), run.output))
"""

REOPEN_READER = """
import sys
from nbgraph import Run, SqliteSaver

from pathlib import Path

db, folder, kinds = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
if "langgraph add_messages" in kinds:  # its messages' class; LangGraph is not loaded
    from langchain_core.messages import HumanMessage  # noqa: F401 (loading imports nothing)
for number, kind in enumerate(kinds):
    print(fingerprint(Run.from_checkpointer(SqliteSaver(db), kind)))
    print(fingerprint(Run.load(folder / f"{number}.json")))
assert "langgraph" not in sys.modules
"""

REOPEN_KINDS = [
    "operator.add",
    "operator.or_ on sets",
    "lambda",
    "user function",
    "dict lambda",
    "registered name",
    "add_messages",
    "langgraph add_messages",
    "built-in name",
    "built-in max",
]


def _python(code: str, *args: str) -> str:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[3])
    env = {**os.environ, "PYTHONPATH": root, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_thread_and_a_run_file_reopen_in_a_fresh_process_whatever_the_reducer(tmp_path):
    kinds = list(REOPEN_KINDS)
    try:
        import langgraph  # noqa: F401
    except ImportError:
        kinds.remove("langgraph add_messages")
    db = str(tmp_path / "threads.sqlite")
    live = _python(FINGERPRINT + REOPEN_WRITER, db, str(tmp_path), *kinds).splitlines()
    reopened = _python(FINGERPRINT + REOPEN_READER, db, str(tmp_path), *kinds).splitlines()
    assert len(reopened) == 2 * len(kinds)
    rows = zip(kinds, live, reopened[::2], reopened[1::2], strict=True)
    for kind, recorded, rebuilt, loaded in rows:
        if kind == "langgraph add_messages":  # it gives messages fresh ids at each replay
            recorded, rebuilt, loaded = (
                re.sub(r"id='[^']*'", "id=?", text) for text in (recorded, rebuilt, loaded)
            )
        assert rebuilt == recorded, f"{kind}: the thread rebuilt differs from the run"
        assert loaded == recorded, f"{kind}: the run file loaded differs from the run"


def loop_app(saver, reducer, wrap, steps: int = 50):
    def tick(state):
        return {"f": wrap(state["n"]), "n": state["n"] + 1}

    return (
        StateGraph(dict, reducers={"f": reducer})
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= steps else "tick")
        .compile(checkpointer=saver)
    )


def extend_in_place(old, new):  # a user reducer that grows the old list itself
    old.extend(new)
    return old


@pytest.mark.parametrize(
    ("reducer", "wrap", "kind"),
    [
        (lambda a, b: a + b, lambda i: [f"item-{i}"], "extend"),
        (extend_in_place, lambda i: [f"item-{i}"], "extend"),
        (lambda a, b: a + b, lambda i: f"{i},", "extend"),
        (lambda a, b: {**a, **b}, lambda i: {f"k{i}": i}, "update"),
        (lambda a, b: a | b, lambda i: frozenset([i]), "union"),
    ],
    ids=["lambda", "in-place function", "string", "dict", "frozenset"],
)
def test_a_growing_field_with_a_foreign_reducer_keeps_only_what_each_step_added(
    saver, reducer, wrap, kind
):
    app = loop_app(saver, reducer, wrap)
    app.invoke({"f": wrap(-1), "n": 0}, config("grow", recursion_limit=100))
    records = list(reversed(saver.history("grow")))
    assert records[0].source == "input" and "kept" not in records[0].payload  # nothing applied
    kept = [r.payload.get("kept", {}).get("f") for r in records[1:]]
    assert kept[0] == ["value", wrap(-1)]  # the first value is whole
    assert [k[0] for k in kept[1:]] == [kind] * 50
    assert [k[1] for k in kept[1:]] == [wrap(i) for i in range(50)]  # only what was added
    rebuilt = Run.from_checkpointer(saver, "grow")
    live = app.last_run
    assert rebuilt.output == live.output == app.get_state(config("grow")).values
    assert [rebuilt.state_at(s) for s in (0, 7, 50)] == [live.state_at(s) for s in (0, 7, 50)]


def test_a_value_that_does_not_only_grow_is_kept_whole(saver):
    app = loop_app(saver, lambda a, b: b + a, lambda i: [i], steps=3)  # prepends
    app.invoke({"f": [], "n": 0}, config("whole"))
    kept = [r.payload.get("kept", {}).get("f") for r in reversed(saver.history("whole"))]
    assert kept == [None, ["value", []], ["extend", [0]], ["value", [1, 0]], ["value", [2, 1, 0]]]
    assert Run.from_checkpointer(saver, "whole").output == {"f": [2, 1, 0], "n": 3}


def test_nbgraph_and_operator_reducers_keep_nothing(saver):
    import operator

    for name, reducer in (("append", "append"), ("add", operator.add)):
        app = loop_app(saver, reducer, lambda i: [i], steps=3)
        app.invoke({"f": [], "n": 0}, config(name))
        assert not any("kept" in r.payload for r in saver.history(name))


def test_a_thread_with_a_lambda_reducer_is_rebuilt_across_invokes_and_a_fork(saver):
    app = loop_app(saver, lambda a, b: a + b, lambda i: [i], steps=3)
    app.invoke({"f": [], "n": 0}, config("again"))
    app.invoke({"f": ["x"], "n": 1}, config("again"))  # new input on top of the state
    latest = app.get_state(config("again"))
    assert Run.from_checkpointer(saver, "again").output == latest.values
    past = list(app.get_state_history(config("again")))[-2]
    forked = app.update_state(past.config, {"f": ["forked"]}, as_node="tick")
    rebuilt = Run.from_checkpointer(saver, "again", forked["configurable"]["checkpoint_id"])
    assert rebuilt.output == app.get_state(forked).values
    assert rebuilt.output["f"][-1] == "forked"


def test_graph_given_to_from_checkpointer_brings_the_real_reducers(saver):
    app = (
        StateGraph(dict, reducers={"f": lambda a, b: a + b})
        .add_node("a", lambda s: {"f": [1]})
        .add_node("b", lambda s: {"f": [2]})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile(checkpointer=saver)
    )
    app.invoke({"f": [0]}, config("real"))
    without = Run.from_checkpointer(saver, "real")
    with pytest.raises(UnavailableFunctionError, match=r"graph=app"):
        without.graph.fields["f"].reducer.fn([0], [1])
    assert without.order_sensitivity().empty  # only the values after were kept
    assert without.remerge({"f": "append"}).output == {"f": [0, 1, 2]}
    rebuilt = Run.from_checkpointer(saver, "real", graph=app)
    assert rebuilt.graph.fields["f"].reducer is app.spec.fields["f"].reducer
    assert rebuilt.output == without.output == {"f": [0, 1, 2]}
    row = rebuilt.order_sensitivity().iloc[0]
    assert (row.result_a, row.result_b) == ([0, 1, 2], [0, 2, 1])


def test_a_graph_that_is_not_the_recorded_one_is_refused_naming_the_difference(saver):
    app = loop_app(saver, lambda a, b: a + b, lambda i: [i], steps=2)
    app.invoke({"f": [], "n": 0}, config("other"))
    other = (
        StateGraph(dict, reducers={"f": "append", "g": "append"})
        .add_node("tock", lambda s: None)
        .add_edge(START, "tock")
        .compile()
    )
    with pytest.raises(GraphMismatchError) as caught:
        Run.from_checkpointer(saver, "other", graph=other)
    message = str(caught.value)
    assert "thread 'other'" in message and "['tick'] are missing" in message
    assert "['tock'] were not recorded" in message and "['g'] were not recorded" in message
    assert "field 'f' has reducer 'append', recorded '<lambda>'" in message
    assert isinstance(caught.value, ValueError)
