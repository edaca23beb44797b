"""Property tests of the run record (SEMANTICS §6): on random graphs and reducers,
`run.state_at(ref)` equals what each node saw, each step's state equals the stream's, and
every effect row agrees with the states on either side of it.
"""

from __future__ import annotations

import copy
import json
import operator
import random
import typing
import warnings
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, TypedDict

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from nbgraph import (
    END,
    MISSING,
    START,
    Command,
    Ephemeral,
    InvalidUpdateError,
    Overwrite,
    RemainingSteps,
    Run,
    Send,
    StateGraph,
    generate_state_schema,
)

CONFIG_LIMIT = 200

# --- the field kinds ---------------------------------------------------------------------------

SMALL_INT = st.integers(-3, 9)
SMALL_LIST = st.lists(st.integers(0, 5), max_size=3)


@dataclass(frozen=True)
class Kind:
    """A kind of field: its type, its reducer (None: plain overwrite), values to write."""

    base: type
    reducer: Any
    values: st.SearchStrategy
    empty: Any  # the starting value; MISSING: the field appears only once written
    exclusive: bool = False  # one writer per step (plain overwrite and ephemeral fields)
    whole: st.SearchStrategy | None = None  # values for `Overwrite` (default: `values`)

    @property
    def whole_values(self) -> st.SearchStrategy:
        return self.values if self.whole is None else self.whole

    @property
    def annotation(self) -> Any:
        return self.base if self.reducer is None else Annotated[self.base, self.reducer]


KINDS = {
    "append": Kind(list, "append", st.one_of(st.integers(0, 5), SMALL_LIST), [], whole=SMALL_LIST),
    "opadd": Kind(list, operator.add, SMALL_LIST, []),
    "add": Kind(int, "add", SMALL_INT, 0),
    "sum": Kind(int, "sum", SMALL_INT, 0),
    "max": Kind(int, "max", SMALL_INT, 0),
    "min": Kind(int, "min", SMALL_INT, 0),
    "union": Kind(list, "union", SMALL_LIST, []),
    "merge": Kind(
        dict, "merge", st.dictionaries(st.sampled_from("abc"), st.integers(0, 5), max_size=2), {}
    ),
    # a custom reducer whose result depends on the order of the writes
    "custom": Kind(str, lambda old, new: (old + new)[-6:], st.text("xyz", max_size=2), ""),
    "overwrite": Kind(list, None, SMALL_LIST, MISSING, exclusive=True),
    "overwrite_int": Kind(int, None, SMALL_INT, MISSING, exclusive=True),
    "ephemeral": Kind(int, Ephemeral, SMALL_INT, MISSING, exclusive=True),
}
UNKNOWN_KEY = "not_a_field"  # written now and then: dropped, with a warning and an effect row


# --- the plan of a random graph ----------------------------------------------------------------


@dataclass
class NodePlan:
    name: str
    writes: list[dict[str, Any]]  # what the node returns on its i-th call: writes[i % len]
    mutate: bool  # scribble on the state it was given
    as_command: bool  # return Command(update=...) instead of a dict
    defer: bool = False


@dataclass
class Plan:
    generated: bool  # schema from generate_state_schema (else typing.TypedDict)
    fields: dict[str, str]  # field name -> kind name
    nodes: list[NodePlan]
    start: list[str]
    joins: list[tuple[tuple[str, ...], str, str]]  # (sources, target, "plain" | "wait")
    routed: dict[str, str]  # node -> "one" | "some": its plain out-edges become a router
    loop: tuple[str, int] | None  # (node, bound): routes back to itself while ticks < bound
    sender: str | None  # a node whose router sends to "worker"
    sends: list[list[Any]]  # per sender call, the payloads it sends
    worker: NodePlan | None
    input: dict[str, Any]
    max_concurrency: int | None


def _writes(draw: Any, allowed: list[str], fields: dict[str, str], overwriter: set[str]) -> dict:
    chosen = draw(st.lists(st.sampled_from(allowed), max_size=3, unique=True)) if allowed else []
    writes = {}
    for name in chosen:
        if name == UNKNOWN_KEY:
            writes[name] = 1
        elif name in overwriter and draw(st.booleans()):
            writes[name] = Overwrite(draw(KINDS[fields[name]].whole_values))
        else:
            writes[name] = draw(KINDS[fields[name]].values)
    return writes


