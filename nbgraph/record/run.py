"""`RunRecord`: one recorded run, and the questions a person asks of it, answered as tables.
`nbgraph.Run` (the notebook layer, `nbgraph.notebook.run`) adds the drawings and the inspector.

Everything here is derived from the engine's `RunLog` when first asked for, then cached:
the state tree, states at any point, and pandas tables. pandas is imported only by the
tables, never by `import nbgraph`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from typing import TYPE_CHECKING, Any, Self

from nbgraph.blueprint import GraphSpec
from nbgraph.engine.facts import RunLog, restored_values
from nbgraph.errors import CheckpointFileError, InvalidArgumentError, NbgraphError
from nbgraph.isolation import isolate
from nbgraph.primitives import MISSING
from nbgraph.record.effects import EFFECT_COLUMNS, Effect, collector_paused, effect_rows
from nbgraph.record.lineages.states import BranchTimeline
from nbgraph.record.run_context import ContextFacts
from nbgraph.record.subruns.trees import run_tree, subrun_positions
from nbgraph.record.tables import (
    diff_frame,
    field_history_frame,
    frame,
    log_task_frame,
    states_frame,
    task_frame,
)
from nbgraph.record.text import plural, status_text
from nbgraph.record.timeline import Timeline
from nbgraph.record.tree import StateTree, TreeNode

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

    from nbgraph.record.whatif.remerge import RemergedRun

__all__ = ["NotSupportedForBranchesError", "RunRecord", "StateRef"]

StateRef = int | str | TreeNode | tuple[str, int]
"""A point of a run: a step number, a tree node (or its id), or `(node_name, occurrence)`."""


class NotSupportedForBranchesError(NbgraphError, NotImplementedError):
    """A what-if analysis that replays supersteps, asked of a branch-lineage run."""


class RunRecord(ContextFacts):
    """One recorded run of a compiled graph.

    >>> from nbgraph import START, StateGraph
    >>> app = (StateGraph(dict, reducers={"log": "append"})
    ...        .add_node("a", lambda s: {"log": ["a"]}).add_edge(START, "a").compile())
    >>> run = app.run({"log": []})
    >>> run.output, run.state_at(0), run.state_at(("a", 0))
    ({'log': ['a']}, {'log': []}, {'log': []})
    """

    def __init__(self, log: RunLog) -> None:
        self.log = log
        self.timeline = BranchTimeline(log) if log.semantics == "branches" else Timeline(log)

    def __repr__(self) -> str:
        steps = len(self.log.steps) - 1
        tasks = sum(len(s.tasks) for s in self.log.steps[1:])
        return (
            f"<Run {status_text(self.status)}: {plural(steps, 'superstep')}, "
            f"{plural(tasks, 'task')}>"
        )

    # --- the facts -------------------------------------------------------------------------

    @property
    def status(self) -> str:
        """`"done"`, `"failed"`, `"running"`, `"interrupted"` or `"to_parent"`."""
        return self.log.status

    @property
    def error(self) -> BaseException | None:
        return self.log.error

    @property
    def warnings(self) -> list[str]:
        return self.log.warnings

    @property
    def graph(self) -> Any:
        """The compiled graph's `GraphSpec`."""
        return self.log.graph

    @property
    def last_step(self) -> int:
        """The last step that was applied (0 if only the input was)."""
        return next((s.step for s in reversed(self.log.steps) if s.applied), -1)

    @cached_property
    def output(self) -> dict[str, Any]:
        """What `invoke` returned (or would have, for a run that failed: the state so far)."""
        spec = self.graph
        final = self.log.final if self.status == "done" else self._last_state()
        keys = final if spec.open_schema else spec.output.fields
        return {k: isolate(final[k]) for k in keys if k in final}

    def _last_state(self) -> dict[str, Any]:
        last = self.last_step
        return self.timeline.after(last) if last >= 0 else {}

    @cached_property
    def tree(self) -> StateTree:
        """The state tree: input at the root, tasks, per-step merges, root resets; a task
        that ran graphs has their trees as children (`StateTree.subtrees`)."""
        with collector_paused():  # (many small acyclic nodes: see `collector_paused`)
            return run_tree(self.log)

    # --- states ----------------------------------------------------------------------------

    def state_at(self, ref: StateRef) -> dict[str, Any]:
        """The full state at a point of the run (a copy you may change).

        Args:
            ref: a step number (the state after that superstep; -1 is the input as given,
                0 the input applied); a tree node or its id (a task: the state it read, a
                `Send` task: the argument it received; a merge or reset: the state it made);
                or `(node_name, occurrence)` — the state that node read on its
                `occurrence`-th run (0 first, -1 last).

        Raises:
            ValueError / KeyError / IndexError: naming the step, id or node that is not there.
        """
        node = self._node(ref)
        if node is None:
            assert isinstance(ref, int)
            return self.timeline.after(ref)
        if node.kind == "input":
            return isolate(self.log.input)
        if node.kind == "merge":
            return self.timeline.after(node.step)
        if node.kind == "join" or (node.kind == "reset" and self.log.semantics == "branches"):
            return self.timeline.lineages.after(node.id)  # type: ignore[attr-defined]
        if node.kind == "reset":
            return isolate(dict(node.writes))
        if node.kind == "fork":  # another branch of the thread: read from the checkpointer
            checkpoint_id = node.id.removeprefix("fork:")
            values = restored_values(self.log.source, self.graph, self.log.config, checkpoint_id)
            return {k: isolate(v) for k, v in values.items()}
        if node.arg is not MISSING:
            return isolate(node.arg)
        return self._task_view(node)

    def _task_view(self, node: TreeNode) -> dict[str, Any]:
        if self.log.semantics == "branches":  # the state of its own lineage
            state = self.timeline.lineages.after(node.parents[0])  # type: ignore[attr-defined]
        else:
            state = self.timeline.start_of(node.step)
        limit = self.log.config.get("recursion_limit")
        for name, field in self.graph.fields.items():
            if field.managed and isinstance(limit, int):  # RemainingSteps, as the node saw it
                state[name] = limit - node.step
        spec = self.graph.nodes.get(node.name)
        if spec is not None and spec.input is not None:
            state = {k: v for k, v in state.items() if k in spec.input.fields}
        return state

    def _node(self, ref: StateRef) -> TreeNode | None:
        if isinstance(ref, TreeNode):
            return ref
        if isinstance(ref, bool) or not isinstance(ref, (int, str, tuple)):
            raise TypeError(
                f"A point of a run is a step number, a tree node id, or (node_name, occurrence); "
                f"got {type(ref).__name__} {ref!r}."
            )
        if isinstance(ref, int):
            return self.tree.root if ref == -1 else None
        if isinstance(ref, str):
            if ref not in self.tree.nodes and f"task:{ref}" in self.tree.nodes:
                return self.tree[f"task:{ref}"]  # a task id as `run.steps` shows it
            return self.tree[ref]
        name, occurrence = ref
        return self.tree.occurrence(name, occurrence)

    @classmethod
    def from_checkpointer(
        cls, saver: Any, thread_id: str, checkpoint_id: str | None = None, graph: Any = None
    ) -> Self:
        """The record of a checkpointed thread, rebuilt from its saver (any process).

        Its history runs from the thread's first checkpoint to `checkpoint_id` (default: the
        latest), so a fork's checkpoint gives that branch; tables and drawings are those of
        a live run. It needs no graph object, whatever the reducers; pass the compiled graph
        (`graph=app`) to have its functions (for `remerge` and friends): it must have the
        recorded fields, nodes and edges.
        """
        from nbgraph.record.checkpoints import log_from_checkpointer

        if not callable(getattr(saver, "get", None)) or not isinstance(thread_id, str):
            raise InvalidArgumentError(
                "Run.from_checkpointer(saver, thread_id): expected a checkpoint saver "
                f"(MemorySaver, SqliteSaver, ...) and a thread id string, got "
                f"{type(saver).__name__} and {type(thread_id).__name__}. For a compiled "
                "graph use Run.from_checkpointer(app.checkpointer, config['configurable']"
                "['thread_id'], graph=app)."
            )

        spec = getattr(graph, "spec", graph)
        if spec is not None and not isinstance(spec, GraphSpec):
            raise InvalidArgumentError(
                "Run.from_checkpointer(..., graph=): expected the compiled graph that wrote the "
                f"thread, or None, got {type(graph).__name__}."
            )
        if checkpoint_id is not None and not isinstance(checkpoint_id, str):
            raise InvalidArgumentError(
                "Run.from_checkpointer(..., checkpoint_id=): expected a checkpoint id string or "
                f"None, got {type(checkpoint_id).__name__}."
            )
        return _replayed(
            cls,
            lambda: log_from_checkpointer(saver, thread_id, checkpoint_id, spec),
            f"Thread {thread_id!r} of {saver!r}",
        )

    # --- tables ----------------------------------------------------------------------------

    @cached_property
    def effect_list(self) -> list[Effect]:
        """`effects` as a list of `Effect` named tuples (no pandas needed)."""
        if self.log.semantics == "branches":
            from nbgraph.record.lineages.effects import lineage_effect_rows  # (import time)

            with collector_paused():
                return lineage_effect_rows(self.log)
        return effect_rows(self.log)

    @cached_property
    def effects(self) -> pd.DataFrame:
        """One row per (step, field) written: before, writes with writers, reducer, after.

        Columns: step, field, reducer, before, writes, writers, after, changed, applied,
        conflict, overwrite_bypass, dropped_key, root_reset, point (the state tree node the
        row's `after` belongs to), winner (at a join of branch lineages, the branch whose
        value was kept). Values stay Python objects;
        `MISSING` marks "no value". A list's `before`/`after` is a read-only `ListPrefix`
        sharing one list with the field's other rows (so a growing log costs what was
        written): it reads and compares like a list; `list(cell)` gives a list to change.
        """
        with collector_paused():
            return frame(self.effect_list, EFFECT_COLUMNS)

    @cached_property
    def steps(self) -> pd.DataFrame:
        """One row per task: step, node, task id, kind (`"edge"`, `"send"`, or `"update"` for an
        `update_state` write), triggers, fields written, timing, status."""
        with collector_paused():
            positions = subrun_positions(self.log)  # (no tree made: the log's columns)
            table = None if "tree" in vars(self) else log_task_frame(self.log, positions)
            return table if table is not None else task_frame(self.tree.tasks(), positions)

    @cached_property
    def custom(self) -> pd.DataFrame:
        """What nodes wrote with `get_stream_writer()`: step, node, task_id, index, chunk."""
        from nbgraph.record.custom import custom_frame

        return custom_frame(self.log)

    @cached_property
    def states(self) -> pd.DataFrame:
        """The state after each applied superstep: one row per step, one column per field.

        A value a step did not change is the same object as in the row before (no copies);
        a list is a read-only `ListPrefix`, as in `effects`.
        In a branch-lineage run, a row is the delta merge of the lineages alive after the
        step (what they would make if they met there); the last row is END's merge.
        """
        return states_frame(self)

    def field_history(self, field: str) -> pd.DataFrame:
        """One field through the run: per applied step, its value, and who wrote what."""
        return field_history_frame(self, field)

    def diff(self, a: StateRef, b: StateRef) -> pd.DataFrame:
        """Field by field, what differs between two points of this run.

        Columns: field, change (`"added"`, `"removed"`, `"changed"`), from (at `a`), to (at `b`).
        """
        return diff_frame(self.state_at(a), self.state_at(b), "from", "to")

    def compare(self, other: RunRecord) -> pd.DataFrame:
        """Two runs aligned step by step: where the tasks or the state after a step differ.

        Columns: step, what (`"tasks"`, `"outcome"` or a field name), this, other, note.
        Messages are compared by what they say (role, content, name, tool calls): two runs
        give them fresh ids, so a field whose messages differ only in their ids gets a row
        of its own with `note` `"only message ids differ"` and the differing ids as this and
        other (filter on `note` to drop them); every other row has an empty `note`.

        >>> from nbgraph import START, StateGraph, add_messages
        >>> app = (StateGraph(dict, reducers={"chat": add_messages})
        ...        .add_node("a", lambda s: {"chat": [("ai", "hi")]}).add_edge(START, "a")
        ...        .compile())
        >>> table = app.run({"chat": []}).compare(app.run({"chat": []}))
        >>> table[["step", "what", "note"]].values.tolist()
        [[1, 'chat', 'only message ids differ']]

        When either run used branch lineages (`compile(semantics="branches")`), the runs are
        aligned by node instead — the k-th run of each node — and each row says why it
        differs; columns: node, occurrence, what (`"outcome"`, `"runs"`, a field, or a field
        of the `"END"` state), this, other, why (see `nbgraph.record.compare.nodes`).
        """
        if not isinstance(other, RunRecord):
            raise InvalidArgumentError(
                f"run.compare(other): other must be another run (a Run), got "
                f"{type(other).__name__}."
            )
        if "branches" in (self.log.semantics, other.log.semantics):
            from nbgraph.record.compare.nodes import compare_by_node

            return compare_by_node(self, other)
        from nbgraph.record.compare.steps import compare_by_step

        with collector_paused():
            return compare_by_step(self, other)

    # --- files -----------------------------------------------------------------------------

    def to_json(self) -> str:
        """This run as JSON text: values kept exactly when they are JSON, models or messages."""
        from nbgraph.record.files.serialize import run_to_json  # serialize reads Run: import late

        with collector_paused():
            return run_to_json(self)

    @classmethod
    def from_json(cls, text: str, models: Iterable[type] | None = None, graph: Any = None) -> Self:
        """A run read back from `to_json()` text.

        No module is imported because the text names it: a saved model, dataclass or Enum
        comes back as its class if `models` lists it or it is imported already, else as a
        placeholder showing its data (see docs/VALUES.md). Node functions are not kept: pass
        the compiled graph (`graph=app`) to have them (for `remerge` and friends); it must have
        the recorded fields, nodes and edges.
        """
        from nbgraph.record.files.serialize import checked_run, log_from_json

        spec = getattr(graph, "spec", graph)
        with collector_paused():
            return checked_run(cls, log_from_json(text, models=models, graph=spec))

    def save(self, path: str | Path) -> Path:
        """Write this run to `path` as UTF-8 JSON, atomically; returns the path."""
        from nbgraph.record.files.serialize import save_run

        with collector_paused():
            return save_run(self, path)

    @classmethod
    def load(
        cls, path: str | Path, models: Iterable[type] | None = None, graph: Any = None
    ) -> Self:
        """A run read from a file `save` wrote; the file is only read, never changed.

        `models`: the classes saved values may come back as, as for `from_json`. Pass the
        compiled graph (`graph=app`) to have its functions (for `remerge` and friends); it
        must have the recorded fields, nodes and edges.
        """
        from nbgraph.record.files.serialize import checked_run, file_label, load_log

        with collector_paused():  # (a long run: many small acyclic objects, none garbage)
            log = load_log(path, models=models, graph=getattr(graph, "spec", graph))
            return checked_run(cls, log, file_label(path))

    # --- what-if analyses ------------------------------------------------------------------

    def writers(self) -> pd.DataFrame:
        """Per field a node wrote: its writers, steps, concurrent writes, and order dependence.

        Columns: field, reducer, writers, steps, writes, concurrent_steps, overwrite_conflict,
        order_dependent, order_basis (`"tried"` or `"guessed"`); see
        `nbgraph.record.whatif.analysis.writers` for the rules.

        >>> from nbgraph import START, StateGraph
        >>> app = (StateGraph(dict, reducers={"log": "append"})
        ...        .add_node("a", lambda s: {"log": ["a"]})
        ...        .add_node("b", lambda s: {"log": ["b"]})
        ...        .add_edge(START, "a").add_edge(START, "b").compile())
        >>> row = app.run({"log": []}).writers().iloc[0]
        >>> row.field, row.writers, int(row.concurrent_steps), bool(row.order_dependent)
        ('log', ['a', 'b'], 1, True)
        """
        from nbgraph.record.whatif.analysis import writers  # (its imports cost `import nbgraph`)

        return writers(self.log, self.graph, self.timeline)

    def remerge(self, reducers: dict[str, Any]) -> RemergedRun:
        """This run had some fields other reducers: the recorded writes replayed, no node re-run.

        Args:
            reducers: `{field: registered name, two-argument callable, or "overwrite"}`.

        Returns:
            A new `Run` to `compare` with this one; its `remerge_notes` say where nodes ran on
            a state that differs, and `routing_changes` where a router would choose otherwise.

        >>> from nbgraph import START, StateGraph
        >>> app = (StateGraph(dict, reducers={"log": "append"})
        ...        .add_node("a", lambda s: {"log": ["a"]})
        ...        .add_node("b", lambda s: {"log": ["b"]})
        ...        .add_edge(START, "a").add_edge(START, "b").compile())
        >>> new = app.run({"log": []}).remerge({"log": "overwrite"})
        >>> new.status, type(new.error).__name__
        ('failed', 'InvalidUpdateError')
        """
        from nbgraph.record.whatif.remerge import remerge  # (import time, as `writers`)

        self._supersteps_only("remerge")
        return remerge(self, reducers)

    def order_sensitivity(self, max_orders: int = 120, seed: int = 0) -> pd.DataFrame:
        """The (step, field)s whose value depends on the order of the step's concurrent writes.

        Columns: step, field, reducer, orders_tried, order_a (the recorded order), result_a,
        order_b, result_b (an order that disagrees). All task orders are tried when there are
        at most `max_orders`, else `max_orders` drawn with `random.Random(seed)`.

        >>> from nbgraph import START, StateGraph
        >>> app = (StateGraph(dict, reducers={"log": "append", "n": "add"})
        ...        .add_node("a", lambda s: {"log": ["a"], "n": 1})
        ...        .add_node("b", lambda s: {"log": ["b"], "n": 2})
        ...        .add_edge(START, "a").add_edge(START, "b").compile())
        >>> table = app.run({"log": []}).order_sensitivity()
        >>> table[["field", "order_a", "result_a", "order_b", "result_b"]].values.tolist()
        [['log', ['a', 'b'], ['a', 'b'], ['b', 'a'], ['b', 'a']]]
        """
        from nbgraph.record.whatif.analysis import order_sensitivity  # (import time)

        self._supersteps_only("order_sensitivity")
        return order_sensitivity(self.log, self.graph, self.timeline, max_orders, seed)

    def _supersteps_only(self, what: str) -> None:
        if self.log.semantics == "branches":
            raise NotSupportedForBranchesError(
                f"run.{what}() replays supersteps, and this run used branch lineages "
                '(compile(semantics="branches")). Its merges are the join rows of run.effects '
                "(each branch's value, the strategy, the result, the winner); to ask this "
                "question, run the graph with supersteps and compare: "
                "graph.compile().run(input).compare(this_run)."
            )


def _replayed(cls: type[RunRecord], read: Any, where: str) -> Any:
    """`cls(read())` once its record replays (as a run file's is: `serialize.replay`).

    Raises:
        CheckpointFileError: the saved checkpoints do not fit together, naming `where`.
    """
    from nbgraph.record.files.serialize import replay
    from nbgraph.reducers import replay_budget

    try:
        with replay_budget():  # (one for the whole read: linear in the thread)
            run = cls(read())
            replay(run, heads=False)  # (a thread's heads after update_state: not all points)
    except NbgraphError:
        raise
    except (RecursionError, MemoryError) as error:
        raise CheckpointFileError(f"{where} holds a run too large to read ({error}).") from None
    except Exception as error:
        raise CheckpointFileError(
            f"{where} cannot be read as a run: its checkpoints do not fit together "
            f"({type(error).__name__}: {str(error).rstrip('.')[:200]}); the file is damaged or "
            "was edited."
        ) from error
    return run
