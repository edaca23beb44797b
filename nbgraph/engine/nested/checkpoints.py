"""Subgraph checkpoints: a graph run inside a node of a checkpointed run keeps its own
checkpoints in its parent's saver, as LangGraph's subgraphs do.

How a compiled subgraph persists depends on its `compile(checkpointer=...)`:

- `None` (the default): it inherits the parent's saver. Its checkpoints go under the
  parent's thread id with `checkpoint_ns = "<node>:<task id>"` (a subgraph of a subgraph:
  `"outer:<id>|inner:<id>"`; a node function's k-th graph run after its first:
  `"<node>:<task id>|k"`, as LangGraph numbers them). An `interrupt()` inside pauses it (and
  its parent, whose task carries the question); when the parent resumes that task, the
  subgraph resumes from its own latest checkpoint, at the node that asked — its earlier
  nodes do not run again.
- `True`: the same, under `checkpoint_ns = "<node>"`: one thread per node that keeps its
  state across the parent's runs (new input is applied on top of it). When the parent
  travels back in time (a replay or fork), it starts from its state as of the checkpoint
  replayed (`engine.persistence.travel`); a parent's config that names one of its
  checkpoints (`checkpoint_map`, which its snapshots' configs carry) resumes it there.
- `False`: no checkpoints. An `interrupt()` inside still pauses the parent (through the
  parent's interrupt scope, which the calling task has set), and the resumed parent runs the
  subgraph again from its start.

The saver keeps a subgraph's checkpoints under the key `sub_key(thread_id, ns)`, a thread
of its own (`SubThread`), so savers need no notion of namespaces.
"""

from __future__ import annotations

from typing import Any

from nbgraph.checkpoint.subthreads import sub_key
from nbgraph.engine.core.nesting import NS_SEP, nested_ns
from nbgraph.engine.persistence.chain import next_task_ids
from nbgraph.engine.persistence.persist import Thread

__all__ = [
    "SubThread",
    "inherited_thread",
    "join_ns",
    "refuse_root_true",
    "subgraph_mode",
    "task_ns",
]


def join_ns(outer: str, part: str) -> str:
    """A namespace one level down: `outer|part` (LangGraph's separator)."""
    return f"{outer}|{part}" if outer else part


def task_ns(outer: str, node: str, task_id: str, mode: Any) -> str:
    """Where the graph of a subgraph task (`node`, `task_id`) inside namespace `outer` keeps
    its checkpoints: `outer|node:task id`; for `checkpointer=True` (`mode`), every part
    without its task id (`outer's nodes|node`), as `engine.core.nesting.nested_ns` names it."""
    ns = join_ns(outer, f"{node}:{task_id}")
    return NS_SEP.join(part.partition(":")[0] for part in ns.split(NS_SEP)) if mode is True else ns


def subgraph_mode(app: Any) -> Any:
    """How a subgraph node's graph keeps checkpoints inside its parent: its `checkpointer`
    (None, True or False); a saver of its own counts as None, as LangGraph leaves it aside
    inside a checkpointed parent."""
    mode = getattr(app, "checkpointer", None)
    return mode if isinstance(mode, bool) else None


class SubThread(Thread):
    """A subgraph's thread: its checkpoints in the parent's saver under `sub_key`.

    Attributes:
        root_id: the parent's thread id (what a config's `thread_id` says).
        ns: the checkpoint namespace, e.g. `"node:<task id>"`.
        parent_run, parent_task: the run and task that called the subgraph (None when the
            thread is only read, as `get_state` does).
        resume_from: the checkpoint the run resumes from, if the parent resumes the task.
        fresh: the run starts from its input, not from the namespace's checkpoints.
    """

    def __init__(self, saver: Any, spec: Any, root_id: str, ns: str) -> None:
        super().__init__(saver, spec, {"configurable": {"thread_id": sub_key(root_id, ns)}})
        self.root_id, self.ns = root_id, ns
        self.parent_run: Any = None
        self.parent_task: Any = None
        self.resume_from: Any = None
        self.fresh = False

    def restore(
        self, checkpoint_id: str | None = None, latest_id: str | None = None, listed: bool = False
    ) -> Any:
        """`Thread.restore`; a run that starts afresh (`fresh`) sees no checkpoint once."""
        if self.fresh and checkpoint_id is None:
            self.fresh = False
            return None
        return super().restore(checkpoint_id, latest_id, listed)

    def travel(self, restored: Any) -> None:
        """A subgraph's run travels as its parent's does (`inherited_thread` gave it the
        parent's `replay`)."""

    def enter(self, run: Any) -> Any:
        """Resume `run` from `resume_from` with the answers the parent got for its task
        (None: not resuming, so the run starts from its input)."""
        restored, self.resume_from = self.resume_from, None
        if restored is None:
            return None
        log = run.resume(restored)
        _give_answers(run, restored, self.parent_run, self.parent_task)
        return log


