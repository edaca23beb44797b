"""Values a user recognises and a pause called a pause (issue 37, items 5, 7 and 10): a
DataFrame shown as a small table, a long text's change marked, quotes kept in every table,
numpy scalars and durations as numbers people read, one word (`MISSING`) for no value, cells
that wrap instead of pushing columns off-screen; a run paused at `interrupt()` reads
"paused" in the inspector, the effects, the repr and the shared page, its question once, and
the notebook's run follows an answer given in the inspector. Headless: HTML as text."""

from __future__ import annotations

import json
import operator
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Annotated, Any, TypedDict

import numpy as np
import pandas as pd
import pytest

from nbgraph import END, START, MemorySaver, StateGraph, interrupt
from nbgraph.views import share_html
from nbgraph.views.panels import state_html
from nbgraph.views.share_html import run_page
from nbgraph.views.step_list import tasks_text
from nbgraph.views.text_diff import changed_text_html, common_ends

EVIL = "<img src=x onerror=alert(1)>"
LONG_BEFORE = "A" * 2500 + "B" + "A" * 2500
LONG_AFTER = "A" * 2500 + "C" + "A" * 2500


class S(TypedDict, total=False):
    df: Any
    text: str
    calls: Annotated[list, operator.add]
    ok: Any
    n: Any


def values_run():
    """a writes a DataFrame, a long text, a call, a numpy bool and float; b changes one
    character in the middle of the text and adds a column."""

    def a(state):
        frame = pd.DataFrame({"x": [1, 2, 3], "y": ["a", EVIL, "c"]})
        return {"df": frame, "text": LONG_BEFORE, "calls": [("fetch", "JPY")],
                "ok": np.True_, "n": np.float64(1.5)}  # fmt: skip

    def b(state):
        return {"text": LONG_AFTER, "calls": [("fetch", "USD")], "df": state["df"].assign(z=1)}

    graph = StateGraph(S).add_node("a", a).add_node("b", b)
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("b", END)
    return graph.compile().run({"calls": []})


# --- values -------------------------------------------------------------------------------


def test_a_dataframe_in_the_state_is_a_small_table_not_pandas_internals():
    run = values_run()
    shown = state_html(run.state_at(2))
    assert "_mgr" not in shown and "BlockManager" not in shown
    assert "DataFrame 3×3 [x, y, z]" in shown and "<table" in shown
    assert EVIL not in shown and "&lt;img" in shown  # a cell's value, escaped
    inspector = run.inspect()
    inspector.go(1)
    assert "_mgr" not in inspector.state.value and "DataFrame 3×2 [x, y]" in inspector.state.value
    effects = run.effects._repr_html_()
    assert "DataFrame 3×2 [x, y]" in effects and "DataFrame 3×3 [x, y, z]" in effects
    series = state_html({"s": pd.Series(range(10), name="x")})
    assert "Series x (10 rows)" in series and "5 more rows" in series


def test_a_long_texts_change_is_marked_in_the_inspector_and_the_effects_table():
    run = values_run()
    inspector = run.inspect()
    inspector.go(2)
    summary = run._repr_mimebundle_()["text/html"]
    for html in (inspector.effects.value, run.effects._repr_html_(), summary):
        assert "<del>B</del><ins>C</ins>" in html
        assert "…2,488 same…" in html  # the common beginning and end counted, not shown


class Chat(TypedDict, total=False):
    transcript: Annotated[str, operator.add]


def test_a_transcript_grown_at_its_end_shows_what_was_added_without_comparing():
    app = (
        StateGraph(Chat)
        .add_node("talk", lambda s: {"transcript": f"turn {len(s['transcript'])}|"})
        .add_conditional_edges("talk", lambda s: END if len(s["transcript"]) > 3e6 else "talk")
        .add_edge(START, "talk")
        .compile()
    )
    run = app.with_config(recursion_limit=100).run({"transcript": "x" * 3_000_000})
    cell = run.effects["after"].iloc[-1]
    assert type(cell).__name__ == "TextPrefix"  # (the case that must not join nor compare)
    inspector = run.inspect()
    inspector.go(inspector.steps[-1])
    assert (
        "<ins>turn 3000" in inspector.effects.value
        and "…2,999,988 same…" in inspector.effects.value
    )
    assert "{+turn 3000" in run_page(run)  # the shared page marks it in words


