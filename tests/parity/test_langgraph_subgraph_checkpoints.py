"""Differential tests: subgraph checkpoints, on LangGraph and nbgraph.

A subgraph compiled without a checkpointer (LangGraph's default) keeps its checkpoints in its
parent's saver under `checkpoint_ns = "<node>:<task id>"`, resumes at the node that asked,
shows under its task in `get_state(config, subgraphs=True)`, and its thread is read, listed
and updated through the parent with that namespace; `checkpointer=True` keeps one thread per
node across the parent's runs; `checkpointer=False` keeps none. Each program returns what it
observed; ids (task ids, checkpoint ids, interrupt ids) are compared by structure only: the
same id in the same positions (`Ids`).
"""

# No `from __future__ import annotations`: state classes are read at run time by both engines.

import asyncio
import operator
import os
import subprocess
import sys
import textwrap
import types
from typing import Annotated, Any, TypedDict

import pytest

from tests.parity.test_langgraph_compat import error_kind, plain

pytestmark = pytest.mark.langgraph


def langgraph_api() -> types.SimpleNamespace:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, StateGraph
    from langgraph.types import Command, Send, interrupt

    return types.SimpleNamespace(
        StateGraph=StateGraph, START=START, Command=Command, interrupt=interrupt,
        saver=InMemorySaver, Send=Send,
    )  # fmt: skip


def nbgraph_api(saver: str = "memory", path: str = "") -> types.SimpleNamespace:
    import nbgraph

    def make_saver() -> Any:
        if saver == "sqlite":
            from nbgraph.checkpoint import SqliteSaver

            return SqliteSaver(path)
        return nbgraph.MemorySaver()

    return types.SimpleNamespace(
        StateGraph=nbgraph.StateGraph, START=nbgraph.START, Command=nbgraph.Command,
        interrupt=nbgraph.interrupt, saver=make_saver, Send=nbgraph.Send,
    )  # fmt: skip


def both(program, nb_api: Any = None) -> tuple[Any, Any]:
    return program(langgraph_api()), program(nb_api or nbgraph_api())


class Ids:
    """Ids replaced by their order of first appearance (`#0`, `#1`, ...), so two engines'
    uuid or step-based ids compare by structure."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, raw: str) -> str:
        return self.seen.setdefault(raw, f"#{len(self.seen)}")

    def ns(self, ns: str) -> str:
        """A namespace with each part's task id replaced: `node:#k|inner:#j`."""
        parts = []
        for part in ns.split("|") if ns else ():
            node, sep, task_id = part.partition(":")
            parts.append(f"{node}{sep}{self(task_id)}" if sep else node)
        return "|".join(parts)


class S(TypedDict):
    x: Annotated[list, operator.add]


def interrupts(ids: Ids, found: Any) -> list[tuple[str, str]]:
    """`(value, id)` of interrupts, sorted by value (parallel tasks' order may differ)."""
    return [(i.value, ids(i.id)) for i in sorted(found, key=lambda i: repr(i.value))]


def outcome(ids: Ids, result: dict[str, Any]) -> dict[str, Any]:
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
    first = outcome(ids, app.invoke({"x": ["i"]}, CONFIG))
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
    seen["resumed"] = outcome(ids, app.invoke(api.Command(resume="yes"), CONFIG))
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
    seen = [outcome(ids, app.invoke({"x": ["i"]}, CONFIG))]
    seen.append(outcome(ids, app.invoke(api.Command(resume="y1"), CONFIG)))
    seen.append(snap(ids, app.get_state(CONFIG, subgraphs=True)))
    seen.append(outcome(ids, app.invoke(api.Command(resume="y2"), CONFIG)))
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
    seen = {"first": outcome(ids, app.invoke({"x": ["i"]}, CONFIG))}
    seen["shallow"] = snap(ids, app.get_state(CONFIG))
    seen["deep"] = snap(ids, app.get_state(CONFIG, subgraphs=True))
    outer_config = app.get_state(CONFIG).tasks[0].state
    seen["outer"] = snap(ids, app.get_state(outer_config))
    seen["resumed"] = outcome(ids, app.invoke(api.Command(resume="y"), CONFIG))
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
    seen = {"first": outcome(ids, result), "deep": snap(ids, app.get_state(CONFIG, subgraphs=True))}
    answers = {i.id: "ans-" + i.value for i in result["__interrupt__"]}
    seen["resumed"] = outcome(ids, app.invoke(api.Command(resume=answers), CONFIG))
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
    seen = {"first": outcome(ids, result), "deep": snap(ids, app.get_state(CONFIG, subgraphs=True))}
    answers = {i.id: "A" + i.value for i in result["__interrupt__"]}
    seen["resumed"] = outcome(ids, app.invoke(api.Command(resume=answers), CONFIG))
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
    seen = [outcome(ids, app.invoke({"x": ["i"]}, CONFIG))]
    seen.append(snap(ids, app.get_state(CONFIG)))
    seen.append(outcome(ids, app.invoke(api.Command(resume="y"), CONFIG)))
    seen.append(outcome(ids, app.invoke({"x": ["j"]}, CONFIG)))
    seen.append(outcome(ids, app.invoke(api.Command(resume="z"), CONFIG)))
    return {"seen": seen, "calls": calls, "listed": namespaces(ids, app.checkpointer)}


