"""`CompiledStateGraph`: what `StateGraph.compile()` returns, the engine's graph with each run's
record as a `Run`.

The engine's `CompiledGraph` (invoke, stream, their async forms, the thread's checkpoints) with
each run's record as an `nbgraph.Run` (`run()`, `last_run`) and the graph's drawing."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from nbgraph.engine.app import CompiledGraph
from nbgraph.engine.core.runlog import RunLog
from nbgraph.engine.drive import STEP_MODE, drive
from nbgraph.notebook.fork import attach_app
from nbgraph.notebook.run import Run, cell_number
from nbgraph.views.drawable import DrawableGraph

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from nbgraph.notebook.runs import Runs

__all__ = ["CompiledStateGraph"]


class CompiledStateGraph(CompiledGraph):
    """A checked graph, ready to run. Every run is recorded; the latest is `last_run`.

    Each call (`invoke`, `stream`, `run`, their async forms) records its own run: calls from
    several threads, or a node that runs this same graph, never share a record.

    Attributes:
        spec: the frozen graph (nodes, edges, fields) the drawings read.
        last_log: the `RunLog` of the run that most recently started or finished, or None.
    """

    last_runs: Runs | None = None
    """The `Runs` of the latest `run_many` call (only those that finished, if Ctrl-C
    stopped it), or None."""

    @property
    def last_run(self) -> Run | None:
        """The run that most recently started or finished (an `nbgraph.Run`: tables, states,
        state tree), or None.

        A run becomes the latest when it starts and again when it ends, so once a call
        returns, `last_run` is that call's run, even if a node ran this graph inside it;
        with calls in several threads it is whichever moved last (`run()` returns the run
        of its own call in every case).
        """
        log = self.last_log
        return None if log is None else self._record(log)

    def _record(self, log: RunLog) -> Run:
        """The `nbgraph.Run` of `log`, built once for the latest finished run."""
        cached = self._last_run
        if cached is not None and cached.log is log:
            return cached
        record = attach_app(Run(log), self)  # (so the inspector can fork it)
        if log.status != "running" and log is self.last_log:  # a running one: fresh each time
            self._last_run = record
        return record

    def run(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        live: bool = False,
        **kwargs: Any,
    ) -> Run:
        """Run the graph like `invoke`, and return the recorded `Run` of this call.

        A run that fails is still returned (`run.status == "failed"`, `run.error` says why),
        so its record can be inspected; `run.output` is what `invoke` would have returned.

        Args:
            live: display the inspector at once and update it while the run goes (after
                supersteps, throttled so redrawing costs about 5% of the run), its controls
                inert until the run ends (Jupyter holds clicks back while a cell runs);
                returned as a cell's last line, the run is then one line, not shown twice.
                Needs ipywidgets.
        """
        run = self._start(config, kwargs)
        view = _live_view(self._record) if live else None
        try:
            with self._running(run):
                if view is None:
                    for _ in drive(run, input, frozenset()):  # (warnings point at the caller)
                        pass
                else:
                    for _ in drive(run, input, STEP_MODE):
                        view.step_done(run.log)
        except Exception:
            if not run.log.steps:
                raise
        finally:
            if view is not None:
                view.finish(run.log)
        record = self._record(run.log)
        if live:  # (the live view shows it: as this cell's last line, one line more)
            record.shown_live_in = cell_number()
        return record

    def stepper(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """Prepare a run to go one superstep per cell, without running anything: a
        `nbgraph.notebook.stepper.Stepper` (`step()`, `state`, `next`, `update()`,
        `run_until()`, `finish()`, `resume()`, `run`). Same arguments as `invoke`."""
        from nbgraph.notebook.stepper import Stepper

        return Stepper(self, input, config, kwargs)

    def run_many(
        self,
        inputs: Iterable[Any],
        config: dict[str, Any] | None = None,
        *,
        executor: Executor | None = None,
        progress: bool = True,
        max_in_flight: int | None = None,
        thread_prefix: str | None = None,
        graph: str | None = None,
        chunk_size: int | None = None,
    ) -> Runs:
        """Run the graph once per input and return the recorded `Runs`, in input order.

        A failing input never stops the others: its run is recorded as failed with its
        error. A dead worker's inputs run again in a fresh one; one that kills that too fails
        alone (`WorkerDiedError`). Ctrl-C starts no further run and waits for those running
        (a second Ctrl-C abandons them); the runs that finished are `last_runs`.

        Args:
            inputs: an iterable of inputs, one per run.
            config: the config of every run (with a checkpointer, each run gets its own
                thread id, `f"{thread_prefix}-{i}"`).
            executor: any `concurrent.futures.Executor`; default: a thread pool sized for
                the machine. A `ProcessPoolExecutor`, or a Dask cluster's
                `distributed.Client(...).get_executor()`, gets the graph by reference or
                pickled (see `graph`) and sends each run back as run JSON; the workers
                must be able to import nbgraph and the graph's functions.
            progress: show a progress bar (tqdm: a widget in a notebook, text elsewhere).
            max_in_flight: at most this many runs submitted and not yet finished
                (default: all at once).
            thread_prefix: with a checkpointer, the thread ids' prefix (default: the
                config's thread id, else `"run"`).
            graph: for processes and Dask, `"module:attribute"` naming this graph in a
                module the workers import (needed when the graph has a checkpointer or
                functions that do not pickle); default: found if the graph is a global of
                an imported module, else the graph is pickled.
            chunk_size: for processes and Dask, runs sent to a worker as one task
                (default: about a 64th of the batch, 1 to 50). Threads take one run at a
                time.

        Raises:
            TypeError: `inputs` is not an iterable of inputs, or `executor` no executor.
            GraphShippingError: the graph cannot be sent to the workers (naming the node).
            ExecutorRejectedError: the executor refused the first run.
            BatchInterrupted: Ctrl-C (a `KeyboardInterrupt`); its `runs` are those that ended.
        """
        from nbgraph.notebook.run_many import BatchInterrupted, run_many

        _check_config("run_many(inputs, config=)", config)
        try:
            self.last_runs = run_many(
                self,
                inputs,
                config,
                executor=executor,
                progress=progress,
                max_in_flight=max_in_flight,
                thread_prefix=thread_prefix,
                graph=graph,
                chunk_size=chunk_size,
            )
        except BatchInterrupted as stopped:
            self.last_runs = stopped.runs
            raise
        return self.last_runs

    def get_graph(self, config: Any = None, *, xray: int | bool = False) -> DrawableGraph:
        """The graph as LangGraph's `get_graph()` gives it: `.nodes`, `.edges`,
        `draw_mermaid()` (LangGraph's text) and `draw_mermaid_png()` (drawn offline with
        graphviz). With `xray` (True, or a number of levels) each subgraph node is replaced
        by its graph's nodes, named `node:inner` as LangGraph names them; `config` is
        accepted."""
        return DrawableGraph.of(self.spec, xray)

    async def aget_graph(self, config: Any = None, *, xray: int | bool = False) -> DrawableGraph:
        """`get_graph`, awaitable."""
        return self.get_graph(config, xray=xray)

    def draw(self, expand: bool = True) -> Any:
        """The graph as a `graphviz.Digraph` (render it, or let Jupyter show it); with
        `expand`, a compiled graph added as a node is drawn inside it as a cluster, else
        as one box."""
        from nbgraph.views.dot import graph_dot  # drawings read the spec; they never run it

        return graph_dot(self.spec, expand=expand)

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        from nbgraph.views.display import drawing_bundle

        return drawing_bundle(self.draw(), repr(self), include, exclude)


def _live_view(record: Any) -> Any:
    """The live inspector, displayed now (`run(live=True)`)."""
    from nbgraph.views.live_view import LiveView

    view = LiveView(record)
    view.box.show()  # (displayed, and shown again with the whole run when it ends)
    return view


def _check_config(call: str, config: Any) -> None:
    """Refuse a `config` that is no dict (it would fail deep inside each run)."""
    if config is not None and not isinstance(config, dict):
        from nbgraph.errors import wrong_argument

        raise wrong_argument(call, "a config dict or None", config)
