"""The programs of tests/parity/test_langgraph_subgraph_checkpoints.py, which the record's
import proof (tests/record/test_langgraph_import_subgraphs.py) runs too.

Each program drives a checkpointed parent whose nodes run subgraphs, on `api.saver()`, and
returns what it observed; ids (task ids, checkpoint ids, interrupt ids) by structure only
(`Ids`: the same id in the same positions).
"""

# No `from __future__ import annotations`: state classes are read at run time by both engines.

import asyncio
import operator
from typing import Annotated, Any, TypedDict

from tests.support.harness import Ids, differs, ignored, outcome, plain
from tests.support.records import NS_REUSE, OWN_THREAD, SAVER_RECORD


class S(TypedDict):
    x: Annotated[list, operator.add]


def interrupts(ids: Ids, found: Any) -> list[tuple[str, str]]:
    """`(value, id)` of interrupts, sorted by value (parallel tasks' order may differ)."""
    return [(i.value, ids(i.id)) for i in sorted(found, key=lambda i: repr(i.value))]


def shown(ids: Ids, result: dict[str, Any]) -> dict[str, Any]:
    """`invoke`'s result with its interrupts made comparable."""
    out = {k: plain(v) for k, v in result.items() if k != "__interrupt__"}
    if "__interrupt__" in result:
        out["__interrupt__"] = interrupts(ids, result["__interrupt__"])
    return out


def snap(ids: Ids, snapshot: Any) -> Any:
    """A `StateSnapshot` as comparable data: values, next, metadata source/step, config ns,
    interrupts, and each task (name, interrupts, and its `state`, recursively)."""
    if snapshot is None or isinstance(snapshot, dict):
        if snapshot is None:
            return None
        cfg = snapshot["configurable"]
        return {"thread_id": cfg["thread_id"], "ns": ids.ns(cfg["checkpoint_ns"])}
    cfg = (snapshot.config or {}).get("configurable", {})
    local = Ids()  # (nbgraph's task ids are `step:index:node` within a thread: two subgraph
    # threads' tasks may share one, where LangGraph's are unique, so compare them per level)
    return {
        "values": plain(snapshot.values),
        "next": snapshot.next,
        "meta": None
        if snapshot.metadata is None
        else (snapshot.metadata["source"], snapshot.metadata["step"]),
        "ns": ids.ns(cfg.get("checkpoint_ns", "")),
        "interrupts": interrupts(ids, snapshot.interrupts),
        "tasks": sorted(
            [
                (t.name, local(t.id), interrupts(ids, t.interrupts), repr(snap(ids, t.state)))
                for t in snapshot.tasks
            ]
        ),
    }


def history(ids: Ids, app: Any, config: dict[str, Any]) -> list[Any]:
    return [
        (plain(h.values), h.next, h.metadata["source"], h.metadata["step"])
        for h in app.get_state_history(config)
    ]


def namespaces(ids: Ids, saver: Any) -> list[tuple[str, int, str]]:
    """Every checkpoint the saver lists (all threads): `(ns, step, source)`, sorted."""
    rows = []
    for item in saver.list(None):
        ns = item.config["configurable"].get("checkpoint_ns", "")
        rows.append((ids.ns(ns), item.metadata["step"], item.metadata["source"]))
    return sorted(rows)


def three_node_subgraph(api, calls: list[str], tag: str = "", checkpointer: Any = None):
    """`a -> b -> c`; `b` asks a question. `calls` counts the node runs."""

    def a(state: S):
        calls.append(tag + "a")
        return {"x": [tag + "a"]}

    def b(state: S):
        calls.append(tag + "b")
        return {"x": [tag + "b:" + api.interrupt(tag + "q")]}

    def c(state: S):
        calls.append(tag + "c")
        return {"x": [tag + "c"]}

    builder = api.StateGraph(S)
    builder.add_node("a", a).add_node("b", b).add_node("c", c)
    builder.add_edge(api.START, "a").add_edge("a", "b").add_edge("b", "c")
    return builder.compile(checkpointer=checkpointer)


def parent_of(api, sub: Any, saver: Any = None):
    """`p -> sub -> after`, checkpointed."""
    builder = api.StateGraph(S)
    builder.add_node("p", lambda s: {"x": ["p"]}).add_node("sub", sub)
    builder.add_node("after", lambda s: {"x": ["after"]})
    builder.add_edge(api.START, "p").add_edge("p", "sub").add_edge("sub", "after")
    return builder.compile(checkpointer=saver if saver is not None else api.saver())


