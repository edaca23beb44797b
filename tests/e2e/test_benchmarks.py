"""The nbgraph-against-LangGraph table (benchmarks/compare.py) runs, at tiny sizes, end to end."""

import importlib.util
import re
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

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
            assert re.match(r"[\d.]+ MB", cells[5]), cells
        else:
            assert re.match(r"[\d,.]+ µs/(step|task|checkpoint)", cells[1]), cells
        if with_langgraph:
            assert re.fullmatch(r"\d+(\.\d+)?×", cells[3]), cells
            assert float(cells[3].rstrip("×")) > 0
    nbgraph_only = (
        "run.effects",
        "run.state_at",
        "inspector",
        "gc off",
        "retained per step",
        "floor",
    )
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


def _check_module(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    for name in ("check", "compare", "timing"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import check
    import compare

    return check, compare


def test_check_reads_the_committed_table_of_the_readme(monkeypatch):
    check, _ = _check_module(monkeypatch)
    ratios = check.committed_ratios((BENCHMARKS / "README.md").read_text(encoding="utf-8"))
    assert ratios["self-loop, 1,000 steps"] > 1
    assert any(label.startswith("get_state_history") for label in ratios)
    assert ratios["nbgraph only: record retained per step, loop 1,000"] is None


def test_check_reports_a_row_made_worse_and_not_one_made_better(monkeypatch, capsys, tmp_path):
    """Fed rows (no timing): a ratio that fell by more than its rounds' spread is reported
    and makes the exit code 1; one that rose, or fell within the noise, is not."""
    check, compare = _check_module(monkeypatch)
    committed = (
        "## Results\n\n"
        "| workload | nbgraph median | LangGraph median | LangGraph/nbgraph | target |\n"
        "| --- | --- | --- | --- | --- |\n"
        "| loop | 1 µs/step | 10 µs/step | 10.0× | ≥10× |\n"
        "| history | 1 µs/checkpoint | 2 µs/checkpoint | 2.0× |  |\n"
        "| sends | 1 µs/task | 50 µs/task | 50.0× |  |\n"
        "| nbgraph only: effects | — | — | — |  |\n"
        "\n| target | this run |\n| --- | --- |\n| loop | 3.0× |\n"
    )
    assert check.committed_ratios(committed) == {
        "loop": 10.0,
        "history": 2.0,
        "sends": 50.0,
        "nbgraph only: effects": None,
    }

    def row(label, ratio, rounds=()):
        made = compare.Row(label, "step")
        made.ratio, made.round_ratios = ratio, list(rounds)
        return made

    steady = [row("loop", 10.5, [10.2, 10.5, 10.9]), row("history", 2.1), row("sends", 49.0)]
    text, code = check.report(steady, committed)
    assert code == 0 and "0 regressed" in text, text

    worse = [row("loop", 7.0, [6.9, 7.0, 7.2]), row("history", 5.0), row("sends", 49.0)]
    text, code = check.report(worse, committed)
    assert code == 1, text
    fell = text.split("REGRESSED:")[1].split("within the noise")[0]
    assert "loop: 10.0× committed, 7.0× now (-30%" in fell and "history" not in fell, text

    noisy = [row("loop", 7.0, [4.0, 7.0, 12.0])]  # rounds spread ±114%: within the noise
    assert check.report(noisy, committed)[1] == 0

    new = [row("agent, langchain messages", 5.0), row("nbgraph only: effects", None)]
    text, code = check.report(new, committed)
    assert code == 0 and "not in the committed table" in text and "nothing compared" in text

    readme = tmp_path / "README.md"
    readme.write_text(committed, encoding="utf-8")
    monkeypatch.setattr(compare, "table", lambda rows: "")  # the run, faked: no timing

    def measured(label, *args, **kwargs):
        made = row(label, 1.0, [1.0])
        made.times = {"nbgraph": 1e-6, "LangGraph": 1e-6}
        made.memory_bytes = {"nbgraph": 1}
        return made

    monkeypatch.setattr(compare, "compare", measured)
    monkeypatch.setattr(compare, "growth_without_gc", lambda *a: row("gc", None))
    monkeypatch.setattr(compare, "warm_retained", lambda case: 1)
    monkeypatch.setattr(compare, "record_rows", lambda *a: [])
    monkeypatch.setattr(compare, "loop_case", lambda *a, **k: None)
    try:
        compare.main(["--quick", "--check", "--readme", str(readme)])
    except SystemExit as stop:
        assert stop.code == 0
    assert "--check: 0 rows compared" in capsys.readouterr().out


OLD_VS_NEW = [
    "self-loop, 20 steps",
    "self-loop, 50 steps",
    "self-loop + MemorySaver, 20 steps",
    "self-loop + SqliteSaver (file), 20 steps",
    "fan-out 5 + waiting join",
    "10 Sends + reduce",
    "agent, 20 nodes, add_messages, 5 rounds",
    "agent, 20 nodes, add_messages, langchain messages, 5 rounds",
    "get_state_history, 20-step thread, memory saver",
    "get_state_history, 20-step thread, sqlite saver",
]


def test_old_vs_new_quick_times_this_tree_against_a_renamed_copy_of_itself(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    for name in ("old_vs_new", "compare", "timing"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import old_vs_new

    old_vs_new.main(["--quick", "--before", str(BENCHMARKS.parent)])
    out = capsys.readouterr().out
    rows = {}
    for line in out.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[cells[0]] = cells
    assert set(OLD_VS_NEW) <= set(rows), out
    per_unit = r"[\d,.]+ µs/(step|task|checkpoint)"
    for name in OLD_VS_NEW:
        cells = rows[name]
        if "langchain" in name and importlib.util.find_spec("langchain_core") is None:
            continue
        for cell in (cells[1], cells[2], cells[5], cells[6]):
            assert re.fullmatch(per_unit, cell), cells
        for ratio, spread in ((cells[3], cells[4]), (cells[7], cells[8])):
            assert re.fullmatch(r"\d+\.\d\d×", ratio) and float(ratio.rstrip("×")) > 0, cells
            assert re.fullmatch(r"\d+\.\d\d\.\.\d+\.\d\d", spread), cells
    assert "none using the current nbgraph" in out, out
    assert not any(name.startswith("nbgraph_before") for name in sys.modules)


def test_old_vs_new_rewrites_the_copy_to_its_own_name(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    monkeypatch.delitem(sys.modules, "old_vs_new", raising=False)
    import old_vs_new

    source = (
        "import nbgraph.engine\nfrom nbgraph import messages\nfrom nbgraph.checkpoint import x\n"
        'importlib.import_module(f"nbgraph.messages.{name}")\n'
        'ok = module.startswith("nbgraph.") and kind == "nbgraph"\n'
        'table = "nbgraph_meta"\n'
    )
    assert old_vs_new.rewrite(source) == (
        "import nbgraph_before.engine\nfrom nbgraph_before import messages\n"
        "from nbgraph_before.checkpoint import x\n"
        'importlib.import_module(f"nbgraph_before.messages.{name}")\n'
        'ok = module.startswith("nbgraph_before.") and kind == "nbgraph"\n'
        'table = "nbgraph_meta"\n'
    )


def test_looking_quick_times_every_operation_against_the_run(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    monkeypatch.delitem(sys.modules, "looking", raising=False)
    import looking

    results = looking.main(["--quick"])
    out = capsys.readouterr().out
    operations = list(looking.operations("unused"))
    for workload in looking.WORKLOADS:
        for size, measured in results[workload].items():
            assert list(measured.ops) == operations and measured.file_bytes > 0
            assert all(r > 0 for op in operations for r in measured.ratios(op)), (size, out)
        for op in operations:  # a row per operation and workload, with the growth column
            row = next(line for line in out.splitlines() if f"| {workload} | {op} |" in line)
            assert re.search(r"\| [\d.]+× \|", row), row


def test_looking_million_row_times_a_long_run_against_a_short_one(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    monkeypatch.delitem(sys.modules, "looking", raising=False)
    import looking

    monkeypatch.setattr(looking, "SMALL_RUN", 50)
    monkeypatch.setattr(looking, "SMALL_REPEATS", 2)
    assert looking.main(["--million", "300"]) == {}
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "| flat self-loop, collector on |" in line)
    assert re.search(r"\| [\d.]+ µs/step \| [\d.]+ µs/step \| [\d.]+× \(", row), row
    assert "300 steps" in out and "50 steps" in out
