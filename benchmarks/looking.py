"""Looking at a long run against making it: each way of reading a run's record, timed against
the run itself, in one process.

Run from the repo root: `.venv/bin/python -m benchmarks looking` (or `benchmarks/looking.py`);
`--steps 10000` for one size only (a quick run), `--rounds K` (default 3), `--quick` (tiny
sizes, one round: what the test runs). `--million` (or `--million N`) runs only the
million-step row: the flat loop's per-step time over 1,000,000 steps ÷ over 1,000, the
collector on, in one process (issue 39's target: ≤ 1.1×; about a minute a round).

Two self-loops, each run for N steps: **flat** state (a counter, written every step) and
**growing** state (the counter and a list that grows by one item each step, LangGraph's way:
`Annotated[list, operator.add]`, so the run itself copies the list every step). Each round
times the run, then each "looking" operation on a fresh `Run` of that run's record (nothing
cached from an earlier operation):

- `run.steps`, `run.effects`, `run.tree`, `draw_tree()` (the DOT text);
- `state_at(last step)`: the first question of a fresh record replays the whole run;
- `inspect()` and one step change (`go(middle step)`);
- `compare()` with another run of the same length;
- `save` (the file's bytes per step are shown) and `Run.load` of that file;
- `Run.load` and every step read (a saved file's steps are read, checked and replayed when
  first asked for: what the first view of every step adds to the load).

Each is CPU time (`time.process_time`) after a garbage collection; the table gives, per
operation, its median over the rounds, its ratio to the same round's run (median, with the
range of the per-round ratios), and the growth from the smallest to the largest size
(median ÷ median). Targets (issues 31 and 39): every operation at most the run's own time
(≤ 1×), `run.steps`, `run.effects` and `inspect()` at most half of it (≤ 0.5×), `Run.load`
at most 0.3 of it (≤ 0.3×), and each grows linearly (100k ÷ 10k ≤ 11×); `LIMITS`.
"""

from __future__ import annotations

import argparse
import gc
import operator
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from nbgraph import END, START, Run, StateGraph  # noqa: E402

SIZES = (10_000, 100_000)
QUICK_SIZES = (200, 2_000)
RUN_LIMIT = 1.0  # every operation: at most the run's own time
LOAD_LIMIT = 0.3  # Run.load: at most 0.3 of it (issue 39)
GROWTH_LIMIT = 11.0  # per operation, 100k ÷ 10k
LIMITS: dict[str, float | None] = {
    "run.steps": 0.5,  # (the tables and the inspector: at most half the run, issue 39)
    "run.effects": 0.5,
    "inspect() + one step change": 0.5,
    "Run.load": LOAD_LIMIT,
    "Run.load + every step read": None,  # (what the first read of every step adds: shown)
}


# --- the workloads ----------------------------------------------------------------------------


def flat_loop(steps: int) -> Callable[[], Run]:
    """A counter, overwritten every step: the state stays one int."""

    class Flat(TypedDict):
        count: int

    app = (
        StateGraph(Flat)
        .add_node("tick", lambda s: {"count": s["count"] + 1})
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["count"] >= steps else "tick")
        .compile()
    )
    config = {"recursion_limit": steps + 10}
    return lambda: app.run({"count": 0}, config)


def growing_loop(steps: int) -> Callable[[], Run]:
    """The counter and a list that grows by one item a step (`operator.add`)."""

    class Growing(TypedDict):
        count: int
        log: Annotated[list, operator.add]

    app = (
        StateGraph(Growing)
        .add_node("tick", lambda s: {"count": s["count"] + 1, "log": [s["count"]]})
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["count"] >= steps else "tick")
        .compile()
    )
    config = {"recursion_limit": steps + 10}
    return lambda: app.run({"count": 0, "log": []}, config)


WORKLOADS: dict[str, Callable[[int], Callable[[], Run]]] = {
    "flat state (a counter)": flat_loop,
    "growing state (a list, +1 item a step)": growing_loop,
}


# --- the operations ---------------------------------------------------------------------------


