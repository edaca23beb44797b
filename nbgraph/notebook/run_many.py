"""`run_many`: a compiled graph run once per input on an executor — a thread pool, a process
pool, or a Dask cluster (`distributed.Client(...).get_executor()`) — collected as `Runs`.

Threads run the graph itself and keep each `Run` as it is. Any other executor gets the graph
by reference or by value (`nbgraph.notebook.workers`) and sends each run back as run JSON,
read here with the graph's functions (`Run.from_json(..., graph=app)`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from functools import partial
from queue import SimpleQueue
from typing import Any

from nbgraph.errors import NbgraphError
from nbgraph.notebook.runs import Runs, RunSlot
from nbgraph.notebook.workers import (
    find_reference,
    pack_graph,
    parse_reference,
    pickle_dumps,
    run_chunk,
    run_recorded,
)

__all__ = ["ExecutorRejectedError", "default_chunk_size", "default_workers", "run_many"]


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
    chunk_size: int | None = None,
) -> Runs:
    """Run `app` once per input on `executor`; return the `Runs`, in input order.

    See `CompiledStateGraph.run_many`, which documents the arguments.
    """
    items = _input_list(inputs)
    _check_options(executor, max_in_flight, chunk_size)
    configs = [_run_config(app, config, thread_prefix, i) for i in range(len(items))]
    own = executor is None
    pool = ThreadPoolExecutor(default_workers(), "nbgraph-run-many") if own else executor
    reference = None if graph is None else parse_reference(graph)
    local = isinstance(pool, ThreadPoolExecutor)
    shipped = app if local else _shipment(app, pool, reference)
    size = 1 if local else chunk_size or default_chunk_size(len(items))
    size = min(size, max_in_flight or size)
    chunks = [list(range(i, min(i + size, len(items)))) for i in range(0, len(items), size)]
    batch = _Batch(pool, shipped, items, configs, app.name)
    try:
        outcomes = batch.collect(chunks, progress, max_in_flight)
    finally:
        if own:
            pool.shutdown()
    slots, durations = [], []
    for index, outcome in enumerate(outcomes):
        if isinstance(outcome, BaseException):  # the worker, not the graph, failed
            failed = run_recorded(app, items[index], configs[index], failure=outcome)
            slots.append(RunSlot(failed))
            durations.append(None)
            continue
        run = outcome["run"]
        if isinstance(run, str):  # read when first asked for: the summary serves the tables
            slots.append(RunSlot(read=partial(_read_run, app, run), summary=outcome["summary"]))
        else:
            slots.append(RunSlot(run))
        durations.append(outcome["duration"])
    return Runs(slots, durations=durations)


def default_chunk_size(count: int) -> int:
    """Runs per task off threads: about a 64th of the batch, from 1 to 50 (a process pool or
    a Dask cluster costs far more per task than a thread pool)."""
    return max(1, min(50, count // 64))


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


def _check_options(executor: Any, max_in_flight: Any, chunk_size: Any) -> None:
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(
            f"run_many(executor=...) expects a concurrent.futures.Executor (a thread or process "
            f"pool, or a Dask client's get_executor()); got {type(executor).__name__}."
        )
    for name, value in (("max_in_flight", max_in_flight), ("chunk_size", chunk_size)):
        if value is not None and (type(value) is not int or value < 1):
            raise ValueError(
                f"run_many({name}=...) expects a positive int or None (the default); got {value!r}."
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


class _Batch:
    """The runs of one `run_many` call on their way through the executor: chunks of inputs
    submitted (at most `max_in_flight` runs at once), their outcomes collected by index."""

    def __init__(self, executor: Any, shipped: Any, items: list, configs: list, name: str):
        self.executor, self.shipped, self.name = executor, shipped, name
        self.items, self.configs = items, configs
        self.outcomes: list[Any] = [None] * len(items)
        self.finished: SimpleQueue[tuple[list[int], Future]] = SimpleQueue()

    def collect(
        self, chunks: list[list[int]], progress: bool, max_in_flight: int | None
    ) -> list[Any]:
        """Each input's outcome: the worker's result dict, or the exception that stopped its
        chunk (a dead worker, a refusing executor, ...).

        Finished futures arrive through a queue their done-callbacks fill, so a batch costs
        O(runs) here however many are in flight."""
        from tqdm.auto import tqdm

        size = len(chunks[0]) if chunks else 1
        limit = -(-max_in_flight // size) if max_in_flight else len(chunks) or 1
        in_flight = 0
        with tqdm(total=len(self.items), disable=not progress, desc="runs", unit="run") as bar:
            for number, chunk in enumerate(chunks):
                while in_flight >= limit:
                    in_flight -= self._settle(bar)
                if not self._submit(number, chunk, bar):
                    break
                in_flight += 1
            while in_flight:
                in_flight -= self._settle(bar)
        return self.outcomes

    def _submit(self, number: int, chunk: list[int], bar: Any) -> bool:
        work = [(i, self.items[i], self.configs[i]) for i in chunk]
        try:
            future = self.executor.submit(run_chunk, self.shipped, work)
        except Exception as error:
            refused = f"{type(error).__name__}: {error}"
            if number == 0:
                raise ExecutorRejectedError(
                    f"The executor ({type(self.executor).__name__}) refused the first run of "
                    f"graph {self.name!r}: {refused}. Nothing ran."
                ) from error
            cause = RuntimeError(
                f"the executor ({type(self.executor).__name__}) refused this run: {refused}"
            )
            rest = range(chunk[0], len(self.items))
            for index in rest:
                self.outcomes[index] = cause
            bar.update(len(rest))
            return False
        future.add_done_callback(lambda done: self.finished.put((chunk, done)))
        return True

    def _settle(self, bar: Any) -> int:
        """Wait for one chunk to finish and keep its outcomes; returns 1."""
        chunk, future = self.finished.get()
        try:
            for result in future.result():
                self.outcomes[result["index"]] = result
        except BaseException as error:  # a dead worker, a graph that did not unpickle, ...
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            for index in chunk:
                self.outcomes[index] = error
        bar.update(len(chunk))
        return 1
