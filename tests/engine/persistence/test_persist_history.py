"""A thread's history as LangGraph keeps it, read lazily, and refused when its links are broken."""

import asyncio
import contextlib
import itertools
import sqlite3

import pytest

from nbgraph import START, Mutation, Run, SqliteSaver, StateGraph
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


def line_app(saver, calls: list | None = None, fail: dict | None = None, **compile_kw):
    """START -> a -> b, or with `fan=True`: START -> (one, two) -> q joined by [one, two]."""
    from nbgraph import MemorySaver  # noqa: F401  (savers come from the caller)

    def node(name: str):
        def run(state):
            if calls is not None:
                calls.append(name)
            if fail and fail.get(name):
                raise RuntimeError(f"{name} is down")
            return {"log": [name]}

        return run

    fan = compile_kw.pop("fan", False)
    graph = StateGraph(dict, reducers={"log": "append"})
    if fan:
        for name in ("one", "two", "q"):
            graph.add_node(name, node(name))
        graph.add_edge(START, "one").add_edge(START, "two").add_edge(["one", "two"], "q")
    else:
        graph.add_node("a", node("a")).add_node("b", node("b"))
        graph.add_edge(START, "a").add_edge("a", "b")
    return graph.compile(checkpointer=saver, **compile_kw)


@pytest.fixture(params=["memory", "sqlite"])
def saver(request, tmp_path):
    from nbgraph import MemorySaver

    return MemorySaver() if request.param == "memory" else SqliteSaver(tmp_path / "t.sqlite")


def test_history_starts_with_the_input_checkpoint_and_steps_continue(saver):
    app = line_app(saver)
    app.invoke({"log": ["x"]}, config())
    app.invoke({"log": ["y"]}, config())
    history = list(app.get_state_history(config()))
    assert [h.metadata["step"] for h in history] == [6, 5, 4, 3, 2, 1, 0, -1]
    assert [h.metadata["source"] for h in history] == ["loop"] * 3 + ["input"] + ["loop"] * 3 + [
        "input"
    ]
    assert [h.next for h in history] == [(), ("b",), ("a",), ("__start__",)] * 2
    assert history[3].values == {"log": ["x", "a", "b"]}  # before the second input
    assert history[-1].values == {} and history[-1].parent_config is None
    for newer, older in itertools.pairwise(history):
        assert newer.parent_config == older.config and newer.created_at >= older.created_at
    assert [t.name for t in history[-1].tasks] == ["__start__"]
    # replaying the input checkpoint applies its input again
    assert app.invoke(None, history[3].config) == {"log": ["x", "a", "b", "y", "a", "b"]}


@pytest.mark.parametrize(
    ("step", "expected_next", "expected_log"),
    [
        (2, (), ["x", "a", "b", "u"]),  # b wrote last: nothing runs next
        (1, ("b",), ["x", "a", "u"]),  # a wrote last: b runs next
        (0, ("a",), ["x", "u"]),  # the input step (START) wrote last
        (-1, ("a",), ["u"]),  # the input checkpoint: as START, its input dropped
    ],
)
def test_update_state_without_as_node_writes_as_the_last_writer(
    saver, step, expected_next, expected_log
):
    app = line_app(saver)
    app.invoke({"log": ["x"]}, config())
    at = next(h for h in app.get_state_history(config()) if h.metadata["step"] == step)
    target = config() if step == 2 else at.config
    new = app.update_state(target, {"log": ["u"]})
    state = app.get_state(new)
    assert state.next == expected_next and state.values == {"log": expected_log}
    assert state.metadata["source"] == "update" and state.metadata["step"] == step + 1


def test_update_state_without_as_node_after_a_parallel_step_is_ambiguous(saver):
    from nbgraph.errors import InvalidUpdateError

    app = line_app(saver, fan=True)
    app.invoke({"log": []}, config())
    after_fan = next(h for h in app.get_state_history(config()) if h.metadata["step"] == 1)
    with pytest.raises(InvalidUpdateError, match="as_node") as caught:
        app.update_state(after_fan.config, {"log": ["u"]})
    assert "['one', 'two']" in str(caught.value)


