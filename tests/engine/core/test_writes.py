"""Applying a step's writes: reducers, Overwrite, Mutation, conflicts, ephemeral, state_merger."""

import operator

import pytest

from nbgraph.engine.core.writes import (
    apply_step,
    clear_ephemeral,
    combine_mutations,
    group_writes,
    merge_unreduced,
    reduce_field,
)
from nbgraph.errors import InvalidUpdateError
from nbgraph.reducers import get_reducer, reducer_from_callable
from nbgraph.schema import FieldSpec
from nbgraph.types import MISSING, Mutation, Overwrite

APPEND = FieldSpec("log", list, get_reducer("append"), initial=list)
ADD = FieldSpec("total", int, reducer_from_callable(operator.add), initial=int)
PLAIN = FieldSpec("status", str)


class Times(Mutation):
    def __init__(self, field, by):
        self.field, self.by = field, by

    def apply(self, value):
        return value * self.by

    def combine(self, other):
        return Times(self.field, self.by * other.by)


def test_writes_group_by_field_in_write_order():
    grouped = group_writes([("a", "x", 1), ("b", "y", 2), ("c", "x", 3)])
    assert grouped == {"x": [("a", 1), ("c", 3)], "y": [("b", 2)]}


def test_reducer_folds_writes_in_order_and_may_extend_its_own_value_in_place():
    old = ["start"]
    assert reduce_field(APPEND, old, [("a", ["a"]), ("b", "b")], 1) == ["start", "a", "b"]
    assert old == ["start", "a", "b"]  # the engine's own value: changed in place, O(write)


def test_a_bare_callable_takes_the_first_write_as_is_when_there_is_no_old_value():
    spec = FieldSpec("x", object, reducer_from_callable(operator.add))
    write = [1]
    result = reduce_field(spec, MISSING, [("a", write)], 1)
    assert result == [1] and result is not write


def test_overwrite_wins_and_later_writes_in_the_step_are_ignored():
    assert reduce_field(
        APPEND, ["old"], [("a", ["a"]), ("b", Overwrite(["o"])), ("c", ["c"])], 1
    ) == ["o"]
    with pytest.raises(InvalidUpdateError, match="'a' and 'b'"):
        reduce_field(APPEND, [], [("a", Overwrite([1])), ("b", Overwrite([2]))], 1)


def test_two_plain_writes_without_reducer_conflict_but_mutations_compose():
    with pytest.raises(InvalidUpdateError, match=r"'status'.*Step 4.*'a', 'b'"):
        reduce_field(PLAIN, "x", [("a", "A"), ("b", "B")], 4)
    assert reduce_field(ADD, 3, [("a", Times("total", 2)), ("b", Times("total", 5))], 1) == 30


def test_consecutive_mutations_combine_others_stay_in_place():
    writes = [("a", Times("n", 2)), ("a", Times("n", 3)), ("b", 1), ("c", Times("n", 4))]
    folded = combine_mutations(writes)
    assert [(w, getattr(v, "by", v)) for w, v in folded] == [("a", 6), ("b", 1), ("c", 4)]


def test_apply_step_changes_values_and_reports_each_field_once():
    values = {"log": [], "total": 1}
    fields = {"log": APPEND, "total": ADD, "status": PLAIN}
    changes = apply_step(
        fields, values, [("a", "log", ["a"]), ("a", "total", 2), ("b", "log", ["b"])], 1
    )
    assert values == {"log": ["a", "b"], "total": 3}
    assert [(c.field, c.reducer, list(c.writes)) for c in changes] == [
        ("log", "append", [("a", ["a"]), ("b", ["b"])]),
        ("total", "add", [("a", 2)]),
    ]


def test_ephemeral_fields_not_written_are_cleared():
    values = {"note": "x", "keep": 1, "fresh": "y"}
    assert clear_ephemeral(("note", "fresh"), values, ("fresh",)) == ("note",)
    assert values == {"keep": 1, "fresh": "y"}


def test_state_merger_folds_parallel_plain_writes_and_must_return_a_dict():
    fields = {"status": PLAIN}
    per_task = [("a", [("status", "A")]), ("b", [("status", "B")])]
    merged = merge_unreduced(
        lambda cur, ups: {"status": "+".join(u["status"] for u in ups)},
        fields,
        {"status": "0"},
        per_task,
    )
    assert merged == [("state_merger", "status", "A+B")]
    assert merge_unreduced(lambda c, u: {}, fields, {}, per_task[:1]) == []
    with pytest.raises(InvalidUpdateError, match="state_merger"):
        merge_unreduced(lambda c, u: None, fields, {}, per_task)
