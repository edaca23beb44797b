"""An inspector and drawings people can read (issue 30, "legible at any size" and "honest
widgets"): captions outside the picture, themed drawings, wide fan-outs summarised, many
tasks summed up, long tables folded, one task of a `Send` fan-out followed, only the
controls that apply, END drawn connected, unknown durations said. Headless: the DOT source
and the widgets' state (label sizes, fading and the dark theme measured in a browser:
tests/e2e/test_browser_legible.py)."""

import math
import operator
import re
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, Send, StateGraph
from nbgraph.views.drawings.dot import FADED_FILL, FADED_TEXT
from nbgraph.views.drawings.render import render_svg, render_with, renderers
from nbgraph.views.drawings.theme import FADED
from nbgraph.views.panels.panels import ROWS_SHOWN, WRITES_SHOWN, effects_html

EVIL = "<img src=x onerror=alert(1)>"


class S(TypedDict, total=False):
    out: Annotated[list, operator.add]
    note: str


def fan_out_run(tasks: int = 200):
    """plan sends `tasks` tasks to one node, work; the step of work ×tasks."""
    graph = StateGraph(S).add_node("plan", lambda s: {"note": "go"})
    graph.add_node("work", lambda s: {"out": [s["note"]]})
    graph.add_edge(START, "plan").add_edge("work", END)
    graph.add_conditional_edges("plan", lambda s: [Send("work", {"note": i}) for i in range(tasks)])
    return graph.compile().run({"out": []})


def wide_run(nodes: int = 200):
    """plan -> `nodes` nodes -> join: a graph `nodes` wide."""
    graph = StateGraph(S).add_node("plan", lambda s: {}).add_node("join", lambda s: {})
    graph.add_edge(START, "plan").add_edge("join", END)
    for i in range(nodes):
        graph.add_node(f"n{i:03d}", lambda s, i=i: {"out": [i]})
        graph.add_edge("plan", f"n{i:03d}").add_edge(f"n{i:03d}", "join")
    return graph.compile().run({"out": []})


def labels(source: str) -> dict[str, str]:
    """DOT node id -> its whole line."""
    return {m[1]: m[0] for m in re.finditer(r"^\s*(n\d+) \[.*$", source, re.M)}


# --- legible at any size -------------------------------------------------------------------


def test_the_caption_is_outside_the_inspectors_picture_and_wrapped_in_a_drawing():
    run = fan_out_run(3)
    inspector = run.inspect()
    assert "run done" in inspector.graph.caption and "run done" not in inspector.graph.value
    assert "max-width:100%" not in inspector.graph.value  # kept at its size: it scrolls
    long = run.draw(branch=run.steps.task_id.iloc[-1]).source
    caption = re.search(r'^\s*label="(.*)" labelloc=t', long, re.M).group(1).split("\\n")
    assert len(caption) > 1 and max(map(len, caption)) <= 92  # wrapped, never one long line


def test_a_200_node_graph_is_drawn_as_a_few_boxes_and_a_summary():
    run = wide_run(200)
    source = run.draw().source
    assert "… 192 more nodes" in source and "n008 … n199" in source
    assert "192 ran, ×192 in all" in source
    assert source.count("n199") == 1 and '"n100' not in source  # named only in the box
    assert re.search(r"label=\"n007\\nran ×1\"", source)  # the first eight stay themselves
    if renderers():
        width = float(re.search(r'<svg width="(\d+)pt', render_svg(source).svg).group(1))
        assert width < 1200  # not the 8,000 pt of 200 boxes in one row
    assert "▶ 192 run this step" in run.draw(step=2).source
    assert "run this step" not in run.draw(step=1).source.split("more nodes")[1]
    small = wide_run(5).draw().source
    assert "more nodes" not in small and "n004" in small


def test_a_200_task_step_is_summed_up_and_its_writes_folded():
    inspector = fan_out_run(200).inspect()
    inspector.go(2)
    label = inspector.step_label.value
    assert "work ×200" in label and "work, work" not in label
    effects = inspector.effects.value
    assert f"… {200 - WRITES_SHOWN} more writes" in effects and "<details>" in effects
    assert effects.count("work: ") == 200  # every write is still there, folded
    lines = [label for label, _ in inspector.step_list.select.options]
    assert any("… 188 more: work ×188" in line for line in lines) and len(lines) < 40


