"""`app.run_many` and `Runs` (nbgraph/notebook/run_many.py, runs.py, workers.py; record/batch.py;
views/inspector/run_picker.py, runs_html.py) on threads and processes; Dask is in
test_run_many_dask.py."""

from __future__ import annotations

import operator
import os
import signal
import subprocess
import sys
import threading
import time
import types
from concurrent.futures import (
    BrokenExecutor,
    Executor,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
)
from pathlib import Path
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, MemorySaver, StateGraph
from nbgraph.notebook.daemon_threads import DaemonThreadPool
from nbgraph.notebook.run_many import (
    BatchInterrupted,
    ExecutorRejectedError,
    WorkerDiedError,
    default_chunk_size,
    default_workers,
)
from nbgraph.notebook.runs import Runs, RunsFolderError
from nbgraph.notebook.workers import GraphReference, GraphShippingError, find_reference


class State(TypedDict):
    x: int
    label: str
    log: Annotated[list, operator.add]


def double(state: State) -> dict:
    return {"x": state["x"] * 2, "log": ["double"]}


def small(state: State) -> dict:
    if state["x"] == 6:
        raise ValueError(f"no six, please (x={state['x']})")
    return {"label": "small", "log": ["small"]}


def big(state: State) -> dict:
    return {"label": "big", "log": ["big"]}


def die(state: State) -> dict:
    if state["x"] == 3:  # input 3: the worker process exits mid-batch
        os._exit(3)
    return {"log": ["die"]}


def size(state: State) -> str:
    return "small" if state["x"] < 8 else "big"


def build(checkpointer=None, first=double):
    return (
        StateGraph(State)
        .add_node("double", first)
        .add_node("small", small)
        .add_node("big", big)
        .add_edge(START, "double")
        .add_conditional_edges("double", size, ["small", "big"])
        .add_edge("small", END)
        .add_edge("big", END)
        .compile(checkpointer=checkpointer)
    )


APP = build()
"""Module-level: process workers find it by reference (`tests.notebook.test_run_many:APP`)."""

SAVED = build(checkpointer=MemorySaver())
"""Module-level with a checkpointer: it travels by reference, each worker its own saver."""

DYING = StateGraph(State).add_node("die", die).add_edge(START, "die").compile()

INPUTS = [{"x": i, "label": "", "log": []} for i in range(6)]


def check_batch(runs: Runs) -> None:
    """Runs of INPUTS on APP: order, outputs, the failure, complete records."""
    assert len(runs) == 6 and runs.indexes == list(range(6))
    assert [run.log.input["x"] for run in runs] == [0, 1, 2, 3, 4, 5]  # input order
    assert [run.status for run in runs] == ["done"] * 3 + ["failed"] + ["done"] * 2
    assert runs[4].output == {"x": 8, "label": "big", "log": ["double", "big"]}
    assert str(runs[3].error) == "no six, please (x=6)"
    assert type(runs[3].error).__name__ == "ValueError"
    table = runs.table
    assert list(table.columns[:7]) == [
        "index",
        "status",
        "error_type",
        "error",
        "duration",
        "steps",
        "path",
    ]
    assert list(table["path"]) == ["double → small"] * 4 + ["double → big"] * 2
    assert list(table["x"]) == [0, 2, 4, 6, 8, 10] and list(table["steps"]) == [2] * 6
    assert table.loc[3, "error_type"] == "ValueError" and table.loc[0, "error"] is None
    assert (table["duration"] > 0).all()
    for run in runs:  # the records are whole: every step's tasks and effects
        assert len(run.steps) == 2 and len(run.effects) >= 4
        assert run.state_at(("double", 0))["x"] == run.log.input["x"]


def test_threads_by_default_keep_order_failures_and_records():
    runs = APP.run_many(INPUTS, progress=False)
    check_batch(runs)
    assert runs[0].log.graph is APP.spec  # threads keep each Run as it ran
    assert APP.last_runs is runs


def test_any_executor_and_max_in_flight():
    with ThreadPoolExecutor(2) as pool:
        runs = APP.run_many(iter(INPUTS), executor=pool, progress=False, max_in_flight=2)
    check_batch(runs)


