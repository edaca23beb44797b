"""Lineage routing in a branch run: a committed task's lineage point handed along its edges,
routes, `Send`s and `state_filter`s to the runs, joins and END it reaches.

`Routing` is mixed into `engine.branches.BranchLoop` (whose `__init__` sets the queues it
fills: `arrivals`, `later`, `sends`, `captured`, `ended`).
"""

from __future__ import annotations

from nbgraph.engine.branches.lineage import Lineage, state_pairs
from nbgraph.engine.core.runlog import RootReset
from nbgraph.engine.core.tasks import Task, state_for
from nbgraph.isolation import isolate
from nbgraph.types import END, Send


class Routing:
    """Where `BranchLoop.commit` sends each task's lineage point."""

    def _trigger_lineage(self, task: Task, point: Lineage) -> bool:
        """Hand `point` to every run, join and END that `task`'s edges and routes reach;
        return whether a run will read it (joins and END read only its writes)."""
        spec, source = self.spec, task.node
        reached = readers = False
        for target in spec.edges.get(source, ()):
            reached = True
            state_filter = spec.filters.get((source, target))
            handed = point if state_filter is None else self._filtered(source, target, point)
            readers = self._arrive(target, source, handed) or readers
        for index in spec.waits_by_source.get(source, ()):
            reached = True
            point.holders += 1
            self.captured[index].append((source, point))
            self.schedule.seen[index].add(source)
        for route in task.routes:
            reached = True
            if isinstance(route, Send):
                point.holders += 1
                readers = True
                self.sends.append((source, route, point))
            else:
                readers = self._arrive(route, source, point) or readers
        if not reached:  # a dead end: its lineage ends there, and END collects it
            self._arrive(END, source, point)
        return readers

    def _arrive(self, target: str, source: str, point: Lineage) -> bool:
        point.holders += 1
        if target == END:
            self.ended.append((source, point))
            return False
        node = self.spec.nodes[target]
        queue = self.later if node.defer else self.arrivals
        queue.setdefault(target, []).append(((source,), [point]))
        return node.merge is None and not node.defer  # a join reads only its writes

    def _filtered(self, source: str, target: str, point: Lineage) -> Lineage:
        """An edge's `state_filter`: the target starts a lineage from the filtered state."""
        state_filter = self.spec.filters[(source, target)]
        given = state_for(self.spec.state, self._values(point), {}, whole=True)
        where = f"The state_filter of edge {source!r} -> {target!r}"
        try:
            pairs = state_pairs(self.spec.state, state_filter(given), where)
        except Exception as error:
            error.add_note(f"nbgraph: while filtering the state from {source!r} to {target!r}")
            raise
        values = {k: isolate(v) for k, v in pairs}
        reset_id = self._unique(f"reset:{self.step + 1}:{target}")
        dropped = tuple(k for k in point.values if k not in values)  # type: ignore[union-attr]
        recorded = {k: isolate(v) for k, v in values.items()}
        reset = RootReset(
            self.step + 1, target, "state_filter", (source,), dropped, recorded, reset_id, point.id
        )
        self._pending_resets = [*self._pending_resets, reset]  # the next step's tasks read it
        point.frozen = True
        reset = Lineage(reset_id, "reset", point, writes=tuple(recorded.items()), values=values)
        self._made(reset)
        return reset

    def _fire_waiting(self) -> None:
        """Waiting edges whose sources have all run hand their captured lineages on, to be
        merged into one run of the target."""
        for index, edge in enumerate(self.spec.waiting):
            seen = self.schedule.seen[index]
            if seen and seen.issuperset(edge.sources):
                seen.clear()
                captured, self.captured[index] = self.captured[index], []
                if edge.target == END:  # END collects them, in the order they came
                    self.ended.extend(captured)
                    continue
                sources = tuple(s for s, _ in captured)
                queue = self.later if self.spec.nodes[edge.target].defer else self.arrivals
                queue.setdefault(edge.target, []).append((sources, [p for _, p in captured]))