def test_a_fan_outs_200_sends_fold_in_the_routing_panel():
    inspector = fan_out_run(200).inspect()
    inspector.go(1)
    routing = inspector.effects.value.split("routing after plan")[1]
    went = routing.split("went to: ")[1]
    shown, folded = went.split("<details>")
    assert shown.count("Send(") == 8 and "… 192 more</i></summary>" in folded
    assert folded.count("Send(") == 192  # every Send still there, folded


def test_many_rows_fold_and_the_flags_column_shows_only_when_a_row_has_a_flag():
    class Row:
        def __init__(self, field, conflict=False):
            self.field, self.before, self.after, self.reducer = field, 1, 2, "replace"
            self.writes, self.applied, self.changed = [("a", 2)], True, True
            self.conflict, self.overwrite_bypass, self.dropped_key, self.root_reset = (
                conflict,
                False,
                False,
                False,
            )

    rows = [Row(f"f{i}") for i in range(ROWS_SHOWN + 5)]
    shown = effects_html(rows)
    assert ">flags<" not in shown and "… 5 more fields" in shown
    assert ">flags<" in effects_html([Row("x", conflict=True)])
    assert "class='nbgraph-value'" in shown  # value cells get room, not word-by-word wraps


def test_writes_filtered_out_are_said_filtered_not_nothing():
    inspector = fan_out_run(3).inspect()
    inspector.go(1)
    inspector.fields.value = ("out",)  # plan wrote only "note"
    assert "this step wrote nothing" not in inspector.effects.value
    assert "filtered out by the field picker: note" in inspector.effects.value


def test_following_one_task_of_a_send_fan_out_fades_the_other_tasks_not_the_node():
    run = fan_out_run(200)
    inspector = run.inspect()
    inspector.go(2)
    followed = sorted(o for o in inspector.branch_pick.options if ":work" in str(o))
    task = next(t for t in run.log.steps[2].tasks if t.id == followed[37])
    index = [t.id for t in run.log.steps[2].tasks].index(task.id)
    inspector.branch_pick.value = task.id
    effects = inspector.effects.value
    assert effects.count(f"<span style='{FADED}'>work: ") == 199  # the other 199 tasks
    assert effects.count("<span style=''>work: ") == 1
    assert f"following task {index + 1} of 200 (step 2)" in inspector.graph.value
    assert f"following task {index + 1} of 200" in run.draw(branch=task.id).source


def test_faded_nodes_keep_a_light_box_with_mid_grey_text():
    run = fan_out_run(2)
    faded = labels(run.draw(step=1).source)
    work = next(line for line in faded.values() if re.search(r'label="?work', line))
    assert f'fontcolor="{FADED_TEXT}"' in work and f'fillcolor="{FADED_FILL}"' in work


# --- themed drawings -------------------------------------------------------------------------


@pytest.mark.skipif(not renderers(), reason="needs a graphviz renderer")
def test_stand_alone_drawings_and_the_runs_repr_follow_the_theme():
    run = fan_out_run(2)
    for drawing in (run.draw(), run.draw_tree()):
        bundle = drawing._repr_mimebundle_()
        svg = bundle["image/svg+xml"]
        assert "text/plain" in bundle and 'class="nbgraph-drawing"' in svg
        assert 'fill="white"' not in svg and "<style>" in svg  # no white slab, ink themed
    html = run._repr_mimebundle_()["text/html"]
    assert '<svg class="nbgraph-drawing"' in html and "var(--jp-content-font-color1" in html
    only_text = run.draw()._repr_mimebundle_(include=["text/plain"])
    assert list(only_text) == ["text/plain"] and ".source" in only_text["text/plain"]


# --- END drawn connected ---------------------------------------------------------------------


def test_end_is_connected_for_open_routers_and_nodes_without_a_way_out():
    graph = StateGraph(S).add_node("a", lambda s: {}).add_node("b", lambda s: {})
    graph.add_edge(START, "a").add_conditional_edges("a", lambda s: "b")
    source = graph.draw().source
    ids = {m[2]: m[1] for m in re.finditer(r"^\s*(n\d+) \[label=\"?([^\\\"\s]+)", source, re.M)}
    end = ids["END"]
    assert re.search(rf"n\d+ -> {end} \[label=\"or END\"", source)  # the router's diamond
    assert re.search(rf"{ids['b']} -> {end} \[label=\"no edge out\"", source)
    run = graph.compile().run({})
    assert re.search(rf"{ids['b']} -> {end} \[label=\"no edge out ×1\"", run.draw().source)


# --- honest widgets ----------------------------------------------------------------------------


