"""Public calls given an argument of a wrong type are refused up front, naming the argument
and what it takes (not a raw error deep inside, nor a failure later inside a run)."""

import operator
from typing import Annotated, TypedDict

import pytest

import nbgraph
from nbgraph import END, START, Command, MemorySaver, StateGraph
from nbgraph.errors import InvalidArgumentError


class S(TypedDict):
    log: Annotated[list, operator.add]


def _a(state):
    return {"log": ["a"]}


def _graph():
    return StateGraph(S).add_node("a", _a).add_edge(START, "a").add_edge("a", END)


CONFIG = {"configurable": {"thread_id": "t"}}


@pytest.fixture(scope="module")
def app():
    compiled = _graph().compile(checkpointer=MemorySaver())
    compiled.invoke({"log": []}, CONFIG)
    return compiled


CASES = {
    "limit": lambda app, tmp: list(app.get_state_history(CONFIG, limit="x")),
    "before": lambda app, tmp: list(app.get_state_history(CONFIG, before=5)),
    "filter": lambda app, tmp: list(app.get_state_history(CONFIG, filter=5)),
    "supersteps": lambda app, tmp: app.bulk_update_state(CONFIG, 5),
    "with_config(config)": lambda app, tmp: app.with_config(5),
    "invoke(interrupt_before=)": lambda app, tmp: app.invoke(
        {"log": []}, CONFIG, interrupt_before=5
    ),
    "stream_mode": lambda app, tmp: list(app.stream({"log": []}, CONFIG, stream_mode=5)),
    "run_many(inputs, config=)": lambda app, tmp: (
        _graph().compile().run_many([{"log": []}], config=5, progress=False)
    ),
    "title": lambda app, tmp: (
        _graph().compile().run({"log": []}).save_html(tmp / "r.html", title=5)
    ),
    "destinations": lambda app, tmp: StateGraph(S).add_node("a", _a, destinations=5),
    "path_map": lambda app, tmp: (
        StateGraph(S).add_node("a", _a).add_conditional_edges("a", lambda s: "a", 5)
    ),
    "add_sequence(nodes)": lambda app, tmp: StateGraph(S).add_sequence(5),
    "compile(interrupt_before=)": lambda app, tmp: _graph().compile(interrupt_before=5),
    "goto": lambda app, tmp: Command(goto=5),
    "store": lambda app, tmp: _graph().compile(store=5),
    "task(function)": lambda app, tmp: nbgraph.task(5),
}


@pytest.mark.parametrize("argument", list(CASES))
def test_a_wrong_argument_type_is_refused_naming_it(app, tmp_path, argument):
    with pytest.raises(InvalidArgumentError, match=r"expected .*, got (int|str)") as caught:
        CASES[argument](app, tmp_path)
    assert argument in str(caught.value)


def test_create_react_agent_names_its_tools_argument():
    fake = pytest.importorskip("langchain_core.language_models.fake_chat_models")
    from nbgraph.prebuilt import create_react_agent

    with pytest.raises(InvalidArgumentError, match="tools="):
        create_react_agent(fake.FakeListChatModel(responses=["x"]), 5)


def test_right_arguments_still_work(app):
    assert Command(goto=["a", nbgraph.Send("a", {})]).goto_targets()[0] == "a"
    assert len(list(app.get_state_history(CONFIG, limit=1))) == 1
    assert _graph().compile(interrupt_before=["a"], store=nbgraph.InMemoryStore()) is not None
