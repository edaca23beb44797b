"""Tests for nbgraph.messages: the Message model, Message.coerce and the add_messages reducer."""

from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass, field
from typing import Any

import pydantic
import pytest

from nbgraph.errors import InvalidUpdateError
from nbgraph.messages import (
    REMOVE_ALL_MESSAGES,
    Message,
    RemoveMessage,
    add_messages,
    use_message_kind,
)
from nbgraph.types import MISSING


@pytest.fixture(autouse=True)
def _nbgraph_messages():
    """These tests are about nbgraph's own `Message`: langchain_core is installed here, so
    pin the kind (tests/parity/test_langgraph_messages.py covers langchain's)."""
    previous = use_message_kind("nbgraph")
    yield
    use_message_kind(previous)


@dataclass
class FakeLangChainMessage:
    """Quacks like a LangChain message: `.type` and `.content`, plus optional fields."""

    type: str
    content: Any
    id: str | None = None
    name: str | None = None
    tool_calls: list[dict] = field(default_factory=list)
    tool_call_id: str | None = None
    response_metadata: dict = field(default_factory=dict)


def msg(role: str, content: Any, id: str | None = None) -> Message:
    return Message(role=role, content=content, id=id)


def summary(messages: list[Message]) -> list[tuple[str | None, str, Any]]:
    return [(m.id, m.role, m.content) for m in messages]


# --- Message -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("human", "user"),
        ("ai", "assistant"),
        ("user", "user"),
        ("assistant", "assistant"),
        ("system", "system"),
        ("tool", "tool"),
        ("critic", "critic"),
    ],
)
def test_role_aliases_are_normalised(given: str, expected: str) -> None:
    assert Message(role=given).role == expected


def test_message_defaults() -> None:
    m = Message(role="user")
    assert (m.content, m.id, m.name, m.tool_calls, m.tool_call_id, m.metadata) == (
        "",
        None,
        None,
        [],
        None,
        {},
    )
    # the empty defaults are sealed: shared safely between instances, and never changed
    with pytest.raises(TypeError, match="frozen"):
        m.metadata["k"] = 1
    assert Message(role="user").metadata == {}


def test_message_rejects_bad_role_and_unknown_fields() -> None:
    with pytest.raises(pydantic.ValidationError, match="role must be a non-empty str"):
        Message(role=3)
    with pytest.raises(pydantic.ValidationError, match="role must be a non-empty str"):
        Message(role="")
    with pytest.raises(pydantic.ValidationError, match="contnet"):
        Message(role="user", contnet="typo")


def test_repr_and_str_are_short() -> None:
    m = Message(role="human", content="hi", id="m1")
    assert repr(m) == "Message(user: 'hi', id='m1')"
    assert str(m) == "user: hi"
    long = Message(role="ai", content="x" * 500, id=str(uuid.UUID(int=0)))
    assert len(repr(long)) < 100
    assert "id='00000000…'" in repr(long)
    assert repr(Message(role="user", content=[{"type": "text", "text": "a"}] * 2)) == (
        "Message(user: [2 parts])"
    )
    tool = Message(role="tool", content="42", name="calc", tool_call_id="c1")
    assert repr(tool) == "Message(tool: '42', name='calc', tool_call_id='c1')"


def test_remove_message() -> None:
    r = RemoveMessage(id="m1")
    assert (r.role, r.id) == ("remove", "m1")
    assert isinstance(r, Message)
    assert repr(r) == "RemoveMessage(id='m1')"
    with pytest.raises(pydantic.ValidationError, match="id"):
        RemoveMessage()
    with pytest.raises(pydantic.ValidationError, match="'remove'"):
        RemoveMessage(id="m1", role="user")


# --- Message.coerce ---------------------------------------------------------------------------


def test_coerce_returns_a_message_as_is() -> None:
    m = msg("user", "hi", "m1")
    assert Message.coerce(m) is m
    r = RemoveMessage(id="m1")
    assert Message.coerce(r) is r


def test_coerce_tuple() -> None:
    m = Message.coerce(("human", "hi"))
    assert (m.role, m.content, m.id) == ("user", "hi", None)


def test_coerce_str_is_a_user_message() -> None:
    m = Message.coerce("hello")
    assert (m.role, m.content) == ("user", "hello")


def test_coerce_dict_with_role_or_type() -> None:
    m = Message.coerce({"role": "ai", "content": "hi", "id": "a1", "name": "bot"})
    assert (m.role, m.content, m.id, m.name) == ("assistant", "hi", "a1", "bot")
    t = Message.coerce({"type": "human", "content": "yo"})
    assert (t.role, t.content) == ("user", "yo")
    both = Message.coerce({"role": "system", "type": "ai", "content": "x"})
    assert both.role == "system"


