"""Draws the README's picture of a run: `.venv/bin/python docs/pictures.py` (needs `dot`).

The run is the README's quick start, a fan-out whose join is END; the picture is the graph
with the run drawn over it (`run.draw()`), written to `docs/run.svg`. The many-runs page's
picture is the paths its example's batch took (`runs.draw_paths()`), written to
`docs/many-runs-paths.svg`.

The inspector's screenshots need a browser: the browser tests take them and, with
`NBGRAPH_UPDATE_SCREENSHOT=1`, copy them here — `inspector.png` (tests/e2e/test_browser.py),
`inspector-200-tasks.png` and `drawing-dark.png` (tests/e2e/test_browser_legible.py),
`inspector-fitted.png` (tests/e2e/test_browser_follow.py: the fitted picture following step
12 of a 200-node graph).
"""

import operator
import re
from pathlib import Path
from typing import Annotated, TypedDict

from nbgraph import END, START, StateGraph


class State(TypedDict):
    count: Annotated[int, "sum"]
    log: Annotated[list, operator.add]


def quick_start_run():
    app = (
        StateGraph(State)
        .add_node("a", lambda s: {"count": 1, "log": ["a"]})
        .add_node("b", lambda s: {"count": 2, "log": ["b"]})
        .add_node("c", lambda s: {"count": 3, "log": ["c"]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("a", "c")
        .add_edge(["b", "c"], END)
        .compile()
    )
    return app.run({"count": 0, "log": []})


def many_runs_batch():
    """The batch of docs/many-runs.md's example that draws its paths (run as written)."""
    page = Path(__file__).with_name("many-runs.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    example = next(block for block in blocks if "draw_paths()" in block)
    namespace: dict = {}
    exec(compile(example, "docs/many-runs.md", "exec"), namespace)
    return namespace["runs"]


def main() -> None:
    pictures = {
        "run.svg": quick_start_run().draw(),
        "many-runs-paths.svg": many_runs_batch().draw_paths(),
    }
    for name, picture in pictures.items():
        svg = picture.pipe(format="svg").decode("utf-8")
        target = Path(__file__).with_name(name)
        target.write_text(svg, encoding="utf-8")
        print(f"wrote {target} ({len(svg):,} characters)")


if __name__ == "__main__":
    main()
