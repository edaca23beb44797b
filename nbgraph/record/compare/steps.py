"""Comparing two superstep runs step by step: what `Run.compare` does when neither run used
branch lineages (then a step is a moment both runs share; see `node_compare` otherwise)."""

from __future__ import annotations

from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

from nbgraph.engine.facts import PLAIN_WRITES, field_spec
from nbgraph.primitives import MISSING
from nbgraph.record.compare.messages import IDS_ONLY, compare_values, differs_for_good
from nbgraph.record.effects import TableValues, grows_in_place, same
from nbgraph.record.replaying import ExtendsLists

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["compare_by_step"]

_COLUMNS = ["step", "what", "this", "other", "note"]
UNKNOWN = "\0every field"  # (no field's name: `_States.written` cannot tell which changed)
_first, _second = itemgetter(0), itemgetter(1)
_tasks, _kind = attrgetter("tasks"), attrgetter("kind")
_node = attrgetter("node")
_GONE = object()  # (a field no value was read for)


def compare_by_step(this: Any, other: Any) -> pd.DataFrame:
    """Rows where the tasks of a step, its outcome, or a field after it differ.

    Messages are compared by what they say; a field whose messages differ only in their ids
    gets a row with the ids as this and other and `note` `IDS_ONLY`; other rows' `note` is "".
    Each run is replayed once, in step order, and a field neither run wrote in a step is not
    compared again (it differs as it did after the step before): the cost is linear in steps.
    While the states are equal, a pair of steps that wrote the same plain values, set or
    appended to a list the same way, is passed at the cost of its replay (`_rows_in_step`);
    two lists both runs only append to, once they differ in an item (`differs_for_good`),
    are shown in the rows after without being compared again.
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

    mine, theirs = _States(this), _States(other)
    pairs = _pairs(mine, theirs)
    if _in_step(mine, theirs, pairs):
        rows = _rows_in_step(mine, theirs, [step for step, _ in pairs])
    else:
        rows = _rows(mine, theirs, pairs)
    frame = pd.DataFrame(rows, columns=["step", "other step", *_COLUMNS[1:]], dtype=object)
    if not (mine.edits or theirs.edits) or all(
        left == right or None in (left, right) for left, right in pairs
    ):
        frame = frame.drop(columns="other step")
    return frame


def _rows(mine: _States, theirs: _States, pairs: list[tuple[int | None, int | None]]) -> list:
    """The table's rows (step, other step, what, this, other, note), pair by pair."""
    rows: list[tuple] = []
    before: dict[str, tuple | None] = {}  # per field: its row after the step before, or None
    for left, right in pairs:
        found, before = _step_rows(left, right, mine, theirs, before)
        if found:
            step = left if left is not None else right
            rows.extend([(step, right, *row) for row in found])
    return rows


def _in_step(mine: _States, theirs: _States, pairs: list[tuple[int | None, int | None]]) -> bool:
    """Whether the runs have the same steps, in order, none of them an edit: each pairs
    with its own number, and both replays can be read side by side."""
    steps = list(mine.index)
    return not (mine.edits or theirs.edits) and pairs == list(zip(steps, steps, strict=True))


def _rows_in_step(mine: _States, theirs: _States, steps: list[int]) -> list[tuple]:
    """`_rows` of runs whose steps pair in order (`_in_step`), with a shortcut: while the
    states are equal (the pair before left no row for any field), a pair of steps that
    each ran one task of one node and wrote the same plain values (`==`) to the same
    fields, each without reducer (it takes the value written) or one that appends the
    same way on both sides (`appends`), leaves the states equal and makes no row; other
    pairs go through `_step_rows`."""
    rows: list[tuple] = []
    before: dict[str, tuple | None] = {}  # per field: its row after the step before, or None
    alike = False  # the states after the step before are equal, field by field
    special = None  # (fields a write does not simply set or append to: none alike if None)
    if mine.fields.keys() == theirs.fields.keys():
        both = {name for name, fold in mine.appends.items() if theirs.appends.get(name) is fold}
        special = (mine.special | theirs.special) - both
    walk, other_walk = mine.walk, theirs.walk
    for step in steps:
        at, seen = next(walk), next(other_walk)
        if alike:
            log, other_log = at[0], seen[0]
            task, other_task = log.tasks, other_log.tasks
            if (
                len(task) == 1 == len(other_task)
                and log.applied
                and other_log.applied
                and not (log.resets or log.cleared or log.merged or log.afters)
                and not (other_log.resets or other_log.cleared or other_log.merged)
                and not other_log.afters
                and _same_plain_writes(task[0], other_task[0], special)
            ):
                continue  # (the shortcut)
        mine.at, theirs.at = at, seen
        found, before = _step_rows(step, step, mine, theirs, before)
        if found:
            rows.extend([(step, step, *row) for row in found])
        alike = special is not None and bool(before) and not any(before.values())
    return rows


