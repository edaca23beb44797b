"""Records a saver decoded once, shared between histories: never a changed object, never stale."""

import contextlib
import copy
import json
import sqlite3

import pytest

from nbgraph import START, MemorySaver, Mutation, SqliteSaver, StateGraph
from nbgraph.checkpoint import CheckpointRecord
from nbgraph.checkpoint.decoded import Decoded


def config(thread: str = "t", **extra) -> dict:
    return {"configurable": {"thread_id": thread, **extra}}


def make_saver(kind: str, tmp_path):
    return MemorySaver() if kind == "memory" else SqliteSaver(str(tmp_path / "h.sqlite"))


def wrapped(old: list, new: list) -> list:
    """A user's reducer that keeps the written list itself as an item."""
    return [*old, new]


def busy_app(saver, steps: int = 150):
    """A loop writing every kind of value: atoms, a list of atoms to a field without a
    reducer, dicts appended, a dict without a reducer, a list kept whole by a user's
    reducer."""

    def tick(state):
        n = state["n"]
        return {
            "n": n + 1,
            "log": [{"i": n, "tags": [n]}],
            "flat": [n, str(n)],
            "last": [n, n + 1],
            "box": {"k": [n]},
            "kept": [n],
        }

    return (
        StateGraph(dict, reducers={"log": "append", "flat": "append", "kept": wrapped})
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: "__end__" if s["n"] >= steps else "tick")
        .compile(checkpointer=saver)
    )


START_VALUES = {"n": 0, "log": [], "flat": [], "last": [], "box": {}, "kept": []}


def shown(history) -> list:
    """What a history shows, as plain data (a deep copy: nothing shared with it)."""
    return copy.deepcopy(
        [
            (
                s.values,
                s.next,
                s.config,
                s.metadata,
                s.parent_config,
                [(t.id, t.name, t.result) for t in s.tasks],
            )
            for s in history
        ]
    )


def scribble(value, seen: set[int]) -> None:
    """Change every list, dict and set reachable from `value` in place (and their items)."""
    if id(value) in seen:
        return
    if isinstance(value, list | dict | set | tuple):
        seen.add(id(value))
    if isinstance(value, dict):
        for item in list(value.values()):
            scribble(item, seen)
        for key in list(value):
            value[key] = "scribbled"
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in value:
            scribble(item, seen)
        value[:] = ["scribbled"]
    elif isinstance(value, set):
        value.add("scribbled")
    elif isinstance(value, tuple):
        for item in value:
            scribble(item, seen)


def scribble_history(history) -> None:
    seen: set[int] = set()
    for snapshot in history:
        for part in (snapshot.values, snapshot.config, snapshot.metadata, snapshot.parent_config):
            scribble(part, seen)
        for task in snapshot.tasks:
            scribble(task.result, seen)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("forked", [False, True])
def test_a_history_read_again_after_every_container_of_the_last_was_changed(kind, forked, tmp_path):
    """The records a saver decoded for one history are shared with the next: whatever the
    caller does to the first history's snapshots (every list, dict and set of their values,
    items, task results, configs, metadata changed in place) the next shows what it did."""
    saver = make_saver(kind, tmp_path)
    app = busy_app(saver)
    cfg = config() | {"recursion_limit": 400}
    app.invoke(START_VALUES, cfg)
    app.update_state(cfg, {"n": 1000, "last": [7, 8], "log": [{"i": -1}]})  # (not a plain step)
    if forked:
        past = list(app.get_state_history(cfg))[60].config
        app.update_state(past, {"last": [-1]})
    first = list(app.get_state_history(cfg))
    expected = shown(first)
    assert len(expected) > 150
    assert any(task[2] for snap in expected for task in snap[5])  # (task results shown)
    for _ in range(2):
        scribble_history(first)
        first = list(app.get_state_history(cfg))
        assert shown(first) == expected
    newest = app.get_state(cfg)
    assert newest.values == expected[0][0] and newest.values["n"] == (91 if forked else 1000)


def ids_and_values(app, cfg) -> list:
    return [
        (s.config["configurable"]["checkpoint_id"], s.values) for s in app.get_state_history(cfg)
    ]


