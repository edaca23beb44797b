"""What the inspector's picture marks as the shown step, so that the browser can scroll it
into view (`views/static/clickable_graph.js`, `follow`): in the graph, the boxes of the
nodes running at that step — START at the input step, the failing node at a failed step, a
wide fan-out's summary box for a node folded into it — each a drawn `<g class="node">`
whose `<title>` is the marked id. That the marked boxes are then inside the visible box at
every step is measured in a real browser: tests/e2e/test_browser_follow.py.
"""

import re
import xml.etree.ElementTree as ET
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, StateGraph
from nbgraph.views.drawings.render import render_svg
from nbgraph.views.inspector.clickable_graph import STATIC
from nbgraph.views.inspector.clicks import graph_current


class Log(TypedDict, total=False):
    log: Annotated[list, "append"]


def chain_run(fail_at: str | None = None):
    """START → a → b → c → END; `fail_at` raises KeyError."""

    def node(name):
        def run(state):
            if name == fail_at:
                raise KeyError(name)
            return {"log": [name]}

        return run

    graph = StateGraph(Log)
    for name in "abc":
        graph.add_node(name, node(name))
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c").add_edge("c", END)
    return graph.compile().run({"log": []})


def current_names(inspector) -> list[str]:
    """The node names behind the graph picture's marked ids (START and END included)."""
    drawing = inspector.clicks.drawing(inspector.run, inspector.step, inspector.branch)
    names = {dot_id: name for name, dot_id in drawing.nbgraph_ids.items()}
    return sorted(names[dot_id] for dot_id in inspector.graph.current)


def test_each_step_marks_the_nodes_it_runs_and_the_input_step_marks_start():
    run = chain_run()
    inspector = run.inspect()
    seen = {}
    for step in range(len(run.log.steps)):
        inspector.go(step)
        seen[step] = current_names(inspector)
    assert seen == {0: [START], 1: ["a"], 2: ["b"], 3: ["c"]}


def test_a_failed_step_marks_the_node_that_raised():
    run = chain_run(fail_at="b")
    inspector = run.inspect()  # (a failed run opens at its failing step)
    assert inspector.step == 2 and current_names(inspector) == ["b"]


def test_a_node_folded_into_a_fan_outs_summary_box_marks_that_box():
    graph = StateGraph(Log).add_node("plan", lambda s: {"log": ["plan"]})
    graph.add_edge(START, "plan")
    for i in range(20):  # more than views.drawings.dot folds: the last 12 share one box
        graph.add_node(f"w{i:02d}", lambda s, i=i: {"log": [i]})
        graph.add_edge("plan", f"w{i:02d}").add_edge(f"w{i:02d}", END)
    run = graph.compile().run({"log": []})
    inspector = run.inspect()
    inspector.go(2)
    drawing = inspector.clicks.drawing(run, 2, None)
    folded = drawing.nbgraph_alias["w19"]
    marked = inspector.graph.current
    assert drawing.nbgraph_ids[folded] in marked and drawing.nbgraph_ids["w00"] in marked
    assert len(marked) == 9  # eight nodes drawn, and the box of the twelve others


def test_graph_current_leaves_out_names_the_drawing_does_not_show():
    run = chain_run()
    drawing = run.inspect().clicks.drawing(run, 1, None)
    assert graph_current(drawing, {"a", "no such node"}) == [drawing.nbgraph_ids["a"]]
    assert graph_current(object(), {"a"}) == []  # (a drawing without ids: nothing marked)


@pytest.mark.dot
def test_the_marked_ids_are_titles_of_drawn_node_groups_in_the_svg():
    run = chain_run()
    inspector = run.inspect()
    for step in range(len(run.log.steps)):
        inspector.go(step)
        drawing = inspector.clicks.drawing(run, step, None)
        svg = ET.fromstring(render_svg(drawing.source).svg)
        titles = {
            g.findtext("{http://www.w3.org/2000/svg}title")
            for g in svg.iter("{http://www.w3.org/2000/svg}g")
            if "node" in (g.get("class") or "").split()
        }
        assert set(inspector.graph.current) <= titles, step


def test_the_picture_box_has_a_bounded_height_and_the_script_follows_step_changes():
    css = (STATIC / "clickable_graph.css").read_text()
    box = re.search(r"\.nbgraph-picture-svg \{([^}]*)\}", css).group(1)
    assert re.search(r"max-height: min\(\d+vh, \d+px\)", box), box
    script = (STATIC / "clickable_graph.js").read_text()
    # followed on a step change (which boxes are marked, or the drawing), never on a scroll
    assert 'model.on("change:current", marked)' in script and "followSoon();" in script
    assert 'addEventListener("scroll"' not in script
