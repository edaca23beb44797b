"""Differential tests: `create_react_agent`, each program run on real LangGraph
(`langgraph.prebuilt`) and on nbgraph (`nbgraph.prebuilt`) with the same code and the same
scripted chat model (`tests/support/chat_models.py`), the outcomes compared.

What is compared: the final state (messages by type, content, tool calls, tool_call_id and
name; the ids a library or the model made by structure, `Ids`), the `updates` and `values`
stream of the same run (parallel tool tasks' chunks as a multiset within a step), what the
model was asked (`model.seen`), the tools bound to it, `get_state` where a thread is kept, and
`get_graph()`.
"""

import asyncio
import dataclasses
import itertools
import operator
from typing import Annotated, Any

import pytest

pytestmark = [
    pytest.mark.langgraph,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),  # (LangGraph's, on its agent)
]
pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")

from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder  # noqa: E402
from langchain_core.runnables import RunnableConfig  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from pydantic import BaseModel  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

from tests.support.chat_models import ScriptedChatModel, tool_call  # noqa: E402
from tests.support.harness import MODES, Ids, both, canonical_stream, same  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Shapes


def said(m: BaseMessage) -> tuple:
    """A message by what it says (no id)."""
    calls = tuple((c["name"], stable(c["args"]), c["id"]) for c in getattr(m, "tool_calls", ()))
    return (m.type, m.content, calls, getattr(m, "tool_call_id", None), m.name)


def stable(value: Any) -> Any:
    return tuple(sorted(value.items())) if isinstance(value, dict) else value


def shaped(value: Any) -> Any:
    """`value` with every message `said`, recursively."""
    if isinstance(value, BaseMessage):
        return said(value)
    if isinstance(value, dict):
        return {k: shaped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shaped(v) for v in value]
    return value


def final(state: dict) -> dict:
    """A final state: messages said, with their ids by structure."""
    ids, out = Ids(), {}
    for key, value in state.items():
        if key == "messages":
            out[key] = [(*said(m), ids.text(m.id)) for m in value]
        else:
            out[key] = shaped(value)
    return out


def run(app: Any, inputs: Any, config: Any = None) -> dict:
    """One streamed run: its `updates`/`values` chunks and its final state."""
    chunks = list(app.stream(inputs, config, stream_mode=MODES))
    values = [chunk for mode, chunk in chunks if mode == "values"]
    stream = canonical_stream([(mode, shaped(chunk)) for mode, chunk in chunks], MODES)
    return {"final": final(values[-1]), "stream": stream}


def updates(app: Any, inputs: Any, config: Any = None) -> list:
    """The `updates` chunks of a run, in order, messages said; a run of chunks from one node
    (v2's parallel `Send`s to the tools, which LangGraph streams as each finishes) sorted."""
    chunks = [shaped(chunk) for chunk in app.stream(inputs, config, stream_mode="updates")]
    out: list = []
    for _, group in itertools.groupby(chunks, key=lambda chunk: tuple(chunk)):
        out += sorted(group, key=repr)
    return out


def graph_of(app: Any) -> dict:
    g = app.get_graph()
    edges = sorted((e.source, e.target, e.conditional) for e in g.edges)
    return {"nodes": list(g.nodes), "edges": edges, "mermaid": g.draw_mermaid()}


# ---------------------------------------------------------------------------------------------
# Tools and scripts


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def shout(text: str) -> str:
    """Say it loudly."""
    return text.upper()


@tool(return_direct=True)
def final_answer(text: str) -> str:
    """Answer the user directly."""
    return f"final: {text}"


def asks(*calls: tuple[str, dict, str]) -> AIMessage:
    """A model reply asking for tool calls."""
    return AIMessage("", tool_calls=[tool_call(n, a, i) for n, a, i in calls])


def adding_model(**options: Any) -> ScriptedChatModel:
    """Two parallel tool calls, then an answer."""
    replies = [
        asks(("add", {"a": 1, "b": 2}, "c1"), ("shout", {"text": "hi"}, "c2")),
        "1 + 2 = 3, and HI",
    ]
    return ScriptedChatModel(replies=replies, **options)