def test_processes_send_runs_back_as_run_json():
    with ProcessPoolExecutor(2) as pool:
        runs = APP.run_many(INPUTS, executor=pool, progress=False)
    check_batch(runs)
    assert runs[0].log.graph is APP.spec  # read back with the graph's own functions
    assert runs[4].remerge({"log": operator.add}).output["log"] == ["double", "big"]


def test_processes_with_a_graph_pickled_by_value():
    app = build()  # not a module global: sent by value (its functions pickle by reference)
    with ProcessPoolExecutor(1) as pool:
        runs = app.run_many(INPUTS[:3], executor=pool, progress=False)
    assert [run.output["x"] for run in runs] == [0, 2, 4]


def test_a_graph_that_cannot_be_shipped_names_its_node():
    app = build(first=lambda state: {"x": state["x"]})
    with ProcessPoolExecutor(1) as pool, pytest.raises(GraphShippingError) as caught:
        app.run_many(INPUTS, executor=pool, progress=False)
    message = str(caught.value)
    assert "node 'double'" in message and "graph='module:attribute'" in message


def test_a_checkpointer_does_not_travel_by_value():
    app = build(checkpointer=MemorySaver())
    with ProcessPoolExecutor(1) as pool, pytest.raises(GraphShippingError, match="MemorySaver"):
        app.run_many(INPUTS, executor=pool, progress=False)


def test_a_graph_named_by_reference():
    app = build(first=lambda state: {"x": state["x"]})  # its own functions do not matter:
    with ProcessPoolExecutor(1) as pool:  # the workers import tests.notebook.test_run_many:APP
        runs = app.run_many(
            INPUTS[:2], executor=pool, progress=False, graph="tests.notebook.test_run_many:APP"
        )
    assert [run.output["x"] for run in runs] == [0, 2]
    with pytest.raises(ValueError, match="module:attribute"):
        app.run_many(INPUTS, executor=ThreadPoolExecutor(1), graph="no-colon")


def test_an_input_that_kills_its_worker_fails_alone_and_names_itself():
    with ProcessPoolExecutor(1) as pool:
        runs = DYING.run_many(INPUTS, executor=pool, progress=False, max_in_flight=1)
    assert [run.status for run in runs] == ["done"] * 3 + ["failed"] + ["done"] * 2
    assert [run.output["log"] for run in runs.where(lambda r: r.status == "done")] == [
        ["die"]
    ] * 5  # the inputs after it ran in a fresh worker
    error = runs[3].error
    assert isinstance(error, WorkerDiedError) and isinstance(error, BrokenExecutor)
    assert str(error).startswith("input 3 killed its worker process: run again alone")
    assert "terminated abruptly" in str(error)  # BrokenProcessPool's own words
    assert type(error.__cause__).__name__ == "BrokenProcessPool"
    assert runs[3].log.input == INPUTS[3]  # the input is kept on the failed run
    assert list(runs.failed.table["index"]) == [3]


def test_a_dying_input_in_a_busy_pool_fails_only_itself():
    """Repro 02: 12 inputs on 2 workers, one run a task; input 3 kills its worker, which
    breaks the whole pool (every pending run failed with one error, the culprit unknown)."""
    inputs = [{"x": i, "label": "", "log": []} for i in range(12)]
    with ProcessPoolExecutor(2) as pool:
        runs = DYING.run_many(inputs, executor=pool, progress=False, chunk_size=1)
    assert runs.failed.indexes == [3] and isinstance(runs[3].error, WorkerDiedError)
    assert all(run.output["log"] == ["die"] for run in runs.where(lambda r: r.status == "done"))
    assert "input 3 killed" in runs.table.loc[3, "error"]


def test_checkpointer_gives_each_run_its_own_thread():
    app = build(checkpointer=MemorySaver())
    runs = app.run_many(INPUTS[:3], progress=False, thread_prefix="batch")
    assert [run.log.config["configurable"]["thread_id"] for run in runs] == [
        "batch-0",
        "batch-1",
        "batch-2",
    ]
    for i in range(3):
        state = app.get_state({"configurable": {"thread_id": f"batch-{i}"}})
        assert state.values["x"] == 2 * i
    again = app.run_many(INPUTS[:1], {"configurable": {"thread_id": "t"}}, progress=False)
    assert again[0].log.config["configurable"]["thread_id"] == "t-0"


