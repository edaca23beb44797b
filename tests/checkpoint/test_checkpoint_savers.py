"""Checkpoint savers (nbgraph/checkpoint): storing records and writes, claims, SQLite files."""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pydantic
import pytest

from nbgraph.checkpoint import (
    BaseSaver,
    CheckpointFileError,
    CheckpointRecord,
    InMemorySaver,
    MemorySaver,
    PendingWrite,
    SqliteSaver,
    ThreadBusyError,
)
from nbgraph.checkpoint.sqlite_file import SCHEMA
from nbgraph.codec.nesting import ValueTooDeepError
from nbgraph.codec.values import Unrepresentable
from nbgraph.errors import InvalidArgumentError, NbgraphError
from nbgraph.messages import Message
from nbgraph.types import MISSING

REPO = Path(__file__).resolve().parents[2]


class Item(pydantic.BaseModel):
    name: str
    tags: tuple[str, ...] = ()


def record(
    thread_id: str = "t1",
    checkpoint_id: str = "c1",
    parent_id: str | None = None,
    *,
    step: int = 0,
    source: str = "loop",
    payload: object = None,
    snapshot: object = None,
) -> CheckpointRecord:
    return CheckpointRecord(
        thread_id, checkpoint_id, parent_id, step, source, time.time(), payload, snapshot
    )


def put_chain(saver: BaseSaver, thread_id: str, count: int) -> list[str]:
    """Put `count` checkpoints, each the parent of the next; returns their ids."""
    ids = [f"{thread_id}-c{i}" for i in range(count)]
    for i, checkpoint_id in enumerate(ids):
        parent = ids[i - 1] if i else None
        source = "input" if i == 0 else "loop"
        saver.put(record(thread_id, checkpoint_id, parent, step=i - 1, source=source, payload=i))
    return ids


@pytest.fixture(params=["memory", "sqlite-memory", "sqlite-file"])
def saver(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "memory":
        made: BaseSaver = MemorySaver()
    elif request.param == "sqlite-memory":
        made = SqliteSaver(":memory:")
    else:
        made = SqliteSaver(tmp_path / "checkpoints.db")
    yield made
    made.close()


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO,
    )


def file_state(path: Path) -> tuple[bytes, int, list[str]]:
    """The file's bytes and mtime, and what its folder holds (no journal left behind)."""
    return path.read_bytes(), os.stat(path).st_mtime_ns, sorted(os.listdir(path.parent))


# --- records ------------------------------------------------------------------------------


def test_get_by_id_and_latest(saver: BaseSaver) -> None:
    saver.put(record("t1", "c1", source="input", payload={"n": 1}))
    saver.put(record("t1", "c2", "c1", step=1, payload={"n": 2}))

    first = saver.get("t1", "c1")
    assert first is not None
    assert (first.thread_id, first.checkpoint_id, first.parent_id) == ("t1", "c1", None)
    assert (first.step, first.source, first.payload) == (0, "input", {"n": 1})
    latest = saver.get("t1")
    assert latest is not None and latest.checkpoint_id == "c2" and latest.parent_id == "c1"
    assert saver.get("t1", "nope") is None
    assert saver.get("unknown") is None


def test_latest_is_the_last_put_not_the_highest_step(saver: BaseSaver) -> None:
    saver.put(record("t1", "c1", step=5))
    saver.put(record("t1", "fork", "c1", step=2, source="fork"))
    latest = saver.get("t1")
    assert latest is not None and latest.checkpoint_id == "fork"


def test_history_is_newest_first_and_keeps_parents(saver: BaseSaver) -> None:
    ids = put_chain(saver, "t1", 4)
    saver.put(record("t1", "branch", ids[1], step=1, source="update"))
    put_chain(saver, "t2", 2)

    history = saver.history("t1")
    assert [r.checkpoint_id for r in history] == ["branch", *reversed(ids)]
    assert [r.parent_id for r in history] == [ids[1], ids[2], ids[1], ids[0], None]
    assert [r.source for r in history] == ["update", "loop", "loop", "loop", "input"]
    assert saver.history("unknown") == []


def test_history_slice_reads_what_history_would_slice(saver: BaseSaver) -> None:
    put_chain(saver, "t1", 7)
    put_chain(saver, "t2", 3)
    whole = saver.history("t1")
    for start, stop in [(0, 3), (3, 6), (6, None), (2, None), (0, 100), (9, None), (4, 2)]:
        got = saver.history_slice("t1", start, stop)
        assert got == whole[start:stop], (start, stop)
    assert saver.history_slice("unknown", 0, 5) == []


def test_created_at_is_kept(saver: BaseSaver) -> None:
    saver.put(CheckpointRecord("t1", "c1", None, 0, "input", 1234.5, None))
    got = saver.get("t1")
    assert got is not None and got.created_at == 1234.5 and type(got.created_at) is float


def test_threads_in_order_of_their_first_checkpoint(saver: BaseSaver) -> None:
    assert saver.threads() == []
    saver.put(record("zeta", "c1"))
    saver.put(record("alpha", "c1"))
    saver.put(record("zeta", "c2", "c1"))
    assert saver.threads() == ["zeta", "alpha"]


def test_same_checkpoint_id_in_two_threads(saver: BaseSaver) -> None:
    saver.put(record("t1", "c1", payload="one"))
    saver.put(record("t2", "c1", payload="two"))
    assert saver.get("t1", "c1").payload == "one"  # type: ignore[union-attr]
    assert saver.get("t2", "c1").payload == "two"  # type: ignore[union-attr]


# --- values -------------------------------------------------------------------------------