def test_the_change_is_found_exactly_and_read_at_c_speed():
    rng = random.Random(37)
    for _ in range(300):
        old = "".join(rng.choice("ab") for _ in range(rng.randrange(0, 40)))
        new = "".join(rng.choice("ab") for _ in range(rng.randrange(0, 40)))
        start, end = common_ends(old, new)
        naive = 0
        while naive < min(len(old), len(new)) and old[naive] == new[naive]:
            naive += 1
        assert start == naive
        assert end <= min(len(old), len(new)) - start
        assert old[len(old) - end :] == new[len(new) - end :]
        if end < min(len(old), len(new)) - start:  # the end cannot grow by one more
            assert old[len(old) - end - 1] != new[len(new) - end - 1]
    big = "x" * 5_000_000
    assert common_ends(big + "1" + big, big + "2" + big) == (5_000_000, 5_000_000)
    marked = changed_text_html("<" * 100 + EVIL, "<" * 100 + "ok")
    assert marked is not None and EVIL not in marked and "<ins>ok</ins>" in marked


def test_every_table_keeps_quotes_and_shows_numbers_and_booleans_plainly():
    run = values_run()
    pieces = {
        "effects": run.effects._repr_html_(),
        "states": run.states._repr_html_(),
        "history": run.field_history("calls")._repr_html_(),
        "diff": run.diff(1, 2)._repr_html_(),
        "repr": run._repr_mimebundle_()["text/html"],
    }
    for name, html in pieces.items():
        assert "(&#x27;fetch&#x27;, &#x27;USD&#x27;)" in html, name  # quotes kept
        assert "(fetch, USD)" not in html, name
    for name in ("effects", "states", "repr"):
        assert "np.True_" not in pieces[name] and "np.float64" not in pieces[name], name
        assert ">True<" in pieces[name] and ">1.5<" in pieces[name], name
    assert re.search(r"max-width: ?30em", pieces["repr"])  # a long value wraps in its column
    assert "max-width:30em" in pieces["effects"]


def test_slices_of_a_table_keep_quotes_as_the_whole_table_does():
    run = values_run()
    effects = run.effects
    rows = effects["field"] == "calls"
    quoted = "(&#x27;fetch&#x27;, &#x27;JPY&#x27;)"
    for name, piece in {
        "head": effects.head(),
        "columns": effects[["field", "after"]],
        "loc": effects.loc[rows],
        "loc columns": effects.loc[rows, ["step", "writes"]],
        "iloc": effects.iloc[:5],
        "query": effects.query("field == 'calls'"),
        "states": run.states.tail(2),
        "history": run.field_history("calls").iloc[-1:],
    }.items():
        html = piece._repr_html_()
        assert quoted in html and "(fetch, JPY)" not in html, name
    assert "compact view" in effects.head()._repr_html_()  # the rows keep the table's view
    assert ">True<" in effects[["field", "after"]]._repr_html_()  # not np.True_
    assert "max-width:30em" in effects[["field", "after"]]._repr_html_()
    assert ">MISSING<" in effects[["field", "before"]]._repr_html_()


def test_one_word_for_no_value_everywhere():
    run = values_run()
    inspector = run.inspect()
    inspector.go(1)
    assert "MISSING" in run.effects._repr_html_() and "MISSING" in inspector.effects.value
    assert ">—<" not in run.effects._repr_html_() and ">—<" not in inspector.effects.value
    assert "MISSING" in run.states._repr_html_()  # the fields not set before step 1
    assert '"MISSING"' in run_page(run)  # the shared page's before cell


def test_durations_are_in_units_in_the_batch_table():
    app = StateGraph(S).add_node("a", lambda s: {"ok": True}).add_edge(START, "a").compile()
    runs = app.run_many([{"calls": []}, {"calls": []}], progress=False)
    html = runs._repr_html_()
    assert re.search(r">\d[\d.]* (µs|ms|s)<", html), html
    assert not re.search(r">0\.0\d+<", html)