def each_restored_alone(app, cfg) -> list:
    """The oracle: each checkpoint's values read by `get_state` alone (not through a history)."""
    ids = [s.config["configurable"]["checkpoint_id"] for s in app.get_state_history(cfg)]
    return [(i, app.get_state(config(checkpoint_id=i)).values) for i in ids]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_thread_changed_after_a_history_is_read_afresh(kind, tmp_path):
    """New checkpoints, `update_state` on the newest, a fork from a past checkpoint: each
    next history shows the thread as it is now, as each checkpoint restored alone shows it."""
    saver = make_saver(kind, tmp_path)
    app = busy_app(saver, steps=30)
    cfg = config() | {"recursion_limit": 400}
    app.invoke(START_VALUES, cfg)
    before = ids_and_values(app, cfg)
    # the loop runs again from 0 (the update's checkpoint keeps the values after it, which
    # the next steps' writes extend: the fold must not extend the kept record's lists)
    app.update_state(cfg, {"n": 0, "flat": ["again"], "last": ["again"]})
    app.invoke(None, cfg)
    grown = ids_and_values(app, cfg)
    assert len(grown) > len(before) + 25 and grown[-len(before) :] == before
    assert grown == each_restored_alone(app, cfg) == ids_and_values(app, cfg)
    app.update_state(cfg, {"last": ["updated"], "flat": ["more"]})
    updated = ids_and_values(app, cfg)
    assert updated[0][1]["last"] == ["updated"] and updated[0][1]["flat"][-1] == "more"
    assert updated[1:] == grown
    past = config(checkpoint_id=grown[10][0])
    app.update_state(past, {"last": ["forked"]})
    forked = ids_and_values(app, cfg)
    assert forked[0][1]["last"] == ["forked"]
    assert forked == each_restored_alone(app, cfg)


def test_a_sqlite_row_changed_behind_the_saver_is_read_afresh(tmp_path):
    """A record is kept with the row it came from: a row another connection changed (same
    checkpoint id, other payload) is decoded again."""
    path = str(tmp_path / "h.sqlite")
    app = busy_app(SqliteSaver(path), steps=20)
    cfg = config()
    app.invoke(START_VALUES, cfg)
    history = ids_and_values(app, cfg)
    checkpoint_id = history[2][0]  # (a delta, not a snapshot: its writes make its state)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        (text,) = conn.execute(
            "SELECT payload FROM checkpoints WHERE checkpoint_id = ?", (checkpoint_id,)
        ).fetchone()
        payload = json.loads(text)
        writes = payload["tasks"][0]["writes"]
        payload["tasks"][0]["writes"] = [[k, ["changed"] if k == "last" else v] for k, v in writes]
        conn.execute(
            "UPDATE checkpoints SET payload = ? WHERE checkpoint_id = ?",
            (json.dumps(payload), checkpoint_id),
        )
        conn.commit()
    again = dict(ids_and_values(app, cfg))
    assert again[checkpoint_id]["last"] == ["changed"]
    assert again[history[4][0]] == history[4][1]


def test_a_memory_thread_put_again_after_delete_is_read_afresh():
    """A `MemorySaver` thread deleted and put again under the same checkpoint ids, one of
    them changed: the history shows the new records, not those decoded before."""
    saver = MemorySaver()
    app = busy_app(saver, steps=20)
    cfg = config()
    app.invoke(START_VALUES, cfg)
    history = ids_and_values(app, cfg)
    records = saver.history("t")[::-1]  # (oldest first)
    saver.delete_thread("t")
    changed = records[-3].checkpoint_id
    for record in records:
        if record.checkpoint_id == changed:
            tasks = [
                {
                    **task,
                    "writes": [[k, ["changed"] if k == "last" else v] for k, v in task["writes"]],
                }
                for task in record.payload["tasks"]
            ]
            record = record._replace(payload={**record.payload, "tasks": tasks})
        saver.put(CheckpointRecord(*record))
    again = dict(ids_and_values(app, cfg))
    assert again[changed]["last"] == ["changed"]
    assert again[history[0][0]] == history[0][1]


def test_the_cache_is_bounded_and_keeps_nothing_bigger_than_its_limit():
    """`Decoded` starts afresh when it would outgrow its limit, and keeps no record whose
    stored form alone is bigger."""
    cache = Decoded(limit=10)
    cache.keep("t", "a", b"x" * 6, "A", 6)
    cache.keep("t", "b", b"y" * 6, "B", 6)  # (12 > 10: "a" forgotten)
    assert cache.found("t", "a", b"x" * 6) is None and cache.found("t", "b", b"y" * 6) == "B"
    cache.keep("t", "c", b"z" * 11, "C", 11)
    assert cache.found("t", "c", b"z" * 11) is None and cache.size == 0