VALUES = {
    "dict with tuples": {"point": (1, 2), "pairs": [("a", 1), ("b", (2, 3))]},
    "pydantic model": Item(name="box", tags=("x", "y")),
    "message": Message(role="user", content="hi", id="m1", metadata={"k": (1,)}),
    "MISSING": MISSING,
    "nested lists": [[1, [2, [3, []]]], {"set": {1, 2}}],
    "non-str keys": {1: "one", (2, 3): "pair"},
    "none": None,
}


@pytest.mark.parametrize("value", VALUES.values(), ids=VALUES.keys())
def test_values_round_trip(saver: BaseSaver, value: object) -> None:
    saver.put(record("t1", "c1", payload=value, snapshot={"state": value}))
    saver.put_write("t1", "c1", "task", [value])

    got = saver.get("t1", "c1")
    assert got is not None
    assert got.payload == value and type(got.payload) is type(value)
    assert got.snapshot == {"state": value}
    assert saver.pending_writes("t1", "c1")[0].payload == [value]
    if value is MISSING:
        assert got.payload is MISSING


def test_nan_round_trips(saver: BaseSaver) -> None:
    saver.put(record(payload={"x": float("nan"), "y": float("-inf")}))
    got = saver.get("t1")
    assert got is not None
    assert math.isnan(got.payload["x"]) and got.payload["y"] == float("-inf")


def test_snapshot_none_means_not_stored(saver: BaseSaver) -> None:
    saver.put(record("t1", "c1", payload={"a": 1}))
    saver.put(record("t1", "c2", "c1", payload=None, snapshot={"a": 1, "b": 2}))
    assert saver.get("t1", "c1").snapshot is None  # type: ignore[union-attr]
    assert saver.get("t1", "c2").snapshot == {"a": 1, "b": 2}  # type: ignore[union-attr]


def test_values_are_isolated(saver: BaseSaver) -> None:
    payload = {"log": ["a"]}
    snapshot = {"log": ["a"], "n": 1}
    write = {"log": ["b"]}
    saver.put(record(payload=payload, snapshot=snapshot))
    saver.put_write("t1", "c1", "task", write)

    payload["log"].append("changed after put")
    snapshot["n"] = 99
    write["log"].clear()
    got = saver.get("t1")
    assert got is not None and got.payload == {"log": ["a"]} and got.snapshot["n"] == 1
    got.payload["log"].append("changed after get")
    got.snapshot["n"] = 7
    saver.pending_writes("t1", "c1")[0].payload["log"].append("changed after get")

    again = saver.get("t1")
    assert again is not None and again.payload == {"log": ["a"]} and again.snapshot["n"] == 1
    assert again.payload is not got.payload
    assert saver.pending_writes("t1", "c1")[0].payload == {"log": ["b"]}


# --- pending writes -----------------------------------------------------------------------


def test_pending_writes_in_order_of_arrival(saver: BaseSaver) -> None:
    ids = put_chain(saver, "t1", 2)
    saver.put_write("t1", ids[1], "task-b", {"x": 1})
    saver.put_write("t1", ids[1], "task-a", {"y": (2,)})
    saver.put_write("t1", ids[0], "task-z", "older step")
    saver.put_write("t1", ids[1], "task-b", {"x": 3})

    assert saver.pending_writes("t1", ids[1]) == [
        PendingWrite("task-b", 1, {"x": 1}),
        PendingWrite("task-a", 2, {"y": (2,)}),
        PendingWrite("task-b", 3, {"x": 3}),
    ]
    assert saver.pending_writes("t1", ids[0]) == [PendingWrite("task-z", 1, "older step")]
    assert saver.pending_writes("t1", "no such checkpoint") == []
    assert saver.pending_writes("unknown", ids[0]) == []


def test_writes_need_an_existing_checkpoint(saver: BaseSaver) -> None:
    saver.put(record("t1", "c1"))
    with pytest.raises(ValueError, match="'nope'"):
        saver.put_write("t1", "nope", "task", 1)
    with pytest.raises(ValueError, match="'t2'"):
        saver.put_write("t2", "c1", "task", 1)
    with pytest.raises(ValueError, match="task id"):
        saver.put_write("t1", "c1", "", 1)


def test_a_batch_keeps_what_comes_before_a_value_it_cannot_save(tmp_path: Path) -> None:
    """`put_batch` (durability "async"): the writes before a refused one are stored, its
    error is raised, and nothing after it is stored (repro2 08)."""
    too_deep: list = []
    for _ in range(1500):
        too_deep = [too_deep]
    saver = SqliteSaver(tmp_path / "c.db")
    ops = [
        ("put", (record("t1", "c1", step=-1, source="input", payload=1),)),
        ("write", ("t1", "c1", "task", "kept")),
        ("put", (record("t1", "c2", "c1", payload=2),)),
        ("put", (record("t1", "c3", "c2", step=1, payload=too_deep),)),
        ("put", (record("t1", "c4", "c3", step=2, payload=4),)),
    ]
    with pytest.raises(ValueTooDeepError):
        saver.put_batch(ops)
    assert [r.checkpoint_id for r in saver.history("t1")] == ["c2", "c1"]
    assert [w.payload for w in saver.pending_writes("t1", "c1")] == ["kept"]
    with pytest.raises(ValueTooDeepError):  # refused first: nothing stored, no transaction
        saver.put_batch([("put", (record("t2", "c1", payload=too_deep),))])
    assert saver.history("t2") == []
    saver.close()


class Kept:
    def __repr__(self) -> str:
        return "<Kept>"


