"""The model side of a prebuilt agent, as LangGraph's `create_react_agent` treats it: prompt,
chat model, tools.

That is its prompt, the chat model it calls (fixed, or chosen per call by a function of the
state and the runtime), the tools bound to it, and the model a structured response is asked of.

The prompt is a langchain `Runnable` named "Prompt" put in front of the model, so a traced or
streamed run shows the same chain as LangGraph's.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.runnables import (
    Runnable,
    RunnableBinding,
    RunnableConfig,
    RunnableLambda,
    RunnableSequence,
)

from nbgraph.engine.core.injection import injections
from nbgraph.engine.core.runtime import current_task_env

__all__ = ["PROMPT_NAME", "AgentModel", "check_chat_history", "state_value"]

PROMPT_NAME = "Prompt"
"""The name of the prompt's Runnable (LangGraph's)."""


def state_value(state: Any, key: str, default: Any = None) -> Any:
    """`key` of a dict state or attribute of a model state, else `default`."""
    if isinstance(state, dict):
        return state.get(key, default)
    return getattr(state, key, default)


def prompt_runnable(prompt: Any) -> Runnable:
    """The prompt as a Runnable from the state to the model's input.

    None: the state's messages; a str or `SystemMessage`: that system message, then the
    messages; a function (sync or async): what it returns; a Runnable: itself.

    Raises:
        ValueError: `prompt` is none of these.
    """
    if prompt is None:
        return RunnableLambda(_messages_of, name=PROMPT_NAME)
    if isinstance(prompt, str | SystemMessage):
        system = SystemMessage(content=prompt) if isinstance(prompt, str) else prompt
        return RunnableLambda(lambda state: [system, *_messages_of(state)], name=PROMPT_NAME)
    if isinstance(prompt, Runnable):
        return prompt
    if callable(prompt):
        return RunnableLambda(_filled(prompt), name=PROMPT_NAME)
    raise ValueError(
        f"create_react_agent: `prompt` must be a str, a SystemMessage, a function of the "
        f"state or a Runnable; got {prompt!r} (a {type(prompt).__name__})."
    )


def _filled(prompt: Callable[..., Any]) -> Callable[..., Any]:
    """`prompt`, given what its signature asks for besides the state, as LangGraph gives it:
    `store`, `runtime`, `writer` from the running task (`injections`, the engine's one
    reading of a signature), `config` the prompt Runnable's own (langchain passes it)."""
    wanted = tuple((name, what) for name, what in injections(prompt) if what != "config")
    if not wanted:
        return prompt
    takes_config = any(what == "config" for _, what in injections(prompt))

    def arguments(config: Any) -> dict[str, Any]:
        env = current_task_env()
        found = {name: None if env is None else env.value(what) for name, what in wanted}
        return {**found, "config": config} if takes_config else found

    if inspect.iscoroutinefunction(prompt):

        async def afilled(state: Any, config: RunnableConfig) -> Any:
            return await prompt(state, **arguments(config))

        return afilled

    def filled(state: Any, config: RunnableConfig) -> Any:
        return prompt(state, **arguments(config))

    return filled


def _messages_of(state: Any) -> list[Any]:
    return list(state_value(state, "messages"))


def check_chat_history(messages: Sequence[Any]) -> None:
    """Refuse a history where an AI message's tool call has no `ToolMessage` answering it
    (every chat model provider refuses one).

    Raises:
        ValueError: naming the first few unanswered tool calls.
    """
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    unanswered = [
        call
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call["id"] not in answered
    ]
    if unanswered:
        raise ValueError(
            "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. "
            f"Here are the first few of those tool calls: {unanswered[:3]}.\n\nEvery tool "
            "call in the message history must have a corresponding ToolMessage (the result "
            "of the tool) before the model is called again."
        )