CONFIG = {"configurable": {"thread_id": "t"}}


# --- the programs ------------------------------------------------------------------------------


def resume_at_the_node_program(api):
    """An interrupt inside a default subgraph pauses the parent; the resume continues the
    subgraph at `b` (`a` runs once); its checkpoints are listed under `sub:<task id>`."""
    ids, calls = Ids(), []
    app = parent_of(api, three_node_subgraph(api, calls))
    first = shown(ids, app.invoke({"x": ["i"]}, CONFIG))
    asked = list(calls)
    state = app.get_state(CONFIG)
    sub_config = state.tasks[0].state
    seen = {
        "first": first,
        "asked": asked,
        "shallow": snap(ids, state),
        "deep": snap(ids, app.get_state(CONFIG, subgraphs=True)),
        "sub": snap(ids, app.get_state(sub_config)),
        "sub_history": history(ids, app, sub_config),
    }
    seen["resumed"] = shown(ids, app.invoke(api.Command(resume="yes"), CONFIG))
    seen["calls"] = calls
    seen["after"] = snap(ids, app.get_state(CONFIG, subgraphs=True))
    seen["sub_history_after"] = history(ids, app, sub_config)
    seen["listed"] = namespaces(ids, app.checkpointer)
    seen["listed_sub"] = [
        (ids.ns(item.config["configurable"]["checkpoint_ns"]), item.metadata["step"])
        for item in app.checkpointer.list(sub_config)
    ]
    return seen


def two_interrupts_in_a_row_program(api):
    """`b` then `c` each ask; two resumes; `a` runs once."""
    ids, calls = Ids(), []

    def a(state: S):
        calls.append("a")
        return {"x": ["a"]}

    def b(state: S):
        calls.append("b")
        return {"x": ["b:" + api.interrupt("q1")]}

    def c(state: S):
        calls.append("c")
        return {"x": ["c:" + api.interrupt("q2")]}

    builder = api.StateGraph(S).add_node("a", a).add_node("b", b).add_node("c", c)
    builder.add_edge(api.START, "a").add_edge("a", "b").add_edge("b", "c")
    parent = api.StateGraph(S).add_node("sub", builder.compile())
    parent.add_edge(api.START, "sub")
    app = parent.compile(checkpointer=api.saver())
    seen = [shown(ids, app.invoke({"x": ["i"]}, CONFIG))]
    seen.append(shown(ids, app.invoke(api.Command(resume="y1"), CONFIG)))
    seen.append(snap(ids, app.get_state(CONFIG, subgraphs=True)))
    seen.append(shown(ids, app.invoke(api.Command(resume="y2"), CONFIG)))
    return {"seen": seen, "calls": calls}


def nested_program(api):
    """An interrupt in a subgraph of a subgraph: namespaces `outer:<id>|inner:<id>`."""
    ids, calls = Ids(), []
    inner = three_node_subgraph(api, calls, "in-")
    middle = api.StateGraph(S).add_node("m", lambda s: {"x": ["m"]}).add_node("inner", inner)
    middle.add_edge(api.START, "m").add_edge("m", "inner")
    parent = api.StateGraph(S).add_node("outer", middle.compile())
    parent.add_edge(api.START, "outer")
    app = parent.compile(checkpointer=api.saver())
    seen = {"first": shown(ids, app.invoke({"x": ["i"]}, CONFIG))}
    seen["shallow"] = snap(ids, app.get_state(CONFIG))
    seen["deep"] = snap(ids, app.get_state(CONFIG, subgraphs=True))
    outer_config = app.get_state(CONFIG).tasks[0].state
    seen["outer"] = snap(ids, app.get_state(outer_config))
    seen["resumed"] = shown(ids, app.invoke(api.Command(resume="y"), CONFIG))
    seen["calls"] = calls
    seen["listed"] = namespaces(ids, app.checkpointer)
    return seen