def test_a_value_sqlite_keeps_only_as_its_repr_is_warned_about_naming_its_field(
    tmp_path: Path,
) -> None:
    """Repro2 12: nothing said that a checkpoint value would not come back from the file."""
    saver = SqliteSaver(tmp_path / "c.db")
    payload = {"tasks": [{"writes": [["plain", 1], ["obj", Kept()]]}]}
    with pytest.warns(UserWarning, match=r"thread 't1': field 'obj' holds a .*Kept, which is"):
        saver.put(record("t1", "c1", step=-1, source="input", payload=payload))
    back = saver.get("t1").payload["tasks"][0]["writes"][1][1]
    assert back == Unrepresentable("<Kept>", f"{__name__}:Kept")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a placeholder saved again, plain data: no warning
        saver.put(record("t1", "c2", "c1", payload={"tasks": [{"writes": [["obj", back]]}]}))
        saver.put_write("t1", "c2", "task", {"n": [1, 2]})
    saver.close()


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["", None, 3, b"t1"])
def test_thread_id_must_be_a_non_empty_str(saver: BaseSaver, bad: object) -> None:
    calls = [
        lambda: saver.put(record(thread_id=bad)),  # type: ignore[arg-type]
        lambda: saver.get(bad),  # type: ignore[arg-type]
        lambda: saver.history(bad),  # type: ignore[arg-type]
        lambda: saver.put_write(bad, "c1", "task", 1),  # type: ignore[arg-type]
        lambda: saver.pending_writes(bad, "c1"),  # type: ignore[arg-type]
        lambda: saver.claim(bad).__enter__(),  # type: ignore[arg-type]
    ]
    for call in calls:
        with pytest.raises(ValueError, match=f"thread id .*{bad!r}"):
            call()
    assert saver.threads() == []


def test_a_thread_id_sqlite_cannot_store_is_refused_by_name(tmp_path: Path) -> None:
    """Issue 28 (repros2/13): a thread id holding a lone surrogate failed inside sqlite3
    with a raw UnicodeEncodeError; SQLite stores UTF-8, so it is refused naming the id."""
    from nbgraph import START, StateGraph
    from nbgraph.errors import InvalidArgumentError

    bad = "chat \udc00"
    saver = SqliteSaver(str(tmp_path / "t.sqlite"))
    calls = [
        lambda: saver.put(record(thread_id=bad)),
        lambda: saver.get(bad),
        lambda: saver.history(bad),
        lambda: saver.put_write(bad, "c1", "task", 1),
        lambda: saver.pending_writes(bad, "c1"),
        lambda: saver.claim(bad).__enter__(),
        lambda: saver.delete_thread(bad),
    ]
    for call in calls:
        with pytest.raises(InvalidArgumentError, match="thread id 'chat \\\\udc00'"):
            call()
    app = StateGraph(dict).add_node("a", lambda s: {"f": 1}).add_edge(START, "a")
    with pytest.raises(InvalidArgumentError, match="lone surrogate"):
        app.compile(checkpointer=saver).invoke({"f": 0}, {"configurable": {"thread_id": bad}})
    assert saver.threads() == []
    memory = StateGraph(dict).add_node("a", lambda s: {"f": 1}).add_edge(START, "a")
    app = memory.compile(checkpointer=MemorySaver())
    assert app.invoke({"f": 0}, {"configurable": {"thread_id": bad}}) == {"f": 1}  # any str


def test_parent_must_exist_in_the_same_thread(saver: BaseSaver) -> None:
    with pytest.raises(ValueError, match="parent 'c0' is not a checkpoint of that thread"):
        saver.put(record("t1", "c1", "c0"))
    saver.put(record("t2", "c0"))
    with pytest.raises(ValueError, match="parent 'c0'"):
        saver.put(record("t1", "c1", "c0"))
    assert saver.history("t1") == []


def test_duplicate_checkpoint_id_is_refused(saver: BaseSaver) -> None:
    saver.put(record("t1", "c1", payload="first"))
    with pytest.raises(ValueError, match="already has a checkpoint 'c1'"):
        saver.put(record("t1", "c1", payload="second"))
    assert [r.payload for r in saver.history("t1")] == ["first"]


def test_every_problem_of_a_record_is_reported_at_once(saver: BaseSaver) -> None:
    bad = CheckpointRecord("t1", "", "", "2", "resume", "now", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError) as caught:
        saver.put(bad)
    message = str(caught.value)
    for part in ("checkpoint_id", "parent_id", "step", "source", "'resume'", "created_at"):
        assert part in message
    with pytest.raises(ValueError, match="CheckpointRecord"):
        saver.put({"thread_id": "t1"})  # type: ignore[arg-type]


def test_duplicate_and_missing_parent_reported_together(saver: BaseSaver) -> None:
    saver.put(record("t1", "c1"))
    with pytest.raises(ValueError, match="already has a checkpoint 'c1'; its parent 'gone'"):
        saver.put(record("t1", "c1", "gone"))


# --- claims -------------------------------------------------------------------------------


def test_a_claimed_thread_id_cannot_be_claimed_again(saver: BaseSaver) -> None:
    with saver.claim("t1"):
        with pytest.raises(ThreadBusyError, match="'t1'") as caught, saver.claim("t1"):
            pass
        assert caught.value.thread_id == "t1"
        assert isinstance(caught.value, RuntimeError) and isinstance(caught.value, NbgraphError)
    with saver.claim("t1"):  # released on exit
        pass


