"""A thread's history as LangGraph keeps it, read lazily, and refused when its links are broken."""

import contextlib
import sqlite3

import pytest

from nbgraph import START, Run, SqliteSaver, StateGraph
from nbgraph.errors import CheckpointFileError


def config(thread: str = "t", **extra) -> dict:
    return {"configurable": {"thread_id": thread, **extra}}


def two_steps(saver):
    return (
        StateGraph(dict, reducers={"n": "add"})
        .add_node("a", lambda s: {"n": 1})
        .add_node("b", lambda s: {"n": 1})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver)
    )


def tampered(path, *statements: str) -> None:
    """Run SQL on a finished thread's file; `{first}`/`{last}` are its oldest/newest ids."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        ids = [r[0] for r in conn.execute("SELECT checkpoint_id FROM checkpoints ORDER BY seq")]
        for sql in statements:
            conn.execute(sql.format(first=ids[0], last=ids[-1]))
        conn.commit()


@pytest.mark.parametrize(
    ("statements", "reading", "says"),
    [
        (["UPDATE checkpoints SET parent_id = '{last}' WHERE checkpoint_id = '{first}'"],
         "record", "loop"),
        (["UPDATE checkpoints SET parent_id = '{last}' WHERE checkpoint_id = '{first}'",
          "UPDATE checkpoints SET snapshot = NULL"], "state", "loop"),
        (["UPDATE checkpoints SET parent_id = 'gone' WHERE checkpoint_id = '{last}'"],
         "record", "'gone', which is not in the thread"),
        (["UPDATE checkpoints SET parent_id = 'gone' WHERE checkpoint_id = '{last}'",
          "UPDATE checkpoints SET snapshot = NULL"], "state", "not in the thread"),
    ],
)  # fmt: skip
def test_broken_parent_links_are_refused_naming_file_and_checkpoint(
    tmp_path, statements, reading, says
):
    path = tmp_path / "threads.sqlite"
    with SqliteSaver(path) as saver:
        two_steps(saver).invoke({"n": 0}, config())
    tampered(path, *statements)
    with SqliteSaver(path) as saver, pytest.raises(CheckpointFileError) as caught:
        if reading == "record":
            Run.from_checkpointer(saver, "t")
        else:
            two_steps(saver).get_state(config())
    message = str(caught.value)
    assert says in message and str(path) in message and "checkpoint '" in message
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("semantics", ["supersteps", "branches"])
@pytest.mark.parametrize("past", [False, True])
def test_record_after_update_state_reads_back(semantics, past):
    from nbgraph import MemorySaver

    saver = MemorySaver()
    app = (
        StateGraph(dict, reducers={"log": "append"})
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver, semantics=semantics)
    )
    app.invoke({"log": []}, config())
    target = config()
    if past:  # a fork: the checkpoint taken after "a"
        (after_a,) = [s for s in app.get_state_history(config()) if s.values.get("log") == ["a"]]
        target = after_a.config
    new = app.update_state(target, {"log": ["patched"]}, as_node="a")
    run = Run.from_checkpointer(saver, "t", new["configurable"]["checkpoint_id"], graph=app)
    assert run.output == app.get_state(new).values
    assert run.output["log"][-1] == "patched"
