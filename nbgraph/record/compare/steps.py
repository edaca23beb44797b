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
    """
    import pandas as pd

    rows: list[tuple] = []
    mine, theirs = _States(this), _States(other)
    before: dict[str, tuple | None] = {}  # per field: its row after the step before, or None
    for step in sorted(set(mine.tasks) | set(theirs.tasks)):
        tasks = (mine.tasks.get(step, []), theirs.tasks.get(step, []))
        if tasks[0] != tasks[1]:
            rows.append((step, "tasks", *tasks, ""))
        outcome = (mine.outcome(step), theirs.outcome(step))
        if outcome[0] != outcome[1]:
            rows.append((step, "outcome", *outcome, ""))
            before = {}  # a step that failed on one side has no state to compare
            continue
        here, there = mine.after(step), theirs.after(step)
        written = mine.written(step) | theirs.written(step)
        now: dict[str, tuple | None] = {}
        for name in [*here, *(n for n in there if n not in here)]:
            if name in before and name not in written and UNKNOWN not in written:
                now[name] = before[name]  # unchanged on both sides since the step before
            else:
                left, right = here.get(name, MISSING), there.get(name, MISSING)
                if name in before and _same_tails(name, before[name], left, right, mine, theirs):
                    now[name] = None  # equal before, and what both appended is equal
                    continue
                now[name] = _difference(name, left, right, mine, theirs)
            if now[name] is not None:
                rows.append((step, *now[name]))
        before = now
    return pd.DataFrame(rows, columns=_COLUMNS, dtype=object)


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
        self._lengths: dict[str, int] = {}  # per list field, its length after the step before
        self.grown: dict[str, int] = {}  # per field the step only appended to: its old length

    def outcome(self, step: int) -> str:
        if step not in self.index:
            return "not reached"
        return "applied" if self._read(step)[0].applied else "failed"

    def after(self, step: int) -> dict[str, Any]:
        """The values after `step` (the replay's own: read, never kept), {} if not applied."""
        if step not in self.index:
            return {}
        log, values = self._read(step)
        return values if log.applied else {}

    def written(self, step: int) -> set[str]:
        """The fields `step` may have changed: those its tasks wrote, and `UNKNOWN` when it
        reset, cleared, merged or pinned values (then every field is compared again); a
        value replaced by another object counts as written too."""
        if step not in self.index:
            self.grown = {}
            return set()
        log, values = self._read(step)
        objects = {name: id(value) for name, value in values.items()}
        self._note_growth(log, values, objects)
        if log.resets or log.cleared or log.merged or log.afters:
            self.grown, self._objects = {}, objects
            return {UNKNOWN}
        written = {name for task in log.tasks for name, _ in task.writes}
        written.update(n for n, i in objects.items() if self._objects.get(n) != i)
        written.update(n for n in self._objects if n not in objects)
        self._objects = objects
        return written

    def _note_growth(self, log: Any, values: dict[str, Any], objects: dict[str, int]) -> None:
        """`grown`: the list fields this step only appended to, in place, with their length
        before (a long list compared again costs its new items, not its length)."""
        lengths = {n: len(v) for n, v in values.items() if type(v) is list}
        if not lengths and not self._lengths:  # (no list field: nothing to note)
            self.grown = {}
            return
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