@pytest.mark.parametrize(
    ("inputs", "words"),
    [(5, "got int 5"), ({"x": 1}, "got a dict"), ("abc", "got a str"), (None, "NoneType")],
)
def test_inputs_that_are_not_an_iterable_of_inputs(inputs, words):
    with pytest.raises(TypeError, match=words):
        APP.run_many(inputs, progress=False)


def test_bad_options():
    with pytest.raises(TypeError, match=r"concurrent\.futures\.Executor"):
        APP.run_many(INPUTS, executor=object(), progress=False)
    with pytest.raises(ValueError, match="positive int"):
        APP.run_many(INPUTS, max_in_flight=0, progress=False)


def test_an_executor_that_rejects_the_work():
    pool = ThreadPoolExecutor(1)
    pool.shutdown()
    with pytest.raises(ExecutorRejectedError, match="refused the first run"):
        APP.run_many(INPUTS, executor=pool, progress=False)


class TiredExecutor(Executor):
    """Runs two submissions inline, then refuses."""

    def __init__(self):
        self.taken = 0

    def submit(self, fn, /, *args, **kwargs):
        if self.taken == 2:
            raise RuntimeError("no more work today")
        self.taken += 1
        future: Future = Future()
        future.set_result(fn(*args, **kwargs))
        return future


def test_an_executor_that_rejects_midway_fails_the_rest_and_keeps_what_ran():
    runs = APP.run_many(INPUTS, executor=TiredExecutor(), progress=False)
    assert [run.status for run in runs] == ["done", "done"] + ["failed"] * 4
    assert "no more work today" in str(runs[2].error) and "refused" in str(runs[2].error)
    assert runs[1].output["x"] == 2  # (a non-thread executor: the run came back as JSON)


def test_a_failing_input_never_stops_the_others():
    runs = APP.run_many([*INPUTS, "not a dict"], progress=False)
    assert runs[6].status == "failed" and "Expected dict" in str(runs[6].error)
    assert runs.table.loc[6, "path"] == "" and runs.table.loc[6, "steps"] == 0
    assert [run.status for run in runs[:6]].count("done") == 5


def test_paths_effects_where_failed_and_compare():
    runs = APP.run_many(INPUTS, progress=False)
    paths = runs.paths()
    assert list(paths["path"]) == ["double → small", "double → big"]
    assert list(paths["count"]) == [4, 2] and list(paths["inputs"]) == [[0, 1, 2, 3], [4, 5]]
    assert list(paths["failed"]) == [1, 0]
    effects = runs.effects
    assert effects.columns[0] == "run" and set(effects["run"]) == set(range(6))
    assert len(effects) == sum(len(run.effects) for run in runs)
    big_runs = runs.where(lambda run: run.output["label"] == "big")
    assert big_runs.indexes == [4, 5] and big_runs[0] is runs[4]
    assert list(big_runs.table["index"]) == [4, 5]
    assert runs.failed.indexes == [3] and len(runs.failed) == 1
    compared = runs[0].compare(runs[4])
    assert len(compared) > 0


def test_save_and_load_a_folder(tmp_path):
    runs = APP.run_many(INPUTS, progress=False)
    folder = runs.failed.save(tmp_path / "failed")
    assert sorted(p.name for p in folder.iterdir()) == ["run-00003.json", "runs.json"]
    runs.save(tmp_path / "all")
    back = Runs.load(tmp_path / "all", graph=APP)
    assert back.indexes == runs.indexes and back.durations == runs.durations
    assert back.table.drop(columns="error").equals(runs.table.drop(columns="error"))
    assert str(back[3].error) == str(runs[3].error)
    assert back[4].output == runs[4].output and back[4].effects.shape == runs[4].effects.shape
    with pytest.raises(RunsFolderError, match=r"runs\.json"):
        Runs.load(tmp_path)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "runs.json").write_text(
        '{"format": "nbgraph.runs", "version": 1, "runs": [{"index": 0, "file": "../x"}]}'
    )
    with pytest.raises(RunsFolderError, match="incomplete"):
        Runs.load(tmp_path / "bad")