def test_a_claim_refuses_another_python_thread(saver: BaseSaver) -> None:
    errors: list[BaseException] = []

    def claim_t1() -> None:
        try:
            with saver.claim("t1"):
                pass
        except ThreadBusyError as error:
            errors.append(error)

    with saver.claim("t1"):
        worker = threading.Thread(target=claim_t1)
        worker.start()
        worker.join(timeout=30)
    assert len(errors) == 1 and "'t1'" in str(errors[0])


def test_only_one_of_many_racing_claims_wins(saver: BaseSaver) -> None:
    start, done = threading.Barrier(8), threading.Event()
    won: list[int] = []
    lost: list[int] = []

    def race(i: int) -> None:
        start.wait(timeout=30)
        try:
            with saver.claim("t1"):
                won.append(i)
                done.wait(timeout=30)
        except ThreadBusyError:
            lost.append(i)

    workers = [threading.Thread(target=race, args=(i,)) for i in range(8)]
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + 30
    while len(won) + len(lost) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    done.set()
    for worker in workers:
        worker.join(timeout=30)
    assert len(won) == 1 and len(lost) == 7


def test_different_thread_ids_are_claimed_concurrently(saver: BaseSaver) -> None:
    together = threading.Barrier(6)
    errors: list[BaseException] = []

    def run(thread_id: str) -> None:
        try:
            with saver.claim(thread_id):
                together.wait(timeout=30)  # all six claims held at once
                put_chain(saver, thread_id, 5)
        except BaseException as error:
            errors.append(error)

    workers = [threading.Thread(target=run, args=(f"t{i}",)) for i in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert errors == []
    assert sorted(saver.threads()) == [f"t{i}" for i in range(6)]
    assert all(len(saver.history(f"t{i}")) == 5 for i in range(6))


def test_a_claim_is_released_after_an_exception(saver: BaseSaver) -> None:
    with pytest.raises(KeyError), saver.claim("t1"):
        raise KeyError("boom")
    with saver.claim("t1"):
        pass


def test_in_memory_saver_is_memory_saver() -> None:
    assert InMemorySaver is MemorySaver
    assert repr(MemorySaver()) == "MemorySaver(0 threads)"


def test_separate_memory_savers_do_not_share_claims() -> None:
    first, second = MemorySaver(), MemorySaver()
    with first.claim("t1"), second.claim("t1"):
        pass


# --- SQLite files -------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["", "   ", None, 3])
def test_sqlite_saver_refuses_a_path_that_is_empty_or_not_a_path(path: object) -> None:
    # sqlite3 takes "" for a temporary database: every checkpoint would vanish on close
    with pytest.raises(
        InvalidArgumentError,
        match=r"SqliteSaver needs a file path, an open sqlite3\.Connection, or ':memory:'",
    ):
        SqliteSaver(path)  # type: ignore[arg-type]


def test_sqlite_saver_on_a_connection_keeps_nbgraphs_tables_in_its_file(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "conn.db")  # LangGraph's SqliteSaver(conn)
    try:
        with SqliteSaver(connection) as saver:
            saver.put(CheckpointRecord("t1", "c1", None, 0, "input", 0.0, {"n": 1}))
        with SqliteSaver(tmp_path / "conn.db") as reopened:
            assert reopened.get("t1").payload == {"n": 1}
    finally:
        connection.close()


def test_sqlite_saver_takes_a_bytes_path(tmp_path: Path) -> None:
    with SqliteSaver(os.fsencode(tmp_path / "bytes.db")) as saver:  # type: ignore[arg-type]
        assert saver.path == str(tmp_path / "bytes.db")


def test_sqlite_file_uses_wal_and_records_its_schema(tmp_path: Path) -> None:
    path = tmp_path / "run.db"
    with SqliteSaver(path) as saver:
        assert saver.path == str(path) and repr(saver) == f"SqliteSaver({str(path)!r})"
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
            meta = dict(conn.execute("SELECT key, value FROM nbgraph_meta"))
            tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
        finally:
            conn.close()
    assert meta == {"format": "nbgraph.checkpoints", "schema_version": "1"}
    assert {"nbgraph_meta", "checkpoints", "writes", "claims"} <= tables


def test_reopening_a_file_sees_everything(tmp_path: Path) -> None:
    path = tmp_path / "run.db"
    with SqliteSaver(path) as saver:
        ids = put_chain(saver, "t1", 3)
        put_chain(saver, "t2", 1)
        saver.put_write("t1", ids[-1], "task", {"m": Message(role="ai", content="hi")})
        saver.put(record("t1", "snap", ids[0], snapshot={"item": Item(name="n")}))

    with SqliteSaver(str(path)) as reopened:
        assert reopened.threads() == ["t1", "t2"]
        assert [r.checkpoint_id for r in reopened.history("t1")] == ["snap", *reversed(ids)]
        assert reopened.get("t1").snapshot == {"item": Item(name="n")}  # type: ignore[union-attr]
        assert reopened.pending_writes("t1", ids[-1]) == [
            PendingWrite("task", 1, {"m": Message(role="assistant", content="hi")})
        ]
        reopened.put(record("t1", "more", "snap"))  # and it keeps going
        assert reopened.get("t1").checkpoint_id == "more"  # type: ignore[union-attr]


def test_an_empty_file_becomes_a_checkpoint_database(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    with SqliteSaver(path) as saver:
        saver.put(record())
    with SqliteSaver(path) as reopened:
        assert reopened.threads() == ["t1"]


def test_each_put_is_visible_to_a_fresh_connection_when_it_returns(tmp_path: Path) -> None:
    path = tmp_path / "durable.db"

    def count(table: str) -> int:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        finally:
            conn.close()

    with SqliteSaver(path) as saver:
        parent = None
        for i in range(50):
            saver.put(record("t1", f"c{i}", parent, step=i, payload={"i": i}))
            assert count("checkpoints") == i + 1
            saver.put_write("t1", f"c{i}", "task", i)
            assert count("writes") == i + 1
            parent = f"c{i}"


def test_a_second_process_reads_the_file_and_respects_claims(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    code = f"""
from nbgraph.checkpoint import SqliteSaver, ThreadBusyError
with SqliteSaver({str(path)!r}) as saver:
    print(saver.get("t1").payload, [w.payload for w in saver.pending_writes("t1", "c1")])
    try:
        with saver.claim("t1"):
            print("claimed t1")
    except ThreadBusyError as error:
        print("busy:", error)
    with saver.claim("t2"):
        print("claimed t2")
"""
    with SqliteSaver(path) as saver:
        saver.put(record("t1", "c1", payload={"n": (1, 2)}))
        saver.put_write("t1", "c1", "task", "w")
        with saver.claim("t1"):
            finished = run_python(code)
        assert finished.returncode == 0, finished.stderr
        lines = finished.stdout.splitlines()
        assert lines[0] == "{'n': (1, 2)} ['w']"
        assert lines[1].startswith("busy: Thread 't1' is already running")
        assert f"claimed by pid {os.getpid()}" in lines[1]
        assert lines[2:] == ["claimed t2"]
        with saver.claim("t2"):  # the other process released it
            pass


def test_a_claim_left_by_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "stale.db"
    SqliteSaver(path).close()
    code = f"""
import os
from nbgraph.checkpoint import SqliteSaver
saver = SqliteSaver({str(path)!r})
held = saver.claim("t1")
held.__enter__()
print(os.getpid(), flush=True)
os._exit(0)  # killed: no release
"""
    finished = run_python(code)
    assert finished.returncode == 0, finished.stderr
    dead_pid = int(finished.stdout)
    conn = sqlite3.connect(path)
    try:
        (owner,) = conn.execute("SELECT owner FROM claims WHERE thread_id = 't1'").fetchone()
    finally:
        conn.close()
    assert owner.startswith(f"{socket.gethostname()}:{dead_pid}:")

    saver = SqliteSaver(path)
    busy = pytest.raises(ThreadBusyError, match="this process")  # held now, by this process
    with saver, saver.claim("t1"), busy, saver.claim("t1"):
        pass


def claims_row(path: Path, owner: str) -> None:
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute("INSERT INTO claims VALUES ('t1', ?, ?)", (owner, time.time()))
    finally:
        conn.close()


def test_a_claim_from_another_host_is_never_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "remote.db"
    SqliteSaver(path).close()
    claims_row(path, "elsewhere.example:1234:abc")
    busy = pytest.raises(ThreadBusyError, match=r"pid 1234 on host 'elsewhere\.example'")
    with SqliteSaver(path) as saver, busy, saver.claim("t1"):
        pass


def test_a_claim_with_our_pid_but_no_live_claim_here_is_stale(tmp_path: Path) -> None:
    path = tmp_path / "reused-pid.db"
    SqliteSaver(path).close()
    claims_row(path, f"{socket.gethostname()}:{os.getpid()}:left-by-an-earlier-process")
    with SqliteSaver(path) as saver, saver.claim("t1"):
        pass


def test_two_savers_on_one_file_share_claims(tmp_path: Path) -> None:
    path = tmp_path / "two.db"
    with SqliteSaver(path) as first, SqliteSaver(path) as second:
        busy = pytest.raises(ThreadBusyError, match="this process")
        with first.claim("t1"), busy, second.claim("t1"):
            pass
        with second.claim("t1"):
            pass


def test_closing_releases_claims_and_ends_the_saver(tmp_path: Path) -> None:
    path = tmp_path / "closing.db"
    saver = SqliteSaver(path)
    claim = saver.claim("t1")
    claim.__enter__()
    saver.close()
    saver.close()  # twice is fine
    claim.__exit__(None, None, None)
    with pytest.raises(ValueError, match="is closed"):
        saver.get("t1")
    with SqliteSaver(path) as other, other.claim("t1"):
        pass


# --- files that are not ours --------------------------------------------------------------


def other_app_database(path: Path) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO users (name) VALUES ('ada')")
    conn.close()


def newer_schema(path: Path) -> None:
    conn = sqlite3.connect(path)
    with conn:
        for statement in SCHEMA:
            conn.execute(statement)
        conn.execute("INSERT INTO nbgraph_meta VALUES ('format', 'nbgraph.checkpoints')")
        conn.execute("INSERT INTO nbgraph_meta VALUES ('schema_version', '2')")
    conn.close()


def newer_schema_of_a_used_file(path: Path) -> None:
    with SqliteSaver(path) as saver:
        saver.put(record())
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE nbgraph_meta SET value = '7' WHERE key = 'schema_version'")
    conn.close()


def other_format(path: Path) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE nbgraph_meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("INSERT INTO nbgraph_meta VALUES ('format', 'nbgraph.something-else')")
    conn.close()


def meta_only(version: str):
    def make(path: Path) -> None:
        conn = sqlite3.connect(path)
        with conn:
            conn.execute(SCHEMA[0])
            conn.execute("INSERT INTO nbgraph_meta VALUES ('format', 'nbgraph.checkpoints')")
            conn.execute("INSERT INTO nbgraph_meta VALUES ('schema_version', ?)", (version,))
        conn.close()

    return make


BAD_FILES = {
    "text file": (lambda p: p.write_text("hello, not a database\n" * 100), "not an SQLite"),
    "other app": (other_app_database, "another application .*users"),
    "newer schema": (newer_schema, "schema version 2, from a newer nbgraph"),
    "newer schema, used": (newer_schema_of_a_used_file, "schema version 7"),
    "other format": (other_format, "format 'nbgraph.something-else'"),
    "incomplete": (meta_only("1"), "incomplete .* checkpoints, writes, claims are missing"),
    "bad version": (meta_only("one"), "no valid schema_version \\(found 'one'\\)"),
}


@pytest.mark.parametrize(("make", "expected"), BAD_FILES.values(), ids=BAD_FILES.keys())
def test_a_file_that_is_not_ours_is_refused_and_left_unchanged(
    tmp_path: Path, make, expected: str
) -> None:
    path = tmp_path / "bad.db"
    make(path)
    before = file_state(path)
    time.sleep(0.01)  # an mtime change would show
    with pytest.raises(CheckpointFileError, match=expected) as caught:
        SqliteSaver(path)
    assert str(path) in str(caught.value)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, NbgraphError)
    assert file_state(path) == before


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CheckpointFileError, match="directory"):
        SqliteSaver(tmp_path)


@pytest.mark.parametrize(
    ("table", "text", "expected"),
    [
        ("checkpoints", "{not json", "The payload of checkpoint 'c1' .* is not valid JSON"),
        ("checkpoints", '{"$type": "from-the-future"}', "tagged 'from-the-future'"),
        ("writes", "[1, 2", "Write 1 of task 'task' to checkpoint 'c1' .* not valid JSON"),
    ],
)
def test_a_corrupted_row_is_reported_on_read(
    tmp_path: Path, table: str, text: str, expected: str
) -> None:
    path = tmp_path / "corrupt.db"
    with SqliteSaver(path) as saver:
        saver.put(record("t1", "c1", payload={"ok": True}))
        saver.put_write("t1", "c1", "task", {"ok": True})
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(f"UPDATE {table} SET payload = ?", (text,))
    conn.close()
    before = file_state(path)

    with SqliteSaver(path) as saver:
        read = saver.pending_writes if table == "writes" else saver.get
        with pytest.raises(CheckpointFileError, match=expected) as caught:
            read("t1", "c1")
        assert str(path) in str(caught.value)
        assert saver.threads() == ["t1"]  # the rest of the file still reads
    assert file_state(path)[:2] == before[:2]


def test_a_corrupted_snapshot_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "corrupt-snapshot.db"
    with SqliteSaver(path) as saver:
        saver.put(record("t1", "c1", snapshot={"a": 1}))
        conn = sqlite3.connect(path)
        with conn:
            conn.execute("UPDATE checkpoints SET snapshot = 'nope'")
        conn.close()
        with pytest.raises(CheckpointFileError, match="The snapshot of checkpoint 'c1'"):
            saver.history("t1")


# --- the package --------------------------------------------------------------------------


def test_import_loads_no_heavy_module() -> None:
    code = (
        "import sys, nbgraph.checkpoint\n"
        "print([m for m in ('pandas', 'graphviz', 'ipywidgets') if m in sys.modules])"
    )
    finished = run_python(code)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == "[]"


def test_a_checkpoint_id_taken_through_another_saver_on_the_file_is_refused(
    tmp_path: Path,
) -> None:
    first, second = SqliteSaver(tmp_path / "shared.sqlite"), SqliteSaver(tmp_path / "shared.sqlite")
    first.put(record("t1", "c1", payload={"n": 1}))
    with pytest.raises(ValueError, match="already has a checkpoint 'c1'"):
        second.put(record("t1", "c1", payload={"n": 2}))  # this saver never saw c1
    assert second.get("t1", "c1").payload == {"n": 1}  # type: ignore[union-attr]
    second.put(record("t1", "c2", "c1", payload={"n": 2}))  # its parent, written by the other
    assert [r.checkpoint_id for r in first.history("t1")] == ["c2", "c1"]


# --- values the savers keep exactly ------------------------------------------------------------


def buffer_values() -> list[object]:
    import array

    numpy = pytest.importorskip("numpy")
    return [
        numpy.float64(2.0),  # what np.mean returns
        numpy.int64(5),
        numpy.array([1.5, 2.5]),
        numpy.str_("hi"),
        bytearray(b"ab"),
        array.array("i", [1, 2]),
    ]


def test_memory_saver_gives_back_buffer_objects_as_they_were_not_as_bytes() -> None:
    saver = MemorySaver()
    values = buffer_values()
    payload = {"values": values, "nested": [(values[0], {"a": values[4]})]}
    saver.put(record(payload=payload))
    back = saver.get("t1").payload
    for value, got in zip(values, back["values"], strict=True):
        assert type(got) is type(value) and repr(got) == repr(value)
    assert type(back["nested"][0][0]) is type(values[0])
    assert type(back["nested"][0][1]["a"]) is bytearray
    assert back["values"][4] is not values[4]  # a private copy, not the object put


def test_a_paused_graph_resumes_with_the_numpy_values_its_node_wrote() -> None:
    numpy = pytest.importorskip("numpy")
    from nbgraph import START, StateGraph

    def score(state: dict) -> dict:
        return {"score": numpy.mean([1.0, 2.0, 3.0])}

    def report(state: dict) -> dict:
        return {"report": f"{state['score'] * 10:.1f}"}

    app = (
        StateGraph(dict).add_node("score", score).add_node("report", report)
        .add_edge(START, "score").add_edge("score", "report")
        .compile(checkpointer=MemorySaver(), interrupt_before=["report"])
    )  # fmt: skip
    config = {"configurable": {"thread_id": "t"}}
    app.invoke({"score": 0.0}, config)
    assert type(app.get_state(config).values["score"]) is numpy.float64
    assert app.invoke(None, config)["report"] == "20.0"


def test_sqlite_saver_keeps_a_str_with_a_lone_surrogate(tmp_path: Path) -> None:
    from nbgraph import START, StateGraph

    reply = json.loads('"partial answer \\ud83d"')  # a stream cut inside an emoji
    saver = SqliteSaver(tmp_path / "c.db")
    graph = StateGraph(dict).add_node("llm", lambda s: {"reply": reply}).add_edge(START, "llm")
    config = {"configurable": {"thread_id": "t"}}
    assert graph.compile(checkpointer=saver).invoke({"reply": ""}, config) == {"reply": reply}
    reopened = graph.compile(checkpointer=SqliteSaver(tmp_path / "c.db"))
    assert reopened.get_state(config).values == {"reply": reply}


# --- files never run code ----------------------------------------------------------------------

PLANTED = """
import os
with open(os.environ["PLANTED_MARKER"], "a") as marker:
    marker.write(__name__ + " was imported\\n")
raise SystemExit("a planted module ran")
"""

CHILD_READS_DB = """
import json, sys
from nbgraph import START, SqliteSaver, StateGraph
from nbgraph import Run
imported_by_nbgraph = set(sys.modules)
saver = SqliteSaver("checkpoints.db")
app = StateGraph(dict).add_node("a", lambda s: {}).add_edge(START, "a").compile(checkpointer=saver)
values = app.get_state({"configurable": {"thread_id": "t"}}).values
run = Run.from_checkpointer(saver, "t")
print(json.dumps({
    "new": sorted(set(sys.modules) - imported_by_nbgraph),
    "kinds": {k: type(v).__name__ for k, v in values.items()},
    "input": {k: type(v).__name__ for k, v in run.log.input.items()},
}))
"""


def test_reading_a_crafted_checkpoint_file_imports_no_module_it_names(tmp_path: Path) -> None:
    from nbgraph import START, StateGraph

    (tmp_path / "planted_shop.py").write_text(PLANTED)
    path = tmp_path / "checkpoints.db"
    with SqliteSaver(path) as saver:
        graph = StateGraph(dict).add_node("a", lambda s: {"y": 1}).add_edge(START, "a")
        graph.compile(checkpointer=saver).invoke({"x": 0}, {"configurable": {"thread_id": "t"}})
    crafted = {
        "model": {"$type": "pydantic", "class": "planted_shop:Order", "data": {"id": 1}},
        "member": {"$type": "enum", "class": "planted_shop:Color", "value": "red"},
        "point": {"$type": "dataclass", "class": "planted_shop:Point", "data": {"x": 1}},
    }
    with contextlib.closing(sqlite3.connect(path)) as conn:
        seq, payload = conn.execute(  # the step that applied the input (after the input one)
            "SELECT seq, payload FROM checkpoints WHERE source = 'loop' ORDER BY seq LIMIT 1"
        ).fetchone()
        first = json.loads(payload)
        first["tasks"][0]["writes"] = [[name, value] for name, value in crafted.items()]
        conn.execute("UPDATE checkpoints SET payload = ? WHERE seq = ?", (json.dumps(first), seq))
        (payload,) = conn.execute(
            "SELECT payload FROM checkpoints WHERE source = 'input' ORDER BY seq LIMIT 1"
        ).fetchone()
        given = json.loads(payload)  # the input checkpoint keeps the input to apply
        given["next"]["input"] = [[name, value] for name, value in crafted.items()]
        conn.execute(
            "UPDATE checkpoints SET payload = ? WHERE source = 'input'", (json.dumps(given),)
        )
        conn.execute("UPDATE checkpoints SET snapshot = ?", (json.dumps(crafted),))
        conn.commit()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)]),
        "PLANTED_MARKER": str(tmp_path / "marker.txt"),
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD_READS_DB], capture_output=True, text=True, env=env,
        cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert not (tmp_path / "marker.txt").exists()
    assert not [name for name in seen["new"] if "planted" in name]
    expected = {"model": "UnloadedModel", "member": "UnloadedEnum", "point": "UnloadedModel"}
    assert seen["kinds"] == expected and seen["input"] == expected