def test_the_batch_pickers_show_any_status_and_any_path():
    app = StateGraph(S).add_node("a", lambda s: {"ok": True}).add_edge(START, "a").compile()
    picker = app.run_many([{"calls": []}, {"calls": []}], progress=False).inspect()
    assert picker.status.index == 0 and picker.status.label == "any status (2)"
    assert picker.path.index == 0 and picker.path.label == "any path"


# --- paused is not failed -----------------------------------------------------------------


class Asked(TypedDict, total=False):
    a: str
    log: Annotated[list, operator.add]


def paused_run():
    """ask (asks `EVIL`) and note run in one step: note's write waits with the pause."""
    app = (
        StateGraph(Asked)
        .add_node("ask", lambda s: {"a": interrupt({"question": EVIL})})
        .add_node("note", lambda s: {"log": ["noted"]})
        .add_edge(START, "ask")
        .add_edge(START, "note")
        .add_edge("ask", END)
        .compile(checkpointer=MemorySaver())
    )
    return app.run({"log": []}, {"configurable": {"thread_id": "values37"}})


def test_a_paused_run_reads_paused_in_every_view():
    run = paused_run()
    assert run.status == "interrupted"  # LangGraph's word, unchanged
    assert repr(run) == "<Run paused (waiting for an answer): 1 superstep, 2 tasks>"
    inspector = run.inspect()
    inspector.go(1)
    assert "— <b>paused</b>" in inspector.step_label.value
    assert "failed" not in inspector.step_label.value
    assert "paused for an answer" in inspector.effects.value
    assert "the step failed" not in inspector.effects.value
    table = run.effects._repr_html_()
    assert "paused for an answer" in table and "the step failed" not in table
    assert "run paused" in inspector.graph.caption
    summary = run._repr_mimebundle_()["text/html"]
    assert "failed" not in summary.split("<svg")[0]
    assert "paused for an answer" in summary and "the step failed" not in summary
    page = run_page(run)
    assert "status: paused (waiting for an answer)" in page and "status: interrupted" not in page


def test_the_question_is_shown_once():
    run = paused_run()
    inspector = run.inspect()
    inspector.go(1)
    shown = inspector.error.value + "".join(
        getattr(child, "value", "")
        for row in inspector.answer_panel.rows
        for child in row.box.children
    )
    assert shown.count("question") == 1, shown
    assert "waiting for an answer" in inspector.error.value


def test_the_notebooks_run_follows_an_answer_given_in_the_inspector():
    run = paused_run()
    inspector = run.inspect()
    panel = inspector.answer_panel
    panel.rows[0].mode.value = "text"
    panel.rows[0].text.value = "yes"
    panel.button.click()
    assert inspector.run is run and run.status == "done", panel.status.value
    assert run.output["a"] == "yes" and repr(run).startswith("<Run done")
    assert panel.rows == [] and "Resumed" in panel.status.value


def test_the_answer_as_picker_has_room_for_its_options():
    inspector = paused_run().inspect()
    mode = inspector.answer_panel.rows[0].mode
    assert mode.style.description_width == "initial"
    assert mode.layout.width not in ("140px", None)


# --- smaller ------------------------------------------------------------------------------


def test_counts_are_singular_for_one():
    assert tasks_text(["a", "b", "c", "d", "e"]) == "a, b, c, d and 1 other node"
    app = StateGraph(S).add_node("a", lambda s: {"ok": 1}).add_edge(START, "a").compile()
    run = app.run({"calls": []})
    assert repr(run) == "<Run done: 1 superstep, 1 task>"
    assert "1 superstep, 1 task" in run.inspect().graph.caption


