"""The shared page's step labels: every node name (`constructor` too), and a step paused by
`interrupt()` called paused, not failed, in the page and in the inspector's step list."""

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import TypedDict

import pytest

from nbgraph import END, START, MemorySaver, StateGraph, interrupt
from nbgraph.views.inspector.step_list import _options

SCRIPT = Path(__file__).parents[2] / "nbgraph" / "views" / "static" / "share_html.js"


class Asked(TypedDict):
    q: str
    a: str


def _paused_run():
    app = (
        StateGraph(Asked)
        .add_node("plan", lambda s: {"q": "x"})
        .add_node("ask", lambda s: {"a": interrupt("approve?")})
        .add_edge(START, "plan")
        .add_edge("plan", "ask")
        .add_edge("ask", END)
        .compile(checkpointer=MemorySaver())
    )
    return app.run({"q": "", "a": ""}, {"configurable": {"thread_id": "1"}})


def test_the_step_list_calls_a_paused_step_paused():
    labels = [label for label, _ in _options(_paused_run().log.steps)]
    assert any(label.startswith("step 2") and label.endswith("— paused") for label in labels)
    assert not any("failed" in label for label in labels)


def _function(source: str, name: str) -> str:
    start = source.index(f"  function {name}(")
    end = source.index("\n  }\n", start)
    return source[start : end + 4]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's script")
def test_the_page_labels_name_every_node_and_call_a_paused_step_paused():
    source = SCRIPT.read_text(encoding="utf-8")
    program = "\n".join(
        [
            "var FAILED = 1, PAUSED = 2; function text(x) { return x; }",
            _function(source, "summary"),
            _function(source, "paused"),
            "var tasks = [['constructor', 0], ['toString', 0], ['__proto__', 0],",
            "  ['a', 0], ['a', 0]];",
            "console.log(JSON.stringify([summary(tasks),",
            "  paused([3, [['ask', PAUSED]], [], [], 0]),",
            "  paused([3, [['ask', PAUSED], ['b', FAILED]], [], [], 0])]));",
        ]
    )
    out = subprocess.run(["node", "-e", program], capture_output=True, text=True, check=True)
    names, asked, broken = json.loads(out.stdout)
    assert names == "constructor, toString, __proto__, a ×2"
    assert asked is True and broken is False
    assert re.search(r'"This step failed[^"]*"', source)  # (still said of a failed step)