class AgentModel:
    """The prompt and the chat model of an agent.

    Args:
        model: a chat model, a Runnable (`model.bind_tools(...)`, a chain), a
            `"provider:model"` string (made by `langchain.chat_models.init_chat_model`), or a
            function `(state, runtime) -> model` (sync or async) choosing one per call.
        tools: the langchain tools the agent runs (bound to a fixed model that has none).
        builtin: provider tools given as dicts: bound, never run by the tools node.
        prompt: see `prompt_runnable`.
    """

    def __init__(
        self, model: Any, tools: Sequence[Any], builtin: Sequence[dict], prompt: Any
    ) -> None:
        self.prompt = prompt
        self.dynamic = not isinstance(model, str | Runnable) and callable(model)
        self.choose: Callable[..., Any] | None = model if self.dynamic else None
        self.is_async = inspect.iscoroutinefunction(model) or inspect.iscoroutinefunction(prompt)
        self.fixed: Runnable | None = None
        if not self.dynamic:
            chat = _init_chat_model(model) if isinstance(model, str) else model
            if (tools or builtin) and _should_bind_tools(chat, tools, len(builtin)):
                chat = chat.bind_tools([*tools, *builtin])
            self.fixed = prompt_runnable(prompt) | chat

    def resolve(self, state: Any, runtime: Any) -> Runnable:
        """The prompt and the model to call now."""
        if self.choose is None:
            return self.fixed  # type: ignore[return-value]
        chosen = self.choose(state, runtime)
        if inspect.isawaitable(chosen):
            getattr(chosen, "close", lambda: None)()
            raise RuntimeError(
                "create_react_agent: the model function is async but the agent was run "
                "synchronously; use ainvoke()/astream(), or give a sync model function."
            )
        return prompt_runnable(self.prompt) | chosen

    async def aresolve(self, state: Any, runtime: Any) -> Runnable:
        """`resolve`, awaiting an async model function."""
        if self.choose is None:
            return self.fixed  # type: ignore[return-value]
        chosen = self.choose(state, runtime)
        if inspect.isawaitable(chosen):
            chosen = await chosen
        return prompt_runnable(self.prompt) | chosen

    @staticmethod
    def structured(resolved: Runnable, schema: Any) -> Runnable:
        """The chat model inside `resolved` asked for output in `schema`."""
        return _chat_model_of(resolved).with_structured_output(schema)


def _init_chat_model(model: str) -> Any:
    try:
        from langchain.chat_models import init_chat_model
    except ImportError as error:
        raise ImportError(
            f"create_react_agent: a model given by name ({model!r}) needs the `langchain` "
            "package (`pip install langchain`); or pass a chat model."
        ) from error
    return init_chat_model(model)


def _first_model_step(model: Any) -> Any:
    """In a chain, its first bound or chat model step; anything else as it is."""
    if isinstance(model, RunnableSequence):
        steps = (s for s in model.steps if isinstance(s, RunnableBinding | BaseChatModel))
        return next(steps, model)
    return model


def _should_bind_tools(model: Any, tools: Sequence[Any], builtin: int) -> bool:
    """Whether the agent binds its tools to `model`: not if they are bound already (then the
    bound ones must be the agent's tools).

    Raises:
        ValueError: the model has other tools bound, or another number of them.
    """
    model = _first_model_step(model)
    if not isinstance(model, RunnableBinding) or "tools" not in model.kwargs:
        return True
    bound = model.kwargs["tools"]
    if len(tools) != len(bound) - builtin:
        raise ValueError(
            "Number of tools in the model.bind_tools() and tools passed to create_react_agent "
            f"must match. Got {len(tools)} tools, expected {len(bound) - builtin}."
        )
    names = {_bound_name(t) for t in bound} - {None}
    missing = {t.name for t in tools} - names
    if missing:
        raise ValueError(f"Missing tools '{missing}' in the model.bind_tools()")
    return False


def _bound_name(schema: dict[str, Any]) -> str | None:
    """A bound tool's name: OpenAI's form (`function.name`) or Anthropic's (`name`)."""
    if schema.get("type") == "function":
        return schema["function"]["name"]
    return schema.get("name")


def _chat_model_of(model: Any) -> BaseChatModel:
    """The chat model inside a chain or a binding.

    Raises:
        TypeError: there is none.
    """
    model = _first_model_step(model)
    if isinstance(model, RunnableBinding):
        model = model.bound
    if not isinstance(model, BaseChatModel):
        raise TypeError(
            "create_react_agent: a structured response needs a chat model (or a "
            f"model.bind_tools(...) binding of one); got {type(model).__name__}."
        )
    return model
