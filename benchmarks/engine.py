"""Engine overhead: a 1,000-step self-loop, a 100-way fan-out with a waiting join, 1,000 Sends.

Run: `.venv/bin/python benchmarks/engine.py` (add `--langgraph` to time LangGraph on the same
graphs in the same process). Every figure is the best of several runs (the machine is a
noisy VM). The baseline for "overhead" is the same node and router functions called in a
plain Python loop, in this process, so the engine's own cost is `engine - baseline`; ratios
are printed next to it. Recording is always on in nbgraph (every run keeps its `RunLog`).
"""

import argparse
import gc
import operator
from collections.abc import Callable
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

from compare import fan_out_graph, fan_out_nodes, loop_graph, loop_nodes
from timing import best_seconds


def api_nbgraph() -> SimpleNamespace:
    import nbgraph

    return SimpleNamespace(
        StateGraph=nbgraph.StateGraph,
        START=nbgraph.START,
        END=nbgraph.END,
        Send=nbgraph.Send,
        append="append",
    )


def api_langgraph() -> SimpleNamespace:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    return SimpleNamespace(
        StateGraph=StateGraph, START=START, END=END, Send=Send, append=operator.add
    )


# --- the three graphs --------------------------------------------------------------------------


def self_loop(api: SimpleNamespace, steps: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
    app = loop_graph(api, steps)  # the graph `compare.py` times, built the same way
    tick, again = loop_nodes(api, steps)
    config = {"recursion_limit": steps + 10}

    def run() -> Any:
        result = app.invoke({"count": 0, "log": []}, config)
        assert result["count"] == steps and len(result["log"]) == steps
        return result

    def bare() -> None:
        state = {"count": 0, "log": []}
        while True:
            update = tick(state)
            state["count"] = update["count"]
            state["log"].extend(update["log"])
            if again(state) == api.END:
                break

    return run, bare


def fan_out(
    api: SimpleNamespace, width: int, max_concurrency: int | None = 1
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    app = fan_out_graph(api, width)
    workers, join = fan_out_nodes(width)

    def run() -> Any:
        config = {} if max_concurrency is None else {"max_concurrency": max_concurrency}
        result = app.invoke({"results": []}, config)
        assert result["total"] == width
        return result

    def bare() -> None:
        state = {"results": []}
        for fn in workers:
            state["results"].extend(fn(state)["results"])
        join(state)

    return run, bare


def sends(api: SimpleNamespace, count: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
    class State(TypedDict):
        items: list
        done: Annotated[list, api.append]

    def dispatch(state: dict) -> list:
        return [api.Send("work", {"item": item}) for item in state["items"]]

    def work(arg: dict) -> dict:
        return {"done": [arg["item"] * 2]}

    app = (
        api.StateGraph(State)
        .add_node("work", work)
        .add_conditional_edges(api.START, dispatch)
        .compile()
    )
    items = list(range(count))

    def run() -> Any:
        result = app.invoke({"items": items, "done": []}, {"max_concurrency": 1})
        assert len(result["done"]) == count
        return result

    def bare() -> None:
        done: list = []
        for send in dispatch({"items": items}):
            done.extend(work(send.arg)["done"])

    return run, bare


# --- report ------------------------------------------------------------------------------------


def measure(
    label: str, build: Callable, api: SimpleNamespace, size: int, unit: str, per: int, repeat: int
) -> float:
    run, bare = build(api, size)
    run()  # warm up
    engine = best_seconds(run, repeat)
    baseline = best_seconds(bare, repeat)
    overhead = (engine - baseline) / per * 1e6
    print(
        f"  {label:<34} {engine * 1e3:9.2f} ms   baseline {baseline * 1e3:7.2f} ms   "
        f"overhead {overhead:7.2f} µs/{unit}   engine/baseline {engine / baseline:6.1f}x"
    )
    return engine


def growth(api: SimpleNamespace, repeat: int) -> None:
    """Per-step cost at 1,000 and 8,000 steps: flat means no re-copying, no re-folding.

    Shown with the cyclic garbage collector on (what a notebook sees: the kept run record
    makes its full collections longer) and off (the engine's own cost).
    """
    short, _ = self_loop(api, 1000)
    long, _ = self_loop(api, 8000)
    short()
    for label, collector in (("gc on ", True), ("gc off", False)):
        if not collector:
            gc.disable()
        try:
            per_short = best_seconds(short, repeat) / 1000
            per_long = best_seconds(long, max(3, repeat // 3)) / 8000
        finally:
            gc.enable()
        print(
            f"  {label}: per step at 1,000 steps {per_short * 1e6:6.2f} µs, at 8,000 steps "
            f"{per_long * 1e6:6.2f} µs: ratio {per_long / per_short:4.2f} (1.0 = flat)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langgraph", action="store_true", help="also time LangGraph")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    apis = [("nbgraph", api_nbgraph())]
    if args.langgraph:
        apis.append(("langgraph", api_langgraph()))
    totals: dict[str, list[float]] = {}
    for name, api in apis:
        print(f"{name}:")
        totals[name] = [
            measure("self-loop, 1,000 steps", self_loop, api, 1000, "step", 1000, args.repeat),
            measure("fan-out 100 + waiting join", fan_out, api, 100, "task", 102, args.repeat),
            measure("1,000 Sends", sends, api, 1000, "task", 1001, args.repeat),
            measure(
                "fan-out 100, default thread pool",
                lambda api, width: fan_out(api, width, None),
                api,
                100,
                "task",
                102,
                args.repeat,
            ),
        ]
        growth(api, args.repeat)
    if "langgraph" in totals:
        print("langgraph / nbgraph time, same graphs, same process:")
        for label, ours, theirs in zip(
            ("self-loop", "fan-out", "sends", "fan-out, pool"),
            totals["nbgraph"],
            totals["langgraph"],
            strict=True,
        ):
            print(f"  {label:<10} {theirs / ours:5.1f}x")


if __name__ == "__main__":
    main()