def _same_plain_writes(task: Any, other: Any, special: frozenset[str]) -> bool:
    """Whether two tasks of one node wrote the same plain values (`PLAIN_WRITES`, compared with
    `==`) to the same fields, none of them `special` (with another reducer, ephemeral...)."""
    writes = task.writes
    try:
        return (
            task.node == other.node
            and task.kind == other.kind
            and special.isdisjoint(map(_first, writes))
            and PLAIN_WRITES.issuperset(map(type, map(_second, writes)))
            and writes == other.writes
        )
    except Exception:  # a value whose == raises: compared the long way
        return False


def _step_rows(
    left: int | None, right: int | None, mine: _States, theirs: _States, before: dict
) -> tuple[list[tuple], dict[str, tuple | None]]:
    """(what, this, other, note) rows of one pair of steps (None: a step that run has
    not), and each field's row after it (None: equal); `before`: those after the pair
    before (a row kept when neither side wrote the field)."""
    rows: list[tuple] = []
    edits = (mine.edit(left), theirs.edit(right)) if mine.edits or theirs.edits else (None, None)
    if edits[0] != edits[1] and left is not None and right is not None:  # a fork's edit
        rows.append(("update_state", edits[0] or "no edit", edits[1] or "no edit", ""))
    else:
        tasks = (mine.tasks.get(left, ()), theirs.tasks.get(right, ()))
        if not (  # (at once: one task on each side, the same node)
            left == right
            and len(tasks[0]) == len(tasks[1]) == 1
            and tasks[0][0].node == tasks[1][0].node
        ):
            tasks = (mine.nodes(left), theirs.nodes(right))
            if tasks[0] != tasks[1]:
                rows.append(("tasks", *tasks, ""))
    read, seen = mine.read(left), theirs.read(right)
    here = read[1] if read is not None and read[0].applied else None
    there = seen[1] if seen is not None and seen[0].applied else None
    if (here is None or there is None) and _outcome(read) != _outcome(seen):
        rows.append(("outcome", _outcome(read), _outcome(seen), ""))
        return rows, {}  # a step that failed on one side has no state to compare
    here, there = here or {}, there or {}
    written = mine.written(left, read) | theirs.written(right, seen)
    unknown, now = UNKNOWN in written, {}
    names = here if there.keys() <= here.keys() else [*here, *(n for n in there if n not in here)]
    for name in names:
        if name in before and not unknown and name not in written:
            row = now[name] = before[name]  # unchanged on both sides since the step before
        else:
            left_value, right_value = here.get(name, MISSING), there.get(name, MISSING)
            start, row = mine.grown.get(name), before.get(name, False)
            if start is not None and row is not False and name in theirs.grown:
                if type(row) is _Lasting:  # (differs for good, and both only appended)
                    row = now[name] = _Lasting(_cells(name, left_value, right_value, mine, theirs))
                    rows.append(row)
                    continue
                if (
                    row is None
                    and theirs.grown[name] == start
                    and same(left_value[start:], right_value[start:])
                ):
                    now[name] = None  # equal before, and what both appended is equal
                    continue
            row = now[name] = (
                None
                if same(left_value, right_value)
                else _difference(name, left_value, right_value, mine, theirs)
            )
        if row is not None:
            rows.append(row)
    return rows, now


def _appends(spec: Any) -> Any:
    """How a field whose reducer only appends to its list (`grows_in_place`) folds a write,
    the same object for the same way (the "append" reducer's, or `ExtendsLists`' `fn`);
    None for any other field."""
    if spec.ephemeral or spec.managed or spec.transient or not grows_in_place(spec, []):
        return None
    in_place = spec.reducer.in_place
    return in_place.fn if type(in_place) is ExtendsLists else in_place


def _outcome(read: tuple[Any, dict[str, Any]] | None) -> str:
    if read is None:
        return "not reached"
    return "applied" if read[0].applied else "failed"


def _pairs(mine: _States, theirs: _States) -> list[tuple[int | None, int | None]]:
    """The runs' steps paired by number, less the `update_state` steps before them on
    each side (`_States.keys`); an edit pairs with the other side's edit at the same
    place, else with its step before (which then pairs twice)."""
    if not (mine.edits or theirs.edits):  # (then each step pairs with its own number)
        if mine.tasks.keys() == theirs.tasks.keys():
            steps = sorted(mine.tasks)
            return list(zip(steps, steps, strict=True))
        ours, others = mine.tasks, theirs.tasks
        return [
            (s if s in ours else None, s if s in others else None)
            for s in sorted(ours.keys() | others.keys())
        ]
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


def _difference(name: str, left: Any, right: Any, mine: _States, theirs: _States) -> tuple | None:
    """(what, this, other, note) for a field that differs after a step, or None; a
    `_Lasting` row for equally long lists of a field that grows in place on both sides
    whose difference items appended to both cannot undo (`differs_for_good`)."""
    difference = compare_values(left, right)
    if difference is None:
        return None
    if not (difference.said or difference.ids is None):
        return (name, *difference.ids, IDS_ONLY)
    row = (name, mine.cells.cell(name, left), theirs.cells.cell(name, right), "")
    if (
        name in mine.appends
        and name in theirs.appends
        and type(left) is list
        and type(right) is list
        and len(left) == len(right)
        and differs_for_good(left, right)
    ):
        return _Lasting(row)
    return row


