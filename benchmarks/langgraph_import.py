"""Importing a LangGraph thread's run (`Run.from_langgraph`) against LangGraph running it.

Run: `.venv/bin/python benchmarks/langgraph_import.py` (`--quick`: 100 and 300 steps only).
The graph is a self-loop on LangGraph with an `InMemorySaver` that appends one short string
to a list and adds one to a counter per step, for 100, 300 and 1,000 steps. Measured:

- run: `app.invoke(...)` on LangGraph, thread fresh each time.
- import: `nbgraph.Run.from_langgraph(app, config)` of that thread (reading its history,
  the pending writes and the graph's channels, and folding the writes once to check them).
- import + effects: the import and the `effects` table built from it.

Times are the best of several runs (the machine is a noisy VM). The target: importing costs
less than LangGraph took to run (the ratio import / run below 1).
"""

import argparse
import operator
import os
import sys
import uuid
from typing import Annotated, TypedDict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from timing import best_seconds

import nbgraph


class Loop(TypedDict):
    log: Annotated[list, operator.add]
    n: int


def loop_app(steps: int):
    """A LangGraph self-loop of `steps` supersteps, with an in-memory checkpointer."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph

    def tick(state):
        return {"log": [f"item-{state['n']}"], "n": state["n"] + 1}

    graph = StateGraph(Loop)
    graph.add_node("tick", tick)
    graph.add_edge(START, "tick")
    graph.add_conditional_edges("tick", lambda s: END if s["n"] >= steps else "tick")
    return graph.compile(checkpointer=InMemorySaver())


def measure(steps: int, repeat: int) -> dict[str, float]:
    app = loop_app(steps)

    def config() -> dict:
        return {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": steps + 10}

    run_seconds = best_seconds(lambda: app.invoke({"log": [], "n": 0}, config()), repeat)
    thread = config()
    app.invoke({"log": [], "n": 0}, thread)
    imported = nbgraph.Run.from_langgraph(app, thread)
    assert len(imported.log.steps) == steps + 1 and imported.warnings == [], imported
    import_seconds = best_seconds(lambda: nbgraph.Run.from_langgraph(app, thread), repeat)
    with_effects = best_seconds(lambda: nbgraph.Run.from_langgraph(app, thread).effects, repeat)
    return {"run": run_seconds, "import": import_seconds, "effects": with_effects}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 and 300 steps, fewer repeats")
    args = parser.parse_args(argv)
    sizes, repeat = ((100, 300), 2) if args.quick else ((100, 300, 1000), 5)
    print("Run.from_langgraph against LangGraph's own run (InMemorySaver, self-loop)")
    for steps in sizes:
        found = measure(steps, repeat)
        print(
            f"{steps:>6,} steps: run {found['run'] * 1000:8.1f} ms  "
            f"import {found['import'] * 1000:8.1f} ms = {found['import'] / found['run']:.2f}x run  "
            f"import + effects {found['effects'] * 1000:8.1f} ms "
            f"= {found['effects'] / found['run']:.2f}x run"
        )


if __name__ == "__main__":
    main()
