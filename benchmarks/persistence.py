"""Checkpoint storage and cost: bytes per step and time per step of a loop, with each saver.

Run: `.venv/bin/python benchmarks/persistence.py` (about 3 minutes; `--max-steps 10000`
skips the 100,000-step runs: about 50 s). The graph is a self-loop that appends one
short string (`"item-<n>"`) to a list per step, the loop LangGraph's in-memory saver stores
quadratically. Storage should grow linearly with the steps: bytes per step roughly constant.

- `MemorySaver`: the bytes still allocated after the run, with the graph and its run record
  dropped (`tracemalloc`), and the deep size of the saver's own containers. Tracing slows the
  run about 7x, so at 100,000 steps only the deep size is measured (the two agree below).
- `SqliteSaver`: the file on disk (plus any `-wal` file) after a WAL checkpoint; the JSON it
  holds is broken down too. Each step commits twice (the task's writes as the task finishes,
  then the step's checkpoint) with `synchronous=FULL`, so its time is mostly `fsync`.
- The same loop with reducers another process cannot call (a lambda, a function that
  extends the list in place) next to nbgraph's `"append"` and `operator.add`: a checkpoint
  keeps such a field's value after each step as what it added, so the SQLite JSON and the
  run file (`Run.save`) stay linear too (`--reducers` runs only this part: 2-4 minutes,
  mostly `Run.save` building the effects of the 10,000-step runs).
- LangGraph's `InMemorySaver` on the same loop (if `langgraph` is importable), measured the
  same way in the same process, at 1,000 and 4,000 steps.

`--durability sync|async|exit` runs every invoke in that mode (default: the engine's,
`"async"`, which writes SQLite checkpoints in batches, one commit each).

Times are the best of several runs (the machine is a noisy VM) at 1,000 steps, and single
runs at the larger sizes; "no saver" is the same graph compiled without a checkpointer.
"""

import argparse
import gc
import itertools
import operator
import os
import sqlite3
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

from timing import best_seconds


def api_nbgraph() -> SimpleNamespace:
    import nbgraph

    return SimpleNamespace(
        StateGraph=nbgraph.StateGraph,
        START=nbgraph.START,
        END=nbgraph.END,
        MemorySaver=nbgraph.MemorySaver,
        SqliteSaver=nbgraph.SqliteSaver,
        append="append",
    )


def api_langgraph() -> SimpleNamespace | None:
    try:
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.graph import END, START, StateGraph
    except ImportError:
        return None
    return SimpleNamespace(
        StateGraph=StateGraph,
        START=START,
        END=END,
        MemorySaver=InMemorySaver,
        append=operator.add,
    )


# --- the loop ----------------------------------------------------------------------------------


OPTIONS: dict[str, Any] = {}  # invoke's keyword arguments (`--durability`)


def loop_app(api: SimpleNamespace, steps: int, saver: Any) -> Callable[[str], Any]:
    """The loop compiled with `saver` (or none); returns a function running it on a thread."""

    class State(TypedDict):
        n: int
        log: Annotated[list, api.append]

    def tick(state: dict) -> dict:
        return {"n": state["n"] + 1, "log": [f"item-{state['n']}"]}

    def again(state: dict) -> str:
        return api.END if state["n"] >= steps else "tick"

    app = (
        api.StateGraph(State)
        .add_node("tick", tick)
        .add_edge(api.START, "tick")
        .add_conditional_edges("tick", again)
        .compile(checkpointer=saver)
    )

    def run(thread_id: str) -> None:
        config = {"configurable": {"thread_id": thread_id}, "recursion_limit": steps + 10}
        options = OPTIONS if saver is not None else {}
        result = app.invoke({"n": 0, "log": []}, config, **options)
        assert result["n"] == steps and len(result["log"]) == steps

    return run


def timed(run: Callable[[str], Any]) -> float:
    gc.collect()
    start = time.perf_counter()
    run("t")
    return time.perf_counter() - start


# --- sizes ---------------------------------------------------------------------------------------