def _inspect_and_step(run: Run) -> None:
    inspector = run.inspect()
    inspector.go(run.last_step // 2)


def operations(folder: str) -> dict[str, Callable[[Run, Run], Any]]:
    """Each looking operation: `(fresh record of the run, another run of the same length)`."""
    path = os.path.join(folder, "run.json")
    return {
        "run.steps": lambda run, _: run.steps,
        "run.effects": lambda run, _: run.effects,
        "run.tree": lambda run, _: run.tree,
        "draw_tree()": lambda run, _: run.draw_tree().source,
        "state_at(last step)": lambda run, _: run.state_at(run.last_step),
        "inspect() + one step change": lambda run, _: _inspect_and_step(run),
        "compare() with a run as long": lambda run, other: run.compare(other),
        "save": lambda run, _: run.save(path),
        "Run.load": lambda _, __: Run.load(path),
        "Run.load + every step read": lambda _, __: list(Run.load(path).log.steps),
    }


def cpu_seconds(fn: Callable[[], Any]) -> float:
    """One call's CPU time (every thread of the process), after a garbage collection."""
    gc.collect()
    start = time.process_time()
    fn()
    return time.process_time() - start


@dataclass
class Measured:
    """One workload at one size: per round, the run's time and each operation's."""

    run: list[float] = field(default_factory=list)
    ops: dict[str, list[float]] = field(default_factory=dict)
    file_bytes: int = 0

    def median(self, op: str) -> float:
        return statistics.median(self.ops[op])

    def ratios(self, op: str) -> list[float]:
        return [t / r for t, r in zip(self.ops[op], self.run, strict=True)]


def _unmade(log: Any) -> None:
    """Forget the step objects an earlier operation made from the log's columns
    (`StepColumns` keeps each one it makes): each operation pays for the objects it asks for,
    as on a record nothing has read yet, whatever ran before it."""
    steps = log.steps
    if hasattr(steps, "_made") and hasattr(steps, "_upto"):
        steps._made, steps._upto = None, 0


def measure(build: Callable[[int], Callable[[], Run]], steps: int, rounds: int) -> Measured:
    """`rounds` rounds: the run, then every operation on a fresh record of it."""
    run_once = build(steps)
    run_once()  # warm-up: first-use caches (imports, compiled plans) are not the run's
    other = run_once()
    result = Measured()
    with tempfile.TemporaryDirectory() as folder:
        ops = operations(folder)
        warm = Run(other.log)  # warm-up of each operation on a small run's worth of imports
        for op in ops.values():
            op(Run(build(20)().log), warm)
        for _ in range(rounds):
            holder: list[Run] = []
            result.run.append(cpu_seconds(lambda holder=holder: holder.append(run_once())))
            log = holder[0].log
            del holder
            for name, op in ops.items():
                _unmade(log)
                fresh = Run(log)
                seconds = cpu_seconds(lambda op=op, fresh=fresh: op(fresh, other))
                result.ops.setdefault(name, []).append(seconds)
                del fresh
            result.file_bytes = os.path.getsize(os.path.join(folder, "run.json"))
    return result


# --- a million steps ------------------------------------------------------------------------

SMALL_RUN = 1_000  # the million-step row: the per-step time of a run this long, as the base
SMALL_REPEATS = 20  # ... timed this many times a round (its median)
MILLION_LIMIT = 1.1  # the million-step run's per-step time: at most this times the base


def million(steps: int, rounds: int) -> list[str]:
    """The flat self-loop (nbgraph only, the collector on): per-step CPU time of one run of
    `steps` steps against a `SMALL_RUN`-step run's in the same process, per round."""
    small, large = flat_loop(SMALL_RUN), flat_loop(steps)
    small()  # warm-up
    ratios, bases, longs = [], [], []
    for _ in range(rounds):
        base = statistics.median(cpu_seconds(small) for _ in range(SMALL_REPEATS)) / SMALL_RUN
        holder: list[Run] = []
        long = cpu_seconds(lambda holder=holder: holder.append(large())) / steps
        del holder
        bases.append(base)
        longs.append(long)
        ratios.append(long / base)
    ratio = statistics.median(ratios)
    verdict = "ok" if ratio <= MILLION_LIMIT else f"over {MILLION_LIMIT}×"
    return [
        f"| run | {SMALL_RUN:,} steps | {steps:,} steps | ratio (range) | target |",
        "| --- | --- | --- | --- | --- |",
        f"| flat self-loop, collector on | {statistics.median(bases) * 1e6:.2f} µs/step | "
        f"{statistics.median(longs) * 1e6:.2f} µs/step | {ratio:.2f}× "
        f"({min(ratios):.2f}..{max(ratios):.2f}) | ≤ {MILLION_LIMIT}× ({verdict}) |",
    ]


# --- the table --------------------------------------------------------------------------------


def _seconds(value: float) -> str:
    return f"{value * 1e3:,.0f} ms" if value < 1 else f"{value:,.2f} s"


def _ratio(values: list[float]) -> str:
    middle = statistics.median(values)
    if len(values) == 1:
        return f"{middle:.2f}×"
    return f"{middle:.2f}× ({min(values):.2f}–{max(values):.2f})"


def table(results: dict[str, dict[int, Measured]], sizes: tuple[int, ...]) -> list[str]:
    """The markdown table: per workload and operation, each size's time and ratio, growth."""
    small, large = sizes[0], sizes[-1]
    head = ["workload", "operation"]
    for size in sizes:
        head += [f"{size:,} steps", "÷ run"]
    if len(sizes) > 1:
        head.append(f"{large // small}× steps: growth")
    head += ["targets", "met?"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for workload, by_size in results.items():
        first = by_size[sizes[0]]
        cells = [workload, "**the run itself**"]
        for size in sizes:
            cells += [_seconds(statistics.median(by_size[size].run)), "1×"]
        if len(sizes) > 1:
            growth = statistics.median(by_size[large].run) / statistics.median(first.run)
            cells.append(f"{growth:.1f}×")
        cells += ["", ""]
        lines.append("| " + " | ".join(cells) + " |")
        for op in first.ops:
            lines.append("| " + " | ".join(_op_cells(workload, op, by_size, sizes)) + " |")
        sizes_text = ", ".join(f"{by_size[s].file_bytes / s:,.0f} B/step at {s:,}" for s in sizes)
        lines.append(f"| {workload} | run file size | {sizes_text} |" + " |" * (len(head) - 3))
    return lines


def _op_cells(
    workload: str, op: str, by_size: dict[int, Measured], sizes: tuple[int, ...]
) -> list[str]:
    limit = LIMITS.get(op, RUN_LIMIT)
    cells, missed = [workload, op], []
    for size in sizes:
        measured = by_size[size]
        ratio = statistics.median(measured.ratios(op))
        cells += [_seconds(measured.median(op)), _ratio(measured.ratios(op))]
        if limit is not None and ratio > limit:
            missed.append(f"{ratio:.2f}× at {size:,}")
    targets = f"≤{limit:g}× run" if limit is not None else ""
    if len(sizes) > 1:
        growth = by_size[sizes[-1]].median(op) / by_size[sizes[0]].median(op)
        cells.append(f"{growth:.1f}×")
        targets += f"{', ' if targets else ''}growth ≤{GROWTH_LIMIT:g}×"
        if growth > GROWTH_LIMIT:
            missed.append(f"growth {growth:.1f}×")
    met = "met" if targets else ""
    cells += [targets, met if not missed else "NOT met (" + "; ".join(missed) + ")"]
    return cells


def main(argv: list[str] | None = None) -> dict[str, dict[int, Measured]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, action="append", help="a size (repeatable)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 3; quick 1)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    parser.add_argument("--only", default="", help="only the workloads whose name has this")
    parser.add_argument(
        "--million",
        type=int,
        nargs="?",
        const=1_000_000,
        default=None,
        help="only the million-step row (or N steps): per-step time ÷ a 1,000-step run's",
    )
    args = parser.parse_args(argv)
    if args.million is not None:
        started = time.perf_counter()
        print("\n".join(million(args.million, args.rounds or 1)))
        print(
            f"\n{args.rounds or 1} round(s); CPU time; took {time.perf_counter() - started:.0f} s"
        )
        return {}
    sizes = tuple(sorted(args.steps)) if args.steps else QUICK_SIZES if args.quick else SIZES
    rounds = args.rounds or (1 if args.quick else 3)
    started = time.perf_counter()
    results: dict[str, dict[int, Measured]] = {}
    for workload, build in WORKLOADS.items():
        if args.only not in workload:
            continue
        for size in sizes:
            results.setdefault(workload, {})[size] = measure(build, size, rounds)
            print(f"  measured: {workload}, {size:,} steps", file=sys.stderr, flush=True)
    print("\n".join(table(results, sizes)))
    print(
        f"\n{rounds} round(s); CPU time; took {time.perf_counter() - started:.0f} s; "
        f"{time.strftime('%a %b %d %H:%M:%S UTC %Y', time.gmtime())}"
    )
    return results


if __name__ == "__main__":
    main()
