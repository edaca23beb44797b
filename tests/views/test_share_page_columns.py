"""The shared page reads an effect row's cells by name, through the column names its data
gives once (`effectColumns`): columns in another order still land in the right cells, and a
column the script needs but the data lacks is an error, not a silent shift."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from nbgraph.views.share_html import EFFECT_CELLS

SCRIPT = Path(__file__).parents[2] / "nbgraph" / "views" / "static" / "share_html.js"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs node")


def _function(source: str, name: str) -> str:
    start = source.index(f"  function {name}(")
    end = source.index("\n  }\n", start)
    return source[start : end + 4]


def _show_effects(columns: list[str], rows: list[list]) -> dict:
    """`showEffects` of the page's script on one step's rows, with a stand-in for the DOM."""
    source = SCRIPT.read_text(encoding="utf-8")
    program = "\n".join(
        [
            "var CHANGED = 1, NOT_APPLIED = 2, CONFLICT = 4, FAILED = 1, PAUSED = 2;",
            "function text(x) { return x; }",
            "var document = { createElement: function () { return { cells: [] }; } };",
            "function cell(tr, value, className) { tr.cells.push([value, className || '']); }",
            "function table(headings, rows) { return { headings: headings, rows: rows }; }",
            "var shown = null; function fill(id, t) { shown = t; }",
            _function(source, "columnReader"),
            _function(source, "paused"),
            _function(source, "showEffects"),
            f"var effect = columnReader({json.dumps(columns)});",
            f"showEffects([2, [], {json.dumps(rows)}, [], 1]);",
            "console.log(JSON.stringify({ headings: shown.headings,",
            "  rows: shown.rows.map(function (tr) { return tr.cells; }) }));",
        ]
    )
    out = subprocess.run(["node", "-e", program], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@needs_node
def test_the_page_reads_effect_cells_by_name_in_any_column_order():
    cells = {"field": "n", "reducer": "add", "before": "1", "writes": "a: 2", "after": "3"}
    for columns in (list(EFFECT_CELLS), list(reversed(EFFECT_CELLS))):
        row = [{**cells, "flags": 1 | 4}[name] for name in columns]
        shown = _show_effects(columns, [row])
        assert shown["headings"] == ["field", "reducer", "before", "writes", "after", "note"]
        assert [value for value, _ in shown["rows"][0]] == [
            "n",
            "add",
            "1",
            "a: 2",
            "3",
            "conflict",
        ]
        assert shown["rows"][0][4][1] == "nbg-changed"


@needs_node
def test_a_column_the_data_lacks_is_an_error():
    columns = [name for name in EFFECT_CELLS if name != "after"]
    with pytest.raises(subprocess.CalledProcessError) as failed:
        _show_effects(columns, [[0] * len(columns)])
    assert "no column after" in failed.value.stderr


def test_the_script_never_reads_an_effect_cell_by_position():
    body = _function(SCRIPT.read_text(encoding="utf-8"), "showEffects")
    assert not re.search(r"\be\[\d\]", body)
    assert "effect(e, " in body
