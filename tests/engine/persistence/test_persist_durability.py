"""Durability and concurrency of checkpointed runs: SIGKILL mid-run, threads, processes."""

from __future__ import annotations

import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, MemorySaver, SqliteSaver, StateGraph
from nbgraph.checkpoint import ThreadBusyError
from nbgraph.engine.persistence.durability import BATCH

REPO = Path(__file__).resolve().parents[3]
TICKS = 400

# The graph of the kill test, built the same way in the subprocess and in this process.
LOOP_GRAPH = f"""
import time
from typing import Annotated, TypedDict

from nbgraph import END, START, StateGraph


class Loop(TypedDict):
    log: Annotated[list, "append"]
    n: int


PROGRESS = None  # the killed run notes each tick it starts here


def tick(state):
    if PROGRESS:
        with open(PROGRESS, "a") as progress:
            progress.write(f"{{state['n']}}\\n")
    time.sleep(0.005)
    return {{"log": [state["n"]], "n": state["n"] + 1}}


def build(saver):
    return (
        StateGraph(Loop)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= {TICKS} else "tick")
        .compile(checkpointer=saver)
    )
"""

KILLED_RUN = """
import sys
from nbgraph import SqliteSaver

PROGRESS = sys.argv[3]
app = build(SqliteSaver(sys.argv[1]))
config = {"configurable": {"thread_id": "k"}, "recursion_limit": 1000}
app.invoke({"log": [], "n": 0}, config, durability=sys.argv[2])
print("finished")  # never reached: the test kills the process first
"""

HOLDING_RUN = """
import pathlib
import sys
import time
from typing import TypedDict

from nbgraph import END, START, SqliteSaver, StateGraph

entered, release = pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])


class Held(TypedDict):
    n: int


def hold(state):
    entered.touch()
    deadline = time.monotonic() + 15
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return {"n": state["n"] + 1}


app = (
    StateGraph(Held)
    .add_node("hold", hold)
    .add_edge(START, "hold")
    .add_edge("hold", END)
    .compile(checkpointer=SqliteSaver(sys.argv[1]))
)
print(app.invoke({"n": 0}, {"configurable": {"thread_id": "busy"}}))
"""


