"""`run_many`: a compiled graph run once per input on an executor — a thread pool, a process
pool, or a Dask cluster (`distributed.Client(...).get_executor()`) — collected as `Runs`.

Threads run the graph itself and keep each `Run` as it is. Any other executor gets the graph
by reference or by value (`nbgraph.notebook.workers`) and sends each run back as run JSON,
read here with the graph's functions (`Run.from_json(..., graph=app)`).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import (
    BrokenExecutor,
    Executor,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
)
from contextlib import contextmanager
from functools import partial
from queue import Empty, SimpleQueue
from typing import Any

from nbgraph.errors import NbgraphError
from nbgraph.notebook.daemon_threads import DaemonThreadPool
from nbgraph.notebook.runs import Runs, RunSlot
from nbgraph.notebook.workers import (
    find_reference,
    pack_graph,
    parse_reference,
    pickle_dumps,
    run_chunk,
    run_recorded,
)

__all__ = [
    "BatchInterrupted",
    "ExecutorRejectedError",
    "WorkerDiedError",
    "default_chunk_size",
    "default_workers",
    "run_many",
    "worker_died",
]


class ExecutorRejectedError(NbgraphError, RuntimeError):
    """The executor refused the batch's first run (shut down, say); nothing ran."""


class WorkerDiedError(NbgraphError, BrokenExecutor):
    """An input killed its worker process: run again alone in a fresh worker, it killed that
    one too. Its `__cause__` is the executor's error (`BrokenProcessPool`, `KilledWorker`)."""


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped `run_many`: `runs` holds the runs that finished (their input indexes
    kept, `runs.indexes`); the inputs not run are `not_run`. Also `app.last_runs`."""

    def __init__(self, message: str, runs: Runs, not_run: list[int]) -> None:
        super().__init__(message)
        self.runs, self.not_run = runs, not_run


def default_workers() -> int:
    """The default thread pool's size: as `ThreadPoolExecutor`'s own default (the default
    pool's threads are daemons: a run abandoned by Ctrl-C does not hold the process open)."""
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

    Raises:
        BatchInterrupted: Ctrl-C (a `KeyboardInterrupt`), with the runs that finished.
    """
    items = _input_list(inputs)
    _check_options(executor, max_in_flight, chunk_size)
    configs = [_run_config(app, config, thread_prefix, i) for i in range(len(items))]
    own = executor is None
    pool = DaemonThreadPool(default_workers(), "nbgraph-run-many") if own else executor
    reference = None if graph is None else parse_reference(graph)
    local = isinstance(pool, (ThreadPoolExecutor, DaemonThreadPool))
    shipped = app if local else _shipment(app, pool, reference)
    size = 1 if local else chunk_size or default_chunk_size(len(items))
    size = min(size, max_in_flight or size)
    chunks = [list(range(i, min(i + size, len(items)))) for i in range(0, len(items), size)]
    batch = _Batch(pool, shipped, items, configs, app.name)
    interrupted = True
    try:
        batch.collect(chunks, progress, max_in_flight)
        _rerun_dead(batch, pool, max_in_flight)
        interrupted = False
    except KeyboardInterrupt:
        kept = [i for i, outcome in enumerate(batch.outcomes) if _finished(outcome)]
        not_run = sorted(set(range(len(items))) - set(kept))
        raise BatchInterrupted(
            f"Ctrl-C stopped run_many of graph {app.name!r}: {len(kept)} of {len(items)} runs "
            f"finished (kept in this error's .runs and in app.last_runs); {len(not_run)} did "
            "not run or were abandoned (.not_run).",
            _runs_of(app, batch, kept),
            not_run,
        ) from None
    finally:
        if own:  # (interrupted: the runs still running are not waited for again)
            pool.shutdown(wait=not interrupted, cancel_futures=True)
    return _runs_of(app, batch, range(len(items)))


def _finished(outcome: Any) -> bool:
    """A run that ended (its result, or a failure that is not a worker's death)."""
    if isinstance(outcome, BaseException):
        return not worker_died(outcome) or isinstance(outcome, WorkerDiedError)
    return outcome is not None


def _runs_of(app: Any, batch: _Batch, indexes: Iterable[int]) -> Runs:
    """The `Runs` of those inputs, from their outcomes."""
    slots, durations, kept = [], [], []
    for index in indexes:
        outcome = batch.outcomes[index]
        kept.append(index)
        if isinstance(outcome, BaseException):  # the worker, not the graph, failed
            failed = run_recorded(app, batch.items[index], batch.configs[index], failure=outcome)
            slots.append(RunSlot(failed))
            durations.append(None)
            continue
        run = outcome["run"]
        if isinstance(run, str):  # read when first asked for: the summary serves the tables
            read = partial(_read_run, app, run)
            slots.append(RunSlot(read=read, summary=outcome["summary"], text=run))
        else:
            slots.append(RunSlot(run, summary=outcome["summary"]))
        durations.append(outcome["duration"])
    return Runs(slots, durations=durations, indexes=kept)


def _rerun_dead(batch: _Batch, executor: Any, max_in_flight: int | None) -> None:
    """Run again, one per task, the inputs whose worker died (they may only have shared a
    worker, or a process pool, with the input that killed it): a few at a time on a fresh
    pool, then alone each input that was running when a worker died again. So the input that
    kills its worker fails by itself (`WorkerDiedError`) and the others run.

    A process pool a dead worker broke is replaced by a fresh one of its kind; any other
    executor (Dask's, whose cluster replaces the worker) is used again."""
    queue = [i for i, outcome in enumerate(batch.outcomes) if _died(outcome)]
    width = getattr(executor, "_max_workers", None) or default_workers()
    width = min(width, max_in_flight or width)
    caught: list[int] = []
    while queue:
        again = _round(batch, executor, queue, width)
        refused = set(again.refused)
        caught += [i for i in queue if i not in refused and _died(again.outcomes[i])]
        queue = again.refused
    for index in caught:
        again = _round(batch, executor, [index], 1)
        cause = again.outcomes[index]
        if _died(cause):
            died = WorkerDiedError(
                f"input {index} killed its worker process: run again alone in a fresh worker, "
                f"it killed that one too ({type(cause).__name__}: {cause})"
            )
            died.__cause__ = cause
            batch.outcomes[index] = died


def _died(outcome: Any) -> bool:
    return isinstance(outcome, BaseException) and worker_died(outcome)


def _round(batch: _Batch, executor: Any, indexes: list[int], width: int) -> _Batch:
    """One run per task of each of `indexes` on a fresh pool, at most `width` at once; their
    outcomes replace the batch's (a Ctrl-C keeps those that finished)."""
    again = _Batch(None, batch.shipped, batch.items, batch.configs, batch.name)
    try:
        with _fresh(executor, width) as again.executor:
            again.collect([[i] for i in indexes], False, width)
    except ExecutorRejectedError as error:  # (a pool broken for good: not a worker's death)
        refused = RuntimeError(
            f"this input's worker died and the executor ({type(executor).__name__}) refused "
            f"to run it again: {error.__cause__!r}"
        )
        refused.__cause__ = error.__cause__
        for index in indexes:
            again.outcomes[index] = refused
    finally:
        for index in indexes:
            if again.outcomes[index] is not None:
                batch.outcomes[index] = again.outcomes[index]
    return again


@contextmanager
def _fresh(executor: Any, width: int) -> Iterator[Any]:
    """A fresh process pool like `executor` (a dead worker breaks a whole pool), else the
    executor itself."""
    if not isinstance(executor, ProcessPoolExecutor):
        yield executor
        return
    pool = ProcessPoolExecutor(
        width,
        mp_context=getattr(executor, "_mp_context", None),
        initializer=getattr(executor, "_initializer", None),
        initargs=getattr(executor, "_initargs", ()),
    )
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


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


_WAKE = 0.1
"""Seconds a batch waits for a chunk before it looks again for a Ctrl-C it did not see."""


class _Batch:
    """The runs of one `run_many` call on their way through the executor: chunks of inputs
    submitted (at most `max_in_flight` runs at once), their outcomes kept by index in
    `outcomes` (None: not run)."""

    def __init__(self, executor: Any, shipped: Any, items: list, configs: list, name: str):
        self.executor, self.shipped, self.name = executor, shipped, name
        self.items, self.configs = items, configs
        self.outcomes: list[Any] = [None] * len(items)
        self.finished: SimpleQueue[tuple[list[int], Future]] = SimpleQueue()
        self.pending: dict[Future, list[int]] = {}  # submitted, not yet settled
        self.refused: list[int] = []  # never submitted: the executor refused them
        self.stopping = False
        self.ctrl_c = 0  # Ctrl-Cs seen by `_noticing_ctrl_c`'s handler
        self.answered = 0  # ... and acted on

    def collect(
        self, chunks: list[list[int]], progress: bool, max_in_flight: int | None
    ) -> list[Any]:
        """Each input's outcome: the worker's result dict, or the exception that stopped its
        chunk (a dead worker, a refusing executor, ...).

        Finished futures arrive through a queue their done-callbacks fill, so a batch costs
        O(runs) here however many are in flight. Ctrl-C (`KeyboardInterrupt`) cancels every
        chunk not yet started, waits for those running and raises; a second Ctrl-C stops
        waiting for them (their outcomes stay None)."""
        from tqdm.auto import tqdm

        size = max((len(chunk) for chunk in chunks), default=1)
        limit = -(-max_in_flight // size) if max_in_flight else len(chunks) or 1
        total = sum(map(len, chunks))
        bar = tqdm(total=total, disable=not progress, desc="runs", unit="run")
        with bar, self._noticing_ctrl_c():
            try:
                self._run(chunks, limit, bar)
            except KeyboardInterrupt:
                self.answered = self.ctrl_c
                self._stop(bar)
                raise
        return self.outcomes

    @contextmanager
    def _noticing_ctrl_c(self) -> Iterator[None]:
        """Ctrl-C counted as well as raised. Python drops an exception raised inside a
        finalizer, and a `KeyboardInterrupt` can land in one (a Dask future's `__del__`, run
        while this thread waits): the count lets the next wait raise it again. Only in the
        main thread, and only over Python's own handler (a kernel's or a user's is left be)."""
        if (
            threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        ):
            yield
            return

        def counted(signum: int, frame: Any) -> None:
            self.ctrl_c += 1
            signal.default_int_handler(signum, frame)

        signal.signal(signal.SIGINT, counted)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, signal.default_int_handler)

    def _run(self, chunks: list[list[int]], limit: int, bar: Any) -> None:
        for number, chunk in enumerate(chunks):
            while len(self.pending) >= limit:
                self._settle(bar)
            refused = self._submit(number, chunk)
            if refused is not None:
                rest = [index for later in chunks[number:] for index in later]
                for index in rest:
                    self.outcomes[index] = refused
                self.refused = rest
                bar.update(len(rest))
                break
        while self.pending:
            self._settle(bar)

    def _submit(self, number: int, chunk: list[int]) -> BaseException | None:
        """Submit one chunk; None, or the outcome of the runs the executor refused."""
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
            if worker_died(error):  # (a process pool that a dead worker broke)
                return error
            return RuntimeError(
                f"the executor ({type(self.executor).__name__}) refused this run: {refused}"
            )
        self.pending[future] = chunk
        future.add_done_callback(lambda done: self.finished.put((chunk, done)))
        return None

    def _settle(self, bar: Any) -> None:
        """Wait for one chunk to finish and keep its outcomes (a Ctrl-C whose exception was
        dropped is raised here again). A chunk settles once: a Ctrl-C that lands between a
        future's submission and its callback, or between taking it from the queue and
        settling it, leaves a done future whose news is lost; `_requeue_done` finds it."""
        while True:
            if self.ctrl_c > self.answered:
                self.answered = self.ctrl_c
                raise KeyboardInterrupt
            try:
                chunk, future = self.finished.get(timeout=_WAKE)
            except Empty:
                self._requeue_done()
                continue
            if self.pending.pop(future, None) is not None:
                break
        bar.update(len(chunk))
        if future.cancelled():
            return
        error = future.exception()  # (done: this never waits)
        if error is None:
            for result in future.result():
                self.outcomes[result["index"]] = result
        elif isinstance(error, (KeyboardInterrupt, SystemExit)):  # the worker was stopped
            if not self.stopping:
                raise error
        else:  # a dead worker, a graph that did not unpickle, ...
            for index in chunk:
                self.outcomes[index] = error

    def _requeue_done(self) -> None:
        """Queue again the pending futures that are done (their news lost to a Ctrl-C)."""
        for future, chunk in list(self.pending.items()):
            if future.done():
                self.finished.put((chunk, future))

    def _stop(self, bar: Any) -> None:
        """Ctrl-C: cancel the chunks not started and wait for the running ones."""
        self.stopping = True
        for future in list(self.pending):
            future.cancel()
        while self.pending:
            self._settle(bar)


def worker_died(error: BaseException) -> bool:
    """Whether `error` says a worker process died (not that the graph failed)."""
    return isinstance(error, BrokenExecutor) or type(error).__name__ == "KilledWorker"