def test_sqlite_saver_models_names_the_classes_its_values_may_be(tmp_path: Path) -> None:
    import enum

    class Stage(enum.Enum):  # a local class: found only if named
        DRAFT = "draft"

    with SqliteSaver(tmp_path / "c.db") as saver:
        saver.put(record(payload={"stage": Stage.DRAFT}))
    with SqliteSaver(tmp_path / "c.db") as saver:
        assert type(saver.get("t1").payload["stage"]).__name__ == "UnloadedEnum"
    with SqliteSaver(tmp_path / "c.db", models=[Stage]) as saver:
        assert saver.get("t1").payload["stage"] is Stage.DRAFT


# --- malformed rows ----------------------------------------------------------------------------


def thread_file(path: Path) -> None:
    from nbgraph import START, StateGraph

    graph = StateGraph(dict, reducers={"n": "add"}).add_node("a", lambda s: {"n": 1})
    with SqliteSaver(path) as saver:
        app = graph.add_edge(START, "a").compile(checkpointer=saver)
        app.invoke({"n": 0}, {"configurable": {"thread_id": "t"}})


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("payload", "[]", "payload should be an object"),
        ("payload", "{}", "no 'tasks' entry"),
        ("payload", "[" * 100_000 + "]" * 100_000, "nested"),
        ("payload", '{"tasks": [{"id": 3}], "next": {"pull": {}}}', "'id' should be a str"),
        ("payload", '{"tasks": [], "next": []}', "'next' should be an object"),
        ("snapshot", "[1]", "snapshot should be an object"),
        ("step", "'two'", "step is 'two'"),
        ("payload", "7", "payload should be an object"),
    ],
)
def test_a_malformed_checkpoint_row_is_refused_when_read(
    tmp_path: Path, column: str, value: str, message: str
) -> None:
    from nbgraph import START, Run, StateGraph

    path = tmp_path / "c.db"
    thread_file(path)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        if column == "step":
            conn.execute(f"UPDATE checkpoints SET step = {value} WHERE seq = 2")
        else:
            conn.execute(f"UPDATE checkpoints SET {column} = ? WHERE seq = 2", (value,))
        conn.commit()
    saver = SqliteSaver(path)
    app = StateGraph(dict).add_node("a", lambda s: {}).add_edge(START, "a")
    app = app.compile(checkpointer=saver)
    with pytest.raises(CheckpointFileError, match=message) as caught:
        app.get_state({"configurable": {"thread_id": "t"}})
    assert str(path) in str(caught.value) and "thread 't'" in str(caught.value)
    with pytest.raises(CheckpointFileError, match=message):
        Run.from_checkpointer(saver, "t")


