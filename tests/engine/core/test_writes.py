"""Applying a step's writes: reducers, Overwrite, Mutation, conflicts, ephemeral, state_merger."""

import operator

import pytest

from nbgraph.engine.core.pinned import Grown
from nbgraph.engine.core.writes import (
    apply_step,
    apply_writes,
    clear_ephemeral,
    combine_mutations,
    group_task_writes,
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


SUM = FieldSpec("sum", int, get_reducer("sum"))  # (its function takes a MISSING old value)
FIELDS = {"log": APPEND, "total": ADD, "status": PLAIN, "sum": SUM}
START_VALUES = {"log": ["start"], "total": 1, "status": "s"}


@pytest.mark.parametrize(
    "writes",
    [
        [("status", "A")],
        [("status", "A"), ("log", ["a"])],
        [("log", ["a"]), ("total", 2), ("sum", 3), ("other", {"k": 1})],
        [("total", 2), ("log", "one"), ("log", ["two"]), ("status", None)],
        [("log", Overwrite(["o"])), ("total", {"__overwrite__": 9}), ("sum", (1, 2))],
        [("total", Times("total", 3)), ("total", Times("total", 2)), ("status", b"b")],
        [("status", "A"), ("log", ["a"]), ("status", "B")],  # a conflict
        [("log", Overwrite([1])), ("log", Overwrite([2]))],  # a conflict
        [],
    ],
)
def test_a_tasks_writes_applied_alone_are_its_writes_grouped(writes):
    """`apply_writes`' lone-task form (no lists made for fields written once) changes the
    values exactly as the grouped form and `reduce_field` field by field do."""
    alone, grouped, by_field = ({k: list(v) if type(v) is list else v
                                 for k, v in START_VALUES.items()} for _ in range(3))  # fmt: skip
    outcomes = []
    for values, apply in [
        (alone, lambda v: apply_writes(FIELDS, v, writes, 4, "node")),
        (grouped, lambda v: apply_writes(FIELDS, v, group_task_writes({}, "node", writes), 4)),
    ]:
        try:
            outcomes.append(apply(values))
        except InvalidUpdateError as error:
            outcomes.append(str(error))
    assert outcomes[0] == outcomes[1]
    assert list(alone.items()) == list(grouped.items())  # (new fields in first-write order)
    if isinstance(outcomes[0], str):
        assert alone == START_VALUES  # refused before any field changed
        return
    assert outcomes[0] == tuple(dict(writes))
    for name, field_writes in group_task_writes({}, "node", writes).items():
        spec = FIELDS.get(name) or FieldSpec(name)
        by_field[name] = reduce_field(spec, by_field.get(name, MISSING), field_writes, 4)
    assert alone == by_field


def test_pinned_values_are_taken_as_they_are_in_write_order_never_conflicting():
    """A run file's or checkpoint's values after a step (`pinned`) stand for their fields'
    writes: a whole value, or what grew the value before; the others fold as usual."""
    values = {"log": ["start"], "total": 1}
    pinned = {"status": "kept", "log": Grown("extend", ["a", "b"])}
    writes = [("x", "status", "A"), ("y", "total", 2), ("x", "log", "a"), ("y", "status", "B")]
    written = apply_writes(FIELDS, values, group_writes(writes), 3, pinned=pinned)
    assert written == ("status", "total", "log")
    assert list(values.items()) == [("log", ["start", "a", "b"]), ("total", 3), ("status", "kept")]


def test_a_users_reducer_is_called_alike_live_restored_replayed_and_updated():
    """The run, a restored checkpoint, the history, the record's effects and states, and
    `update_state` all fold writes by the one rule: the user's reducer sees the live run's
    `(old, new)` pairs (the record's one replay: all of them, in order), and they agree."""
    from nbgraph import START, MemorySaver, StateGraph

    calls = []

    def total(old, new):  # the user's own reducer: counted, called (never in place)
        calls.append((old, new))
        return old + new

    app = (
        StateGraph(dict, reducers={"total": total})
        .add_node("a", lambda s: {"total": 1, "status": "a"})
        .add_node("b", lambda s: {"total": 10})
        .add_node("c", lambda s: {"total": 100, "status": "c"})
        .add_node("d", lambda s: {"total": 1000})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("a", "c")
        .add_edge(["b", "c"], "d")
        .compile(checkpointer=MemorySaver())
    )
    config = {"configurable": {"thread_id": "t"}}
    assert app.invoke({"total": 0, "status": ""}, config)["total"] == 1111
    live = calls[:]
    assert (1, 10) in live and (11, 100) in live  # the parallel step, in write order
    calls.clear()
    run = app.last_run
    totals = [row.after for row in run.effect_list if row.field == "total"]
    assert calls == live and totals == [0, 1, 111, 1111]
    calls.clear()
    assert [run.state_at(step)["total"] for step in (0, 1, 2, 3)] == totals
    history = {s.metadata["step"]: s.values.get("total") for s in app.get_state_history(config)}
    assert app.get_state(config).values["total"] == 1111
    assert [history[step] for step in (0, 1, 2, 3)] == totals
    assert set(calls) <= set(live)
    calls.clear()
    app.update_state(config, {"total": 5}, as_node="d")
    assert [pair for pair in calls if pair not in live] == [(1111, 5)]
    assert app.get_state(config).values["total"] == 1116