def test_repr_and_escaped_html():
    app = build()
    runs = app.run_many([{"x": 1, "label": "<script>alert(1)</script>", "log": []}], progress=False)
    assert repr(runs) == "<Runs: 1 run, 0 failed, 1 distinct path>"
    page = runs._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" not in page  # label became "small"
    evil = (
        StateGraph(State)
        .add_node("<b>n</b>", lambda s: {"label": "<img src=x>"})
        .add_edge(START, "<b>n</b>")
        .compile()
    )
    page = evil.run_many([{"x": 1, "label": "", "log": []}], progress=False)._repr_html_()
    assert "<img" not in page and "<b>n</b>" not in page
    assert "&lt;img src=x&gt;" in page and "&lt;b&gt;n&lt;/b&gt;" in page


def test_the_html_of_a_big_batch_names_a_path_s_first_inputs_and_counts_the_rest():
    runs = build().run_many([{"x": i, "label": "", "log": []} for i in range(40)], progress=False)
    inputs = runs.paths()["inputs"][0]
    assert len(inputs) > 12
    page = runs._repr_html_()
    shown = ", ".join(map(str, inputs[:12]))
    assert f"{shown}, … ({len(inputs) - 12} more)" in page
    assert f", {inputs[12]}," not in page


def test_the_picker_filters_and_shows_the_inspector():
    pytest.importorskip("ipywidgets")
    runs = APP.run_many(INPUTS, progress=False)
    picker = runs.inspect()
    assert len(picker.run.options) == 6 and picker.inspector.run is runs[0]
    picker.status.value = "failed"
    assert [value for _, value in picker.run.options] == [3]
    assert picker.inspector.run is runs[3]
    picker.status.index = 0  # "any status"
    picker.path.value = "double → big"
    assert [label for label, _ in picker.run.options] == [
        "#4 · done · double → big",
        "#5 · done · double → big",
    ]
    assert picker.pick(2).run is runs[2] and picker.path.index == 0  # "any path" again
    with pytest.raises(IndexError, match="no run of input 9"):
        picker.pick(9)


def test_progress_bar_in_a_terminal(capsys):
    APP.run_many(INPUTS, progress=True)
    assert "6/6" in capsys.readouterr().err


def test_threads_run_at_once():
    seen, gate = set(), threading.Barrier(3, timeout=10)

    def wait_for_three(state: State) -> dict:
        seen.add(threading.get_ident())
        gate.wait()
        return {}

    app = StateGraph(State).add_node("w", wait_for_three).add_edge(START, "w").compile()
    runs = app.run_many(INPUTS[:3], progress=False, executor=ThreadPoolExecutor(3))
    assert [run.status for run in runs] == ["done"] * 3 and len(seen) == 3


def test_a_checkpointer_travels_with_a_graph_found_by_reference():
    with ProcessPoolExecutor(1) as pool:
        runs = SAVED.run_many(INPUTS[:2], executor=pool, progress=False)
    assert [run.output["x"] for run in runs] == [0, 2]
    assert [run.log.config["configurable"]["thread_id"] for run in runs] == ["run-0", "run-1"]


def test_the_default_pool_is_sized_for_the_machine():
    names = set()

    def where(state: State) -> dict:
        names.add(threading.current_thread().name)
        return {}

    app = StateGraph(State).add_node("w", where).add_edge(START, "w").compile()
    app.run_many(INPUTS, progress=False)
    assert names and all(name.startswith("nbgraph-run-many") for name in names)
    assert default_workers() == min(32, (os.cpu_count() or 1) + 4)


class CountingExecutor(ThreadPoolExecutor):
    """A thread pool that notes the most runs submitted and not yet finished."""

    def __init__(self):
        super().__init__(4)
        self.open, self.most, self.lock = 0, 0, threading.Lock()

    def submit(self, fn, /, *args, **kwargs):
        with self.lock:
            self.open += 1
            self.most = max(self.most, self.open)
        future = super().submit(fn, *args, **kwargs)
        future.add_done_callback(lambda _: self._close())
        return future

    def _close(self):
        with self.lock:
            self.open -= 1