def test_every_count_of_one_reads_singular():
    from nbgraph import InMemoryCache
    from nbgraph.store.memory import InMemoryStore
    from nbgraph.views.display import drawing_text

    app = StateGraph(S).add_node("a", lambda s: {"ok": 1}).add_edge(START, "a").compile()
    assert repr(app).endswith(": 1 node>")
    store = InMemoryStore()
    store.put(("ns",), "k", {"v": 1})
    assert repr(store) == "<InMemoryStore: 1 item in 1 namespace>"
    assert repr(InMemoryCache()) == "InMemoryCache(0 entries)"
    drawing = app.draw()
    drawing.nbgraph_ids = {"a": "n2"}
    assert drawing_text(drawing).startswith("<nbgraph drawing of 1 box:")


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's script")
def test_the_shared_pages_counts_read_singular_for_one():
    source = (Path(share_html.__file__).parent / "static" / "share_html.js").read_text()
    assert '" more tasks' not in source and '" more subruns' not in source
    start = source.index("  function plural(")
    program = source[start : source.index("\n  }\n", start) + 4] + (
        "console.log(JSON.stringify([plural(1, 'more task'), plural(3, 'more subrun')]));"
    )
    out = subprocess.run(["node", "-e", program], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == ["1 more task", "3 more subruns"]


def test_the_effects_panel_heading_is_apart_from_its_text():
    app = StateGraph(S).add_node("a", lambda s: {}).add_edge(START, "a").compile()
    inspector = app.run({"calls": []}).inspect()
    inspector.go(1)
    assert "reducer effects</b><br>" in inspector.effects.value


def convert_rate(state):
    raise ValueError("no rate for " + EVIL)


def test_the_shared_page_of_a_failed_run_shows_the_users_frame_first():
    app = StateGraph(S).add_node("convert", convert_rate).add_edge(START, "convert").compile()
    run = app.run({"calls": []})
    page = run_page(run)
    data = json.loads(re.search(r'id="nbgraph-data"[^>]*>(.*?)</script>', page, re.S)[1])
    error = data["strings"][data["error"]]
    first = error.splitlines()[:3]
    assert first[0] == f"ValueError: no rate for {EVIL}"
    line = convert_rate.__code__.co_firstlineno + 1
    assert first[1] == f"raised in convert_rate (test_values_shown.py, line {line})"
    assert "raise ValueError" in first[2]
    assert error.index("raised in convert_rate") < error.index("Traceback")
    assert "<img" not in page.split('id="nbgraph-data"')[1].split("</script>")[0]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's script")
def test_the_shared_page_says_paused_in_a_paused_steps_effects_and_not_in_red():
    source = (Path(share_html.__file__).parent / "static" / "share_html.js").read_text()

    def function(name: str) -> str:
        start = source.index(f"  function {name}(")
        return source[start : source.index("\n  }\n", start) + 4]

    program = "\n".join(
        [
            "var FAILED = 1, PAUSED = 2, NOT_APPLIED = 2, CONFLICT = 4, CHANGED = 1;",
            "var R = {error: -1}; function text(x) { return x; }",
            "var made = []; var boxes = {};",
            "var document = {createElement: function (t) {",
            "  var e = {tag: t, children: [], className: '', textContent: '',",
            "    appendChild: function (c) { this.children.push(c); }};",
            "  made.push(e); return e; }};",
            "function $(id) { return boxes[id] = boxes[id] || document.createElement(id); }",
            "function cell(tr, value, className) { var td = document.createElement('td');",
            "  td.textContent = value; td.className = className || ''; tr.appendChild(td); }",
            "function fill(id, what) { boxes[id] = what; }",
            "function table(headings, rows) { return rows; }",
            *(function(name) for name in ("summary", "paused", "showStopped", "showEffects")),
            function("columnReader"),
            f"var effect = columnReader({json.dumps(list(share_html.EFFECT_CELLS))});",
            "var cells = {field: 'log', reducer: 'add', before: '[]', writes: 'note: [1]',",
            "  after: '[1]', flags: NOT_APPLIED};",
            f"var names = {json.dumps(list(share_html.EFFECT_CELLS))};",
            "var step = [1, [['ask', PAUSED], ['note', 0]],",
            "  [names.map(function (name) { return cells[name]; })], [], 0];",
            "showStopped(step, true); showEffects(step);",
            "var notes = boxes['nbg-effects'][0].children[5];",
            "var said = boxes['nbg-stopped'].children.map(function (p) {",
            "  return [p.textContent, p.className]; });",
            "console.log(JSON.stringify([said, notes.textContent, notes.className]));",
        ]
    )
    out = subprocess.run(["node", "-e", program], capture_output=True, text=True, check=True)
    said, note, kind = json.loads(out.stdout)
    assert said == [["Paused here, waiting for an answer: ask.", "nbg-paused"]]
    assert note == "paused (waiting for an answer)" and kind == "nbg-paused"
