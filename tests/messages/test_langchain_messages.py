"""Tests for nbgraph/messages/langchain_messages.py, nbgraph/codec/lc_messages.py and
nbgraph/record/message_text.py: langchain_core messages in state, in files and on screen.

What LangGraph does with them is checked against LangGraph in
tests/parity/test_langgraph_messages.py; here: exact round trips, the choice of kind, mixed
lists, errors, display, and nbgraph without langchain_core.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)

import nbgraph
from nbgraph import END, START, MessagesState, Run, StateGraph, add_messages
from nbgraph.codec.placeholders import UnloadedModel
from nbgraph.codec.values import decode_value, encode_value, is_opaque
from nbgraph.messages import Message, message_kind, use_message_kind
from nbgraph.messages.langchain_messages import MessageTypeError
from nbgraph.record.compare.messages import compare_values
from nbgraph.record.message_text import message_text
from nbgraph.views.drawings.display import cell_text
from nbgraph.views.panels.panels import state_html
from tests.support.messages import CALL, keep_all_graph, rich_messages

ROOT = Path(__file__).resolve().parents[2]


def same_exactly(got: list[Any], expected: list[Any]) -> None:
    assert [type(m) for m in got] == [type(m) for m in expected]
    assert [m.model_dump() for m in got] == [m.model_dump() for m in expected]


# --- the kind of messages ------------------------------------------------------------------------


def test_langchain_is_the_kind_when_installed_and_can_be_pinned() -> None:
    assert message_kind() == "langchain"
    assert type(add_messages([], [("user", "hi")])[0]) is HumanMessage
    previous = use_message_kind("nbgraph")
    try:
        assert type(add_messages([], [("user", "hi")])[0]) is Message
    finally:
        use_message_kind(previous)
    with pytest.raises(ValueError, match="'auto', 'langchain' or 'nbgraph'"):
        use_message_kind("openai")  # type: ignore[arg-type]


def test_ids_are_given_on_copies_the_input_is_not_changed() -> None:
    given = HumanMessage("hi")
    merged = add_messages([], [given])
    assert given.id is None and merged[0].id and merged[0].content == "hi"


def test_a_message_given_its_id_is_the_copy_model_copy_makes() -> None:
    given = AIMessage("hi", name="bot", additional_kwargs={"k": 1}, extra_field="x")
    (made,) = nbgraph.messages.with_ids([given])
    assert given.id is None and made is not given and made.id
    expected = given.model_copy(update={"id": made.id})
    assert made.__dict__ == expected.__dict__
    assert made.__pydantic_fields_set__ == expected.__pydantic_fields_set__
    assert made.__pydantic_extra__ == expected.__pydantic_extra__
    assert made.__pydantic_extra__ is not given.__pydantic_extra__
    assert made.__pydantic_fields_set__ is not given.__pydantic_fields_set__


def test_a_remove_is_told_apart_by_its_class_and_a_write_keeps_its_messages() -> None:
    kept = HumanMessage("hi", id="1")
    merged = add_messages([kept], [AIMessage("yo", id="2")])
    assert merged[0] is kept and [m.id for m in merged] == ["1", "2"]
    assert add_messages(merged, [RemoveMessage(id="1")])[0].id == "2"
    with pytest.raises(ValueError, match="doesn't exist"):
        add_messages(merged, [RemoveMessage(id="3")])


def test_an_nbgraph_message_is_kept_and_mixed_lists_merge_by_id() -> None:
    own = Message(role="assistant", content="mine", id="m1")
    merged = add_messages([HumanMessage("hi", id="h1"), own], [AIMessage("replaced", id="m1")])
    assert [type(m).__name__ for m in merged] == ["HumanMessage", "AIMessage"]
    merged = add_messages(merged, [nbgraph.RemoveMessage(id="h1"), own])
    assert len(merged) == 1 and merged[0] is own
    assert add_messages(merged, RemoveMessage(id=nbgraph.REMOVE_ALL_MESSAGES)) == []


def test_a_value_no_library_reads_names_the_node_step_field_and_type() -> None:
    class Weird:
        pass

    graph = StateGraph(MessagesState).add_node("talker", lambda s: {"messages": [Weird()]})
    app = graph.add_edge(START, "talker").add_edge("talker", END).compile()
    with pytest.raises(MessageTypeError) as caught:
        app.invoke({"messages": []})
    text = str(caught.value)
    assert "node 'talker' at step 1 wrote field 'messages'" in text
    assert "Weird" in text and "expected a langchain_core message" in text
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, NotImplementedError)


def test_nodes_get_langchain_messages_shared_in_a_list_of_their_own() -> None:
    seen: list[Any] = []

    def node(state: dict) -> dict:
        seen.append(state["messages"])
        state["messages"].append(AIMessage("not written"))  # the node's own list
        return {}

    graph = StateGraph(MessagesState).add_node("node", node)
    app = graph.add_edge(START, "node").add_edge("node", END).compile()
    out = app.invoke({"messages": [("user", "hi")]})
    assert [m.content for m in out["messages"]] == ["hi"]
    assert seen[0][0] is out["messages"][0]  # shared, as LangGraph shares them


# --- files and savers ----------------------------------------------------------------------------


def test_every_class_round_trips_through_the_codec_exactly() -> None:
    for message in [*rich_messages(), RemoveMessage(id="x")]:
        data = json.loads(json.dumps(encode_value(message)))
        assert data["$type"] == "lc_message"
        same_exactly([decode_value(data)], [message])
        assert not is_opaque(message)


def test_a_file_names_only_allow_listed_classes() -> None:
    data = {"$type": "lc_message", "class": "os:system", "data": {"content": "x"}}
    back = decode_value(data)
    assert isinstance(back, UnloadedModel) and back.class_name == "os:system"
    assert decode_value(json.loads(json.dumps(encode_value(back)))) == back


def test_a_run_file_keeps_langchain_messages_exactly(tmp_path: Path) -> None:
    run = keep_all_graph().run({"messages": rich_messages()[:2]})
    loaded = Run.load(run.save(tmp_path / "run.json"))
    same_exactly(loaded.output["messages"], run.output["messages"])
    same_exactly(loaded.state_at(0)["messages"], rich_messages()[:2])


def test_memory_and_sqlite_savers_keep_langchain_messages_exactly(tmp_path: Path) -> None:
    for saver in (nbgraph.MemorySaver(), nbgraph.SqliteSaver(tmp_path / "db.sqlite")):
        app = keep_all_graph(checkpointer=saver)
        config = {"configurable": {"thread_id": "t"}}
        out = app.invoke({"messages": rich_messages()[:2]}, config)
        same_exactly(app.get_state(config).values["messages"], out["messages"])
        same_exactly(out["messages"], rich_messages())


def test_a_sqlite_file_is_read_exactly_in_another_process(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    app = keep_all_graph(checkpointer=nbgraph.SqliteSaver(path))
    config = {"configurable": {"thread_id": "t"}}
    out = app.invoke({"messages": rich_messages()[:2]}, config)
    code = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(ROOT)!r})
        from tests.support.messages import keep_all_graph
        import nbgraph
        app = keep_all_graph(checkpointer=nbgraph.SqliteSaver({str(path)!r}))
        values = app.get_state({{"configurable": {{"thread_id": "t"}}}}).values
        print(json.dumps([[type(m).__name__, m.model_dump(mode="json")]
                          for m in values["messages"]]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    expected = [[type(m).__name__, m.model_dump(mode="json")] for m in out["messages"]]
    assert json.loads(done.stdout) == expected


# --- on screen -----------------------------------------------------------------------------------


def test_tables_and_panels_show_type_content_tool_calls_and_ids_escaped() -> None:
    messages = [
        HumanMessage("<b>hi</b>", id="h1"),
        AIMessage("", tool_calls=[CALL], id="a1"),
        ToolMessage("3", tool_call_id="call_1", id="t1"),
    ]
    text = cell_text(messages, 300)
    assert text == (
        "[HumanMessage('<b>hi</b>', id='h1'), "
        "AIMessage('', tool_calls=[add({'a': 1, 'b': [2, 3]}) #call_1], id='a1'), "
        "ToolMessage('3', tool_call_id='call_1', id='t1')]"
    )
    html = state_html({"messages": messages})
    assert "&lt;b&gt;hi&lt;/b&gt;" in html and "<b>hi" not in html


def test_message_text_never_raises() -> None:
    broken = AIMessage.model_construct()  # no content, no fields
    assert message_text(broken).startswith("<AIMessage: cannot be shown")


def test_comparing_runs_sets_langchain_ids_apart() -> None:
    a = [HumanMessage("hi", id="1"), AIMessage("", tool_calls=[CALL], id="2")]
    b = [HumanMessage("hi", id="3"), AIMessage("", tool_calls=[{**CALL, "id": "c9"}], id="4")]
    difference = compare_values(a, b)
    assert difference is not None and not difference.said
    assert compare_values(a, [HumanMessage("bye", id="1"), a[1]]).said


# --- without langchain_core ----------------------------------------------------------------------

BLOCKED = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "langchain_core" or name.startswith("langchain_core."):
            raise ImportError("blocked for the test: " + name)
sys.meta_path.insert(0, Block())
"""


