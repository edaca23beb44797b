"""Branch lineages against supersteps: the same graphs run both ways, in the same process.

Run: `.venv/bin/python benchmarks/branches.py` (`--rounds K`, `--repeat N`). Workloads are
`benchmarks/engine.py`'s: the 1,000-step self-loop (one lineage, so a branch run must cost
what a superstep run does), the 100-way fan-out into a waiting join (100 lineages and one
delta merge of them), and 1,000 Sends. Each round times supersteps then branches (best of
`repeat` calls each); the table shows the medians over rounds and branches/supersteps.
Target (issue 7): loop and fan-out within 1.5x of superstep mode. Recording is on in both.
"""

import argparse
import statistics
from collections.abc import Callable
from types import SimpleNamespace

from engine import api_nbgraph, fan_out, self_loop, sends
from timing import best_seconds


def api_branches() -> SimpleNamespace:
    """nbgraph's imports, with every graph compiled with `semantics="branches"`."""
    import nbgraph

    class BranchGraph(nbgraph.StateGraph):
        def compile(self, *args, **kwargs):
            return super().compile(*args, semantics="branches", **kwargs)

    api = api_nbgraph()
    api.StateGraph = BranchGraph
    return api


def workloads(scale: int) -> list[tuple[str, Callable, int, str, bool]]:
    """label, build, units per run, unit, whether issue 7's 1.5x target applies; sizes
    divided by `scale` (`--quick`)."""
    steps, width, count = 1000 // scale, 100 // scale, 1000 // scale
    return [
        (f"self-loop, {steps:,} steps", lambda api: self_loop(api, steps)[0], steps, "step", True),
        (f"fan-out {width} into a waiting join", lambda api: fan_out(api, width)[0], width, "task",
         True),
        (f"{count:,} Sends", lambda api: sends(api, count)[0], count, "task", False),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    args = parser.parse_args(argv)
    rounds, repeat = (1, 1) if args.quick else (args.rounds, args.repeat)
    models = {"supersteps": api_nbgraph(), "branches": api_branches()}
    print(f"{'workload':<34} {'supersteps':>14} {'branches':>14} {'ratio':>7}  target")
    for label, build, per, unit, targeted in workloads(20 if args.quick else 1):
        runs = {name: build(api) for name, api in models.items()}
        for run in runs.values():
            run()  # warm up
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(rounds):
            for name, run in runs.items():
                times[name].append(best_seconds(run, repeat) / per * 1e6)
        shared, lineage = (statistics.median(times[name]) for name in runs)
        ratio = lineage / shared
        target = ("≤1.5x: " + ("met" if ratio <= 1.5 else "NOT met")) if targeted else "-"
        print(
            f"{label:<34} {shared:10.2f} µs/{unit:<4}{lineage:8.2f} µs/{unit:<4}"
            f"{ratio:6.2f}x  {target}"
        )


if __name__ == "__main__":
    main()
