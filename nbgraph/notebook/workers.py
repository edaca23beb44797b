"""Sending a compiled graph to worker processes, and the work each one does: run one input
and send the run back as nbgraph's run JSON (`Run.to_json`), never a pickled record.

A graph travels in one of two ways:

- **by reference** (`"module:attribute"`): the worker imports the module and takes the graph
  from it. nbgraph finds the reference itself when the graph is a global of an imported module
  (`__main__` only for a `ProcessPoolExecutor` that forks, whose workers share it), or the
  caller names it (`run_many(..., graph="pkg.flows:app")`). The worker's graph is its own,
  checkpointer included.
- **by value**: the graph's parts (its spec with the node functions, its name and store) are
  pickled by the executor. Plain `pickle` (a `ProcessPoolExecutor`) takes functions defined at
  a module's top level; Dask pickles with `cloudpickle`, which takes lambdas and notebook
  functions too. A checkpointer does not travel this way: name the graph by reference.

Either way the worker must be able to import `nbgraph` and every module the graph's functions
(and the values in its states) come from.
"""

from __future__ import annotations

import hashlib
import importlib
import pickle
import sys
import time
from dataclasses import dataclass
from typing import Any

from nbgraph.engine.core.runlog import RunLog
from nbgraph.errors import NbgraphError
from nbgraph.record.batch import run_summary
from nbgraph.record.batch_columns import encode_values

__all__ = [
    "GraphReference",
    "GraphShippingError",
    "PackedGraph",
    "find_reference",
    "pack_graph",
    "parse_reference",
    "pickle_dumps",
    "run_chunk",
    "run_recorded",
]


class GraphShippingError(NbgraphError, TypeError):
    """A graph cannot be sent to the executor's workers; the message names the graph, the
    part (node, checkpointer, ...) that cannot travel, and the ways out."""


@dataclass(frozen=True)
class GraphReference:
    """A graph named by where it lives: the worker imports `module` and reads `attribute`."""

    module: str
    attribute: str

    def load(self) -> Any:
        """The graph itself (imported on first use in each worker, then kept)."""
        key = (self.module, self.attribute)
        if key not in _LOADED:
            try:
                target: Any = importlib.import_module(self.module)
                for part in self.attribute.split("."):
                    target = getattr(target, part)
            except (ImportError, AttributeError) as error:
                raise GraphShippingError(
                    f"The worker could not load the graph '{self.module}:{self.attribute}' "
                    f"({type(error).__name__}: {error}); the module must be importable on "
                    "every worker (installed, or on its sys.path)."
                ) from None
            if not callable(getattr(target, "run", None)):
                raise GraphShippingError(
                    f"'{self.module}:{self.attribute}' is a {type(target).__name__}, not a "
                    "compiled graph."
                )
            _LOADED[key] = target
        return _LOADED[key]


_LOADED: dict[tuple[str, str], Any] = {}


@dataclass(frozen=True)
class _GraphParts:
    """A graph sent by value: what its class (`CompiledStateGraph`, pickled by reference)
    needs to make it again, without its runs."""

    graph_class: type
    spec: Any
    name: str
    store: Any
    context_schema: Any

    def load(self) -> Any:
        return self.graph_class(
            self.spec, name=self.name, store=self.store, context_schema=self.context_schema
        )


@dataclass(frozen=True)
class PackedGraph:
    """`_GraphParts` pickled once (`blob`), so a batch does not pickle the graph per input;
    each worker unpickles it once per `key` and keeps the graph."""

    key: str
    blob: bytes

    def load(self) -> Any:
        if self.key not in _LOADED:
            _LOADED[self.key] = pickle.loads(self.blob).load()
        return _LOADED[self.key]


def parse_reference(text: str) -> GraphReference:
    """`"pkg.module:attribute"` as a `GraphReference`.

    Raises:
        ValueError: the text is not of that form.
    """
    module, colon, attribute = str(text).partition(":")
    if not colon or not module or not attribute:
        raise ValueError(
            f"graph={text!r} is not a reference to a graph; expected 'module:attribute', "
            "e.g. 'my_package.flows:app'."
        )
    return GraphReference(module, attribute)


def find_reference(app: Any, *, main_shared: bool) -> GraphReference | None:
    """The module global that holds `app`, if any (`__main__` only if `main_shared`).

    The main module is named `__main__` whatever aliases it has (multiprocessing's
    `__mp_main__`): a worker that does not share it has another module under that name."""
    main = sys.modules.get("__main__")
    for name, module in list(sys.modules.items()):
        if module is None:
            continue
        is_main = module is main or name in ("__main__", "__mp_main__")
        if is_main and (not main_shared or name != "__main__"):
            continue
        try:
            found = [k for k, v in vars(module).items() if v is app and not k.startswith("_")]
        except TypeError:
            continue
        if found:
            return GraphReference(name, found[0])
    return None