def _topology(draw: Any, names: list[str]) -> tuple[list[int], list[str], list[tuple]]:
    """Each node's layer, the nodes START fans out to, and the joins into later layers."""
    layer = [0]
    for _ in names[1:]:
        layer.append(layer[-1] + draw(st.integers(0, 1)))
    start = [name for name, at in zip(names, layer, strict=True) if at == 0]
    joins = []
    for name, at in zip(names, layer, strict=True):
        if at == 0:
            continue
        earlier = [n for n, a in zip(names, layer, strict=True) if a < at]
        sources = draw(st.lists(st.sampled_from(earlier), min_size=1, max_size=3, unique=True))
        kind = "wait" if len(sources) > 1 and draw(st.booleans()) else "plain"
        joins.append((tuple(sources), name, kind))
    return layer, start, joins


def _write_rights(
    draw: Any, names: list[str], fields: dict[str, str]
) -> tuple[dict[str, set[str]], dict[str, set[str]], list[str]]:
    """Who may write what: one node per exclusive field, at most one node that may write
    `Overwrite` per reducer field, and the fields anyone may write."""
    writers: dict[str, set[str]] = {name: set() for name in names}
    overwriters: dict[str, set[str]] = {name: set() for name in names}
    for field_name, kind in fields.items():
        if KINDS[kind].exclusive or draw(st.booleans()):
            target = writers if KINDS[kind].exclusive else overwriters
            target[draw(st.sampled_from(names))].add(field_name)
    shared = [f for f, kind in fields.items() if not KINDS[kind].exclusive]
    if draw(st.integers(0, 4)) == 0:
        shared = [*shared, UNKNOWN_KEY]
    return writers, overwriters, shared


def _add_clash(draw: Any, nodes: list[NodePlan], fields: dict[str, str]) -> None:
    """Two nodes that write one exclusive field (or `Overwrite` a reducer field) on every
    call: when they run in the same step, the run fails with InvalidUpdateError."""
    pair = draw(
        st.lists(st.sampled_from([n.name for n in nodes]), min_size=2, max_size=2, unique=True)
    )
    clash = draw(st.sampled_from(sorted(fields)))
    kind = KINDS[fields[clash]]
    for node in nodes:
        for writes in node.writes if node.name in pair else ():
            value = draw(kind.whole_values)
            writes[clash] = value if kind.exclusive else Overwrite(value)


@st.composite
def plans(draw: Any) -> Plan:
    kinds = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=2, max_size=6))
    fields = {f"f{i}_{kind}": kind for i, kind in enumerate(kinds)}
    names = [f"n{i}" for i in range(draw(st.integers(2, 7)))]
    layer, start, joins = _topology(draw, names)
    writers, overwriters, shared = _write_rights(draw, names, fields)
    loop = (draw(st.sampled_from(names)), draw(st.integers(1, 4))) if draw(st.booleans()) else None
    routed = {
        name: draw(st.sampled_from(["one", "some"]))
        for name in names
        if any(name in s and k == "plain" for s, _, k in joins) and draw(st.booleans())
    }
    sender = draw(st.sampled_from(names)) if draw(st.booleans()) else None
    payload = st.one_of(SMALL_INT, st.fixed_dictionaries({"items": SMALL_LIST}))
    sends = draw(st.lists(st.lists(payload, max_size=3), min_size=1, max_size=3)) if sender else []
    nodes = [
        NodePlan(
            name,
            [
                _writes(draw, sorted(writers[name]) + shared, fields, overwriters[name])
                for _ in range(draw(st.integers(1, 3)))
            ],
            mutate=draw(st.booleans()),
            as_command=draw(st.booleans()),
            defer=at > 0 and name not in (sender, loop and loop[0]) and draw(st.booleans()),
        )
        for name, at in zip(names, layer, strict=True)
    ]
    if draw(st.integers(0, 2)) == 2:
        _add_clash(draw, nodes, fields)
    worker = None
    if sender is not None:
        worker = NodePlan(
            "worker",
            [_writes(draw, shared, fields, set()) for _ in range(draw(st.integers(1, 3)))],
            mutate=True,
            as_command=draw(st.booleans()),
        )
    given_fields = draw(st.lists(st.sampled_from(sorted(fields)), max_size=3, unique=True))
    return Plan(
        generated=draw(st.booleans()),
        fields=fields,
        nodes=nodes,
        start=start,
        joins=joins,
        routed=routed,
        loop=loop,
        sender=sender,
        sends=sends,
        worker=worker,
        input={name: draw(KINDS[fields[name]].values) for name in given_fields},
        max_concurrency=draw(st.sampled_from([1, None])),
    )