QUESTION = {"messages": [("user", "add 1 and 2, shout hi")]}
NEED_MORE_STEPS = "Sorry, need more steps to process this request."


def seen(model: ScriptedChatModel) -> dict:
    return {"seen": model.seen, "bound": model.bound}


# ---------------------------------------------------------------------------------------------
# The loop


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_plain_tool_loop(version):
    """The model asks for two tools, the tools answer, the model answers: same stream, state,
    model input and bound tools, in both versions."""

    def program(lg):
        model = adding_model()
        app = lg.create_react_agent(model, [add, shout], version=version)
        return run(app, QUESTION), seen(model)

    same(program)


def test_version_v1_and_v2_updates_differ_as_in_langgraph():
    """v1 answers both calls in one `tools` update; v2 in one update per call (a `Send`
    each): the ordered `updates` chunks of one program in both versions."""

    def program(lg):
        out = {}
        for version in ("v1", "v2"):
            model = ScriptedChatModel(
                replies=[
                    asks(("add", {"a": 1, "b": 2}, "c1"), ("add", {"a": 3, "b": 4}, "c2")),
                    "done",
                ]
            )
            app = lg.create_react_agent(model, [add], version=version)
            chunks = updates(app, QUESTION)
            # (parallel Sends finish in any order: the tools' chunks as a sorted list)
            out[version] = [chunks[0], sorted(map(str, chunks[1:-1])), chunks[-1]]
        return out

    langgraph, _ = same(program)
    assert len(langgraph["v1"][1]) == 1 and len(langgraph["v2"][1]) == 2


def test_no_tools_is_one_model_call():
    def program(lg):
        model = ScriptedChatModel(replies=["hello"])
        app = lg.create_react_agent(model, [])
        return run(app, QUESTION), seen(model), graph_of(app)

    same(program)


def test_tools_given_as_a_tool_node_and_async_run():
    def program(lg):
        model = adding_model()
        app = lg.create_react_agent(model, lg.ToolNode([add, shout]))
        out = asyncio.run(app.ainvoke(QUESTION))
        return final(out), seen(model)

    same(program)


def test_return_direct_tool_ends_the_run():
    def program(lg):
        model = ScriptedChatModel(replies=[asks(("final_answer", {"text": "42"}, "f1"))])
        app = lg.create_react_agent(model, [add, final_answer])
        return run(app, QUESTION), seen(model), graph_of(app)

    same(program)


# ---------------------------------------------------------------------------------------------
# The prompt in its four forms


def prompt_callable(state):
    return [SystemMessage(f"{len(state['messages'])} messages so far"), *state["messages"]]


PROMPTS = {
    "str": "You are a calculator.",
    "system_message": SystemMessage("You are a careful calculator."),
    "callable": prompt_callable,
    "runnable": ChatPromptTemplate.from_messages(
        [("system", "You add numbers."), MessagesPlaceholder("messages")]
    ),
}


@pytest.mark.parametrize("form", list(PROMPTS))
def test_prompt_forms(form):
    """What the model is asked, each turn, with each form of `prompt`."""

    def program(lg):
        model = adding_model()
        app = lg.create_react_agent(model, [add, shout], prompt=PROMPTS[form])
        return run(app, QUESTION), seen(model)

    langgraph, _ = same(program)
    assert langgraph[1]["seen"][0][0][0] == "system"


def test_prompt_callable_sees_the_whole_state():
    """The state a callable prompt is handed: its keys (with the managed `remaining_steps`)."""

    def program(lg):
        keys = []

        def prompt(state):
            keys.append((sorted(state), state["remaining_steps"]))
            return state["messages"]

        model = adding_model()
        app = lg.create_react_agent(model, [add, shout], prompt=prompt)
        app.invoke(QUESTION, {"recursion_limit": 10})
        return keys

    langgraph, _ = same(program)
    assert langgraph == [(["messages", "remaining_steps"], 9), (["messages", "remaining_steps"], 7)]


# ---------------------------------------------------------------------------------------------
# Structured response


class Sum(BaseModel):
    total: int
    words: str


