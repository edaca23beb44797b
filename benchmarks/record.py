"""Run-record cost: memory kept per step, time to build `run.effects`, `state_at` at depth,
and `run.effects` and the inspector on long runs whose log grows every step.

Run: `.venv/bin/python benchmarks/record.py` (a few minutes; `--quick`: tiny sizes, one
round, a few seconds, what tests/e2e/test_benchmarks.py runs). Times are the best of several
runs (the machine is a noisy VM); memory is what `tracemalloc` still sees allocated once the
run is over and garbage is collected, with the `Run` alive. Each figure is printed next to
its baseline from the same process:

- memory: the final state on its own, rebuilt from scratch by a pickle round trip (so its
  ints are its own: `copy.deepcopy` would share them with the record and hide their cost);
- `run.effects`: the run itself (effects build time / run time);
- `state_at(k)`: a warm call against a cold one (a new `Run`, so its snapshots are rebuilt);
- (d) long runs: the run itself (its time, and the memory its record keeps, with the step
  objects a view makes from the record's columns: they are kept once made) against
  `run.effects` built on a fresh `Run` of it (time, memory kept, peak) and `run.inspect()`
  opened on a fresh `Run` (time, memory kept), at 1,000, 10,000 and 100,000 steps. The
  targets: effects of a 100,000-step run under 1 GB, the inspector open in under 3 s.
"""

import argparse
import gc
import pickle
import time
import tracemalloc
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from timing import best_seconds, call_seconds

from nbgraph import END, START, Run, StateGraph

MB = 1024 * 1024


def traced_bytes() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def retained(build: Callable[[], Any]) -> tuple[Any, int, int]:
    """What `build()` returns, the bytes it leaves allocated, and the peak while it ran."""
    tracemalloc.start()
    try:
        before = traced_bytes()
        tracemalloc.reset_peak()
        result = build()
        peak = tracemalloc.get_traced_memory()[1] - before
        return result, traced_bytes() - before, peak
    finally:
        tracemalloc.stop()


def state_bytes(values: dict[str, Any]) -> int:
    """Bytes of a state built from scratch (every object its own)."""
    data = pickle.dumps(values)
    copy, size, _ = retained(lambda: pickle.loads(data))
    assert copy == values
    return size


# --- the graphs --------------------------------------------------------------------------------


def self_loop(steps: int) -> Callable[[], Run]:
    """A `count` overwrite and a `log` that grows by one item per step."""

    class State(TypedDict):
        count: int
        log: Annotated[list, "append"]

    def tick(state: dict) -> dict:
        return {"count": state["count"] + 1, "log": [state["count"]]}

    app = (
        StateGraph(State)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["count"] >= steps else "tick")
        .compile()
    )
    config = {"recursion_limit": steps + 10}
    return lambda: app.run({"count": 0, "log": []}, config)


def ten_fields(steps: int, with_log: bool = True) -> Callable[[], Run]:
    """Ten fields, each written every step: 4 `add` counters, 3 overwrites, `max`, `merge`
    on a dict of a few keys, `append` (left out if not `with_log`: nine fields)."""

    class State(TypedDict):
        c0: Annotated[int, "add"]
        c1: Annotated[int, "add"]
        c2: Annotated[int, "add"]
        c3: Annotated[int, "add"]
        step: int
        label: str
        parity: str
        best: Annotated[int, "max"]
        tags: Annotated[dict, "merge"]
        log: Annotated[list, "append"]

    def tick(state: dict) -> dict:
        n = state["step"]
        update = {
            "c0": 1,
            "c1": 2,
            "c2": n % 3,
            "c3": -1,
            "step": n + 1,
            "label": f"step {n}",
            "parity": "even" if n % 2 == 0 else "odd",
            "best": n * 7 % 101,
            "tags": {f"k{n % 4}": n},
            "log": [n],
        }
        if not with_log:
            del update["log"]
        return update

    app = (
        StateGraph(State)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["step"] >= steps else "tick")
        .compile()
    )
    config = {"recursion_limit": steps + 10}
    return lambda: app.run({"step": 0}, config)


# --- the three reports -------------------------------------------------------------------------


