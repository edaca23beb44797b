"""Live inspection's cost: `app.run(input, live=True)` against `app.run(input)` on the same
graph, in one process (medians of alternating rounds; this machine is a noisy VM).

Run: `.venv/bin/python benchmarks/live.py [--rounds N]`. Two self-loops: nodes that return at
once (the engine's own speed, the worst case for redraw overhead) and nodes that take 1 ms (a
cheap real node); against a plain run, and against a plain run followed by `run.inspect()`
(what a person does without `live`). "during the run" leaves out the last redraw, when the run
ends (about what `run.inspect()` costs after a plain run). The live widget is made and updated
as in a notebook; only the front-end is missing (no kernel: `display` shows nothing).
"""

import argparse
import statistics
import time
from typing import TypedDict

import IPython.display
from timing import call_seconds

from nbgraph import END, START, StateGraph
from nbgraph.views.inspector import live_view


class S(TypedDict):
    n: int


def loop(steps: int, work: float):
    def tick(state: S) -> dict:
        if work:
            end = time.perf_counter() + work
            while time.perf_counter() < end:
                pass
        return {"n": state["n"] + 1}

    return (
        StateGraph(S)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= steps else "tick")
        .compile()
    )


def measure(steps: int, work: float, rounds: int) -> dict:
    app = loop(steps, work)
    config = {"recursion_limit": steps + 10}
    finals: list[float] = []
    original = live_view.LiveView.finish

    def timed_finish(self, log):
        start = time.perf_counter()
        original(self, log)
        finals.append(time.perf_counter() - start)

    live_view.LiveView.finish = timed_finish
    try:
        app.run({"n": 0}, config, live=True)  # warm-up: imports, first renders
        plain, inspected, live = [], [], []
        for i in range(rounds):
            trio = [
                (plain, lambda: app.run({"n": 0}, config)),
                (inspected, lambda: app.run({"n": 0}, config).inspect()),
                (live, lambda: app.run({"n": 0}, config, live=True)),
            ]
            for times, fn in trio if i % 2 == 0 else reversed(trio):
                times.append(call_seconds(fn))
    finally:
        live_view.LiveView.finish = original
    base, total = statistics.median(plain), statistics.median(live)
    then_inspect = statistics.median(inspected)
    final = statistics.median(finals[1:])
    return {
        "steps": steps,
        "node": f"{work * 1000:g} ms",
        "plain s": base,
        "live s": total,
        "total": total / base,
        "versus inspect": total / then_inspect,
        "during": (total - final) / base,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    IPython.display.display = lambda *a, **k: None  # (no front-end here)
    rows = [measure(2000, 0.0, args.rounds), measure(2000, 0.001, args.rounds)]
    print(
        "| steps | node | plain run | live run | live ÷ plain | live ÷ plain, during the run "
        "| live ÷ (plain run, then inspect()) |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['steps']} | {r['node']} | {r['plain s']:.3f} s | {r['live s']:.3f} s "
            f"| {r['total']:.3f} | {r['during']:.3f} | {r['versus inspect']:.3f} |"
        )


if __name__ == "__main__":
    main()
