"""What runs next: the scheduler's state (the nodes each step's edges, waiting edges and
routes trigger, queued for the next step) in one object, and the methods that change it.

`RunLoop` owns one `Schedule`; committing a step queues what its tasks trigger (`trigger`),
`RunLoop.next_tasks` takes the queued step and its tasks (`take`). A checkpoint keeps the
queues (`engine.persistence.persist.checkpoint_payload` reads them) and a resumed run puts
them back (`restore`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbgraph.engine.core.plans import NO_RESET, plans_of
from nbgraph.engine.core.tasks import Task
from nbgraph.primitives import END, START, Send

__all__ = ["Schedule"]


class Schedule:
    """The queues of one run (see the module's docstring).

    Attributes:
        pull: node -> the nodes whose edges or routes triggered it, for the next step.
        push: `(sender, Send)` for the next step, in send order.
        deferred: `defer=True` nodes triggered, waiting for a step that no edge or route
            triggers a node for (`take`).
        seen: per waiting edge (`spec.waiting`), the sources that have fired so far.
        incoming: node -> `(source, state)` handed to a node that merges or filters states.
        pulls: the current step's tasks that are not Sends (a Send's index comes after).
        state_after: `state_after(task)`, the state as a task left it (the run's), kept for
            a target that merges or filters the states it is handed.
    """

    __slots__ = (
        "deferred",
        "deferred_wait",
        "incoming",
        "kept_due",
        "plain",
        "pull",
        "pulls",
        "push",
        "seen",
        "shared",
        "spec",
        "state_after",
        "took_deferred",
    )

    def __init__(self, spec: Any, state_after: Callable[[Task], Any], plans: Any = None) -> None:
        self.spec = spec
        self.state_after = state_after  # the state as a task left it (its run's)
        self.pull: dict[str, list[str]] = {}
        self.push: list[tuple[str, Send]] = []
        self.deferred: dict[str, list[str]] = {}
        self.deferred_wait = False  # a `goto` to a deferred node: it waits for a step to run
        self.kept_due: frozenset[str] = frozenset()  # due when an update came (`_finish`)
        self.seen: list[set[str]] = [set() for _ in spec.waiting] if spec.waiting else []
        self.incoming: dict[str, list[tuple[str, Any]]] = {}
        self.pulls = 0
        self.took_deferred = False  # the step last taken was the deferred nodes'
        plans = plans or plans_of(spec)  # (what every run of the graph shares: worked out once)
        self.shared = plans.shared
        """`shared[names]`: one tuple object per distinct tuple of node names (a long run
        records the same triggers and routes every step, and keeps each of them once; so
        do the graph's other runs: `plans.shared`)."""
        self.plain = plans.queued  # (the nodes a route queues without more ado)

    # --- the next step -----------------------------------------------------------------------

    def take(self, step: int) -> tuple[dict[str, list[str]], list, list[Task]] | None:
        """The next step, taken from the queues: `(pull, push, tasks)`, its tasks in write
        order; or None when nothing is left to run. The deferred nodes run in the first
        step that no edge or route triggers a node for, beside the `Send`s due then (as in
        LangGraph, whose deferred channels finish when a step updates no trigger)."""
        pull, push = self.pull, self.push
        if pull:
            self.pull = {}
            self.took_deferred = False
        elif self.deferred and not self.deferred_wait:  # (LangGraph's: beside the Sends due)
            pull, self.deferred = self.deferred, {}
            self.took_deferred = True
        elif not push:
            return None
        if push:  # (an empty queue of Sends stays: a loop's step makes none)
            self.push = []
        if len(pull) == 1 and not push:  # a lone task (a loop's step)
            ((name, sources),) = pull.items()
            self.pulls = 1
            return pull, push, [Task(step, 0, name, "edge", triggers=self.shared[tuple(sources)])]
        return pull, push, self._tasks(step, pull, push)

    def put_back(self, pull: dict[str, list[str]], push: list[tuple[str, Send]]) -> None:
        """Queue a taken step again where it was taken from (a breakpoint stopped the run
        before it)."""
        if self.took_deferred:
            self.deferred = pull
        else:
            self.pull = pull
        self.push = push

    def _tasks(self, step: int, pull: dict[str, list[str]], push: list) -> list[Task]:
        """A step's tasks in write order: the pulled nodes by name, then the Sends."""
        names = sorted(pull) if len(pull) > 1 else pull
        tasks = [
            Task(step, index, name, "edge", triggers=self.shared[tuple(pull[name])])
            for index, name in enumerate(names)
        ]
        offset = self.pulls = len(tasks)
        tasks += [
            Task(step, offset + index, send.node, "send", arg=send.arg, triggers=(sender,))
            for index, (sender, send) in enumerate(push)
        ]
        return tasks

    # --- queueing what a step triggers -------------------------------------------------------

    def trigger(self, tasks: list[Task]) -> None:
        """Queue what `tasks` trigger: their nodes' edges and waiting edges, and the routes
        they chose."""
        spec = self.spec
        self.deferred_wait = False
        waits: dict[int, Task] = {}  # the waiting edges the step's tasks reached (the last)
        for task in tasks:
            source = task.node
            for target in spec.edges.get(source, ()):
                if target != END:
                    self.add(target, source, task, spec.filters.get((source, target)))
            for index in spec.waits_by_source.get(source, ()):
                self.seen[index].add(source)
                self.capture(spec.waiting[index].target, source, task, None)
                waits[index] = task
            for route in task.routes:
                self.take_route(source, task, route)
        for index, task in waits.items():  # (once per step: a source that ran twice in it,
            seen, edge = self.seen[index], spec.waiting[index]  # by a Send, counts once)
            if seen.issuperset(edge.sources):
                seen.clear()
                for waited in edge.sources:  # every source it waited for triggered it
                    self.add(edge.target, waited, task, None, capture=False)
        if self.kept_due:
            self._finish()

    def trigger_plain(self, task: Task, targets: tuple[str, ...]) -> None:
        """`trigger` for one task whose node's edges are plain (no filter, waiting edge,
        defer or merge at their targets: `NodePlan.plain`)."""
        source, pull, plain = task.node, self.pull, self.plain
        self.deferred_wait = False
        for target in targets:
            queued = pull.get(target)
            if queued is None:
                pull[target] = [source]
            else:
                queued.append(source)
        for route in task.routes:
            if type(route) is str and route in plain:  # (`take_route`'s common case)
                queued = pull.get(route)  # type: ignore[arg-type]
                if queued is None:
                    pull[route] = [source]  # type: ignore[index]
                else:
                    queued.append(source)
            else:
                self.take_route(source, task, route)
        if self.kept_due:
            self._finish()

    def _finish(self) -> None:
        """After an update written as a node while nodes were due (`kept_due`, by
        `keep_waiting`: deferred nodes due, a fired join's target): if it triggered no node
        but deferred ones, the deferred nodes waiting are due beside those (LangGraph's
        channels finish when a step updates no trigger; the due ones stay available)."""
        if self.pull.keys() <= self.kept_due:
            for name, sources in self.deferred.items():
                self.pull.setdefault(name, []).extend(sources)
            self.deferred = {}
        self.kept_due = frozenset()

    def take_route(self, source: str, task: Task, route: Any) -> None:
        """Queue one route a task chose: a `Send`, END, or a node."""
        if isinstance(route, Send):
            self.push.append((source, route))
        elif route == END:
            return
        elif (node := self.spec.nodes[route]).defer or node.merge not in NO_RESET:
            self.add(route, source, task, None)
        else:
            queued = self.pull.get(route)
            if queued is None:
                self.pull[route] = [source]
            else:
                queued.append(source)

    def add(
        self, target: str, source: str, task: Task, state_filter: Any, capture: bool = True
    ) -> None:
        """Queue `target`, triggered by `source`; keep the state it is handed when it
        merges or filters states (unless `capture` is False: kept already)."""
        if target == END:
            return
        node = self.spec.nodes[target]
        queue = self.deferred if node.defer else self.pull
        if node.defer and target in self.pull:  # due already (`keep_waiting`): triggered
            queue[target] = self.pull.pop(target)  # again, it waits again, as LangGraph's
        queue.setdefault(target, []).append(source)
        if capture and (state_filter is not None or node.merge not in NO_RESET):
            self.capture(target, source, task, state_filter)

    def capture(self, target: str, source: str, task: Task, state_filter: Any) -> None:
        """Keep the state `source` hands `target` when `target` merges or filters it."""
        if target == END or (self.spec.nodes[target].merge in NO_RESET and state_filter is None):
            return
        state = self.state_after(task)
        if state_filter is not None:
            state = state_filter(state)
        self.incoming.setdefault(target, []).append((source, state))

    def positions(self) -> dict[Any, int]:
        """Where each queued task stands in the next step's write order (`_tasks`' indices):
        a pulled node by its name, the i-th Send by `("send", i)` (the deferred nodes when
        they are due: `take`)."""
        due = self.pull or ({} if self.deferred_wait else self.deferred)
        names = sorted(due)
        where: dict[Any, int] = {name: index for index, name in enumerate(names)}
        where.update({("send", i): len(names) + i for i in range(len(self.push))})
        return where

    def take_gotos(self, routes: Any) -> None:
        """Add a resuming Command's `goto` targets to the step that runs next. Deferred
        nodes due in that step (nothing else was) stay due beside the nodes added, as in
        LangGraph, whose deferred channels had finished; a deferred target waits until a step
        has run and triggered nothing (LangGraph's channel, written again, unfinishes: when
        no step runs, neither does it)."""
        due = not self.pull and bool(routes)
        if due:
            self.pull, self.deferred = self.deferred, {}
        for route in routes:
            if isinstance(route, Send):
                self.push.append((START, route))
            elif route != END and self.spec.nodes[route].defer:
                sources = self.pull.pop(route, []) if due else []
                self.deferred.setdefault(route, sources).append(START)
                self.deferred_wait = True
            elif route != END:
                self.pull.setdefault(route, []).append(START)

    # --- a checkpoint's queues -----------------------------------------------------------------

    def keep_waiting(self, control: dict[str, Any]) -> None:
        """Put back what waits at a checkpoint, not what was due: the deferred nodes and the
        sources each waiting edge has seen (an update written as a node replaces the due
        step; LangGraph's deferred and barrier channels keep their values). Deferred nodes
        that were due (nothing else was) stay due: LangGraph's channels had finished; so
        does the target of a waiting edge that fired (its barrier is full until it runs)."""
        deferred = {k: list(v) for k, v in control.get("deferred", {}).items()}
        pull = control["pull"]
        if pull:  # (else they were due, beside the Sends if any: `take`)
            self.deferred = deferred
        else:
            self.pull, self.deferred = deferred, {}
        for edge in self.spec.waiting:
            due = pull.get(edge.target, ())
            if set(edge.sources) <= set(due):
                self.pull.setdefault(edge.target, []).extend(edge.sources)
        self.restore_seen(control)
        self.kept_due = frozenset(self.pull)  # (`_finish`, once the update is written)

    def fire_again(self, index: int, writer: str) -> None:
        """An update written as `writer`, a source of waiting edge `index` that had fired
        (its target still due, kept by `keep_waiting`): the join fires again when the
        update's task triggers it (LangGraph's full barrier takes the write), so its target
        is queued once, by that firing."""
        edge = self.spec.waiting[index]
        self.seen[index] = set(edge.sources) - {writer}
        queued = self.pull.get(edge.target, [])
        for source in edge.sources:
            if source in queued:
                queued.remove(source)
        if not queued:
            self.pull.pop(edge.target, None)

    def restore(self, control: dict[str, Any]) -> None:
        """Put back the queues a checkpoint kept (its `control`)."""
        shown = control.get("shown", ())  # (due in the snapshot only: `Deferred.step_failed`)
        self.pull = {k: list(v) for k, v in control["pull"].items() if k not in shown}
        push = control.get("push", ())
        self.push = [(sender, Send(node, arg)) for sender, node, arg in push]
        self.restore_seen(control)
        self.deferred = {k: list(v) for k, v in control.get("deferred", {}).items()}
        self.deferred_wait = False
        incoming = control.get("incoming", {})
        self.incoming = {k: [tuple(p) for p in v] for k, v in incoming.items()}

    def restore_seen(self, control: dict[str, Any]) -> None:
        """Put back the sources each waiting edge had seen at a checkpoint (`control`)."""
        seen = control.get("seen") or [() for _ in self.spec.waiting]
        self.seen = [set(names) for names in seen]

    # --- what an update or a branch run changes -------------------------------------------------

    def mark_seen(self, index: int, source: str) -> None:
        """`source` has fired, for waiting edge `index` (a branch run's lineage reached it)."""
        self.seen[index].add(source)

    def queue_once(self) -> None:
        """Each node queued for the next step, triggered by each of its sources once (a
        stepper's update queues what was due again: LangGraph's update adds no source
        twice)."""
        for target, sources in self.pull.items():
            self.pull[target] = list(dict.fromkeys(sources))

    def drop_due(self) -> None:
        """Drop the step that was due: an update stands in for it (as in LangGraph)."""
        self.pull, self.push = {}, []

    def forget_seen(self) -> None:
        """Start every waiting edge afresh (a branch run's update merges its lineages)."""
        self.seen = [set() for _ in self.seen]

    def release(self) -> None:
        """The run has ended (`RunLoop.release`): forget its `state_after`, a link back to
        the run (the run is then freed without the cyclic collector)."""
        self.state_after = _ended

    def took(self, pulls: int) -> None:
        """A step taken by a branch run (which makes its own tasks): `pulls` of them are not
        Sends (a Send's index comes after)."""
        self.pulls = pulls


def _ended(task: Task) -> Any:
    """A released run's `state_after` (`Schedule.release`): nothing runs in it any more."""
    raise RuntimeError(f"the run has ended: no state after task {task.node!r}")
