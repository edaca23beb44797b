"""Tests for nbgraph.reducers: the built-in reducers, their in-place variants and the registry."""

from __future__ import annotations

import copy
import operator
import uuid
from typing import Any

import pytest

from nbgraph.messages import Message, use_message_kind
from nbgraph.reducers import (
    Reducer,
    callable_anywhere,
    check_reducer_callable,
    function_from_ref,
    function_ref,
    get_reducer,
    reducer_from_callable,
    register_reducer,
    registered_names,
)
from nbgraph.types import MISSING


@pytest.fixture(autouse=True)
def _nbgraph_messages():
    """These tests are about nbgraph's own `Message`: langchain_core is installed here, so
    pin the kind (tests/parity/test_langgraph_messages.py covers langchain's)."""
    previous = use_message_kind("nbgraph")
    yield
    use_message_kind(previous)


BUILT_IN_NAMES = ("overwrite", "append", "add", "sum", "append_messages", "merge", "union")
BUILT_IN_NAMES += ("max", "min")


def unique_name(label: str) -> str:
    """A reducer name no other test registers (the registry is global)."""
    return f"test_{label}_{uuid.uuid4().hex}"


def call(name: str, old: Any, new: Any) -> Any:
    """Call the built-in registered as `name`."""
    reducer = get_reducer(name)
    assert reducer is not None, f"{name!r} is not registered"
    return reducer.fn(old, new)


# --- the registry holds every built-in ------------------------------------------------------


@pytest.mark.parametrize("name", BUILT_IN_NAMES)
def test_every_built_in_name_is_registered_and_takes_missing(name: str) -> None:
    reducer = get_reducer(name)

    assert isinstance(reducer, Reducer)
    assert reducer.takes_missing is True
    assert name in registered_names()


def test_registered_names_are_sorted() -> None:
    names = registered_names()

    assert names == sorted(names)


def test_get_reducer_of_an_unknown_name_is_none() -> None:
    assert get_reducer(unique_name("never_registered")) is None


# --- overwrite -------------------------------------------------------------------------------


def test_overwrite_replaces_the_old_value() -> None:
    assert call("overwrite", [1, 2], [3]) == [3]
    assert call("overwrite", "old", "new") == "new"


def test_overwrite_with_no_old_value_takes_the_new_one() -> None:
    assert call("overwrite", MISSING, 5) == 5


def test_overwrite_with_no_new_value_keeps_the_old_one() -> None:
    assert call("overwrite", 5, MISSING) == 5


def test_overwrite_writes_none_as_a_value() -> None:
    assert call("overwrite", 5, None) is None


# --- append ----------------------------------------------------------------------------------


def test_append_extends_by_a_list() -> None:
    assert call("append", ["a"], ["b", "c"]) == ["a", "b", "c"]


def test_append_extends_by_a_tuple() -> None:
    assert call("append", ["a"], ("b", "c")) == ["a", "b", "c"]


def test_append_adds_one_item() -> None:
    assert call("append", ["a"], "b") == ["a", "b"]
    assert call("append", [1], {"k": 2}) == [1, {"k": 2}]


def test_append_with_no_old_value_starts_from_an_empty_list() -> None:
    assert call("append", MISSING, ["a"]) == ["a"]
    assert call("append", MISSING, "a") == ["a"]


def test_append_with_no_new_value_keeps_the_old_items() -> None:
    assert call("append", ["a"], MISSING) == ["a"]


def test_append_with_both_missing_is_an_empty_list() -> None:
    assert call("append", MISSING, MISSING) == []


# --- add / sum -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["add", "sum"])
def test_add_and_sum_use_plus(name: str) -> None:
    assert call(name, 2, 3) == 5
    assert call(name, 1.5, 1) == 2.5
    assert call(name, [1], [2, 3]) == [1, 2, 3]
    assert call(name, "ab", "c") == "abc"


@pytest.mark.parametrize("name", ["add", "sum"])
def test_add_and_sum_with_a_missing_side_keep_the_other(name: str) -> None:
    assert call(name, MISSING, 4) == 4
    assert call(name, 4, MISSING) == 4


def test_sum_is_the_same_function_as_add() -> None:
    assert get_reducer("sum").fn is get_reducer("add").fn


# --- append_messages -------------------------------------------------------------------------


def test_append_messages_appends_and_gives_ids() -> None:
    merged = call("append_messages", [("user", "hi")], [("assistant", "hello")])

    assert [(m.role, m.content) for m in merged] == [("user", "hi"), ("assistant", "hello")]
    assert all(isinstance(m, Message) and m.id for m in merged)


