"""docs/many-runs.md's picture is the drawing of its example's batch, and the README's line on
many runs says what the benchmark measured (benchmarks/README.md, "Many runs")."""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _pictures():
    spec = importlib.util.spec_from_file_location("pictures", ROOT / "docs" / "pictures.py")
    pictures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pictures)
    return pictures


def test_the_many_runs_page_shows_the_paths_its_example_took():
    page = (ROOT / "docs" / "many-runs.md").read_text(encoding="utf-8")
    assert "](many-runs-paths.svg)" in page
    svg = (ROOT / "docs" / "many-runs-paths.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    runs = _pictures().many_runs_batch()
    assert len(runs) == 200 and len(runs.failed) == 40
    for text in ("paths taken by 200 runs", "80 (40 failed)", "40 failed", ">failed<", ">END<"):
        assert text in svg, text
    for node in ("classify", "billing", "tech", "desk"):
        assert f">{node}<" in svg, node


def _quoted_ratio() -> float:
    """The ratio of `runs.effects` + `runs.paths()` to making the runs, as benchmarks/README.md
    quotes it (the bold cell of the many-runs tables row)."""
    text = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    section = text[text.index("\n## Many runs (`many_runs.py`)") :]
    rows = [line for line in section.splitlines() if line.startswith("| **`runs.effects` + ")]
    row = rows[0]
    return float(re.findall(r"\*\*([0-9.]+)\*\*", row)[-1])


def test_the_readme_claims_what_the_many_runs_benchmark_measured():
    line = next(
        line
        for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("- [Many runs](docs/many-runs.md)")
    )
    assert "`runs.effects`, `runs.steps` and `runs.paths()` are one DataFrame each" in line
    assert "at 10,000 runs, effects and paths in under 0.2× the time to make the runs" in line
    assert "(benchmarks/README.md#many-runs-many_runspy)" in line
    assert _quoted_ratio() <= 0.2
    assert "`runs.draw_paths()`" in line and "`tests/notebook/test_runs_tables.py`" in line
    source = (ROOT / "tests" / "notebook" / "test_runs_tables.py").read_text(encoding="utf-8")
    assert "def test_the_batch_tables_are_every_runs_own_tables(" in source
    assert "def test_the_paths_drawing_counts_runs_marks_failures_and_escapes_names(" in source
