"""Values pinned for fields whose reducer another process cannot call (engine/pinned.py)."""

import pytest

from nbgraph.engine.core.pinned import (
    Grown,
    growth,
    kept_copy,
    pinned_data,
    pinned_from_data,
    pinned_map,
    value_after,
)
from nbgraph.types import MISSING


@pytest.mark.parametrize(
    ("before", "after", "grown"),
    [
        ([1, 2], [1, 2, 3, 4], Grown("extend", [3, 4])),
        ((1,), (1, 2), Grown("extend", (2,))),
        ("ab", "abc", Grown("extend", "c")),
        ({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 4}, Grown("update", {"b": 3, "c": 4})),
        ({1}, {1, 2}, Grown("union", {2})),
        ([], [], Grown("extend", [])),
    ],
)
def test_a_value_that_only_grew_is_what_it_added_and_grows_back(before, after, grown):
    assert growth(before, after) == grown
    assert value_after(grown, before) == after


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ([1, 2], [2, 1, 3]),  # reordered
        ([1, 2], [1]),  # shrank
        ({"a": 1}, {"b": 1}),  # lost a key
        ({1, 2}, {1, 3}),
        ([1], (1, 2)),  # another type
        (MISSING, [1]),
        (3, 5),  # not a container
    ],
)
def test_a_value_that_did_not_only_grow_has_no_growth(before, after):
    assert growth(before, after) is None


def test_items_whose_equality_raises_keep_the_value_whole():
    class Ambiguous:
        def __eq__(self, other):
            raise ValueError("the truth value is ambiguous")

    assert growth([Ambiguous()], [Ambiguous(), 1]) is None
    assert growth({"a": Ambiguous()}, {"a": Ambiguous()}) is not None  # changed: in the part


def test_growing_never_changes_the_old_value():
    old = [1]
    assert value_after(Grown("extend", [2]), old) == [1, 2] and old == [1]
    assert kept_copy(old) == old and kept_copy(old) is not old


def test_growing_a_missing_value_is_a_clear_error():
    with pytest.raises(ValueError, match="no"):
        value_after(Grown("extend", [1]), MISSING)


def test_pinned_values_round_trip_as_plain_data_and_bad_data_is_named():
    assert pinned_from_data(pinned_data(Grown("extend", [1])), "x") == Grown("extend", [1])
    assert pinned_from_data(pinned_data({"a": 1}), "x") == {"a": 1}
    with pytest.raises(ValueError, match="checkpoint 7, field 'f'"):
        pinned_map({"f": ["shrink", 1]}, "checkpoint 7")
    with pytest.raises(ValueError, match="checkpoint 7: kept values should be a mapping"):
        pinned_map([1], "checkpoint 7")
    assert pinned_map(None, "x") == {}