def test_response_format_schema():
    def program(lg):
        model = adding_model(structured=[{"total": 3, "words": "three"}])
        app = lg.create_react_agent(model, [add, shout], response_format=Sum)
        return run(app, QUESTION), seen(model), graph_of(app)

    langgraph, _ = same(program)
    assert langgraph[0]["final"]["structured_response"] == Sum(total=3, words="three")


def test_response_format_with_its_own_prompt():
    """`(prompt, schema)`: the prompt is put before the messages for the structured call only."""

    def program(lg):
        model = adding_model(structured=[{"total": 3, "words": "three"}])
        app = lg.create_react_agent(
            model, [add, shout], prompt="be brief", response_format=("Fill the form.", Sum)
        )
        return run(app, QUESTION), seen(model)

    langgraph, _ = same(program)
    assert langgraph[1]["seen"][-1][0] == ("system", "Fill the form.")


# ---------------------------------------------------------------------------------------------
# Hooks


def trim_to_last(state):
    """A pre-model hook: the model sees only the last message; the state keeps them all."""
    return {"llm_input_messages": state["messages"][-1:]}


def test_pre_model_hook_llm_input_messages():
    def program(lg):
        model = adding_model()
        app = lg.create_react_agent(model, [add, shout], pre_model_hook=trim_to_last)
        return run(app, QUESTION), seen(model), graph_of(app)

    langgraph, _ = same(program)
    assert [len(asked) for asked in langgraph[1]["seen"]] == [1, 1]


def test_pre_model_hook_rewrites_messages():
    """A hook that replaces the history (`RemoveMessage(REMOVE_ALL_MESSAGES)` then a summary)."""

    def program(lg):
        def summarize(state):
            kept = [m for m in state["messages"] if m.type != "system"]
            summary = SystemMessage(f"summary of {len(kept)} messages")
            return {"messages": [RemoveMessage(lg.REMOVE_ALL_MESSAGES), summary, *kept[-2:]]}

        model = adding_model()
        app = lg.create_react_agent(model, [add, shout], pre_model_hook=summarize)
        return run(app, QUESTION), seen(model)

    same(program)


def test_post_model_hook():
    """A post-model hook runs after each model call; tool calls still reach the tools."""

    def program(lg):
        def review(state):
            last = state["messages"][-1]
            return {"messages": [AIMessage(f"reviewed {len(last.tool_calls)} calls")]}

        model = adding_model()
        app = lg.create_react_agent(model, [add, shout], post_model_hook=review)
        return run(app, QUESTION), seen(model), graph_of(app)

    same(program)


def test_both_hooks_and_response_format_graph():
    def program(lg):
        model = adding_model(structured=[{"total": 3, "words": "three"}])
        app = lg.create_react_agent(
            model,
            [add, shout, final_answer],
            pre_model_hook=trim_to_last,
            post_model_hook=lambda state: {},
            response_format=Sum,
        )
        return graph_of(app)

    same(program)


# ---------------------------------------------------------------------------------------------
# State, context, store


def test_custom_state_schema_with_extra_fields():
    def program(lg):
        class State(lg.AgentState):
            user_name: str
            notes: Annotated[list, operator.add]

        def prompt(state):
            return [SystemMessage(f"The user is {state['user_name']}."), *state["messages"]]

        def note(state):
            return {"notes": [len(state["messages"])]}

        model = adding_model()
        app = lg.create_react_agent(
            model, [add, shout], prompt=prompt, state_schema=State, post_model_hook=note
        )
        return run(app, {**QUESTION, "user_name": "Ada", "notes": []}), seen(model)

    langgraph, _ = same(program)
    assert langgraph[0]["final"]["notes"] == [2, 5]


def test_pydantic_agent_state():
    """`AgentStatePydantic` (the input as message objects: nbgraph validates a pydantic
    state's input before its reducers run, LangGraph after; a `("user", text)` tuple is
    refused there)."""

    def program(lg):
        model = adding_model()
        app = lg.create_react_agent(model, [add, shout], state_schema=lg.AgentStatePydantic)
        return run(app, {"messages": [HumanMessage("add 1 and 2, shout hi")]}), seen(model)

    same(program)