class _Lasting(tuple):
    """The row of a list field whose difference lasts while both sides only append to it
    (`differs_for_good`): the rows after it, while they do, show the lists, uncompared."""

    __slots__ = ()


def _cells(name: str, left: list, right: list, mine: _States, theirs: _States) -> tuple:
    """(what, this, other, note) of a `_Lasting` difference, each list only appended to
    since its cell in the row before (`TableValues.cell`'s `appended`)."""
    return (name, mine.cells.cell(name, left, True), theirs.cells.cell(name, right, True), "")


class _States:
    """One run read forward, step by step: its tasks per step, its outcome, the values after
    each step (from one replay: `Timeline.walk`), and the fields each step wrote."""

    def __init__(self, run: Any) -> None:
        self.index = run.timeline.index
        steps = run.log.steps
        self.tasks = dict(zip(self.index, map(_tasks, steps), strict=True))  # (each step's)
        self.fields = run.timeline.graph.fields  # (as the replay folds them)
        self._grows = any(grows_in_place(spec, []) for spec in self.fields.values())
        self.special = frozenset(  # fields whose value after a write is not that value
            name
            for name, spec in self.fields.items()
            if spec.reducer is not None or spec.ephemeral or spec.managed or spec.transient
        )
        self.appends = {  # per field that grows in place, how: "append"'s or `fn` of `+`
            name: fold for name, spec in self.fields.items() if (fold := _appends(spec)) is not None
        }
        self.cells = TableValues()  # a kept value: a list shares its items with earlier rows
        self.walk = run.timeline.walk()
        self.at: tuple[Any, dict[str, Any]] | None = None  # the step read last
        self._values: dict[str, Any] = {}  # the values after the step before (a copy)
        self._written_at: int | None = None
        self._lengths: dict[str, int] = {}  # per list field, its length after the step before
        self.grown: dict[str, int] = {}  # per field the step only appended to: its old length
        self.edits: dict[int, str] = {}  # per step `update_state` made: as which node(s)
        if "update" in map(_kind, map(_first, filter(None, map(_tasks, steps)))):
            self.edits = {
                s.step: ", ".join(sorted({f"as {t.node}" for t in s.tasks}))
                for s in steps
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
            edits += step in self.edits
            keys[step] = (step - edits, step in self.edits)
        return keys

    def nodes(self, step: int | None) -> list[str]:
        """The nodes of the step's tasks, in write order ([] for the input step)."""
        return [] if step is None or step <= 0 else list(map(_node, self.tasks[step]))

    def edit(self, step: int | None) -> str | None:
        """For a step `update_state` made, as which node(s) ("as a"); else None."""
        return None if step is None else self.edits.get(step)

    def read(self, step: int | None) -> tuple[Any, dict[str, Any]] | None:
        """(the step's log, the values after it: the replay's own, read, never kept), or
        None for a step this run has not."""
        if step is None:
            return None
        at = self.at
        while at is None or at[0].step != step:
            at = next(self.walk)
        self.at = at
        return at

    def written(self, step: int | None, read: tuple[Any, dict[str, Any]] | None) -> set[str]:
        """The fields `step` (`read`: what `read` gave for it) may have changed: those its
        tasks wrote, and `UNKNOWN` when it reset, cleared, merged or pinned values (then
        every field is compared again); a value replaced by another object counts as
        written too. A step asked again (paired twice) wrote nothing new."""
        if read is None or step == self._written_at:
            self.grown = {}
            return set()
        self._written_at = step
        log, values = read
        if self._grows and (self._lengths or list in map(type, values.values())):
            self._note_growth(log, values)
        else:
            self.grown = {}  # (no list field, or none that grows in place: nothing to note)
        previous, self._values = self._values, values.copy()
        if log.resets or log.cleared or log.merged or log.afters:
            self.grown = {}
            return {UNKNOWN}
        tasks = log.tasks
        if len(tasks) == 1:
            written = set(map(_first, tasks[0].writes))
        else:
            written = {name for task in tasks for name, _ in task.writes}
        if not (written.issuperset(values) and written.issuperset(previous)):
            written.update([n for n, v in values.items() if previous.get(n, _GONE) is not v])
            written.update(previous.keys() - values.keys())  # (values replaced or gone)
        return written

    def _note_growth(self, log: Any, values: dict[str, Any]) -> None:
        """`grown`: the list fields this step only appended to, in place, with their length
        before (a long list compared again costs its new items, not its length)."""
        lengths, grown = self._lengths, {}
        if lengths and log.applied:
            writes: dict[str, list] = {}
            for task in log.tasks:
                for name, value in task.writes:
                    if name in lengths:
                        writes.setdefault(name, []).append((task.node, value))
            for name, field_writes in writes.items():
                value = values.get(name)
                if (
                    type(value) is list
                    and len(value) >= lengths[name]
                    and value is self._values.get(name)
                    and grows_in_place(field_spec(self.fields, name), field_writes)
                ):
                    grown[name] = lengths[name]
        self.grown = grown
        self._lengths = {n: len(v) for n, v in values.items() if type(v) is list}