def checkpointer_false_program(api):
    """`checkpointer=False`: no subgraph checkpoints; an interrupt inside still pauses the
    parent, and the resumed parent runs the subgraph from its start."""
    ids, calls = Ids(), []
    app = parent_of(api, three_node_subgraph(api, calls, checkpointer=False))
    seen = [outcome(ids, app.invoke({"x": ["i"]}, CONFIG))]
    seen.append(snap(ids, app.get_state(CONFIG, subgraphs=True)))
    seen.append(outcome(ids, app.invoke(api.Command(resume="y"), CONFIG)))
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
    seen["resumed"] = outcome(ids, app.invoke(api.Command(resume="y"), CONFIG))
    seen["calls"] = list(calls)
    seen["sub_history"] = history(ids, app, sub_config)
    app.update_state(sub_config, {"x": ["late"]}, as_node="c")
    seen["late"] = snap(ids, app.get_state(sub_config))
    seen["parent_history"] = history(ids, app, CONFIG)
    seen["parent_snapshots"] = [snap(ids, h) for h in app.get_state_history(CONFIG)]
    return seen


def replay_and_fork_program(api):
    """Replaying the parent from the checkpoint before the subgraph ran runs it again from
    its start (and it asks again); so does a fork made with `update_state`."""
    ids, calls = Ids(), []
    app = parent_of(api, three_node_subgraph(api, calls))
    app.invoke({"x": ["i"]}, CONFIG)
    app.invoke(api.Command(resume="y"), CONFIG)
    before = [h for h in app.get_state_history(CONFIG) if h.next == ("sub",)][-1]
    calls.clear()
    seen = {"replay": outcome(ids, app.invoke(None, before.config)), "calls": list(calls)}
    seen["after_replay"] = snap(ids, app.get_state(CONFIG, subgraphs=True))
    seen["resumed"] = outcome(ids, app.invoke(api.Command(resume="z"), CONFIG))
    fork = app.update_state(before.config, {"x": ["fork"]})
    calls.clear()
    result = app.invoke(None, fork)
    seen["fork"] = {k: plain(v) for k, v in result.items() if k != "__interrupt__"}
    seen["fork_asked"] = [i.value for i in result["__interrupt__"]]
    seen["fork_calls"] = list(calls)
    seen["fork_resumed"] = outcome(ids, app.invoke(api.Command(resume="f"), CONFIG))
    return seen


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
        try:
            call()
            seen[name] = "ok"
        except Exception as error:
            seen[name] = error_kind(error)
    return seen


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
        try:
            seen[name] = plain(call())
        except Exception as error:
            seen[name] = error_kind(error)
    return seen


def async_resume_program(api):
    """The same resume at the node that asked, with `ainvoke`."""
    ids, calls = Ids(), []
    app = parent_of(api, three_node_subgraph(api, calls))

    async def go() -> list[Any]:
        first = outcome(ids, await app.ainvoke({"x": ["i"]}, CONFIG))
        second = outcome(ids, await app.ainvoke(api.Command(resume="a"), CONFIG))
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
    seen = {"first": outcome(ids, app.invoke({"x": ["i"]}, CONFIG))}
    seen["shallow"] = snap(ids, app.get_state(CONFIG))
    seen["deep"] = snap(ids, app.get_state(CONFIG, subgraphs=True))
    seen["by_ns"] = snap(ids, app.get_state(app.get_state(CONFIG).tasks[0].state))
    seen["resumed"] = outcome(ids, app.invoke(api.Command(resume="y"), CONFIG))
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
    seen = [outcome(ids, app.invoke({"x": []}, CONFIG))]
    seen.append(outcome(ids, app.invoke(api.Command(resume="y"), CONFIG)))
    seen.append(outcome(ids, app.invoke(api.Command(resume="z"), CONFIG)))
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
    seen["asked"] = outcome(ids, result)
    seen["deep"] = snap(ids, app.get_state(CONFIG, subgraphs=True))
    answers = {i.id: "a-" + i.value for i in result["__interrupt__"]}
    seen["answered"] = outcome(ids, app.invoke(api.Command(resume=answers), CONFIG))
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


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_subgraph_checkpoint_programs_behave_as_on_langgraph(program):
    langgraph, nbgraph = both(program)
    assert nbgraph == langgraph


@pytest.mark.parametrize(
    "program",
    [resume_at_the_node_program, nested_program, update_subgraph_state_program],
    ids=lambda p: p.__name__,
)
def test_subgraph_checkpoints_in_sqlite_behave_as_on_langgraph(program, tmp_path):
    """nbgraph's SqliteSaver against LangGraph's in-memory saver: the same outcome."""
    nb_api = nbgraph_api("sqlite", str(tmp_path / "threads.sqlite"))
    langgraph, nbgraph = both(program, nb_api)
    assert nbgraph == langgraph