def parallel_subgraphs_program(api):
    """Two subgraph tasks in one step both ask; one resume answers both by id."""
    ids, calls = Ids(), []
    parent = api.StateGraph(S)
    parent.add_node("one", three_node_subgraph(api, calls, "1"))
    parent.add_node("two", three_node_subgraph(api, calls, "2"))
    parent.add_edge(api.START, "one").add_edge(api.START, "two")
    app = parent.compile(checkpointer=api.saver())
    result = app.invoke({"x": ["i"]}, CONFIG)
    seen = {
        "first": shown(ids, result),
        "deep": snap(ids, app.get_state(CONFIG, subgraphs=True)),
    }
    answers = {i.id: "ans-" + i.value for i in result["__interrupt__"]}
    seen["resumed"] = shown(ids, app.invoke(api.Command(resume=answers), CONFIG))
    seen["calls"] = sorted(calls)
    return seen


def sends_to_a_subgraph_program(api):
    """Two `Send`s to one subgraph node: each task keeps its own namespace, both ask, and
    one resume answers both by id; `a` runs once per Send."""
    ids, calls = Ids(), []

    def a(state: S):
        calls.append("a" + state["x"][0])
        return {"x": ["a"]}

    def b(state: S):
        return {"x": ["b:" + api.interrupt("q" + state["x"][0])]}

    sub = api.StateGraph(S).add_node("a", a).add_node("b", b)
    sub.add_edge(api.START, "a").add_edge("a", "b")
    parent = api.StateGraph(S).add_node("sub", sub.compile())
    parent.add_conditional_edges(api.START, lambda s: [api.Send("sub", {"x": [v]}) for v in "12"])
    app = parent.compile(checkpointer=api.saver())
    result = app.invoke({"x": ["i"]}, CONFIG)
    seen = {
        "first": shown(ids, result),
        "deep": snap(ids, app.get_state(CONFIG, subgraphs=True)),
    }
    answers = {i.id: "A" + i.value for i in result["__interrupt__"]}
    seen["resumed"] = shown(ids, app.invoke(api.Command(resume=answers), CONFIG))
    seen["calls"] = sorted(calls)
    return seen


def checkpointer_true_program(api):
    """`checkpointer=True`: the subgraph's thread (ns `sub`) keeps its state across the
    parent's runs, and an interrupt inside resumes as with the default."""
    ids, calls = Ids(), []

    def a(state: S):
        calls.append("a")
        return {"x": ["sa"]}

    def b(state: S):
        return {"x": ["sb:" + api.interrupt("q")]}

    builder = api.StateGraph(S).add_node("a", a).add_node("b", b)
    builder.add_edge(api.START, "a").add_edge("a", "b")
    parent = api.StateGraph(S).add_node("sub", builder.compile(checkpointer=True))
    parent.add_edge(api.START, "sub")
    app = parent.compile(checkpointer=api.saver())
    seen = [shown(ids, app.invoke({"x": ["i"]}, CONFIG))]
    seen.append(snap(ids, app.get_state(CONFIG)))
    seen.append(shown(ids, app.invoke(api.Command(resume="y"), CONFIG)))
    seen.append(shown(ids, app.invoke({"x": ["j"]}, CONFIG)))
    seen.append(shown(ids, app.invoke(api.Command(resume="z"), CONFIG)))
    return {"seen": seen, "calls": calls, "listed": namespaces(ids, app.checkpointer)}


def checkpointer_false_program(api):
    """`checkpointer=False`: no subgraph checkpoints; an interrupt inside still pauses the
    parent, and the resumed parent runs the subgraph from its start."""
    ids, calls = Ids(), []
    app = parent_of(api, three_node_subgraph(api, calls, checkpointer=False))
    seen = [shown(ids, app.invoke({"x": ["i"]}, CONFIG))]
    seen.append(snap(ids, app.get_state(CONFIG, subgraphs=True)))
    seen.append(shown(ids, app.invoke(api.Command(resume="y"), CONFIG)))
    return {"seen": seen, "calls": calls, "listed": namespaces(ids, app.checkpointer)}


