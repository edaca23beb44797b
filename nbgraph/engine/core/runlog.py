"""The raw facts of a run, as the engine produces them: input, steps, tasks, writes, resets.

The engine appends to a `RunLog` as it goes; `nbgraph.record` builds the state tree and the
per-field reducer tables from it. Values before and after a step are not stored: they are
rebuilt by replaying the recorded writes through the same reducers (`replay_step`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from nbgraph.engine.core.writes import (
    FieldChange,
    applied_writes,
    apply_writes,
    clear_ephemeral,
    group_writes,
    step_changes,
)
from nbgraph.isolation import isolate

if TYPE_CHECKING:
    from nbgraph.blueprint import GraphSpec
    from nbgraph.engine.core.tasks import Task
    from nbgraph.schema import FieldSpec

__all__ = [
    "Join",
    "RootReset",
    "RunLog",
    "RunStatus",
    "StepLog",
    "initial_values",
    "join_data",
    "replay_step",
    "reset_data",
]

RunStatus = Literal["running", "done", "failed", "interrupted", "to_parent"]


@dataclass(frozen=True, slots=True)
class RootReset:
    """A join's `merge=` or an edge's `state_filter=` replaced the whole state.

    Attributes:
        step: the step whose tasks start from the new root.
        node: the node it was done for.
        reason: `"merge"` or `"state_filter"`.
        sources: the nodes whose states went in.
        dropped: fields that existed before and do not after.
        values: the new root (isolated).
    """

    step: int
    node: str
    reason: str
    sources: tuple[str, ...]
    dropped: tuple[str, ...]
    values: dict[str, Any]
    id: str = ""
    parent: str = ""


@dataclass(frozen=True, slots=True)
class Join:
    """With `semantics="branches"`: lineages merged into one, for a node (or END).

    Attributes:
        step: the step whose task reads the merge (for END: the last step).
        id: its state tree id, `"join:<step>:<node>"` (`"join:end"` for END).
        node: the node it was made for, or END.
        parents: the branch heads merged, in routing order (state tree ids).
        strategy: `"delta"`, `"fold"` or the strategy's name.
        base: the branches' common ancestor (a tree id; `""` if they have none).
        applied: for `"delta"`, the tree ids of the tasks (and resets) whose writes since
            `base` were applied, in order.
        values: for `"fold"` and strategies, the merged state (a root reset; isolated).
        dropped: fields some branch had that the merged state does not.
    """

    step: int
    id: str
    node: str
    parents: tuple[str, ...]
    strategy: str
    base: str = ""
    applied: tuple[str, ...] = ()
    values: dict[str, Any] | None = None
    dropped: tuple[str, ...] = ()


def _same(value: Any) -> Any:
    return value


def reset_data(
    reset: RootReset, values: Callable[[Any], Any] = _same, name: Callable[[Any], Any] = _same
) -> dict[str, Any]:
    """A root reset as plain data; `values` encodes its state, `name` each dropped field
    (a checkpoint keeps them as they are, a run file encodes them). The record reads it back
    (`nbgraph.record.log_data`)."""
    return {
        "node": reset.node,
        "reason": reset.reason,
        "sources": list(reset.sources),
        "dropped": [name(field) for field in reset.dropped],
        "values": values(reset.values),
        "id": reset.id,
        "parent": reset.parent,
    }


def join_data(
    join: Join, values: Callable[[Any], Any] = _same, name: Callable[[Any], Any] = _same
) -> dict[str, Any]:
    """A join as plain data; `values` encodes its merged state (fold, strategies). The record
    reads it back (`nbgraph.record.log_data`)."""
    return {
        "step": join.step,
        "id": join.id,
        "node": join.node,
        "parents": list(join.parents),
        "strategy": join.strategy,
        "base": join.base,
        "applied": list(join.applied),
        "values": None if join.values is None else values(join.values),
        "dropped": [name(field) for field in join.dropped],
    }


@dataclass(slots=True)
class StepLog:
    """One superstep: its resets, its tasks in write order, and what each field took.

    `applied` is False for a step that failed (a node raised, or its writes conflicted):
    its tasks are kept, its writes never reached the state. `afters` (only in runs loaded
    from a file) holds the values after the step of fields whose reducer cannot be found
    again (a lambda, say): replay takes those instead of folding.

    With `semantics="branches"`, `joins` are the merges its tasks read, `heads` the
    lineages alive after it (state tree ids, in routing order), and `points` (a resumed
    run's first step) the lineage points restored from a checkpoint, as plain data.
    """

    step: int
    tasks: list[Task]
    fields: Mapping[str, FieldSpec]
    written: tuple[str, ...] = ()
    resets: list[RootReset] | tuple[()] = ()
    cleared: tuple[str, ...] = ()
    merged: list[tuple[str, str, Any]] | tuple[()] = ()
    applied: bool = False
    afters: dict[str, Any] | None = None
    joins: list[Join] | tuple[()] = ()
    heads: tuple[str, ...] = ()
    points: tuple[dict[str, Any], ...] = ()

    @property
    def changes(self) -> list[FieldChange]:
        """Per written field, its writes (writer, value) in order and the reducer's name.

        Computed from the tasks when asked, so a run keeps only what was written.
        """
        return step_changes(self.fields, applied_writes(self.fields, self.tasks, self.merged))

    @property
    def failed(self) -> list[Task]:
        return [task for task in self.tasks if task.error is not None]


@dataclass(eq=False)
class RunLog:
    """Everything one run did, in order.

    Attributes:
        graph: the compiled graph's spec.
        input: the input as given (isolated).
        config: the run's config.
        steps: step 0 (the input applied) and every superstep after it: any sequence of
            `StepLog`s (an engine run's: `engine.core.columns.StepColumns`, kept as columns;
            a loaded run's: a list or its own sequence). Add a step with `steps.append`.
        status: `"running"`, `"done"`, `"failed"`, `"interrupted"` (paused for an answer,
            or at an `interrupt_before`/`interrupt_after` breakpoint) or `"to_parent"` (a
            subgraph's run stopped by `Command.PARENT`: see `engine.subgraph_edges`).
        error: the exception that ended the run, if any.
        warnings: messages about dropped keys and the like, in order.
        final: the engine's values when the run stopped (read-only: copy before changing).
        branches: for a record rebuilt from a checkpointer, the thread's checkpoints on other
            branches (forks, replays), oldest first.
        source: for such a record, the checkpointer it was read from.
        semantics: `"supersteps"` or `"branches"` (the graph was compiled with).
        end: with `"branches"`, the merge of the lineages that reached END.
        context: what `invoke(..., context=...)` passed (None if nothing).
        store_ops: the store calls the nodes made (`engine.store_record.StoreOp`), in order.
    """

    graph: GraphSpec
    input: Any
    config: dict[str, Any]
    steps: Sequence[StepLog] = field(default_factory=list)
    status: RunStatus = "running"
    error: BaseException | None = None
    warnings: list[str] = field(default_factory=list)
    final: dict[str, Any] = field(default_factory=dict)
    branches: list[Any] = field(default_factory=list)
    source: Any = None
    semantics: str = "supersteps"
    end: Join | None = None
    context: Any = None
    store_ops: list[Any] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"RunLog(status={self.status!r}, steps={len(self.steps)})"

    def tasks(self) -> Iterator[Task]:
        """Every task of the run, in step and write order."""
        for step in self.steps:
            yield from step.tasks


def initial_values(graph: GraphSpec) -> dict[str, Any]:
    """Empty starting values of the reducer fields that can be built empty."""
    return {
        name: spec.initial()
        for name, spec in graph.fields.items()
        if spec.initial is not None and not spec.managed
    }


def replay_step(graph: GraphSpec, values: dict[str, Any], log: StepLog) -> dict[str, Any]:
    """Apply one recorded step to `values` (owned by the caller) and return them.

    A step that failed changes nothing (its resets did happen: they ran before its tasks).
    """
    for reset in log.resets:
        values = {name: isolate(value) for name, value in reset.values.items()}
    if not log.applied:
        return values
    grouped = group_writes(applied_writes(graph.fields, log.tasks, log.merged))
    apply_writes(graph.fields, values, grouped, log.step, pinned=log.afters)
    clear_ephemeral(log.cleared, values, ())
    return values