def test_append_messages_replaces_a_message_with_the_same_id() -> None:
    old = [Message(role="user", content="hi", id="1"), Message(role="user", content="x", id="2")]

    merged = call("append_messages", old, [Message(role="user", content="edited", id="1")])

    assert [(m.id, m.content) for m in merged] == [("1", "edited"), ("2", "x")]


def test_append_messages_with_no_old_value() -> None:
    merged = call("append_messages", MISSING, [("user", "hi")])

    assert [(m.role, m.content) for m in merged] == [("user", "hi")]


def test_append_messages_with_no_new_value_keeps_the_old_messages() -> None:
    old = [Message(role="user", content="hi", id="1")]

    assert call("append_messages", old, MISSING) == old


# --- merge -----------------------------------------------------------------------------------


def test_merge_updates_a_dict_new_keys_win() -> None:
    assert call("merge", {"a": 1, "b": 1}, {"b": 2, "c": 3}) == {"a": 1, "b": 2, "c": 3}


def test_merge_with_no_old_value_starts_from_an_empty_dict() -> None:
    assert call("merge", MISSING, {"a": 1}) == {"a": 1}


def test_merge_with_no_new_value_keeps_the_old_dict() -> None:
    assert call("merge", {"a": 1}, MISSING) == {"a": 1}


# --- union -----------------------------------------------------------------------------------


def test_union_keeps_order_and_drops_repeats() -> None:
    assert call("union", ["a", "b"], ["b", "c", "a", "d"]) == ["a", "b", "c", "d"]


def test_union_drops_repeats_inside_one_update() -> None:
    assert call("union", [], ["x", "y", "x"]) == ["x", "y"]


def test_union_takes_one_item() -> None:
    assert call("union", ["a"], "b") == ["a", "b"]
    assert call("union", ["a"], "a") == ["a"]


def test_union_with_a_missing_side() -> None:
    assert call("union", MISSING, ["a", "a"]) == ["a"]
    assert call("union", ["a"], MISSING) == ["a"]


# --- max / min -------------------------------------------------------------------------------


def test_max_keeps_the_larger() -> None:
    assert call("max", 3, 5) == 5
    assert call("max", 5, 3) == 5


def test_min_keeps_the_smaller() -> None:
    assert call("min", 3, 5) == 3
    assert call("min", 5, 3) == 3


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_and_min_with_a_missing_side_keep_the_other(name: str) -> None:
    assert call(name, MISSING, 4) == 4
    assert call(name, 4, MISSING) == 4


# --- purity ----------------------------------------------------------------------------------

PURE_CASES = [
    ("overwrite", [1], [2]),
    ("append", ["a"], ["b"]),
    ("append", ["a"], "b"),
    ("add", [1], [2]),
    ("sum", [1], [2]),
    ("append_messages", [Message(role="user", content="a")], [("assistant", "b")]),
    ("merge", {"a": {"x": 1}}, {"b": 2}),
    ("union", ["a"], ["a", "b"]),
    ("max", [1, 2], [1, 3]),
    ("min", [1, 2], [1, 3]),
]


BUILDS_A_NEW_VALUE = {"append", "add", "sum", "append_messages", "merge", "union"}


@pytest.mark.parametrize(("name", "old", "new"), PURE_CASES)
def test_built_ins_leave_their_inputs_unchanged(name: str, old: Any, new: Any) -> None:
    old_before, new_before = copy.deepcopy(old), copy.deepcopy(new)

    result = call(name, old, new)

    assert old == old_before
    assert new == new_before
    if name in BUILDS_A_NEW_VALUE:
        assert result is not old
        assert result is not new


def test_append_messages_gives_ids_to_copies_not_to_the_inputs() -> None:
    new = [Message(role="user", content="no id yet")]

    merged = call("append_messages", MISSING, new)

    assert new[0].id is None
    assert merged[0].id


# --- in-place variants -----------------------------------------------------------------------


@pytest.mark.parametrize("new", [["b", "c"], ("b", "c"), "b"])
def test_append_in_place_extends_old_and_agrees_with_append(new: Any) -> None:
    reducer = get_reducer("append")
    old = ["a"]
    expected = reducer.fn(["a"], new)

    result = reducer.in_place(old, new)

    assert result is old
    assert old == expected


def test_append_in_place_with_no_old_value_builds_a_list() -> None:
    in_place = get_reducer("append").in_place

    assert in_place(MISSING, ["a"]) == ["a"]
    old = ["a"]
    assert in_place(old, MISSING) is old
    assert old == ["a"]


def test_merge_in_place_updates_old_and_agrees_with_merge() -> None:
    reducer = get_reducer("merge")
    old = {"a": 1, "b": 1}
    expected = reducer.fn({"a": 1, "b": 1}, {"b": 2, "c": 3})

    result = reducer.in_place(old, {"b": 2, "c": 3})

    assert result is old
    assert old == expected == {"a": 1, "b": 2, "c": 3}