def test_max_in_flight_bounds_the_runs_submitted_at_once():
    with CountingExecutor() as pool:
        runs = APP.run_many(INPUTS * 3, executor=pool, progress=False, max_in_flight=2)
    assert len(runs) == 18 and pool.most <= 2
    with CountingExecutor() as pool:
        APP.run_many(INPUTS * 3, executor=pool, progress=False)
    assert pool.most > 2


def test_a_reference_the_workers_cannot_load_fails_each_run_saying_so():
    with ProcessPoolExecutor(1) as pool:
        runs = APP.run_many(INPUTS[:2], executor=pool, progress=False, graph="no_such_mod:app")
        wrong = APP.run_many(INPUTS[:1], executor=pool, progress=False, graph="os:sep")
    assert [run.status for run in runs] == ["failed", "failed"]
    assert "could not load the graph 'no_such_mod:app'" in str(runs[0].error)
    assert "is a str, not a compiled graph" in str(wrong[0].error)


def test_the_benchmark_prints_its_table(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import many_runs

    many_runs.main(["--quick"])
    out = capsys.readouterr().out
    for row in ("nbgraph: loop of invoke", "run_many, threads", "run_many, 2 processes"):
        assert f"| {row}" in out or row in out


def test_no_inputs_no_runs():
    runs = APP.run_many([], progress=False)
    assert len(runs) == 0 and repr(runs) == "<Runs: 0 runs, 0 failed, 0 distinct paths>"
    assert list(runs.table.columns) == [
        "index",
        "status",
        "error_type",
        "error",
        "duration",
        "steps",
        "path",
    ]
    assert runs.paths().empty and runs.effects.empty and runs.inspect().inspector is None


def test_processes_in_chunks_keep_order_and_a_dead_worker_fails_only_its_culprit():
    with ProcessPoolExecutor(2) as pool:
        check_batch(APP.run_many(INPUTS, executor=pool, progress=False, chunk_size=4))
    with ProcessPoolExecutor(1) as pool:
        runs = DYING.run_many(INPUTS, executor=pool, progress=False, chunk_size=2, max_in_flight=2)
    assert [run.status for run in runs] == ["done"] * 3 + ["failed"] + ["done"] * 2
    with pytest.raises(ValueError, match="chunk_size"):
        APP.run_many(INPUTS, chunk_size=0, progress=False)
    assert default_chunk_size(10) == 1 and default_chunk_size(2000) == 31
    assert default_chunk_size(10**6) == 50


def test_the_main_module_is_never_a_reference_for_workers_that_do_not_share_it(monkeypatch):
    app = build()
    main = types.ModuleType("__mp_main__")
    main.app = app
    monkeypatch.setitem(sys.modules, "__mp_main__", main)
    assert find_reference(app, main_shared=False) is None
    assert find_reference(app, main_shared=True) is None  # (only "__main__" is shared)
    monkeypatch.setitem(sys.modules, "elsewhere", types.ModuleType("elsewhere"))
    sys.modules["elsewhere"].flow = app
    assert find_reference(app, main_shared=False) == GraphReference("elsewhere", "flow")


def test_runs_from_processes_are_read_when_asked_and_their_summaries_agree():
    with ProcessPoolExecutor(2) as pool:
        runs = APP.run_many([*INPUTS, "not a dict"], executor=pool, progress=False)
    table, paths, failed = runs.table, runs.paths(), runs.failed
    assert all(slot._run is None for slot in runs._slots)  # nothing read back yet
    assert failed.indexes == [3, 6] and repr(runs).startswith("<Runs: 7 runs, 2 failed")
    fresh = Runs(list(runs))  # every run read back; its table made from the runs themselves
    assert fresh.table.drop(columns="duration").equals(table.drop(columns="duration"))
    assert fresh.paths().equals(paths)
    assert runs[:2].indexes == [0, 1] and runs[-1].status == "failed"


def ctrl_c_after(*seconds: float) -> None:
    """Send this process SIGINT (Ctrl-C) at each of those times from now."""
    for delay in seconds:
        threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT)).start()