def update_subgraph_state_program(api):
    """`update_state(subgraph_config, values)` while paused, then the resumed parent
    continues from the edited subgraph state; `update_state(..., as_node=)` afterwards."""
    ids, calls = Ids(), []
    app = parent_of(api, three_node_subgraph(api, calls))
    app.invoke({"x": ["i"]}, CONFIG)
    sub_config = app.get_state(CONFIG).tasks[0].state
    updated = app.update_state(sub_config, {"x": ["edited"]})
    seen = {"updated_ns": ids.ns(updated["configurable"]["checkpoint_ns"])}
    seen["sub"] = snap(ids, app.get_state(sub_config))
    seen["deep"] = snap(ids, app.get_state(CONFIG, subgraphs=True))
    seen["resumed"] = shown(ids, app.invoke(api.Command(resume="y"), CONFIG))
    seen["calls"] = list(calls)
    seen["sub_history"] = history(ids, app, sub_config)
    app.update_state(sub_config, {"x": ["late"]}, as_node="c")
    seen["late"] = snap(ids, app.get_state(sub_config))
    seen["parent_history"] = history(ids, app, CONFIG)
    seen["parent_snapshots"] = [snap(ids, h) for h in app.get_state_history(CONFIG)]
    return seen


@differs(NS_REUSE.at("run/3:0:sub:forks", "run/3:0:sub:tree"))
def replay_and_fork_program(api):
    """Replaying the parent from the checkpoint before the subgraph ran runs it again from
    its start (and it asks again); so does a fork made with `update_state`."""
    ids, calls = Ids(), []
    app = parent_of(api, three_node_subgraph(api, calls))
    app.invoke({"x": ["i"]}, CONFIG)
    app.invoke(api.Command(resume="y"), CONFIG)
    before = [h for h in app.get_state_history(CONFIG) if h.next == ("sub",)][-1]
    calls.clear()
    seen = {"replay": shown(ids, app.invoke(None, before.config)), "calls": list(calls)}
    seen["after_replay"] = snap(ids, app.get_state(CONFIG, subgraphs=True))
    seen["resumed"] = shown(ids, app.invoke(api.Command(resume="z"), CONFIG))
    fork = app.update_state(before.config, {"x": ["fork"]})
    calls.clear()
    result = app.invoke(None, fork)
    seen["fork"] = {k: plain(v) for k, v in result.items() if k != "__interrupt__"}
    seen["fork_asked"] = [i.value for i in result["__interrupt__"]]
    seen["fork_calls"] = list(calls)
    seen["fork_resumed"] = shown(ids, app.invoke(api.Command(resume="f"), CONFIG))
    return seen


@differs(SAVER_RECORD.at("run:steps", "run:subruns", "run:tree"))
def refusals_program(api):
    """What LangGraph refuses about subgraph threads, refused the same way (error kind)."""
    ids, calls = Ids(), []
    sub = three_node_subgraph(api, calls)
    app = parent_of(api, sub)
    app.invoke({"x": ["i"]}, CONFIG)
    sub_config = app.get_state(CONFIG).tasks[0].state
    unknown = {"configurable": {"thread_id": "t", "checkpoint_ns": "nope:1"}}
    seen: dict[str, Any] = {"unknown_state": snap(ids, app.get_state(unknown))}
    seen["unknown_history"] = list(app.get_state_history(unknown))
    for name, call in {
        "update_unknown": lambda: app.update_state(unknown, {"x": ["q"]}),
        "sub_get_state": lambda: sub.get_state(sub_config),
        "sub_update": lambda: sub.update_state(sub_config, {"x": ["q"]}),
    }.items():
        seen[name] = outcome(call, shape=ignored)
    return seen


@differs(OWN_THREAD.at("run:subruns"))
def root_checkpointer_modes_program(api):
    """`checkpointer=True` on a graph run on its own is refused (and reading its state);
    inside a parent without a checkpointer it runs; `checkpointer=False` has no state."""
    seen: dict[str, Any] = {}

    def simple(checkpointer: Any) -> Any:
        builder = api.StateGraph(S).add_node("a", lambda s: {"x": ["a"]})
        return builder.add_edge(api.START, "a").compile(checkpointer=checkpointer)

    own, none = simple(True), simple(False)
    parent = api.StateGraph(S).add_node("sub", own).add_edge(api.START, "sub").compile()
    for name, call in {
        "true_invoke": lambda: own.invoke({"x": []}),
        "true_invoke_thread": lambda: own.invoke({"x": []}, CONFIG),
        "true_get_state": lambda: own.get_state(CONFIG),
        "true_in_plain_parent": lambda: parent.invoke({"x": ["i"]}),
        "false_invoke": lambda: none.invoke({"x": []}),
        "false_get_state": lambda: none.get_state(CONFIG),
    }.items():
        seen[name] = outcome(call, shape=plain)
    return seen


