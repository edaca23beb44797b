"""`compile(semantics="branches")`: each parallel branch carries its own copy of the state.

`BranchLoop` is `RunLoop` with lineages: every task reads the state of its own lineage (its
parent's state plus its parent's writes), a fan-out gives each target its own lineage, a
node reached by plain edges runs once per arriving lineage, and lineages meet only at a join
(a waiting edge, a node with `merge=`, a deferred node) or at END. docs/BRANCHES.md gives
the rules; `nbgraph.engine.lineage` holds the merges.

A lineage point's values are shared with the next point when only one run continues from
it, so a long loop costs what it writes; a point two runs continue from is kept as it is
(a join may need it as the common ancestor) and each continuation copies what it changes.
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.branch_persist import (
    control_ids,
    describe,
    merged_values,
    snapshot,
)
from nbgraph.engine.lineage import (
    Lineage,
    common_base,
    delta_merge,
    ensure_values,
    fold_states,
    grow,
    keep_live_ephemeral,
    state_pairs,
    strategy_name,
)
from nbgraph.engine.loop import RunLoop
from nbgraph.engine.persist import task_data, transient_fields, without
from nbgraph.engine.runlog import (
    Join,
    RootReset,
    StepLog,
    initial_values,
    join_data,
    reset_data,
)
from nbgraph.engine.tasks import Task, state_for
from nbgraph.engine.view import isolate
from nbgraph.engine.writes import apply_grouped, group_writes
from nbgraph.graph import GraphSpec
from nbgraph.types import END, Send

Arrival = tuple[tuple[str, ...], list[Lineage]]
"""What triggers a node: the sources, and the lineages they hand it (several: a join)."""


class BranchLoop(RunLoop):
    """One run with branch lineages, one step at a time (the drivers are `RunLoop`'s)."""

    def __init__(self, spec: GraphSpec, config: dict[str, Any], thread: Any = None) -> None:
        super().__init__(spec, config, thread)
        self.log.semantics = "branches"
        self.arrivals: dict[str, list[Arrival]] = {}
        self.sends: list[tuple[str, Send, Lineage]] = []
        self.captured: list[list[tuple[str, Lineage]]] = [[] for _ in spec.waiting]
        self.later: dict[str, list[Arrival]] = {}  # arrivals at deferred nodes
        self.ended: list[tuple[str, Lineage]] = []  # lineages that reached END, in order
        self.reads: dict[str, Lineage] = {}  # this step's tasks: the point each reads
        self._joins: list[Join] = []
        self._ids: set[str] = set()
        self._resumed: Lineage | None = None  # the merged state new input or an update reads
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
        if self.spec.interrupt_before:
            pull = {n: [s for srcs, _ in items for s in srcs] for n, items in arrivals.items()}
            push = [(sender, send) for sender, send, _ in sends]
            if self._stop_before(pull, push):
                self.step -= 1
                return None
        self.arrivals, self.sends = {}, []
        self._joins, self.reads = [], {}
        tasks: list[Task] = []
        for name in sorted(arrivals):
            for sources, point in self._runs_of(name, arrivals[name]):
                task = Task(self.step, len(tasks), name, "edge", triggers=self.shared(sources))
                self._hand(task, point)
                tasks.append(task)
        for sender, send, point in sends:
            task = Task(self.step, len(tasks), send.node, "send", arg=send.arg, triggers=(sender,))
            self._hand(task, point)
            tasks.append(task)
        self.step_size = len(tasks)
        return tasks

    def _hand(self, task: Task, point: Lineage) -> None:
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
            return [(sources, self._join(name, [p for _, points in items for p in points]))]
        runs: dict[int, tuple[list[str], Lineage]] = {}
        for sources, points in items:
            point = points[0] if len(points) == 1 else self._join(name, points)
            if id(point) in runs:  # the same lineage arriving twice runs once
                runs[id(point)][0].extend(sources)
                point.holders -= 1
            else:
                runs[id(point)] = (list(sources), point)
        return [(tuple(sources), point) for sources, point in runs.values()]

    # --- joins ------------------------------------------------------------------------------------

    def _join(self, name: str, points: list[Lineage], strategy: Any = ...) -> Lineage:
        """Merge lineages for `name` (END included) by its strategy; record the merge."""
        unique: list[Lineage] = []
        seen: set[int] = set()
        for point in points:
            if id(point) in seen:
                point.holders -= 1
            else:
                seen.add(id(point))
                unique.append(point)
        if len(unique) == 1 and name != END:
            return unique[0]
        if strategy is ...:
            strategy = self.spec.nodes[name].merge
        base = common_base(unique)
        step = self.step
        join_id = self._unique("join:end" if name == END else f"join:{step}:{name}")
        parents = tuple(p.id for p in unique)
        if strategy is None or strategy == "delta":
            base_values = self._values(base) if base is not None else initial_values(self.spec)
            values, applied = delta_merge(self.spec.fields, base_values, unique, base, step)
            keep_live_ephemeral(values, unique, self._values, self.ephemeral)
            point = Lineage(join_id, "join", base, applied=tuple(applied), values=values)
            point.heads = parents
            ids = tuple(p.id for p in applied)
            join = Join(step, join_id, name, parents, "delta", _id(base), ids)
        else:
            values, dropped = self._strategy_values(name, strategy, unique)
            point = Lineage(join_id, "reset", base, writes=tuple(values.items()), values=values)
            recorded = {k: isolate(v) for k, v in values.items()}
            join = Join(
                step, join_id, name, parents, strategy_name(strategy), _id(base), (), recorded,
                dropped,
            )  # fmt: skip
        for parent in unique:  # each held it once; a join releases what no one else holds
            parent.holders -= 1
            if parent.holders <= 0 and not parent.frozen:
                parent.values = None
        point.holders = 1
        self._made(point)
        if name == END:
            self.log.end = join
        else:
            self._joins.append(join)
        return point

    def _strategy_values(
        self, name: str, strategy: Any, points: list[Lineage]
    ) -> tuple[dict[str, Any], tuple[str, ...]]:
        states = [self._values(p) for p in points]
        where = f"the merge for {name!r} at step {self.step}"
        try:
            if strategy == "fold":
                values = fold_states(self.spec.fields, states, self.step)  # type: ignore[arg-type]
            else:
                given = [state_for(self.spec.state, s, {}, whole=True) for s in states]  # type: ignore[arg-type]
                result = strategy(given)
                values = {k: isolate(v) for k, v in state_pairs(self.spec.state, result, where)}
        except Exception as error:
            error.add_note(f"nbgraph: while computing {where} ({strategy_name(strategy)})")
            raise
        fields = self.spec.fields
        unknown = [k for k in values if k not in fields and not self.spec.open_schema]
        if unknown:
            self._warn(f"The merge for {name!r} returned keys the state does not have: {unknown}.")
            values = {k: v for k, v in values.items() if k not in unknown}
        had = dict.fromkeys(k for s in states for k in s)  # type: ignore[union-attr]
        return values, tuple(k for k in had if k not in values)

    def _made(self, point: Lineage) -> None:
        if self.thread is not None:  # the next checkpoint holds it
            self.created.append(point)

    def _unique(self, wanted: str) -> str:
        name, n = wanted, 1
        while name in self._ids:
            n += 1
            name = f"{wanted}:{n}"
        self._ids.add(name)
        return name

    # --- committing a step ---------------------------------------------------------------------

    def commit(self, tasks: list[Task], source: str = "loop") -> StepLog:
        log = self.open_step(tasks, self._joins or ())
        if self.paused:
            return log  # not applied: the step runs again, answered, on resume
        try:
            for task in tasks:
                if task.kind == "input":
                    point = self._root(task)
                else:
                    parent = self.reads.pop(task, None) or self._resumed
                    point = self._grow(parent, task)
                if self._trigger_lineage(task, point) and task.kind != "input":
                    self._fill(point)  # a run reads it: it needs values of its own
                elif task.kind != "input":
                    point.parent.frozen = True  # type: ignore[union-attr]  # computed later
                    point.parent.holders -= 1  # type: ignore[union-attr]
            self._fire_waiting()
            if not (self.arrivals or self.sends or self.later):
                self._finish()
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
            self._values(live[0])
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
            from nbgraph.graph.description import describe_graph  # plain data

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

    def _resume(self, restored: Any, keep_next: bool = True) -> StepLog:
        """Start from a checkpoint's lineages; recorded as this run's first points."""
        self.step, self.stop = restored.step, restored.step + self.limit + 1
        self.thread.head = restored.checkpoint_id
        if keep_next and not restored.latest:
            self.thread.branch(restored)  # a replay grows a new branch from the past
            self.step += 1  # (its fork checkpoint is a step, as in LangGraph)
        points: dict[str, Lineage] = restored.lineages
        skip = transient_fields(self.spec)
        if not keep_next:  # new input or an update: one lineage, the live ones merged
            values = {k: isolate(v) for k, v in restored.values.items()}
            step = restored.step + 1  # recorded with the step that reads it
            reset_id = self._unique(f"reset:{step}:resume")
            point = Lineage(reset_id, "reset", writes=tuple(values.items()), values=values)
            point.owned = set(values)
            self._resumed = point
            self.values = self.log.final = values
            recorded = {k: isolate(v) for k, v in values.items() if k not in skip}
            self._pending_resets = [RootReset(step, "resume", "resume", (), (), recorded, reset_id)]
            return StepLog(restored.step, [], self.spec.fields)
        else:
            self._ids.update(points)
            self._restore_control(restored.control, points)
            self.finished = dict(restored.finished)
            self.answers = {k: list(v["answers"]) for k, v in restored.paused.items()}
            self._past_breakpoint = True  # resuming steps over the breakpoint it stopped at
            live = self.live()
            self.values = self.log.final = restored.values
            log = StepLog(restored.step, [], self.spec.fields, applied=True)
            log.points = tuple(snapshot(self.spec, live, skip)) if live else ()
            log.heads = tuple(p.id for p in live)
        self.log.steps.append(log)
        return log

    def _restore_control(self, control: dict[str, Any], points: dict[str, Lineage]) -> None:
        """Point by point, what was to run next (each held lineage counted)."""

        def held(point_id: str) -> Lineage:
            point = points[point_id]
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
        self.seen = [set(names) for names in control.get("seen") or [() for _ in self.seen]]
        self.ended = [(s, held(i)) for s, i in lineages["ended"]]

    def _root(self, task: Task) -> Lineage:
        """The input applied: the root every lineage of this run grows from (on a thread
        with checkpoints, from its merged state)."""
        grouped = group_writes([(task.node, key, value) for key, value in task.writes])
        apply_grouped(self.spec.fields, self.values, grouped, self.step)
        root_id = self._unique(f"merge:{self.step}")
        root = Lineage(root_id, "root", self._resumed, writes=tuple(task.writes))
        root.values, root.owned = self.values, set(self.values)
        self._made(root)
        return root

    def _grow(self, parent: Lineage, task: Task) -> Lineage:
        """The point after `task`: its parent plus its writes (values come with `_fill`)."""
        point = Lineage(f"task:{task.id}", "task", parent, task.node, task.writes)
        self._made(point)
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
                values, owned = dict(self._values(parent)), set()
            grow(self.spec.fields, values, point, self.step, owned, self.ephemeral)  # type: ignore[arg-type]
            point.values, point.owned = values, owned
        parent.holders -= 1

    def _values(self, point: Lineage) -> dict[str, Any]:
        return ensure_values(self.spec.fields, point, self.ephemeral)

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
            self.seen[index].add(source)
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
            seen = self.seen[index]
            if seen and seen.issuperset(edge.sources):
                seen.clear()
                captured, self.captured[index] = self.captured[index], []
                if edge.target == END:  # END collects them, in the order they came
                    self.ended.extend(captured)
                    continue
                sources = tuple(s for s, _ in captured)
                queue = self.later if self.spec.nodes[edge.target].defer else self.arrivals
                queue.setdefault(edge.target, []).append((sources, [p for _, p in captured]))

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

    def _finish(self) -> None:
        """END merges the lineages that reached it (in routing order) into the final state.

        A lineage still waiting at a join that can no longer fire is not lost: END collects
        it too, with a warning naming the join.
        """
        for index, captured in enumerate(self.captured):
            if captured:
                edge = self.spec.waiting[index]
                self._warn(
                    f"Waiting edge {list(edge.sources)} -> {edge.target!r} never fired: "
                    f"{', '.join(sorted({s for s, _ in captured}))} ran but not all of its "
                    "sources did; END collected those lineages."
                )
                self.ended.extend(captured)
                self.captured[index] = []
        if not self.ended:
            return
        points = [point for _, point in self.ended]
        final = self._join(END, points, self.spec.end_merge)
        self.ended = [(END, final)]  # held until the run ends: a checkpoint's final state
        self.values = self.log.final = final.values  # type: ignore[assignment]

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


def _id(point: Lineage | None) -> str:
    return "" if point is None else point.id
