"""Differential tests: time travel into subgraphs, on LangGraph and nbgraph.

A subgraph compiled with `checkpointer=True` keeps its state across its parent's runs. When
the parent travels back in time (invoked from a past checkpoint, or from a fork
`update_state` made of one), that subgraph starts from the state it had when the parent's
checkpoint was made, not from the state a later run grew; later runs of it in the same
parent run (a loop) see what this run made, and the parent's next plain run sees the
replay's state. A subgraph's own checkpoint, read from its task's `state` in
`get_state(config, subgraphs=True)`, can be handed back to the parent's `invoke`: the parent
replays the step that ran it, and the subgraph resumes at that checkpoint (its finished nodes
do not run again, its question is asked again). Each program returns what it observed; ids
by structure only (`Ids`).
"""

# No `from __future__ import annotations`: state classes are read at run time by both engines.

import asyncio
import operator
from typing import Annotated, Any, TypedDict

import pytest

from tests.support.harness import Ids, Programs, both, plain

pytestmark = pytest.mark.langgraph

PROGRAMS = Programs()
program = PROGRAMS.add


class Notes(TypedDict):
    notes: Annotated[list, operator.add]


class Outer(TypedDict):
    trail: Annotated[list, operator.add]


def _keeper(api: Any, seen: list, label: str, inner: Any = None) -> Any:
    """A stateful subgraph (`checkpointer=True`) whose node records how many notes it held
    when it ran, then adds one; with `inner`, that subgraph runs after it."""
    field = f"{label}_notes"
    state = TypedDict(f"{label}_State", {field: Annotated[list, operator.add]})

    def keep(s):
        seen.append((label, len(s[field])))
        return {field: [label]}

    builder = api.StateGraph(state).add_node("keep", keep).add_edge(api.START, "keep")
    if inner is not None:
        builder.add_node("deeper", inner).add_edge("keep", "deeper")
    return builder.compile(checkpointer=True)


def _parent(api: Any, *subgraphs: tuple[str, Any], saver: Any = None) -> Any:
    """`START -> stamp -> each subgraph node` (in parallel when several)."""
    builder = api.StateGraph(Outer).add_node("stamp", lambda s: {"trail": ["stamp"]})
    builder.add_edge(api.START, "stamp")
    for name, sub in subgraphs:
        builder.add_node(name, sub).add_edge("stamp", name)
    return builder.compile(checkpointer=saver or api.saver())


def _run_twice_then(api: Any, app: Any, seen: list, travel: str) -> dict[str, Any]:
    """Two runs on one thread, then a replay (or a fork) from the second run's start, then a
    third run: what the subgraphs held each time."""
    config = {"configurable": {"thread_id": "keep"}}
    app.invoke({"trail": []}, config)
    app.invoke({"trail": []}, config)
    second = next(s for s in app.get_state_history(config) if s.next == ("stamp",))
    out: dict[str, Any] = {"runs": sorted(seen)}
    seen.clear()
    target = second.config
    if travel == "fork":
        target = app.update_state(second.config, {"trail": ["forked"]})
    app.invoke(None, target)
    out["travel"] = sorted(seen)
    seen.clear()
    app.invoke({"trail": []}, config)
    out["after"] = sorted(seen)
    out["final"] = plain(app.get_state(config).values)
    return out


@program
def stateful_subgraph_replayed_from_the_second_run(api):
    seen: list = []
    app = _parent(api, ("keeper", _keeper(api, seen, "k")))
    return _run_twice_then(api, app, seen, "replay")


@program
def stateful_subgraph_forked_from_the_second_run(api):
    seen: list = []
    app = _parent(api, ("keeper", _keeper(api, seen, "k")))
    return _run_twice_then(api, app, seen, "fork")


@program
def two_levels_of_stateful_subgraphs_replayed(api):
    seen: list = []
    inner = _keeper(api, seen, "inner")
    app = _parent(api, ("outer", _keeper(api, seen, "outer", inner)))
    return _run_twice_then(api, app, seen, "replay")


@program
def two_levels_of_stateful_subgraphs_forked(api):
    seen: list = []
    inner = _keeper(api, seen, "inner")
    app = _parent(api, ("outer", _keeper(api, seen, "outer", inner)))
    return _run_twice_then(api, app, seen, "fork")


