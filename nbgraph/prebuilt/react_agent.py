"""`create_react_agent`: LangGraph's prebuilt tool-calling agent, built on nbgraph's own
`StateGraph` and `ToolNode`.

With its states: `AgentState`, `AgentStatePydantic`, and the two with a `structured_response`.

The graph is LangGraph's, node for node: `agent` calls the model; `tools` runs the tool
calls of its answer (version "v1": the whole message in one task; "v2", the default: one
`Send` per call); `pre_model_hook` and `post_model_hook` run before and after `agent`;
`generate_structured_response` asks the model for the `response_format` at the end. Its
runs are recorded like any other: each model call a task of `agent`, each tool answer a
write of a `tools` task through the `messages` reducer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, NotRequired, get_type_hints

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel
from typing_extensions import TypedDict  # (pydantic takes it in a signature on 3.11)

from nbgraph.blueprint.runnables import langchain_config
from nbgraph.messages import add_messages
from nbgraph.notebook import StateGraph
from nbgraph.prebuilt.agent_model import AgentModel, check_chat_history, state_value
from nbgraph.prebuilt.tool_node import ToolNode
from nbgraph.primitives import END, START, RemainingSteps, Send

__all__ = [  # (LangGraph's `chat_agent_executor.__all__`; that facade reads this list)
    "AgentState",
    "AgentStatePydantic",
    "AgentStateWithStructuredResponse",
    "AgentStateWithStructuredResponsePydantic",
    "create_react_agent",
    "create_tool_calling_executor",
]

NEED_MORE_STEPS = "Sorry, need more steps to process this request."
"""The agent's last answer when the recursion limit leaves no room for its tool calls."""

StructuredResponse = dict | BaseModel


class AgentState(TypedDict):
    """The state of a prebuilt agent: its messages, and the steps left (managed)."""

    messages: Annotated[Sequence[BaseMessage], add_messages]
    remaining_steps: NotRequired[RemainingSteps]


class AgentStatePydantic(BaseModel):
    """`AgentState` as a pydantic model."""

    messages: Annotated[Sequence[BaseMessage], add_messages]
    remaining_steps: RemainingSteps = 25


class AgentStateWithStructuredResponse(AgentState):
    """`AgentState` with the structured response `response_format` asks for."""

    structured_response: StructuredResponse


class AgentStateWithStructuredResponsePydantic(AgentStatePydantic):
    """`AgentStatePydantic` with the structured response `response_format` asks for."""

    structured_response: StructuredResponse


