"""A router's loop saved as a run document, and the damages to one of its steps that the run
file's checks must refuse (`tests/record/test_serialize.py` reads them whole,
`tests/record/test_run_file_steps.py` step by step)."""

import json
from typing import TypedDict

from nbgraph import END, START, Run, StateGraph


def loop_run() -> Run:
    """A router's loop: `tick` three times, then END."""

    class Count(TypedDict):
        count: int

    app = (
        StateGraph(Count)
        .add_node("tick", lambda s: {"count": s["count"] + 1})
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["count"] >= 3 else "tick")
        .compile()
    )
    return app.run({"count": 0})


def loop_document() -> dict:
    return json.loads(loop_run().to_json())


STEP_DAMAGES = {
    "a time as text": lambda step: step["tasks"][0].update(started="x"),
    "a time of nan": lambda step: step["tasks"][0].update(ended=float("nan")),
    "an index of 1.5": lambda step: step["tasks"][0].update(index=1.5),
    "a write of one item": lambda step: step["tasks"][0].update(writes=[["count"]]),
    "a write to a list": lambda step: step["tasks"][0].update(writes=[[["count"], 1]]),
    "a trigger 1": lambda step: step["tasks"][0].update(triggers=[1]),
    "routes of null": lambda step: step["tasks"][0].update(routes=None),
    "a task of step 99": lambda step: step["tasks"][0].update(step=99),
    "a node not in the graph": lambda step: step["tasks"][0].update(node="nowhere"),
    "no ended": lambda step: step["tasks"][0].pop("ended"),
    "a task that is a list": lambda step: step["tasks"].append([]),
    "a step number as text": lambda step: step.update(step="2"),
    "cleared holding a number": lambda step: step.update(cleared=[1]),
    "applied as 1": lambda step: step.update(applied=1),
    "resets of null": lambda step: step.update(resets=None),
    "an entry of its own": lambda step: step["tasks"][0].update(mine=1),
}


def step_view(step) -> tuple:
    names = "step index node kind triggers writes started ended returned arg parent from_cache"
    tasks = [[getattr(t, name) for name in names.split()] + [list(t.routes)] for t in step.tasks]
    return (step.step, tasks, step.written, step.cleared, step.applied)
