"""Differential tests: tool injection (`InjectedState`, `InjectedStore`, `InjectedToolCallId`,
`ToolRuntime`) and tools that update the state (`Command` from a tool: update, goto,
`Command.PARENT` handoffs between agents), each program run on real LangGraph and on nbgraph
with the same code, the outcomes compared.

A program's model is a scripted node (it answers with the next AI message of its script), so
the runs are deterministic. Messages are compared by what they say (type, content, tool
calls, tool_call_id, name, status); the ids a library made are compared by structure.
"""

import asyncio
import dataclasses
import operator
from typing import Annotated, Any, TypedDict

import pytest

pytestmark = pytest.mark.langgraph
pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from tests.support.harness import (  # noqa: E402
    MODES,
    Ids,
    both,
    canonical_stream,
    raised,
    same,
)


def call(tool_name: str, call_id: str, /, **args: Any) -> dict:
    return {"name": tool_name, "args": args, "id": call_id, "type": "tool_call"}


def shown(value: Any, ids: Ids) -> Any:
    """A value with each message by what it says and made-up ids by structure."""
    if hasattr(value, "content") and hasattr(value, "type"):
        calls = [(c["name"], c["args"], c["id"]) for c in getattr(value, "tool_calls", None) or []]
        return {
            "type": value.type,
            "content": value.content,
            "tool_calls": calls,
            "tool_call_id": getattr(value, "tool_call_id", None),
            "name": value.name,
            "status": getattr(value, "status", None),
            "id": ids.text(value.id),
        }
    if isinstance(value, dict):
        return {k: shown(v, ids) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shown(v, ids) for v in value]
    return value


def scripted(*replies: AIMessage) -> Any:
    """A model node: the n-th call answers with the n-th reply, then "done"."""

    def model(state: Any) -> dict:
        messages = state["messages"] if isinstance(state, dict) else state.messages
        n = sum(1 for m in messages if m.type == "ai")
        reply = replies[n] if n < len(replies) else AIMessage("done")
        return {"messages": [reply.model_copy(update={"id": f"ai-{n}"})]}

    return model


