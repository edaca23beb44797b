"""`CompiledStateGraph`: what `StateGraph.compile()` returns — the engine's `CompiledGraph`
(invoke, stream, their async forms, the thread's checkpoints) with each run's record as an
`nbgraph.Run` (`run()`, `last_run`) and the graph's drawing.
"""

from __future__ import annotations

from typing import Any

from nbgraph.engine.app import CompiledGraph
from nbgraph.engine.drive import STEP_MODE, drive
from nbgraph.engine.runlog import RunLog
from nbgraph.notebook.fork import attach_app
from nbgraph.notebook.run import Run
from nbgraph.views.drawable import DrawableGraph


class CompiledStateGraph(CompiledGraph):
    """A checked graph, ready to run. Every run is recorded; the latest is `last_run`.

    Each call (`invoke`, `stream`, `run`, their async forms) records its own run: calls from
    several threads, or a node that runs this same graph, never share a record.

    Attributes:
        spec: the frozen graph (nodes, edges, fields) the drawings read.
        last_log: the `RunLog` of the run that most recently started or finished, or None.
    """

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
                supersteps, throttled so redrawing costs about 5% of the run); the newest
                step is shown unless you move the slider. Needs ipywidgets.
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
        return self._record(run.log)

    def stepper(self, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """Prepare a run to go one superstep per cell, without running anything: a
        `nbgraph.notebook.stepper.Stepper` (`step()`, `state`, `next`, `update()`,
        `run_until()`, `finish()`, `resume()`, `run`). Same arguments as `invoke`."""
        from nbgraph.notebook.stepper import Stepper

        return Stepper(self, input, config, kwargs)

    def get_graph(self, config: Any = None, *, xray: int | bool = False) -> DrawableGraph:
        """The graph as LangGraph's `get_graph()` gives it: `.nodes`, `.edges`,
        `draw_mermaid()` (LangGraph's text) and `draw_mermaid_png()` (drawn offline with
        graphviz). `config` and `xray` are accepted; subgraphs are not expanded."""
        return DrawableGraph.of(self.spec)

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
    from IPython.display import display

    from nbgraph.views.live_view import LiveView

    view = LiveView(record)
    display(view.box)
    return view
