"""Comparing two superstep runs step by step: what `Run.compare` does when neither run used
branch lineages (then a step is a moment both runs share; see `node_compare` otherwise)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbgraph.engine.facts import field_spec
from nbgraph.record.compare.messages import IDS_ONLY, compare_values
from nbgraph.record.effects import TableValues, grows_in_place
from nbgraph.types import MISSING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["compare_by_step"]

_COLUMNS = ["step", "what", "this", "other", "note"]
UNKNOWN = "\0every field"  # (no field's name: `_States.written` cannot tell which changed)


def compare_by_step(this: Any, other: Any) -> pd.DataFrame:
    """Rows where the tasks of a step, its outcome, or a field after it differ.

    Messages are compared by what they say; a field whose messages differ only in their ids
    gets a row with the ids as this and other and `note` `IDS_ONLY`; other rows' `note` is "".
    Each run is replayed once, in step order, and a field neither run wrote in a step is not
    compared again (it differs as it did after the step before): the cost is linear in steps.
    A list is a read-only `ListPrefix` sharing its items with the rows before it, as in
    `Run.effects`.

    Steps pair off in order. A step one run has and the other has not made by
    `update_state` (a fork's edit: "update" tasks) pairs with the other run's step before
    it, the state the edit changed (a row `what` `"update_state"` says as which node, "as
    a", or "no edit"), and the steps after it pair with the other run's one number lower.
    When steps of different numbers pair, the table has an `other step` column after `step`
    (the other run's).
    """
    import pandas as pd

    rows: list[tuple] = []
    mine, theirs = _States(this), _States(other)
    before: dict[str, tuple | None] = {}  # per field: its row after the step before, or None
    pairs = _pairs(mine, theirs)
    for left, right in pairs:
        step = left if left is not None else right
        rows.extend((step, right, *row) for row in _step_rows(left, right, mine, theirs, before))
    frame = pd.DataFrame(rows, columns=["step", "other step", *_COLUMNS[1:]], dtype=object)
    if all(left == right or None in (left, right) for left, right in pairs):
        frame = frame.drop(columns="other step")
    return frame


def _step_rows(
    left: int | None, right: int | None, mine: _States, theirs: _States, before: dict
) -> list[tuple]:
    """(what, this, other, note) rows of one pair of steps (None: a step that run has
    not); `before` is each field's row after the pair before, updated in place."""
    rows: list[tuple] = []
    edits = (mine.edit(left), theirs.edit(right))
    if edits[0] != edits[1] and None not in (left, right):  # a fork's edit on one side
        rows.append(("update_state", edits[0] or "no edit", edits[1] or "no edit", ""))
    else:
        tasks = (mine.tasks.get(left, []), theirs.tasks.get(right, []))
        if tasks[0] != tasks[1]:
            rows.append(("tasks", *tasks, ""))
    outcome = (mine.outcome(left), theirs.outcome(right))
    if outcome[0] != outcome[1]:
        rows.append(("outcome", *outcome, ""))
        before.clear()  # a step that failed on one side has no state to compare
        return rows
    here, there = mine.after(left), theirs.after(right)
    written = mine.written(left) | theirs.written(right)
    now: dict[str, tuple | None] = {}
    also = [] if there.keys() <= here.keys() else [n for n in there if n not in here]
    for name in [*here, *also]:
        if name in before and name not in written and UNKNOWN not in written:
            now[name] = before[name]  # unchanged on both sides since the step before
        else:
            left_value, right_value = here.get(name, MISSING), there.get(name, MISSING)
            if name in before and _same_tails(
                name, before[name], left_value, right_value, mine, theirs
            ):
                now[name] = None  # equal before, and what both appended is equal
                continue
            now[name] = _difference(name, left_value, right_value, mine, theirs)
        if now[name] is not None:
            rows.append(now[name])
    before.clear()
    before.update(now)
    return rows


def _pairs(mine: _States, theirs: _States) -> list[tuple[int | None, int | None]]:
    """The runs' steps paired by number, less the `update_state` steps before them on
    each side (`_States.keys`); an edit pairs with the other side's edit at the same
    place, else with its step before (which then pairs twice)."""
    keys: dict[tuple[int, bool], list[int | None]] = {}
    for side, states in enumerate((mine, theirs)):
        for step, key in states.keys().items():
            keys.setdefault(key, [None, None])[side] = step
    pairs: list[tuple[int | None, int | None]] = []
    for (key, edit), (left, right) in sorted(keys.items()):
        if edit:
            plain = keys.get((key, False), [None, None])
            left = left if left is not None else plain[0]
            right = right if right is not None else plain[1]
        pairs.append((left, right))
    return pairs


def _same_tails(
    name: str, row: tuple | None, left: Any, right: Any, mine: _States, theirs: _States
) -> bool:
    """Whether a list field equal after the step before (`row` None), to which both runs
    only appended in place this step, from the same length, appended equal items."""
    start = mine.grown.get(name)
    if row is not None or start is None or theirs.grown.get(name) != start:
        return False
    return compare_values(left[start:], right[start:]) is None


def _difference(name: str, left: Any, right: Any, mine: _States, theirs: _States) -> tuple | None:
    """(what, this, other, note) for a field that differs after a step, or None."""
    difference = compare_values(left, right)
    if difference is None:
        return None
    if difference.said or difference.ids is None:
        return (name, mine.cells.cell(name, left), theirs.cells.cell(name, right), "")
    return (name, *difference.ids, IDS_ONLY)


class _States:
    """One run read forward, step by step: its tasks per step, its outcome, the values after
    each step (from one replay: `Timeline.walk`), and the fields each step wrote."""

    def __init__(self, run: Any) -> None:
        self.index = run.timeline.index
        self.tasks = {s.step: [t.node for t in s.tasks if s.step > 0] for s in run.log.steps}
        self.fields = run.timeline.graph.fields  # (as the replay folds them)
        self.cells = TableValues()  # a kept value: a list shares its items with earlier rows
        self._walk = run.timeline.walk()
        self._at: tuple[Any, dict[str, Any]] | None = None
        self._objects: dict[str, int] = {}  # per field, the id of its value after the step before
        self._written_at: int | None = None
        self._lengths: dict[str, int] = {}  # per list field, its length after the step before
        self.grown: dict[str, int] = {}  # per field the step only appended to: its old length
        self._edits = {
            s.step: ", ".join(sorted({f"as {t.node}" for t in s.tasks}))
            for s in run.log.steps
            if s.step > 0
            and s.tasks
            and s.tasks[0].kind == "update"
            and all(t.kind == "update" for t in s.tasks)
        }

    def keys(self) -> dict[int, tuple[int, bool]]:
        """Each step's place to pair at: (its number less the edits up to it, whether it
        is an edit), so an edit takes the place of the step before it."""
        edits, keys = 0, {}
        for step in self.tasks:
            edits += step in self._edits
            keys[step] = (step - edits, step in self._edits)
        return keys

    def edit(self, step: int | None) -> str | None:
        """For a step `update_state` made, as which node(s) ("as a"); else None."""
        return None if step is None else self._edits.get(step)

    def outcome(self, step: int) -> str:
        if step is None or step not in self.index:
            return "not reached"
        return "applied" if self._read(step)[0].applied else "failed"

    def after(self, step: int) -> dict[str, Any]:
        """The values after `step` (the replay's own: read, never kept), {} if not applied."""
        if step is None or step not in self.index:
            return {}
        log, values = self._read(step)
        return values if log.applied else {}

    def written(self, step: int) -> set[str]:
        """The fields `step` may have changed: those its tasks wrote, and `UNKNOWN` when it
        reset, cleared, merged or pinned values (then every field is compared again); a
        value replaced by another object counts as written too. A step asked again (paired
        twice) wrote nothing new."""
        if step is None or step not in self.index or step == self._written_at:
            self.grown = {}
            return set()
        self._written_at = step
        log, values = self._read(step)
        objects = {name: id(value) for name, value in values.items()}
        self._note_growth(log, values, objects)
        if log.resets or log.cleared or log.merged or log.afters:
            self.grown, self._objects = {}, objects
            return {UNKNOWN}
        written = {name for task in log.tasks for name, _ in task.writes}
        previous, self._objects = self._objects, objects
        if objects != previous:  # values replaced by other objects (or gone) count too
            written.update([n for n, i in objects.items() if previous.get(n) != i])
            written.update([n for n in previous if n not in objects])
        return written

    def _note_growth(self, log: Any, values: dict[str, Any], objects: dict[str, int]) -> None:
        """`grown`: the list fields this step only appended to, in place, with their length
        before (a long list compared again costs its new items, not its length)."""
        if not self._lengths and list not in set(map(type, values.values())):
            self.grown = {}  # (no list field: nothing to note)
            return
        lengths = {n: len(v) for n, v in values.items() if type(v) is list}
        writes: dict[str, list] = {}
        for task in log.tasks:
            for name, value in task.writes:
                writes.setdefault(name, []).append((task.node, value))
        grown, fields = {}, self.fields
        for name, field_writes in writes.items():
            value, length = values.get(name), self._lengths.get(name)
            if (
                length is not None
                and type(value) is list
                and len(value) >= length
                and objects[name] == self._objects.get(name)
                and log.applied
                and grows_in_place(field_spec(fields, name), field_writes)
            ):
                grown[name] = length
        self.grown, self._lengths = grown, lengths

    def _read(self, step: int) -> tuple[Any, dict[str, Any]]:
        while self._at is None or self._at[0].step != step:
            self._at = next(self._walk)
        return self._at