def test_only_the_controls_that_apply():
    inspector = fan_out_run(2).inspect()
    assert inspector.subrun_nav.row.layout.display == "none"  # no subruns
    assert inspector.fork_panel.box.layout.display == "none"  # no checkpointer: one line why
    assert "not available" in inspector.fork_note.value
    assert "checkpointer" in inspector.fork_note.value
    from nbgraph.checkpoint import MemorySaver

    graph = StateGraph(S).add_node("a", lambda s: {"out": [1]}).add_edge(START, "a")
    app = graph.compile(checkpointer=MemorySaver())
    forkable = app.run({"out": []}, {"configurable": {"thread_id": "t"}}).inspect()
    assert forkable.fork_panel.box.layout.display == "" and forkable.fork_note.value == ""


def test_rows_of_controls_wrap_rather_than_squeeze_their_buttons():
    inspector = fan_out_run(2).inspect()
    rows = [c for c in inspector.children if "nbgraph-row" in c._dom_classes]
    assert len(rows) == 4 and inspector.play in rows[0].children


def test_a_task_whose_time_was_not_recorded_says_unknown_not_0_us():
    from nbgraph.record.tree import TreeNode
    from nbgraph.views.inspector.step_list import _options
    from nbgraph.views.panels.table_view import steps_table_html

    assert math.isnan(TreeNode("task:1:0:a", "task", 1, "a").duration)
    assert TreeNode("merge:1", "merge", 1, "merge").duration == 0.0
    run = fan_out_run(2)
    frame = run.steps.copy()
    frame.loc[frame.index[0], "duration"] = float("nan")
    assert ">unknown<" in steps_table_html(frame) and " µs<" in steps_table_html(run.steps)
    for task in run.log.steps[1].tasks:
        task.started = task.ended = 0.0
    lines = [label for label, _ in _options(run.log.steps[:2])]
    assert lines[1].endswith("time unknown") and "µs" not in lines[1] + lines[2]


def test_a_later_cells_code_moves_a_twin_never_the_output_shown_earlier():
    from ipywidgets.widgets.widget import _instances

    run = fan_out_run(3)
    inspector = run.inspect()
    cell = {"now": 7}
    inspector.earlier.now = lambda: cell["now"]  # (the kernel's running cell, as a test sets it)
    inspector._repr_mimebundle_()  # displayed by cell 7
    shown = inspector.model_id
    inspector.go(2)  # the same cell: its own output moves
    assert inspector.model_id == shown and not inspector.earlier.twins
    cell["now"] = 8  # a later cell follows a task and moves on
    task = run.log.steps[2].tasks[1].id
    inspector.follow(task)
    (twin,) = inspector.earlier.twins
    assert _instances[shown] is twin and twin.model_id == shown  # cell 7's output: the twin
    assert twin.step == 2 and twin.branch is None  # as cell 7 left it
    assert inspector.model_id != shown and inspector.branch == task  # the variable moves on
    bundle = inspector._repr_mimebundle_()  # shown by cell 8: its own model
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == inspector.model_id
    inspector.go(1)  # cell 8 again: no new twin
    cell["now"] = None  # a click in the front-end: the shown inspector moves
    inspector.go(2)
    assert len(inspector.earlier.twins) == 1 and twin.step == 2


# --- messages that fit, one task of a fan-out drawn, stacked ---------------------------------


