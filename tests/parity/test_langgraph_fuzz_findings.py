"""Differential test: what the random differential fuzz (`tests/support/fuzz.py`) found, each
as a small program run on real LangGraph and on nbgraph (`tests/support/harness.py`).

- a deferred node beside pending `Send`s runs in the step after its trigger, with them;
- a thread paused in a `Send` task beside a deferred node shows the question on that task;
- a resumed call gets LangGraph's step budget (`recursion_limit + 1` from its checkpoint);
- `Command(goto=..., update=...)` as input on a thread that is not paused runs;
- one plain answer for several questions raises what LangGraph's `except RuntimeError` catches;
- a `@task` calling a `@task` gets its own call's saved result when a run resumes;
- under `durability="exit"`, a run that failed on a write conflict can still be looked at;
- a `goto` after `Send`s failed on a write conflict moves their task ids, each keeping its own
  finished writes;
- under `durability="exit"`, a step of pulled nodes and `Send`s failed on a write conflict
  keeps only the `Send`s due, and the nodes triggered before the conflicting field (shown,
  not run by a resume, as LangGraph's);
- an update that triggers only a deferred node while deferred nodes (or a fired join's
  target) are due runs it beside them.
"""

# No `from __future__ import annotations`: the state classes are defined in functions.

import operator
from typing import Annotated, TypedDict

import pytest

from tests.support.harness import MODES, both, canonical_stream, outcome, plain, same

pytestmark = pytest.mark.langgraph


class Fan(TypedDict, total=False):
    log: Annotated[list, operator.add]
    found: Annotated[list, operator.add]
    digest: str
    item: int


def fan_out(api, interrupting: bool = False, **compile_options):
    """`split` sends items to `visit` and has an edge to `digest`, a deferred node."""

    def visit(state):
        said = api.interrupt({"item": state["item"]}) if interrupting else "-"
        return {"found": [state["item"]], "log": [f"visit {state['item']} {said}"]}

    builder = api.StateGraph(Fan)
    builder.add_node("split", lambda s: {"log": ["split"]})
    builder.add_node("visit", visit)
    builder.add_node(
        "digest", lambda s: {"digest": "+".join(map(str, s["found"])), "log": ["digest"]},
        defer=True,
    )  # fmt: skip
    builder.add_edge(api.START, "split")
    count = 1 if interrupting else 3
    builder.add_conditional_edges(
        "split", lambda s: [api.Send("visit", {"item": i}) for i in range(count)]
    )
    builder.add_edge("split", "digest")
    return builder.compile(**compile_options)


def snapshot(state) -> dict:
    return {
        "values": plain(state.values),
        "next": state.next,
        "tasks": [(t.name, [plain(i.value) for i in t.interrupts]) for t in state.tasks],
        "step": state.metadata["step"],
    }


def failed_then_resumed(app) -> list:
    """Under `durability="exit"`: what an `invoke` that fails, the state and history after
    it, a resume, and the state after that give (each an `outcome`)."""
    config = {"configurable": {"thread_id": "t"}}
    seen = [outcome(app.invoke, {"log": []}, config, durability="exit")]
    seen.append(outcome(lambda: snapshot(app.get_state(config))))
    seen.append(outcome(lambda: [snapshot(s) for s in app.get_state_history(config)]))
    seen.append(outcome(app.invoke, None, config, durability="exit"))
    seen.append(outcome(lambda: snapshot(app.get_state(config))))
    return seen


def test_a_deferred_node_runs_beside_the_sends_due_in_its_step():
    def program(api):
        app = fan_out(api)
        chunks = list(app.stream({"log": [], "found": []}, stream_mode=MODES))
        return app.invoke({"log": [], "found": []}), canonical_stream(chunks, MODES)

    same(program)


