"""Many runs of one five-node graph: `app.run_many` on threads, processes and a Dask cluster
with two workers, against a plain loop of `invoke` and LangGraph's `batch` on the same graph.

    python benchmarks/many_runs.py               # 2,000 runs each (a minute or two)
    python benchmarks/many_runs.py --runs 500
    python benchmarks/many_runs.py --quick       # 40 runs, no Dask: a few seconds
    python benchmarks/many_runs.py --tables-only # only the 10,000-run tables row

Prints a second table: a batch of `--table-runs` (10,000) runs made on threads, then its
`runs.effects` and `runs.paths()` (and, apart, `runs.steps`), each as a ratio to the time to
make the batch, in the same process, rounds alternating (target: effects + paths <= 0.2x).

Prints a Markdown table: runs per second (wall time of the whole batch, best of `--rounds`),
and what each keeps. `run_many` keeps every run's full record (tasks, reducer effects, state
tree) and, off threads, sends each back as run JSON with a summary for the batch's table: a
run is read from its JSON when first asked for ("every run read back" reads them all); a loop
of `invoke` and `batch` keep only the outputs.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import operator
import os
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Annotated, Any, TypedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from timing import call_seconds


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


Case = tuple[str, Callable[[], Any], str]
"""(row name, one batch, what it keeps)."""


def nbgraph_cases(count: int, dask: bool, pools: contextlib.ExitStack) -> list[Case]:
    import nbgraph

    app = build(nbgraph)
    data = inputs(count)
    cases: list[Case] = [
        ("nbgraph: loop of invoke", lambda: [app.invoke(i) for i in data], "outputs"),
        ("nbgraph: loop of run()", lambda: [app.run(i) for i in data], "records"),
        (
            "nbgraph: run_many, threads (default pool)",
            lambda: app.run_many(data, progress=False),
            "records",
        ),
    ]
    pool = pools.enter_context(ProcessPoolExecutor(2))
    app.run_many(data[:4], executor=pool, progress=False)  # (start the workers)
    cases += [
        (
            "nbgraph: run_many, 2 processes",
            lambda: app.run_many(data, executor=pool, progress=False),
            "records, as run JSON, read on first use",
        ),
        (
            "nbgraph: run_many, 2 processes, every run read back",
            lambda: list(app.run_many(data, executor=pool, progress=False)),
            "records, as run JSON, all read",
        ),
    ]
    if dask:
        from distributed import Client, LocalCluster

        cluster = pools.enter_context(
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        )
        executor = pools.enter_context(Client(cluster)).get_executor()
        app.run_many(data[:4], executor=executor, progress=False)  # (workers warmed up)
        cases.append(
            (
                "nbgraph: run_many, Dask LocalCluster, 2 worker processes",
                lambda: app.run_many(data, executor=executor, progress=False),
                "records, as run JSON, read on first use",
            )
        )
    return cases


def langgraph_cases(count: int) -> list[Case]:
    try:
        import langgraph.graph as api
    except ImportError:
        return []
    app = build(api)
    data = inputs(count)
    return [
        ("LangGraph: loop of invoke", lambda: [app.invoke(i) for i in data], "outputs"),
        ("LangGraph: batch (default max_concurrency)", lambda: app.batch(data), "outputs"),
    ]


def measure(cases: list[Case], count: int, rounds: int) -> list[tuple[str, float, str]]:
    """Runs per second of each case, best of `rounds`; the rounds go round the cases in
    turn, so a burst of load on this shared machine does not land on one case alone."""
    best = [math.inf] * len(cases)
    for _ in range(rounds):
        for number, (_, batch, _) in enumerate(cases):
            best[number] = min(best[number], call_seconds(batch))
    return [
        (name, count / seconds, keeps)
        for (name, _, keeps), seconds in zip(cases, best, strict=True)
    ]


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


def table_ratios(count: int, rounds: int) -> dict[str, list[float]]:
    """Per round: seconds to make `count` runs (`run_many` on threads), then to build that
    fresh batch's `effects`, `paths()` and `steps` (each from the runs' columns)."""
    import nbgraph

    app = build(nbgraph)
    data = inputs(count)
    small = app.run_many(data[:50], progress=False)  # (pandas imported, threads warm)
    small.effects, small.paths(), small.steps
    times: dict[str, list[float]] = {"make": [], "effects": [], "paths": [], "steps": []}
    for _ in range(rounds):
        made: list[Any] = []
        make = lambda made=made: made.append(app.run_many(data, progress=False))  # noqa: E731
        times["make"].append(call_seconds(make))
        runs = made.pop()
        for name in ("effects", "steps"):
            times[name].append(call_seconds(partial(getattr, runs, name)))
        times["paths"].append(call_seconds(runs.paths))
        assert len(runs.effects) == count * 12 and len(runs.paths()) == 1
        del runs, made
    return times


def tables_table(times: dict[str, list[float]], count: int) -> str:
    """The tables row: best seconds of each, and each as a ratio to the best time to make."""
    make = min(times["make"])
    best = {name: min(seconds) for name, seconds in times.items()}
    both = min(e + p for e, p in zip(times["effects"], times["paths"], strict=True))
    lines = [
        f"| {count:,} runs of a five-node chain (threads) | seconds | × making them |",
        "| --- | ---: | ---: |",
        f"| make them: `app.run_many(inputs)` | {make:.3f} | 1.00 |",
        f"| `runs.effects` ({count * 12:,} rows) | {best['effects']:.3f} | "
        f"{best['effects'] / make:.3f} |",
        f"| `runs.paths()` | {best['paths']:.4f} | {best['paths'] / make:.4f} |",
        f"| **`runs.effects` + `runs.paths()`** (target <= 0.2×) | {both:.3f} | "
        f"**{both / make:.3f}** |",
        f"| `runs.steps` ({count * 5:,} rows) | {best['steps']:.3f} | {best['steps'] / make:.3f} |",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="40 runs, one round, no Dask")
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--table-runs", type=int, default=10_000)
    parser.add_argument("--tables-only", action="store_true", help="only the tables row")
    args = parser.parse_args(argv)
    count, rounds = (40, 1) if args.quick else (args.runs, args.rounds)
    dask = not (args.quick or args.no_dask)
    print(f"nproc {os.cpu_count()}; best of {rounds} round(s), taken in turn\n")
    text = ""
    if not args.tables_only:
        with contextlib.ExitStack() as pools:
            cases = nbgraph_cases(count, dask, pools) + langgraph_cases(count)
            rows = measure(cases, count, rounds)
        text = table(rows, count) + "\n\n"
        print(text)
    table_runs = 200 if args.quick else args.table_runs
    tables = tables_table(table_ratios(table_runs, rounds), table_runs)
    print(tables)
    return text + tables


if __name__ == "__main__":
    main()