def test_merge_in_place_with_no_old_value_builds_a_dict() -> None:
    in_place = get_reducer("merge").in_place

    assert in_place(MISSING, {"a": 1}) == {"a": 1}
    old = {"a": 1}
    assert in_place(old, MISSING) is old
    assert old == {"a": 1}


# --- register_reducer ------------------------------------------------------------------------


def test_register_reducer_registers_and_returns_the_function() -> None:
    name = unique_name("longest")

    def longest(old: Any, new: Any) -> Any:
        return new if old is MISSING or len(new) > len(old) else old

    returned = register_reducer(name)(longest)

    assert returned is longest
    reducer = get_reducer(name)
    assert reducer is not None
    assert reducer.name == name
    assert reducer.fn is longest
    assert reducer.takes_missing is True
    assert name in registered_names()


def test_register_reducer_keeps_an_in_place_variant() -> None:
    name = unique_name("with_in_place")

    def in_place(old: Any, new: Any) -> Any:
        return old

    register_reducer(name, in_place=in_place)(lambda old, new: new)

    assert get_reducer(name).in_place is in_place


def test_register_reducer_twice_under_one_name_is_a_value_error_naming_it() -> None:
    name = unique_name("twice")
    register_reducer(name)(lambda old, new: new)

    def other(old: Any, new: Any) -> Any:
        return old

    with pytest.raises(ValueError, match=name):
        register_reducer(name)(other)
    assert get_reducer(name).fn is not other


def test_re_running_a_cell_that_registers_a_reducer_replaces_it() -> None:
    name = unique_name("rerun")
    cell = "@register_reducer(NAME)\ndef top_2(old, new):\n    return RESULT\n"
    space: dict[str, Any] = {"register_reducer": register_reducer, "NAME": name}
    exec(compile(cell.replace("RESULT", "1"), "<cell>", "exec"), space)
    first = space["top_2"]
    exec(compile(cell.replace("RESULT", "2"), "<cell>", "exec"), space)
    assert space["top_2"] is not first and first.__qualname__ == space["top_2"].__qualname__
    assert get_reducer(name).fn is space["top_2"] and call(name, 0, 0) == 2


def test_two_different_functions_under_one_name_is_an_error_naming_both_places() -> None:
    name = unique_name("clash")

    def first(old: Any, new: Any) -> Any:
        return old

    def second(old: Any, new: Any) -> Any:
        return new

    register_reducer(name)(first)
    with pytest.raises(ValueError) as caught:
        register_reducer(name)(second)
    message = str(caught.value)
    assert f"{__name__}:{first.__qualname__}" in message
    assert f"{__name__}:{second.__qualname__}" in message
    assert get_reducer(name).fn is first


def test_a_user_function_named_like_a_built_in_cannot_replace_it() -> None:
    space: dict[str, Any] = {"__name__": "nbgraph.reducers"}  # pretends to be the same place
    exec("def append(old, new):\n    return new\n", space)
    with pytest.raises(ValueError, match=r"nbgraph\.reducers:append"):
        register_reducer("append")(space["append"])
    assert get_reducer("append").fn is not space["append"]


def test_register_reducer_under_a_built_in_name_is_a_value_error() -> None:
    def fake_append(old: Any, new: Any) -> Any:
        return new

    with pytest.raises(ValueError, match="append"):
        register_reducer("append")(fake_append)
    assert get_reducer("append").fn is not fake_append


@pytest.mark.parametrize(
    "fn",
    [lambda old: old, lambda old, new, extra: new, lambda: None],
    ids=["one_argument", "three_arguments", "no_arguments"],
)
def test_register_reducer_refuses_a_function_that_cannot_take_old_and_new(fn: Any) -> None:
    name = unique_name("bad_arity")

    with pytest.raises(ValueError, match=name):
        register_reducer(name)(fn)
    assert get_reducer(name) is None


def test_register_reducer_refuses_an_empty_name() -> None:
    with pytest.raises(ValueError):
        register_reducer("")


# --- reducer_from_callable and check_reducer_callable ----------------------------------------


def test_reducer_from_callable_of_operator_add_does_not_take_missing() -> None:
    reducer = reducer_from_callable(operator.add)

    assert reducer.fn is operator.add
    assert reducer.takes_missing is False
    assert reducer.name == "add"
    assert reducer.in_place is None


def test_reducer_from_callable_of_a_lambda_is_named_lambda() -> None:
    fn = lambda old, new: old + new  # noqa: E731

    reducer = reducer_from_callable(fn)

    assert reducer.name == "<lambda>"
    assert reducer.takes_missing is False