def pack_graph(app: Any, dumps: Any) -> PackedGraph:
    """The graph's parts pickled with `dumps`, once.

    Raises:
        GraphShippingError: naming the graph and the node (or part) that does not pickle,
            or its checkpointer, which never travels by value.
    """
    label = f"graph {app.name!r}"
    if app.checkpointer is not None:
        raise GraphShippingError(
            f"The {label} has a checkpointer ({type(app.checkpointer).__name__}), which cannot "
            "be sent to worker processes with the graph; define the graph at the top level of "
            "a module the workers can import and pass run_many(..., graph='module:attribute'), "
            "so each worker uses that module's graph and checkpointer (a SqliteSaver on a "
            "shared file keeps every thread), or run on threads (executor=None)."
        )
    parts = _GraphParts(type(app), app.spec, app.name, app.store, app.context_schema)
    try:
        blob = dumps(parts)
    except Exception as error:
        raise GraphShippingError(_unshippable(app, dumps, error)) from error
    return PackedGraph(hashlib.sha256(blob).hexdigest(), blob)


def _unshippable(app: Any, dumps: Any, error: Exception) -> str:
    culprit = f"its state schema, store or context schema ({type(error).__name__}: {error})"
    for name, node in app.spec.nodes.items():
        try:
            dumps(node)
        except Exception as node_error:
            culprit = f"node {name!r} ({type(node_error).__name__}: {node_error})"
            break
    return (
        f"The graph {app.name!r} cannot be sent to the executor's workers: {culprit} does not "
        "pickle. Define its functions at the top level of a module the workers can import (not "
        "lambdas or functions defined in a notebook), or define the graph in such a module "
        "and pass run_many(..., graph='module:attribute'), or use Dask's executor (it "
        "pickles with cloudpickle), or threads (executor=None)."
    )


def pickle_dumps(value: Any) -> bytes:
    """Plain pickle, as a `ProcessPoolExecutor` sends its work."""
    return pickle.dumps(value)


def run_chunk(graph: Any, chunk: list[tuple[int, Any, Any]]) -> list[dict[str, Any]]:
    """`_run_one` for each `(index, input, config)` of a chunk: one task on the executor for
    several runs, so a batch pays the executor's cost per task fewer times."""
    return [_run_one(graph, index, input, config) for index, input, config in chunk]


def _run_one(graph: Any, index: int, input: Any, config: dict[str, Any] | None) -> dict[str, Any]:
    """Run one input on a worker; the run comes back with its wall time and its summary,
    made as it finishes (`run_summary`: what the batch's tables need, its effects and tasks
    as columns).

    `graph` is a `GraphReference`, `_GraphParts` or the compiled graph itself (threads).
    Returns `{"index", "duration", "run", "summary"}`: on threads `run` is the `Run`; else it
    is the run's JSON text, and the summary's values are encoded (`encode_values`).
    """
    app = graph if hasattr(graph, "run") else graph.load()
    started = time.perf_counter()
    run = run_recorded(app, input, config)
    duration = time.perf_counter() - started
    if app is graph:
        return {"index": index, "duration": duration, "run": run, "summary": run_summary(run)}
    try:
        text = _compact_run_json(run)
    except Exception as error:  # (a value too deep for a file, say): say so, as a failed run
        lost = RuntimeError(
            f"input {index}: the run ended {run.status!r} but its record could not be written "
            f"as run JSON to send back ({type(error).__name__}: {error})"
        )
        run = run_recorded(app, None, config, failure=lost)
        text = _compact_run_json(run)
    return {"index": index, "duration": duration, "run": text, "summary": _sent_summary(run)}


def _sent_summary(run: Any) -> dict[str, Any]:
    """The run's summary, its columns sent as one JSON text, their values encoded
    (`encode_values`): a str unpickles at once, where nested lists would cost the batch's
    process more than the run did; it is parsed when a table is first asked for. No
    columns, for a value that does not encode: the batch's tables then read that run."""
    from nbgraph.codec import nesting

    summary = run_summary(run)
    try:
        columns = encode_values(summary["columns"])
        summary["columns"] = nesting.dumps(columns, ensure_ascii=False, allow_nan=False)
    except Exception:  # (the run's JSON held it: its file serves the tables instead)
        summary["columns"] = None
    return summary


def _compact_run_json(run: Any) -> str:
    """`Run.to_json()`'s document, without indentation: Python's C encoder writes that,
    faster than the indented text, and `Run.from_json` reads both."""
    from nbgraph.codec import nesting
    from nbgraph.record.files.serialize import run_document

    return nesting.dumps(run_document(run), ensure_ascii=False, allow_nan=False)


def run_recorded(
    app: Any, input: Any, config: dict[str, Any] | None, failure: BaseException | None = None
) -> Any:
    """`app.run(input, config)`; a run refused before its first step (a bad input, say) is
    recorded as a failed run with no steps instead of raising, and so is any other
    `BaseException` the run ends with (a node's `sys.exit()`: a `SystemExit`), except a
    `KeyboardInterrupt`, the user's own Ctrl-C: that one input's run failed, not the batch.
    With `failure`, that failed run is made directly (the graph is not run)."""
    from nbgraph.notebook.run import Run

    if failure is None:
        try:
            return app.run(input, config)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # (it belongs to this input's run)
            failure = error
    return Run(RunLog(app.spec, input, dict(config or {}), status="failed", error=failure))
