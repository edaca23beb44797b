"""`app.run_many` on a real Dask `LocalCluster` with two worker processes (the `dask` extra:
`distributed`): results, order, failures, complete records, a graph sent by value
(cloudpickle: lambdas too) and a worker killed mid-batch."""

from __future__ import annotations

import operator
import os
import signal
import threading
import time
from typing import Annotated, TypedDict

import pytest

from nbgraph import START, StateGraph
from nbgraph.notebook.run_many import BatchInterrupted

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")

pytestmark = pytest.mark.slow


class State(TypedDict):
    x: int
    pid: int
    log: Annotated[list, operator.add]
    marker: str


def step(state: State) -> dict:
    if state["x"] == 3:
        raise ValueError("three is not allowed")
    return {"x": state["x"] + 10, "pid": os.getpid(), "log": ["step"]}


def route(state: State) -> str:
    return "even" if state["x"] % 2 == 0 else "odd"


def die_on_two(state: State) -> dict:
    if state["x"] == 2:
        os._exit(7)
    return {"log": ["survived"]}


def build(first=step):
    return (
        StateGraph(State)
        .add_node("step", first)
        .add_node("even", lambda s: {"log": ["even"]})
        .add_node("odd", lambda s: {"log": ["odd"]})
        .add_edge(START, "step")
        .add_conditional_edges("step", route, ["even", "odd"])
        .compile()
    )


DYING = StateGraph(State).add_node("die", die_on_two).add_edge(START, "die").compile()


@pytest.fixture(scope="module")
def client():
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        with cluster, distributed.Client(cluster) as client:
            yield client


def test_dask_runs_come_back_in_order_with_their_records(client):
    app = build()  # lambdas, defined here: Dask sends the graph by value with cloudpickle
    inputs = [{"x": i, "pid": 0, "log": []} for i in range(8)]
    runs = app.run_many(inputs, executor=client.get_executor(), progress=False)
    assert len(runs) == 8 and [run.log.input["x"] for run in runs] == list(range(8))
    assert [run.status for run in runs] == ["done"] * 3 + ["failed"] + ["done"] * 4
    assert str(runs[3].error) == "three is not allowed"
    assert runs[4].output["log"] == ["step", "even"] and runs[5].output["log"] == ["step", "odd"]
    assert list(runs.paths()["count"]) == [4, 3, 1]
    pids = {run.output["pid"] for run in runs if run.status == "done"}
    assert os.getpid() not in pids  # they ran in the worker processes
    for run in runs:  # complete records: tasks, effects, the state tree
        if run.status == "done":
            assert list(run.steps["node"]) == ["step", run.output["log"][1]]
            assert run.state_at(("step", 0))["x"] == run.log.input["x"]
    assert runs[0].log.graph is app.spec  # read back with this graph's functions


def test_an_input_that_kills_its_dask_worker_fails_alone_and_the_rest_run(client):
    inputs = [{"x": i, "pid": 0, "log": []} for i in range(5)]
    runs = DYING.run_many(inputs, executor=client.get_executor(), progress=False, max_in_flight=2)
    assert runs.failed.indexes == [2] and runs[2].log.input == inputs[2]
    assert type(runs[2].error).__name__ == "WorkerDiedError"
    assert str(runs[2].error).startswith("input 2 killed its worker process")
    assert type(runs[2].error.__cause__).__name__ == "KilledWorker"
    for index in (0, 1, 3, 4):  # those the dead worker held ran again on a live one
        assert runs[index].output["log"] == ["survived"]


def nap(state: State) -> dict:
    time.sleep(0.5)
    marker = state.get("marker")
    if marker:  # (the test's Ctrl-C waits for a first run to finish, however loaded the box)
        open(f"{marker}.{state['x']}", "w").close()
    return {"log": ["napped"]}


def _ctrl_c_after_a_run_finishes(marker: str, fired: list[float]) -> None:
    deadline = time.monotonic() + 60
    folder, stem = os.path.split(marker)
    while time.monotonic() < deadline:
        if any(name.startswith(stem + ".") for name in os.listdir(folder)):
            break
        time.sleep(0.02)
    time.sleep(1.0)  # (the finished run's result on its way back to this process)
    fired.append(time.monotonic())
    os.kill(os.getpid(), signal.SIGINT)


def test_ctrl_c_on_dask_cancels_the_rest_at_once_and_keeps_what_finished(client, tmp_path):
    app = StateGraph(State).add_node("nap", nap).add_edge(START, "nap").compile()
    executor = client.get_executor()
    marker = str(tmp_path / "done")
    inputs = [{"x": i, "pid": 0, "log": [], "marker": marker} for i in range(20)]
    fired: list[float] = []
    threading.Thread(target=_ctrl_c_after_a_run_finishes, args=(marker, fired)).start()
    with pytest.raises(BatchInterrupted) as caught:
        app.run_many(inputs, executor=executor, progress=False, chunk_size=1)
    assert time.monotonic() - fired[0] < 0.4 + 0.5  # Dask's running runs are cancelled too
    stopped = caught.value
    assert stopped.runs.indexes and all(run.status == "done" for run in stopped.runs)
    assert sorted(stopped.runs.indexes + stopped.not_run) == list(range(20))
    again = app.run_many(inputs[:1], executor=executor, progress=False)  # the cluster goes on
    assert again[0].output["log"] == ["napped"]