def inherited_thread(app: Any, caller: Any) -> SubThread | None:
    """The thread of a subgraph (`compile(checkpointer=None)` or `True`, or a saver of its
    own, which LangGraph leaves aside inside a node) run inside a node of a checkpointed run
    (`caller`: the node that starts it, `engine.core.nesting`, which also names its
    namespace); None outside one, or with `checkpointer=False`.

    A task the parent resumes resumes the subgraph where it stopped. Otherwise a
    `checkpointer=None` subgraph starts afresh; if its namespace has checkpoints already (a
    replay or fork of the parent runs a task of the same step again), its new run starts a
    new root there, and the old checkpoints stay in history. A node call's second graph run
    (and later ones) gets a namespace of its own, `node:<task id>|1`, ...

    A `checkpointer=True` subgraph starts from its latest state, or from a past one when the
    parent's run travels in time (`_travels`).

    Raises:
        RuntimeError: `checkpointer=True`, run outside a node (see `refuse_root_true`).
    """
    if caller is None:
        refuse_root_true(app)
        return None
    if caller.env.run.thread is None:  # (an unsaved parent: no mode to ask)
        return None
    mode = subgraph_mode(app)
    if mode is False:
        return None
    parent, task = caller.run, caller.task
    outer = parent.thread
    ns = NS_SEP.join(nested_ns(tuple(outer.ns.split(NS_SEP)) if outer.ns else (), caller, task.id))
    thread = SubThread(outer.saver, app.spec, outer.root_id, ns)
    thread.parent_run, thread.parent_task = parent, task
    thread.replay, thread.targets = outer.replay, outer.targets  # (the root run's)
    thread.parents = {**outer.parents, outer.ns: outer.head}  # (the step it runs in)
    if mode is True and _travels(thread, ns):
        return thread
    restored = thread.restore()
    if restored is None:
        return thread
    if task.id in parent.answers or task.step == parent.resumes_step:  # the parent
        # resumes the task that ran it (paused, or stopped by an error or the step limit)
        thread.resume_from = restored
    elif mode is None:
        thread.fresh = True
    return thread


def _travels(thread: SubThread, ns: str) -> bool:
    """Whether a `checkpointer=True` subgraph's run starts from a past checkpoint, and set
    `thread` to start there: the one the parent's config named for it (`Thread.targets`,
    LangGraph's `checkpoint_map`: it resumes there, its questions asked again), or, the
    first time it runs in a replay of its parent, the last one made before the replayed
    checkpoint (`Replay`: the run's input is applied on top of it; none: it starts empty).
    Later runs in the same parent run (a loop) start from its latest, as others do."""
    replay = thread.replay
    target = thread.targets.pop(ns, None) if thread.targets else None  # (taken once)
    if target is not None:
        thread.start_id = target
        thread.resume_from = thread.restore()
        if replay is not None:
            replay.first_visit(ns)
        return True
    if replay is None or not replay.first_visit(ns):
        return False
    past = replay.checkpoint_before(thread.saver, thread.thread_id)
    if past is None:  # a replay to before its first run
        thread.fresh = thread.restore() is not None
    thread.start_id = past
    return True


def refuse_root_true(app: Any) -> None:
    """`checkpointer=True` is a subgraph's own thread under its parent's: LangGraph refuses
    it on a graph run (or read) on its own.

    Raises:
        RuntimeError: `app` was compiled with `checkpointer=True`.
    """
    if app.checkpointer is True:
        raise RuntimeError(
            "checkpointer=True cannot be used for root graphs: it keeps a subgraph's thread "
            "under its checkpointed parent's; run this graph as a node of one, or compile it "
            "with a saver (compile(checkpointer=MemorySaver()))."
        )


def _give_answers(run: Any, restored: Any, parent: Any, task: Any) -> None:
    """Hand a resumed subgraph run the answers its parent got for `task`'s interrupts: each
    to the subgraph task that asked it (by interrupt id). An answer to a question the
    subgraph no longer waits for (its state was updated since) goes to its first task next,
    as LangGraph's resume value does."""
    mine = [(iid, value) for iid, (tid, value) in parent.resumed.items() if tid == task.id]
    if not mine:
        return
    pending = {i.id: tid for tid, paused in restored.paused.items() for i in paused["interrupts"]}
    first = next(iter(next_task_ids(restored)), (None, None))[0]
    for interrupt_id, value in mine:
        task_id = pending.get(interrupt_id, first)
        if task_id is None:
            continue
        run.answer(task_id, interrupt_id, value)  # (a subgraph of this one finds it by id)
