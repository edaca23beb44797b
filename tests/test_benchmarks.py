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
    "agent, 20 nodes, add_messages, langchain messages, 5 rounds",
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


def test_record_quick_measures_effects_and_the_inspector_against_the_run(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    for name in ("record", "timing"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import record

    record.main(["--quick"])
    out = capsys.readouterr().out
    assert "(d) run.effects and the inspector" in out, out
    rows = [line for line in out.splitlines() if "inspector opens" in line]
    assert [int(re.search(r"([\d,]+) steps", row).group(1).replace(",", "")) for row in rows] == [
        100,
        300,
        1000,
    ]
    for row in rows:
        ratios = [float(x) for x in re.findall(r"= +([\d.]+)x run", row)]
        assert len(ratios) == 4 and all(r > 0 for r in ratios), row
        effects_memory = ratios[1]
        assert effects_memory < 5, row  # one shared list per field: about the run's own size


def test_imports_quick_times_import_nbgraph_against_its_baselines(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    monkeypatch.delitem(sys.modules, "imports", raising=False)
    import imports

    imports.main(["--quick", "--top", "5"])
    out = capsys.readouterr().out
    for label in ("import nbgraph", "import nbgraph (no bytecode cache)", "import pydantic"):
        row = next(line for line in out.splitlines() if line.startswith(f"| {label} |"))
        assert re.search(r"\| [\d.]+ ms \([\d.]+-[\d.]+\) \| [\d.]+ ms \|$", row), row
    assert re.search(r"import nbgraph / import pydantic: [\d.]+x", out), out
    assert "pydantic loaded by import nbgraph: no" in out, out
    assert re.search(r"^ +[\d.]+ +[\d.]+  nbgraph$", out, re.MULTILINE), out
