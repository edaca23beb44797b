"""The speed gate noise cannot fool: calls and bytes per step of each main workload, counted.

Timings on a shared machine swing by 30-180% a round; the number of function calls a step
makes, and the bytes a run keeps per step, do not. This script counts both for each of
`compare.py`'s main workloads on nbgraph alone, and compares them with the budgets committed
in `benchmarks/budgets.json` (`tests/e2e/test_budgets.py` runs it in CI):

    .venv/bin/python benchmarks/budgets.py            # the counts against the budgets
    .venv/bin/python benchmarks/budgets.py --write    # the counts become the budgets

- **calls**: every call `cProfile` sees during one run (Python functions and built-ins),
  divided by the run's steps, tasks or checkpoints; **python**: the Python frames alone.
  Counted with the cyclic collector off (a finalizer run by a collection is not the
  workload's), after one warm-up run (first-use caches are not the workload's either).
- **bytes**: what `tracemalloc` still sees allocated after one more run (`compare.retained`:
  the returned `Run`, with the final state, plus its saver's new checkpoints), per unit; for
  the SQLite loop the bytes on disk after one run on a fresh file.

Counting is exact up to a few calls or bytes a run: the same tree counts the same calls in
every process. The one clock the engine reads on these paths, the age of a held batch of
checkpoints (durability `"async"` with `SqliteSaver`), is held still while counting, so
batches close by count (every `BATCH` checkpoints) and always in the run's thread. What
still moves, measured over repeated counts in one process and across processes: a couple
of calls a run (a cache of langchain_core's or SQLite's filled on a later run: at most
0.03%; `CALLS_SLACK` 0.1%, a tenth of one call a step of the self-loop), the bytes kept by
up to 0.4% (a dict or list that crosses a size class at another moment; `BYTES_SLACK`
0.5%), and the langchain agent's bytes by 3% (langchain_core's own caches: its budget
carries a `bytes_slack` of its own). The fan-out keeps only ~41 KB in all (one step of 100
tasks), so one small object more or less in a process that has already run the whole test
suite moves it by ~1% (0.9% seen in CI): its budget carries a `bytes_slack` of 2%.

A budget is exceeded when a count is above it by more than its slack, and stale when the
count is below it by more than `STALE` (the budget would let a regression through unseen).
A change that adds calls on purpose raises the budget in the same commit: run `--write` and
commit `budgets.json` with the change, saying why.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import math
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from compare import (  # noqa: E402
    Case,
    agent_case,
    api_nbgraph,
    fan_out_case,
    history_case,
    loop_case,
    retained,
    sends_case,
    subgraph_case,
)

BUDGETS = Path(_HERE) / "budgets.json"
CALLS_SLACK = 0.001  # calls may exceed the budget by this fraction (see the docstring)
BYTES_SLACK = 0.005  # bytes kept, the same (a workload's own "bytes_slack" overrides it)
STALE = 0.10  # a count this far below its budget: the budget should come down


@dataclass(frozen=True)
class Workload:
    """One counted workload: `build(api, folder)` makes the case at `size`."""

    unit: str
    size: int
    build: Callable[[SimpleNamespace, str], Case]
    bytes: str = "kept"  # "kept" (tracemalloc), "disk" or "" (not counted)


WORKLOADS: dict[str, Workload] = {
    "self-loop": Workload("step", 1000, lambda api, _: loop_case(api, 1000)),
    "self-loop + MemorySaver": Workload(
        "step", 300, lambda api, _: loop_case(api, 300, "memory", durability="async")
    ),
    "self-loop + SqliteSaver": Workload(
        "step", 300, lambda api, d: loop_case(api, 300, "sqlite", d, "async"), "disk"
    ),
    "fan-out 100": Workload("task", 100, lambda api, _: fan_out_case(api, 100)),
    "1,000 Sends": Workload("task", 1000, lambda api, _: sends_case(api, 1000)),
    "agent, 20 nodes": Workload("step", 50, lambda api, _: agent_case(api, 50)),
    "agent, langchain messages": Workload(
        "step", 50, lambda api, _: agent_case(api, 50, langchain=True)
    ),
    "subgraph as a node": Workload("call", 200, lambda api, _: subgraph_case(api, 200)),
    "history, MemorySaver": Workload(
        "checkpoint", 300, lambda api, d: history_case(api, 300, "memory", d), ""
    ),
    "history, SqliteSaver": Workload(
        "checkpoint", 300, lambda api, d: history_case(api, 300, "sqlite", d), ""
    ),
}


@dataclass
class Count:
    """What one workload costs per unit."""

    calls: float  # every call cProfile sees
    python: float  # Python frames
    bytes: float | None  # kept (or on disk) per unit; None: not counted


@contextmanager
def still_clock() -> Iterator[None]:
    """Hold the durability module's clock still: held checkpoints are written by count only."""
    from nbgraph.engine.persistence import durability

    real = durability.time
    durability.time = SimpleNamespace(monotonic=lambda: 0.0, sleep=real.sleep)
    try:
        yield
    finally:
        durability.time = real