def test_coerce_dict_keeps_tool_fields_and_puts_unknown_keys_in_metadata() -> None:
    calls = [{"name": "add", "args": {"a": 1}, "id": "c1"}]
    m = Message.coerce({"role": "assistant", "content": "", "tool_calls": calls})
    assert m.tool_calls == calls
    t = Message.coerce({"role": "tool", "content": "2", "tool_call_id": "c1"})
    assert t.tool_call_id == "c1"
    extra = Message.coerce({"role": "user", "content": "x", "lang": "en", "metadata": {"k": 1}})
    assert extra.metadata == {"lang": "en", "k": 1}


def test_coerce_dict_with_remove_role_gives_remove_message() -> None:
    r = Message.coerce({"role": "remove", "id": "m1"})
    assert isinstance(r, RemoveMessage)
    assert r.id == "m1"


def test_coerce_duck_typed_langchain_message() -> None:
    calls = [{"name": "add", "args": {}, "id": "c1"}]
    lc = FakeLangChainMessage(
        type="ai",
        content="sure",
        id="run-1",
        name="bot",
        tool_calls=calls,
        response_metadata={"model": "m"},
    )
    m = Message.coerce(lc)
    assert (m.role, m.content, m.id, m.name) == ("assistant", "sure", "run-1", "bot")
    assert m.tool_calls == calls
    assert m.tool_call_id is None
    assert m.metadata == {"response_metadata": {"model": "m"}}

    tool = Message.coerce(FakeLangChainMessage(type="tool", content="3", tool_call_id="c1"))
    assert (tool.role, tool.tool_call_id, tool.id) == ("tool", "c1", None)

    human = Message.coerce(FakeLangChainMessage(type="human", content="hi"))
    assert human.role == "user"


def test_coerce_duck_typed_minimal_object() -> None:
    class Bare:
        type = "system"
        content = "be brief"

    m = Message.coerce(Bare())
    assert (m.role, m.content, m.id, m.tool_calls) == ("system", "be brief", None, [])


def test_coerce_duck_typed_chunk_types() -> None:
    m = Message.coerce(FakeLangChainMessage(type="AIMessageChunk", content="par"))
    assert m.role == "assistant"


@pytest.mark.parametrize("bad", [42, None, 3.5, ["user", "hi"], {1, 2}, object()])
def test_coerce_bad_type_names_the_type_and_the_accepted_forms(bad: Any) -> None:
    with pytest.raises(TypeError) as info:
        Message.coerce(bad)
    text = str(info.value)
    assert type(bad).__name__ in text
    assert "(role, content) tuple" in text
    assert "dict" in text
    assert ".type and .content" in text


def test_coerce_bad_tuples_and_dicts() -> None:
    with pytest.raises(TypeError, match="tuple of 3 items"):
        Message.coerce(("user", "hi", "extra"))
    with pytest.raises(TypeError, match=r"role must be a non-empty str.*int"):
        Message.coerce((1, "hi"))
    with pytest.raises(TypeError, match=r"keys \['content'\].*'role' \(or 'type'\)"):
        Message.coerce({"content": "hi"})
    with pytest.raises(TypeError, match="needs the id"):
        Message.coerce({"role": "remove"})


# --- add_messages ---------------------------------------------------------------------------


def test_add_messages_example_from_the_brief() -> None:
    out = add_messages([("user", "hi")], [("assistant", "hello")])
    assert [(m.role, m.content) for m in out] == [("user", "hi"), ("assistant", "hello")]
    assert all(isinstance(m, Message) for m in out)
    ids = [m.id for m in out]
    assert all(isinstance(i, str) and i for i in ids)
    assert len(set(ids)) == 2
    for i in ids:
        uuid.UUID(i)  # a real uuid


def test_ids_are_assigned_on_both_sides_and_kept_when_present() -> None:
    out = add_messages([msg("user", "a"), msg("user", "b", "keep")], msg("ai", "c"))
    assert out[1].id == "keep"
    assert out[0].id and out[2].id
    assert len({m.id for m in out}) == 3