def memory(steps: int) -> None:
    run_once = self_loop(steps)
    run_once()  # warm up: first-use caches are not the record's
    run, kept, peak = retained(run_once)
    assert run.status == "done" and run.last_step == steps
    state = state_bytes(run.log.final)
    record = kept - state
    print(
        f"  {steps:>7,} steps: record {record / MB:7.1f} MB = {record / steps:6.0f} B/step   "
        f"final state alone {state / MB:5.2f} MB   record/state {record / state:5.1f}x   "
        f"peak while running {peak / MB:7.1f} MB"
    )
    _, snapshots, _ = retained(lambda: run.state_at(steps // 2))
    print(
        f"  {'':>7}        + snapshots after the first state_at: {snapshots / MB:6.2f} MB "
        f"({run.timeline.snapshot_count} snapshots, {snapshots / state:4.1f}x the final state)"
    )


def effects(steps: int, repeat: int) -> Run:
    run_once = ten_fields(steps)
    run = run_once()
    run_time = best_seconds(run_once, repeat)
    log = run.log
    slow = max(2, repeat // 2)  # each build takes seconds: fewer repeats
    build_time = best_seconds(lambda: Run(log).effects, slow)
    rows = Run(log).effect_list
    frame_time = best_seconds(lambda: with_rows(log, rows).effects, repeat)
    frame = Run(log).effects
    assert len(frame) == steps * 10 + 1  # + step 0's input row
    print(
        f"  {steps:,} steps x 10 fields ({len(frame):,} rows): build {build_time * 1e3:7.1f} ms   "
        f"run {run_time * 1e3:7.1f} ms   effects/run {build_time / run_time:5.2f}x"
    )
    print(
        f"    of which the DataFrame from a ready effect_list {frame_time * 1e3:7.1f} ms "
        "(the rest is the replay that makes effect_list)"
    )
    nine_once = ten_fields(steps, with_log=False)
    nine = nine_once().log
    nine_run = best_seconds(nine_once, repeat)
    nine_build = best_seconds(lambda: Run(nine).effects, repeat)
    print(
        f"  the same without the append field (9 fields): build {nine_build * 1e3:7.1f} ms   "
        f"run {nine_run * 1e3:7.1f} ms   effects/run {nine_build / nine_run:5.2f}x"
    )
    fresh = Run(log)
    _, kept, peak = retained(lambda: fresh.effects)
    print(
        f"  memory kept by run.effects (DataFrame + effect_list): {kept / MB:7.1f} MB "
        f"({kept / len(frame):,.0f} B/row), peak while building {peak / MB:7.1f} MB"
    )
    for size in (steps // 4, steps // 2, steps):
        small = self_loop(size)()
        _, kept, _ = retained(lambda small=small: small.effects)
        print(
            f"    self-loop (count + append log) {size:>6,} steps: run.effects keeps "
            f"{kept / MB:7.1f} MB = {kept / size:8,.0f} B/step"
        )
    return run


def with_rows(log: Any, rows: list) -> Run:
    """A new `Run` whose `effect_list` is already built (so `effects` only makes the frame)."""
    run = Run(log)
    run.effect_list = rows  # fills the cached property
    return run


def state_at(run: Run, repeat: int) -> None:
    log = run.log
    warm = Run(log)
    warm.state_at(0)
    for k in (10, run.last_step // 2, run.last_step - 1):
        cold_time = best_seconds(lambda k=k: Run(log).state_at(k), repeat)
        warm_time = best_seconds(lambda k=k: warm.state_at(k), repeat)
        print(
            f"  state_at({k:>5}): cold {cold_time * 1e3:7.2f} ms   warm {warm_time * 1e3:7.3f} ms"
            f"   cold/warm {cold_time / warm_time:6.1f}x"
        )
    print(f"  ({warm.timeline.snapshot_count} snapshots for {run.last_step:,} steps)")


def long_runs(sizes: tuple[int, ...], repeat: int) -> None:
    """`run.effects` and the inspector on self-loops whose log grows by one item a step."""
    self_loop(10)().inspect()  # warm up: ipywidgets' import and first widgets are not the run's
    for steps in sizes:
        long_run(steps, repeat if steps <= 10_000 else 1)  # the big one takes seconds a call


def long_run(steps: int, rounds: int) -> None:
    """One line of (d): the run, then `run.effects` and the inspector on fresh `Run`s of it."""
    run_once = self_loop(steps)
    run, run_kept, _ = retained(run_once)
    # the step objects a view makes from the record's columns, kept with it once made: the
    # record as the views hold it, which the memory ratios below are against
    _, made_kept, _ = retained(lambda: list(run.log.steps))
    viewed = run_kept + made_kept
    run_time = best_seconds(run_once, rounds)
    log = run.log
    effects_time = best_seconds(lambda: Run(log).effects, rounds)
    fresh = Run(log)
    _, effects_kept, effects_peak = retained(lambda: fresh.effects)
    open_time = best_seconds(lambda: Run(log).inspect(), rounds)
    other = Run(log)
    inspector, open_kept, _ = retained(other.inspect)
    last_time = call_seconds(lambda: inspector.go(steps))
    print(
        f"  {steps:>7,} steps: run {run_time:6.2f} s, its record {run_kept / MB:6.1f} MB"
        f" ({viewed / MB:.1f} MB with its steps made)"
        f" | run.effects {effects_time:6.2f} s = {effects_time / run_time:5.2f}x run,"
        f" keeps {effects_kept / MB:6.1f} MB = {effects_kept / viewed:5.2f}x run"
        f" (peak {effects_peak / MB:6.1f} MB)"
        f" | inspector opens {open_time:6.3f} s = {open_time / run_time:5.3f}x run,"
        f" keeps {open_kept / MB:6.1f} MB = {open_kept / viewed:5.2f}x run"
        f" | its last step {last_time:6.2f} s"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    small, large = (200, 1_000) if args.quick else (10_000, 100_000)
    started = time.perf_counter()
    print("(a) memory kept by the record of a self-loop (target: well under 200 MB at 100,000):")
    memory(small)
    memory(large)
    print("(b) building run.effects (target: under 1 s at 10,000 steps x 10 fields):")
    run = effects(small, repeat)
    print(f"(c) state_at(k) on that {small:,}-step run:")
    state_at(run, repeat)
    print(
        "(d) run.effects and the inspector on a growing log, against the run itself "
        "(targets at 100,000 steps: effects under 1 GB, the inspector open in under 3 s):"
    )
    long_runs((100, 300, 1_000) if args.quick else (1_000, 10_000, 100_000), repeat)
    print(f"(all of it took {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