def test_a_failed_step_lists_only_its_unfinished_task_and_resumes_it_alone(saver):
    calls: list = []
    fail = {"two": True}
    app = line_app(saver, calls, fail, fan=True)
    with pytest.raises(RuntimeError, match="two is down"):
        app.invoke({"log": []}, config())
    state = app.get_state(config())
    assert state.next == ("two",)  # one finished: its writes are pending, shown applied
    assert state.values == {"log": ["one"]}
    one, two = state.tasks
    assert (one.name, one.error, one.result) == ("one", None, {"log": ["one"]})
    assert two.name == "two" and two.error == "RuntimeError('two is down')"  # LangGraph's repr
    assert two.result is None
    assert one.path == ("__pregel_pull", "one") and two.interrupts == () and two.state is None
    fail.clear()
    calls.clear()
    assert app.invoke(None, config()) == {"log": ["one", "two", "q"]}
    assert calls == ["two", "q"]  # the finished sibling did not run again
    step0 = next(h for h in app.get_state_history(config()) if h.metadata["step"] == 0)
    assert step0.next == ("one", "two") and step0.values == {"log": []}
    assert [t.error for t in step0.tasks] == [None, "RuntimeError('two is down')"]


def test_update_state_as_a_join_source_keeps_the_fired_join(saver):
    app = line_app(saver, fan=True, interrupt_before=["q"])
    app.invoke({"log": []}, config())
    assert app.get_state(config()).next == ("q",)
    app.update_state(config(), {"log": ["u"]}, as_node="one")
    assert app.get_state(config()).next == ("q",)  # LangGraph: the join still fires
    assert app.invoke(None, config()) == {"log": ["one", "two", "u", "q"]}


class CountingSaver:
    """A MemorySaver that counts the checkpoints read (as `get`, and in `history`)."""

    def __init__(self):
        from nbgraph import MemorySaver

        self.inner, self.reads = MemorySaver(), 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def get(self, thread_id, checkpoint_id=None):
        self.reads += 1
        return self.inner.get(thread_id, checkpoint_id)

    def history(self, thread_id):
        records = self.inner.history(thread_id)
        self.reads += len(records)
        return records


def test_history_is_lazy_and_equals_each_checkpoint_restored_alone():
    saver = CountingSaver()
    app = (
        StateGraph(dict, reducers={"log": "append"})
        .add_node("tick", lambda s: {"n": s["n"] + 1, "log": [s["n"]]})
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: "__end__" if s["n"] >= 400 else "tick")
        .compile(checkpointer=saver)
    )
    cfg = config() | {"recursion_limit": 500}
    app.invoke({"n": 0, "log": []}, cfg)
    past = next(h for h in app.get_state_history(cfg) if h.metadata["step"] == 200)
    app.update_state(past.config, {"log": ["fork"]}, as_node="tick")  # a second branch
    total = len(saver.inner.history_ids("t"))
    saver.reads = 0
    app.get_state(cfg)
    one_state = saver.reads  # the newest and its way back to a snapshot
    saver.reads = 0
    first = next(iter(app.get_state_history(cfg)))
    assert saver.reads <= 2 * one_state + 2 < total / 3  # (its chain read twice), not all
    assert first.values["log"][-1] == "fork"
    saver.reads = 0
    first_async = asyncio.run(newest_async(app, cfg))  # (repros2/10: as lazy as the sync one)
    assert saver.reads <= 2 * one_state + 2 < total / 3
    assert first_async.values == first.values
    saver.reads = 0
    two = [s.values for s in itertools.islice(app.get_state_history(cfg), 2)]
    two_reads, saver.reads = saver.reads, 0
    assert [s.values for s in app.get_state_history(cfg, limit=2)] == two
    assert saver.reads == two_reads  # (a page reads what its snapshots need, no more)
    history = list(app.get_state_history(cfg))
    assert len(history) == total
    for snapshot in history[::7] + history[-3:]:
        alone = app.get_state(snapshot.config)
        assert (snapshot.values, snapshot.next) == (alone.values, alone.next)
        assert snapshot.metadata == alone.metadata