def agent(api: Any, state: Any, tools: list, *replies: AIMessage, **compile_kwargs: Any) -> Any:
    """model -> (tools_condition) -> tools -> model, as LangGraph's tutorials build it."""
    graph = api.StateGraph(state, **compile_kwargs.pop("graph_kwargs", {}))
    graph.add_node("model", scripted(*replies))
    graph.add_node("tools", api.ToolNode(tools, **compile_kwargs.pop("node_kwargs", {})))
    graph.add_edge(api.START, "model")
    graph.add_conditional_edges("model", api.tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile(**compile_kwargs)


class AnyId(Ids):
    """Made-up ids all alike: for chunks whose order parallel tasks decide."""

    def __call__(self, raw: Any) -> Any:
        return "<id>"


def run(app: Any, graph_input: Any, config: Any = None, **kwargs: Any) -> dict:
    """The final state (`shown`) and the `updates` and `values` chunks of one input, the
    updates of a step in any order (`canonical_stream`)."""
    final = app.invoke(graph_input, config, **kwargs)
    chunks = list(app.stream(graph_input, config, stream_mode=MODES, **kwargs))
    return {
        "final": shown(final, Ids()),
        "stream": canonical_stream(shown(chunks, AnyId()), MODES),
    }


def attempt(fn: Any, *args: Any, message: Any = None, **kwargs: Any) -> Any:
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as error:
        return raised(error, message)


ASK = {"messages": [HumanMessage("hi", id="h1")]}


class Notes(TypedDict):
    messages: Annotated[list, operator.add]
    user: str
    notes: list


# ---------------------------------------------------------------------------------------------
# injection


def injected_state(api: Any) -> dict:
    InjectedState = api.InjectedState

    @tool
    def whole(x: int, state: Annotated[dict, InjectedState]) -> str:
        """Read the whole state."""
        return f"{x} {sorted(state)} {state['user']} {len(state['messages'])}"

    @tool
    def one(x: int, user: Annotated[str, InjectedState("user")]) -> str:
        """Read one field."""
        return f"{user}:{x}"

    @tool
    def maybe(missing: Annotated[str, InjectedState("nowhere")] = "default") -> str:
        """A field the state lacks, with a default."""
        return missing

    reply = AIMessage("", tool_calls=[call("whole", "c1", x=1), call("one", "c2", x=2)])
    again = AIMessage("", tool_calls=[call("maybe", "c3")])
    app = agent(api, Notes, [whole, one, maybe], reply, again)
    schemas = {t.name: t.tool_call_schema.model_json_schema() for t in (whole, one, maybe)}
    return {"run": run(app, {**ASK, "user": "ada", "notes": []}), "schemas": schemas}


def test_injected_state_whole_and_one_field_hidden_from_the_model() -> None:
    langgraph, _ = same(injected_state)
    assert langgraph["schemas"]["whole"]["properties"] == {"x": {"title": "X", "type": "integer"}}
    assert [sorted(s["properties"]) for s in langgraph["schemas"].values()] == [["x"], ["x"], []]


def injected_missing_field(api: Any) -> Any:
    InjectedState = api.InjectedState

    @tool
    def one(user: Annotated[str, InjectedState("user")]) -> str:
        """Read a field the state has not."""
        return user

    app = agent(api, api.MessagesState, [one], AIMessage("", tool_calls=[call("one", "c1")]))
    return attempt(app.invoke, ASK)


def test_a_missing_injected_field_raises_a_key_error() -> None:
    langgraph, _ = same(injected_missing_field)
    assert langgraph == ("raised", "KeyError")


def messages_state_in_a_tool_signature(api: Any) -> dict:
    InjectedState, MessagesState = api.InjectedState, api.MessagesState

    class State(MessagesState):
        topic: str

    @tool
    def count(state: Annotated[MessagesState, InjectedState]) -> str:
        """Count the messages."""
        return f"{type(state).__name__}: {sorted(state)} {len(state['messages'])}"

    @tool
    def topic(state: Annotated[State, InjectedState]) -> str:
        """Read the topic from a state that extends MessagesState."""
        return f"{state['topic']} after {state['messages'][-1].type}"

    reply = AIMessage("", tool_calls=[call("count", "c1"), call("topic", "c2")])
    app = agent(api, State, [count, topic], reply)
    return run(app, {**ASK, "topic": "x"})


def test_messages_state_is_taken_by_pydantic_in_a_tool_signature() -> None:
    same(messages_state_in_a_tool_signature)


def injected_store(api: Any) -> dict:
    InjectedStore = api.InjectedStore

    @tool
    def remember(fact: str, store: Annotated[Any, InjectedStore()]) -> str:
        """Save a fact."""
        store.put(("facts",), fact, {"fact": fact})
        return "saved"

    @tool
    def recall(store: Annotated[Any, InjectedStore()]) -> str:
        """List the facts."""
        return ", ".join(sorted(item.key for item in store.search(("facts",))))

    store = api.InMemoryStore()
    replies = (
        AIMessage(
            "", tool_calls=[call("remember", "c1", fact="sky"), call("remember", "c2", fact="sea")]
        ),
        AIMessage("", tool_calls=[call("recall", "c3")]),
    )
    app = agent(api, api.MessagesState, [remember, recall], *replies, store=store)
    final = shown(app.invoke(ASK), Ids())
    kept = sorted((i.key, i.value) for i in store.search(("facts",)))
    return {"final": final, "kept": kept}


def test_injected_store_reads_and_writes_the_graph_store() -> None:
    same(injected_store)


def injected_store_missing(api: Any) -> Any:
    InjectedStore = api.InjectedStore

    @tool
    def recall(store: Annotated[Any, InjectedStore()]) -> str:
        """Needs a store."""
        return "never"

    replies = (AIMessage("", tool_calls=[call("recall", "c1")]),)
    app = agent(
        api, api.MessagesState, [recall], *replies, node_kwargs={"handle_tool_errors": True}
    )
    return attempt(app.invoke, ASK, message=lambda text: "compile your graph with a store" in text)


def test_injected_store_without_a_store_raises_a_value_error_even_when_errors_are_handled() -> None:
    langgraph, _ = same(injected_store_missing)
    assert langgraph == ("raised", "ValueError", True)


def injected_tool_call_id(api: Any) -> dict:
    InjectedToolCallId = api.InjectedToolCallId

    @tool
    def echo(text: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Answer with an artifact."""
        return ToolMessage(f"{text} for {tool_call_id}", tool_call_id=tool_call_id, artifact=1)

    reply = AIMessage("", tool_calls=[call("echo", "c1", text="a"), call("echo", "c2", text="b")])
    app = agent(api, api.MessagesState, [echo], reply)
    return {"run": run(app, ASK), "schema": echo.tool_call_schema.model_json_schema()}


def test_injected_tool_call_id() -> None:
    same(injected_tool_call_id)


def tool_runtime(api: Any) -> dict:
    ToolRuntime = api.ToolRuntime

    class Context(TypedDict):
        user: str

    @tool
    def inspect_run(x: int, runtime: ToolRuntime) -> str:
        """Everything the runtime has."""
        runtime.stream_writer({"tool": runtime.tool_call_id})
        runtime.store.put(("seen",), runtime.tool_call_id, {"x": x})
        thread = runtime.config["configurable"]["thread_id"]
        names = sorted(t.name for t in runtime.tools)
        return (
            f"{x} {runtime.context['user']} {runtime.tool_call_id} {thread} {names} "
            f"{len(runtime.state['messages'])}"
        )

    reply = AIMessage("", tool_calls=[call("inspect_run", "c1", x=1)])
    store = api.InMemoryStore()
    app = agent(
        api,
        api.MessagesState,
        [inspect_run],
        reply,
        checkpointer=api.saver(),
        store=store,
        graph_kwargs={"context_schema": Context},
    )
    config = {"configurable": {"thread_id": "t1"}}
    chunks = list(
        app.stream(ASK, config, stream_mode=["custom", "updates"], context={"user": "ada"})
    )
    state = app.get_state(config)
    return {
        "chunks": shown(chunks, Ids()),
        "state": shown(state.values, Ids()),
        "next": state.next,
        "store": sorted((i.key, i.value) for i in store.search(("seen",))),
        "schema": inspect_run.tool_call_schema.model_json_schema(),
    }


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_tool_runtime_with_a_checkpointer_store_and_context(saver: str, tmp_path: Any) -> None:
    same(tool_runtime, saver=saver, folder=tmp_path)


def tool_runtime_of_one_type(api: Any) -> dict:
    """The docs' `runtime: ToolRuntime[Context]`: one type argument (the state's defaults)."""
    ToolRuntime = api.ToolRuntime

    @dataclasses.dataclass
    class Context:
        user_id: str

    @tool
    def whoami(runtime: ToolRuntime[Context]) -> str:
        """Who the user is."""
        return f"{runtime.context.user_id}, {len(runtime.state['messages'])} messages"

    @tool
    def bare(runtime: ToolRuntime) -> str:
        """The runtime, unparametrized."""
        return runtime.context.user_id

    reply = AIMessage("", tool_calls=[call("whoami", "c1"), call("bare", "c2")])
    app = agent(api, api.MessagesState, [whoami, bare], reply, graph_kwargs={
        "context_schema": Context})  # fmt: skip
    schemas = [t.tool_call_schema.model_json_schema() for t in (whoami, bare)]
    return {"run": run(app, ASK, context=Context("ada")), "schemas": schemas}


def test_tool_runtime_takes_one_type_argument() -> None:
    same(tool_runtime_of_one_type)


def async_tools(api: Any) -> dict:
    InjectedState = api.InjectedState

    @tool
    async def slow(x: int, state: Annotated[dict, InjectedState]) -> str:
        """An async tool."""
        await asyncio.sleep(0.01 * (3 - x))
        return f"async {x} {len(state['messages'])}"

    @tool
    def fast(x: int) -> str:
        """A sync tool in an async run."""
        return f"sync {x}"

    reply = AIMessage(
        "", tool_calls=[call("slow", "c1", x=1), call("fast", "c2", x=2), call("slow", "c3", x=2)]
    )
    app = agent(api, api.MessagesState, [slow, fast], reply)

    async def go() -> dict:
        ids = Ids()
        final = await app.ainvoke(ASK)
        updates = [chunk async for chunk in app.astream(ASK, stream_mode="updates")]
        return {"final": shown(final, ids), "updates": shown(updates, ids)}

    return {"async": asyncio.run(go()), "sync": attempt(app.invoke, ASK)}


def test_async_tools_run_in_an_async_run_and_refuse_a_sync_one() -> None:
    langgraph, _ = same(async_tools)
    assert langgraph["sync"] == ("raised", "NotImplementedError")


# ---------------------------------------------------------------------------------------------
# tools that update the state


class Profile(TypedDict):
    messages: Annotated[list, operator.add]
    name: str
    birthday: str


def customize_state(api: Any) -> dict:
    """LangGraph's "customize state" tutorial: a tool writes state fields through Command."""
    Command, InjectedToolCallId = api.Command, api.InjectedToolCallId

    @tool
    def human_assistance(
        name: str, birthday: str, tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> Any:
        """Record the user's name and birthday."""
        return Command(
            update={
                "name": name,
                "birthday": birthday,
                "messages": [ToolMessage("Correct", tool_call_id=tool_call_id)],
            }
        )

    reply = AIMessage(
        "", tool_calls=[call("human_assistance", "c1", name="LangGraph", birthday="Jan 17, 2024")]
    )
    app = agent(api, Profile, [human_assistance], reply, checkpointer=api.saver())
    config = {"configurable": {"thread_id": "1"}}
    ids = Ids()
    chunks = list(app.stream({**ASK, "name": "", "birthday": ""}, config, stream_mode="updates"))
    return {"updates": shown(chunks, ids), "state": shown(app.get_state(config).values, ids)}


def test_a_tool_writes_state_fields_through_command() -> None:
    langgraph, _ = same(customize_state)
    assert langgraph["state"]["name"] == "LangGraph"


def command_goto(api: Any) -> dict:
    Command, InjectedToolCallId = api.Command, api.InjectedToolCallId

    @tool
    def escalate(reason: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Hand the conversation to a person."""
        answer = ToolMessage(f"escalated: {reason}", tool_call_id=tool_call_id)
        return Command(goto="human", update={"messages": [answer], "name": reason})

    def human(state: dict) -> dict:
        return {"messages": [AIMessage(f"a person takes over ({state['name']})")]}

    graph = api.StateGraph(Profile)
    graph.add_node(
        "model", scripted(AIMessage("", tool_calls=[call("escalate", "c1", reason="angry")]))
    )
    graph.add_node("tools", api.ToolNode([escalate]))
    graph.add_node("human", human)
    graph.add_edge(api.START, "model")
    graph.add_conditional_edges("model", api.tools_condition)
    graph.add_edge("tools", "model")
    app = graph.compile()
    return run(app, {**ASK, "name": "", "birthday": ""})


def test_a_tool_command_goes_to_another_node_besides_the_edges() -> None:
    same(command_goto)


def mixed_results(api: Any) -> dict:
    Command, InjectedToolCallId = api.Command, api.InjectedToolCallId

    @tool
    def set_name(name: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Set the name."""
        return Command(
            update={"name": name, "messages": [ToolMessage("ok", tool_call_id=tool_call_id)]}
        )

    @tool
    def shout(text: str) -> str:
        """A plain tool."""
        return text.upper()

    @tool
    def two_steps(tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Returns a list: a Command and the answer."""
        return [
            Command(update={"birthday": "today"}),
            ToolMessage("two steps", tool_call_id=tool_call_id),
        ]

    reply = AIMessage(
        "",
        tool_calls=[
            call("shout", "c1", text="hey"),
            call("set_name", "c2", name="ada"),
            call("two_steps", "c3"),
            call("shout", "c4", text="bye"),
        ],
    )
    app = agent(api, Profile, [set_name, shout, two_steps], reply)
    return run(app, {**ASK, "name": "", "birthday": ""})


def test_commands_and_plain_results_in_one_ai_message() -> None:
    same(mixed_results)


def command_without_answer(api: Any, handle: Any) -> Any:
    Command = api.Command

    @tool
    def silent(name: str) -> Any:
        """Updates the state but answers nothing."""
        return Command(update={"name": name})

    replies = (AIMessage("", tool_calls=[call("silent", "c1", name="ada")]),)
    kwargs = {} if handle is None else {"handle_tool_errors": handle}
    app = agent(api, Profile, [silent], *replies, node_kwargs=kwargs)
    first = lambda text: text.split(" for tool ")[0]  # noqa: E731
    return attempt(run, app, {**ASK, "name": "", "birthday": ""}, message=first)


@pytest.mark.parametrize("handle", [None, True, ValueError, False])
def test_a_command_that_answers_no_call_is_refused(handle: Any) -> None:
    langgraph, nbgraph = both(command_without_answer, handle)
    assert nbgraph == langgraph
    if handle in (None, False):
        assert langgraph == (
            "raised",
            "ValueError",
            "Expected to have a matching ToolMessage in Command.update",
        )


def bad_returns(api: Any) -> Any:
    Command, InjectedToolCallId = api.Command, api.InjectedToolCallId

    @tool
    def twice(tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Two answers to one call."""
        answer = ToolMessage("a", tool_call_id=tool_call_id)
        return [Command(update={"messages": [answer]}), ToolMessage("b", tool_call_id=tool_call_id)]

    @tool
    def never(tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """A list that answers another call."""
        return [Command(update={"name": "x"}), ToolMessage("a", tool_call_id="other")]

    outcomes = {}
    for name, fn in (("twice", twice), ("never", never)):
        app = agent(api, Profile, [fn], AIMessage("", tool_calls=[call(name, "c1")]))
        outcomes[name] = attempt(app.invoke, {**ASK, "name": "", "birthday": ""}, message="full")
    return outcomes


def test_a_list_from_a_tool_answers_exactly_once() -> None:
    same(bad_returns)


def commands_in_another_messages_key(api: Any) -> dict:
    Command, InjectedToolCallId, InjectedState = (
        api.Command,
        api.InjectedToolCallId,
        api.InjectedState,
    )

    class Chat(TypedDict):
        chat: Annotated[list, operator.add]
        done: bool

    @tool
    def finish(
        tool_call_id: Annotated[str, InjectedToolCallId],
        chat: Annotated[list, InjectedState("chat")],
    ) -> Any:
        """Finish the chat."""
        answer = ToolMessage(f"finished after {len(chat)}", tool_call_id=tool_call_id)
        return Command(update={"chat": [answer], "done": True})

    graph = api.StateGraph(Chat)
    graph.add_node("tools", api.ToolNode([finish], messages_key="chat"))
    graph.add_edge(api.START, "tools")
    app = graph.compile()
    return run(app, {"chat": [AIMessage("", tool_calls=[call("finish", "c1")])], "done": False})


def test_a_command_update_in_a_custom_messages_key() -> None:
    same(commands_in_another_messages_key)


def sent_tool_calls(api: Any) -> dict:
    """Each tool call sent to the tool node by itself (`Send("tools", [call])`): the tool
    still sees the graph's state."""
    Send, InjectedState = api.Send, api.InjectedState

    @tool
    def look(x: int, user: Annotated[str, InjectedState("user")]) -> str:
        """Look at the user."""
        return f"{user} {x}"

    def fan_out(state: dict) -> Any:
        last = state["messages"][-1]
        return [Send("tools", [c]) for c in last.tool_calls] if last.tool_calls else api.END

    reply = AIMessage("", tool_calls=[call("look", "c1", x=1), call("look", "c2", x=2)])
    graph = api.StateGraph(Notes)
    graph.add_node("model", scripted(reply))
    graph.add_node("tools", api.ToolNode([look]))
    graph.add_edge(api.START, "model")
    graph.add_conditional_edges("model", fan_out, ["tools", api.END])
    graph.add_edge("tools", "model")
    return run(graph.compile(), {**ASK, "user": "ada", "notes": []})


def test_tool_calls_sent_one_by_one_see_the_graph_state() -> None:
    same(sent_tool_calls)


# ---------------------------------------------------------------------------------------------
# handoffs between agents (Command.PARENT from a tool inside a subgraph)


class Team(TypedDict):
    messages: Annotated[list, operator.add]
    active: str


def handoff_tool(api: Any, agent_name: str) -> Any:
    """A handoff tool as LangGraph's multi-agent guides write it."""
    Command, InjectedToolCallId, InjectedState = (
        api.Command,
        api.InjectedToolCallId,
        api.InjectedState,
    )
    tool_name = f"transfer_to_{agent_name}"

    @tool(tool_name)
    def handoff(
        state: Annotated[dict, InjectedState],
        tool_call_id: Annotated[str, InjectedToolCallId],
    ) -> Any:
        """Transfer to another agent."""
        answer = ToolMessage(
            f"Transferred to {agent_name}", name=tool_name, tool_call_id=tool_call_id
        )
        return Command(
            goto=agent_name,
            graph=Command.PARENT,
            update={"messages": [*state["messages"], answer], "active": agent_name},
        )

    return handoff


def sub_agent(api: Any, tools: list, *replies: AIMessage) -> Any:
    """An agent as a subgraph: model -> tools -> model."""
    return agent(api, Team, tools, *replies)


def supervisor(api: Any) -> dict:
    """A supervisor hands the task to a worker, the worker answers and hands back."""
    to_worker = handoff_tool(api, "worker")
    boss = sub_agent(api, [to_worker], AIMessage("", tool_calls=[call("transfer_to_worker", "b1")]))

    def worker(state: dict) -> dict:
        return {"messages": [AIMessage(f"worker done after {len(state['messages'])}")]}

    graph = api.StateGraph(Team)
    graph.add_node("boss", boss, destinations=("worker",))
    graph.add_node("worker", worker)
    graph.add_edge(api.START, "boss")
    graph.add_edge("worker", api.END)
    app = graph.compile()
    return run(app, {**ASK, "active": "boss"})


def test_a_supervisor_hands_off_to_a_worker_with_command_parent() -> None:
    langgraph, _ = same(supervisor)
    assert langgraph["final"]["active"] == "worker"


def swarm(api: Any) -> dict:
    """Two agents (subgraphs), each able to hand the conversation to the other; the last
    active agent is kept in the state and a checkpointer keeps the thread."""
    alice = sub_agent(
        api,
        [handoff_tool(api, "bob")],
        AIMessage("", tool_calls=[call("transfer_to_bob", "a1")]),
        AIMessage("alice again"),
    )
    bob = sub_agent(
        api,
        [handoff_tool(api, "alice")],
        AIMessage("bob here"),
    )

    def route(state: dict) -> str:
        return state.get("active") or "alice"

    graph = api.StateGraph(Team)
    graph.add_node("alice", alice, destinations=("bob",))
    graph.add_node("bob", bob, destinations=("alice",))
    graph.add_conditional_edges(api.START, route, ["alice", "bob"])
    app = graph.compile(checkpointer=api.saver())
    config = {"configurable": {"thread_id": "s"}}
    ids = Ids()
    first = app.invoke({**ASK, "active": ""}, config)
    chunks = list(
        app.stream({"messages": [HumanMessage("again", id="h2")]}, config, stream_mode="updates")
    )
    return {
        "first": shown(first, ids),
        "second": shown(chunks, ids),
        "state": shown(app.get_state(config).values, ids),
    }


def test_a_swarm_of_two_agents_hands_off_both_ways() -> None:
    langgraph, _ = same(swarm)
    assert langgraph["state"]["active"] == "bob"


def parent_sends(api: Any) -> dict:
    """Two tools each sending work to the parent graph (`Command.PARENT`, `goto=[Send]`):
    the tool node merges them into one Command, and the parent runs each Send."""
    Command, Send = api.Command, api.Send

    @tool
    def delegate(task: str) -> Any:
        """Send a task to the parent's worker."""
        return Command(graph=Command.PARENT, goto=[Send("worker", {"task": task})])

    class Work(TypedDict):
        messages: Annotated[list, operator.add]
        done: Annotated[list, operator.add]

    reply = AIMessage(
        "", tool_calls=[call("delegate", "c1", task="a"), call("delegate", "c2", task="b")]
    )
    inner = agent(api, Work, [delegate], reply)

    def worker(arg: dict) -> dict:
        return {"done": [arg["task"]]}

    graph = api.StateGraph(Work)
    graph.add_node("inner", inner, destinations=("worker",))
    graph.add_node("worker", worker)
    graph.add_edge(api.START, "inner")
    app = graph.compile()
    result = run(app, {**ASK, "done": []})
    result["final"]["done"] = sorted(result["final"]["done"])
    return result


def test_parent_sends_from_several_tools_are_merged() -> None:
    same(parent_sends)


def tool_node_on_a_list(api: Any, which: str) -> Any:
    """A tool node called inside a node on a list of messages: a Command's update must then
    be a list of messages (a dict is refused)."""
    Command, InjectedToolCallId = api.Command, api.InjectedToolCallId

    @tool
    def as_list(tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Answer with a list update."""
        return Command(update=[ToolMessage("listed", tool_call_id=tool_call_id)])

    @tool
    def as_dict(tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Answer with a dict update."""
        return Command(update={"messages": [ToolMessage("dicted", tool_call_id=tool_call_id)]})

    tools = api.ToolNode([as_list, as_dict])

    def node(state: dict) -> dict:
        out = tools.invoke([AIMessage("", tool_calls=[call(state["which"], "c1")])])
        updates = [shown(o.update, Ids()) for o in out]
        return {"seen": [f"{type(out).__name__}: {updates}"]}

    class Seen(TypedDict):
        which: str
        seen: Annotated[list, operator.add]

    graph = api.StateGraph(Seen).add_node("n", node).add_edge(api.START, "n")
    return attempt(graph.compile().invoke, {"which": which, "seen": []}, message="first line")


@pytest.mark.parametrize("which", ["as_list", "as_dict"])
def test_a_tool_node_on_a_list_of_messages_takes_list_updates_only(which: str) -> None:
    langgraph, _ = same(tool_node_on_a_list, which)
    assert langgraph[0] == ("ok" if which == "as_list" else "raised")


def asks_a_person(api: Any) -> dict:
    """The customize-state tutorial's tool: it asks a person (`interrupt`) and writes what
    they said to the state through a Command; the question passes `handle_tool_errors`."""
    Command, InjectedToolCallId = api.Command, api.InjectedToolCallId

    @tool
    def human_assistance(name: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Ask a person to check the name."""
        answer = api.interrupt({"question": "Is this correct?", "name": name})
        update = {"name": answer.get("name", name), "birthday": answer.get("birthday", "")}
        reply = ToolMessage(f"Made a correction: {update}", tool_call_id=tool_call_id)
        return Command(update={**update, "messages": [reply]})

    reply = AIMessage("", tool_calls=[call("human_assistance", "c1", name="LangGrph")])
    app = agent(
        api,
        Profile,
        [human_assistance],
        reply,
        checkpointer=api.saver(),
        node_kwargs={"handle_tool_errors": True},
    )
    config = {"configurable": {"thread_id": "h"}}
    ids = Ids()
    first = list(app.stream({**ASK, "name": "", "birthday": ""}, config, stream_mode="updates"))
    paused = app.get_state(config)
    resumed = list(
        app.stream(
            api.Command(resume={"name": "LangGraph", "birthday": "Jan 17, 2024"}),
            config,
            stream_mode="updates",
        )
    )
    return {
        "first": [
            {k: [i.value for i in v] if k == "__interrupt__" else shown(v, ids)}
            for chunk in first
            for k, v in chunk.items()
        ],
        "paused_next": paused.next,
        "resumed": shown(resumed, ids),
        "state": shown(app.get_state(config).values, ids),
    }


def test_a_tool_asks_a_person_then_writes_the_answer_through_command() -> None:
    langgraph, _ = same(asks_a_person)
    assert langgraph["state"]["name"] == "LangGraph" and langgraph["paused_next"] == ("tools",)


def custom_tool_class(api: Any) -> dict:
    """A `BaseTool` subclass (not a function tool) returning a Command, sync and async."""
    import pydantic
    from langchain_core.tools import BaseTool

    Command, InjectedToolCallId = api.Command, api.InjectedToolCallId

    class SetterArgs(pydantic.BaseModel):
        value: str
        tool_call_id: Annotated[str, InjectedToolCallId]

    class Setter(BaseTool):
        name: str = "setter"
        description: str = "Set the name."
        args_schema: type = SetterArgs

        def _run(self, value: str, tool_call_id: str) -> Any:
            answer = ToolMessage(f"set {value}", tool_call_id=tool_call_id)
            return Command(update={"name": value, "messages": [answer]})

    reply = AIMessage("", tool_calls=[call("setter", "c1", value="ada")])
    app = agent(api, Profile, [Setter()], reply)
    graph_input = {**ASK, "name": "", "birthday": ""}
    ids = Ids()
    return {
        "sync": run(app, graph_input),
        "async": shown(asyncio.run(app.ainvoke(graph_input)), ids),
        "schema": Setter().tool_call_schema.model_json_schema(),
    }


def test_a_custom_tool_class_returns_a_command() -> None:
    langgraph, _ = same(custom_tool_class)
    assert langgraph["sync"]["final"]["name"] == "ada"


def wrapped_calls(api: Any, handle: Any) -> Any:
    """`wrap_tool_call`: a wrapper that retries a flaky tool, one that changes the call's
    arguments (`request.override`), and one that refuses a tool by raising."""
    tries: list[int] = []
    InjectedState = api.InjectedState

    @tool
    def flaky(x: int) -> str:
        """Fails the first time."""
        tries.append(x)
        if len(tries) == 1:
            raise ConnectionError("try again")
        return f"ok {x} after {len(tries)}"

    @tool
    def double(x: int, user: Annotated[str, InjectedState("user")]) -> str:
        """Doubles for a user."""
        return f"{user}: {2 * x}"

    @tool
    def forbidden() -> str:
        """Never runs."""
        return "ran"

    def wrap(request: Any, execute: Any) -> Any:
        name = request.tool_call["name"]
        if name == "forbidden":
            raise PermissionError("not allowed")
        if name == "double":
            changed = {**request.tool_call, "args": {"x": request.tool_call["args"]["x"] + 1}}
            return execute(
                request.override(tool_call=changed, state={**request.state, "user": "bo"})
            )
        for _ in range(3):
            try:
                return execute(request)
            except ConnectionError:
                continue
        raise RuntimeError("gave up")

    reply = AIMessage(
        "",
        tool_calls=[call("flaky", "c1", x=1), call("double", "c2", x=2), call("forbidden", "c3")],
    )
    kwargs: dict = {"wrap_tool_call": wrap}
    if handle is not None:
        kwargs["handle_tool_errors"] = handle
    app = agent(api, Notes, [flaky, double, forbidden], reply, node_kwargs=kwargs)
    graph_input = {**ASK, "user": "ada", "notes": []}
    return attempt(lambda: shown(app.invoke(graph_input), Ids()), message="first line")


@pytest.mark.parametrize("handle", [None, True, "refused"])
def test_wrap_tool_call_retries_overrides_and_refuses(handle: Any) -> None:
    same(wrapped_calls, handle)


def async_wrapper(api: Any) -> dict:
    """`awrap_tool_call` in an async run: it awaits `execute` and may answer itself."""

    @tool
    async def lookup(word: str) -> str:
        """Look a word up."""
        return f"{word} means something"

    async def awrap(request: Any, execute: Any) -> Any:
        if request.tool_call["args"]["word"] == "secret":
            return ToolMessage("redacted", tool_call_id=request.tool_call["id"])
        answer = await execute(request)
        answer.content = answer.content.upper()
        return answer

    reply = AIMessage(
        "", tool_calls=[call("lookup", "c1", word="cat"), call("lookup", "c2", word="secret")]
    )
    app = agent(api, api.MessagesState, [lookup], reply, node_kwargs={"awrap_tool_call": awrap})
    return shown(asyncio.run(app.ainvoke(ASK)), Ids())


def test_awrap_tool_call_in_an_async_run() -> None:
    same(async_wrapper)


def pydantic_state(api: Any) -> dict:
    """A pydantic state: the tool reads a field of it (`InjectedState("user")`) and the
    whole state as the model."""
    import pydantic

    InjectedState = api.InjectedState

    class Chat(pydantic.BaseModel):
        messages: Annotated[list, operator.add]
        user: str = "nobody"

    @tool
    def greet(user: Annotated[str, InjectedState("user")]) -> str:
        """Greet the user."""
        return f"hello {user}"

    @tool
    def describe(state: Annotated[Any, InjectedState]) -> str:
        """Describe the state."""
        return f"{type(state).__name__} of {state.user} with {len(state.messages)}"

    reply = AIMessage("", tool_calls=[call("greet", "c1"), call("describe", "c2")])
    app = agent(api, Chat, [greet, describe], reply)
    return run(app, {**ASK, "user": "ada"})


def test_injected_state_from_a_pydantic_state() -> None:
    same(pydantic_state)


def handoff_among_other_calls(api: Any) -> dict:
    """A handoff (`Command.PARENT`) and a plain tool call in one AI message of a subgraph
    agent: the parent takes the handoff."""

    @tool
    def note(text: str) -> str:
        """Take a note."""
        return f"noted {text}"

    reply = AIMessage(
        "", tool_calls=[call("note", "n1", text="x"), call("transfer_to_worker", "b1")]
    )
    boss = sub_agent(api, [note, handoff_tool(api, "worker")], reply)

    def worker(state: dict) -> dict:
        return {"messages": [AIMessage(f"worker saw {[m.content for m in state['messages']]}")]}

    graph = api.StateGraph(Team)
    graph.add_node("boss", boss, destinations=("worker",))
    graph.add_node("worker", worker)
    graph.add_edge(api.START, "boss")
    graph.add_edge("worker", api.END)
    return run(graph.compile(), {**ASK, "active": "boss"})


def test_a_handoff_among_other_tool_calls() -> None:
    same(handoff_among_other_calls)


def sent_with_context(api: Any) -> dict:
    """`create_react_agent`'s v2 form: each call sent with the state it was made in
    (`{"__type": "tool_call_with_context", "tool_call": ..., "state": ...}`)."""
    Send, InjectedState, Command = api.Send, api.InjectedState, api.Command
    InjectedToolCallId = api.InjectedToolCallId

    @tool
    def look(x: int, user: Annotated[str, InjectedState("user")]) -> str:
        """Look at the user."""
        return f"{user} {x}"

    @tool
    def rename(name: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Rename the user."""
        answer = ToolMessage("renamed", tool_call_id=tool_call_id)
        return Command(update={"user": name, "messages": [answer]})

    def fan_out(state: dict) -> Any:
        last = state["messages"][-1]
        if not last.tool_calls:
            return api.END
        sent = {**state, "user": state["user"] + " (as sent)"}
        return [
            Send("tools", {"__type": "tool_call_with_context", "tool_call": c, "state": sent})
            for c in last.tool_calls
        ]

    reply = AIMessage("", tool_calls=[call("look", "c1", x=1), call("rename", "c2", name="bo")])
    graph = api.StateGraph(Notes)
    graph.add_node("model", scripted(reply, AIMessage("", tool_calls=[call("look", "c3", x=3)])))
    graph.add_node("tools", api.ToolNode([look, rename]))
    graph.add_edge(api.START, "model")
    graph.add_conditional_edges("model", fan_out, ["tools", api.END])
    graph.add_edge("tools", "model")
    return run(graph.compile(), {**ASK, "user": "ada", "notes": []})


def test_tool_calls_sent_with_their_state_as_create_react_agent_v2_sends_them() -> None:
    langgraph, _ = same(sent_with_context)
    assert langgraph["final"]["user"] == "bo"
