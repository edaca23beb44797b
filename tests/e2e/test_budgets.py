"""The speed gate: each main workload's calls and bytes per step within the budget committed in
`benchmarks/budgets.json` (counted by `benchmarks/budgets.py`; no timing, so no noise).

A change that makes the hot path do more on purpose raises the budget in the same commit:
`python benchmarks/budgets.py --write`, then commit `benchmarks/budgets.json` with it and say
why in the message. A speed-up lowers it the same way (a budget well above its count is
reported too: it would let a regression through).
"""

import importlib
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
HOW = (
    "\nTo change a budget on purpose: `python benchmarks/budgets.py --write`, and commit "
    "benchmarks/budgets.json in the same commit as the change, saying why."
)


@pytest.fixture(scope="module")
def budgets():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        for name in ("budgets", "compare", "timing"):
            sys.modules.pop(name, None)
        yield importlib.import_module("budgets")
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.fixture(scope="module")
def counts(budgets):
    return budgets.measure_all()


def test_every_workload_has_a_budget(budgets):
    assert set(budgets.load_budgets()) == set(budgets.WORKLOADS)


def test_calls_and_bytes_per_step_within_their_budgets(budgets, counts):
    committed = budgets.load_budgets()
    problems = [p for name, c in counts.items() for p in budgets.judge(name, c, committed[name])]
    assert not problems, "\n".join(problems) + "\n\n" + budgets.table(counts, committed) + HOW


def test_counting_is_reproducible(budgets, counts):
    """A second count in the same process agrees with the first within the slack the gate
    allows (the slack is what this test would need to widen if it failed)."""
    again = budgets.measure_all(["self-loop", "1,000 Sends", "self-loop + SqliteSaver"])
    for name, count in again.items():
        first = counts[name]
        assert abs(count.calls - first.calls) <= first.calls * budgets.CALLS_SLACK, name
        assert abs(count.python - first.python) <= first.python * budgets.CALLS_SLACK, name
        assert abs(count.bytes - first.bytes) <= first.bytes * budgets.BYTES_SLACK, name


def test_the_gate_sees_one_more_call_a_step(budgets, counts, monkeypatch):
    """One extra Python call in the self-loop's node, per step, is over the budget."""
    import compare

    real = compare.loop_nodes

    def loop_nodes_with_one_more_call(api, steps):
        tick, again = real(api, steps)

        def extra(x):
            return x

        def tick_more(state):
            return extra(tick(state))

        return tick_more, again

    monkeypatch.setattr(compare, "loop_nodes", loop_nodes_with_one_more_call)
    slower = budgets.measure_all(["self-loop"])["self-loop"]
    assert slower.python - counts["self-loop"].python == pytest.approx(2.0, abs=0.01)
    exact = budgets.budget_of(counts["self-loop"], budgets.WORKLOADS["self-loop"], {})
    problems = budgets.judge("self-loop", slower, exact)
    assert any("over its budget" in p for p in problems), problems


def test_a_budget_far_above_its_count_is_reported(budgets, counts):
    committed = {"unit": "step", "calls": counts["self-loop"].calls * 1.5}
    problems = budgets.judge("self-loop", counts["self-loop"], committed)
    assert problems and "lower the budget" in problems[0]