async def newest_async(app, cfg):
    async for snapshot in app.aget_state_history(cfg):
        return snapshot


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize(("block", "held"), [(3, 0), (32, 10**6)])
def test_a_line_of_checkpoints_folded_forward_equals_each_restored_alone(
    tmp_path, monkeypatch, kind, block, held
):
    """The history of a thread without forks is folded oldest first (`history_fold`), in
    blocks (small `MIN_BLOCK`, nothing held whole) or a segment at a time; each snapshot is
    the one `get_state` restores alone, with its own copy of the values, and the writes of
    an interrupted step's finished task show in its checkpoint's tasks."""
    from nbgraph import MemorySaver, interrupt
    from nbgraph.engine.persistence import history_fold

    monkeypatch.setattr(history_fold, "MIN_BLOCK", block)
    monkeypatch.setattr(history_fold, "HELD_ITEMS", held)
    saver = MemorySaver() if kind == "memory" else SqliteSaver(tmp_path / "line.sqlite")

    def tick(state):
        if state["n"] == 150:
            interrupt("half way")
        return {"n": state["n"] + 1, "log": [{"n": state["n"]}]}

    app = (
        StateGraph(dict, reducers={"log": "append"})
        .add_node("tick", tick)
        .add_node("side", lambda s: {"side": s["n"]})
        .add_edge(START, "tick")
        .add_edge(START, "side")
        .add_conditional_edges("tick", lambda s: "__end__" if s["n"] >= 300 else "tick")
        .compile(checkpointer=saver)
    )
    cfg = config() | {"recursion_limit": 500}
    app.invoke({"n": 0, "log": []}, cfg)
    from nbgraph import Command

    app.invoke(Command(resume="go"), cfg)
    history = list(app.get_state_history(cfg))
    assert len(history) == len(saver.history("t")) > 300
    monkeypatch.setattr(history_fold, "is_line", lambda records: False)  # HistoryWalk's
    assert history == list(app.get_state_history(cfg))
    for snapshot in history[::9]:
        alone = app.get_state(snapshot.config)
        assert (snapshot.values, snapshot.next) == (alone.values, alone.next)
    history[5].values["log"][0]["n"] = "changed"
    assert history[6].values["log"][0]["n"] == 0  # each snapshot its own copy
    assert any(t.interrupts for h in history for t in h.tasks)


class _SetFirst(Mutation):
    """Changes a list's first item in place (a reducer-free write the fold must not trust)."""

    field = "log"

    def __init__(self, item):
        self.item = item

    def apply(self, value):
        value[0] = self.item
        return value

    def __eq__(self, other):  # (shown in a task's result: two reads hold equal copies)
        return type(other) is _SetFirst and other.item == self.item

    __hash__ = None


@pytest.mark.parametrize(("block", "held"), [(3, 0), (32, 10**6)])
def test_a_list_of_atoms_changed_in_place_or_replaced_is_copied_afresh(monkeypatch, block, held):
    """The fold checks only the new items of an `append` list of atoms it copies, until a
    write may have changed the old ones (a `Mutation`, an `Overwrite`): each snapshot still
    equals the state restored alone, and owns its list."""
    from nbgraph import MemorySaver, Overwrite
    from nbgraph.engine.persistence import history_fold

    monkeypatch.setattr(history_fold, "MIN_BLOCK", block)
    monkeypatch.setattr(history_fold, "HELD_ITEMS", held)

    def tick(state):
        n = state["n"]
        changes = {40: _SetFirst({"at": 40}), 60: Overwrite([-1]), 80: _SetFirst(-2)}
        return {"n": n + 1, "log": changes.get(n, [n])}

    app = (
        StateGraph(dict, reducers={"log": "append"})
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: "__end__" if s["n"] >= 100 else "tick")
        .compile(checkpointer=MemorySaver())
    )
    cfg = config() | {"recursion_limit": 200}
    app.invoke({"n": 0, "log": []}, cfg)
    history = list(app.get_state_history(cfg))
    assert history[0].values["log"][:2] == [-2, 61]
    for snapshot in history:
        alone = app.get_state(snapshot.config)
        assert (snapshot.values, snapshot.next) == (alone.values, alone.next)
    monkeypatch.setattr(history_fold, "is_line", lambda records: False)  # HistoryWalk's
    assert history == list(app.get_state_history(cfg))
    logs = [snapshot.values["log"] for snapshot in history if "log" in snapshot.values]
    assert len(logs) > 100 and len(set(map(id, logs))) == len(logs)  # each its own list
    firsts = [log[0] for log in logs if log and type(log[0]) is dict]  # steps 41 to 60
    assert len(firsts) > 10 and len(set(map(id, firsts))) == len(firsts)  # and its own items


