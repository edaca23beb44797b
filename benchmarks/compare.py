"""nbgraph against LangGraph: the same workloads, built once, run on both in one process.

Run from the repo root: `.venv/bin/python -m benchmarks` (or `benchmarks/compare.py`);
`--quick` uses tiny sizes and one round (a few seconds, what the test runs); `--rounds K`
sets the rounds (default 5). The whole run takes several minutes.

Each workload is one function taking an "api" namespace (nbgraph's imports or LangGraph's)
and is built once per engine. Every round times one call on each engine, alternating which
goes first, after a garbage collection, in CPU time (`time.process_time`: every thread of
the process, not the time it waits for a core on a busy machine); the table shows the median
per step, per task or per checkpoint, the ratio of the medians, and the range of the
per-round ratios with their spread, `(max - min) / median`. The only difference between the
two builds is the reducer of an append-only list: nbgraph's registered `"append"` (extends
in place) against LangGraph's `operator.add` (copies the list every step), as in the other
benchmark scripts.

Memory is what `tracemalloc` still sees allocated after one more run, with the compiled graph
alive: for nbgraph the returned `Run` (its record, with the final state) plus its saver's new
checkpoints; for LangGraph its checkpointer's (it keeps no record without one). SQLite
savers are compared by the bytes on disk after one run on a fresh file. Both SQLite
connections run in WAL mode with `synchronous=NORMAL` (nbgraph's default; LangGraph's
connection is set to it, otherwise its every commit would also wait for the disk). The
checkpointed loops run with the same `durability=` on both engines: `DURABILITY`, `"async"`
(LangGraph's default and nbgraph's).

Fan-outs and Sends run with `max_concurrency=1` on both (one task at a time: the engine's
own cost, no thread pool on this 2-core machine). LangGraph's self-loop is quadratic (its
`operator.add` copies the list), so a size whose estimated run time (fitted on the smaller
sizes, a*n + b*n^2) is over `--lg-budget` seconds, or that is over `--lg-max-steps` steps
(default 10,000: at 100,000 it takes minutes a run), is skipped, with the estimate shown.
"""

import argparse
import gc
import importlib
import itertools
import operator
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Annotated, Any, TypedDict

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # imported as `benchmarks.compare` (python -m benchmarks, the test)
    sys.path.insert(0, _HERE)

from timing import best_seconds, call_seconds, call_times  # noqa: E402

MB = 1e6
DURABILITY = "async"  # the checkpointed loops' mode, on both engines (LangGraph's default)


# --- the two APIs ------------------------------------------------------------------------------


def api_nbgraph(package: ModuleType | None = None, name: str = "nbgraph") -> SimpleNamespace:
    """nbgraph's imports: of `import nbgraph`, or of `package`, another copy of it (an older
    tree imported under another name: `old_vs_new.py`), named `name` (its files' names)."""
    if package is None:
        import nbgraph as package
    nbgraph = package

    def sqlite_saver(path: str) -> tuple[Any, Callable[[], None]]:
        saver = nbgraph.SqliteSaver(path)
        return saver, saver.close

    return SimpleNamespace(
        name=name,
        package=nbgraph,
        StateGraph=nbgraph.StateGraph,
        START=nbgraph.START,
        END=nbgraph.END,
        Send=nbgraph.Send,
        MemorySaver=nbgraph.MemorySaver,
        sqlite_saver=sqlite_saver,
        add_messages=nbgraph.add_messages,
        append="append",
        records=True,
    )


def api_langgraph() -> SimpleNamespace | None:
    """LangGraph's imports, or None if it is not installed."""
    try:
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.graph import END, START, StateGraph
        from langgraph.graph.message import add_messages
        from langgraph.types import Send
    except ImportError:
        return None

    def sqlite_saver(path: str) -> tuple[Any, Callable[[], None]] | None:
        try:
            from langgraph.checkpoint.sqlite import SqliteSaver
        except ImportError:
            return None
        conn = sqlite3.connect(path, check_same_thread=False)
        conn.execute("PRAGMA synchronous=NORMAL")
        return SqliteSaver(conn), conn.close

    return SimpleNamespace(
        name="LangGraph",
        StateGraph=StateGraph,
        START=START,
        END=END,
        Send=Send,
        MemorySaver=InMemorySaver,
        sqlite_saver=sqlite_saver,
        add_messages=add_messages,
        append=operator.add,
        records=False,
    )