def test_a_malformed_pending_write_is_refused_when_read(tmp_path: Path) -> None:
    from nbgraph import START, StateGraph

    path = tmp_path / "c.db"
    thread_file(path)
    with SqliteSaver(path) as saver:
        saver.put_write("t", saver.get("t").checkpoint_id, "1:0:a", {"writes": 5})
    app = StateGraph(dict).add_node("a", lambda s: {}).add_edge(START, "a")
    with pytest.raises(CheckpointFileError, match="pending write 1 of task '1:0:a'"):
        app.compile(checkpointer=SqliteSaver(path)).get_state({"configurable": {"thread_id": "t"}})


# --- read-only files ---------------------------------------------------------------------------


def test_a_file_opened_read_only_can_be_inspected_and_refuses_writes(tmp_path: Path) -> None:
    from nbgraph import Run
    from nbgraph.checkpoint.sqlite import ReadOnlyCheckpointError

    path = tmp_path / "c.db"
    thread_file(path)
    before = file_state(path)
    saver = SqliteSaver(path, readonly=True)
    assert Run.from_checkpointer(saver, "t").output == {"n": 1}
    with pytest.raises(ReadOnlyCheckpointError, match=f"{path}.*read-only"):
        saver.put(record("t", "new", saver.get("t").checkpoint_id))
    with pytest.raises(ReadOnlyCheckpointError), saver.claim("t"):
        pass
    saver.close()
    assert file_state(path) == before