# --- another process, and the record -----------------------------------------------------------

PAUSE_IN_A_CHILD = """
import operator, sys
from typing import Annotated, TypedDict
import nbgraph
from nbgraph.checkpoint import SqliteSaver

class S(TypedDict):
    x: Annotated[list, operator.add]

def node(name, ask=False):
    def run(state: S):
        print("ran", name)
        value = nbgraph.interrupt(name + "?") if ask else ""
        return {"x": [name + value]}
    return run

sub = nbgraph.StateGraph(S).add_node("a", node("a")).add_node("b", node("b", ask=True))
sub.add_edge(nbgraph.START, "a").add_edge("a", "b")
parent = nbgraph.StateGraph(S).add_node("sub", sub.compile())
parent.add_edge(nbgraph.START, "sub")
with SqliteSaver(sys.argv[1]) as saver:
    app = parent.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    if sys.argv[2] == "start":
        print(app.invoke({"x": ["i"]}, config))
    else:
        print(app.invoke(nbgraph.Command(resume="!"), config))
"""


def test_a_subgraph_paused_in_one_process_resumes_at_its_node_in_another(tmp_path):
    """SqliteSaver: the subgraph's checkpoints outlive the process that paused it; a new
    process resumes it at `b` (`a` does not run again)."""
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(PAUSE_IN_A_CHILD))
    path = str(tmp_path / "threads.sqlite")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def child(mode: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, str(script), path, mode], capture_output=True, text=True,
            env=env, check=True, timeout=120,
        )  # fmt: skip
        return done.stdout.splitlines()

    started = child("start")
    assert started[:2] == ["ran a", "ran b"]
    assert "__interrupt__" in started[2] and "'x': ['i']" in started[2]
    resumed = child("resume")
    assert resumed == ["ran b", "{'x': ['i', 'i', 'a', 'b!']}"]


def test_run_from_checkpointer_rebuilds_subruns_as_the_live_run_has_them():
    """`Run.from_checkpointer` hangs each subgraph thread's rebuilt run on the task that ran
    it, nested as deep as the live run's: the tables are equal."""
    import nbgraph

    api = nbgraph_api()
    inner = api.StateGraph(S).add_node("ia", lambda s: {"x": ["ia"]})
    inner.add_edge(api.START, "ia")
    middle = api.StateGraph(S).add_node("m", lambda s: {"x": ["m"]})
    middle.add_node("inner", inner.compile()).add_edge(api.START, "m").add_edge("m", "inner")
    parent = api.StateGraph(S).add_node("p", lambda s: {"x": ["p"]})
    parent.add_node("outer", middle.compile()).add_node("other", middle.compile())
    twice_graph = inner.compile()

    def twice(state: S):
        return {"x": twice_graph.invoke({"x": []})["x"] + twice_graph.invoke({"x": []})["x"]}

    parent.add_node("twice", twice)
    parent.add_edge(api.START, "p").add_edge("p", "outer").add_edge("p", "other")
    parent.add_edge("p", "twice")
    saver = nbgraph.MemorySaver()
    app = parent.compile(checkpointer=saver)
    app.invoke({"x": ["i"]}, CONFIG)
    live = app.last_run
    for rebuilt in (nbgraph.Run.from_checkpointer(saver, "t"),
                    nbgraph.Run.from_checkpointer(saver, "t", graph=app)):  # fmt: skip
        assert rebuilt.steps.equals(live.steps)
        assert [s.task for s in rebuilt.subruns] == [s.task for s in live.subruns]
        assert len(live.subruns) == 4  # outer, other, and the two runs of `twice`
        for got, want in zip(rebuilt.subruns, live.subruns, strict=True):
            assert got.steps.equals(want.steps)
            assert got.effects.equals(want.effects)
            assert got.states.equals(want.states)
            assert got.parent is rebuilt
            assert len(got.subruns) == len(want.subruns)
            for got_inner, want_inner in zip(got.subruns, want.subruns, strict=True):
                assert got_inner.steps.equals(want_inner.steps)
                assert got_inner.task == want_inner.task


def test_delete_thread_deletes_its_subgraphs_threads(tmp_path):
    """`delete_thread` of a parent's thread deletes its subgraphs' threads too."""
    from nbgraph.checkpoint import SqliteSaver

    for saver in (nbgraph_api().saver(), SqliteSaver(str(tmp_path / "t.sqlite"))):
        app = parent_of(nbgraph_api(), three_node_subgraph(nbgraph_api(), []), saver)
        app.invoke({"x": ["i"]}, CONFIG)
        app.invoke({"x": ["i"]}, {"configurable": {"thread_id": "other"}})
        assert len(saver.threads()) == 4
        saver.delete_thread("t")
        assert [key.split("\x1f")[0] for key in saver.threads()] == ["other", "other"]
        assert list(saver.list(CONFIG)) == []
