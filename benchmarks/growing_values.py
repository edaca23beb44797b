"""Looking at a run whose values grow: `run.effects` and `run.save_html(path)` on a run of
1,000 steps whose text field grows by 10 KB a step (10 MB at the end), against `run.save`.

Run: `.venv/bin/python benchmarks/growing_values.py [steps] [--check]`.

Each round times, in one process and alternating which goes first, the three calls on a
fresh copy of the run (no cached table): CPU seconds (`time.process_time`), median of
`ROUNDS` rounds, and the ratios to `run.save` of the same round (the run's own JSON file:
it writes each step's writes, 10 KB, not the growing value). A table cell and the shared
page show a value's first characters (`record.text.short`), and `run.effects` grows a long
text as one trail of its pieces (`record.cells.TextTrail`), so both cost steps x shown
width, not steps x value size: the target is at most 2x `run.save`. `--check` exits 1 if a
median ratio passes it.
"""

import operator
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Annotated, TypedDict

from timing import call_times

from nbgraph import END, START, StateGraph

ROUNDS = 5
CHUNK = 10_000
TARGET = 2.0


def growing_run(steps: int):
    """One node, `steps` times: each adds `CHUNK` characters to `text` (`operator.add`)."""

    class S(TypedDict):
        text: Annotated[str, operator.add]
        n: int

    app = (
        StateGraph(S)
        .add_node("step", lambda s: {"text": "x" * CHUNK, "n": s["n"] + 1})
        .add_edge(START, "step")
        .add_conditional_edges("step", lambda s: END if s["n"] >= steps else "step")
        .compile()
    )
    return app.run({"text": "", "n": 0}, {"recursion_limit": steps + 10})


def fresh(run):
    """The same run without its cached tables (each round pays for them, as a user does)."""
    return type(run)(run.log)


def rounds(run, folder: Path) -> dict[str, list[float]]:
    """CPU seconds of each call, `ROUNDS` times, the order rotating each round."""
    calls = {
        "run.save": lambda: fresh(run).save(folder / "run.json"),
        "run.effects": lambda: fresh(run).effects,
        "run.save_html": lambda: fresh(run).save_html(folder / "run.html"),
    }
    times: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for index in range(ROUNDS):
        for name in names[index % 3 :] + names[: index % 3]:
            times[name].append(call_times(calls[name])[1])
    return times


def main(argv: list[str]) -> int:
    check = "--check" in argv
    numbers = [a for a in argv if a != "--check"]
    steps = int(numbers[0]) if numbers else 1000
    run = growing_run(steps)
    with tempfile.TemporaryDirectory() as tmp:
        times = rounds(run, Path(tmp))
    print(
        f"a run of {steps:,} steps, its text growing {CHUNK:,} characters a step "
        f"({steps * CHUNK / 1e6:.0f} MB at the end), {ROUNDS} alternating rounds, CPU time"
    )
    base = times["run.save"]
    print(f"  run.save: {statistics.median(base):.3f} s (min {min(base):.3f}, max {max(base):.3f})")
    worst = 0.0
    for name in ("run.effects", "run.save_html"):
        ratios = [t / b for t, b in zip(times[name], base, strict=True)]
        median = statistics.median(ratios)
        worst = max(worst, median)
        print(
            f"  {name}: {statistics.median(times[name]):.3f} s; ratio to run.save "
            f"{median:.2f}x (min {min(ratios):.2f}x, max {max(ratios):.2f}x)"
        )
    if check:
        verdict = "within" if worst <= TARGET else "PAST"
        print(f"  target: at most {TARGET:.0f}x run.save: {verdict}")
        return 0 if worst <= TARGET else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
