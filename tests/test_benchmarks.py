"""The nbgraph-against-LangGraph table (benchmarks/compare.py) runs, at tiny sizes, end to end."""

import importlib.util
import re
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

WORKLOADS = [
    "self-loop, 20 steps",
    "self-loop, 50 steps",
    "self-loop, 100 steps",
    "self-loop + MemorySaver, 20 steps",
    "self-loop + SqliteSaver (file), 20 steps",
    "fan-out 5 + waiting join",
    "fan-out 10 + waiting join",
    "10 Sends + reduce",
    "30 Sends + reduce",
    "agent, 20 nodes, add_messages, 5 rounds",
    "get_state_history, 20-step thread, memory saver",
    "get_state_history, 20-step thread, sqlite saver",
    "retained memory, loop 40: nbgraph record vs LG MemorySaver",
]


def test_compare_quick_prints_every_workload(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    monkeypatch.delitem(sys.modules, "compare", raising=False)
    import compare

    with_langgraph = importlib.util.find_spec("langgraph") is not None
    compare.main(["--quick"])
    out = capsys.readouterr().out
    rows = {}
    for line in out.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[cells[0]] = cells
    assert set(WORKLOADS) <= set(rows), out
    for name in WORKLOADS:
        cells = rows[name]
        if name.startswith("retained"):
            assert re.match(r"[\d.]+ MB", cells[4]), cells
        else:
            assert re.match(r"[\d,.]+ µs/(step|task|checkpoint)", cells[1]), cells
        if with_langgraph:
            assert re.fullmatch(r"\d+(\.\d+)?×", cells[3]), cells
            assert float(cells[3].rstrip("×")) > 0
    nbgraph_only = ("run.effects", "run.state_at", "inspector", "gc off", "retained per step")
    for name in nbgraph_only:
        assert any(name in label for label in rows), name


def test_branch_lineages_against_supersteps_quick_prints_each_workload(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    for name in ("branches", "engine", "compare", "timing"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import branches

    branches.main(["--quick"])
    out = capsys.readouterr().out
    ratios = {}
    for label in ("self-loop, 50 steps", "fan-out 5 into a waiting join", "50 Sends"):
        line = next(row for row in out.splitlines() if row.startswith(label))
        ratios[label] = float(re.search(r"([\d.]+)x", line).group(1))
    assert all(ratio > 0 for ratio in ratios.values()), out
