"""The graph a record's replays fold writes with: a list grown by a reducer that appends is
extended in the replay's own list.

It is the recorded graph, except that a list concatenated by a reducer that appends without an
in-place form (it says so: `Reducer.appends`; `operator.add` is LangGraph's way of growing a
list) is extended in the replay's own list, which is what `old + new` makes, without copying
the old items again.

The engine makes a new list every step for such a field (its reducer is the user's
callable); a replay owns its values (`Timeline`, `SuperstepEffects`), so folding N steps
costs what was written, not N copies of a growing list. Only exact `list` + `list` takes
the short way; any other pair (a tuple, a subclass, a number) calls the function itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from nbgraph.engine.facts import PLAIN_WRITES
from nbgraph.record.cells import TextTrail

if TYPE_CHECKING:
    from nbgraph.blueprint import GraphSpec

__all__ = ["ExtendsLists", "replay_graph", "set_plainly"]


class ExtendsLists:
    """A reducer's in-place form for a replay: `old.extend(new)` for two lists, else `fn`.

    >>> import operator
    >>> old = [1]
    >>> ExtendsLists(operator.add)(old, [2]) is old, old, ExtendsLists(operator.add)(1, 2)
    (True, [1, 2], 3)
    """

    __slots__ = ("fn", "texts")

    def __init__(self, fn: Any, texts: bool = False) -> None:
        self.fn = fn
        self.texts = texts  # (a long str grows as a `TextTrail`: for table cells only)

    def __call__(self, old: Any, new: Any) -> Any:
        if type(old) is list and type(new) is list:
            old.extend(new)
            return old
        if self.texts:
            if type(old) is TextTrail:
                if type(new) is str:
                    self._charge(old, new)
                    old.add(new)
                    return old
                old = old.text()
            elif type(old) is str and type(new) is str and len(old) + len(new) > _TRAIL_AT:
                self._charge(old, new)
                return TextTrail(old, new)
        return self.fn(old, new)

    def _charge(self, old: Any, new: str) -> None:
        """A file's reducer counts the work the concatenation stands for (what `state_at`
        will do), so a load refuses what a later view could not afford."""
        charge = getattr(self.fn, "charge", None)
        if charge is not None:
            charge(len(old) + len(new), len(new))


_TRAIL_AT = 1 << 12  # (a str shorter than this is simply concatenated)


def replay_graph(graph: GraphSpec, texts: bool = False) -> GraphSpec:
    """`graph`, or a copy whose concatenating list fields extend in place (see the module);
    with `texts`, a long str grows as a `TextTrail` (a replay whose values only become
    table cells: `SuperstepEffects`)."""
    changed = {}
    for name, spec in graph.fields.items():
        reducer = spec.reducer
        if reducer is None or reducer.in_place is not None:
            continue
        if reducer.appends:  # (it says so: `Reducer.appends`)
            in_place = ExtendsLists(reducer.fn, texts)
            changed[name] = replace(spec, reducer=replace(reducer, in_place=in_place))
    if not changed:
        return graph
    return replace(graph, fields={**graph.fields, **changed})


def set_plainly(fields: Mapping[str, Any], values: dict[str, Any], writes: Any) -> bool:
    """Whether `writes` (one task's) were one plain value for a field that has a value and
    no reducer, now set in `values` as `apply_writes` would set it; False (nothing done)
    for any other writes."""
    if len(writes) != 1:
        return False
    name, new = writes[0]
    spec = fields.get(name)
    if (spec is None or spec.reducer is None) and type(new) in PLAIN_WRITES and name in values:
        values[name] = new  # (a new field: `apply_writes` puts it in the schema's order)
        return True
    return False