def test_add_messages_is_pure() -> None:
    no_id = msg("user", "no id yet")
    with_id = msg("ai", "hello", "a1")
    left = [no_id, with_id]
    right = [msg("ai", "replaced", "a1"), ("user", "new")]
    left_before, right_before = copy.deepcopy(left), copy.deepcopy(right)

    out = add_messages(left, right)

    assert left == left_before
    assert right == right_before
    assert no_id.id is None  # got its id on a copy
    assert with_id.content == "hello"  # replaced in the result only
    assert out is not left and out is not right
    assert out[0] is not no_id and out[0].content == "no id yet" and out[0].id


def test_replacing_keeps_the_position() -> None:
    left = [msg("user", "q1", "1"), msg("ai", "a1", "2"), msg("user", "q2", "3")]
    out = add_messages(left, [msg("ai", "a1 (edited)", "2"), msg("ai", "a2", "4")])
    assert summary(out) == [
        ("1", "user", "q1"),
        ("2", "assistant", "a1 (edited)"),
        ("3", "user", "q2"),
        ("4", "assistant", "a2"),
    ]


def test_remove_by_id() -> None:
    left = [msg("user", "q1", "1"), msg("ai", "a1", "2"), msg("user", "q2", "3")]
    out = add_messages(left, RemoveMessage(id="2"))
    assert summary(out) == [("1", "user", "q1"), ("3", "user", "q2")]


def test_remove_a_message_added_earlier_in_the_same_update() -> None:
    out = add_messages([msg("user", "q", "1")], [msg("ai", "draft", "d"), RemoveMessage(id="d")])
    assert summary(out) == [("1", "user", "q")]


def test_a_plain_message_with_role_remove_also_removes() -> None:
    out = add_messages([msg("user", "q", "1"), msg("ai", "a", "2")], msg("remove", "", "1"))
    assert summary(out) == [("2", "assistant", "a")]


def test_removing_an_unknown_id_names_the_id() -> None:
    left = [msg("user", "q", "1")]
    with pytest.raises(ValueError, match="'no-such-id'") as info:
        add_messages(left, RemoveMessage(id="no-such-id"))
    assert isinstance(info.value, InvalidUpdateError)
    # nothing was changed on the way
    assert summary(left) == [("1", "user", "q")]


def test_remove_without_id_is_an_error() -> None:
    with pytest.raises(InvalidUpdateError, match="has no id"):
        add_messages([msg("user", "q", "1")], Message(role="remove"))


def test_remove_all_keeps_only_what_follows() -> None:
    left = [msg("user", "q1", "1"), msg("ai", "a1", "2")]
    right = [
        msg("user", "dropped too", "3"),
        RemoveMessage(id=REMOVE_ALL_MESSAGES),
        msg("system", "summary", "s"),
        msg("user", "q2", "4"),
    ]
    out = add_messages(left, right)
    assert summary(out) == [("s", "system", "summary"), ("4", "user", "q2")]


def test_remove_all_alone_empties_the_list() -> None:
    assert add_messages([msg("user", "q1", "1")], [RemoveMessage(id=REMOVE_ALL_MESSAGES)]) == []


def test_ids_removed_by_remove_all_can_come_back_as_new_messages() -> None:
    out = add_messages(
        [msg("user", "old", "1"), msg("ai", "x", "2")],
        [RemoveMessage(id=REMOVE_ALL_MESSAGES), msg("user", "new", "2"), msg("ai", "y", "1")],
    )
    assert summary(out) == [("2", "user", "new"), ("1", "assistant", "y")]


def test_duplicate_ids_in_one_update_keep_the_last_at_the_first_position() -> None:
    left = [msg("user", "q", "1")]
    right = [msg("ai", "v1", "d"), msg("ai", "other", "o"), msg("ai", "v2", "d")]
    out = add_messages(left, right)
    assert summary(out) == [
        ("1", "user", "q"),
        ("d", "assistant", "v2"),
        ("o", "assistant", "other"),
    ]


def test_duplicate_ids_of_an_existing_message_replace_it_in_place() -> None:
    left = [msg("user", "q", "1"), msg("ai", "a", "2"), msg("user", "q2", "3")]
    out = add_messages(left, [msg("ai", "a'", "2"), msg("ai", "a''", "2")])
    assert summary(out) == [("1", "user", "q"), ("2", "assistant", "a''"), ("3", "user", "q2")]


def test_the_result_never_holds_duplicate_ids() -> None:
    left = [msg("user", "first", "1"), msg("user", "second", "1")]
    out = add_messages(left, [])
    assert summary(out) == [("1", "user", "second")]


@pytest.mark.parametrize("empty", [MISSING, []])
def test_missing_or_none_left(empty: Any) -> None:
    out = add_messages(empty, [("user", "hi"), msg("ai", "hello", "a")])
    assert [(m.role, m.content) for m in out] == [("user", "hi"), ("assistant", "hello")]
    assert out[0].id


