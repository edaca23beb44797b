"""`compile(semantics="branches")`: each parallel branch carries its own copy of the state.

`BranchLoop` is `RunLoop` with lineages: every task reads the state of its own lineage (its
parent's state plus its parent's writes), a fan-out gives each target its own lineage, a
node reached by plain edges runs once per arriving lineage, and lineages meet only at a join
(a waiting edge, a node with `merge=`, a deferred node) or at END. docs/BRANCHES.md gives
the rules; `nbgraph.engine.lineages.points` holds the merges. This module chooses each step's runs
and commits them; handing a task's lineage on is `engine.branch_routing`, and where lineages
meet, `engine.branch_joins` (both mixed into `BranchLoop`).

A lineage point's values are shared with the next point when only one run continues from
it, so a long loop costs what it writes; a point two runs continue from is kept as it is
(a join may need it as the common ancestor) and each continuation copies what it changes.
"""

from __future__ import annotations

from typing import Any

from nbgraph.blueprint import GraphSpec
from nbgraph.engine.branches import joins, routing
from nbgraph.engine.core.caching import serve_from_cache
from nbgraph.engine.core.loop import RunLoop
from nbgraph.engine.core.runlog import Join, RootReset, StepLog, join_data, reset_data
from nbgraph.engine.core.tasks import Task
from nbgraph.engine.core.writes import apply_writes
from nbgraph.engine.lineages.checkpoints import control_ids, describe, merged_values, snapshot
from nbgraph.engine.lineages.points import Lineage, ensure_values, grow
from nbgraph.engine.persistence.persist import task_data, transient_fields, without
from nbgraph.errors import CheckpointFileError
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING, Send

__all__ = ["Arrival", "BranchLoop"]

Arrival = tuple[tuple[str, ...], list[Lineage]]
"""What triggers a node: the sources, and the lineages they hand it (several: a join)."""