def deep_size(root: Any) -> int:
    """Bytes of `root` and every container, key and value it holds (each object once)."""
    seen: set[int] = set()
    total, stack = 0, [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
    return total


def saver_deep_size(saver: Any) -> int:
    return sys.getsizeof(saver) + deep_size(vars(saver))


def retained(api: SimpleNamespace, steps: int, with_saver: bool) -> tuple[int, int]:
    """Bytes still allocated after a traced run with the graph dropped, and the saver's
    deep size (0 without a saver)."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        saver = api.MemorySaver() if with_saver else None
        run = loop_app(api, steps, saver)
        run("t")
        del run  # the compiled graph and the record of its last run
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    return kept, (0 if saver is None else saver_deep_size(saver))


def sqlite_file(api: SimpleNamespace, steps: int, folder: str) -> dict[str, float]:
    path = os.path.join(folder, f"loop-{steps}.sqlite")
    saver = api.SqliteSaver(path)
    seconds = timed(loop_app(api, steps, saver))
    saver.close()
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        payload, snapshots, snapshot_bytes = conn.execute(
            "SELECT SUM(LENGTH(payload)), COUNT(snapshot), COALESCE(SUM(LENGTH(snapshot)), 0) "
            "FROM checkpoints"
        ).fetchone()
        (writes,) = conn.execute("SELECT COALESCE(SUM(LENGTH(payload)), 0) FROM writes").fetchone()
    finally:
        conn.close()
    size = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
    return {
        "seconds": seconds,
        "bytes": size,
        "payload": payload,
        "snapshots": snapshots,
        "snapshot_bytes": snapshot_bytes,
        "writes": writes,
    }


# --- report ------------------------------------------------------------------------------------


def row(label: str, steps: int, size: float, seconds: float | None = None, note: str = "") -> None:
    time_text = "" if seconds is None else f"{seconds / steps * 1e6:9.1f} µs"
    print(
        f"  {label:<34} {steps:>8,} {size / 1e6:10.2f} MB {size / steps:10,.0f}  "
        f"{time_text:>12}  {note}"
    )


def header(title: str) -> None:
    print(title)
    print(f"  {'':<34} {'steps':>8} {'stored':>13} {'bytes/step':>10}  {'time/step':>12}")


def storage(api: SimpleNamespace, sizes: list[int], folder: str) -> dict[str, dict[int, float]]:
    """Bytes after one run: MemorySaver by tracemalloc (up to 10,000 steps) and deep size,
    SqliteSaver by file size. Also runs MemorySaver at 4,000 steps, to compare with LangGraph."""
    found: dict[str, dict[int, float]] = {"traced": {}, "memory": {}, "sqlite": {}}
    header("Storage after one run of the loop (bytes/step constant = linear):")
    control, _ = retained(api, 1000, with_saver=False)
    row("no saver: retained (noise floor)", 1000, control, None, f"({control:,} bytes)")
    for steps in sorted({*sizes, 4000}):
        saver = api.MemorySaver()
        run = loop_app(api, steps, saver)
        untraced = timed(run)
        del run
        gc.collect()
        deep = saver_deep_size(saver)
        del saver
        if steps <= 10_000:
            kept, _ = retained(api, steps, with_saver=True)
            found["traced"][steps] = kept
            row("MemorySaver, tracemalloc retained", steps, kept)
        found["memory"][steps] = deep
        row("MemorySaver, deep size of its data", steps, deep, untraced)
    for steps in sizes:
        stats = sqlite_file(api, steps, folder)
        found["sqlite"][steps] = stats["bytes"]
        row("SqliteSaver, file on disk", steps, stats["bytes"], stats["seconds"])
        content = stats["payload"] + stats["snapshot_bytes"] + stats["writes"]
        note = (
            f"(JSON {content / steps:,.0f} B/step: checkpoints {stats['payload'] / steps:,.0f}, "
            f"{stats['snapshots']} snapshots {stats['snapshot_bytes'] / steps:,.0f}, "
            f"task writes {stats['writes'] / steps:,.0f})"
        )
        print(f"  {'':<34} {note}")
    labels = {
        "traced": "MemorySaver, tracemalloc",
        "memory": "MemorySaver, deep size",
        "sqlite": "SqliteSaver, file",
    }
    for name, by_steps in found.items():
        first, last = min(by_steps), max(by_steps)
        ratio = (by_steps[last] / last) / (by_steps[first] / first)
        print(
            f"  {labels[name]:<26} bytes/step at {last:>7,} steps / at {first:,} = {ratio:.2f}"
            "  (1.0 = linear)"
        )
    return found


def times(api: SimpleNamespace, sizes: list[int], folder: str, repeat: int) -> None:
    print(f"Time per step, 1,000 steps, best of {repeat}, same graph, same process:")
    ids = itertools.count()

    def fresh(run: Callable[[str], Any]) -> Callable[[], Any]:
        return lambda: run(f"t{next(ids)}")  # a new thread each time: same work every run

    runs = {
        "no saver": loop_app(api, 1000, None),
        "MemorySaver": loop_app(api, 1000, api.MemorySaver()),
        "SqliteSaver (file)": loop_app(
            api, 1000, api.SqliteSaver(os.path.join(folder, "timing.sqlite"))
        ),
    }
    base = None
    for label, run in runs.items():
        run("warm-up")
        seconds = best_seconds(fresh(run), repeat) / 1000
        base = base or seconds
        print(f"  {label:<20} {seconds * 1e6:9.1f} µs/step   {seconds / base:6.1f}x no saver")
    line = ", ".join(f"{steps:,} {timed(loop_app(api, steps, None)) / steps * 1e6:.1f} µs"
                     for steps in sizes)  # fmt: skip
    print(f"  no saver, one run each:  {line}")


def _extend_in_place(old: list, new: list) -> list:
    old.extend(new)
    return old


FOREIGN = {
    'nbgraph "append"': "append",
    "operator.add": operator.add,
    "lambda a, b: a + b": lambda a, b: a + b,
    "own function, in place": _extend_in_place,
}


def foreign_reducers(sizes: list[int], folder: str) -> dict[str, dict[int, float]]:
    """SQLite JSON bytes and run-file bytes per step, per reducer of the growing field."""
    from nbgraph import Run

    print("Reducers another process cannot call (values kept as what each step added):")
    print(f"  {'reducer':<26} {'steps':>8} {'SQLite JSON B/step':>19} {'run file B/step':>16}")
    found: dict[str, dict[int, float]] = {}
    for label, reducer in FOREIGN.items():
        api = api_nbgraph()
        api.append = reducer
        for steps in sizes:
            saver = api.SqliteSaver(os.path.join(folder, f"{len(found)}-{steps}.sqlite"))
            runner = loop_app(api, steps, saver)
            runner("t")
            saver.close()
            stats = sqlite_file_content(saver.path)

            run_file = os.path.join(folder, f"{len(found)}-{steps}.json")
            Run.from_checkpointer(api.SqliteSaver(saver.path), "t").save(run_file)
            file_bytes = os.path.getsize(run_file)
            found.setdefault(f"{label} (sqlite)", {})[steps] = stats
            found.setdefault(f"{label} (file)", {})[steps] = file_bytes
            print(f"  {label:<26} {steps:>8,} {stats / steps:>19,.0f} {file_bytes / steps:>16,.0f}")
    for name, by_steps in found.items():
        first, last = min(by_steps), max(by_steps)
        ratio = (by_steps[last] / last) / (by_steps[first] / first)
        print(f"  {name:<40} bytes/step at {last:,} / at {first:,} = {ratio:.2f}  (1.0 = linear)")
    return found


def sqlite_file_content(path: str) -> int:
    """The bytes of JSON a SQLite checkpoint file holds (checkpoints, snapshots, writes)."""
    conn = sqlite3.connect(path)
    try:
        (checkpoints,) = conn.execute(
            "SELECT SUM(LENGTH(payload)) + COALESCE(SUM(LENGTH(snapshot)), 0) FROM checkpoints"
        ).fetchone()
        (writes,) = conn.execute("SELECT COALESCE(SUM(LENGTH(payload)), 0) FROM writes").fetchone()
    finally:
        conn.close()
    return checkpoints + writes


def langgraph_storage(ours: dict[int, float]) -> None:
    api = api_langgraph()
    if api is None:
        print("LangGraph: not importable here, not measured.")
        return
    header("LangGraph InMemorySaver, same loop, same process (tracemalloc retained):")
    found = {}
    for steps in (1000, 4000):
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            saver = api.MemorySaver()
            run = loop_app(api, steps, saver)
            start = time.perf_counter()
            run("t")
            seconds = time.perf_counter() - start
            del run
            gc.collect()
            found[steps] = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
        del saver
        row("langgraph InMemorySaver", steps, found[steps], seconds, "(time under tracemalloc)")
    growth = found[4000] / found[1000]
    print(f"  4x the steps -> {growth:.1f}x the bytes (4 = linear, 16 = quadratic)")
    if 4000 in ours:
        print(
            f"  at 4,000 steps: LangGraph {found[4000] / 1e6:.1f} MB, nbgraph MemorySaver "
            f"{ours[4000] / 1e6:.2f} MB ({found[4000] / ours[4000]:.0f}x less)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--max-steps", type=int, default=100_000, help="largest run (default 100,000)"
    )
    parser.add_argument(
        "--reducers", action="store_true", help="only the reducers-another-process-lacks part"
    )
    parser.add_argument("--durability", choices=["sync", "async", "exit"], default=None)
    args = parser.parse_args()
    if args.durability:
        OPTIONS["durability"] = args.durability
    if args.reducers:
        with tempfile.TemporaryDirectory() as folder:
            foreign_reducers([1000, 10_000], folder)
        return
    sizes = [s for s in (1000, 10_000, 100_000) if s <= args.max_steps]
    capped = [s for s in (1000, 10_000, 100_000) if s > args.max_steps]
    if capped:
        print(f"(capped at --max-steps {args.max_steps:,}: {capped} not run)")
    api = api_nbgraph()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        print(f"SQLite files in {folder}\n")
        times(api, sizes, folder, args.repeat)
        print()
        found = storage(api, sizes, folder)
        print()
        foreign_reducers([s for s in sizes if s <= 10_000], folder)
    print()
    langgraph_storage(found["traced"])
    print(f"\n(total {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