@pytest.mark.parametrize("empty", [MISSING, []])
def test_missing_or_none_right(empty: Any) -> None:
    left = [msg("user", "q", "1")]
    out = add_messages(left, empty)
    assert summary(out) == [("1", "user", "q")]
    assert out is not left


def test_none_on_one_side_is_refused_and_on_both_gives_the_reducer() -> None:
    """As LangGraph's: a write of None to a messages field is an error (write [] for
    none); `add_messages()` with no side is the reducer itself."""
    with pytest.raises(ValueError, match=r"Must specify non-null arguments.*'left'"):
        add_messages([msg("user", "q", "1")], None)
    with pytest.raises(ValueError, match="Only received: 'right'"):
        add_messages(None, [msg("user", "q", "1")])
    assert add_messages() is add_messages


def test_both_missing() -> None:
    assert add_messages(MISSING, MISSING) == []


@pytest.mark.parametrize(
    "single",
    [
        ("ai", "hello"),
        {"role": "ai", "content": "hello"},
        "hello",
        Message(role="assistant", content="hello"),
        FakeLangChainMessage(type="ai", content="hello"),
    ],
)
def test_a_single_non_list_right(single: Any) -> None:
    out = add_messages([msg("user", "q", "1")], single)
    assert len(out) == 2
    assert out[0].id == "1"
    assert out[1].content == "hello"
    assert out[1].id


def test_a_single_non_list_left() -> None:
    out = add_messages(("user", "q"), ("ai", "a"))
    assert [(m.role, m.content) for m in out] == [("user", "q"), ("assistant", "a")]


def test_a_bad_item_is_a_type_error_naming_where_it_is() -> None:
    with pytest.raises(TypeError, match=r"right\[1\].*int") as info:
        add_messages([("user", "q")], [("ai", "a"), 42])
    assert "(role, content) tuple" in str(info.value)
    with pytest.raises(TypeError, match=r"left\[0\].*float"):
        add_messages([1.5], [])
    with pytest.raises(TypeError, match=r"right: .*set"):
        add_messages([], {"a", "b"})


def test_a_removed_id_is_gone_for_the_rest_of_the_update() -> None:
    left = [msg("user", "q", "1"), msg("ai", "a", "2"), msg("user", "q2", "3")]
    # removed, then sent again: a new message, so it goes to the end
    out = add_messages(left, [RemoveMessage(id="2"), msg("ai", "again", "2")])
    assert summary(out) == [("1", "user", "q"), ("3", "user", "q2"), ("2", "assistant", "again")]
    with pytest.raises(InvalidUpdateError, match="'2'"):
        add_messages(left, [RemoveMessage(id="2"), RemoveMessage(id="2")])


def test_messages_state_runs_a_chat_graph() -> None:
    from nbgraph import START, MessagesState, StateGraph

    def bot(state):
        return {"messages": [("assistant", f"you said {state['messages'][-1].content}")]}

    app = StateGraph(MessagesState).add_node("bot", bot).add_edge(START, "bot").compile()
    out = app.invoke({"messages": [("user", "hi")]})["messages"]
    assert [(m.role, m.content) for m in out] == [("user", "hi"), ("assistant", "you said hi")]
    assert all(m.id for m in out)


def test_messages_are_frozen_and_a_copied_list_shares_only_what_cannot_change() -> None:
    import copy

    import pydantic

    from nbgraph.isolation import isolate

    plain = Message(role="user", content="hi", id="1")
    rich = Message(role="user", content="hi", id="2", metadata={"tags": ["a"]})
    with pytest.raises(pydantic.ValidationError):
        plain.content = "changed"  # type: ignore[misc]
    copied = isolate([plain, rich])
    assert copied == [plain, rich]
    assert copied[0] is plain  # nothing in it can change: shared
    assert copied[1] is not rich and copied[1].metadata is not rich.metadata
    copied[1].metadata["tags"].append("b")
    assert rich.metadata == {"tags": ["a"]}
    assert copy.deepcopy(plain) is plain