# --- building and running a plan ---------------------------------------------------------------


def _scribble(value: Any) -> None:
    """Change `value` in place, as a careless node might change what it was given."""
    if isinstance(value, Overwrite):
        _scribble(value.value)
    elif isinstance(value, list):
        value.append("scribble")
    elif isinstance(value, dict):
        for item in list(value.values()):
            _scribble(item)
        value["scribble"] = "scribble"


def schema_of(plan: Plan) -> Any:
    if plan.generated:
        spec: dict[str, Any] = {
            name: KINDS[kind].base
            if KINDS[kind].reducer is None
            else (KINDS[kind].base, KINDS[kind].reducer)
            for name, kind in plan.fields.items()
        }
        return generate_state_schema("Generated", ticks=(int, "add"), **spec)
    annotations = {name: KINDS[kind].annotation for name, kind in plan.fields.items()}
    return typing.TypedDict("S", {**annotations, "ticks": Annotated[int, "add"]})


def initial_state(plan: Plan) -> dict[str, Any]:
    """The state before step 0: reducer fields start empty."""
    values = {
        name: copy.copy(KINDS[kind].empty)
        for name, kind in plan.fields.items()
        if KINDS[kind].empty is not MISSING
    }
    values["ticks"] = 0
    if plan.generated:
        values["messages"] = []
    return values


def _node_fn(plan: NodePlan, seen: list, loops: bool) -> Any:
    returned: list[dict] = []

    def node(state: dict) -> Any:
        seen.append(copy.deepcopy(state))
        if plan.mutate:
            _scribble(state)
        for earlier in returned:  # what the engine took must not change with it
            _scribble(earlier)
        update = copy.deepcopy(plan.writes[len(returned) % len(plan.writes)])
        if loops:
            update["ticks"] = 1
        returned.append(update)
        if plan.as_command:
            return Command(update=update)
        return update or None

    return node


def _worker_fn(plan: NodePlan, seen: list) -> Any:
    def worker(arg: dict) -> Any:
        seen.append(copy.deepcopy(arg))
        _scribble(arg)
        turn, index = arg["seq"]
        update = copy.deepcopy(plan.writes[(turn + index) % len(plan.writes)])
        return Command(update=update) if plan.as_command else update

    return worker


def _route_by_ticks(targets: list[str], mode: str) -> Any:
    turns = [0]

    def route_by_ticks(state: dict) -> Any:
        count = state["ticks"] + turns[0]
        turns[0] += 1
        if mode == "one":
            options = [*targets, END]
            return options[count % len(options)]
        return [t for i, t in enumerate(targets) if count >> i & 1] or END

    return route_by_ticks


def _loop_back(name: str, bound: int) -> Any:
    def loop_back(state: dict) -> Any:
        return name if state["ticks"] < bound else END

    return loop_back


def _send_work(sends: list[list[Any]]) -> Any:
    sent: list[dict] = []
    turns = [0]

    def send_work(state: dict) -> Any:
        for arg in sent:  # the recorded arguments must not change with them
            _scribble(arg)
        turn = turns[0]
        turns[0] += 1
        args = [
            {"seq": (turn, index), "payload": copy.deepcopy(payload)}
            for index, payload in enumerate(sends[turn % len(sends)])
        ]
        sent.extend(args)
        return [Send("worker", arg) for arg in args]

    return send_work


def build(plan: Plan) -> tuple[Any, dict[str, list]]:
    """A fresh app for `plan`, and the lists its nodes record their inputs in."""
    seen: dict[str, list] = {node.name: [] for node in plan.nodes}
    graph = StateGraph(schema_of(plan))
    loop_name, bound = plan.loop or (None, 0)
    for node in plan.nodes:
        fn = _node_fn(node, seen[node.name], node.name == loop_name)
        graph.add_node(node.name, fn, defer=node.defer)
    if plan.worker is not None:
        seen["worker"] = []
        graph.add_node("worker", _worker_fn(plan.worker, seen["worker"]))
    for name in plan.start:
        graph.add_edge(START, name)
    for sources, target, kind in plan.joins:
        if kind == "wait":
            graph.add_edge(list(sources), target)
            continue
        for source in sources:
            if source not in plan.routed:
                graph.add_edge(source, target)
    for source, mode in plan.routed.items():
        targets = [t for s, t, k in plan.joins if k == "plain" and source in s]
        graph.add_conditional_edges(source, _route_by_ticks(targets, mode))
    if loop_name is not None:
        graph.add_conditional_edges(loop_name, _loop_back(loop_name, bound))
    if plan.sender is not None:
        graph.add_conditional_edges(plan.sender, _send_work(plan.sends))
    return graph.compile(), seen


