"""`Run`: the record of one run (`nbgraph.record.RunRecord`) with its pictures: the graph with
the run drawn over it, the state tree, the inspector, and its display in a notebook.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from nbgraph.engine.facts import unapplied_positions
from nbgraph.errors import InvalidArgumentError
from nbgraph.record.run import RunRecord
from nbgraph.record.subruns.runs import subrun_logs

__all__ = ["Run"]


def _values(frame: Any) -> Any:
    """`frame` displayed as `views.panels.table_view.values_table_html` (its data unchanged)."""
    from nbgraph.views.panels.table_view import shown, values_table_html

    return shown(frame, values_table_html)


class Run(RunRecord):
    """One recorded run of a compiled graph: its tables and states (`RunRecord`), and
    its drawings.

    >>> from nbgraph import START, StateGraph
    >>> app = (StateGraph(dict, reducers={"log": "append"})
    ...        .add_node("a", lambda s: {"log": ["a"]}).add_edge(START, "a").compile())
    >>> run = app.run({"log": []})
    >>> run.output, run.state_at(0), run.state_at(("a", 0))
    ({'log': ['a']}, {'log': []}, {'log': []})

    Attributes:
        parent: for a subrun (see `subruns`), the `Run` whose task started it; else None.
        task: for a subrun, the id of that task (`parent.steps.task_id`); else None.
        app: the compiled graph that made this run in this session (None for a run read
            from a file): what `fork` continues with.
        checkpoint_head: with a checkpointer, the thread's checkpoint this run ended at.
        forks: the `Fork`s made from this run (`fork`, or the inspector's "edit and fork
            here"), oldest first; the branches a fork shows share this run's list.
    """

    parent: Run | None = None
    task: str | None = None
    app: Any = None
    checkpoint_head: str | None = None
    shown_live_in: int | None = None
    """The notebook cell (execution count) whose live view showed this run (`run(...,
    live=True)`): displayed in that same cell, it is one line, not the run again."""

    @cached_property
    def effects(self) -> Any:
        """`RunRecord.effects` (the same columns and cells), shown compactly in a notebook:
        flags in one column, quotes kept, tree ids in words (`views.panels.table_view`)."""
        from functools import partial

        from nbgraph.views.panels.table_view import effects_table_html, ending, shown

        steps = self.log.steps  # (only the steps not applied made as objects)
        stopped = [steps[position] for position in unapplied_positions(steps)]
        paused = frozenset(s.step for s in stopped if ending(s.tasks) == "paused")
        return shown(RunRecord.effects.func(self), partial(effects_table_html, paused=paused))

    @cached_property
    def steps(self) -> Any:
        """`RunRecord.steps`, shown with readable durations (`views.panels.table_view`)."""
        from nbgraph.views.panels.table_view import shown, steps_table_html

        return shown(RunRecord.steps.func(self), steps_table_html)

    @cached_property
    def custom(self) -> Any:
        """`RunRecord.custom`, shown with quotes kept
        (`views.panels.table_view.values_table_html`)."""
        return _values(RunRecord.custom.func(self))

    @cached_property
    def states(self) -> Any:
        """`RunRecord.states`, shown with quotes kept and one word for no value."""
        return _values(RunRecord.states.func(self))

    def field_history(self, field: str) -> Any:
        """`RunRecord.field_history`, shown with quotes kept and one word for no value."""
        return _values(super().field_history(field))

    def diff(self, a: Any, b: Any) -> Any:
        """`RunRecord.diff`, shown with quotes kept and one word for no value."""
        return _values(super().diff(a, b))

    def compare(self, other: Any) -> Any:
        """`RunRecord.compare`, shown with quotes kept and one word for no value."""
        return _values(super().compare(other))

    def order_sensitivity(self, max_orders: int = 120, seed: int = 0) -> Any:
        """`RunRecord.order_sensitivity` (the same columns and cells), shown with each result
        whole, one item a line, quotes kept, the differing items marked
        (`views.panels.order_view`)."""
        from nbgraph.views.panels.order_view import order_table_html
        from nbgraph.views.panels.table_view import shown

        return shown(RunRecord.order_sensitivity(self, max_orders, seed), order_table_html)

    @cached_property
    def subruns(self) -> list[Run]:
        """The runs of graphs started inside this run's tasks (a subgraph added as a node,
        or a graph a node's function invoked), in start order; each a full `Run` with
        `.parent` (this run) and `.task` (the id of the task that started it). A subrun's
        own subruns nest the same way."""
        runs = []
        for task_id, log in subrun_logs(self.log):
            sub = Run(log)
            sub.parent, sub.task = self, task_id
            runs.append(sub)
        return runs

    @classmethod
    def from_langgraph(cls, app: Any, config: Any) -> Run:
        """The record of a LangGraph thread: `app` is a compiled LangGraph graph with a
        checkpointer, `config` names the thread (and optionally a checkpoint: the history
        then ends there, so a fork's checkpoint gives that branch).

        Read through LangGraph's public API only (`get_state_history`, the checkpointer's
        pending writes, `app.builder` and its channels for each field's reducer); langgraph
        is imported by neither. What LangGraph's history cannot tell is in `run.warnings`.

        Raises:
            NotALangGraphError: `app` is not a compiled LangGraph graph.
            LangGraphHistoryError: it has no checkpointer, the thread no checkpoints, or the
                history no task results.
        """
        from nbgraph.record.langgraph.history import log_from_langgraph

        if not isinstance(config, Mapping):
            raise InvalidArgumentError(
                "Run.from_langgraph(app, config): config must be a dict like "
                f"{{'configurable': {{'thread_id': '1'}}}}, got {type(config).__name__} "
                f"{str(config)[:40]!r}."
            )
        return cls(log_from_langgraph(app, config))

    def state_at(self, ref: Any) -> dict[str, Any]:
        """As `RunRecord.state_at`; a `fork:` node of a run imported from LangGraph gives
        the state LangGraph shows at that checkpoint."""
        source = self.log.source
        if isinstance(ref, str) and ref.startswith("fork:") and hasattr(source, "values"):
            self.tree[ref]  # an unknown id raises as for any other run
            return source.values(ref.removeprefix("fork:"))
        return super().state_at(ref)

    def draw(self, step: int | None = None, branch: str | None = None, expand: bool = True) -> Any:
        """The graph with this run drawn over it, as a `graphviz.Digraph`.

        Args:
            step: highlight that superstep's tasks (and fade the rest).
            branch: a task id (`run.steps.task_id`): highlight the chain that led to it.
            expand: a node that ran a graph is a cluster holding that graph with its
                subruns' counts (what ran inside, how often); False: one box.
        """
        from nbgraph.views.drawings.dot import graph_dot
        from nbgraph.views.drawings.overlay import run_overlay

        if step is not None and (type(step) is not int):
            raise InvalidArgumentError(
                f"run.draw(step=): expected a step number or None, got {step!r}."
            )
        if branch is not None and not isinstance(branch, str):
            raise InvalidArgumentError(
                "run.draw(branch=): expected a task id (run.steps.task_id) or None, got "
                f"{branch!r}."
            )
        overlay = run_overlay(self, step=step, branch=branch)
        return graph_dot(self.graph, overlay, expand=expand)

    def draw_tree(self, legend: bool = True) -> Any:
        """The state tree as a `graphviz.Digraph` (long runs summarised).

        Args:
            legend: shown in a notebook, one line under the picture says what the drawing's
                edge styles mean; False leaves it out. The legend is never part of the
                DOT text: it never widens the drawing.
        """
        from nbgraph.record.effects import collector_paused
        from nbgraph.views.drawings.tree_dot import tree_dot

        if not isinstance(legend, bool):
            raise InvalidArgumentError(
                f"run.draw_tree(legend=): expected True or False, got {legend!r}."
            )
        with collector_paused():  # (a long run's tree: the collector would walk it again)
            return tree_dot(self, legend=legend)

    def fork(self, step: int, values: dict[str, Any], as_node: str | None = None) -> Any:
        """Edit the state after `step` and run on from there: `update_state(values)` on that
        step's checkpoint, then the run continued on the same app (a checkpointer needed).
        Returns a `nbgraph.notebook.fork.Fork`: the new run, and both branches of the
        thread as records whose state trees show each other."""
        from nbgraph.notebook.fork import fork

        made = fork(self, step, values, as_node)
        self.forks.append(made)
        made.original.forks = made.branch.forks = self.forks  # (forks made from either)
        return made

    @cached_property
    def forks(self) -> list[Any]:
        """The `Fork`s made from this run, oldest first (see `fork`)."""
        return []

    @property
    def questions(self) -> list[Any]:
        """The interrupts this run is paused at (`nbgraph.notebook.answer.Question`: node,
        task id, interrupt id, value), in task order; [] unless it is paused at one."""
        from nbgraph.notebook.answer import questions

        return questions(self)

    def answer(self, resume: Any, interrupt_id: str | None = None) -> Run:
        """Answer this paused run: `Command(resume=resume)` on its thread, run on the same
        app; returns the thread so far (this run's steps, then the resumed ones). With
        several questions waiting, pass `{interrupt_id: answer}` or `interrupt_id=`.

        Raises:
            AnswerError: not paused at an interrupt, no checkpointer, an unknown id, or the
                thread moved on since (`answer_problem` says which).
        """
        from nbgraph.notebook.answer import answer

        grown = answer(self, resume, interrupt_id)
        grown.forks = self.forks  # (the thread's forks, whichever of its runs made them)
        return grown

    def catch_up(self, grown: Run) -> Run:
        """Make this object the record of `grown`, the thread this run paused on, grown by
        an answer (`answer`, `review_calls`): its steps, status and tables become `grown`'s.
        The inspector's answer panel does this, so the run a notebook holds and the
        inspector show the same thing after an answer. Returns this run.

        Raises:
            InvalidArgumentError: `grown` is not a `Run`.
        """
        if not isinstance(grown, Run):
            raise InvalidArgumentError(
                f"run.catch_up(grown): expected the Run an answer returned, got "
                f"{type(grown).__name__}."
            )
        if grown is not self:
            self.__dict__.clear()  # (its cached tables too: they are the paused run's)
            self.__dict__.update(grown.__dict__)
        return self

    @property
    def pending_calls(self) -> Any:
        """The tool calls this run waits to have approved at a breakpoint (paused before the
        node that runs them): a `nbgraph.notebook.call_review.PendingCalls`, or None."""
        from nbgraph.notebook.call_review import pending_calls

        return pending_calls(self)

    def review_calls(self, decisions: list[Any]) -> Run:
        """Approve, edit or reject the tool calls this run waits on at a breakpoint (one
        decision per call, as langchain's human-in-the-loop writes them: `{"type":
        "approve"}`, `{"type": "edit", "edited_action": {"name", "args"}}`, `{"type":
        "reject", "message"}`), then run the thread on; returns the thread's record.

        Raises:
            AnswerError: nothing to review, or decisions that do not fit the calls.
        """
        from nbgraph.notebook.call_review import review_calls

        grown = review_calls(self, decisions)
        grown.forks = self.forks
        return grown

    @property
    def answer_problem(self) -> str | None:
        """Why this run cannot be answered now (a sentence), or None if it can."""
        from nbgraph.notebook.answer import answer_problem

        return answer_problem(self)

    @property
    def fork_problem(self) -> str | None:
        """Why this run cannot `fork` (a sentence), or None if it can."""
        from nbgraph.notebook.fork import fork_problem

        return fork_problem(self)

    def inspect(self, other: RunRecord | None = None) -> Any:
        """An ipywidgets inspector to step through this run (optionally against `other`)."""
        from nbgraph.views.inspector.inspector import inspect

        return inspect(self, other)

    def compare_view(self, other: Any, names: tuple[str, str] = ("this", "other")) -> Any:
        """One widget comparing this run with `other` (a buggy and a fixed run, say): one
        step control drives both; the first step where they differ is marked and one click
        away; one picture holds both runs' paths (two pictures if their graphs draw
        differently); the fields that differ at the step, before and after in each run side
        by side (`views.compare.compare_view`; what differs is `compare(other)`'s finding). Its
        display keeps a static snapshot for untrusted copies, `nbgraph.share` and the docs.

        Raises:
            InvalidArgumentError: `other` is not a run, or `names` not two texts.
        """
        from nbgraph.views.compare.compare_view import CompareView

        if not isinstance(other, RunRecord):
            raise InvalidArgumentError(
                f"run.compare_view(other): expected another run (a Run: app.last_run, "
                f"app.run(...), Run.load(...)), got {type(other).__name__}."
            )
        if (
            not isinstance(names, (tuple, list))
            or len(names) != 2
            or not all(isinstance(n, str) for n in names)
        ):
            raise InvalidArgumentError(
                f"run.compare_view(names=): expected two texts, like ('buggy', 'fixed'), "
                f"got {names!r}."
            )
        return CompareView(self, other, (names[0], names[1]))

    def quiz(self, fields: Any = None, steps: Any = None) -> Any:
        """Predict, then see: an ipywidgets quiz over this run's merges. At each (step,
        field) where a reducer folded writes, it shows the value before and each write with
        its writer, asks for the value after, then says right or wrong and spells out the
        reducer's fold (`views.quiz.quiz`). `fields`, `steps`: only the merges of these fields
        (a name or names) and steps (a number or numbers).
        """
        from nbgraph.views.quiz.quiz import quiz

        return quiz(self, fields, steps)

    def save_html(self, path: str | Path, title: str | None = None) -> Path:
        """Save this run as one self-contained HTML file to open in any browser, offline
        and with no kernel: the graph, every step's tasks, reducer effects and state, the
        state tree and each subrun's own steps, stepped with buttons, the arrow keys and
        clicks on nodes and tree boxes (`views.share.share_html`; what a long run's file costs:
        `benchmarks/share_html.py`).

        Args:
            path: the file to write (e.g. `"run.html"`).
            title: the page's title (default: the run's repr).

        Returns:
            The path written.
        """
        from nbgraph.views.share.share_html import save_html

        return save_html(self, path, title)

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        from nbgraph.views.drawings.display import HTML, SVG, drawing_bundle, run_html, wanted

        if self.shown_live_in is not None and self.shown_live_in == cell_number():
            return {"text/plain": f"{self!r}, shown live above"}  # (not the run twice)
        without_html = [*(exclude or ()), HTML]  # (the run's HTML is its own, below)
        bundle = drawing_bundle(self.draw(), repr(self), include, without_html)
        if wanted(HTML, include, exclude):  # front-ends show one type: put the picture in it
            bundle[HTML] = run_html(self, picture=bundle.get(SVG, ""))
        return bundle


def cell_number() -> int | None:
    """The execution count of the notebook cell running now (None outside IPython)."""
    import sys

    ipython = sys.modules.get("IPython")  # (never imported here: only asked if loaded)
    shell = ipython.get_ipython() if ipython is not None else None
    return None if shell is None else getattr(shell, "execution_count", None)
