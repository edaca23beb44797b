"""Many runs of one five-node graph: `app.run_many` on threads, processes and a Dask cluster
with two workers, against a plain loop of `invoke` and LangGraph's `batch` on the same graph.

    python benchmarks/many_runs.py               # 2,000 runs each (a minute or two)
    python benchmarks/many_runs.py --runs 500
    python benchmarks/many_runs.py --quick       # 40 runs, no Dask: a few seconds

Prints a Markdown table: runs per second (wall time of the whole batch, best of `--rounds`),
and what each keeps. `run_many` keeps every run's full record (tasks, reducer effects, state
tree) and, off threads, sends each back as run JSON with a summary for the batch's table: a
run is read from its JSON when first asked for ("every run read back" reads them all); a loop
of `invoke` and `batch` keep only the outputs.
"""

from __future__ import annotations

import argparse
import itertools
import operator
import os
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Annotated, Any, TypedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from timing import best_seconds


class State(TypedDict):
    x: int
    text: str
    log: Annotated[list, operator.add]


def parse(state: State) -> dict:
    return {"x": state["x"] + 1, "log": ["parse"]}


def enrich(state: State) -> dict:
    return {"text": f"item-{state['x']}", "log": ["enrich"]}


def score(state: State) -> dict:
    return {"x": sum(ord(c) for c in state["text"]) % 97, "log": ["score"]}


def label(state: State) -> dict:
    return {"text": state["text"].upper(), "log": ["label"]}


def finish(state: State) -> dict:
    return {"log": ["finish"]}


NODES = [parse, enrich, score, label, finish]


def build(api: Any) -> Any:
    """The five-node chain on nbgraph's or LangGraph's `StateGraph`."""
    graph = api.StateGraph(State)
    for node in NODES:
        graph.add_node(node.__name__, node)
    graph.add_edge(api.START, "parse")
    for a, b in itertools.pairwise(NODES):
        graph.add_edge(a.__name__, b.__name__)
    graph.add_edge("finish", api.END)
    return graph.compile()


def inputs(count: int) -> list[dict]:
    return [{"x": i, "text": "", "log": []} for i in range(count)]


def nbgraph_rows(count: int, rounds: int, dask: bool) -> list[tuple[str, float, str]]:
    import nbgraph

    app = build(nbgraph)
    data = inputs(count)
    rows = [
        (
            "nbgraph: loop of invoke",
            _rate(lambda: [app.invoke(i) for i in data], count, rounds),
            "outputs",
        ),
        (
            "nbgraph: loop of run()",
            _rate(lambda: [app.run(i) for i in data], count, rounds),
            "records",
        ),
        (
            "nbgraph: run_many, threads (default pool)",
            _rate(lambda: app.run_many(data, progress=False), count, rounds),
            "records",
        ),
    ]
    with ProcessPoolExecutor(2) as pool:
        app.run_many(data[:4], executor=pool, progress=False)  # (start the workers)
        rows.append(
            (
                "nbgraph: run_many, 2 processes",
                _rate(lambda: app.run_many(data, executor=pool, progress=False), count, rounds),
                "records, as run JSON, read on first use",
            )
        )
        rows.append(
            (
                "nbgraph: run_many, 2 processes, every run read back",
                _rate(
                    lambda: list(app.run_many(data, executor=pool, progress=False)), count, rounds
                ),
                "records, as run JSON, all read",
            )
        )
    if dask:
        rows.append(_dask_row(app, data, count, rounds))
    return rows


def _dask_row(app: Any, data: list, count: int, rounds: int) -> tuple[str, float, str]:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        executor = client.get_executor()
        app.run_many(data[:4], executor=executor, progress=False)  # (ship the graph once)
        rate = _rate(lambda: app.run_many(data, executor=executor, progress=False), count, rounds)
    return (
        "nbgraph: run_many, Dask LocalCluster, 2 worker processes",
        rate,
        "records, as run JSON, read on first use",
    )


def langgraph_rows(count: int, rounds: int) -> list[tuple[str, float, str]]:
    try:
        import langgraph.graph as api
    except ImportError:
        return []
    app = build(api)
    data = inputs(count)
    return [
        (
            "LangGraph: loop of invoke",
            _rate(lambda: [app.invoke(i) for i in data], count, rounds),
            "outputs",
        ),
        (
            "LangGraph: batch (default max_concurrency)",
            _rate(lambda: app.batch(data), count, rounds),
            "outputs",
        ),
    ]


def _rate(batch: Callable[[], Any], count: int, rounds: int) -> float:
    return count / best_seconds(batch, rounds)


def table(rows: list[tuple[str, float, str]], count: int) -> str:
    loop = next((rate for name, rate, _ in rows if name == "nbgraph: loop of invoke"), None)
    lines = [
        f"| {count} runs of a five-node chain | runs/s | × nbgraph invoke loop | keeps |",
        "| --- | ---: | ---: | --- |",
    ]
    for name, rate, keeps in rows:
        ratio = f"{rate / loop:.2f}" if loop else ""
        lines.append(f"| {name} | {rate:,.0f} | {ratio} | {keeps} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="40 runs, one round, no Dask")
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args(argv)
    count, rounds = (40, 1) if args.quick else (args.runs, args.rounds)
    dask = not (args.quick or args.no_dask)
    rows = nbgraph_rows(count, rounds, dask) + langgraph_rows(count, rounds)
    text = table(rows, count)
    print(f"nproc {os.cpu_count()}; best of {rounds} round(s)\n")
    print(text)
    return text


if __name__ == "__main__":
    main()