def wait_for(condition, timeout: float, what: str, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the subprocess ended (rc {proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


def checkpoint_count(path: Path, thread_id: str) -> int:
    if not path.exists() or path.stat().st_size == 0:
        return 0
    with SqliteSaver(path) as saver:
        return len(saver.history(thread_id))


def claim_owner(path: Path, thread_id: str) -> str | None:
    conn = sqlite3.connect(path)
    try:
        row = conn.execute("SELECT owner FROM claims WHERE thread_id = ?", (thread_id,)).fetchone()
    finally:
        conn.close()
    return None if row is None else row[0]


def assert_one_chain(history: list, thread_id: str, last_step: int) -> None:
    """Newest first: steps last_step..-1 (the input checkpoint) with no gap, each checkpoint
    the parent of the next."""
    assert [h.metadata["step"] for h in history] == list(range(last_step, -2, -1))
    for newer, older in itertools.pairwise(history):
        assert newer.parent_config == older.config
    assert history[-1].parent_config is None
    assert history[-1].metadata["source"] == "input"
    assert {h.metadata["source"] for h in history[:-1]} <= {"loop"}
    assert {h.config["configurable"]["thread_id"] for h in history} == {thread_id}


def started_ticks(progress: Path) -> int:
    """The last tick the killed run started (-1: none)."""
    if not progress.exists():
        return -1
    done = [line for line in progress.read_text().splitlines() if line]
    return int(done[-1]) if done else -1


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_a_run_killed_mid_way_keeps_what_its_durability_promises(tmp_path, durability):
    """sync: every finished step; async: all but the last batch's; exit: nothing of the run.
    Then the thread resumes (exit: runs again) to the end."""
    db, progress = tmp_path / "killed.sqlite", tmp_path / "progress.txt"
    script = tmp_path / "killed_run.py"
    script.write_text(LOOP_GRAPH + KILLED_RUN)
    args = [sys.executable, str(script), str(db), durability, str(progress)]
    proc = subprocess.Popen(args, cwd=REPO)
    try:
        wait_for(lambda: started_ticks(progress) >= 2 * BATCH + 40, 60, "the ticks", proc)
        assert proc.poll() is None, "the run finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(10)  # reaped: the pid no longer exists, so its claim is stale
    assert proc.returncode == -signal.SIGKILL
    started = started_ticks(progress)  # tick n runs in step n + 1, after step n's checkpoint

    namespace: dict = {"__name__": "loop_graph"}  # the same graph, built in this process
    exec(compile(LOOP_GRAPH, "loop_graph", "exec", dont_inherit=True), namespace)
    owner = claim_owner(db, "k")
    assert owner is not None and f":{proc.pid}:" in owner  # the killed run's claim is left

    saver = SqliteSaver(db)
    app = namespace["build"](saver)
    config = {"configurable": {"thread_id": "k"}, "recursion_limit": 1000}
    history = list(app.get_state_history(config))
    if durability == "exit":
        assert history == []  # nothing of the unfinished run
        final = app.invoke({"log": [], "n": 0}, config, durability="exit")
        assert final == {"log": list(range(TICKS)), "n": TICKS}
        assert [h.metadata["step"] for h in app.get_state_history(config)] == [TICKS]
        assert claim_owner(db, "k") is None
        saver.close()
        return
    last = history[0].metadata["step"]
    lost = 0 if durability == "sync" else 2 * BATCH  # (async: the batches in flight)
    assert started - lost <= last < TICKS, (started, last)
    assert_one_chain(history, "k", last)
    for snapshot in history[:-1]:  # every saved superstep holds the state after that step
        step = snapshot.metadata["step"]
        assert snapshot.values == {"log": list(range(step)), "n": step}
    latest = app.get_state(config)
    assert latest.values == {"log": list(range(last)), "n": last}
    assert latest.next == ("tick",)
    assert latest.config == history[0].config

    final = app.invoke(None, config, durability=durability)  # the dead claim does not block
    assert final == {"log": list(range(TICKS)), "n": TICKS}
    assert claim_owner(db, "k") is None  # the resumed run released the claim it took over
    saver.close()

    with SqliteSaver(db) as reopened:
        again = namespace["build"](reopened)
        history = list(again.get_state_history(config))
        assert_one_chain(history, "k", TICKS)
        assert history[0].values == {"log": list(range(TICKS)), "n": TICKS}
        assert history[0].next == ()
        assert history[-last - 2].config == latest.config  # the old checkpoints are untouched


class Counter(TypedDict):
    who: str
    log: Annotated[list, "append"]
    n: int


STEPS = 50
IDS = [f"t{i}" for i in range(4)]


@pytest.fixture(params=["memory", "sqlite-file"])
def shared_saver(request, tmp_path):
    if request.param == "memory":
        yield MemorySaver()
        return
    with SqliteSaver(tmp_path / "shared.sqlite") as saver:
        yield saver


def test_four_threads_with_their_own_thread_ids_share_one_saver(shared_saver):
    def tick(state):
        time.sleep(0.001)  # let the threads interleave
        return {"log": [f"{state['who']}:{state['n']}"], "n": state["n"] + 1}

    app = (
        StateGraph(Counter)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= STEPS else "tick")
        .compile(checkpointer=shared_saver)
    )
    start = threading.Barrier(len(IDS))
    results: dict[str, object] = {}

    def run(thread_id: str) -> None:
        try:
            start.wait(10)
            config = {"configurable": {"thread_id": thread_id}, "recursion_limit": STEPS + 10}
            results[thread_id] = app.invoke({"who": thread_id, "log": [], "n": 0}, config)
        except BaseException as error:  # reported below, with the thread it happened in
            results[thread_id] = error

    workers = [threading.Thread(target=run, args=(thread_id,)) for thread_id in IDS]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert not any(worker.is_alive() for worker in workers)

    spans = []
    for thread_id in IDS:
        expected = {"who": thread_id, "log": [f"{thread_id}:{i}" for i in range(STEPS)]}
        assert results[thread_id] == {**expected, "n": STEPS}
        config = {"configurable": {"thread_id": thread_id}}
        history = list(app.get_state_history(config))
        assert_one_chain(history, thread_id, STEPS)
        assert history[-1].values == {"log": []}  # the input checkpoint: before the input
        for snapshot in history[:-1]:
            step = snapshot.metadata["step"]
            log = [f"{thread_id}:{i}" for i in range(step)]
            assert snapshot.values == {"who": thread_id, "log": log, "n": step}
        records = shared_saver.history(thread_id)
        assert {r.thread_id for r in records} == {thread_id}
        spans.append((records[-1].created_at, records[0].created_at))
    assert sorted(shared_saver.threads()) == IDS
    ids = [r.checkpoint_id for t in IDS for r in shared_saver.history(t)]
    assert len(ids) == len(set(ids)) == len(IDS) * (STEPS + 2)
    assert max(s for s, _ in spans) < min(e for _, e in spans)  # the runs overlapped in time


def test_a_thread_running_in_another_process_is_refused_by_name(tmp_path):
    db = tmp_path / "busy.sqlite"
    entered, release = tmp_path / "entered", tmp_path / "release"
    script = tmp_path / "holding_run.py"
    script.write_text(HOLDING_RUN)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(db), str(entered), str(release)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    class Held(TypedDict):
        n: int

    saver = None
    try:
        wait_for(entered.exists, 30, "the other process to start its run", proc)
        saver = SqliteSaver(db)
        app = (
            StateGraph(Held)
            .add_node("hold", lambda s: {"n": s["n"] + 1})
            .add_edge(START, "hold")
            .add_edge("hold", END)
            .compile(checkpointer=saver)
        )
        config = {"configurable": {"thread_id": "busy"}}
        with pytest.raises(ThreadBusyError, match="'busy'") as caught:
            app.invoke({"n": 0}, config)
        assert caught.value.thread_id == "busy"
        assert f"pid {proc.pid}" in str(caught.value)
        with pytest.raises(ThreadBusyError, match="'busy'"):
            app.invoke(None, config)  # a resume is refused too
        # reading the thread, and running another one, are not blocked by the claim (the
        # other run's default durability, "async", writes its checkpoints a few ms late)
        wait_for(lambda: app.get_state(config).values == {"n": 0}, 10, "the other run's state")
        assert app.invoke({"n": 10}, {"configurable": {"thread_id": "free"}}) == {"n": 11}

        release.touch()
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert out.strip() == "{'n': 1}"
        assert claim_owner(db, "busy") is None
        assert app.invoke({"n": 5}, config) == {"n": 6}  # free again: continues the thread
        steps = [h.metadata["step"] for h in app.get_state_history(config)]
        assert steps == [4, 3, 2, 1, 0, -1]  # LangGraph's: an input checkpoint per invoke
    finally:
        release.touch()
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)
        if saver is not None:
            saver.close()