@program
def sibling_stateful_subgraphs_replayed(api):
    seen: list = []
    app = _parent(api, ("left", _keeper(api, seen, "l")), ("right", _keeper(api, seen, "r")))
    return _run_twice_then(api, app, seen, "replay")


@program
def new_input_on_a_past_checkpoint_is_no_time_travel(api):
    """New input given with a past checkpoint's config starts a run there, but the stateful
    subgraph keeps its latest state (only `invoke(None, ...)` travels); replaying a run's
    input checkpoint travels to before that run."""
    seen: list = []
    app = _parent(api, ("keeper", _keeper(api, seen, "k")))
    config = {"configurable": {"thread_id": "input"}}
    for _ in range(3):
        app.invoke({"trail": []}, config)
    inputs = [s for s in app.get_state_history(config) if s.metadata["source"] == "input"]
    out = {"runs": list(seen)}
    seen.clear()
    app.invoke({"trail": ["again"]}, inputs[1].config)
    out["new input"] = list(seen)
    seen.clear()
    app.invoke(None, inputs[0].config)
    out["replayed input"] = list(seen)
    out["final"] = plain(app.get_state(config).values)
    return out


@program
def stateful_subgraph_history_after_a_replay(api):
    """The stateful subgraph's own history, read through the parent with its namespace, once
    a replay has grown a branch of it: each checkpoint's parent, step, source, next, values
    and the parent checkpoint it ran under; then the parent's history."""
    seen: list = []
    app = _parent(api, ("keeper", _keeper(api, seen, "k")))
    config = {"configurable": {"thread_id": "history"}}
    app.invoke({"trail": []}, config)
    app.invoke({"trail": []}, config)
    second = next(s for s in app.get_state_history(config) if s.next == ("stamp",))
    app.invoke(None, second.config)
    ids = Ids()
    out = []
    sub = {"configurable": {"thread_id": "history", "checkpoint_ns": "keeper"}}
    for s in app.get_state_history(sub):
        parents = {k: ids(v) for k, v in s.metadata["parents"].items()}
        meta = (s.metadata["source"], s.metadata["step"], s.next, plain(s.values), parents)
        out.append((*_shape(ids, [s])[0][::4], *meta))
    out.extend(("parent", *row) for row in _shape(ids, list(app.get_state_history(config))))
    return out


@program
def replay_to_before_the_subgraph_ever_ran(api):
    seen: list = []
    app = _parent(api, ("keeper", _keeper(api, seen, "k")))
    config = {"configurable": {"thread_id": "early"}}
    app.invoke({"trail": []}, config)
    app.invoke({"trail": []}, config)
    first = [s for s in app.get_state_history(config) if s.next == ("keeper",)][-1]
    seen.clear()
    app.invoke(None, first.config)
    return seen


class Loop(TypedDict):
    round: int
    trail: Annotated[list, operator.add]


@program
def stateful_subgraph_in_a_loop_replayed_mid_loop(api):
    """The parent runs the subgraph three times a run; replays from the start and from the
    middle of the second run: its first visit starts from its state then, the later ones
    from what the replay made."""
    seen: list = []
    sub = _keeper(api, seen, "k")
    app = (
        api.StateGraph(Loop)
        .add_node("tick", lambda s: {"round": s["round"] + 1, "trail": [s["round"]]})
        .add_node("keeper", sub)
        .add_edge(api.START, "tick")
        .add_edge("tick", "keeper")
        .add_conditional_edges("keeper", lambda s: "tick" if s["round"] < 3 else api.END)
        .compile(checkpointer=api.saver())
    )
    config = {"configurable": {"thread_id": "loop"}}
    out = {}
    for run in ("first", "second"):
        seen.clear()
        app.invoke({"round": 0, "trail": []}, config)
        out[run] = list(seen)
    history = list(app.get_state_history(config))
    for start in (0, 1, 2):
        point = next(s for s in history if s.next == ("tick",) and s.values["round"] == start)
        seen.clear()
        app.invoke(None, point.config)
        out[f"from round {start}"] = list(seen)
    return out


# --- a subgraph's own checkpoint, handed back to the parent --------------------------------


