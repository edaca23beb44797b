"""`nbgraph.trace` and `Run.from_langgraph` on LangChain's `create_agent` agents with
middleware: human in the loop (approve, edit, reject; batched and per call), model and tool
call limits, middleware of one's own. The oracle is the agent's own LangGraph history: every
step of the record must run the tasks LangGraph's checkpoints say ran, hold the values they
hold, pause where they paused, and `pauses_of` must give each interrupt with the answer the
thread was resumed with.
"""

import asyncio
import itertools
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ToolCallLimitMiddleware,
    before_model,
)
from langchain_core.messages import HumanMessage, RemoveMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Command, interrupt

import nbgraph
from nbgraph.errors import InvalidArgumentError
from nbgraph.notebook.langgraph_trace import atrace as nbgraph_atrace
from nbgraph.record.langgraph.pauses import pauses_of
from nbgraph.types import MISSING
from tests.support.scripted_model import ScriptedChatModel, calls, tool_call

pytestmark = pytest.mark.langgraph

THREAD = {"configurable": {"thread_id": "t"}}
HITL = "HumanInTheLoopMiddleware.after_model"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def ask(text: str) -> dict:
    return {"messages": [HumanMessage(text, id=f"h-{text}")]}


def agent_of(script: list, middleware: list, tools: list | None = None, **kwargs: Any) -> Any:
    model = ScriptedChatModel.of(script)
    return create_agent(model, tools or [add], middleware=middleware, **kwargs)


# --- the oracle: the agent's own history ----------------------------------------------------


def history(agent: Any, config: dict = THREAD) -> list[Any]:
    """The thread's snapshots on the chain to its head, oldest first."""
    found = list(agent.get_state_history(config))
    by_id = {s.config["configurable"]["checkpoint_id"]: s for s in found}
    chain = [found[0]]
    while chain[-1].parent_config is not None:
        chain.append(by_id[chain[-1].parent_config["configurable"]["checkpoint_id"]])
    return chain[::-1]


def agrees_with_history(run: Any, agent: Any, config: dict = THREAD) -> None:
    """Each LangGraph checkpoint after a step: the record's step ran the tasks its parent
    planned and its state is the checkpoint's values; the head's pause or error is the
    record's; no value had to be taken from LangGraph over the record's own fold."""
    chain = history(agent, config)
    steps = {step.step: step for step in run.log.steps}
    for parent, child in itertools.pairwise(chain):
        if child.metadata["source"] != "loop":
            continue
        s = child.metadata["step"]
        assert sorted(t.node for t in steps[s].tasks) == sorted(t.name for t in parent.tasks), s
        assert run.state_at(s) == child.values, f"step {s}"
    head = chain[-1]
    asked = [i.id for t in head.tasks for i in t.interrupts]
    failed = [t for t in head.tasks if t.error]
    status = "failed" if failed else "interrupted" if head.next else "done"
    assert run.status == status
    if head.next:  # the step LangGraph has still to run: the record's last, not applied
        last = run.log.steps[-1]
        assert [t.node for t in last.tasks if t.interrupts or t.error] == [
            t.name for t in head.tasks if t.interrupts or t.error
        ]
        assert [i.id for t in last.tasks for i in t.interrupts] == asked
    assert not [w for w in run.warnings if "does not give LangGraph's value" in w]
    kept = [p for p in pauses_of(run) if p.value is not MISSING]  # a task's last question
    assert [(p.interrupt_id, p.value) for p in kept] == [
        (i.id, i.value) for snap in chain for t in snap.tasks for i in t.interrupts
    ]


def messages_of(run: Any, node: str) -> list[Any]:
    """The messages the tasks of `node` wrote, in order."""
    return [
        m
        for task in run.log.tasks()
        if task.node == node
        for name, value in task.writes
        if name == "messages"
        for m in value
    ]


# --- human in the loop ----------------------------------------------------------------------


def hitl_agent(**options: Any) -> Any:
    script = [calls(tool_call("add", {"a": 1, "b": 2}, "c1"), id="m1"), "done"]
    middleware = [HumanInTheLoopMiddleware({"add": True}, **options)]
    return agent_of(script, middleware, checkpointer=InMemorySaver())