def count_calls(call: Callable[[], Any]) -> tuple[int, int]:
    """(every call, Python frames) that one `call()` makes, the collector off."""
    profiler = cProfile.Profile(builtins=True)
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        profiler.enable()
        call()
        profiler.disable()
    finally:
        if enabled:
            gc.enable()
    entries = profiler.getstats()
    every = sum(entry.callcount for entry in entries)
    python = sum(entry.callcount for entry in entries if not isinstance(entry.code, str))
    return every, python


def measure(name: str, folder: str) -> Count:
    """Count one workload (warmed up once first)."""
    spec = WORKLOADS[name]
    with still_clock():
        case = spec.build(api_nbgraph(), folder)
        try:
            case.call()
            every, python = count_calls(case.call)
            kept: float | None = None
            if spec.bytes == "kept" and case.keep is not None:
                kept = retained(case.keep)
            elif spec.bytes == "disk" and case.disk is not None:
                kept = case.disk()
        finally:
            case.close()
    units = case.units
    return Count(every / units, python / units, None if kept is None else kept / units)


def measure_all(names: list[str] | None = None) -> dict[str, Count]:
    """Count every workload (or `names`) in this process."""
    with tempfile.TemporaryDirectory() as folder:
        return {name: measure(name, folder) for name in names or list(WORKLOADS)}


def load_budgets(path: Path = BUDGETS) -> dict[str, dict[str, Any]]:
    """The committed budgets: workload -> {"unit", "size", "calls", "python", "bytes"}."""
    return json.loads(path.read_text(encoding="utf-8"))["workloads"]


def judge(name: str, count: Count, budget: dict[str, Any]) -> list[str]:
    """What is wrong with `count` against `budget`: over it, or well under it (stale)."""
    problems = []
    for key in ("calls", "python", "bytes"):
        now, allowed = getattr(count, key), budget.get(key)
        if now is None or allowed is None:
            continue
        slack = budget.get("bytes_slack", BYTES_SLACK) if key == "bytes" else CALLS_SLACK
        if now > allowed * (1 + slack):
            problems.append(
                f"{name}: {key} {now:,.2f}/{budget['unit']} over its budget {allowed:,}"
            )
        elif now < allowed * (1 - STALE):
            problems.append(
                f"{name}: {key} {now:,.2f}/{budget['unit']} is {1 - now / allowed:.0%} under "
                f"its budget {allowed:,}: lower the budget"
            )
    return problems


def budget_of(count: Count, spec: Workload, old: dict[str, Any]) -> dict[str, Any]:
    """A budget that is the count, rounded up (calls to a hundredth, bytes to a byte); an
    old budget's own `bytes_slack` is kept."""
    slack = {"bytes_slack": old["bytes_slack"]} if "bytes_slack" in old else {}
    return {
        "unit": spec.unit,
        "size": spec.size,
        "calls": math.ceil(count.calls * 100) / 100,
        "python": math.ceil(count.python * 100) / 100,
        "bytes": None if count.bytes is None else math.ceil(count.bytes),
        **slack,
    }


def write_budgets(counts: dict[str, Count], path: Path = BUDGETS) -> None:
    """Write `counts` as the budgets (every workload's, in `WORKLOADS` order; a workload not
    counted keeps its old budget)."""
    old = load_budgets(path) if path.exists() else {}
    data = {
        "about": "calls and bytes per unit of benchmarks/budgets.py's workloads; "
        "checked by tests/e2e/test_budgets.py; rewrite with `python benchmarks/budgets.py "
        "--write` in the commit that changes them, saying why",
        "workloads": {
            name: budget_of(counts[name], WORKLOADS[name], old.get(name, {}))
            if name in counts
            else old[name]
            for name in WORKLOADS
            if name in counts or name in old
        },
    }
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def table(counts: dict[str, Count], budgets: dict[str, dict[str, Any]]) -> str:
    """The counts next to their budgets, as a markdown table."""
    lines = [
        "| workload | calls/unit (budget) | Python frames/unit (budget) | bytes/unit (budget) |",
        "| --- | --- | --- | --- |",
    ]
    for name, count in counts.items():
        budget = budgets.get(name, {})
        unit = WORKLOADS[name].unit
        cells = [f"{name} ({WORKLOADS[name].size:,} {unit}s)"]
        for key in ("calls", "python", "bytes"):
            now, allowed = getattr(count, key), budget.get(key)
            text = "—" if now is None else f"{now:,.2f}" if key != "bytes" else f"{now:,.0f}"
            cells.append(f"{text} ({'—' if allowed is None else f'{allowed:,}'})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the counts as the budgets")
    parser.add_argument("workloads", nargs="*", help="only these (default: all)")
    args = parser.parse_args(argv)
    counts = measure_all(args.workloads or None)
    if args.write:
        write_budgets(counts)
    budgets = load_budgets() if BUDGETS.exists() else {}
    print(table(counts, budgets))
    judged = [(name, count) for name, count in counts.items() if name in budgets]
    problems = [p for name, count in judged for p in judge(name, count, budgets[name])]
    print("\n".join(problems) if problems else "every count within its budget")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