def _asking(api: Any, called: list, mode: Any = True) -> Any:
    """A subgraph `prepare -> first (asks) -> second (asks)`, each node logged in `called`."""

    def prepare(s):
        called.append("prepare")
        return {"notes": ["prepared"]}

    def asker(name):
        def ask(s):
            called.append(name)
            return {"notes": [f"{name}={api.interrupt(name + '?')}"]}

        return ask

    return (
        api.StateGraph(Notes)
        .add_node("prepare", prepare)
        .add_node("first", asker("first"))
        .add_node("second", asker("second"))
        .add_edge(api.START, "prepare")
        .add_edge("prepare", "first")
        .add_edge("first", "second")
        .compile(checkpointer=mode)
    )


def _asking_parent(api: Any, called: list) -> Any:
    def wrap_up(s):
        called.append("wrap_up")
        return {"notes": ["wrapped"]}

    return (
        api.StateGraph(Notes)
        .add_node("desk", _asking(api, called))
        .add_node("wrap_up", wrap_up)
        .add_edge(api.START, "desk")
        .add_edge("desk", "wrap_up")
        .compile(checkpointer=api.saver())
    )


def _asked(result: dict[str, Any]) -> list:
    return [i.value for i in result.get("__interrupt__", ())]


def _sub_config(app: Any, config: dict[str, Any]) -> dict[str, Any]:
    return app.get_state(config, subgraphs=True).tasks[0].state.config


def _shape(ids: Ids, history: list) -> list:
    """A history as `(source, next, values, parent label)`, newest first."""
    out = []
    for s in history:
        parent = s.parent_config["configurable"]["checkpoint_id"] if s.parent_config else None
        label = ids(s.config["configurable"]["checkpoint_id"])
        out.append((label, s.metadata["source"], s.next, plain(s.values), parent and ids(parent)))
    return out


@pytest.mark.parametrize("question", ["first", "second"])
def test_travel_to_a_subgraph_question_and_answer_it_again(question, tmp_path):
    """Finish a run whose subgraph asked twice, travel back to the checkpoint where it asked
    `question`, and answer it (and what follows) again."""

    def run(api):
        called: list = []
        app = _asking_parent(api, called)
        config = {"configurable": {"thread_id": "desk"}}
        out: dict[str, Any] = {"start": _asked(app.invoke({"notes": []}, config))}
        at = _sub_config(app, config) if question == "first" else None
        out["one"] = _asked(app.invoke(api.Command(resume="a1"), config))
        at = at or _sub_config(app, config)
        out["done"] = plain(app.invoke(api.Command(resume="a2"), config))
        called.clear()
        out["replay"] = (_asked(app.invoke(None, at)), list(called))
        for answer in ("b1", "b2")[("first", "second").index(question) :]:
            called.clear()
            result = app.invoke(api.Command(resume=answer), config)
            out[answer] = (_asked(result), plain(result.get("notes")), list(called))
        out["history"] = _shape(Ids(), list(app.get_state_history(config)))
        return out

    for saver in ("memory", "sqlite"):
        langgraph, nbgraph = both(run, saver=saver, folder=tmp_path / saver)
        assert nbgraph == langgraph


@program
def fork_a_subgraph_checkpoint_then_answer_with_the_fork_config(api):
    called: list = []
    app = _asking_parent(api, called)
    config = {"configurable": {"thread_id": "fork"}}
    app.invoke({"notes": []}, config)
    fork = app.update_state(_sub_config(app, config), {"notes": ["edited"]})
    called.clear()
    out = {"fork": (_asked(app.invoke(None, fork)), list(called))}
    called.clear()
    result = app.invoke(api.Command(resume="again"), fork)
    out["answered"] = (_asked(result), plain(result["notes"]), list(called))
    called.clear()
    result = app.invoke(api.Command(resume="last"), config)
    out["last"] = (_asked(result), plain(result["notes"]), list(called))
    return out