def chat_run():
    """A model and a tools node over langchain messages (the shape of
    notebooks/07_langchain_agent.ipynb); step 3 appends the model's long answer."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from nbgraph import add_messages

    class Agent(TypedDict):
        messages: Annotated[list, add_messages]

    replies = iter(
        [
            AIMessage("", id="ai-1", tool_calls=[{"name": "weather", "args": {}, "id": "c1"}]),
            AIMessage(f"{EVIL} Paris: 18 °C, and no station in Atlantis " * 3, id="ai-2"),
        ]
    )
    graph = StateGraph(Agent).add_node("model", lambda s: {"messages": [next(replies)]})
    graph.add_node("tools", lambda s: {"messages": [ToolMessage("18 °C", tool_call_id="c1")]})
    graph.add_edge(START, "model").add_edge("tools", "model")
    graph.add_conditional_edges(
        "model", lambda s: "tools" if s["messages"][-1].tool_calls else END, ["tools", END]
    )
    return graph.compile().run({"messages": [HumanMessage("weather?", id="user-1")]})


def test_messages_in_the_effects_panel_one_a_line_in_a_table_a_narrow_panel_stacks():
    from nbgraph.views.inspector.clickable_graph import STATIC
    from nbgraph.views.panels.panels import EFFECTS_CLASS

    inspector = chat_run().inspect()
    inspector.go(3)
    effects = inspector.effects.value
    table = re.search(rf"<table class='{EFFECTS_CLASS}'.*?</table>", effects, re.S).group(0)
    cells = dict(re.findall(r"<td[^>]* data-label='([^']+)'[^>]*><div>(.*?)</div></td>", table))
    assert set(cells) == {"field", "before", "writes (in order)", "reducer", "after"}
    after = re.findall(r"<div class='nbgraph-message' style='([^']*)'>(.*?)</div>", cells["after"])
    assert [m.split("(")[0] for _, m in after] == [  # one message a line, the last three
        "<i>… 1 earlier message</i>", "AIMessage", "ToolMessage", "AIMessage"
    ]  # fmt: skip
    assert all("overflow-wrap:anywhere" in style for style, _ in after)  # long ones wrap
    assert "<img" not in effects and "&lt;img src=x onerror=alert(1)&gt;" in effects
    css = (STATIC / "clickable_graph.css").read_text()  # a narrow panel: each row a block
    assert "container-type: inline-size" in css and f"table.{EFFECTS_CLASS} td::before" in css
    assert "content: attr(data-label)" in css


def test_stacked_gives_the_step_list_the_picture_and_the_panels_the_whole_width():
    inspector = fan_out_run(3).inspect()
    steps = inspector.middle.children[0]
    boxes = (inspector.middle, steps, inspector.body, inspector.graph, inspector.panels)
    names = ("middle", "steps", "body", "graph", "panels")
    for box, name in zip(boxes, names, strict=True):  # laid out by the CSS, by class:
        assert f"nbgraph-{name}" in box._dom_classes, name  # no inline style from the
        assert box.layout.flex_flow is None and box.layout.width is None, name  # kernel
        assert box.layout.max_width is None and box.layout.flex is None, name
    assert inspector.arrangement.options == ("auto", "side by side", "stacked")
    assert inspector.arrangement.value == "auto" and "nbgraph-auto" in inspector._dom_classes
    inspector.arrange("stacked")
    assert "nbgraph-stacked" in inspector._dom_classes
    assert "nbgraph-auto" not in inspector._dom_classes
    from nbgraph.views.inspector.clickable_graph import STATIC

    css = (STATIC / "clickable_graph.css").read_text()
    rules = _rules(css)
    stacked = ".nbgraph-inspector.nbgraph-stacked .nbgraph-"
    for name in ("middle", "body"):  # stacked: one above the other, each the whole width
        assert rules[stacked + name]["flex-direction"] == "column", name
    for name in ("steps", "graph", "panels"):
        assert rules[stacked + name]["width"] == "100%", name
    assert rules[".nbgraph-inspector .nbgraph-graph"]["max-width"] == "50%"  # side by side
    assert rules[".nbgraph-inspector .nbgraph-steps"]["max-width"] == "34%"
    # auto: the same stacked rules, for the auto class, under a query on the inspector's width
    assert rules[".nbgraph-inspector"]["container"] == "nbgraph-inspector / inline-size"
    query = re.search(r"@container nbgraph-inspector \(max-width: (\d+)px\) \{(.*?)\n\}", css, re.S)
    assert query and 700 <= int(query.group(1)) <= 960, "narrower than three columns need"
    auto = _rules(query.group(2))
    for selector, declarations in rules.items():
        if selector.startswith(".nbgraph-inspector.nbgraph-stacked .nbgraph-"):
            assert auto[selector.replace("stacked", "auto")] == declarations, selector


def test_a_subrun_stepped_into_and_a_later_cell_s_twin_keep_the_layout_picked():
    inspector = fan_out_run(3).inspect()
    inspector.arrange("stacked")
    inspector.open_run(inspector.run, 1)  # (what stepping into a subrun and back does)
    assert inspector.arrangement.value == "stacked"
    assert "nbgraph-stacked" in inspector._dom_classes
    twin = inspector.earlier._twin()  # (what a later cell's output hands the earlier one)
    assert twin.arrangement.value == "stacked" and "nbgraph-stacked" in twin._dom_classes
    inspector.arrangement.value = "auto"
    assert "nbgraph-stacked" not in inspector._dom_classes
    assert "nbgraph-auto" in inspector._dom_classes


def _rules(css: str) -> dict[str, dict[str, str]]:
    """A flat CSS text's rules: each selector of a rule -> its declarations (comments
    dropped; a later rule's declarations added to an earlier one's)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules: dict[str, dict[str, str]] = {}
    for selectors, body in re.findall(r"([^{}@]+)\{([^{}]*)\}", css):
        declarations = dict(
            (name.strip(), value.strip())
            for name, value in (d.split(":", 1) for d in body.split(";") if ":" in d)
        )
        for selector in selectors.split(","):
            rules.setdefault(" ".join(selector.split()), {}).update(declarations)
    return rules


