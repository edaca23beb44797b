"""`Run.compare` of many pairs of runs (tests/support/compare_cases.py: alike, parting at one
step, of other lengths, failing, forked, with messages, resets, fan-outs): its rows are those
of comparing each pair of steps' whole states, and its shortcut for steps both runs wrote
alike (nbgraph/record/compare/steps.py `_rows_in_step`) changes nothing in the table."""

from __future__ import annotations

from typing import Any

import pytest

from nbgraph.record.compare import steps as step_compare
from nbgraph.record.compare.messages import IDS_ONLY, compare_values
from nbgraph.types import MISSING
from tests.support.compare_cases import compare_cases

CASES = compare_cases()
BY_STEP = {
    name: pair
    for name, pair in CASES.items()
    if "branches" not in (pair[0].log.semantics, pair[1].log.semantics)
}


def edits(run: Any) -> dict[int, str]:
    """The steps `update_state` made, as which nodes ("as a")."""
    return {
        s.step: ", ".join(sorted({f"as {t.node}" for t in s.tasks}))
        for s in run.log.steps
        if s.step > 0 and s.tasks and all(t.kind == "update" for t in s.tasks)
    }


def paired(this: Any, other: Any) -> list[tuple[Any, Any]]:
    """The documented pairing: steps by number less the `update_state` steps up to them;
    an edit one run made and the other has not pairs with the other's step at its place
    (the step its own step before pairs with)."""

    def places(run):
        made, count, found = edits(run), 0, {}
        for step in run.timeline.index:
            count += step in made
            found[(step - count, step in made)] = step
        return found

    mine, theirs = places(this), places(other)
    pairs = []
    for place, edit in sorted(mine.keys() | theirs.keys()):
        left, right = mine.get((place, edit)), theirs.get((place, edit))
        if edit:
            left = left if left is not None else mine.get((place, False))
            right = right if right is not None else theirs.get((place, False))
        pairs.append((left, right))
    return pairs


def whole_states(this: Any, other: Any) -> list[tuple]:
    """The rows as comparing each pair of steps' whole states gives them (quadratic)."""

    def tasks(run, step):
        return [t.node for t in run.timeline.step_log(step).tasks] if step and step > 0 else []

    def outcome(run, step):
        if step is None:
            return "not reached"
        return "applied" if run.timeline.step_log(step).applied else "failed"

    def after(run, step):
        return run.timeline.after(step) if outcome(run, step) == "applied" else {}

    rows, mine, theirs = [], edits(this), edits(other)
    for left, right in paired(this, other):
        step = left if left is not None else right
        made = (mine.get(left), theirs.get(right))
        if made[0] != made[1] and None not in (left, right):
            rows.append((step, right, "update_state", made[0] or "no edit", made[1] or "no edit"))
        elif tasks(this, left) != tasks(other, right):
            rows.append((step, right, "tasks", tasks(this, left), tasks(other, right)))
        if outcome(this, left) != outcome(other, right):
            rows.append((step, right, "outcome", outcome(this, left), outcome(other, right)))
            continue
        here, there = after(this, left), after(other, right)
        for name in [*here, *(n for n in there if n not in here)]:
            x, y = here.get(name, MISSING), there.get(name, MISSING)
            difference = compare_values(x, y)
            if difference is not None and (difference.said or difference.ids is None):
                rows.append((step, right, name, x, y, ""))
            elif difference is not None:
                rows.append((step, right, name, *difference.ids, IDS_ONLY))
    return [row if len(row) == 6 else (*row, "") for row in rows]


def table_rows(frame: Any) -> list[tuple]:
    """The frame's rows as tuples, a `ListPrefix` cell as the list it shows."""
    return [
        tuple(list(cell) if type(cell).__name__ == "ListPrefix" else cell for cell in row)
        for row in frame.itertuples(index=False)
    ]


@pytest.mark.parametrize("name", list(BY_STEP))
def test_the_rows_are_those_of_comparing_whole_states(name: str) -> None:
    for this, other in (BY_STEP[name], BY_STEP[name][::-1]):
        table, expected = this.compare(other), whole_states(this, other)
        apart = any(a != b and None not in (a, b) for a, b in paired(this, other))
        columns = ["step", "other step", "what", "this", "other", "note"]
        assert list(table.columns) == (columns if apart else columns[:1] + columns[2:])
        if not apart:  # (the other run's step is this one's: no column for it)
            expected = [(row[0], *row[2:]) for row in expected]
        assert table_rows(table) == expected
        assert set(map(str, table.dtypes)) == {"object"}


@pytest.mark.parametrize("name", list(BY_STEP))
def test_the_shortcut_for_steps_written_alike_changes_nothing(name, monkeypatch) -> None:
    """The table with the shortcut (`_rows_in_step`) and without it (every pair through
    `_step_rows`): the same rows, the same text and HTML."""
    for this, other in (BY_STEP[name], BY_STEP[name][::-1]):
        fast = this.compare(other)
        with monkeypatch.context() as patched:
            patched.setattr(step_compare, "_in_step", lambda *_: False)
            slow = this.compare(other)
        assert fast.equals(slow) and list(fast.columns) == list(slow.columns)
        assert repr(fast) == repr(slow) and fast.to_html() == slow.to_html()
        assert [type(v) for v in fast.to_numpy().ravel()] == [
            type(v) for v in slow.to_numpy().ravel()
        ]


def count_pairs_read_the_long_way(monkeypatch, this: Any, other: Any) -> int:
    calls = []
    step_rows = step_compare._step_rows

    def counted(*args: Any) -> Any:
        calls.append(args[0])
        return step_rows(*args)

    with monkeypatch.context() as patched:
        patched.setattr(step_compare, "_step_rows", counted)
        this.compare(other)
    return len(calls)


def test_the_shortcut_is_taken_while_the_states_are_equal(monkeypatch) -> None:
    """Only the input step, and the steps from where runs part to where they are equal
    again, go the long way; the rest are written alike (plain values, fields without
    reducer or appending to a list the same way) and skip it."""
    for name in ("flat, alike", "loop, alike", "loop with append, alike"):
        assert count_pairs_read_the_long_way(monkeypatch, *CASES[name]) == 1
    this, other = CASES["overwrites, apart at one step"]
    assert count_pairs_read_the_long_way(monkeypatch, this, other) == 3  # input, 13 and 14
    this, other = CASES["loop with append, parting"]  # (its list differs from step 20 on)
    assert count_pairs_read_the_long_way(monkeypatch, this, other) == 1 + 21
    this, other = CASES["loop: operator.add vs append"]  # (two ways to grow: the long way)
    assert count_pairs_read_the_long_way(monkeypatch, this, other) == len(this.timeline.index)


def test_a_list_that_differs_for_good_is_compared_once(monkeypatch) -> None:
    """Once two lists that both runs only append to differ in an item (not just in message
    ids), the rows after show them without comparing them again: linear, not quadratic."""
    this, other = CASES["loop with append, parting"]
    compared: list[str] = []
    difference = step_compare._difference

    def counted(name: str, *args: Any) -> Any:
        compared.append(name)
        return difference(name, *args)

    monkeypatch.setattr(step_compare, "_difference", counted)
    table = this.compare(other)
    assert compared.count("log") == 1 and list(table[table.what == "log"].step) == list(
        range(20, 41)
    )
    this, other = CASES["messages appended: metadata, then ids"]  # (ids only: not for good)
    compared.clear()
    this.compare(other)
    assert compared.count("chat") == 6