def config_of(plan: Plan) -> dict[str, Any]:
    config: dict[str, Any] = {"recursion_limit": CONFIG_LIMIT}
    if plan.max_concurrency is not None:
        config["max_concurrency"] = plan.max_concurrency
    return config


def in_call_order(seen: dict[str, list]) -> dict[str, list]:
    """Each node's inputs in the order of its tasks (sends by the order they were sent)."""
    ordered = dict(seen)
    if "worker" in ordered:
        ordered["worker"] = sorted(ordered["worker"], key=lambda arg: arg["seq"])
    return ordered


# --- what must hold ----------------------------------------------------------------------------


def check_tasks_saw_their_states(run: Run, seen: dict[str, list]) -> None:
    for name, calls in in_call_order(seen).items():
        assert len(run.tree.by_name.get(name, ())) == len(calls), name
        for occurrence, saw in enumerate(calls):
            assert run.state_at((name, occurrence)) == saw, (name, occurrence)
            node = run.tree.occurrence(name, occurrence)
            assert run.state_at(node.id) == saw, node.id
        if calls:
            assert run.state_at((name, -1)) == calls[-1]


def applied_steps(run: Run) -> list[int]:
    return [int(step) for step in run.states.index]


def check_step_states(run: Run) -> None:
    names = list(run.states.columns)
    for step, row in zip(applied_steps(run), run.states.itertuples(index=False), strict=True):
        from_table = {n: v for n, v in zip(names, row, strict=True) if v is not MISSING}
        assert run.state_at(step) == from_table, step
        assert run.state_at(f"merge:{step}") == from_table, step
    last = run.state_at(run.last_step)
    _scribble(last)  # a copy: changing it changes nothing recorded
    assert run.state_at(run.last_step) == run.output  # a failed run too: its last applied step


def _writes_of(run: Run, step: int, name: str) -> list[tuple[str, Any]]:
    if step == 0:
        return [(START, v) for f, v in run.tree.merge(0).writes if f == name]
    return [(t.name, v) for t in run.tree.tasks(step) for f, v in t.writes if f == name]


def check_effects(run: Run, plan: Plan) -> None:
    effects = run.effect_list
    assert len(run.effects) == len(effects)
    by_step: dict[int, list] = {}
    for effect in effects:
        by_step.setdefault(effect.step, []).append(effect)
    previous = initial_state(plan)
    for step in run.timeline.steps():
        rows = by_step.get(step, [])
        dropped = [r for r in rows if r.dropped_key]
        tasks = run.tree.tasks(step) if step > 0 else []
        assert len(dropped) == sum(len(t.dropped) for t in tasks), step
        assert all(r.field == UNKNOWN_KEY and not r.applied for r in dropped)
        for row in rows:
            if row.dropped_key:
                continue
            assert row.writes == _writes_of(run, step, row.field), (step, row.field)
            assert row.writers == [w for w, _ in row.writes]
        if step not in applied_steps(run):
            assert all(not r.applied for r in rows if not r.dropped_key), step
            continue
        after = run.state_at(step)
        for row in rows:
            if not row.applied:
                continue
            assert row.before == previous.get(row.field, MISSING), (step, row.field)
            assert row.after == after.get(row.field, MISSING), (step, row.field)
            assert row.changed == (row.before != row.after), (step, row.field)
        differ = {
            name
            for name in {*previous, *after}
            if previous.get(name, MISSING) != after.get(name, MISSING)
        }
        assert differ == {r.field for r in rows if r.applied and r.changed}, step
        previous = after