def test_hitl_pause_is_the_records_interrupt():
    agent = hitl_agent()
    run = nbgraph.trace(agent, ask("add"), THREAD)
    agrees_with_history(run, agent)
    paused = [t for t in run.log.steps[-1].tasks if t.interrupts]
    assert [t.node for t in paused] == [HITL]
    request = paused[0].interrupts[0].value
    assert [a["name"] for a in request["action_requests"]] == ["add"]
    (pause,) = pauses_of(run)
    assert pause.node == HITL and not pause.answered


def test_hitl_approve_resumed():
    agent = hitl_agent()
    nbgraph.trace(agent, ask("add"), THREAD)
    answer = {"decisions": [{"type": "approve"}]}
    run = nbgraph.trace(agent, Command(resume=answer), THREAD)
    agrees_with_history(run, agent)
    (pause,) = pauses_of(run)
    assert pause.answered and pause.resume == answer and pause.node == HITL
    assert [m.content for m in messages_of(run, "tools")] == ["3"]
    nodes = [t.node for t in run.log.tasks()]
    assert nodes == ["__start__", "model", HITL, "tools", "model", HITL]


def test_hitl_edit_runs_the_edited_call():
    agent = hitl_agent()
    nbgraph.trace(agent, ask("add"), THREAD)
    edit = {"type": "edit", "edited_action": {"name": "add", "args": {"a": 10, "b": 2}}}
    run = nbgraph.trace(agent, Command(resume={"decisions": [edit]}), THREAD)
    agrees_with_history(run, agent)
    (tool_message,) = messages_of(run, "tools")
    assert "12" in tool_message.content
    kept = [v for t in run.log.tasks() if t.node == HITL for n, v in t.writes if n != "messages"]
    assert {"c1": edit["edited_action"]} in kept
    assert pauses_of(run)[0].resume == {"decisions": [edit]}


def test_hitl_reject_answers_for_the_tool():
    agent = hitl_agent()
    nbgraph.trace(agent, ask("add"), THREAD)
    reject = {"type": "reject", "message": "not now"}
    run = nbgraph.trace(agent, Command(resume={"decisions": [reject]}), THREAD)
    agrees_with_history(run, agent)
    assert "tools" not in {t.node for t in run.log.tasks()}
    answered = [m for m in messages_of(run, HITL) if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.status) for m in answered] == [("c1", "error")]
    assert "not now" in answered[0].content


def test_hitl_per_call_answers_by_interrupt_id():
    script = [
        calls(tool_call("add", {"a": 1, "b": 2}, "c1"), tool_call("delete", {"path": "x"}, "c2")),
        "done",
    ]
    hitl = HumanInTheLoopMiddleware({"add": True, "delete": True}, interrupt_mode="per_call")
    agent = agent_of(script, [hitl], [add, delete], checkpointer=InMemorySaver())
    paused = nbgraph.trace(agent, ask("both"), THREAD)
    agrees_with_history(paused, agent)
    asked = {i.value["name"]: i.id for t in paused.log.steps[-1].tasks for i in t.interrupts}
    assert set(asked) == {"add", "delete"}
    answers = {asked["add"]: {"type": "approve"}, asked["delete"]: {"type": "reject"}}
    run = nbgraph.trace(agent, Command(resume=answers), THREAD)
    agrees_with_history(run, agent)
    assert {p.interrupt_id: p.resume for p in pauses_of(run)} == answers
    assert {p.node for p in pauses_of(run)} == {"tools"}
    results = {m.tool_call_id: m.status for m in messages_of(run, "tools")}
    assert results == {"c1": "success", "c2": "error"}


def test_a_second_pause_after_an_answer():
    script = [
        calls(tool_call("add", {"a": 1, "b": 2}, "c1")),
        calls(tool_call("add", {"a": 3, "b": 4}, "c2")),
        "done",
    ]
    agent = agent_of(
        script, [HumanInTheLoopMiddleware({"add": True})], checkpointer=InMemorySaver()
    )
    nbgraph.trace(agent, ask("twice"), THREAD)
    approve = {"decisions": [{"type": "approve"}]}
    nbgraph.trace(agent, Command(resume=approve), THREAD)
    run = nbgraph.trace(agent, Command(resume=approve), THREAD)
    agrees_with_history(run, agent)
    assert [(p.node, p.resume) for p in pauses_of(run)] == [(HITL, approve), (HITL, approve)]
    assert [m.content for m in messages_of(run, "tools")] == ["3", "7"]


# --- call limits -----------------------------------------------------------------------------


