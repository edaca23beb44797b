"""Draws the README's picture of a run: `.venv/bin/python docs/pictures.py` (needs `dot`).

The run is the README's quick start, a fan-out whose join is END; the picture is the graph
with the run drawn over it (`run.draw()`), written to `docs/run.svg`.

The inspector's screenshots need a browser: the browser tests take them and, with
`NBGRAPH_UPDATE_SCREENSHOT=1`, copy them here — `inspector.png` (tests/e2e/test_browser.py),
`inspector-200-tasks.png` and `drawing-dark.png` (tests/e2e/test_browser_legible.py),
`inspector-fitted.png` (tests/e2e/test_browser_follow.py: the fitted picture following step
12 of a 200-node graph).
"""

import operator
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


def main() -> None:
    svg = quick_start_run().draw().pipe(format="svg").decode("utf-8")
    target = Path(__file__).with_name("run.svg")
    target.write_text(svg, encoding="utf-8")
    print(f"wrote {target} ({len(svg):,} characters)")


if __name__ == "__main__":
    main()