def check_stream(run: Run, plan: Plan, seen: dict[str, list]) -> None:
    app, seen_again = build(plan)
    chunks: list[tuple[str, Any]] = []
    stream = app.stream(plan.input, config_of(plan), stream_mode=["values", "debug"])
    if run.status == "done":
        chunks.extend(stream)
    else:
        with pytest.raises(InvalidUpdateError):
            for chunk in stream:
                chunks.append(chunk)
    assert in_call_order(seen_again) == in_call_order(seen)  # the same run, again
    by_step: dict[int, dict] = {}
    started, waiting = False, None
    for mode, chunk in chunks:
        if mode == "values" and not started:
            by_step[0] = chunk  # before any task ran: the input applied
        elif mode == "values":
            waiting = chunk  # the debug "step" event that follows names its step
        elif chunk.type == "step":
            by_step[chunk.step] = chunk.values
            if waiting is not None:
                assert waiting == chunk.values
            waiting = None
        else:
            started = True
    later = [s for s in applied_steps(run) if s > 0]
    assert set(later) <= set(by_step)
    for step, values in by_step.items():
        assert run.state_at(step) == values, step


def check_invoke(run: Run, plan: Plan) -> None:
    app, _ = build(plan)
    if run.status == "done":
        assert app.invoke(plan.input, config_of(plan)) == run.state_at(run.last_step)
    else:
        with pytest.raises(InvalidUpdateError):
            app.invoke(plan.input, config_of(plan))


@settings(max_examples=60, deadline=None)
@given(plans())
def test_state_at_equals_what_each_node_saw(plan: Plan) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # dropped keys warn, as they should
        app, seen = build(plan)
        run = app.run(plan.input, config_of(plan))
        assert run.status == "done" or isinstance(run.error, InvalidUpdateError), run.error
        describe(plan, run)
        assert run.state_at(-1) == plan.input
        check_tasks_saw_their_states(run, seen)
        check_step_states(run)
        check_effects(run, plan)
        check_stream(run, plan, seen)
        check_invoke(run, plan)


def describe(plan: Plan, run: Run) -> None:
    """What this example covered (`pytest --hypothesis-show-statistics` counts them)."""
    tasks = len(run.tree.tasks())
    event(f"run {run.status}, {'<5' if tasks < 5 else '5-9' if tasks < 10 else '10+'} tasks")
    for feature in ("loop", "sender", "routed"):
        if getattr(plan, feature):
            event(feature)
    if any(node.defer for node in plan.nodes):
        event("defer")
    if any(kind == "wait" for _, _, kind in plan.joins):
        event("waiting join")


# --- failed steps and managed fields -----------------------------------------------------------


def test_a_conflict_fails_the_run_and_the_record_still_holds() -> None:
    class Note(TypedDict):
        note: str
        log: Annotated[list, "append"]

    seen: dict[str, list] = {"a": [], "b": []}

    def writer(name: str) -> Any:
        def node(state: dict) -> dict:
            seen[name].append(copy.deepcopy(state))
            return {"note": name, "log": [name]}

        return node

    app = (
        StateGraph(Note)
        .add_node("a", writer("a"))
        .add_node("b", writer("b"))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )
    run = app.run({"note": "start"})
    assert run.status == "failed" and isinstance(run.error, InvalidUpdateError)
    assert run.last_step == 0
    check_tasks_saw_their_states(run, seen)
    rows = {(e.step, e.field): e for e in run.effect_list}
    assert rows[1, "note"].conflict and not rows[1, "note"].applied
    assert rows[1, "note"].writes == [("a", "a"), ("b", "b")]
    assert rows[1, "log"].after is MISSING and not rows[1, "log"].applied


def test_failed_step_is_not_in_the_output() -> None:
    """`run.output` of a failed run is the state after the last applied step.

    A conflict found half-way through a step's writes must not leave the writes before it
    (here `note`) in the engine's values: the record says the step never applied.
    """

    class Total(TypedDict):
        total: Annotated[int, "add"]
        note: str

    app = (
        StateGraph(Total)
        .add_node("a", lambda state: {"note": "from a", "total": Overwrite(1)})
        .add_node("b", lambda state: {"total": Overwrite(2)})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )
    run = app.run({"total": 0})
    assert isinstance(run.error, InvalidUpdateError)
    assert run.state_at(run.last_step) == {"total": 0}
    assert run.output == {"total": 0}  # not {'total': 0, 'note': 'from a'}