class BranchLoop(RunLoop):
    """One run with branch lineages, one step at a time (the drivers are `RunLoop`'s)."""

    lineages = True  # each task reads its own lineage (`read`)

    def __init__(
        self,
        spec: GraphSpec,
        config: dict[str, Any],
        thread: Any = None,
        caller: Any = MISSING,
        **given: Any,
    ) -> None:
        super().__init__(spec, config, thread, caller, **given)
        self.log.semantics = "branches"
        self.arrivals: dict[str, list[Arrival]] = {}
        self.sends: list[tuple[str, Send, Lineage]] = []
        self.captured: list[list[tuple[str, Lineage]]] = [[] for _ in spec.waiting]
        self.later: dict[str, list[Arrival]] = {}  # arrivals at deferred nodes
        self.ended: list[tuple[str, Lineage]] = []  # lineages that reached END, in order
        self.reads: dict[str, Lineage] = {}  # this step's tasks: the point each reads
        self.joins: list[Join] = []
        self._ids: set[str] = set()
        self.resumed_point: Lineage | None = None  # the merged state new input or an update reads
        self.created: list[Lineage] = []  # points made since the last checkpoint, in order

    # --- what a task reads -------------------------------------------------------------------

    def read(self, task: Task) -> dict[str, Any]:
        point = self.reads.get(task)
        return self.values if point is None else point.values  # type: ignore[return-value]

    # --- choosing the next step ----------------------------------------------------------------

    def next_tasks(self) -> list[Task] | None:
        if not self.advance():
            return None
        arrivals, sends = self.arrivals, self.sends
        if not arrivals and not sends:
            if not self.later:
                self.step -= 1
                return None
            arrivals, self.later = self.later, {}
        if self.breaks_before:
            pull = {n: [s for srcs, _ in items for s in srcs] for n, items in arrivals.items()}
            push = [(sender, send) for sender, send, _ in sends]
            if self._stop_before(pull, push):
                self.step -= 1
                return None
        self.arrivals, self.sends = {}, []
        self.joins, self.reads = [], {}
        tasks: list[Task] = []
        for name in sorted(arrivals):
            for sources, point in self._runs_of(name, arrivals[name]):
                task = Task(
                    self.step, len(tasks), name, "edge", triggers=self.schedule.shared[sources]
                )
                self.hand(task, point)
                tasks.append(task)
        self.schedule.took(len(tasks))
        for sender, send, point in sends:
            task = Task(self.step, len(tasks), send.node, "send", arg=send.arg, triggers=(sender,))
            self.hand(task, point)
            tasks.append(task)
        self.step_size = len(tasks)
        if self.spec.cache is not None:  # cache_policy=: a seen input's writes, not run again
            serve_from_cache(self.spec, tasks, self.runner.node_input)
        return tasks

    def add_join(self, join: Join) -> None:
        """A merge the step's tasks read (`engine.branches.joins`)."""
        self.joins.append(join)

    def hand(self, task: Task, point: Lineage) -> None:
        task.parent = point.id
        self.reads[task] = point

    def _runs_of(self, name: str, items: list[Arrival]) -> list[tuple[tuple[str, ...], Lineage]]:
        """One run per arriving lineage; one run on their merge for a join (a node with
        `merge=` or `defer=True`, or a waiting edge's arrivals)."""
        node = self.spec.nodes[name]
        if len(items) == 1 and len(items[0][1]) == 1 and node.merge is None:  # most runs
            return [(items[0][0], items[0][1][0])]
        if node.merge is not None or node.defer:
            sources = tuple(s for item_sources, _ in items for s in item_sources)
            return [(sources, joins.join(self, name, [p for _, points in items for p in points]))]
        runs: dict[int, tuple[list[str], Lineage]] = {}
        for sources, points in items:
            point = points[0] if len(points) == 1 else joins.join(self, name, points)
            if id(point) in runs:  # the same lineage arriving twice runs once
                runs[id(point)][0].extend(sources)
                point.holders -= 1
            else:
                runs[id(point)] = (list(sources), point)
        return [(tuple(sources), point) for sources, point in runs.values()]

    # --- lineage points ----------------------------------------------------------------------

    def made(self, point: Lineage) -> None:
        if self.thread is not None:  # the next checkpoint holds it
            self.created.append(point)

    def unique_id(self, wanted: str) -> str:
        name, n = wanted, 1
        while name in self._ids:
            n += 1
            name = f"{wanted}:{n}"
        self._ids.add(name)
        return name

    # --- committing a step ---------------------------------------------------------------------

    def commit(self, tasks: list[Task], source: str = "loop") -> StepLog:
        log = self.open_step(tasks, self.joins or ())
        if self.paused or self.at_breakpoint:  # ("subgraph": a task's graph stopped)
            return log  # not applied: the step runs again, answered, on resume
        try:
            for task in tasks:
                if task.kind == "input":
                    point = self._root(task)
                else:
                    parent = self.reads.pop(task, None) or self.resumed_point
                    point = self._grow(parent, task)
                if routing.trigger_lineage(self, task, point) and task.kind != "input":
                    self._fill(point)  # a run reads it: it needs values of its own
                elif task.kind != "input":
                    point.parent.frozen = True  # type: ignore[union-attr]  # computed later
                    point.parent.holders -= 1  # type: ignore[union-attr]
            routing.fire_waiting(self)
            if not (self.arrivals or self.sends or self.later):
                joins.finish(self)
        except Exception as error:
            error.add_note(f"nbgraph: while applying the writes of step {self.step}")
            raise
        live = self.live()  # (`written` stays empty: each lineage took its own writes)
        log.heads = tuple([point.id for point in live])
        log.applied = True
        if self.thread is not None:
            self._save(log, source, self.created, live)
            self.created = []
        if len(live) == 1:  # one lineage left: nothing older can be a common ancestor
            self.values_at(live[0])
            live[0].parent = None
        return log

    def _save(self, log: StepLog, source: str, created: list[Lineage], live: list) -> None:
        skip = transient_fields(self.spec)
        payload: dict[str, Any] = {
            "resets": [reset_data(r, without(skip)) for r in log.resets],
            "joins": [join_data(j) for j in log.joins],
            "tasks": [task_data(task, skip) for task in log.tasks],
            "points": [describe(self.spec, p, skip) for p in created],
            "heads": list(log.heads),
            "end": join_data(self.log.end) if _ends(created) and self.log.end else None,
            "merged": [],
            "afters": {},
            "cleared": [],
            "next": control_ids(self),
        }
        if self.thread.head is None:  # a thread's first checkpoint describes its graph
            from nbgraph.blueprint.description import describe_graph  # plain data

            payload["graph"] = describe_graph(self.spec)
        largest = max((p.values or {} for p in live), key=len, default={})
        self.thread.save(
            self.step,
            source,
            payload,
            largest,
            lineages=lambda: snapshot(self.spec, live, skip),
            force_snapshot=log.tasks[0].kind in ("input", "update"),
        )
        self.stop_after(log.tasks)

    def resume(self, restored: Any, keep_next: bool = True) -> StepLog:
        """Start from a checkpoint's lineages; recorded as this run's first points."""
        self.step, self.stop = restored.step, restored.step + self.limit + 2  # (LangGraph's budget)
        self.thread.head = restored.checkpoint_id
        if keep_next and not restored.latest:
            self.thread.branch(restored)  # a replay grows a new branch from the past
            self.step += 1  # (its fork checkpoint is a step, as in LangGraph)
        points: dict[str, Lineage] = restored.lineages
        skip = transient_fields(self.spec)
        if not keep_next:  # new input or an update: one lineage, the live ones merged
            self.start_merged(restored.values, restored.step + 1)
            return StepLog(restored.step, [], self.spec.fields)
        else:
            self._ids.update(points)
            self._restore_control(restored.control, points)
            self.finished = dict(restored.finished)
            self.answers = {k: list(v.get("answers", ())) for k, v in restored.paused.items()}
            self.past_breakpoint = True  # resuming steps over the breakpoint it stopped at
            live = self.live()
            self.values = self.log.final = restored.values
            log = StepLog(restored.step, [], self.spec.fields, applied=True)
            log.points = tuple(snapshot(self.spec, live, skip)) if live else ()
            log.heads = tuple(p.id for p in live)
        self.log.steps.append(log)
        return log

    def start_merged(self, values: dict[str, Any], step: int) -> None:
        """One lineage holding `values` (the live ones merged), recorded as a reset with
        `step` (the step that reads it): what new input or an update grows from."""
        values = {k: isolate(v) for k, v in values.items()}
        reset_id = self.unique_id(f"reset:{step}:resume")
        point = Lineage(reset_id, "reset", writes=tuple(values.items()), values=values)
        point.owned = set(values)
        self.resumed_point = point
        self.values = self.log.final = values
        skip = transient_fields(self.spec)
        recorded = {k: isolate(v) for k, v in values.items() if k not in skip}
        self.pending_resets = [RootReset(step, "resume", "resume", (), (), recorded, reset_id)]

    def _restore_control(self, control: dict[str, Any], points: dict[str, Lineage]) -> None:
        """Point by point, what was to run next (each held lineage counted)."""

        def held(point_id: str) -> Lineage:
            point = points.get(point_id)
            if point is None:
                raise CheckpointFileError(
                    f"A branch checkpoint's 'next' names lineage point {point_id!r}, which "
                    f"the checkpoint does not hold (it holds {sorted(points)[:8]}): the file "
                    "is damaged."
                )
            point.holders += 1
            return point

        lineages = control["lineages"]
        for queue, key in ((self.arrivals, "arrivals"), (self.later, "later")):
            for name, items in lineages[key].items():
                queue[name] = [(tuple(srcs), [held(i) for i in ids]) for srcs, ids in items]
        pushed = control.get("push", ())
        for point_id, (sender, node, arg) in zip(lineages["sends"], pushed, strict=True):
            self.sends.append((sender, Send(node, arg), held(point_id)))
        self.captured = [[(s, held(i)) for s, i in items] for items in lineages["captured"]]
        self.schedule.restore_seen(control)
        self.ended = [(s, held(i)) for s, i in lineages["ended"]]

    def _root(self, task: Task) -> Lineage:
        """The input applied: the root every lineage of this run grows from (on a thread
        with checkpoints, from its merged state)."""
        apply_writes(self.spec.fields, self.values, task.writes, self.step, task.node)
        root_id = self.unique_id(f"merge:{self.step}")
        root = Lineage(root_id, "root", self.resumed_point, writes=tuple(task.writes))
        root.values, root.owned = self.values, set(self.values)
        self.made(root)
        return root

    def _grow(self, parent: Lineage, task: Task) -> Lineage:
        """The point after `task`: its parent plus its writes (values come with `_fill`)."""
        point = Lineage(f"task:{task.id}", "task", parent, task.node, task.writes)
        self.made(point)
        return point

    def _fill(self, point: Lineage) -> None:
        """Give a task point its values: its parent's, shared in place when nothing else
        continues from the parent, plus its writes."""
        parent: Lineage = point.parent  # type: ignore[assignment]
        if point.values is None:
            if parent.holders == 1 and not parent.frozen:
                values, owned = parent.values, parent.owned
                if type(owned) is frozenset:  # it owned nothing yet
                    owned = set()
                parent.values, parent.owned = None, set()
            else:
                parent.frozen = True  # a join may need it as the common ancestor
                values, owned = dict(self.values_at(parent)), set()
            grow(self.spec.fields, values, point, self.step, owned, self.ephemeral)  # type: ignore[arg-type]
            point.values, point.owned = values, owned
        parent.holders -= 1

    def values_at(self, point: Lineage) -> dict[str, Any]:
        return ensure_values(self.spec.fields, point, self.ephemeral)

    # --- live lineages and the end ---------------------------------------------------------

    def live(self) -> list[Lineage]:
        """Every lineage point something still holds, in routing order (no repeats)."""
        alone = not (self.sends or self.later or self.ended or any(self.captured))
        if alone and len(self.arrivals) == 1:  # the common case, a loop: one lineage
            (items,) = self.arrivals.values()
            if len(items) == 1 and len(items[0][1]) == 1:
                return items[0][1]
        points: dict[int, Lineage] = {}
        for queue in (self.arrivals, self.later):
            for items in queue.values():
                for _, held in items:
                    for point in held:
                        points.setdefault(id(point), point)
        for _, _, point in self.sends:
            points.setdefault(id(point), point)
        for captured in self.captured:
            for _, point in captured:
                points.setdefault(id(point), point)
        for _, point in self.ended:
            points.setdefault(id(point), point)
        return sorted(points.values(), key=lambda point: point.seq)  # the order they came

    def output(self) -> dict[str, Any]:
        """The output: END's merge, or (paused) the live lineages merged as they stand."""
        if self.log.end is not None:
            return self.output_of(self.values)
        points = {id(p): p for p in [*self.live(), *self.reads.values()]}  # paused: reads
        ordered = sorted(points.values(), key=lambda point: point.seq)
        return self.output_of(merged_values(self.spec, ordered, self.step))

    def stream_values(self) -> dict[str, Any]:
        """The state `"values"` shows: the one lineage's, or the delta merge of all live ones."""
        points = self.live()
        values = merged_values(self.spec, points, self.step) if points else self.values
        return {k: isolate(v) for k, v in values.items() if k in self.stream_keys}

    def touched_stream_keys(self, log: StepLog) -> bool:
        return True


def _ends(created: list[Lineage]) -> bool:
    return any(p.id == "join:end" for p in created)