def test_is_last_step_in_a_custom_state():
    """`IsLastStep` and `RemainingSteps` as the prompt sees them, each model call."""

    def program(lg):
        class State(lg.AgentState):
            is_last_step: lg.IsLastStep

        steps = []

        def prompt(state):
            steps.append((state["remaining_steps"], state["is_last_step"]))
            return state["messages"]

        looping = [asks(("add", {"a": i, "b": i}, f"c{i}")) for i in range(5)]
        model = ScriptedChatModel(replies=looping)
        app = lg.create_react_agent(model, [add], prompt=prompt, state_schema=State)
        out = app.invoke(QUESTION, {"recursion_limit": 6})
        return final(out), steps

    langgraph, _ = same(program)
    assert langgraph[1] == [(5, False), (3, False), (1, True)]


@pytest.mark.parametrize("limit", [3, 4, 5, 6])
def test_remaining_steps_stop(limit):
    """A model that never stops asking for tools: with an even limit the agent ends with
    LangGraph's "need more steps" answer; with an odd one the agent still has two steps
    left when it asks, and the run hits the recursion limit (as on LangGraph)."""

    def program(lg):
        looping = [asks(("add", {"a": i, "b": 1}, f"c{i}")) for i in range(10)]
        model = ScriptedChatModel(replies=looping)
        app = lg.create_react_agent(model, [add])
        return run(app, QUESTION, {"recursion_limit": limit}), len(model.seen)

    langgraph, _ = same(program, raises=True)
    if limit % 2:
        assert langgraph == ("raised", "GraphRecursionError")
    else:
        assert langgraph[1][0]["final"]["messages"][-1][1] == NEED_MORE_STEPS


def test_context_schema_and_dynamic_model():
    """A model chosen per call from the runtime's context (`(state, runtime) -> model`)."""

    def program(lg):
        class Context(TypedDict):
            model_name: str

        fast = ScriptedChatModel(replies=["fast answer"])
        deep = adding_model()
        models = {"fast": fast, "deep": deep}

        def choose(state, runtime):
            return models[runtime.context["model_name"]].bind_tools([add, shout])

        app = lg.create_react_agent(choose, [add, shout], context_schema=Context)
        first = app.invoke(QUESTION, context={"model_name": "fast"})
        second = app.invoke(QUESTION, context={"model_name": "deep"})
        return final(first), final(second), seen(fast), seen(deep)

    same(program)


def test_async_model_function_and_prompt_with_astream():
    """An async model function and an async prompt, run with `astream`."""

    def program(lg):
        model = adding_model()

        async def choose(state, runtime):
            return model.bind_tools([add, shout])

        async def prompt(state):
            return [SystemMessage("async prompt"), *state["messages"]]

        app = lg.create_react_agent(choose, [add, shout], prompt=prompt)

        async def go():
            return [shaped(c) async for c in app.astream(QUESTION, stream_mode="updates")]

        chunks = asyncio.run(go())
        return chunks[0], sorted(map(str, chunks[1:-1])), chunks[-1], seen(model)

    same(program)


def test_messages_stream():
    """`stream_mode="messages"`: the model's answers (and the tools' messages) with the node
    and step each came from."""

    def program(lg):
        model = adding_model()
        app = lg.create_react_agent(model, [add, shout], prompt="be brief")
        pairs = app.stream(QUESTION, stream_mode="messages")
        keys = ("langgraph_node", "langgraph_step", "langgraph_triggers")
        out = [(said(m), {k: meta.get(k) for k in keys}) for m, meta in pairs]
        return sorted(map(str, out))

    same(program)


def test_messages_stream_tags_are_the_models_own():
    """The docs filter the `messages` stream by `metadata["tags"] == ["joke"]`: inside an
    agent (its model called in a `RunnableSequence`) the tags are the model's, no
    `seq:step:N` bookkeeping; a model with no tags of its own has none."""

    def program(lg):
        joke = adding_model().with_config(tags=["joke"])
        tagged = lg.create_react_agent(joke, [add, shout])
        plain_agent = lg.create_react_agent(adding_model(), [add, shout], prompt="be brief")
        out = []
        for app in (tagged, plain_agent):
            for message, meta in app.stream(QUESTION, stream_mode="messages"):
                out.append((said(message), meta["langgraph_node"], meta.get("tags")))
        return sorted(map(str, out))

    same(program)