def test_ctrl_c_starts_no_further_run_waits_for_the_running_and_keeps_them():
    """Repro 01: Ctrl-C ran every remaining input, then threw every run away."""
    started, ended = {}, {}

    def slow(state: State) -> dict:
        started[state["x"]] = time.monotonic()
        time.sleep(0.5)
        ended[state["x"]] = time.monotonic()
        return {"x": state["x"] + 1}

    app = StateGraph(State).add_node("slow", slow).add_edge(START, "slow").compile()
    inputs = [{"x": i, "label": "", "log": []} for i in range(48)]
    began = time.monotonic()
    ctrl_c_after(0.75)
    with pytest.raises(BatchInterrupted) as caught:
        app.run_many(inputs, progress=False, executor=ThreadPoolExecutor(4))
    waited = time.monotonic() - began - 0.75
    stopped = caught.value
    assert isinstance(stopped, KeyboardInterrupt) and waited < 0.75
    assert not any(t > began + 0.75 for t in started.values())  # none started after Ctrl-C
    assert set(ended) == set(started)  # the runs running at Ctrl-C finished ...
    assert stopped.runs.indexes == sorted(started) and len(started) == 8  # ... and are kept
    assert [run.output["x"] for run in stopped.runs] == [i + 1 for i in sorted(started)]
    assert stopped.not_run == list(range(8, 48)) and app.last_runs is stopped.runs
    assert "8 of 48 runs finished" in str(stopped)


def test_a_ctrl_c_whose_exception_python_dropped_still_stops_the_batch():
    """A `KeyboardInterrupt` raised inside a finalizer (a Dask future's `__del__` run while
    the batch waits) is dropped by Python; the batch counts Ctrl-C as it comes and raises it
    again at its next wait. Here a node calls the SIGINT handler and swallows what it raises,
    as a finalizer would."""
    import contextlib
    import signal

    def drop_a_ctrl_c(state: State) -> dict:
        if state["x"] == 1:
            with contextlib.suppress(KeyboardInterrupt):  # (dropped, as by a finalizer)
                signal.getsignal(signal.SIGINT)(signal.SIGINT, None)
        time.sleep(0.2)
        return {"x": state["x"] + 1}

    app = StateGraph(State).add_node("drop", drop_a_ctrl_c).add_edge(START, "drop").compile()
    inputs = [{"x": i, "label": "", "log": []} for i in range(40)]
    with pytest.raises(BatchInterrupted) as caught:
        app.run_many(inputs, progress=False, executor=ThreadPoolExecutor(2))
    stopped = caught.value
    assert 2 <= len(stopped.runs) < 10 and all(run.status == "done" for run in stopped.runs)
    assert sorted(stopped.runs.indexes + stopped.not_run) == list(range(40))
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # (put back)


class _Forgetful(Future):
    def add_done_callback(self, fn):  # (its news lost, as to a Ctrl-C landing at that moment)
        pass


class _LosesNews(ThreadPoolExecutor):
    """Runs each chunk, but the future it hands back never calls its done-callbacks."""

    def submit(self, fn, /, *args, **kwargs):
        ran, lost = super().submit(fn, *args, **kwargs), _Forgetful()
        ran.add_done_callback(lambda ran: lost.set_result(ran.result()))
        return lost


def test_a_chunk_whose_done_callback_never_came_is_still_settled():
    """A Ctrl-C can land between a future's submission and its callback, or between taking
    its news from the queue and settling it: the batch finds done futures itself (CI hung
    in `_stop` waiting for news that never came)."""
    app = StateGraph(State).add_node("a", lambda s: {"x": s["x"] + 1}).add_edge(START, "a")
    app = app.compile()
    inputs = [{"x": i, "label": "", "log": []} for i in range(6)]
    got: list = []
    worker = threading.Thread(
        target=lambda: got.append(app.run_many(inputs, progress=False, executor=_LosesNews(2))),
        daemon=True,
    )
    worker.start()
    worker.join(20)
    assert got, "run_many waited for callbacks that never came"
    assert [run.output["x"] for run in got[0]] == [i + 1 for i in range(6)]