# --- the workloads: each graph written once, for either API ---------------------------------------

_threads = itertools.count()


def nothing() -> None:
    """The `close` of a case that holds nothing open."""


def thread_config(limit: int) -> dict[str, Any]:
    """A config on a new thread (every run of a checkpointed graph does the same work)."""
    return {"configurable": {"thread_id": f"t{next(_threads)}"}, "recursion_limit": limit}


def loop_nodes(api: SimpleNamespace, steps: int) -> tuple[Callable, Callable]:
    """The self-loop's node and router (also what `engine.py`'s plain-Python baseline calls)."""

    def tick(state: dict) -> dict:
        return {"count": state["count"] + 1, "log": [state["count"]]}

    def again(state: dict) -> str:
        return api.END if state["count"] >= steps else "tick"

    return tick, again


def loop_graph(api: SimpleNamespace, steps: int, checkpointer: Any = None) -> Any:
    """A self-loop of `steps` steps: `count` overwritten, `log` grows by one item a step."""

    class State(TypedDict):
        count: int
        log: Annotated[list, api.append]

    tick, again = loop_nodes(api, steps)

    return (
        api.StateGraph(State)
        .add_node("tick", tick)
        .add_edge(api.START, "tick")
        .add_conditional_edges("tick", again)
        .compile(checkpointer=checkpointer)
    )


def fan_out_nodes(width: int) -> tuple[list[Callable], Callable]:
    """The fan-out's workers and join (also what `engine.py`'s baseline calls)."""

    def worker(i: int) -> Callable[[dict], dict]:
        return lambda state: {"results": [i]}

    def join(state: dict) -> dict:
        return {"total": len(state["results"])}

    return [worker(i) for i in range(width)], join


def fan_out_graph(api: SimpleNamespace, width: int) -> Any:
    """`fan` fans out to `width` workers; `join` waits for all of them."""

    class State(TypedDict):
        results: Annotated[list, api.append]
        total: int

    workers, join = fan_out_nodes(width)
    names = [f"w{i:04d}" for i in range(width)]
    graph = api.StateGraph(State).add_node("fan", lambda state: None).add_node("join", join)
    graph.add_edge(api.START, "fan")
    for worker, name in zip(workers, names, strict=True):
        graph.add_node(name, worker)
        graph.add_edge("fan", name)
    graph.add_edge(names, "join")
    graph.add_edge("join", api.END)
    return graph.compile()


def map_reduce_graph(api: SimpleNamespace) -> Any:
    """One `Send` to `work` per item, then `reduce` once over every result."""

    class State(TypedDict):
        items: list
        done: Annotated[list, api.append]
        total: int

    def dispatch(state: dict) -> list:
        return [api.Send("work", {"item": item}) for item in state["items"]]

    def work(arg: dict) -> dict:
        return {"done": [arg["item"] * 2]}

    def reduce(state: dict) -> dict:
        return {"total": sum(state["done"])}

    return (
        api.StateGraph(State)
        .add_node("work", work)
        .add_node("reduce", reduce)
        .add_conditional_edges(api.START, dispatch)
        .add_edge("work", "reduce")
        .add_edge("reduce", api.END)
        .compile()
    )


AGENT_TOOLS = 18  # + `agent` + `final`: 20 nodes


def agent_graph(api: SimpleNamespace, rounds: int, langchain: bool = False) -> Any:
    """An agent loop: `agent` routes to one of 18 tools, each answers with a message and
    hands back to `agent`; after `rounds` rounds `agent` routes to `final`. With
    `langchain`, the nodes return langchain_core's `AIMessage`/`HumanMessage` objects."""
    if langchain:
        from langchain_core.messages import AIMessage, HumanMessage

        def said(role: str, content: str) -> Any:
            return (AIMessage if role == "assistant" else HumanMessage)(content)
    else:

        def said(role: str, content: str) -> Any:
            return {"role": role, "content": content}

    class State(TypedDict):
        messages: Annotated[list, api.add_messages]
        round: int

    def agent(state: dict) -> dict:
        n = state["round"]
        call = said("assistant", f"round {n}: calling tool {n % AGENT_TOOLS}")
        return {"messages": [call], "round": n + 1}

    def tool(i: int) -> Callable[[dict], dict]:
        def run_tool(state: dict) -> dict:
            asked = state["messages"][-1].content
            return {"messages": [said("user", f"tool {i} saw {asked!r}")]}

        return run_tool

    def route(state: dict) -> str:
        n = state["round"]
        return "final" if n > rounds else f"tool_{(n - 1) % AGENT_TOOLS:02d}"

    def final(state: dict) -> dict:
        return {"messages": [{"role": "assistant", "content": f"{len(state['messages'])}"}]}

    graph = api.StateGraph(State).add_node("agent", agent).add_node("final", final)
    graph.add_edge(api.START, "agent")
    graph.add_conditional_edges("agent", route)
    for i in range(AGENT_TOOLS):
        graph.add_node(f"tool_{i:02d}", tool(i))
        graph.add_edge(f"tool_{i:02d}", "agent")
    graph.add_edge("final", api.END)
    return graph.compile()


