"""`Run.compare` of two superstep runs (nbgraph/record/compare/steps.py): the same rows as
comparing the full state after every step, found in one forward replay of each run."""

from __future__ import annotations

import copy
import operator
from typing import Annotated, Any, TypedDict

import pytest

from nbgraph import END, START, StateGraph
from nbgraph.record.compare import steps as step_compare
from nbgraph.record.compare.messages import IDS_ONLY, compare_values
from nbgraph.types import MISSING


class S(TypedDict, total=False):
    n: int
    log: Annotated[list, operator.add]
    note: str
    flag: bool


def looping(steps: int, note_at: int = -1, fail_at: int = -1):
    def tick(state):
        n = state["n"]
        if n == fail_at:
            raise ValueError("stop")
        out: dict[str, Any] = {"n": n + 1, "log": [n % 3]}
        if n == note_at:
            out["note"] = f"at {n}"
        if n % 4 == 0:
            out["flag"] = n % 8 == 0
        return out

    return (
        StateGraph(S)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= steps else "tick")
        .compile()
    )


def run_of(steps: int, **kwargs: Any):
    app = looping(steps, **kwargs)
    return app.run({"n": 0, "log": [], "note": "", "flag": False}, {"recursion_limit": steps + 9})


def every_step(this: Any, other: Any) -> list[tuple]:
    """The rows as comparing each step's whole state gives them (the quadratic reading)."""
    rows = []

    def tasks(run):
        return {s.step: [t.node for t in s.tasks if s.step > 0] for s in run.log.steps}

    def outcome(run, step):
        if step not in run.timeline.index:
            return "not reached"
        return "applied" if run.timeline.step_log(step).applied else "failed"

    def after(run, step):
        if step not in run.timeline.index or not run.timeline.step_log(step).applied:
            return {}
        return run.timeline.after(step)

    mine, theirs = tasks(this), tasks(other)
    for step in sorted(set(mine) | set(theirs)):
        if mine.get(step) != theirs.get(step):
            rows.append((step, "tasks", mine.get(step, []), theirs.get(step, []), ""))
        if outcome(this, step) != outcome(other, step):
            rows.append((step, "outcome", outcome(this, step), outcome(other, step), ""))
            continue
        here, there = after(this, step), after(other, step)
        for name in [*here, *(n for n in there if n not in here)]:
            left, right = here.get(name, MISSING), there.get(name, MISSING)
            difference = compare_values(left, right)
            if difference is None:
                continue
            if difference.said or difference.ids is None:
                rows.append((step, name, left, right, ""))
            else:
                rows.append((step, name, *difference.ids, IDS_ONLY))
    return rows


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"steps": 30}, {"steps": 30}),
        ({"steps": 30, "note_at": 5}, {"steps": 30}),  # differs from step 6 on, unwritten
        ({"steps": 30, "note_at": 5}, {"steps": 30, "note_at": 9}),  # ... until written again
        ({"steps": 30}, {"steps": 21}),  # one run stops early
        ({"steps": 30, "fail_at": 12}, {"steps": 30}),  # one run fails
        ({"steps": 30, "fail_at": 12}, {"steps": 30, "fail_at": 12, "note_at": 3}),
    ],
)
def test_the_rows_are_those_of_comparing_every_whole_state(a: dict, b: dict) -> None:
    this, other = run_of(**a), run_of(**b)
    for left, right in ((this, other), (other, this)):
        got = [tuple(row) for row in left.compare(right).itertuples(index=False)]
        assert got == every_step(left, right)


def count_work(monkeypatch: pytest.MonkeyPatch, steps: int) -> tuple[int, int]:
    """(steps replayed, values compared) by `compare` of two runs of `steps` steps."""
    from nbgraph.record import timeline

    counts = {"replayed": 0, "compared": 0}
    replay, compare = timeline.replay, step_compare.same  # (one step's replay: `replay_step`)

    def counted_replay(*args: Any) -> Any:
        counts["replayed"] += 1
        return replay(*args)

    def counted_compare(*args: Any) -> Any:
        counts["compared"] += 1
        return compare(*args)

    this, other = run_of(steps, note_at=2), run_of(steps)
    monkeypatch.setattr(timeline, "replay", counted_replay)
    monkeypatch.setattr(step_compare, "same", counted_compare)
    rows = this.compare(other)
    monkeypatch.undo()
    assert len(rows) == steps - 2  # `note` differs after every step from step 3 on
    return counts["replayed"], counts["compared"]


def test_compare_replays_each_run_once_and_compares_only_what_steps_wrote(monkeypatch) -> None:
    """Issue 28 (repros2/06): `compare` replayed each step from the nearest snapshot
    (quadratic: 4,000 steps took 20 s). Counted, not timed: 4x the steps is 4x the work."""
    small, large = count_work(monkeypatch, 250), count_work(monkeypatch, 1000)
    assert small[0] == 2 * (250 + 1)  # each run's steps (and its input step) replayed once
    assert large[0] == 2 * (1000 + 1)
    assert large[1] <= 4 * small[1] + 8  # fields compared: the ones the steps wrote
    assert large[1] <= 3 * 1000  # n, log, and flag every 4th step; never `note` again


def test_walk_gives_the_state_after_each_step_in_both_models() -> None:
    graph = StateGraph(dict, reducers={"log": "append"})
    for name in "abc":
        graph.add_node(name, lambda s, name=name: {"log": [name]})
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c")
    for run in (graph.compile().run({"log": []}), run_of(12, note_at=4)):
        walked = [(log.step, copy.deepcopy(values)) for log, values in run.timeline.walk()]
        assert walked == [(step, run.timeline.after(step)) for step in run.timeline.index]
    lineages = graph.compile(semantics="branches").run({"log": []})
    walked = [(log.step, values) for log, values in lineages.timeline.walk()]
    assert walked == [(step, lineages.timeline.after(step)) for step in lineages.timeline.index]
    assert walked[-1][1] == {"log": ["a", "b", "c"]}
