"""Tests for nbgraph.isolation: StateView copies on first read, and isolate()."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from nbgraph.isolation import Pending, StateView, isolate
from nbgraph.types import MISSING


def engine_values() -> dict[str, Any]:
    return {
        "log": ["a"],
        "meta": {"k": [1]},
        "rows": [{"id": 1}],
        "count": 3,
    }


def read_with_brackets(view: StateView) -> dict[str, Any]:
    return {key: view[key] for key in ("log", "meta", "rows")}


def read_with_get(view: StateView) -> dict[str, Any]:
    return {key: view.get(key) for key in ("log", "meta", "rows")}


def read_with_items(view: StateView) -> dict[str, Any]:
    return dict(view.items())


def read_with_values(view: StateView) -> dict[str, Any]:
    return dict(zip(("log", "meta", "rows", "count"), view.values(), strict=True))


def read_with_dict(view: StateView) -> dict[str, Any]:
    return dict(view)


def read_with_unpacking(view: StateView) -> dict[str, Any]:
    return {**view}


def read_with_copy(view: StateView) -> dict[str, Any]:
    return view.copy()


def read_with_copy_module(view: StateView) -> dict[str, Any]:
    return copy.copy(view)


def read_with_or(view: StateView) -> dict[str, Any]:
    return view | {}


def read_with_pop(view: StateView) -> dict[str, Any]:
    return {key: view.pop(key) for key in ("log", "meta", "rows")}


def read_with_setdefault(view: StateView) -> dict[str, Any]:
    return {key: view.setdefault(key, None) for key in ("log", "meta", "rows")}


READERS: list[Callable[[StateView], dict[str, Any]]] = [
    read_with_brackets,
    read_with_get,
    read_with_items,
    read_with_values,
    read_with_dict,
    read_with_unpacking,
    read_with_copy,
    read_with_copy_module,
    read_with_or,
    read_with_pop,
    read_with_setdefault,
]


def mutate(read: dict[str, Any]) -> None:
    """What a careless node does to the values it was given."""
    read["log"].append("b")
    read["meta"]["k"].append(2)
    read["meta"]["new"] = True
    read["rows"][0]["id"] = 99


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__)
def test_mutating_what_was_read_leaves_the_engine_values_untouched(
    reader: Callable[[StateView], dict[str, Any]],
) -> None:
    engine = engine_values()
    view = StateView(engine)

    read = reader(view)
    assert read["log"] == ["a"]
    mutate(read)

    assert engine == engine_values()


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__)
def test_what_was_read_is_equal_to_the_engine_values(
    reader: Callable[[StateView], dict[str, Any]],
) -> None:
    engine = engine_values()

    read = reader(StateView(engine))

    for key, value in read.items():
        assert value == engine[key]


def test_a_second_read_sees_the_nodes_own_change() -> None:
    engine = engine_values()
    view = StateView(engine)

    view["log"].append("b")

    assert view["log"] == ["a", "b"]
    assert view.get("log") == ["a", "b"]
    assert engine["log"] == ["a"]


def test_a_key_that_is_not_read_is_not_copied() -> None:
    engine = engine_values()

    view = StateView(engine)

    assert dict.__getitem__(view, "log") is engine["log"]


def test_get_of_a_missing_key_gives_the_default() -> None:
    view = StateView(engine_values())

    assert view.get("nope") is None
    assert view.get("nope", 7) == 7


def test_pop_of_a_missing_key() -> None:
    view = StateView(engine_values())

    assert view.pop("nope", "default") == "default"
    with pytest.raises(KeyError):
        view.pop("nope")


def test_popitem_copies_too() -> None:
    engine = {"log": ["a"]}
    view = StateView(engine)

    key, value = view.popitem()
    value.append("b")

    assert key == "log"
    assert engine == {"log": ["a"]}
    assert "log" not in view


def test_deepcopy_of_the_view_is_a_plain_dict_of_copies() -> None:
    engine = engine_values()

    copied = copy.deepcopy(StateView(engine))
    mutate(copied)

    assert type(copied) is dict
    assert engine == engine_values()


def test_keys_length_membership_and_iteration_are_the_states() -> None:
    engine = engine_values()
    view = StateView(engine)

    assert list(view) == list(engine)
    assert list(view.keys()) == list(engine)
    assert len(view) == len(engine)
    assert "log" in view
    assert "nope" not in view


def test_view_is_a_dict() -> None:
    assert isinstance(StateView(engine_values()), dict)


def test_json_dumps_of_the_view_is_that_of_the_values() -> None:
    engine = engine_values()

    assert json.dumps(StateView(engine)) == json.dumps(engine)
    assert json.dumps(StateView(engine), indent=2) == json.dumps(engine, indent=2)


def test_view_equals_a_dict_of_its_values() -> None:
    engine = engine_values()
    view = StateView(engine)

    assert view == engine_values()
    assert engine_values() == view
    assert view != {**engine_values(), "count": 4}
    assert (view != engine_values()) is False


def test_view_repr_shows_the_values() -> None:
    engine = engine_values()

    shown = repr(StateView(engine))

    assert shown == repr(engine)
    assert "'log': ['a']" in shown


def test_view_is_not_hashable() -> None:
    with pytest.raises(TypeError):
        hash(StateView({}))


# --- writing to the view ---------------------------------------------------------------------


def test_setting_a_key_changes_only_the_view() -> None:
    engine = engine_values()
    view = StateView(engine)

    view["log"] = ["replaced"]
    view["extra"] = 1

    assert view["log"] == ["replaced"]
    assert view["extra"] == 1
    assert engine == engine_values()


def test_deleting_a_key_changes_only_the_view() -> None:
    engine = engine_values()
    view = StateView(engine)

    del view["log"]
    view.pop("meta")
    view.clear()

    assert len(view) == 0
    assert engine == engine_values()


def test_update_and_setdefault_change_only_the_view() -> None:
    engine = engine_values()
    view = StateView(engine)

    view.update({"count": 10, "extra": 1})
    view.setdefault("other", [])

    assert view["count"] == 10
    assert view["other"] == []
    assert engine == engine_values()


def test_a_value_set_on_the_view_is_returned_as_it_is() -> None:
    mine = ["mine"]
    view = StateView({})

    view["mine"] = mine

    assert view["mine"] is mine


def test_pending_value_is_computed_once_on_first_read() -> None:
    calls = []
    view = StateView({"log": ["a"]})

    class Fresh(Pending):
        def compute(self) -> list[str]:
            calls.append(1)
            return ["fresh"]

    view.set_pending("log", Fresh())

    assert calls == []
    assert view["log"] == ["fresh"]
    assert view["log"] == ["fresh"]
    assert calls == [1]


# --- isolate ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "atom",
    [3, 2.5, "text", True, None, b"bytes", 1j, range(3), MISSING, (1, "a", None)],
    ids=repr,
)
def test_isolate_returns_atoms_as_they_are(atom: Any) -> None:
    assert isolate(atom) is atom


@pytest.mark.parametrize(
    "value",
    [
        [1, 2, 3],
        {"a": 1},
        [[1], [2]],
        {"a": {"b": [1]}},
        [{"id": 1}],
        ([1], [2]),
        {1, 2},
    ],
    ids=repr,
)
def test_isolate_copies_containers(value: Any) -> None:
    copied = isolate(value)

    assert copied == value
    assert copied is not value
    assert type(copied) is type(value)


def test_isolate_copies_nested_structures_all_the_way_down() -> None:
    value = {"outer": {"inner": [1, {"deep": [2]}]}, "rows": [[3]]}
    expected = copy.deepcopy(value)

    copied = isolate(value)
    copied["outer"]["inner"][1]["deep"].append(3)
    copied["outer"]["inner"].append(4)
    copied["rows"][0].append(5)

    assert value == expected


def test_isolate_of_a_tuple_holding_a_list_copies_the_list() -> None:
    value = ([1], "a")

    copied = isolate(value)
    copied[0].append(2)

    assert value == ([1], "a")


def test_isolate_copies_objects() -> None:
    @dataclasses.dataclass
    class Box:
        items: list[int]

    box = Box([1])

    copied = isolate(box)
    copied.items.append(2)

    assert copied is not box
    assert box.items == [1]


def test_isolate_keeps_shared_references_shared_inside_the_copy() -> None:
    shared = [1]
    value = [shared, shared]

    copied = isolate(value)
    copied[0].append(2)

    assert copied[1] == [1, 2]
    assert shared == [1]