def test_a_second_ctrl_c_abandons_a_hung_run():
    release = threading.Event()

    def hang(state: State) -> dict:
        if state["x"] == 1:
            release.wait(30)
        return {}

    app = StateGraph(State).add_node("hang", hang).add_edge(START, "hang").compile()
    began = time.monotonic()
    ctrl_c_after(0.5, 1.0)
    try:
        with pytest.raises(BatchInterrupted) as caught:
            app.run_many(INPUTS, progress=False)
    finally:
        release.set()
    assert time.monotonic() - began < 5  # the hung run was abandoned at the second Ctrl-C
    assert caught.value.runs.indexes == [0, 2, 3, 4, 5] and caught.value.not_run == [1]


ABANDONING_SCRIPT = """
import os, signal, threading
from typing import TypedDict
from nbgraph import START, StateGraph

class S(TypedDict):
    x: int

def hang(state):
    if state["x"] == 1:
        threading.Event().wait()  # never returns
    return {}

app = StateGraph(S).add_node("hang", hang).add_edge(START, "hang").compile()
for delay in (0.5, 1.0):
    threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    app.run_many([{"x": i} for i in range(4)], progress=False)
except KeyboardInterrupt as stopped:
    print(type(stopped).__name__, stopped.runs.indexes, stopped.not_run)
"""


def test_an_abandoned_run_does_not_hold_the_process_open_at_exit():
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", ABANDONING_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )  # (a ThreadPoolExecutor's thread would keep the process waiting for the hung node)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "BatchInterrupted [0, 2, 3] [1]"


def test_the_default_pool_cancels_what_it_has_not_started():
    gate = threading.Event()
    pool = DaemonThreadPool(1, "one")
    first, second = pool.submit(gate.wait, 10), pool.submit(int, "2")
    pool.shutdown(wait=False, cancel_futures=True)
    assert second.cancelled() and not first.cancelled()
    gate.set()
    assert first.result(timeout=10) is True
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(int, "3")


def nap(state: State) -> dict:
    time.sleep(0.3)
    return {"log": ["nap"]}


NAPPING = StateGraph(State).add_node("nap", nap).add_edge(START, "nap").compile()


def test_ctrl_c_on_a_process_pool_keeps_the_runs_handed_to_its_workers():
    inputs = [{"x": i, "label": "", "log": []} for i in range(30)]
    with ProcessPoolExecutor(2) as pool:
        NAPPING.run_many(inputs[:2], executor=pool, progress=False)  # (the workers started)
        began = time.monotonic()
        ctrl_c_after(0.45)
        with pytest.raises(BatchInterrupted) as caught:
            NAPPING.run_many(inputs, executor=pool, progress=False, chunk_size=1)
        waited = time.monotonic() - began - 0.45
        again = NAPPING.run_many(inputs[:1], executor=pool, progress=False)
    stopped = caught.value
    assert waited < 1.2  # the runs running, and those Python already queued to the workers
    assert 2 <= len(stopped.runs) <= 9 and all(run.status == "done" for run in stopped.runs)
    assert sorted(stopped.runs.indexes + stopped.not_run) == list(range(30))
    assert again[0].status == "done"  # the pool goes on


def _exits_on_two(state):
    if state["x"] == 2:
        sys.exit(3)
    return {"log": [state["x"]]}


@pytest.mark.parametrize("executor", [None, "pool"], ids=["default", "ThreadPoolExecutor"])
def test_one_input_calling_sys_exit_fails_that_run_only(executor):
    app = (
        StateGraph(State)
        .add_node("n", _exits_on_two)
        .add_edge(START, "n")
        .add_edge("n", END)
        .compile()
    )
    pool = ThreadPoolExecutor(2) if executor else None
    try:
        runs = app.run_many(
            [{"x": x, "log": []} for x in range(5)], executor=pool, progress=False, chunk_size=1
        )
    finally:
        if pool is not None:
            pool.shutdown()
    assert [run.status for run in runs] == ["done", "done", "failed", "done", "done"]
    assert isinstance(runs[2].error, SystemExit) and runs[2].error.code == 3
