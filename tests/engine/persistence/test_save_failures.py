"""A checkpoint the saver refuses, in each durability mode and on both savers
(docs/SEMANTICS.md, "Durability modes"): the run fails with the saver's named error, and the
checkpoints before the refused one are kept (under `"exit"`, the thread stays as the previous
run left it). Never a run reported "done" whose checkpoints are gone.
"""

from __future__ import annotations

import time
from typing import Any, TypedDict

import pytest

from nbgraph import END, START, MemorySaver, SqliteSaver, StateGraph
from nbgraph.checkpoint.payloads import dump_payload
from nbgraph.codec.nesting import ValueTooDeepError

MODES = ["sync", "async", "exit"]
SAVERS = ["memory", "sqlite"]
BAD_AT = 4  # the tick that writes the refused value: it runs in step 5, after -1..4
LAST = 8


class Tick(TypedDict):
    v: Any
    n: int


class StrictMemorySaver(MemorySaver):
    """A MemorySaver that refuses what SqliteSaver cannot save (a `MemorySaver` keeps any
    object, so nothing else makes it refuse one)."""

    def put(self, record: Any) -> None:
        dump_payload(record.payload)
        if record.snapshot is not None:
            dump_payload(record.snapshot)
        super().put(record)


def deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


def saver_of(kind: str, tmp_path: Any) -> Any:
    return StrictMemorySaver() if kind == "memory" else SqliteSaver(tmp_path / "c.db")


def loop(saver: Any, calls: list, bad_at: int = BAD_AT, slow_after: bool = False) -> Any:
    """Ticks 0..LAST-1; tick `bad_at` writes a value nested too deep to be saved, which the
    state keeps to the end."""

    def tick(state: dict) -> dict:
        calls.append(state["n"])
        if slow_after and state["n"] == bad_at + 1:  # the writer thread writes (and fails)
            deadline = time.monotonic() + 10  # the refused batch meanwhile: wait until the
            while time.monotonic() < deadline:  # checkpoints before it are in the file, however
                if len(saver.history("t")) >= bad_at + 2:  # loaded the machine is
                    break
                time.sleep(0.01)
            time.sleep(0.05)
        if state["n"] == bad_at:
            return {"n": state["n"] + 1, "v": deep(1500)}  # (kept to the end: "exit" saves it)
        return {"n": state["n"] + 1}

    return (
        StateGraph(Tick)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= LAST else "tick")
        .compile(checkpointer=saver)
    )


def steps_kept(saver: Any, thread_id: str = "t") -> list[int]:
    return sorted(record.step for record in saver.history(thread_id))


@pytest.mark.parametrize("kind", SAVERS)
@pytest.mark.parametrize("mode", MODES)
def test_a_refused_checkpoint_fails_the_run_and_keeps_the_ones_before(tmp_path, kind, mode):
    saver = saver_of(kind, tmp_path)
    app = loop(saver, [])
    config = {"configurable": {"thread_id": "t"}}
    run = app.run({"v": None, "n": 0}, config, durability=mode)
    assert run.status == "failed"
    assert isinstance(run.error, ValueTooDeepError)
    # "sync" and "async": every checkpoint before the refused one; "exit": none of this run
    assert steps_kept(saver) == ([] if mode == "exit" else list(range(-1, BAD_AT + 1)))
    with pytest.raises(ValueTooDeepError):
        app.invoke({"v": None, "n": 0}, {"configurable": {"thread_id": "u"}}, durability=mode)
    assert steps_kept(saver, "u") == steps_kept(saver)
    saver.close()


@pytest.mark.parametrize("kind", SAVERS)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_run_resumes_from_the_last_checkpoint_kept(tmp_path, kind, mode):
    saver = saver_of(kind, tmp_path)
    calls: list = []
    app = loop(saver, calls)
    config = {"configurable": {"thread_id": "t"}}
    with pytest.raises(ValueTooDeepError):
        app.invoke({"v": None, "n": 0}, config, durability=mode)
    assert app.get_state(config).values["n"] == BAD_AT
    calls.clear()
    with pytest.raises(ValueTooDeepError):  # (the same tick writes the same value again)
        app.invoke(None, config, durability=mode)
    assert calls[0] == BAD_AT
    saver.close()


@pytest.mark.parametrize("kind", SAVERS)
def test_exit_leaves_the_thread_as_the_previous_run_left_it(tmp_path, kind):
    saver = saver_of(kind, tmp_path)
    config = {"configurable": {"thread_id": "t"}}
    loop(saver, [], bad_at=-1).invoke({"v": None, "n": 0}, config, durability="exit")
    before = [(r.checkpoint_id, r.step) for r in saver.history("t")]
    run = loop(saver, []).run({"v": None, "n": 0}, config, durability="exit")
    assert run.status == "failed" and isinstance(run.error, ValueTooDeepError)
    assert [(r.checkpoint_id, r.step) for r in saver.history("t")] == before
    saver.close()


def test_async_a_batch_refused_by_the_writer_thread_fails_the_run(tmp_path):
    saver = SqliteSaver(tmp_path / "c.db")
    calls: list = []
    app = loop(saver, calls, slow_after=True)
    run = app.run({"v": None, "n": 0}, {"configurable": {"thread_id": "t"}}, durability="async")
    assert run.status == "failed" and isinstance(run.error, ValueTooDeepError)
    assert steps_kept(saver) == list(range(-1, BAD_AT + 1))
    assert max(calls) < LAST - 1  # (failed at its next write, not at the end)
    saver.close()


def test_a_run_that_failed_already_keeps_its_error_and_notes_the_saver_s(tmp_path):
    saver = SqliteSaver(tmp_path / "c.db")

    def tick(state: dict) -> dict:
        if state["n"] == 1:
            raise RuntimeError("boom")
        return {"n": 1, "v": deep(1500)}

    app = (
        StateGraph(Tick).add_node("tick", tick).add_edge(START, "tick")
        .add_edge("tick", "tick").compile(checkpointer=saver)
    )  # fmt: skip
    run = app.run({"v": None, "n": 0}, {"configurable": {"thread_id": "t"}}, durability="exit")
    assert run.status == "failed" and isinstance(run.error, RuntimeError)
    assert any("could not all be saved" in note for note in run.error.__notes__)
    saver.close()