def looping_script(n: int) -> list:
    return [calls(tool_call("add", {"a": i, "b": 1}, f"c{i}"), id=f"m{i}") for i in range(n)]


def test_model_call_limit_ends_the_run():
    limit = ModelCallLimitMiddleware(run_limit=2, exit_behavior="end")
    agent = agent_of(looping_script(5), [limit], checkpointer=InMemorySaver())
    run = nbgraph.trace(agent, ask("loop"), THREAD)
    agrees_with_history(run, agent)
    assert [t.node for t in run.log.tasks()].count("model") == 2
    last = run.log.steps[-1].tasks[-1]
    assert last.node == "ModelCallLimitMiddleware.before_model"
    written = dict(last.writes)
    assert written["jump_to"] == "end"
    assert "limit" in written["messages"][-1].content.lower()
    assert any("UntrackedValue" in w and "run_model_call_count" in w for w in run.warnings)


def test_model_call_limit_error_over_a_thread():
    limit = ModelCallLimitMiddleware(thread_limit=2, exit_behavior="error")
    agent = agent_of(["one", "two", "three"], [limit], checkpointer=InMemorySaver())
    for text in ("a", "b"):
        assert nbgraph.trace(agent, ask(text), THREAD).status == "done"
    run = nbgraph.trace(agent, ask("c"), THREAD)
    agrees_with_history(run, agent)
    assert type(run.error).__name__ == "ModelCallLimitExceededError"
    (failed,) = [t for t in run.log.tasks() if t.error is not None]
    assert failed.node == "ModelCallLimitMiddleware.before_model"
    assert [t.node for t in run.log.tasks()].count("__start__") == 3
    assert [v for t in run.log.tasks() for n, v in t.writes if n == "thread_model_call_count"] == [
        1,
        2,
    ]


def test_tool_call_limit_blocks_a_call_and_continues():
    limit = ToolCallLimitMiddleware(tool_name="add", run_limit=1)
    two = calls(tool_call("add", {"a": 1, "b": 2}, "c1"), tool_call("add", {"a": 3, "b": 4}, "c2"))
    agent = agent_of([two, "done"], [limit], checkpointer=InMemorySaver())
    run = nbgraph.trace(agent, ask("two"), THREAD)
    agrees_with_history(run, agent)
    node = "ToolCallLimitMiddleware[add].after_model"
    blocked = [m for m in messages_of(run, node) if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.status) for m in blocked] == [("c2", "error")]
    assert [m.tool_call_id for m in messages_of(run, "tools")] == ["c1"]
    assert run.status == "done"


def test_tool_call_limit_ends_the_run():
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="end")
    agent = agent_of(looping_script(3), [limit], checkpointer=InMemorySaver())
    run = nbgraph.trace(agent, ask("loop"), THREAD)
    agrees_with_history(run, agent)
    assert [t.node for t in run.log.tasks()].count("tools") == 1
    ended = [t for t in run.log.tasks() if dict(t.writes).get("jump_to") == "end"]
    assert [t.node for t in ended] == ["ToolCallLimitMiddleware.after_model"]


# --- middleware of one's own: state fields, the messages reducer ------------------------------


class CountState(AgentState):
    turns: int


class Counter(AgentMiddleware):
    """Counts model turns in a state field of its own; the model sees the last message only."""

    state_schema = CountState

    def before_model(self, state: Any, runtime: Any) -> dict | None:
        kept = state["messages"][-1:]
        return {
            "turns": state.get("turns", 0) + 1,
            "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept],
        }


@before_model
def noop(state: Any, runtime: Any) -> None:
    return None


def test_middleware_nodes_state_fields_and_removed_messages():
    script = [calls(tool_call("add", {"a": 1, "b": 2}, "c1")), "three"]
    agent = agent_of(script, [noop, Counter()], checkpointer=InMemorySaver())
    run = nbgraph.trace(
        agent, {"messages": [HumanMessage("x", id="h0"), *ask("y")["messages"]]}, THREAD
    )
    agrees_with_history(run, agent)
    nodes = [t.node for t in run.log.tasks()]
    assert nodes[:3] == ["__start__", "noop.before_model", "Counter.before_model"]
    assert run.output["turns"] == 2
    trims = run.effects[(run.effects.field == "messages") & (run.effects.step == 2)]
    (row,) = trims.itertuples()
    assert [m.id for m in row.before] == ["h0", "h-y"] and [m.id for m in row.after] == ["h-y"]
    assert list(row.writers) == ["Counter.before_model"]