def _cells(source: str, node: str) -> list[tuple[str, str]]:
    """The task cells (colours, text) of `node`'s HTML-like label in a DOT source."""
    line = next(line for line in source.splitlines() if f"<TD>{node}</TD>" in line)
    inner = re.search(r'CELLBORDER="1".*?</TABLE>', line).group(0)
    return re.findall(r"<TD ([^>]*)>(.*?)</TD>", inner)


def test_one_task_of_a_fan_out_is_drawn_apart_from_its_faded_siblings():
    from nbgraph.views.drawings.dot import FADED_TEXT, HIGHLIGHT_FILL

    run = fan_out_run(200)
    task = run.log.steps[2].tasks[37]
    source = run.draw(branch=task.id, step=2).source
    (mine, mine_text), (others, others_text) = _cells(source, "work")
    assert f'BGCOLOR="{HIGHLIGHT_FILL}"' in mine
    assert mine_text == "<B>task 38: {&#x27;note&#x27;: 37}</B>"  # named, with its Send's arg
    assert f'<FONT COLOR="{FADED_TEXT}">+ 199 other tasks</FONT>' == others_text
    assert f'BGCOLOR="{FADED_FILL}"' in others
    assert "following task 38 of 200 (step 2)" in source
    few = fan_out_run(3)
    cells = _cells(few.draw(branch=few.log.steps[2].tasks[1].id).source, "work")
    assert [HIGHLIGHT_FILL in colours for colours, _ in cells] == [False, True, False]
    assert [re.sub("<[^>]+>", "", text) for _, text in cells][::2] == ["1", "3"]
    assert "<TABLE" not in run.draw(step=2).source  # no task followed: a plain label
    if renderers():
        assert render_svg(source).svg and "+ 199 other tasks" in render_svg(source).svg


def test_a_followed_tasks_label_is_escaped():
    graph = StateGraph(S).add_node("plan", lambda s: {})
    name = f'{EVIL}"&\x01'
    graph.add_node(name, lambda s: {"out": [s["note"]]}).add_edge(START, "plan")
    graph.add_conditional_edges("plan", lambda s: [Send(name, {"note": EVIL}) for _ in range(2)])
    run = graph.compile().run({"out": []})
    source = run.draw(branch=run.log.steps[2].tasks[0].id).source
    line = next(line for line in source.splitlines() if "CELLBORDER" in line)
    assert "<img" not in line and "&lt;img src=x onerror=alert(1)&gt;&quot;&amp;\\x01" in line
    for renderer in renderers():  # each renderer nbgraph may pick reads the label
        output, name, problems = render_with(source, "svg", [renderer])
        assert output and b"&lt;img" in output, (renderer, problems)


def test_a_run_s_tables_keep_20_characters_a_line_and_scroll_sideways_when_narrow():
    class Notes(TypedDict, total=False):
        note: str

    long = "the north river floods in March " * 3
    run = (
        StateGraph(Notes).add_node("write", lambda s: {"note": long})
        .add_edge(START, "write").add_edge("write", END).compile().run({"note": "a"})
    )  # fmt: skip
    shown = run.effects._repr_html_()
    assert shown.startswith("<div style='overflow-x:auto'><table")  # (scrolls, not squeezes)
    heads = re.findall(r"<th style='[^']*min-width:(\d+)ch'>([^<]*)</th>", shown)
    assert {name: int(room) for room, name in heads} == {  # (a header never wraps)
        "step": 4, "field": 5, "at": 2, "reducer": 7, "before": 6, "writes": 6, "after": 5,
        "flags": 5,
    }  # fmt: skip
    rooms = re.findall(r"<td style='[^']*min-width:(\d+)ch'>([^<]*)</td>", shown)
    assert ("3", "&#x27;a&#x27;") in rooms  # a short value: its own length, never wrapped
    assert [room for room, cell in rooms if cell.startswith("write: ")] == ["22"]  # (long)
    assert "min-width:" in run.steps._repr_html_()