def test_a_question_asked_in_a_send_task_beside_a_deferred_node_is_on_that_task():
    def program(api):
        app = fan_out(api, interrupting=True, checkpointer=api.InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        app.invoke({"log": [], "found": []}, config)
        paused = snapshot(app.get_state(config))
        history = [snapshot(s) for s in app.get_state_history(config)]
        final = app.invoke(api.Command(resume="yes"), config)
        return paused, history, plain(final)

    same(program)


class Log(TypedDict):
    log: Annotated[list, operator.add]


def chain_after_question(api, length: int):
    """`ask` (asks once) then `length` nodes in a line."""

    def ask(state):
        api.interrupt("go?")
        return {"log": ["ask"]}

    builder = api.StateGraph(Log).add_node("ask", ask).add_edge(api.START, "ask")
    previous = "ask"
    for i in range(length):
        builder.add_node(f"n{i}", lambda s, i=i: {"log": [f"n{i}"]}).add_edge(previous, f"n{i}")
        previous = f"n{i}"
    return builder.compile(checkpointer=api.InMemorySaver())


@pytest.mark.parametrize("length", [3, 4, 5])
def test_a_resumed_call_has_the_step_budget_of_langgraph(length):
    def program(api):
        app = chain_after_question(api, length)
        config = {"configurable": {"thread_id": "t"}, "recursion_limit": 4}
        app.invoke({"log": []}, config)
        answered = outcome(app.invoke, api.Command(resume="yes"), config)
        again = outcome(app.invoke, None, config)  # (after a limit: how far it goes on)
        return answered, again, snapshot(app.get_state(config))

    same(program)


def test_a_loop_resumed_after_its_limit_goes_as_far_as_on_langgraph():
    def program(api):
        app = (
            api.StateGraph(Log)
            .add_node("spin", lambda s: {"log": ["spin"]})
            .add_edge(api.START, "spin")
            .add_conditional_edges("spin", lambda s: "spin" if len(s["log"]) < 20 else api.END)
            .compile(checkpointer=api.InMemorySaver())
        )
        config = {"configurable": {"thread_id": "t"}, "recursion_limit": 3}
        calls = [outcome(app.invoke, {"log": []}, config)]
        for _ in range(4):
            calls.append(outcome(app.invoke, None, config))
            calls.append(len(app.get_state(config).values["log"]))
        return calls

    same(program)


def test_a_command_with_goto_or_update_runs_on_a_thread_that_is_not_paused():
    def program(api):
        app = (
            api.StateGraph(Log)
            .add_node("a", lambda s: {"log": ["a"]})
            .add_node("b", lambda s: {"log": ["b"]})
            .add_edge(api.START, "a")
            .add_edge("a", api.END)
            .add_edge("b", api.END)
            .compile(checkpointer=api.InMemorySaver())
        )
        seen = []
        commands = [
            api.Command(goto="b"),
            api.Command(update={"log": ["edited"]}, goto="b"),
            api.Command(goto=["a", "b"]),
            api.Command(resume="nobody asked"),
        ]
        for thread, command in enumerate(commands):
            config = {"configurable": {"thread_id": str(thread)}}
            app.invoke({"log": []}, config)
            seen.append(outcome(app.invoke, command, config))
            seen.append(snapshot(app.get_state(config)))
            seen.append([snapshot(s)["step"] for s in app.get_state_history(config)])
        return seen

    same(program)


def test_one_plain_answer_for_two_questions_raises_what_langgraph_code_catches():
    def program(api):
        builder = api.StateGraph(Log)
        for name in ("left", "right"):
            builder.add_node(name, lambda s, name=name: {"log": [api.interrupt(name)]})
            builder.add_edge(api.START, name)
        app = builder.compile(checkpointer=api.InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        app.invoke({"log": []}, config)
        try:
            app.invoke(api.Command(resume="both"), config)
        except RuntimeError as error:  # (what LangGraph raises; a LangGraph program catches it)
            caught = "RuntimeError"
            assert isinstance(error, RuntimeError)
        ids = {i.value: i.id for i in app.get_state(config).interrupts}
        answered = app.invoke(api.Command(resume={ids["left"]: 1, ids["right"]: 2}), config)
        return caught, sorted(answered["log"])

    same(program)


def nested_calls(api, *, ask_in: set, fail_first: set, ask_in_main: bool, saver):
    """An entrypoint calling `work(i)` for four items at once; `work(i)` calls
    `inner(i)`; the ones in `ask_in` ask a question, those in `fail_first` fail once."""
    ran, failed = [], set()

    @api.task
    def inner(x):
        ran.append(f"inner {x}")
        return x + 100

    @api.task
    def work(i):
        ran.append(f"work {i}")
        if i in fail_first and i not in failed:
            failed.add(i)
            raise KeyError(f"work {i} fails once")
        said = api.interrupt(f"work {i}?") if i in ask_in else ""
        return [f"{i}{said}", inner(i).result()]

    @api.entrypoint(checkpointer=saver)
    def main(items):
        got = [f.result() for f in [work(i) for i in items]]
        if ask_in_main:
            got.append(api.interrupt("done?"))
        return got

    return main, ran


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
@pytest.mark.parametrize(
    "ask_in, fail_first, ask_in_main",
    [({1}, set(), False), (set(), {0}, False), ({1, 3}, {0}, True), ({2}, set(), True)],
)
def test_nested_task_calls_get_their_own_results_when_a_run_resumes(
    tmp_path, saver, ask_in, fail_first, ask_in_main
):
    def program(api):
        main, ran = nested_calls(api, ask_in=ask_in, fail_first=fail_first,
                                 ask_in_main=ask_in_main, saver=api.saver())  # fmt: skip
        config = {"configurable": {"thread_id": "t"}}
        seen = [outcome(main.invoke, list(range(4)), config, shape=plain)]
        for turn in range(6):
            state = main.get_state(config)
            if not state.next:
                break
            asked = sorted((str(i.value), i.id) for i in state.interrupts)
            if len(asked) > 1:
                answer = {interrupt_id: f" a{turn}" for _, interrupt_id in asked}
            else:
                answer = f" a{turn}" if asked else None
            command = None if answer is None else api.Command(resume=answer)
            seen.append([value for value, _ in asked])
            seen.append(outcome(main.invoke, command, config, shape=plain))
        # (after a failure, which calls beside it had finished is up to the threads)
        return seen, sorted(ran) if not fail_first else sorted(set(ran))

    same(program, saver=saver, folder=tmp_path)


class Clash(TypedDict):
    log: Annotated[list, operator.add]
    v: int


@pytest.mark.parametrize("sends", [False, True])
@pytest.mark.parametrize("log_first", [True, False])
@pytest.mark.parametrize("durability", ["exit", "sync"])
def test_a_run_that_failed_on_a_write_conflict_can_be_looked_at_as_on_langgraph(
    durability, log_first, sends
):
    def writes(name, v):  # (which field a task writes first decides what LangGraph keeps)
        return {"log": [name], "v": v} if log_first else {"v": v, "log": [name]}

    def program(api):
        builder = (
            api.StateGraph(Clash)
            .add_node("first", lambda s: {"log": ["first"]})
            .add_node("a", lambda s: writes("a", s.get("v", 1)))
            .add_node("b", lambda s: writes("b", 2))
            .add_edge(api.START, "first")
        )
        if sends:  # (LangGraph keeps a failed step's Sends due, and their writes pending)
            builder.add_conditional_edges(
                "first", lambda s: [api.Send("a", {"v": 1}), api.Send("a", {"v": 2})]
            )
        else:
            builder.add_edge("first", "a").add_edge("first", "b")
        app = builder.compile(checkpointer=api.InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        failed = outcome(app.invoke, {"log": []}, config, durability=durability)
        looked = outcome(lambda: snapshot(app.get_state(config)))
        history = outcome(lambda: [snapshot(s) for s in app.get_state_history(config)])
        return failed, looked, history, outcome(app.invoke, None, config, durability=durability)

    same(program)


@pytest.mark.parametrize("stop", ["limit", "error"])
def test_a_subgraph_stopped_by_the_step_limit_or_an_error_goes_on_where_it_stopped(stop):
    def program(api):
        ran, failed = [], set()

        def step(name):
            def run(state):
                ran.append(name)
                if stop == "error" and name == "i2" and not failed:
                    failed.add(name)
                    raise KeyError("i2 fails once")
                return {"log": [name]}

            return run

        inner = api.StateGraph(Log)
        previous = api.START
        for name in ("i0", "i1", "i2", "i3"):
            inner.add_node(name, step(name)).add_edge(previous, name)
            previous = name
        app = (
            api.StateGraph(Log)
            .add_node("sub", inner.compile())
            .add_node("after", lambda s: {"log": ["after"]})
            .add_edge(api.START, "sub")
            .add_edge("sub", "after")
            .compile(checkpointer=api.InMemorySaver())
        )
        limit = 2 if stop == "limit" else 25
        config = {"configurable": {"thread_id": "t"}, "recursion_limit": limit}
        seen = [outcome(app.invoke, {"log": []}, config)]
        seen.append(outcome(app.invoke, None, config))
        seen.append(snapshot(app.get_state(config)))
        return seen, ran

    same(program)


def test_a_paused_step_whose_finished_writes_conflict_raises_as_on_langgraph():
    def program(api):
        app = (
            api.StateGraph(Clash)
            .add_node("ask", lambda s: {"log": [api.interrupt("ask?")]})
            .add_node("b", lambda s: {"log": ["b"], "v": 1})
            .add_node("c", lambda s: {"v": 2})
            .add_edge(api.START, "ask")
            .add_edge(api.START, "b")
            .add_edge(api.START, "c")
            .compile(checkpointer=api.InMemorySaver())
        )
        invoked = {"configurable": {"thread_id": "invoked"}}
        streamed = {"configurable": {"thread_id": "streamed"}}
        return (
            outcome(app.invoke, {"log": []}, invoked),
            outcome(lambda: list(app.stream({"log": []}, streamed, stream_mode="values"))),
            outcome(lambda: snapshot(app.get_state(invoked))),
        )

    same(program)


def looping_with_a_deferred_node(api):
    """`spin` loops on itself and also triggers `tidy` (deferred), which goes back to
    `spin`; the loop ends once the log has four entries."""
    return (
        api.StateGraph(Log)
        .add_node("tidy", lambda s: {"log": ["tidy"]}, defer=True)
        .add_node("spin", lambda s: {"log": ["spin"]})
        .add_node("other", lambda s: {"log": ["other"]})
        .add_edge(api.START, "spin")
        .add_edge("tidy", "spin")
        .add_conditional_edges("spin", lambda s: ["spin", "tidy"] if len(s["log"]) < 4 else api.END)
        .compile(checkpointer=api.InMemorySaver())
    )


@pytest.mark.parametrize("target", ["tidy", "other", "spin"])
def test_a_goto_on_a_finished_or_stopped_thread_treats_deferred_nodes_as_langgraph(target):
    def program(api):
        app = looping_with_a_deferred_node(api)
        seen = []
        for thread, limit in (("finished", 25), ("stopped", 3)):
            config = {"configurable": {"thread_id": thread}, "recursion_limit": limit}
            seen.append(outcome(app.invoke, {"log": []}, config))
            command = api.Command(goto=target, update={"log": [f"goto {target}"]})
            seen.append(outcome(app.invoke, command, config))
            seen.append(snapshot(app.get_state(config)))
            seen.append(outcome(app.invoke, None, config))
        return seen

    same(program)


@pytest.mark.parametrize("as_node", ["spin", "tidy"])
def test_an_update_keeps_the_deferred_nodes_and_waiting_edges_that_wait(as_node):
    def program(api):
        app = looping_with_a_deferred_node(api)
        config = {"configurable": {"thread_id": "t"}, "recursion_limit": 3}
        seen = [outcome(app.invoke, {"log": []}, config)]
        app.update_state(config, {"log": ["edited"]}, as_node=as_node)
        seen.append(snapshot(app.get_state(config)))
        seen.append(outcome(app.invoke, None, config))
        joined = (
            api.StateGraph(Log)
            .add_node("a", lambda s: {"log": ["a"]})
            .add_node("b", lambda s: {"log": [api.interrupt("b?")]})
            .add_node("both", lambda s: {"log": ["both"]})
            .add_edge(api.START, "a")
            .add_edge("a", "b")
            .add_edge(["a", "b"], "both")
            .compile(checkpointer=api.InMemorySaver())
        )
        joined.invoke({"log": []}, config)
        joined.update_state(config, {"log": ["b by hand"]}, as_node="b")
        seen.append(snapshot(joined.get_state(config)))
        seen.append(outcome(joined.invoke, None, config))
        return seen

    same(program)


def test_an_update_leaves_a_due_deferred_node_due():
    def program(api):
        app = (
            api.StateGraph(Log)
            .add_node("a", lambda s: {"log": ["a"]})
            .add_node("late", lambda s: {"log": ["late"]}, defer=True)
            .add_node("aside", lambda s: {"log": ["aside"]})
            .add_edge(api.START, "a")
            .add_edge("a", "late")
            .compile(checkpointer=api.InMemorySaver(), interrupt_before=["late"])
        )
        config = {"configurable": {"thread_id": "t"}}
        seen = [outcome(app.invoke, {"log": []}, config), snapshot(app.get_state(config))]
        app.update_state(config, {"log": ["by hand"]}, as_node="aside")
        seen += [snapshot(app.get_state(config)), outcome(app.invoke, None, config)]
        return seen

    same(program)


def test_an_update_after_a_goto_starts_from_the_checkpoint_as_on_langgraph():
    def program(api):
        app = (
            api.StateGraph(Log)
            .add_node("a", lambda s: {"log": ["a"]})
            .add_node("ask", lambda s: {"log": [api.interrupt("ask?")]})
            .add_node("more", lambda s: {"log": ["more"]})
            .add_edge(api.START, "a")
            .add_conditional_edges("ask", lambda s: "more" if len(s["log"]) < 3 else api.END)
            .compile(checkpointer=api.InMemorySaver())
        )
        config = {"configurable": {"thread_id": "t"}}
        seen = [outcome(app.invoke, {"log": []}, config)]
        command = api.Command(goto="ask", update={"log": ["go"]})
        seen.append(outcome(app.invoke, command, config, shape=plain))
        app.update_state(config, {"log": ["by hand"]}, as_node="ask")
        seen += [snapshot(app.get_state(config)), outcome(app.invoke, None, config)]
        return seen

    same(program)


def test_under_exit_durability_a_stopped_subgraph_goes_on_where_it_stopped():
    """On purpose (docs/langgraph.md): LangGraph's resumed task does not find the subgraph
    checkpoint saved at exit and runs the subgraph again from its input; nbgraph goes on as
    both libraries do under "sync"."""

    def program(api, durability):
        inner = api.StateGraph(Log)
        previous = api.START
        for name in ("i0", "i1", "i2", "i3"):
            inner.add_node(name, lambda s, name=name: {"log": [name]}).add_edge(previous, name)
            previous = name
        app = (
            api.StateGraph(Log)
            .add_node("sub", inner.compile())
            .add_edge(api.START, "sub")
            .compile(checkpointer=api.InMemorySaver())
        )
        config = {"configurable": {"thread_id": "t"}, "recursion_limit": 2}
        first = outcome(app.invoke, {"log": []}, config, durability=durability)
        return first, outcome(app.invoke, None, config, durability=durability)

    langgraph, nbgraph = both(program, "exit")
    assert langgraph[0] == nbgraph[0] == ("raised", "GraphRecursionError")
    assert langgraph[1] == ("raised", "GraphRecursionError")  # (started again, stopped again)
    assert nbgraph[1] == ("ok", {"log": ["i0", "i1", "i2", "i3"]})
    assert both(program, "sync")[0][1] == nbgraph[1]  # (what LangGraph does under "sync")


def test_a_waiting_edge_counts_a_source_that_ran_twice_in_one_step_once():
    def program(api):
        app = (
            api.StateGraph(Fan)
            .add_node("split", lambda s: {"log": ["split"]})
            .add_node("visit", lambda s: {"log": ["visit"]})
            .add_node("other", lambda s: {"log": ["other"]})
            .add_node("join", lambda s: {"log": ["join"]})
            .add_edge(api.START, "split")
            .add_edge("split", "visit")
            .add_edge("split", "other")
            .add_conditional_edges("split", lambda s: [api.Send("visit", {"log": []})])
            .add_edge(["visit", "other"], "join")
            .add_conditional_edges(
                "join", lambda s: "other" if s["log"].count("join") < 2 else api.END
            )
            .compile(checkpointer=api.InMemorySaver())
        )
        config = {"configurable": {"thread_id": "t"}}
        final = app.invoke({"log": []}, config)
        # (next sorted: LangGraph lists a step's pulled nodes in the order they were added)
        history = [sorted(snapshot(s)["next"]) for s in app.get_state_history(config)]
        return sorted(final["log"]), history

    same(program)


@pytest.mark.parametrize("as_node", ["other", "j"])
def test_an_update_keeps_a_fired_waiting_edge_due(as_node):
    def program(api):
        app = (
            api.StateGraph(Log)
            .add_node("a", lambda s: {"log": ["a"]})
            .add_node("c", lambda s: {"log": ["c"]})
            .add_node("ask", lambda s: {"log": [api.interrupt("ask?")]})
            .add_node("j", lambda s: {"log": ["j"]})
            .add_node("other", lambda s: {"log": ["other"]})
            .add_edge(api.START, "a")
            .add_edge(api.START, "c")
            .add_edge("a", "ask")
            .add_edge(["a", "c"], "j")
            .compile(checkpointer=api.InMemorySaver())
        )
        config = {"configurable": {"thread_id": "t"}}
        seen = [outcome(app.invoke, {"log": []}, config, shape=plain)]
        app.update_state(config, {"log": ["by hand"]}, as_node=as_node)
        seen += [snapshot(app.get_state(config)), outcome(app.invoke, None, config, shape=plain)]
        return seen

    same(program)


def test_a_goto_beside_a_due_deferred_node_keeps_the_finished_sends_results():
    def program(api):
        failed = []

        def late(state):
            if not failed:
                failed.append(1)
                raise KeyError("late fails once")
            return {"log": ["late"]}

        app = (
            api.StateGraph(Fan)
            .add_node("split", lambda s: {"log": ["split"]})
            .add_node("visit", lambda s: {"log": ["visit"]})
            .add_node("late", late, defer=True)
            .add_node("jump", lambda s: {"log": ["jump"]})
            .add_edge(api.START, "split")
            .add_edge("split", "late")
            .add_conditional_edges("split", lambda s: [api.Send("visit", {"log": []})])
            .compile(checkpointer=api.InMemorySaver())
        )
        config = {"configurable": {"thread_id": "t"}}
        seen = [outcome(app.invoke, {"log": []}, config), snapshot(app.get_state(config))]
        chunks = app.stream(api.Command(goto="jump"), config, stream_mode="updates")
        seen.append(sorted(map(repr, chunks)))
        return seen

    same(program)


@pytest.mark.parametrize("follow", ["goto", "update"])
def test_a_goto_after_sends_failed_on_a_write_conflict_keeps_each_sends_writes(follow):
    """Two `Send`s to one node write one field without a reducer: the step fails. A
    `Command(goto=)` on the thread then adds a node before them in the step, so their task
    ids move; each keeps its own finished writes (none is lost to the other's new id), and
    the step fails again as on LangGraph."""

    def program(api):
        builder = (
            api.StateGraph(Clash)
            .add_node("first", lambda s: {"log": ["first"]})
            .add_node("a", lambda s: {"log": ["a"], "v": s.get("v", 1)})
            .add_node("c", lambda s: {"log": ["c"]})
            .add_edge(api.START, "first")
            .add_edge("c", api.END)
        )
        builder.add_conditional_edges(
            "first", lambda s: [api.Send("a", {"v": 1}), api.Send("a", {"v": 2})]
        )
        app = builder.compile(checkpointer=api.InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        seen = [outcome(app.invoke, {"log": []}, config)]
        if follow == "goto":
            command = api.Command(goto="c", update={"log": ["goto"]})
            seen.append(outcome(app.invoke, command, config))
        else:
            seen.append(outcome(lambda: bool(app.update_state(config, {"log": ["u"]}, "c"))))
        seen.append(outcome(lambda: snapshot(app.get_state(config))))
        seen.append(outcome(app.invoke, None, config))
        seen.append(outcome(lambda: snapshot(app.get_state(config))))
        return seen

    same(program)


@pytest.mark.parametrize("log_first", [True, False])
def test_under_exit_durability_a_failed_step_keeps_only_its_sends_due(log_first):
    """A step of two pulled nodes and a `Send` fails on a write conflict under
    `durability="exit"`: the checkpoint saved at exit keeps the `Send` due with its writes
    (`get_state` shows them applied, `invoke(None)` takes them without running it again);
    the pulled nodes are not due any more."""

    def writes(name, v):
        return {"log": [name], "v": v} if log_first else {"v": v, "log": [name]}

    def program(api):
        builder = (
            api.StateGraph(Clash)
            .add_node("first", lambda s: {"log": ["first"]})
            .add_node("a", lambda s: writes("a", 1))
            .add_node("b", lambda s: {"log": ["b"]})
            .add_node("c", lambda s: writes("c", s["v"]))
            .add_edge(api.START, "first")
            .add_edge("first", "a")
            .add_edge("first", "b")
        )
        builder.add_conditional_edges("first", lambda s: [api.Send("c", {"v": 2})])
        return failed_then_resumed(builder.compile(checkpointer=api.InMemorySaver()))

    same(program)


@pytest.mark.parametrize("sends", [False, True])
def test_under_exit_durability_a_failed_step_keeps_what_was_triggered_before_the_conflict(
    sends,
):
    """A step of `a`, `b`, `c` (in that write order) fails on `b`'s and `c`'s writes to `v`
    under `durability="exit"`. LangGraph's checkpoint then holds what was written before
    that field: `a`'s log entry, and `a`'s edge to `d` (or the `Send`s `a` makes), so `d`
    is due; `b` and `c` are not."""

    def program(api):
        builder = (
            api.StateGraph(Clash)
            .add_node("first", lambda s: {"log": ["first"]})
            .add_node("a", lambda s: {"log": ["a"]})
            .add_node("b", lambda s: {"v": 1})
            .add_node("c", lambda s: {"v": 2})
            .add_node("d", lambda s: {"log": [f"d {s.get('v')}"]})
            .add_edge(api.START, "first")
            .add_edge("first", "a")
            .add_edge("first", "b")
            .add_edge("first", "c")
        )
        if sends:
            builder.add_conditional_edges("a", lambda s: [api.Send("d", {"log": []})] * 2)
        else:
            builder.add_edge("a", "d")
        return failed_then_resumed(builder.compile(checkpointer=api.InMemorySaver()))

    same(program)


def test_an_update_that_triggers_only_a_deferred_node_runs_it_beside_those_due():
    """A thread stopped before `n3`, a deferred node due (nothing else was). An update
    written as `n1`, whose edge goes to `n2`, also deferred, triggers no other node: on
    LangGraph the deferred channels finish, so `n2` and `n3` both run next (not `n3`, then
    `n2`)."""

    def program(api):
        app = (
            api.StateGraph(Log)
            .add_node("n1", lambda s: {"log": ["n1"]})
            .add_node("n2", lambda s: {"log": ["n2"]}, defer=True)
            .add_node("n3", lambda s: {"log": ["n3"]}, defer=True)
            .add_edge(api.START, "n2")
            .add_edge("n1", "n2")
            .add_edge("n2", "n3")
            .compile(checkpointer=api.InMemorySaver(), interrupt_before=["n3"])
        )
        return updated_then_run_on(app, as_node="n1")

    same(program)


def test_an_update_that_triggers_only_a_deferred_node_runs_it_beside_a_fired_join():
    """A thread stopped before `q`, the target of a waiting edge `[a, b] -> q` that fired.
    An update written as `x`, whose edge goes to `z` (deferred), triggers no other node:
    on LangGraph `z` runs next beside `q` (its channel finishes; the join's barrier is
    still full)."""

    def program(api):
        app = (
            api.StateGraph(Log)
            .add_node("a", lambda s: {"log": ["a"]})
            .add_node("b", lambda s: {"log": ["b"]})
            .add_node("q", lambda s: {"log": ["q"]})
            .add_node("x", lambda s: {"log": ["x"]})
            .add_node("z", lambda s: {"log": ["z"]}, defer=True)
            .add_edge(api.START, "a")
            .add_edge(api.START, "b")
            .add_edge(["a", "b"], "q")
            .add_edge("x", "z")
            .compile(checkpointer=api.InMemorySaver(), interrupt_before=["q"])
        )
        return updated_then_run_on(app, as_node="x")

    same(program)


def updated_then_run_on(app, as_node: str) -> list:
    """Run `app` on a thread to its breakpoint, write an update as `as_node`, then go on
    past the breakpoint: what each call gives, and the snapshots between."""
    config = {"configurable": {"thread_id": "t"}}
    seen = [outcome(app.invoke, {"log": []}, config)]
    app.update_state(config, {"log": [f"update as {as_node}"]}, as_node=as_node)
    seen.append(snapshot(app.get_state(config)))
    chunks = app.stream(None, config, stream_mode="updates", interrupt_before=[])
    seen.append(outcome(lambda: list(chunks)))
    seen.append(snapshot(app.get_state(config)))
    return seen