# --- the rest of the record: views, files, errors ---------------------------------------------


def test_views_and_files_of_an_agent_record(tmp_path):
    agent = hitl_agent()
    nbgraph.trace(agent, ask("add"), THREAD)
    run = nbgraph.Run.from_langgraph(agent, THREAD)
    source = run.draw().source
    assert f'"{HITL}"' in source or HITL in source
    assert set(run.steps.node) >= {"model", HITL}
    run.inspect()
    loaded = nbgraph.Run.load(run.save(tmp_path / "agent.json"))
    assert loaded.status == "interrupted"
    assert [t.node for t in loaded.log.tasks()] == [t.node for t in run.log.tasks()]
    with pytest.raises(InvalidArgumentError, match="loaded from a file"):
        pauses_of(loaded)


def test_pauses_of_takes_an_imported_run():
    from nbgraph import END, START, StateGraph

    app = StateGraph(dict).add_node("a", lambda s: {}).add_edge(START, "a").add_edge("a", END)
    app = app.compile()
    app.invoke({"x": 1})
    with pytest.raises(InvalidArgumentError, match="imported from LangGraph"):
        pauses_of(app.last_run)


def test_trace_without_a_checkpointer_records_the_same_run():
    """trace runs a copy with a fresh saver: its record is the record of the same agent
    run on a thread of its own saver."""
    limit = ModelCallLimitMiddleware(run_limit=2, exit_behavior="end")
    traced = nbgraph.trace(agent_of(looping_script(5), [limit]), ask("loop"))
    agent = agent_of(looping_script(5), [limit], checkpointer=InMemorySaver())
    agent.invoke(ask("loop"), THREAD)
    own = nbgraph.Run.from_langgraph(agent, THREAD)
    shape = [[(t.node, t.kind, [n for n, _ in t.writes]) for t in s.tasks] for s in own.log.steps]
    assert [
        [(t.node, t.kind, [n for n, _ in t.writes]) for t in s.tasks] for s in traced.log.steps
    ] == shape
    said = [[(m.type, m.content) for m in r.output["messages"]] for r in (traced, own)]
    assert said[0] == said[1] and len(said[0]) == 6  # the question, 2 calls, 2 results, the stop


def test_a_thread_run_with_durability_exit_says_what_it_lacks():
    """durability="exit" keeps each invoke's last checkpoint only: the record says which
    steps it cannot show, and still ends on LangGraph's values and pause."""
    agent = hitl_agent()
    paused = nbgraph.trace(agent, ask("add"), THREAD, durability="exit")
    assert paused.status == "interrupted"
    assert any("is step 1's" in w and "steps 0 to 1" in w for w in paused.warnings)
    assert paused.state_at(1) == history(agent)[0].values
    approve = {"decisions": [{"type": "approve"}]}
    run = nbgraph.trace(agent, Command(resume=approve), THREAD, durability="exit")
    assert any("between steps 1 and 5" in w for w in run.warnings)
    assert run.state_at(run.last_step) == agent.get_state(THREAD).values
    assert [t.node for t in run.log.tasks()] == ["__start__", HITL, "__start__"]
    (pause,) = pauses_of(run)
    assert pause.node == HITL and not pause.answered  # LangGraph kept no answer


def test_an_nbgraph_saver_is_not_a_langgraph_checkpointer(tmp_path):
    """The decision in docs/langgraph.md: nbgraph's savers keep nbgraph's
    checkpoints and are refused by LangGraph (as by create_agent); a LangGraph saver and
    `Run.from_langgraph` do the job, and `run.save` keeps the record in nbgraph's file."""
    with pytest.raises(TypeError, match="BaseCheckpointSaver"):
        agent_of(["hi"], [], checkpointer=nbgraph.InMemorySaver())
    agent = agent_of(["hi"], [], checkpointer=InMemorySaver())
    agent.invoke(ask("x"), THREAD)
    path = nbgraph.Run.from_langgraph(agent, THREAD).save(tmp_path / "agent.json")
    loaded = nbgraph.Run.load(path)
    assert [m.content for m in loaded.output["messages"]] == ["x", "hi"]