def test_a_prompt_function_is_given_the_store_runtime_writer_and_config_it_asks_for():
    """The docs' prompt `def prompt(state, config)`, `(state, *, store: BaseStore)`,
    `(state, runtime: Runtime[Context])`, `(state, writer)`: each gets what it names."""

    @dataclasses.dataclass
    class Context:
        user: str

    def program(lg):
        store = lg.InMemoryStore()
        store.put(("users",), "ada", {"city": "Paris"})

        def by_store(state, *, store: lg.BaseStore):
            return [SystemMessage(f"lives in {store.get(('users',), 'ada').value}"),
                    *state["messages"]]  # fmt: skip

        def by_runtime(state, runtime: lg.Runtime[Context]):
            shown = f"user {runtime.context.user}, store {runtime.store is not None}"
            return [SystemMessage(shown), *state["messages"]]

        def by_writer_and_config(state, config: RunnableConfig, writer: lg.StreamWriter):
            writer({"prompt": config["configurable"]["k"]})
            return [SystemMessage("wrote"), *state["messages"]]

        async def by_store_async(state, *, store: lg.BaseStore):
            return [SystemMessage(f"async {store.get(('users',), 'ada').value}"),
                    *state["messages"]]  # fmt: skip

        config = {"configurable": {"k": "v"}}
        out = []
        for prompt in (by_store, by_runtime, by_writer_and_config, by_store_async):
            model = ScriptedChatModel(replies=["ok"])
            app = lg.create_react_agent(
                model, [], prompt=prompt, store=store, context_schema=Context
            )
            if prompt is by_store_async:
                asyncio.run(app.ainvoke(QUESTION, config, context=Context("ada")))
                custom = []
            else:
                custom = list(app.stream(QUESTION, config, stream_mode="custom",
                                         context=Context("ada")))  # fmt: skip
            out.append((prompt.__name__, seen(model), custom))
        return out

    same(program)


def test_store_read_by_the_prompt_and_a_tool():
    def program(lg):
        store = lg.InMemoryStore()
        store.put(("users",), "ada", {"city": "Paris"})

        @tool
        def city() -> str:
            """Where the user lives."""
            return lg.get_store().get(("users",), "ada").value["city"]

        def prompt(state):
            about = lg.get_store().get(("users",), "ada").value
            return [SystemMessage(f"User data: {about}"), *state["messages"]]

        model = ScriptedChatModel(replies=[asks(("city", {}, "k1")), "You live in Paris."])
        app = lg.create_react_agent(model, [city], prompt=prompt, store=store)
        return run(app, QUESTION), seen(model)

    same(program)


# ---------------------------------------------------------------------------------------------
# Threads, interrupts, name


def snapshot(state: Any) -> dict:
    return {"values": final(state.values), "next": state.next}