def test_a_node_cannot_change_the_recorded_messages() -> None:
    from nbgraph import START, MessagesState, StateGraph

    def meddle(state):
        state["messages"].append(Message(role="user", content="sneaked in", id="x"))
        state["messages"][0].metadata["seen"] = True  # a fresh copy: the record keeps its own
        return {"messages": [("assistant", "ok")]}

    app = StateGraph(MessagesState).add_node("meddle", meddle).add_edge(START, "meddle")
    run = app.compile().run(
        {"messages": [Message(role="user", content="hi", id="1", metadata={"k": 1})]}
    )
    assert [m.content for m in run.output["messages"]] == ["hi", "ok"]
    assert run.output["messages"][0].metadata == {"k": 1}
    assert run.state_at(("meddle", 0))["messages"][0].metadata == {"k": 1}


@pytest.mark.parametrize(
    "right",
    [
        [("assistant", "new")],
        [Message(role="assistant", content="replaced", id="1")],
        [RemoveMessage(id="1")],
        [Message(role="user", content="a", id="9"), Message(role="user", content="b", id="9")],
        ("user", "one tuple"),
    ],
    ids=["append", "replace by id", "remove", "same id twice", "one message"],
)
def test_the_in_place_merge_matches_add_messages(right: object) -> None:
    from nbgraph.messages import add_messages_in_place, with_ids

    left = add_messages([], [Message(role="user", content="hi", id="1"), ("user", "two")])
    prepared = with_ids(right if isinstance(right, list) else [right])
    expected = add_messages(list(left), prepared)
    assert add_messages_in_place(list(left), prepared) == expected


def test_a_shared_messages_empty_containers_refuse_changes() -> None:
    from nbgraph.isolation import isolate

    plain = Message(role="user", content="hi", id="1")
    (shared,) = isolate([plain])
    assert shared is plain and shared.metadata == {} and shared.tool_calls == []
    with pytest.raises(TypeError, match="A Message is frozen"):
        shared.metadata["x"] = 1
    with pytest.raises(TypeError, match="model_copy"):
        shared.tool_calls.append({"name": "t"})
    assert plain.metadata == {} and plain.model_dump()["metadata"] == {}
    again = plain.model_copy(update={"metadata": {"x": 1}})
    assert again.metadata == {"x": 1} and not again.shareable()


def test_add_messages_in_place_keeps_the_ids_of_a_list_it_grew_and_still_replaces():
    """The ids of a grown list are kept between appends; an update with an id already in
    it still replaces in place of appending, and a list changed elsewhere is read again."""
    from nbgraph.messages import add_messages_in_place

    previous = use_message_kind("nbgraph")
    try:
        _grown_and_replaced(add_messages_in_place)
    finally:
        use_message_kind(previous)


def _grown_and_replaced(add_messages_in_place):
    from nbgraph.messages import merge

    grown = add_messages([], [("user", "a")])
    for text in ("b", "c", "d"):
        assert add_messages_in_place(grown, [("assistant", text)]) is grown
    assert merge._index_of(grown) is not None and merge.shared_messages(grown)
    again = Message(role="assistant", content="B", id=grown[1].id)
    merged = add_messages_in_place(grown, [again])
    assert [m.content for m in merged] == ["a", "B", "c", "d"]
    assert merged == add_messages(grown, [again])

    other = add_messages([], [("user", "x")])
    add_messages_in_place(other, [("user", "y")])
    swapped = Message(role="user", content="z", id="swapped")
    other[0] = swapped  # (what a Mutation may do: forget_messages is called before it)
    merge.forget_messages(other)
    assert [m.content for m in add_messages_in_place(other, [swapped])] == ["z", "y"]

    tooled = add_messages([], [("user", "x")])
    add_messages_in_place(tooled, [Message(role="assistant", content="t", metadata={"k": 1})])
    assert not merge.shared_messages(tooled)  # its metadata may change: copied on read


def test_a_mutation_of_a_grown_conversation_is_seen_by_the_next_append():
    """A `Mutation` that changes the engine's messages in place (same length) is followed
    by an update naming the id it put there: that update replaces, as add_messages does."""
    from nbgraph import START, Mutation, StateGraph

    class Swap(Mutation):
        field = "messages"

        def apply(self, value):
            value[0] = Message(role="user", content="swapped", id="s")
            return value

    app = (
        StateGraph(dict, reducers={"messages": "append_messages"})
        .add_node("a", lambda s: {"messages": [("assistant", "one")]})
        .add_node("b", lambda s: {"messages": [("assistant", "two")]})
        .add_node("swap", lambda s: Swap())
        .add_node("again", lambda s: {"messages": [Message(role="user", content="S", id="s")]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "swap")
        .add_edge("swap", "again")
        .compile()
    )
    out = app.invoke({"messages": [("user", "hi")]})
    assert [m.content for m in out["messages"]] == ["S", "one", "two"]