# --- cases: a built workload, ready to time -------------------------------------------------------


@dataclass
class Case:
    """One workload built on one engine."""

    call: Callable[[], Any]  # one timed call
    units: int  # steps, tasks or checkpoints in one call
    keep: Callable[[], Any] | None = None  # one more run; returns what the caller keeps
    disk: Callable[[], int] | None = None  # bytes on disk after one run on a fresh file
    close: Callable[[], None] = nothing


def run_case(
    api: SimpleNamespace,
    app: Any,
    args: Callable[[], tuple[Any, dict]],
    check: Callable,
    **options: Any,
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """`call` (invoke, checked) and `keep` (nbgraph: `app.run`, the Run kept; LangGraph:
    invoke, nothing kept but its checkpointer's data); `options` go to `invoke` (both
    engines: `durability=`)."""

    def call() -> Any:
        check(app.invoke(*args(), **options))

    def keep() -> Any:
        if api.records:
            run = app.run(*args())
            assert run.status == "done", run.error
            check(run.output)
            return run
        check(app.invoke(*args(), **options))
        return None

    return call, keep


def loop_case(
    api: SimpleNamespace, steps: int, saver: str = "", folder: str = "", durability: str = ""
) -> Case:
    """The self-loop; with a saver, run with the same `durability` on both engines (their
    default, "async", if empty)."""

    def check(out: dict) -> None:
        assert out["count"] == steps and len(out["log"]) == steps

    close: Callable[[], None] = nothing
    if saver == "memory":
        app = loop_graph(api, steps, api.MemorySaver())
    elif saver == "sqlite":
        made = api.sqlite_saver(os.path.join(folder, f"{api.name}-{steps}-timing.sqlite"))
        if made is None:
            raise ModuleNotFoundError("langgraph-checkpoint-sqlite is not installed")
        app = loop_graph(api, steps, made[0])
        close = made[1]
    else:
        app = loop_graph(api, steps)

    def args() -> tuple[Any, dict]:
        return {"count": 0, "log": []}, thread_config(steps + 10)

    options = {"durability": durability} if durability else {}
    call, keep = run_case(api, app, args, check, **options)
    case = Case(call, steps, keep=None if saver == "sqlite" else keep, close=close)
    if saver == "sqlite":
        case.disk = lambda: sqlite_disk(api, steps, folder)
    return case


def sqlite_disk(api: SimpleNamespace, steps: int, folder: str) -> int:
    path = os.path.join(folder, f"{api.name}-{steps}-disk.sqlite")
    saver, close = api.sqlite_saver(path)
    try:
        loop_graph(api, steps, saver).invoke({"count": 0, "log": []}, thread_config(steps + 10))
    finally:
        close()
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def fan_out_case(api: SimpleNamespace, width: int) -> Case:
    app = fan_out_graph(api, width)

    def check(out: dict) -> None:
        assert out["total"] == width

    call, keep = run_case(api, app, lambda: ({"results": []}, {"max_concurrency": 1}), check)
    return Case(call, width + 2, keep=keep)


def subgraph_graph(api: SimpleNamespace, calls: int) -> Any:
    """A parent self-loop whose one node is a compiled two-node subgraph, run `calls` times:
    the subgraph shares the parent's keys; `first` writes a note, `second` adds 1 to `count`.
    (No list key: a subgraph returns its whole state, which an appending parent would double.)
    """

    class State(TypedDict):
        count: int
        note: str

    sub = (
        api.StateGraph(State)
        .add_node("first", lambda state: {"note": f"call {state['count']}"})
        .add_node("second", lambda state: {"count": state["count"] + 1})
        .add_edge(api.START, "first")
        .add_edge("first", "second")
        .compile()
    )

    def again(state: dict) -> str:
        return api.END if state["count"] >= calls else "sub"

    return (
        api.StateGraph(State)
        .add_node("sub", sub)
        .add_edge(api.START, "sub")
        .add_conditional_edges("sub", again)
        .compile()
    )


def subgraph_case(api: SimpleNamespace, calls: int) -> Case:
    app = subgraph_graph(api, calls)

    def check(out: dict) -> None:
        assert out["count"] == calls, out["count"]

    def args() -> tuple[Any, dict]:
        return {"count": 0, "note": ""}, thread_config(calls + 10)

    call, keep = run_case(api, app, args, check)
    return Case(call, calls, keep=keep)


def sends_case(api: SimpleNamespace, count: int) -> Case:
    app = map_reduce_graph(api)
    items = list(range(count))

    def check(out: dict) -> None:
        assert len(out["done"]) == count and out["total"] == count * (count - 1)

    def args() -> tuple[Any, dict]:
        return {"items": items, "done": []}, {"max_concurrency": 1}

    call, keep = run_case(api, app, args, check)
    return Case(call, count + 1, keep=keep)


def agent_case(api: SimpleNamespace, rounds: int, langchain: bool = False) -> Case:
    """The agent loop. nbgraph makes langchain's message classes with `langchain` (as
    LangGraph always does), else its own `Message` (`use_message_kind`)."""
    app = agent_graph(api, rounds, langchain)
    first: Any = ("user", "go")
    if langchain:
        from langchain_core.messages import HumanMessage

        first = HumanMessage("go")

    def check(out: dict) -> None:
        assert out["round"] == rounds + 1 and len(out["messages"]) == 2 * rounds + 3

    def args() -> tuple[Any, dict]:
        return {"messages": [first], "round": 0}, {"recursion_limit": 2 * rounds + 10}

    call, keep = run_case(api, app, args, check)
    if api.records:  # nbgraph: the message kind this case measures, set around each run
        messages = importlib.import_module(f"{api.package.__name__}.messages")
        use_message_kind = messages.use_message_kind

        def kind_of_case(fn: Callable[[], Any]) -> Callable[[], Any]:
            def run() -> Any:
                previous = use_message_kind("langchain" if langchain else "nbgraph")
                try:
                    return fn()
                finally:
                    use_message_kind(previous)

            return run

        call, keep = kind_of_case(call), kind_of_case(keep)
    return Case(call, 2 * rounds + 2, keep=keep)  # supersteps: agent+tool per round, agent, final


def history_case(api: SimpleNamespace, steps: int, saver: str, folder: str) -> Case:
    close: Callable[[], None] = nothing
    if saver == "memory":
        checkpointer = api.MemorySaver()
    else:
        made = api.sqlite_saver(os.path.join(folder, f"{api.name}-{steps}-history.sqlite"))
        if made is None:
            raise ModuleNotFoundError("langgraph-checkpoint-sqlite is not installed")
        checkpointer, close = made
    app = loop_graph(api, steps, checkpointer)
    config = thread_config(steps + 10)
    app.invoke({"count": 0, "log": []}, config)
    count = len(list(app.get_state_history(config)))
    assert count >= steps

    def call() -> None:
        history = list(app.get_state_history(config))
        assert len(history) == count and history[0].values["count"] == steps

    return Case(call, count, close=close)


# --- measuring ----------------------------------------------------------------------------------


def retained(fn: Callable[[], Any]) -> int:
    """Bytes allocated by `fn()` and still allocated after it (what it returns kept alive)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = fn()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del kept
    return after - before


def warm_retained(case: Case) -> int:
    """`retained` by one run of `case`, after a first run (first-use caches left out)."""
    case.call()
    return retained(case.keep)


@dataclass
class Row:
    label: str
    unit: str
    times: dict[str, float] = field(default_factory=dict)  # engine -> median s per unit
    run_seconds: dict[str, float] = field(default_factory=dict)  # engine -> median s per run
    memory: dict[str, str] = field(default_factory=dict)  # engine -> text
    memory_bytes: dict[str, float] = field(default_factory=dict)
    note: dict[str, str] = field(default_factory=dict)  # engine -> why not measured
    ratio: float | None = None
    round_ratios: list[float] = field(default_factory=list)  # LangGraph/nbgraph each round
    target: str = ""
    met: bool | None = None
    shortfall: str = ""

    def set_target(self, text: str, value: float | None, goal: float, above: bool = True) -> None:
        """`value` against `goal`: met if at least it (`above`) or at most it."""
        self.target = text
        if value is None:
            return
        self.met = value >= goal if above else value <= goal
        if not self.met:
            self.shortfall = f"{value:.2f} vs {goal:g}"


def compare(
    label: str,
    unit: str,
    build: Callable[[SimpleNamespace], Case],
    apis: list[SimpleNamespace],
    rounds: int,
    memory: str = "",
    skip: dict[str, str] | None = None,
) -> Row:
    """Time `build(api)` on every API, alternating, `rounds` rounds; median per unit."""
    row = Row(label, unit)
    cases: dict[str, Case] = {}
    for api in apis:
        if skip and api.name in skip:
            row.note[api.name] = skip[api.name]
            continue
        try:
            cases[api.name] = build(api)
        except ModuleNotFoundError as error:
            row.note[api.name] = f"skipped ({error})"
            continue
        cases[api.name].call()  # warm-up: first-use caches are not the workload's
    try:
        names = list(cases)
        per_run: dict[str, list[float]] = {name: [] for name in names}
        for i in range(rounds):
            for name in names if i % 2 == 0 else reversed(names):
                per_run[name].append(call_times(cases[name].call)[1])  # CPU seconds
        for name in names:
            row.run_seconds[name] = statistics.median(per_run[name])
            row.times[name] = row.run_seconds[name] / cases[name].units
            case = cases[name]
            if memory and case.keep is not None and (memory == "saver" or name == "nbgraph"):
                size = retained(case.keep)
                row.memory_bytes[name] = size
                row.memory[name] = f"{size / MB:.2f} MB ({size / case.units:,.0f} B/{unit})"
            elif memory == "record":
                row.memory[name] = "n/a (keeps no record)"
            elif case.disk is not None:
                size = case.disk()
                row.memory_bytes[name] = size
                row.memory[name] = f"disk {size / MB:.2f} MB ({size / case.units:,.0f} B/{unit})"
    finally:
        for case in cases.values():
            case.close()
    if "nbgraph" in row.times and "LangGraph" in row.times:
        row.ratio = row.times["LangGraph"] / row.times["nbgraph"]
        pairs = zip(per_run["LangGraph"], per_run["nbgraph"], strict=True)
        row.round_ratios = [theirs / ours for theirs, ours in pairs]
    print(f"  done: {label}", file=sys.stderr, flush=True)
    return row


def estimate(points: dict[int, float], size: int) -> float:
    """Seconds for one run at `size`, fitted as a*n + b*n^2 on the measured sizes (or, with
    one point, scaled quadratically: an upper bound)."""
    sizes = sorted(points)
    if len(sizes) == 1:
        return points[sizes[0]] * (size / sizes[0]) ** 2
    n1, n2 = sizes[-2], sizes[-1]
    t1, t2 = points[n1], points[n2]
    b = max((t2 / n2 - t1 / n1) / (n2 - n1), 0.0)
    a = max(t2 / n2 - b * n2, 0.0)
    return a * size + b * size * size


def growth_without_gc(small: int, large: int, rounds: int) -> Row:
    """nbgraph's per-step cost at `large` over that at `small`, the cyclic collector off: the
    engine's own growth (with it on, each full collection also walks the growing record)."""
    api = api_nbgraph()
    cases = {steps: loop_case(api, steps) for steps in (small, large)}
    per_step: dict[int, list[float]] = {small: [], large: []}
    gc.collect()
    gc.disable()
    try:
        for case in cases.values():
            case.call()
        for _ in range(rounds):
            for steps, case in cases.items():
                per_step[steps].append(call_times(case.call)[1] / steps)
    finally:
        gc.enable()
    low, high = statistics.median(per_step[small]), statistics.median(per_step[large])
    row = Row(f"nbgraph only: self-loop per step, gc off, {small:,} vs {large:,} steps", "step")
    row.memory["nbgraph"] = (
        f"{low * 1e6:.1f} vs {high * 1e6:.1f} µs/step: {high / low:.2f}× (gc on: see above)"
    )
    return row


def overhead_row(steps: int, rounds: int) -> Row:
    """nbgraph's self-loop against the plain-Python floor (`engine.py`'s: the same node and
    router functions called in a `while` loop), alternating rounds, CPU time."""
    from engine import api_nbgraph as engine_api
    from engine import self_loop

    run, bare = self_loop(engine_api(), steps)
    run(), bare()
    ratios = []
    for i in range(max(rounds, 3)):
        pair = (run, bare) if i % 2 == 0 else (bare, run)
        seconds = {fn: min(call_times(fn)[1] for _ in range(3)) for fn in pair}
        ratios.append(seconds[run] / seconds[bare])
    row = Row(f"nbgraph only: engine ÷ plain-Python floor, self-loop {steps:,} steps", "step")
    middle = statistics.median(ratios)
    row.memory["nbgraph"] = f"{middle:.1f}×; per round {spread(ratios)}"
    row.set_target("≤20×", middle, 20, False)
    return row


# --- nbgraph only: the record ---------------------------------------------------------------------


def record_rows(steps: int, rounds: int) -> list[Row]:
    """`run.effects`, `run.state_at` at random steps, the inspector's step change."""
    from nbgraph import Run
    from nbgraph.views.drawings import render

    api = api_nbgraph()
    app = loop_graph(api, steps)
    run = app.run({"count": 0, "log": []}, {"recursion_limit": steps + 10})
    assert run.status == "done"
    log = run.log
    rows = []
    rng = random.Random(8)
    repeat = max(rounds, 1)

    row = Row(f"nbgraph only: `run.effects` built, loop {steps:,}", "run")
    effects = best_seconds(lambda: Run(log).effects, repeat)
    rows.append(row)
    row.memory["nbgraph"] = f"{effects * 1e3:.1f} ms ({len(Run(log).effects):,} rows)"

    picks = [rng.randrange(1, steps) for _ in range(5)]
    cold = statistics.median(call_seconds(lambda k=k: Run(log).state_at(k)) for k in picks)
    warm_run = Run(log)
    warm_run.state_at(0)
    warm = statistics.median(call_seconds(lambda k=k: warm_run.state_at(k)) for k in picks)
    row = Row(f"nbgraph only: `run.state_at(random step)`, loop {steps:,}", "call")
    row.memory["nbgraph"] = f"new Run {cold * 1e3:.2f} ms, then {warm * 1e3:.3f} ms"
    rows.append(row)

    started = time.perf_counter()
    inspector = run.inspect()
    opened = time.perf_counter() - started
    render.clear_cache()
    fresh = []
    for k in picks:
        started = time.perf_counter()
        inspector.go(k)
        fresh.append(time.perf_counter() - started)
    again = []
    for k in picks:
        started = time.perf_counter()
        inspector.go(k)
        again.append(time.perf_counter() - started)
    row = Row(f"nbgraph only: inspector step change, loop {steps:,}", "change")
    row.memory["nbgraph"] = (
        f"median {statistics.median(fresh) * 1e3:.1f} ms (worst {max(fresh) * 1e3:.1f}), "
        f"cached {statistics.median(again) * 1e3:.1f} ms; opened in {opened * 1e3:.0f} ms"
    )
    rows.append(row)
    return rows


# --- the table ----------------------------------------------------------------------------------


def duration(seconds: float, unit: str) -> str:
    micro = seconds * 1e6
    text = f"{micro:,.1f} µs" if micro < 10_000 else f"{micro / 1e3:,.1f} ms"
    return f"{text}/{unit}"


def spread(ratios: list[float]) -> str:
    """The per-round ratios' range and their spread, `(max - min) / median` (what `--check`
    takes as the row's noise): "21.0–27.9× (spread 28%)"; "—" without two rounds."""
    if len(ratios) < 2:
        return "—"
    low, high = min(ratios), max(ratios)
    width = (high - low) / statistics.median(ratios)
    return f"{low:.1f}–{high:.1f}× (spread {width:.0%})"


def table(rows: list[Row]) -> str:
    header = [
        "workload",
        "nbgraph median",
        "LangGraph median",
        "LangGraph/nbgraph",
        "per-round ratios",
        "nbgraph retained (record + saver)",
        "LangGraph retained (checkpointer)",
        "target",
        "met?",
    ]
    lines = [header, ["---"] * len(header)]
    for row in rows:
        cells = [row.label]
        for name in ("nbgraph", "LangGraph"):
            if name in row.times:
                cells.append(duration(row.times[name], row.unit))
            else:
                cells.append(row.note.get(name, "—"))
        if row.ratio is None:
            cells.append("—")
        else:
            cells.append(f"{row.ratio:.1f}×" if row.ratio >= 1 else f"{row.ratio:.2f}×")
        cells.append(spread(row.round_ratios))
        for name in ("nbgraph", "LangGraph"):
            cells.append(row.memory.get(name, "—"))
        cells.append(row.target or "")
        if row.met is None:
            cells.append("" if not row.target else "not measured")
        else:
            cells.append("met" if row.met else f"NOT met ({row.shortfall})")
        lines.append(cells)
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


# --- main ---------------------------------------------------------------------------------------


@dataclass
class Sizes:
    loops: tuple[int, ...] = (1000, 10_000, 100_000)
    saver: int = 1000
    fan_outs: tuple[int, ...] = (100, 1000)
    sends: tuple[int, ...] = (1000, 10_000)
    agent_rounds: int = 200
    subgraph_calls: int = 1000
    history: int = 1000
    versus: int = 4000  # retained bytes against LangGraph's MemorySaver
    record: int = 10_000  # effects, state_at, inspector


QUICK = Sizes(
    loops=(20, 50, 100),
    saver=20,
    fan_outs=(5, 10),
    sends=(10, 30),
    agent_rounds=5,
    subgraph_calls=5,
    history=20,
    versus=40,
    record=50,
)


def main(argv: list[str] | None = None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 5; quick 1)")
    parser.add_argument(
        "--lg-budget",
        type=float,
        default=60.0,
        help="skip a LangGraph loop estimated to take longer than this many seconds a run",
    )
    parser.add_argument(
        "--lg-max-steps",
        type=int,
        default=10_000,
        help="the longest LangGraph self-loop run (longer ones: an estimate only)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="compare the ratios with the table in benchmarks/README.md; exit 1 if a row "
        "regressed by more than the noise (benchmarks/check.py)",
    )
    parser.add_argument(
        "--readme", default=None, help="the README whose table --check reads (default: ours)"
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else Sizes()
    rounds = args.rounds or (1 if args.quick else 5)
    apis = [api_nbgraph()]
    langgraph = api_langgraph()
    if langgraph is not None:
        apis.append(langgraph)
    started = time.perf_counter()
    rows: list[Row] = []

    with tempfile.TemporaryDirectory() as folder:
        # 1. the self-loop; LangGraph skipped where its estimate is over budget
        measured: dict[int, float] = {}
        loops: dict[int, Row] = {}
        for steps in sizes.loops:
            skip = {}
            guess = estimate(measured, steps) if measured else 0.0
            if steps > args.lg_max_steps or guess > args.lg_budget:
                basis = " and ".join(f"{n:,}" for n in sorted(measured))
                skip["LangGraph"] = (
                    f"skipped (too slow: est. {guess:,.0f} s a run, fitted on {basis} steps)"
                )
            row = compare(
                f"self-loop, {steps:,} steps",
                "step",
                lambda api, steps=steps: loop_case(api, steps),
                apis,
                rounds,
                memory="record",
                skip=skip,
            )
            if "LangGraph" in row.run_seconds:
                measured[steps] = row.run_seconds["LangGraph"]
            loops[steps] = row
            rows.append(row)
        first, last = loops[sizes.loops[0]], loops[sizes.loops[-1]]
        first.set_target("≥25×", first.ratio, 25)  # (issue 20; ≥10× before)
        growth = last.times["nbgraph"] / first.times["nbgraph"]
        last.set_target(f"per step ≤1.3× the {sizes.loops[0]:,}-step one", growth, 1.3, False)
        last.target += f" (it is {growth:.2f}×)"

        # 2. checkpointed loops
        row = compare(
            f"self-loop + MemorySaver, {sizes.saver:,} steps",
            "step",
            lambda api: loop_case(api, sizes.saver, "memory", durability=DURABILITY),
            apis,
            rounds,
            memory="saver",
        )
        row.set_target("≥15×", row.ratio, 15)
        rows.append(row)
        row = compare(
            f"self-loop + SqliteSaver (file), {sizes.saver:,} steps",
            "step",
            lambda api: loop_case(api, sizes.saver, "sqlite", folder, DURABILITY),
            apis,
            rounds,
            memory="disk",
        )
        row.set_target("≥8×", row.ratio, 8)
        rows.append(row)

        # 3. fan-out into a waiting join; 4. Sends into a map-reduce
        for width in sizes.fan_outs:
            row = compare(
                f"fan-out {width:,} + waiting join",
                "task",
                lambda api, width=width: fan_out_case(api, width),
                apis,
                rounds,
                memory="record",
            )
            row.set_target("≥5×", row.ratio, 5)
            rows.append(row)
        for count in sizes.sends:
            row = compare(
                f"{count:,} Sends + reduce",
                "task",
                lambda api, count=count: sends_case(api, count),
                apis,
                rounds,
                memory="record",
            )
            row.set_target("≥5×", row.ratio, 5)
            rows.append(row)

        # 5. agent loop with messages; 6. history
        rows.append(
            compare(
                f"agent, 20 nodes, add_messages, {sizes.agent_rounds} rounds",
                "step",
                lambda api: agent_case(api, sizes.agent_rounds),
                apis,
                rounds,
                memory="record",
            )
        )
        rows[-1].set_target("≥8×", rows[-1].ratio, 8)
        row = compare(
            f"agent, 20 nodes, add_messages, langchain messages, {sizes.agent_rounds} rounds",
            "step",
            lambda api: agent_case(api, sizes.agent_rounds, langchain=True),
            apis,
            rounds,
            memory="record",
        )
        row.set_target("≥8×", row.ratio, 8)
        rows.append(row)
        row = compare(
            f"subgraph as a node, two nodes, {sizes.subgraph_calls:,} calls",
            "call",
            lambda api: subgraph_case(api, sizes.subgraph_calls),
            apis,
            rounds,
            memory="record",
        )
        row.set_target("≥10×", row.ratio, 10)
        rows.append(row)
        for saver in ("memory", "sqlite"):
            row = compare(
                f"get_state_history, {sizes.history:,}-step thread, {saver} saver",
                "checkpoint",
                lambda api, saver=saver: history_case(api, sizes.history, saver, folder),
                apis,
                rounds,
            )
            row.set_target("≥5×", row.ratio, 5)
            rows.append(row)

    # nbgraph only: the loop's growth without the collector; retained bytes per step
    rows.append(overhead_row(sizes.loops[0], rounds))
    rows.append(growth_without_gc(sizes.loops[0], sizes.loops[-1], rounds))
    for steps in sizes.loops:
        row = Row(f"nbgraph only: record retained per step, loop {steps:,}", "step")
        size = loops[steps].memory_bytes["nbgraph"]
        row.memory["nbgraph"] = f"{size / steps:,.0f} B/step"
        rows.append(row)
    per_step = {n: loops[n].memory_bytes["nbgraph"] / n for n in sizes.loops}
    flat = per_step[sizes.loops[-1]] / per_step[sizes.loops[0]]
    rows[-1].set_target(f"flat: ≤1.3× the {sizes.loops[0]:,}-step B/step", flat, 1.3, False)
    rows[-1].target += f" (it is {flat:.2f}×)"
    versus = Row(f"retained memory, loop {sizes.versus:,}: nbgraph record vs LG MemorySaver", "")
    record = warm_retained(loop_case(apis[0], sizes.versus))
    versus.memory["nbgraph"] = f"{record / MB:.2f} MB ({record / sizes.versus:,.0f} B/step)"
    with_saver = warm_retained(loop_case(apis[0], sizes.versus, "memory"))
    versus.memory["nbgraph"] += f"; with its MemorySaver {with_saver / MB:.2f} MB"
    if langgraph is not None:
        theirs = warm_retained(loop_case(langgraph, sizes.versus, "memory"))
        versus.memory["LangGraph"] = f"{theirs / MB:.2f} MB ({theirs / sizes.versus:,.0f} B/step)"
        versus.ratio = theirs / record
    else:
        versus.note["LangGraph"] = "skipped (langgraph not importable)"
    versus.set_target("nbgraph ≤1/10 (ratio ≥10×)", versus.ratio, 10)
    rows.append(versus)
    rows.extend(record_rows(sizes.record, rounds))

    print(
        f"nbgraph vs LangGraph, {rounds} alternating round(s), median CPU time "
        f"(`time.process_time`); {platform.python_version()}, "
        f"{os.cpu_count()} cores; {time.perf_counter() - started:.0f} s in all\n"
    )
    print(table(rows))
    if args.check:
        from check import README, report

        text, code = report(rows, Path(args.readme or README).read_text(encoding="utf-8"))
        print("\n" + text)
        raise SystemExit(code)
    return rows


if __name__ == "__main__":
    main()