def async_resume_program(api):
    """The same resume at the node that asked, with `ainvoke`."""
    ids, calls = Ids(), []
    app = parent_of(api, three_node_subgraph(api, calls))

    async def go() -> list[Any]:
        first = shown(ids, await app.ainvoke({"x": ["i"]}, CONFIG))
        second = shown(ids, await app.ainvoke(api.Command(resume="a"), CONFIG))
        return [first, second]

    return {"seen": asyncio.run(go()), "calls": calls}


def node_function_invokes_program(api):
    """A node function that calls `subgraph.invoke(...)`: the subgraph inherits the saver
    just the same (ns `node:<task id>`), resumes at its node, and shows under the task."""
    ids, calls = Ids(), []
    sub = three_node_subgraph(api, calls)

    def node(state: S):
        return {"x": sub.invoke({"x": ["fn"]})["x"]}

    parent = api.StateGraph(S).add_node("n", node)
    parent.add_edge(api.START, "n")
    app = parent.compile(checkpointer=api.saver())
    seen = {"first": shown(ids, app.invoke({"x": ["i"]}, CONFIG))}
    seen["shallow"] = snap(ids, app.get_state(CONFIG))
    seen["deep"] = snap(ids, app.get_state(CONFIG, subgraphs=True))
    seen["by_ns"] = snap(ids, app.get_state(app.get_state(CONFIG).tasks[0].state))
    seen["resumed"] = shown(ids, app.invoke(api.Command(resume="y"), CONFIG))
    seen["calls"] = calls
    return seen


def node_runs_two_graphs_program(api):
    """A node function that runs a subgraph twice: the second run keeps its checkpoints
    under `n:<task id>|1`; each pauses in turn, and each resumes where it asked."""
    ids, calls = Ids(), []
    sub = three_node_subgraph(api, calls)

    def node(state: S):
        first, second = sub.invoke({"x": ["one"]}), sub.invoke({"x": ["two"]})
        return {"x": first["x"] + second["x"]}

    parent = api.StateGraph(S).add_node("n", node)
    app = parent.add_edge(api.START, "n").compile(checkpointer=api.saver())
    seen = [shown(ids, app.invoke({"x": []}, CONFIG))]
    seen.append(shown(ids, app.invoke(api.Command(resume="y"), CONFIG)))
    seen.append(shown(ids, app.invoke(api.Command(resume="z"), CONFIG)))
    return {"seen": seen, "calls": calls, "listed": namespaces(ids, app.checkpointer)}


def stream_and_parallel_inside_program(api):
    """`stream` of a parent whose subgraph pauses, then resumes; and a subgraph whose two
    parallel nodes both ask: the parent's one task carries both questions."""
    ids, calls = Ids(), []
    app = parent_of(api, three_node_subgraph(api, calls))
    first = [c if "__interrupt__" not in c else "paused" for c in app.stream({"x": ["i"]}, CONFIG)]
    seen = {"first": first, "resumed": list(app.stream(api.Command(resume="y"), CONFIG))}

    def ask(name):
        return lambda state: {"x": [name + ":" + api.interrupt(name)]}

    inner = api.StateGraph(S).add_node("q1", ask("q1")).add_node("q2", ask("q2"))
    inner.add_edge(api.START, "q1").add_edge(api.START, "q2")
    parent = api.StateGraph(S).add_node("sub", inner.compile())
    parent.add_edge(api.START, "sub")
    app = parent.compile(checkpointer=api.saver())
    result = app.invoke({"x": ["i"]}, CONFIG)
    seen["asked"] = shown(ids, result)
    seen["deep"] = snap(ids, app.get_state(CONFIG, subgraphs=True))
    answers = {i.id: "a-" + i.value for i in result["__interrupt__"]}
    seen["answered"] = shown(ids, app.invoke(api.Command(resume=answers), CONFIG))
    seen["calls"] = calls
    return seen


PROGRAMS = [
    resume_at_the_node_program,
    two_interrupts_in_a_row_program,
    nested_program,
    parallel_subgraphs_program,
    sends_to_a_subgraph_program,
    checkpointer_true_program,
    checkpointer_false_program,
    update_subgraph_state_program,
    replay_and_fork_program,
    refusals_program,
    root_checkpointer_modes_program,
    async_resume_program,
    node_function_invokes_program,
    node_runs_two_graphs_program,
    stream_and_parallel_inside_program,
]