def test_atrace_runs_an_agent_with_async_only_tools():
    """An async-only tool cannot run under `invoke` (trace keeps LangGraph's error on the
    record); `atrace` awaits `ainvoke`, and its record agrees with the history."""

    async def weigh(grams: int) -> str:
        return f"{grams / 1000} kg"

    from langchain_core.tools import StructuredTool

    weigh_tool = StructuredTool.from_function(coroutine=weigh, name="weigh", description="kg")
    script = [calls(tool_call("weigh", {"grams": 1500}, "c1")), "1.5 kg"]
    hitl = HumanInTheLoopMiddleware({"weigh": True})
    failed = nbgraph.trace(agent_of(list(script), [], [weigh_tool]), ask("weigh"))
    assert failed.status == "failed" and isinstance(failed.error, NotImplementedError)
    assert [t.node for t in failed.log.tasks() if t.error is not None] == ["tools"]
    agent = agent_of(script, [hitl], [weigh_tool], checkpointer=InMemorySaver())
    paused = asyncio.run(nbgraph_atrace(agent, ask("weigh"), THREAD))
    assert paused.status == "interrupted"
    answer = {"decisions": [{"type": "approve"}]}
    run = asyncio.run(nbgraph_atrace(agent, Command(resume=answer), THREAD))
    agrees_with_history(run, agent)
    assert [m.content for m in messages_of(run, "tools")] == ["1.5 kg"]
    assert [p.resume for p in pauses_of(run)] == [answer]


def test_a_task_that_asks_twice_keeps_every_answer():
    """LangGraph keeps all the answers a task was given but only the last question it
    asked: the pauses say so (the first question is MISSING) and keep both answers."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict):
        x: str

    def both(state: State) -> dict:
        return {"x": interrupt("first?") + interrupt("second?")}

    graph = StateGraph(State).add_node("both", both).add_edge(START, "both").add_edge("both", END)
    app = graph.compile(checkpointer=InMemorySaver())
    shown = []
    for given in ({"x": ""}, Command(resume="A"), Command(resume="B")):
        run = nbgraph.trace(app, given, THREAD)
        shown.append([(p.value, p.resume) for p in pauses_of(run)])
    assert shown == [
        [("first?", MISSING)],
        [(MISSING, "A"), ("second?", MISSING)],
        [(MISSING, "A"), ("second?", "B")],
    ]
    assert run.output == {"x": "AB"}
    agrees_with_history(run, app)


def test_an_agent_inside_a_graph_pauses_in_its_subrun():
    """A create_agent agent added as a node of a LangGraph graph: its run is the node's
    subrun, its pause is the subrun's (and the parent task's, as LangGraph shows it), each
    with the answer."""
    from langgraph.graph import END, START, MessagesState, StateGraph

    inner = agent_of(
        [calls(tool_call("add", {"a": 1, "b": 2}, "c1")), "3"],
        [HumanInTheLoopMiddleware({"add": True})],
        name="calc",
    )
    graph = StateGraph(MessagesState).add_node("calc", inner)
    app = graph.add_edge(START, "calc").add_edge("calc", END).compile(checkpointer=InMemorySaver())
    nbgraph.trace(app, ask("add"), THREAD)
    answer = {"decisions": [{"type": "approve"}]}
    run = nbgraph.trace(app, Command(resume=answer), THREAD)
    agrees_with_history(run, app)
    (sub,) = run.subruns
    agrees_with_history(sub, app, sub.log.config)
    assert [t.node for t in sub.log.tasks()] == ["__start__", "model", HITL, "tools", "model", HITL]
    (outer,), (own,) = pauses_of(run), pauses_of(sub)
    assert (outer.node, own.node) == ("calc", HITL)
    assert outer.interrupt_id == own.interrupt_id and outer.resume == own.resume == answer


def test_a_thread_seeded_by_update_state():
    """A thread whose first checkpoint is an update_state (no input): the record starts
    from the values it made, and says so (not as a durability gap)."""
    agent = agent_of(["hello"], [], checkpointer=InMemorySaver())
    agent.update_state(THREAD, ask("seeded"), as_node="model")
    run = nbgraph.Run.from_langgraph(agent, THREAD)
    assert [m.content for m in run.output["messages"]] == ["seeded"]
    assert [w for w in run.warnings if "update_state" in w and "durability" not in w]
    agent.invoke(ask("more"), THREAD)
    run = nbgraph.Run.from_langgraph(agent, THREAD)
    agrees_with_history(run, agent)
    assert [m.content for m in run.output["messages"]] == ["seeded", "more", "hello"]