@program
def a_subgraph_snapshot_names_its_parent_checkpoint(api):
    """The subgraph's snapshot config (and its update's) name the parent checkpoint it ran
    from: LangGraph's `checkpoint_map`; the metadata's `parents` too."""
    called: list = []
    app = _asking_parent(api, called)
    config = {"configurable": {"thread_id": "map"}}
    app.invoke({"notes": []}, config)
    ids = Ids()
    parent = app.get_state(config)
    sub = app.get_state(config, subgraphs=True).tasks[0].state
    updated = app.update_state(sub.config, {"notes": ["x"]})

    def shown(cfg):
        c = cfg["configurable"]
        return (
            ids.ns(c["checkpoint_ns"]),
            ids(c["checkpoint_id"]),
            {ids.ns(k): ids(v) for k, v in c.get("checkpoint_map", {}).items()},
        )

    return {
        "parent": ids(parent.config["configurable"]["checkpoint_id"]),
        "sub": shown(sub.config),
        "sub parent": shown(sub.parent_config),
        "parents": {k: ids(v) for k, v in sub.metadata["parents"].items()},
        "update": shown(updated),
    }


@program
def replay_the_latest_checkpoint_while_a_stateful_subgraph_waits(api):
    """A stateful subgraph asks on the parent's second run; the parent is invoked from its
    own latest checkpoint (named by id: a replay), answered, replayed again when done."""
    ran: list = []

    def step(name, asks=False):
        def run(s):
            ran.append((name, len(s["notes"])))
            return {"notes": [f"{name}:{api.interrupt(name)}" if asks else name]}

        return run

    sub = (
        api.StateGraph(Notes)
        .add_node("read", step("read"))
        .add_node("check", step("check", asks=True))
        .add_edge(api.START, "read")
        .add_edge("read", "check")
        .compile(checkpointer=True)
    )
    app = (
        api.StateGraph(Notes)
        .add_node("front", step("front"))
        .add_node("sub", sub)
        .add_edge(api.START, "front")
        .add_edge("front", "sub")
        .compile(checkpointer=api.saver())
    )
    config = {"configurable": {"thread_id": "head"}}
    app.invoke({"notes": []}, config)
    app.invoke(api.Command(resume="yes"), config)
    app.invoke({"notes": []}, config)
    out: dict[str, Any] = {"paused": list(ran)}
    for name, given in (("replay", None), ("answer", api.Command(resume="no")), ("again", None)):
        ran.clear()
        target = config if given is not None else app.get_state(config).config
        result = app.invoke(given, target)
        out[name] = (_asked(result), plain(result["notes"]), list(ran))
    ran.clear()
    app.invoke({"notes": []}, config)
    out["next run"] = list(ran)
    return out


@program
def checkpoints_stream_names_the_parent_checkpoints_of_a_subgraph(api):
    """`stream_mode="checkpoints"` with `subgraphs=True`: each subgraph checkpoint's config
    has `checkpoint_map` and its metadata `parents`, as `get_state` shows them."""
    sub = api.StateGraph(Notes).add_node("n", lambda s: {"notes": ["n"]})
    sub = sub.add_edge(api.START, "n").compile()
    app = (
        api.StateGraph(Notes)
        .add_node("sub", sub)
        .add_edge(api.START, "sub")
        .compile(checkpointer=api.saver())
    )
    ids = Ids()
    out = []
    config = {"configurable": {"thread_id": "stream"}}
    for _, chunk in app.stream({"notes": []}, config, stream_mode="checkpoints", subgraphs=True):
        c = chunk["config"]["configurable"]
        mapped = {ids.ns(k): ids(v) for k, v in c.get("checkpoint_map", {}).items()}
        parents = {k: ids(v) for k, v in chunk["metadata"]["parents"].items()}
        out.append((ids.ns(c["checkpoint_ns"]), ids(c["checkpoint_id"]), mapped, parents))
    return out


@program
def a_subgraph_node_sees_the_thread_it_runs_under(api):
    seen: list = []

    def look(s, config):
        configurable = config["configurable"]
        seen.append((configurable.get("thread_id"), bool(configurable.get("checkpoint_ns"))))
        return {"notes": ["looked"]}

    sub = api.StateGraph(Notes).add_node("look", look).add_edge(api.START, "look").compile()
    app = (
        api.StateGraph(Notes)
        .add_node("sub", sub)
        .add_edge(api.START, "sub")
        .compile(checkpointer=api.saver())
    )
    app.invoke({"notes": []}, {"configurable": {"thread_id": "seen"}})
    return seen