class AgentSteps:
    """The agent's nodes and routers (bound methods, added to the graph by name).

    Args:
        model: the prompt and the model.
        options: `name` (the agent's, set on each answer), `return_direct` (tool names
            whose answer ends the run), `pre_hook`/`post_hook` (whether those nodes exist),
            `response_format`, `version`, `entry` (the node each turn starts at) and
            `pydantic` (whether the state is a pydantic model).
    """

    def __init__(self, model: AgentModel, **options: Any) -> None:
        self.model = model
        self.name: str | None = options["name"]
        self.return_direct: set[str] = options["return_direct"]
        self.pre_hook: bool = options["pre_hook"]
        self.post_hook: bool = options["post_hook"]
        self.response_format: Any = options["response_format"]
        self.version: str = options["version"]
        self.entry: str = options["entry"]
        self.pydantic: bool = options["pydantic"]

    # --- nodes ---------------------------------------------------------------------------

    def call_model(self, state: Any, runtime: Any, config: RunnableConfig) -> dict[str, Any]:
        """The `agent` node: call the model with the prompt over the messages."""
        model_input = self._model_input(state)
        response = self.model.resolve(state, runtime).invoke(model_input, langchain_config(config))
        return self._answer(state, response)

    async def acall_model(self, state: Any, runtime: Any, config: RunnableConfig) -> dict[str, Any]:
        """`call_model` for a model chosen by an async function (or an async prompt)."""
        model_input = self._model_input(state)
        chain = await self.model.aresolve(state, runtime)
        response = await chain.ainvoke(model_input, langchain_config(config))
        return self._answer(state, response)

    def generate_structured_response(
        self, state: Any, runtime: Any, config: RunnableConfig
    ) -> dict[str, Any]:
        """The `generate_structured_response` node: ask the model for `response_format`."""
        messages, schema = self._structured_request(state)
        model = AgentModel.structured(self.model.resolve(state, runtime), schema)
        return {"structured_response": model.invoke(messages, langchain_config(config))}

    async def agenerate_structured_response(
        self, state: Any, runtime: Any, config: RunnableConfig
    ) -> dict[str, Any]:
        """`generate_structured_response` for a model chosen by an async function."""
        messages, schema = self._structured_request(state)
        model = AgentModel.structured(await self.model.aresolve(state, runtime), schema)
        return {"structured_response": await model.ainvoke(messages, langchain_config(config))}

    def _model_input(self, state: Any) -> Any:
        """The state the prompt reads: `messages` replaced by what the pre-model hook gave
        the model (`llm_input_messages`), if it did."""
        messages = state_value(state, "messages")
        if self.pre_hook:
            messages = state_value(state, "llm_input_messages") or messages
        if messages is None:
            keys = "'llm_input_messages' or 'messages' key" if self.pre_hook else "'messages' key"
            raise ValueError(f"Expected input to call_model to have {keys}, but got {state}")
        check_chat_history(messages)
        if self.pydantic:
            state.messages = messages
        else:
            state["messages"] = messages
        return state

    def _answer(self, state: Any, response: Any) -> dict[str, Any]:
        response.name = self.name
        if self._out_of_steps(state, response):
            return {"messages": [AIMessage(id=response.id, content=NEED_MORE_STEPS)]}
        return {"messages": [response]}

    def _out_of_steps(self, state: Any, response: Any) -> bool:
        """Whether the steps left cannot run the tool calls of `response` and answer again."""
        left = state_value(state, "remaining_steps")
        if left is None or not isinstance(response, AIMessage):
            return False
        calls = response.tool_calls
        direct = all(call["name"] in self.return_direct for call in calls)
        return (left < 1 and direct) or (left < 2 and bool(calls))

    def _structured_request(self, state: Any) -> tuple[list[Any], Any]:
        messages, schema = list(state_value(state, "messages")), self.response_format
        if isinstance(schema, tuple):
            system, schema = schema
            messages = [SystemMessage(content=system), *messages]
        return messages, schema

    # --- routers -------------------------------------------------------------------------

    def should_continue(self, state: Any) -> str | list[Send]:
        """After `agent`: to the tools when it asked for some, else on to the end."""
        last = state_value(state, "messages")[-1]
        if not isinstance(last, AIMessage) or not last.tool_calls:
            if self.post_hook:
                return "post_model_hook"
            return "generate_structured_response" if self.response_format is not None else END
        if self.version == "v1":
            return "tools"
        if self.post_hook:
            return "post_model_hook"
        return self._sends(state, last.tool_calls)

    def post_model_hook_router(self, state: Any) -> str | list[Send]:
        """After `post_model_hook`: to the tool calls not answered yet, back to the entry
        after a tool answer, else on to the end."""
        messages = state_value(state, "messages")
        answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
        last_ai = next(m for m in reversed(messages) if isinstance(m, AIMessage))
        pending = [call for call in last_ai.tool_calls if call["id"] not in answered]
        if pending:
            return self._sends(state, pending)
        if isinstance(messages[-1], ToolMessage):
            return self.entry
        return "generate_structured_response" if self.response_format is not None else END

    def route_tool_responses(self, state: Any) -> str:
        """After `tools`: the end when a `return_direct` tool answered, else the entry."""
        message = None
        for message in reversed(state_value(state, "messages")):
            if not isinstance(message, ToolMessage):
                break
            if message.name in self.return_direct:
                return END
        if isinstance(message, AIMessage) and any(
            call["name"] in self.return_direct for call in message.tool_calls
        ):
            return END
        return self.entry

    @staticmethod
    def _sends(state: Any, calls: list[dict[str, Any]]) -> list[Send]:
        """One `Send` to the tools node per call, with the state it was made in."""
        seen = dict(state) if isinstance(state, dict) else state
        return [
            Send("tools", {"__type": "tool_call_with_context", "tool_call": call, "state": seen})
            for call in calls
        ]


