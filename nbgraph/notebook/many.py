"""`run_many`: a compiled graph run once per input on an executor — a thread pool, a process
pool, or a Dask cluster (`distributed.Client(...).get_executor()`) — collected as `Runs`.

Threads run the graph itself and keep each `Run` as it is. Any other executor gets the graph
by reference or by value (`nbgraph.notebook.shipping`) and sends each run back as run JSON,
read here with the graph's functions (`Run.from_json(..., graph=app)`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from queue import SimpleQueue
from typing import Any

from nbgraph.errors import NbgraphError
from nbgraph.notebook.runs import Runs
from nbgraph.notebook.shipping import (
    find_reference,
    pack_graph,
    parse_reference,
    pickle_dumps,
    run_one,
    run_recorded,
)


class ExecutorRejectedError(NbgraphError, RuntimeError):
    """The executor refused the batch's first run (shut down, say); nothing ran."""


def default_workers() -> int:
    """The default thread pool's size: as `ThreadPoolExecutor`'s own default."""
    return min(32, (os.cpu_count() or 1) + 4)


def run_many(
    app: Any,
    inputs: Iterable[Any],
    config: dict[str, Any] | None = None,
    *,
    executor: Executor | None = None,
    progress: bool = True,
    max_in_flight: int | None = None,
    thread_prefix: str | None = None,
    graph: str | None = None,
) -> Runs:
    """Run `app` once per input on `executor`; return the `Runs`, in input order.

    See `CompiledStateGraph.run_many`, which documents the arguments.
    """
    items = _input_list(inputs)
    _check_options(executor, max_in_flight)
    configs = [_run_config(app, config, thread_prefix, i) for i in range(len(items))]
    own = executor is None
    pool = ThreadPoolExecutor(default_workers(), "nbgraph-run-many") if own else executor
    reference = None if graph is None else parse_reference(graph)
    shipped = app if isinstance(pool, ThreadPoolExecutor) else _shipment(app, pool, reference)
    try:
        outcomes = _collect(pool, shipped, items, configs, progress, max_in_flight, app.name)
    finally:
        if own:
            pool.shutdown()
    runs, durations = [], []
    for index, outcome in enumerate(outcomes):
        if isinstance(outcome, BaseException):  # the worker, not the graph, failed
            runs.append(run_recorded(app, items[index], configs[index], failure=outcome))
            durations.append(None)
            continue
        run = outcome["run"]
        runs.append(_read_run(app, run) if isinstance(run, str) else run)
        durations.append(outcome["duration"])
    return Runs(runs, durations=durations)


def _read_run(app: Any, text: str) -> Any:
    from nbgraph.notebook.run import Run

    return Run.from_json(text, graph=app)


def _input_list(inputs: Any) -> list[Any]:
    if isinstance(inputs, (dict, str, bytes)):
        kind = type(inputs).__name__
        raise TypeError(
            f"run_many(inputs=...) expects an iterable of inputs, one per run (a list of "
            f"dicts, say); got a {kind}, whose items are not inputs: pass [input] for one run."
        )
    try:
        return list(inputs)
    except TypeError:
        raise TypeError(
            f"run_many(inputs=...) expects an iterable of inputs, one per run (a list of "
            f"dicts, say); got {type(inputs).__name__} {inputs!r:.60}."
        ) from None


def _check_options(executor: Any, max_in_flight: Any) -> None:
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(
            f"run_many(executor=...) expects a concurrent.futures.Executor (a thread or process "
            f"pool, or a Dask client's get_executor()); got {type(executor).__name__}."
        )
    if max_in_flight is not None and (type(max_in_flight) is not int or max_in_flight < 1):
        raise ValueError(
            f"run_many(max_in_flight=...) expects a positive int (runs submitted and not yet "
            f"finished) or None (all at once); got {max_in_flight!r}."
        )


def _run_config(
    app: Any, config: dict[str, Any] | None, prefix: str | None, index: int
) -> dict[str, Any] | None:
    """The config of run `index`: with a checkpointer, its own thread id `f"{prefix}-{i}"`
    (prefix: `thread_prefix`, else the config's thread id, else `"run"`)."""
    if app.checkpointer is None and prefix is None:
        return config
    configurable = dict((config or {}).get("configurable") or {})
    prefix = prefix or configurable.get("thread_id") or "run"
    configurable["thread_id"] = f"{prefix}-{index}"
    return {**(config or {}), "configurable": configurable}


def _shipment(app: Any, executor: Any, named: Any) -> Any:
    """How the graph travels to `executor`'s workers: a reference, or its pickled parts."""
    if named is not None:
        return named
    context = getattr(executor, "_mp_context", None)
    forks = context is not None and context.get_start_method() == "fork"
    reference = find_reference(app, main_shared=forks)
    if reference is not None:
        return reference
    return pack_graph(app, _dumps_for(executor))


def _dumps_for(executor: Any) -> Any:
    if type(executor).__module__.split(".")[0] == "distributed":
        import cloudpickle  # (Dask's own serializer: installed with `distributed`)

        return cloudpickle.dumps
    return pickle_dumps


def _collect(
    executor: Any,
    shipped: Any,
    items: list[Any],
    configs: list[Any],
    progress: bool,
    max_in_flight: int | None,
    name: str,
) -> list[Any]:
    """Each input's outcome: the worker's result dict, or the exception its future raised.

    Finished futures arrive through a queue their done-callbacks fill, so a batch costs
    O(runs) here however many are in flight."""
    from tqdm.auto import tqdm

    outcomes: list[Any] = [None] * len(items)
    finished: SimpleQueue[tuple[int, Future]] = SimpleQueue()
    in_flight = 0
    limit = max_in_flight or len(items) or 1
    with tqdm(total=len(items), disable=not progress, desc="runs", unit="run") as bar:
        for index, item in enumerate(items):
            while in_flight >= limit:
                in_flight -= _settle(finished, outcomes, bar)
            try:
                future = executor.submit(run_one, shipped, index, item, configs[index])
            except Exception as error:
                if index == 0:
                    raise ExecutorRejectedError(
                        f"The executor ({type(executor).__name__}) refused the first run of "
                        f"graph {name!r}: {type(error).__name__}: {error}. Nothing ran."
                    ) from error
                _refused(outcomes, bar, index, executor, error)
                break
            in_flight += 1
            future.add_done_callback(lambda done, index=index: finished.put((index, done)))
        while in_flight:
            in_flight -= _settle(finished, outcomes, bar)
    return outcomes


def _refused(outcomes: list[Any], bar: Any, start: int, executor: Any, error: Exception) -> None:
    cause = RuntimeError(
        f"the executor ({type(executor).__name__}) refused this run: "
        f"{type(error).__name__}: {error}"
    )
    for index in range(start, len(outcomes)):
        outcomes[index] = cause
    bar.update(len(outcomes) - start)


def _settle(finished: SimpleQueue, outcomes: list[Any], bar: Any) -> int:
    """Wait for one run to finish and keep its outcome; returns 1."""
    index, future = finished.get()
    try:
        outcomes[index] = future.result()
    except BaseException as error:  # a dead worker, a graph that did not unpickle, ...
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        outcomes[index] = error
    bar.update(1)
    return 1