def test_checkpointer_multi_turn_thread():
    def program(lg):
        model = ScriptedChatModel(
            replies=[
                asks(("add", {"a": 1, "b": 2}, "c1")),
                "3",
                asks(("add", {"a": 3, "b": 3}, "c2")),
                "6",
            ]
        )
        app = lg.create_react_agent(model, [add], checkpointer=lg.InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        first = final(app.invoke({"messages": [("user", "1+2?")]}, config))
        second = run(app, {"messages": [("user", "and 3+3?")]}, config)
        history = [s.next for s in app.get_state_history(config)]
        return first, second, snapshot(app.get_state(config)), history, seen(model)

    same(program)


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_interrupt_before_tools_then_resume(version, saver, tmp_path):
    """Paused before the tools (v2: the two `Send`s, with the state they carry, kept in the
    checkpoint), then resumed."""

    def program(lg):
        model = adding_model()
        app = lg.create_react_agent(
            model,
            [add, shout],
            checkpointer=lg.saver(),
            interrupt_before=["tools"],
            version=version,
        )
        config = {"configurable": {"thread_id": "t"}}
        paused = updates(app, QUESTION, config)
        at_pause = snapshot(app.get_state(config))
        resumed = run(app, None, config)
        return paused, at_pause, resumed, snapshot(app.get_state(config))

    langgraph, _ = same(program, saver=saver, folder=tmp_path)
    assert langgraph[1]["next"] == {"v1": ("tools",), "v2": ("tools", "tools")}[version]


def test_interrupt_after_agent():
    def program(lg):
        model = adding_model()
        app = lg.create_react_agent(
            model, [add, shout], checkpointer=lg.InMemorySaver(), interrupt_after=["agent"]
        )
        config = {"configurable": {"thread_id": "t"}}
        paused = updates(app, QUESTION, config)
        at_pause = snapshot(app.get_state(config))
        second = updates(app, None, config)
        return paused, at_pause, second, snapshot(app.get_state(config))

    same(program)


def test_name_marks_the_answers():
    def program(lg):
        model = adding_model()
        app = lg.create_react_agent(model, [add, shout], name="calculator")
        return run(app, QUESTION), app.name

    langgraph, _ = same(program)
    assert langgraph[1] == "calculator"


def test_agent_as_a_subgraph_node():
    """A named agent added to a parent graph as a node: the parent's stream and state."""

    def program(lg):
        model = adding_model()
        agent = lg.create_react_agent(model, [add, shout], name="calculator")
        parent = lg.StateGraph(lg.MessagesState).add_node(agent)
        parent = parent.add_edge(lg.START, "calculator").compile()
        return run(parent, QUESTION), list(parent.get_graph().nodes)

    same(program)


# ---------------------------------------------------------------------------------------------
# Refusals


def test_bad_arguments_are_refused():
    """An unknown version, a state schema without the keys the agent reads, tools bound to the
    model that are not the agent's, an unknown keyword: each raises as LangGraph's does."""

    def program(lg):
        class NoSteps(TypedDict):
            messages: list

        model = ScriptedChatModel(replies=[])
        calls = {
            "version": lambda: lg.create_react_agent(model, [add], version="v3"),
            "schema": lambda: lg.create_react_agent(model, [add], state_schema=NoSteps),
            "structured schema": lambda: lg.create_react_agent(
                model, [add], state_schema=lg.AgentState, response_format=Sum
            ),
            "bound": lambda: lg.create_react_agent(model.bind_tools([shout]), [add]),
            "count": lambda: lg.create_react_agent(model.bind_tools([add, shout]), [add]),
            "keyword": lambda: lg.create_react_agent(model, [add], colour="red"),
        }
        out = {}
        for key, call in calls.items():
            try:
                call()
                out[key] = "ok"
            except Exception as error:
                out[key] = _builtin(error)
        return out

    langgraph, _ = same(program)
    assert set(langgraph.values()) == {"ValueError", "TypeError"}


def test_post_model_hook_with_v1_fails_on_a_tool_call():
    """The post-model hook is for version "v2": with "v1", a tool call routes where the
    agent's path map does not go (a `KeyError` on both)."""

    def program(lg):
        model = adding_model()
        app = lg.create_react_agent(
            model, [add, shout], post_model_hook=lambda state: {}, version="v1"
        )
        return run(app, QUESTION)

    langgraph, _ = same(program, raises=True)
    assert langgraph == ("raised", "KeyError")


def test_unanswered_tool_call_in_the_history_is_refused():
    def program(lg):
        model = ScriptedChatModel(replies=["never"])
        app = lg.create_react_agent(model, [add])
        history = {"messages": [("user", "hi"), asks(("add", {"a": 1, "b": 1}, "x1"))]}
        try:
            app.invoke(history)
        except ValueError as error:
            return str(error).split(".")[0], len(model.seen)
        return "no error"

    same(program)


def _builtin(error: BaseException) -> str:
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins").__name__


def test_both_runs_compare_through_the_harness():
    """`both` sees the agent's names on both sides (the harness's homes)."""

    def program(lg):
        return lg.create_react_agent.__module__.split(".")[0]

    langgraph, nbgraph = both(program)
    assert (langgraph, nbgraph) == ("langgraph", "nbgraph")
