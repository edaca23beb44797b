"""`run.save_html(path)` on a long run: the file's size, the time to write it, and the time
Chromium takes to open it from disk.

Run: `.venv/bin/python benchmarks/share_html.py [steps]` (default 10,000 supersteps).

The time to write is given as a ratio against a named baseline measured in the same process,
in alternating rounds (CPU time, median and spread): `run.save(path)`, the run's own JSON
file (`record/files`), which walks the same steps. Opening in Chromium (Debian's, headless,
through Playwright, if installed) is wall time from `goto` to the first step drawn.
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, TypedDict

from timing import call_times

from nbgraph import END, START, StateGraph

ROUNDS = 5


def long_run(steps: int):
    """`tick` and `check`, `steps` times round: a counter, a growing log, a short note."""

    class L(TypedDict):
        n: int
        log: Annotated[list, "append"]
        note: str

    app = (
        StateGraph(L)
        .add_node("tick", lambda s: {"n": s["n"] + 1, "log": [s["n"]], "note": f"at {s['n']}"})
        .add_node("check", lambda s: None)
        .add_edge(START, "tick")
        .add_edge("tick", "check")
        .add_conditional_edges("check", lambda s: END if s["n"] >= steps // 2 else "tick")
        .compile()
    )
    return app.run({"n": 0, "log": [], "note": ""}, {"recursion_limit": steps + 10})


def fresh(run):
    """The same run without its cached tables (each round pays for them, as a user does)."""
    return type(run)(run.log)


def write_times(run, folder: Path) -> tuple[list[float], list[float], list[float]]:
    """CPU seconds of `save_html` and of the baseline `save`, in alternating rounds, and the
    wall seconds of `save_html` (the first round draws the graph: `dot` runs once)."""
    html_times, json_times, walls = [], [], []
    for _ in range(ROUNDS):
        wall, cpu = call_times(lambda: fresh(run).save_html(folder / "run.html"))
        html_times.append(cpu)
        walls.append(wall)
        json_times.append(call_times(lambda: fresh(run).save(folder / "run.json"))[1])
    return html_times, json_times, walls


def open_seconds(path: Path) -> float | None:
    """Wall seconds from `goto(file://...)` to the first step drawn, in Chromium (or None)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not Path("/usr/bin/chromium").exists():
        return None
    args = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        page = browser.new_context(offline=True).new_page()
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            page.goto(path.resolve().as_uri())
            page.wait_for_function("document.getElementById('nbg-label').textContent !== ''")
            best = min(best, time.perf_counter() - start)
        page.keyboard.press("End")
        page.keyboard.press("ArrowLeft")
        label = page.evaluate("document.getElementById('nbg-label').textContent")
        browser.close()
    print(f"  (Chromium at the end: {label!r})")
    return best


def main(argv: list[str]) -> None:
    steps = int(argv[0]) if argv else 10_000
    run = long_run(steps)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        html_times, json_times, walls = write_times(run, folder)
        html_size = (folder / "run.html").stat().st_size
        json_size = (folder / "run.json").stat().st_size
        opened = open_seconds(folder / "run.html")
    ratios = [h / j for h, j in zip(html_times, json_times, strict=True)]
    print(f"a run of {len(run.log.steps) - 1:,} supersteps, {ROUNDS} alternating rounds")
    print(
        f"  save_html: {statistics.median(html_times):.2f} s CPU "
        f"(min {min(html_times):.2f}, max {max(html_times):.2f}); file {html_size / 1e6:.2f} MB"
    )
    first, then = walls[0], min(walls)
    print(f"  save_html wall time: first {first:.2f} s (draws the graph), then {then:.2f} s")
    print(
        f"  baseline run.save (JSON run file): {statistics.median(json_times):.2f} s CPU "
        f"(min {min(json_times):.2f}, max {max(json_times):.2f}); file {json_size / 1e6:.2f} MB"
    )
    print(
        f"  ratio save_html / save: {statistics.median(ratios):.2f}× "
        f"(min {min(ratios):.2f}×, max {max(ratios):.2f}×)"
    )
    if opened is not None:
        print(f"  opened in Chromium from file:// in {opened:.2f} s (best of 3)")


if __name__ == "__main__":
    main(sys.argv[1:])