def create_react_agent(
    model: Any,
    tools: Sequence[Any] | ToolNode,
    *,
    prompt: Any = None,
    response_format: Any = None,
    pre_model_hook: Any = None,
    post_model_hook: Any = None,
    state_schema: Any = None,
    context_schema: Any = None,
    checkpointer: Any = None,
    store: Any = None,
    interrupt_before: list[str] | None = None,
    interrupt_after: list[str] | None = None,
    debug: bool = False,
    version: Literal["v1", "v2"] = "v2",
    name: str | None = None,
    **deprecated: Any,
) -> Any:
    """A graph that calls the model, runs the tools it asks for, and calls it again until it
    answers without tool calls: LangGraph's `create_react_agent`, as an nbgraph graph.

    Args:
        model: a chat model, a Runnable (`model.bind_tools(...)`), a `"provider:model"`
            name, or a function `(state, runtime) -> model` (sync or async).
        tools: tools (langchain tools or functions; dicts are provider tools, only bound)
            or a `ToolNode`. With none, the agent is one model call.
        prompt: a str or `SystemMessage` put before the messages, a function of the state
            returning the model's input, or a Runnable doing that.
        response_format: a schema or `(prompt, schema)`: after the loop the model is asked
            for it, kept in `structured_response`.
        pre_model_hook, post_model_hook: nodes run before / after each model call (a
            pre-model hook may give the model `llm_input_messages` instead of `messages`).
        state_schema: must have `messages` and `remaining_steps` (and `structured_response`
            with a `response_format`); default `AgentState`.
        version: "v2" (default) sends each tool call to `tools` on its own; "v1" runs all
            the calls of a message in one task.
        context_schema, checkpointer, store, interrupt_before, interrupt_after, debug,
            name: as `StateGraph(...)` and `compile(...)` take them (`config_schema`: the
            old name of `context_schema`).

    Raises:
        ValueError: an unknown version, a state schema without the keys the agent reads,
            tools bound to the model that are not the agent's.
        TypeError: an unknown keyword argument.
    """
    if not isinstance(tools, (list, tuple, ToolNode)):
        from nbgraph.errors import wrong_argument

        raise wrong_argument(
            "create_react_agent(model, tools=)", "a list of tools or a ToolNode", tools
        )
    context_schema = _context_schema(context_schema, deprecated)
    state_schema = _state_schema(state_schema, response_format, version)
    tool_node, tool_list, builtin = _tool_parts(tools)
    hooks = {"pre_model_hook": pre_model_hook, "post_model_hook": post_model_hook}
    agent_model = AgentModel(model, tool_list, builtin, prompt)
    steps = _steps(agent_model, tool_list, hooks, state_schema, response_format, version, name)
    graph = _agent_graph(steps, state_schema, context_schema, hooks, tool_node, tool_list)
    breaks = {"interrupt_before": interrupt_before or (), "interrupt_after": interrupt_after or ()}
    return graph.compile(checkpointer, store=store, debug=debug, name=name, **breaks)


create_tool_calling_executor = create_react_agent
"""LangGraph's other name for `create_react_agent`."""


def _steps(
    model: AgentModel,
    tools: list[Any],
    hooks: dict[str, Any],
    state_schema: Any,
    response_format: Any,
    version: str,
    name: str | None,
) -> AgentSteps:
    """The agent's nodes and routers, for these options."""
    return AgentSteps(
        model,
        name=name,
        return_direct={t.name for t in tools if t.return_direct},
        pre_hook=hooks["pre_model_hook"] is not None,
        post_hook=hooks["post_model_hook"] is not None,
        response_format=response_format,
        version=version,
        entry="pre_model_hook" if hooks["pre_model_hook"] is not None else "agent",
        pydantic=_is_pydantic(state_schema),
    )