def test_without_langchain_core_messages_are_nbgraphs_own(tmp_path: Path) -> None:
    saved = tmp_path / "value.json"
    saved.write_text(json.dumps(encode_value([AIMessage("kept", id="a1")])))
    run_file = keep_all_graph().run({"messages": rich_messages()[:2]}).save(tmp_path / "run.json")
    code = BLOCKED + textwrap.dedent(
        f"""
        import json
        sys.path.insert(0, {str(ROOT)!r})
        from typing import Annotated, TypedDict
        from nbgraph import END, START, StateGraph, add_messages
        from nbgraph.codec.values import decode_value
        from nbgraph.messages import message_kind
        class S(TypedDict):
            messages: Annotated[list, add_messages]
        app = (StateGraph(S).add_node("n", lambda s: {{"messages": [("ai", "hello")]}})
               .add_edge(START, "n").add_edge("n", END).compile())
        out = app.invoke({{"messages": [("user", "hi")]}})
        back = decode_value(json.loads(open({str(saved)!r}).read()))[0]
        from nbgraph import Run
        replayed = Run.load({str(run_file)!r}).state_at(1)["messages"]
        print(json.dumps({{
            "kind": message_kind(),
            "classes": [type(m).__name__ for m in out["messages"]],
            "roles": [m.role for m in out["messages"]],
            "file": [type(back).__name__, back.class_name, dict(back)],
            "loaded": "langchain_core" in sys.modules,
            "replayed": [[type(m).__name__, m.role, m.id] for m in replayed],
        }}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {
        "kind": "nbgraph",
        "classes": ["Message", "Message"],
        "roles": ["user", "assistant"],
        "file": ["UnloadedModel", "AIMessage", {"type": "ai", "content": "kept", "id": "a1"}],
        "loaded": False,
        "replayed": [  # a run file saved with langchain messages replays as Messages here
            ["Message", role, id_]
            for role, id_ in (
                ("system", "s1"),
                ("user", "h1"),
                ("assistant", "a1"),
                ("tool", "t1"),
                ("critic", "c1"),
            )
        ],
    }


def test_the_tree_drawing_and_the_inspector_show_langchain_messages_escaped() -> None:
    pytest.importorskip("graphviz")
    pytest.importorskip("ipywidgets")

    def chat(state: dict) -> dict:
        return {"messages": [AIMessage("", tool_calls=[CALL], id="a1")]}

    def shout(state: dict) -> dict:
        return {"messages": [("ai", "<script>x")]}

    graph = StateGraph(MessagesState).add_node("chat", chat).add_node("shout", shout)
    graph.add_edge(START, "chat").add_edge("chat", "shout").add_edge("shout", END)
    run = graph.compile().run({"messages": "hi"})
    assert "messages ← [AIMessage('', tool_calls=[" in run.draw_tree().source
    inspector = run.inspect()
    inspector.go(1)
    assert "AIMessage(&#x27;&#x27;, tool_calls=[add(" in inspector.effects.value
    inspector.go(2)
    assert "&lt;script&gt;x" in inspector.effects.value
    assert "<script>" not in inspector.state.value + inspector.effects.value


def test_the_inspector_shows_each_message_of_a_write_with_its_tool_call_id_escaped():
    from langchain_core.messages import ToolMessage

    answers = [
        ToolMessage("18 °C in <b>Paris</b>", tool_call_id="call-1", name="get_weather"),
        ToolMessage("no station", tool_call_id="call-2", name="get_weather", status="error"),
    ]
    run = (
        StateGraph(MessagesState)
        .add_node("tools", lambda s: {"messages": answers})
        .add_edge(START, "tools")
        .compile()
        .run({"messages": [("user", "hi")]})
    )
    inspector = run.inspect()
    inspector.go(1)
    effects, state = inspector.effects.value, inspector.state.value
    assert "tool_call_id=&#x27;call-1&#x27;" in effects
    assert "tool_call_id=&#x27;call-2&#x27;, status=&#x27;error&#x27;" in effects
    assert "&lt;b&gt;Paris" in effects and "<b>Paris" not in effects
    assert state.count("ToolMessage(") == 2 and "HumanMessage(&#x27;hi&#x27;" in state
    many = [("user", f"question {i}") for i in range(20)]
    inspector = (
        StateGraph(MessagesState).add_node("n", lambda s: None).add_edge(START, "n").compile()
    )
    inspector = inspector.run({"messages": many}).inspect()
    assert "… 12 earlier messages" in inspector.state.value
    assert "question 19" in inspector.state.value and "question 11" not in inspector.state.value