def test_the_history_shows_each_checkpoint_as_get_state_does(saver):
    """One builder makes every snapshot: the history's (straight from a checkpoint's record,
    or through its pending writes when it has some) is `get_state`'s at the same id — all
    but the results of finished tasks, which the history reads from the checkpoint they
    made. An update's task is timed like any task (the stepper's update step is the same)."""
    from nbgraph import Command, Run, interrupt

    app = (
        StateGraph(dict, reducers={"log": "append"})
        .add_node("tick", lambda s: {"log": ["t"], "n": 1})
        .add_node("ask", lambda s: {"log": [interrupt("name?")]})
        .add_edge(START, "tick")
        .add_edge("tick", "ask")
        .compile(checkpointer=saver)
    )
    app.invoke({"log": []}, config())
    app.invoke(Command(resume="Ada"), config())
    app.update_state(config(), {"log": ["fix"], "n": 2}, as_node="ask")
    history = list(app.get_state_history(config()))
    assert any(task.interrupts for snapshot in history for task in snapshot.tasks)
    for snapshot in history:
        alone = app.get_state(snapshot.config)
        assert snapshot._replace(tasks=()) == alone._replace(tasks=())
        assert [task[:5] for task in snapshot.tasks] == [task[:5] for task in alone.tasks]
    log = Run.from_checkpointer(saver, "t").log
    (update,) = [task for step in log.steps for task in step.tasks if task.kind == "update"]
    assert update.node == "ask" and update.ended >= update.started > 0


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_history_snapshots_own_their_lists_and_the_collector_comes_back_on(kind, tmp_path):
    import gc

    from nbgraph import MemorySaver

    saver = MemorySaver() if kind == "memory" else SqliteSaver(str(tmp_path / "h.sqlite"))
    app = (
        StateGraph(dict, reducers={"log": "append"})
        .add_node("tick", lambda s: {"n": s["n"] + 1, "log": [f"item-{s['n']}"]})
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: "__end__" if s["n"] >= 600 else "tick")
        .compile(checkpointer=saver)
    )
    cfg = config() | {"recursion_limit": 700}
    app.invoke({"n": 0, "log": []}, cfg)
    history = list(app.get_state_history(cfg))  # (blocks of 1, 2, 4, ... 256: several)
    assert gc.isenabled() and not gc.get_freeze_count()
    logs = [snapshot.values["log"] for snapshot in history if "log" in snapshot.values]
    assert len({id(log) for log in logs}) == len(logs)  # no two share a list
    expected = [list(log) for log in logs]
    for log in logs:  # each changed in place: none of the others sees it
        log.append("mine")
        log[:1] = ["changed"] if log[:1] else []
    for log, before in zip(logs, expected, strict=True):
        assert log[1:-1] == before[1:]
    again = [s.values["log"] for s in app.get_state_history(cfg) if "log" in s.values]
    assert again == expected  # nor does the saver
    gc.disable()
    try:
        list(app.get_state_history(cfg, limit=3))
        assert not gc.isenabled()  # (a paused collector stays paused)
    finally:
        gc.enable()