def test_state_at_a_task_includes_the_managed_fields_it_saw() -> None:
    """SEMANTICS §6: the state at a task "always equals what the nodes saw", managed
    fields included (`RemainingSteps` is never stored, but the node read it)."""

    class Counted(TypedDict):
        n: Annotated[int, "add"]
        remaining: RemainingSteps

    seen: list[dict] = []

    def count(state: dict) -> dict:
        seen.append(copy.deepcopy(state))
        return {"n": 1}

    app = (
        StateGraph(Counted)
        .add_node("count", count)
        .add_edge(START, "count")
        .add_conditional_edges("count", lambda state: END if state["n"] >= 3 else "count")
        .compile()
    )
    run = app.run({"n": 0}, {"recursion_limit": 10})
    assert [state["remaining"] for state in seen] == [9, 8, 7]
    assert [run.state_at(("count", i)) for i in range(3)] == seen


# --- deep runs ---------------------------------------------------------------------------------

DEEP_STEPS = 3_000


class Deep(TypedDict):
    count: int
    log: Annotated[list, "append"]
    total: Annotated[int, "add"]
    best: Annotated[int, "max"]
    last_by_rest: Annotated[dict, "merge"]


def _tick(state: dict) -> dict:
    n = state["count"]
    return {"count": n + 1, "log": [n], "total": n, "best": n * 7 % 11, "last_by_rest": {n % 5: n}}


@cache
def deep_run() -> Run:
    app = (
        StateGraph(Deep)
        .add_node("tick", _tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["count"] >= DEEP_STEPS else "tick")
        .compile()
    )
    return app.run({"count": 0}, {"recursion_limit": DEEP_STEPS + 10})


def deep_reference(step: int) -> dict[str, Any]:
    """The deep run's state after `step`, by a plain loop (step 0: the input applied)."""
    state: dict[str, Any] = {"count": 0, "log": [], "total": 0, "best": 0, "last_by_rest": {}}
    for n in range(step):
        state["count"] = n + 1
        state["log"].append(n)
        state["total"] += n
        state["best"] = max(state["best"], n * 7 % 11)
        state["last_by_rest"][n % 5] = n
    return state


def test_deep_self_loop_states_match_a_reference_and_snapshots_stay_few() -> None:
    run = deep_run()
    assert run.status == "done" and run.last_step == DEEP_STEPS
    fresh = Run(run.log)  # a cold snapshot cache
    picks = [0, 1, 2, DEEP_STEPS - 1, DEEP_STEPS, *random.Random(7).sample(range(DEEP_STEPS), 6)]
    for k in picks:
        assert fresh.state_at(k) == deep_reference(k), k
        if k < DEEP_STEPS:
            assert fresh.state_at(("tick", k)) == deep_reference(k), k
    assert fresh.state_at(DEEP_STEPS) == run.output == deep_reference(DEEP_STEPS)
    assert fresh.timeline.snapshot_count < DEEP_STEPS // 50  # cached, not one per step


@settings(max_examples=25, deadline=None)
@given(st.integers(0, DEEP_STEPS))
def test_deep_self_loop_state_at_any_step(step: int) -> None:
    run = deep_run()
    expected = deep_reference(step)
    assert run.state_at(step) == expected
    if step < DEEP_STEPS:
        assert run.state_at(("tick", step)) == expected
    if step > 0:
        assert run.state_at(("tick", step - 1))["count"] == step - 1


# --- damaged files: a clean load that works everywhere, or the documented error -----------------


class Fuzzed(TypedDict, total=False):
    log: Annotated[list, "append"]
    n: Annotated[int, "add"]
    title: str


def _fuzz_graph(semantics: str = "supersteps", **compile_options: Any) -> Any:
    graph = StateGraph(Fuzzed)
    for name in "abcd":  # b and c run in one step: only a and d set the title
        title = {"title": name} if name in "ad" else {}
        graph.add_node(name, lambda s, name=name, title=title: {"log": [name], "n": 1, **title})
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c").add_edge(["b", "c"], "d")
    return graph.add_edge("d", END).compile(semantics=semantics, **compile_options)


JUNK: list[Any] = [
    None, 0, -1, 7, 2**70, 1.5, "", "x", "a", "__end__", "1", [], {}, [1], {"a": 1}, True,
    ["a", "b"], {"$type": "tuple", "items": []}, {"$type": "repr", "repr": 5, "class": 1},
    {"$type": "nope"},
]  # fmt: skip