CHILD_READS_READ_ONLY = """
import sys
from nbgraph import SqliteSaver
from nbgraph import Run
saver = SqliteSaver(sys.argv[1])
print(saver.readonly, Run.from_checkpointer(saver, "t").output)
"""


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_a_file_this_process_may_not_write_is_opened_read_only() -> None:
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp())  # not under pytest's 0700 folder: "nobody" reads it
    try:
        base.chmod(0o755)
        folder = base / "shared"
        folder.mkdir()
        path = folder / "c.db"
        thread_file(path)
        before = file_state(path)
        path.chmod(0o444)
        folder.chmod(0o555)
        as_nobody = {"user": 65534, "group": 65534} if os.geteuid() == 0 else {}  # root may
        done = None  # write anything: the reader runs as "nobody" then, with a Python it may
        for python in (sys.executable, "/usr/bin/python3"):  # run (the child needs only the
            try:  # standard library: `import nbgraph` loads no third-party package)
                done = subprocess.run(
                    [python, "-c", CHILD_READS_READ_ONLY, str(path)], capture_output=True,
                    text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120,
                    check=False, **as_nobody,
                )  # fmt: skip
                break
            except (PermissionError, FileNotFoundError):
                continue
        if done is None:
            pytest.skip("user 'nobody' may run neither this Python nor /usr/bin/python3")
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["True", "{'n':", "1}"]
        assert file_state(path) == before
    finally:
        (base / "shared").chmod(0o755)
        shutil.rmtree(base)