def _containers(value, found: dict[int, object]) -> None:
    """Every list, dict and set reachable from `value` (through tuples too), by id."""
    if isinstance(value, list | dict | set):
        found[id(value)] = value
        for item in value.values() if isinstance(value, dict) else value:
            _containers(item, found)
    elif isinstance(value, tuple):
        for item in value:
            _containers(item, found)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("forked", [False, True])
def test_no_two_history_snapshots_share_a_container(kind, forked, tmp_path):
    """Not a state's list, nor an item of it, nor a field without a reducer, nor a task's
    result, nor a config or the metadata: what one snapshot holds, no other snapshot holds,
    so changing one in place changes no other (the last state of each block folded, whose
    fields without a reducer are the very lists its checkpoint's writes hold, and which its
    parent's task result shows, included). A thread with a fork is read the other way."""
    from nbgraph import MemorySaver

    saver = MemorySaver() if kind == "memory" else SqliteSaver(str(tmp_path / "h.sqlite"))
    app = (
        StateGraph(dict, reducers={"log": "append"})
        .add_node(
            "tick",
            lambda s: {
                "n": s["n"] + 1,
                "log": [{"i": s["n"]}],  # (an item that is a dict)
                "last": [s["n"]],  # (no reducer: the written list is the value)
                "box": {"k": [s["n"]]},
            },
        )
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: "__end__" if s["n"] >= 300 else "tick")
        .compile(checkpointer=saver)
    )
    cfg = config() | {"recursion_limit": 400}
    app.invoke({"n": 0, "log": [], "last": [], "box": {}}, cfg)
    if forked:  # (a past checkpoint changed: the thread is no longer one line)
        past = list(app.get_state_history(cfg))[100].config
        app.update_state(past, {"last": [-1]})
    history = list(app.get_state_history(cfg))
    assert len(history) >= 300
    owner: dict[int, int] = {}
    for index, snapshot in enumerate(history):
        found: dict[int, object] = {}
        for part in (snapshot.values, snapshot.config, snapshot.metadata, snapshot.parent_config):
            _containers(part, found)
        for task in snapshot.tasks:
            _containers(task.result, found)
        for key in found:
            assert owner.setdefault(key, index) == index, (index, owner[key], found[key])
    assert any(task.result for snapshot in history for task in snapshot.tasks)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_history_shows_each_created_at_as_datetime_does(kind, tmp_path):
    """A snapshot's `created_at` is `datetime.fromtimestamp(t, UTC).isoformat()` of its
    checkpoint's time, though a history formats the whole second once for the checkpoints
    that share it (`snapshots.TimeText`): microseconds rounded as datetime rounds them."""
    import datetime
    import random

    from nbgraph import MemorySaver
    from nbgraph.engine.persistence.snapshots import TimeText

    saver = MemorySaver() if kind == "memory" else SqliteSaver(str(tmp_path / "h.sqlite"))
    app = two_steps(saver)
    app.invoke({"n": 0}, config())
    records = {r.checkpoint_id: r for r in saver.history("t")}
    for snapshot in app.get_state_history(config()):
        made = records[snapshot.config["configurable"]["checkpoint_id"]].created_at
        assert (
            snapshot.created_at == datetime.datetime.fromtimestamp(made, datetime.UTC).isoformat()
        )

    shown = TimeText().text
    rng = random.Random(7)
    times = [0.0, 1.0, 0.9999995, 1.0000005, 1.0000015, 2.5e-7, 1_795_953_996.1157207, -1.5]
    times += [253_402_300_799.0, 253_402_300_798.9999999, 1e-300, 12.0 - 5e-7]
    times += [rng.uniform(0, 4e9) for _ in range(2000)]
    times += [rng.randrange(2**31) + rng.randrange(10**6) / 1e6 for _ in range(2000)]
    times += [rng.randrange(2**31) + rng.choice((5e-7, 0.9999995, 1.5e-6)) for _ in range(2000)]
    for made in sorted(times) + times:  # (in order, as a history's seconds, and shuffled)
        assert shown(made) == datetime.datetime.fromtimestamp(made, datetime.UTC).isoformat()