@program
def stateful_subgraph_replayed_async(api):
    """The first program, through `ainvoke`/`aupdate_state`."""
    seen: list = []
    app = _parent(api, ("keeper", _keeper(api, seen, "k")))

    async def go():
        config = {"configurable": {"thread_id": "async"}}
        await app.ainvoke({"trail": []}, config)
        await app.ainvoke({"trail": []}, config)
        starts = [s async for s in app.aget_state_history(config) if s.next == ("stamp",)]
        second = starts[0]
        seen.clear()
        fork = await app.aupdate_state(second.config, {"trail": ["forked"]})
        await app.ainvoke(None, fork)
        replayed = list(seen)
        seen.clear()
        await app.ainvoke({"trail": []}, config)
        return replayed, list(seen)

    return asyncio.run(go())


def _snap(ids: Ids, s: Any) -> Any:
    """A snapshot with its subgraph tasks' states, as comparable data."""
    if s is None or isinstance(s, dict):
        return s and ids.ns(s["configurable"]["checkpoint_ns"])
    tasks = [(t.name, [i.value for i in t.interrupts], _snap(ids, t.state)) for t in s.tasks]
    return plain(s.values), s.next, s.metadata and s.metadata["source"], tasks


def asks_through_replays_and_forks(api, mode):
    """A subgraph `a -> q (asks) -> b` between two parent nodes: two answered runs, a replay
    of the second run, a fork of the first one's subgraph step, a third run; after each
    call, what ran, the result and `get_state(subgraphs=True)`."""
    ran: list = []

    def step(name, asks=False):
        def run(s):
            ran.append((name, len(s["notes"])))
            return {"notes": [f"{name}:{api.interrupt(name)}" if asks else name]}

        return run

    sub = (
        api.StateGraph(Notes)
        .add_node("a", step("a"))
        .add_node("q", step("q", asks=True))
        .add_node("b", step("b"))
        .add_edge(api.START, "a")
        .add_edge("a", "q")
        .add_edge("q", "b")
        .compile(checkpointer=mode)
    )
    app = (
        api.StateGraph(Notes)
        .add_node("pre", step("pre"))
        .add_node("sub", sub)
        .add_node("post", step("post"))
        .add_edge(api.START, "pre")
        .add_edge("pre", "sub")
        .add_edge("sub", "post")
        .compile(checkpointer=api.saver())
    )
    config = {"configurable": {"thread_id": "asks"}}
    ids, out = Ids(), []

    def call(label, given, target):
        ran.clear()
        result = app.invoke(given, target)
        asked = [i.value for i in result.get("__interrupt__", ())]
        state = _snap(ids, app.get_state(config, subgraphs=True))
        out.append((label, asked, plain(result.get("notes")), list(ran), state))

    call("run 1", {"notes": []}, config)
    call("answer 1", api.Command(resume="1"), config)
    call("run 2", {"notes": []}, config)
    call("answer 2", api.Command(resume="2"), config)
    history = list(app.get_state_history(config))
    call("replay run 2", None, next(s for s in history if s.next == ("pre",)).config)
    call("answer replay", api.Command(resume="3"), config)
    first_sub = [s for s in history if s.next == ("sub",)][-1]
    call("fork run 1", None, app.update_state(first_sub.config, {"notes": ["f"]}))
    call("answer fork", api.Command(resume="4"), config)
    call("run 3", {"notes": []}, config)
    return out


@pytest.mark.parametrize("mode", [True, None, False])
def test_a_subgraph_that_asks_through_replays_and_forks(mode):
    langgraph, nbgraph = both(asks_through_replays_and_forks, mode)
    assert nbgraph == langgraph


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_subgraph_time_travel_programs_behave_as_on_langgraph(program):
    langgraph, nbgraph = both(program)
    assert nbgraph == langgraph


@pytest.mark.parametrize(
    "program",
    [stateful_subgraph_in_a_loop_replayed_mid_loop, two_levels_of_stateful_subgraphs_forked],
    ids=lambda p: p.__name__,
)
def test_subgraph_time_travel_in_sqlite_behaves_as_on_langgraph(program, tmp_path):
    langgraph, nbgraph = both(program, saver="sqlite", folder=tmp_path)
    assert nbgraph == langgraph