def test_a_file_it_may_not_write_is_opened_read_only_by_default(tmp_path, monkeypatch) -> None:
    import nbgraph.checkpoint.sqlite as sqlite_module

    path = tmp_path / "c.db"
    thread_file(path)
    before = file_state(path)
    monkeypatch.setattr(sqlite_module.os, "access", lambda *args, **kwargs: False)
    with SqliteSaver(path) as saver:
        assert saver.readonly and "readonly=True" in repr(saver)
        assert saver.get("t").step == 1
    assert file_state(path) == before


def test_memory_saver_keeps_plain_data_nested_deeper_than_the_stack() -> None:
    """Plain data too deep for the C pickler (it raises RecursionError) is kept as a private
    copy instead, and given back equal and unshared, as shallow plain data is."""
    from nbgraph.codec.nesting import MAX_DEPTH

    deep: list = []
    for _ in range(MAX_DEPTH):
        deep = [deep]
    saver = MemorySaver()
    saver.put(record(payload={"deep": deep, "flat": [1, (2, "x")]}))
    back = saver.get("t1").payload
    assert back["flat"] == [1, (2, "x")]
    got, put, depth = back["deep"], deep, 0
    while put:
        assert type(got) is list and got is not put and len(got) == 1
        got, put, depth = got[0], put[0], depth + 1
    assert got == [] and depth == MAX_DEPTH