def test_reducer_from_callable_of_a_registered_function_is_the_registered_reducer() -> None:
    name = unique_name("registered_fn")

    def keep_new(old: Any, new: Any) -> Any:
        return new

    register_reducer(name)(keep_new)

    assert reducer_from_callable(keep_new) is get_reducer(name)


def test_check_reducer_callable_accepts_two_argument_callables() -> None:
    assert check_reducer_callable(lambda old, new: new) is None
    assert check_reducer_callable(lambda *args: args[-1]) is None
    assert check_reducer_callable(lambda old, new, extra=None: new) is None
    assert check_reducer_callable(operator.add) is None


def test_check_reducer_callable_explains_what_is_wrong() -> None:
    def one(old: Any) -> Any:
        return old

    assert "two arguments" in check_reducer_callable(one)
    assert "one" in check_reducer_callable(one)
    assert "callable" in check_reducer_callable("append")


# --- functions found again in any process --------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "ref"),
    [(operator.add, "operator.add"), (operator.or_, "operator.or_"), (max, "builtins.max")],
)
def test_well_known_functions_have_a_name_any_process_finds_them_by(fn: Any, ref: str) -> None:
    assert function_ref(fn) == ref
    assert function_from_ref(ref) is fn
    assert callable_anywhere(reducer_from_callable(fn))


def test_own_functions_have_no_such_name_and_are_not_callable_anywhere() -> None:
    def concat(old: Any, new: Any) -> Any:
        return old + new

    assert function_ref(concat) is None and function_ref(lambda a, b: a) is None
    assert not callable_anywhere(reducer_from_callable(concat))
    assert function_from_ref("os.system") is None  # only the known table, never an import
    name = unique_name("own")
    register_reducer(name)(concat)
    assert not callable_anywhere(get_reducer(name))  # another process may not register it
    assert callable_anywhere(get_reducer("append")) and callable_anywhere(get_reducer("sum"))


def test_langgraph_add_messages_is_found_again_only_where_langgraph_is_loaded() -> None:
    message = pytest.importorskip("langgraph.graph.message")
    ref = function_ref(message.add_messages)
    assert ref == "langgraph.graph.message.add_messages"
    assert function_from_ref(ref) is message.add_messages
    assert not callable_anywhere(reducer_from_callable(message.add_messages))


# --- what a reducer says it is -----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "appends", "order"),
    [
        ("append", True, "matters"),
        ("add", True, "free for numbers"),
        ("sum", True, "free for numbers"),
        ("max", False, "free"),
        ("min", False, "free"),
        ("overwrite", False, "matters"),
        ("merge", False, "matters"),
        ("union", False, "matters"),
        ("append_messages", False, "matters"),  # (a message with a known id replaces it)
    ],
)
def test_each_built_in_declares_whether_it_appends_and_whether_order_matters(
    name: str, appends: bool, order: str
) -> None:
    reducer = get_reducer(name)
    assert (reducer.appends, reducer.order) == (appends, order)
    assert reducer.order_matters() is (order != "free")
    assert reducer.order_matters(numbers=True) is (order == "matters")


@pytest.mark.parametrize(
    ("fn", "appends", "order"),
    [
        (operator.add, True, "free for numbers"),
        (operator.iadd, True, "free for numbers"),
        (operator.concat, True, "matters"),
        (operator.iconcat, True, "matters"),
        (max, False, "free"),
        (min, False, "free"),
        (operator.mul, False, "matters"),
        (lambda old, new: old + new, False, "matters"),  # nobody declared it: nothing assumed
    ],
)
def test_a_bare_callable_declares_what_it_is_known_to_be_and_nothing_else(
    fn: Any, appends: bool, order: str
) -> None:
    reducer = reducer_from_callable(fn)
    assert (reducer.appends, reducer.order) == (appends, order)


def test_a_registered_reducer_declares_nothing_unless_told() -> None:
    plain, told = unique_name("plain"), unique_name("told")
    register_reducer(plain)(lambda old, new: new)
    register_reducer(told, appends=True, order="free")(lambda old, new: new)

    assert (get_reducer(plain).appends, get_reducer(plain).order) == (False, "matters")
    assert (get_reducer(told).appends, get_reducer(told).order) == (True, "free")


def test_an_unknown_order_is_a_value_error_naming_the_reducer_and_the_choices() -> None:
    name = unique_name("bad_order")
    with pytest.raises(ValueError, match=f"{name}.*'free for numbers'.*'commutes'"):
        register_reducer(name, order="commutes")(lambda old, new: new)


def test_extends_in_place_needs_both_appending_and_an_in_place_form() -> None:
    assert get_reducer("append").extends_in_place
    assert not get_reducer("add").extends_in_place  # (appends, but makes a new list)
    assert not get_reducer("merge").extends_in_place  # (in place, but does not append)