def _agent_graph(
    steps: AgentSteps,
    state_schema: Any,
    context_schema: Any,
    hooks: dict[str, Any],
    tool_node: ToolNode,
    tools: list[Any],
) -> StateGraph:
    """The agent's graph, its nodes added in LangGraph's order (for `get_graph()`)."""
    graph = StateGraph(state_schema, context_schema=context_schema)
    is_async = steps.model.is_async
    pre, post = hooks["pre_model_hook"], hooks["post_model_hook"]
    input_schema = _model_input_schema(state_schema) if pre is not None else None
    call = steps.acall_model if is_async else steps.call_model
    graph.add_node("agent", call, input_schema=input_schema)
    if tools:
        graph.add_node("tools", tool_node)
    if pre is not None:
        graph.add_node("pre_model_hook", pre).add_edge("pre_model_hook", "agent")
    graph.add_edge(START, steps.entry)
    if post is not None:
        graph.add_node("post_model_hook", post).add_edge("agent", "post_model_hook")
    if steps.response_format is not None:
        structured = (
            steps.agenerate_structured_response if is_async else steps.generate_structured_response
        )
        graph.add_node("generate_structured_response", structured)
    if tools:
        _add_tool_loop(graph, steps)
    elif steps.response_format is not None:
        last = "post_model_hook" if post is not None else "agent"
        graph.add_edge(last, "generate_structured_response")
    return graph


def _add_tool_loop(graph: StateGraph, steps: AgentSteps) -> None:
    """The routes between the model, the hooks and the `tools` node."""
    finish = "generate_structured_response" if steps.response_format is not None else END
    if steps.post_hook:
        graph.add_conditional_edges("agent", steps.should_continue, ["post_model_hook"])
        graph.add_conditional_edges(
            "post_model_hook", steps.post_model_hook_router, [steps.entry, "tools", finish]
        )
    else:
        graph.add_conditional_edges("agent", steps.should_continue, ["tools", finish])
    if steps.return_direct:
        graph.add_conditional_edges("tools", steps.route_tool_responses, [steps.entry, END])
    else:
        graph.add_edge("tools", steps.entry)


def _context_schema(context_schema: Any, deprecated: dict[str, Any]) -> Any:
    """`context_schema`, or the old `config_schema`; refuses any other keyword."""
    old = deprecated.pop("config_schema", None)
    if deprecated:
        raise TypeError(f"create_react_agent() got unexpected keyword arguments: {deprecated}")
    return context_schema if context_schema is not None else old


def _state_schema(state_schema: Any, response_format: Any, version: str) -> Any:
    """The agent's state: the one given (checked for the keys the agent reads), else
    `AgentState` (with `structured_response` when there is a `response_format`)."""
    if version not in ("v1", "v2"):
        raise ValueError(f"Invalid version {version}. Supported versions are 'v1' and 'v2'.")
    if state_schema is None:
        if response_format is not None:
            return AgentStateWithStructuredResponse
        return AgentState
    required = {"messages", "remaining_steps"}
    if response_format is not None:
        required.add("structured_response")
    missing = required - set(get_type_hints(state_schema))
    if missing:
        raise ValueError(f"Missing required key(s) {missing} in state_schema")
    return state_schema


def _tool_parts(tools: Any) -> tuple[ToolNode, list[Any], list[dict]]:
    """The tools node, the tools it runs, and the provider tools (dicts) only bound."""
    if isinstance(tools, ToolNode):
        return tools, list(tools.tools_by_name.values()), []
    builtin = [t for t in tools if isinstance(t, dict)]
    node = ToolNode([t for t in tools if not isinstance(t, dict)])
    return node, list(node.tools_by_name.values()), builtin


def _is_pydantic(schema: Any) -> bool:
    return isinstance(schema, type) and issubclass(schema, BaseModel)


def _model_input_schema(state_schema: Any) -> Any:
    """What `agent` reads when a pre-model hook runs: the state and `llm_input_messages`."""
    if _is_pydantic(state_schema):
        from pydantic import create_model

        return create_model(
            "CallModelInputSchema",
            llm_input_messages=(list[AnyMessage], ...),
            __base__=state_schema,
        )

    class CallModelInputSchema(state_schema):  # type: ignore[misc,valid-type]
        llm_input_messages: list[AnyMessage]

    return CallModelInputSchema