def _paths(node: Any, path: tuple = ()) -> typing.Iterator[tuple]:
    yield path
    items = node.items() if type(node) is dict else enumerate(node) if type(node) is list else ()
    for key, child in items:
        yield from _paths(child, (*path, key))


def mutated(data: Any, rng: random.Random, skip: tuple = ()) -> Any:
    """`data` (JSON) with one or two entries replaced by junk or deleted."""
    data = copy.deepcopy(data)
    paths = [p for p in _paths(data) if p and not set(p) & set(skip)]
    for _ in range(rng.choice((1, 1, 2))):
        path = rng.choice(paths)
        parent = data
        try:
            for key in path[:-1]:
                parent = parent[key]
            if rng.random() < 0.2:
                del parent[path[-1]]
            else:
                parent[path[-1]] = copy.deepcopy(rng.choice(JUNK))
        except (KeyError, IndexError, TypeError):
            pass  # an earlier change moved it
    return data


def works_everywhere(run: Run, inspect: bool) -> None:
    """Every table, drawing and (if asked) inspector panel of `run`."""
    run.states, run.effects, run.steps, run.output  # noqa: B018
    list(run.tree)
    run.draw_tree().source  # noqa: B018
    for step in run.timeline.steps():
        run.draw(step).source  # noqa: B018
    repr(run)
    if inspect:
        inspector = run.inspect()
        for step in run.timeline.steps():
            inspector.go(step)


def test_damaged_run_files_load_cleanly_or_are_refused() -> None:
    from nbgraph.record import RunFileError

    documents = [
        json.loads(_fuzz_graph(semantics).run({"log": []}).to_json())
        for semantics in ("supersteps", "branches")
    ]
    rng = random.Random(13)
    outcomes = {"refused": 0, "loaded": 0}
    for attempt in range(300):
        text = json.dumps(mutated(rng.choice(documents), rng))
        try:
            run = Run.from_json(text)
        except RunFileError:
            outcomes["refused"] += 1
            continue
        works_everywhere(run, inspect=attempt % 25 == 0)
        outcomes["loaded"] += 1
    assert outcomes["refused"] > 50 and outcomes["loaded"] > 20, outcomes


def test_damaged_checkpoint_rows_read_cleanly_or_are_refused(tmp_path) -> None:
    import contextlib
    import shutil
    import sqlite3

    from nbgraph import SqliteSaver
    from nbgraph.checkpoint import CheckpointFileError

    base = tmp_path / "base.db"
    config = {"configurable": {"thread_id": "t"}}
    with SqliteSaver(base) as saver:
        _fuzz_graph(checkpointer=saver, interrupt_before=["d"]).invoke({"log": []}, config)
    with contextlib.closing(sqlite3.connect(base)) as conn:
        rows = [("checkpoints", column, seq, text) for column in ("payload", "snapshot")
                for seq, text in conn.execute(f"SELECT seq, {column} FROM checkpoints")
                if text is not None]  # fmt: skip
        rows += [("writes", "payload", rowid, text)
                 for rowid, text in conn.execute("SELECT rowid, payload FROM writes")]  # fmt: skip
    rng = random.Random(14)
    outcomes = {"refused": 0, "read": 0}
    for attempt in range(120):
        table, column, key, text = rng.choice(rows)
        # the graph description is a run file's "graph": the test above covers it
        damaged = mutated({"row": json.loads(text)}, rng, skip=("graph",)).get("row")
        path = tmp_path / f"{attempt}.db"
        shutil.copy(base, path)
        where = "seq" if table == "checkpoints" else "rowid"
        with contextlib.closing(sqlite3.connect(path)) as conn:
            update = f"UPDATE {table} SET {column} = ? WHERE {where} = ?"
            conn.execute(update, (json.dumps(damaged), key))
            conn.commit()
        with SqliteSaver(path) as saver:
            app = _fuzz_graph(checkpointer=saver, interrupt_before=["d"])
            try:
                app.get_state(config)
                list(app.get_state_history(config))
                run = Run.from_checkpointer(saver, "t")
            except CheckpointFileError:
                outcomes["refused"] += 1
                continue
            works_everywhere(run, inspect=attempt % 20 == 0)
            outcomes["read"] += 1
    assert outcomes["refused"] > 20 and outcomes["read"] > 10, outcomes