def test_a_memory_history_reuses_the_records_it_decoded():
    """The second history of an unchanged thread decodes nothing again (the same records)."""
    saver = MemorySaver()
    app = busy_app(saver, steps=10)
    app.invoke(START_VALUES, config())
    list(app.get_state_history(config()))
    kept = {key: record for key, (_, record) in saver._decoded.threads["t"].items()}
    assert len(kept) == len(saver.history("t"))
    list(app.get_state_history(config()))
    assert all(saver._decoded.threads["t"][key][1] is record for key, record in kept.items())


class _Poke(Mutation):
    """Changes a field's value in place, deep inside (what a fold must never do to a list
    or dict a shared payload holds)."""

    def __init__(self, field: str, step: int):
        self.field, self.step = field, step

    def apply(self, value):
        if self.field == "last":  # (no reducer: the value a plain write set)
            value[0] = ("poked", self.step)
        elif self.field == "box":  # (no reducer: a dict a plain write set)
            value["k"].append(("poked", self.step))
        else:  # log (dicts appended) or kept (a user's reducer keeps the written lists)
            last = value[-1]
            if type(last) is dict:
                last["i"] = ("poked", self.step)
            else:
                last.append(("poked", self.step))
        return value

    def __eq__(self, other):  # (shown in a task's result: two reads hold equal copies)
        return type(other) is _Poke and (other.field, other.step) == (self.field, self.step)

    __hash__ = None


def test_values_changed_in_place_by_a_later_step_never_reach_the_shared_records():
    """Steps whose writes change the state's lists and dicts in place (`Mutation`s): each
    history equals each checkpoint restored alone, the first and the ones after it (a fold
    that let a shared payload's list or dict into the state would have changed the record
    kept for the next history)."""
    saver = MemorySaver()
    fields = ("last", "box", "log", "kept")

    def tick(state):
        n = state["n"]
        writes = {"n": n + 1, "log": [{"i": n}], "last": [n, n], "box": {"k": [n]}, "kept": [n]}
        if n % 10 == 5:
            field = fields[(n // 10) % 4]
            writes[field] = _Poke(field, n)
        return writes

    app = (
        StateGraph(dict, reducers={"log": "append", "kept": wrapped})
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: "__end__" if s["n"] >= 120 else "tick")
        .compile(checkpointer=saver)
    )
    cfg = config() | {"recursion_limit": 400}
    app.invoke(START_VALUES, cfg)
    expected = each_restored_alone(app, cfg)
    assert any(("poked", 15) in values["box"].get("k", ()) for _, values in expected)
    for _ in range(3):
        assert ids_and_values(app, cfg) == expected


def chained(old: list, new: list) -> list:
    """A user's reducer that keeps each written list as an item and changes the last one
    kept in place when the next comes."""
    result = list(old)
    if result and type(result[-1]) is list:
        result[-1].append("then")
    result.append(new)
    return result


def test_a_users_reducer_that_changes_a_kept_write_never_reaches_the_shared_records():
    """A thread written with a built-in reducer, read by a graph whose reducer is the
    user's (its checkpoints keep no value after each step: the reducer is replayed): that
    reducer keeps each written list and changes it at the next step, and is handed copies,
    so the next history is still right."""
    saver = MemorySaver()

    def app(reducer):
        return (
            StateGraph(dict, reducers={"chain": reducer})
            .add_node("tick", lambda s: {"n": s["n"] + 1, "chain": [s["n"]]})
            .add_edge(START, "tick")
            .add_conditional_edges("tick", lambda s: "__end__" if s["n"] >= 40 else "tick")
            .compile(checkpointer=saver)
        )

    cfg = config()
    app("append").invoke({"n": 0, "chain": []}, cfg)
    reader = app(chained)
    expected = each_restored_alone(reader, cfg)
    assert [30, "then"] in expected[1][1]["chain"]  # (the reducer was replayed)
    for _ in range(3):
        assert ids_and_values(reader, cfg) == expected
