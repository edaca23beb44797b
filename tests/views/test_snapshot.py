"""What a saved notebook keeps of an inspector and a live run's box: a `text/html` snapshot
whose picture survives an untrusted notebook's sanitizer (an `<img>` copy), beside the widget
view. The same in a real front-end: `tests/e2e/test_browser_share.py`."""

import base64
import operator
import re
import struct
from typing import Annotated, TypedDict

import graphviz
import pytest

from nbgraph import END, START, StateGraph
from nbgraph.views.display import as_drawing, drawing_bundle, picture_html
from nbgraph.views.snapshot import SnapshotBox

WIDGET = "application/vnd.jupyter.widget-view+json"


class S(TypedDict):
    log: Annotated[list, operator.add]


def _run():
    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"log": ["<b>a</b>"]})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", END)
        .compile()
    )
    return app.run({"log": []})


def _copies(html: str) -> list[str]:
    """The SVG texts of the page's `data:` image copies."""
    encoded = re.findall(r"src='data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)'", html)
    return [base64.b64decode(e).decode("utf-8") for e in encoded]


@pytest.mark.dot
def test_the_inspector_snapshot_keeps_its_picture_as_an_image_too():
    inspector = _run().inspect()
    inspector.go(2)
    bundle = inspector._repr_mimebundle_()
    assert WIDGET in bundle and "text/plain" in bundle
    snapshot = bundle["text/html"]
    assert "at step 2 of 2" in snapshot and "re-run the cell to interact" in snapshot
    (copy,) = _copies(snapshot)
    assert copy.startswith("<svg") and copy.endswith("</svg>") and ">b</text>" in copy
    hidden = re.search(r"<div class='nbgraph-inline-(\w+)' style='display:none'><svg", snapshot)
    assert hidden, "the inline SVG is hidden unless the style sheet (trusted HTML) shows it"
    assert f".nbgraph-inline-{hidden.group(1)}{{display:block !important}}" in snapshot
    assert "&lt;b&gt;a&lt;/b&gt;" in snapshot and "<b>a</b>" not in snapshot  # escaped


@pytest.mark.dot
def test_a_live_box_snapshots_the_inspector_inside_it():
    from nbgraph.views.inspector_widget import Inspector

    box = SnapshotBox()
    empty = box._repr_mimebundle_()
    assert "re-run the cell to see it" in empty["text/html"]
    assert "VBox(" not in empty["text/plain"]
    inspector = Inspector(_run())
    box.children = [inspector]
    bundle = box._repr_mimebundle_()
    assert WIDGET in bundle and "at step 1 of 2" in bundle["text/html"]
    assert bundle["text/plain"] == repr(inspector)
    box.refresh()  # shown nowhere (no `show`): nothing to send again, no error


def test_picture_html_without_an_svg_is_the_inline_text_alone():
    assert picture_html("", "<pre>no renderer</pre>") == "<pre>no renderer</pre>"
    assert picture_html("") == ""
    one, other = picture_html("<svg>1</svg>"), picture_html("<svg>2</svg>")
    key = re.search(r"nbgraph-copy-(\w+)", one).group(1)
    assert key not in other, "one output's style sheet never reaches another's picture"


@pytest.mark.dot
def test_a_drawing_is_a_digraph_that_also_displays_as_png():
    drawing = _run().draw()
    assert isinstance(drawing, graphviz.Digraph) and "ran ×1" in drawing.source
    bundle = drawing._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "image/svg+xml", "image/png"}
    assert base64.b64decode(bundle["image/png"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert "Digraph at 0x" not in bundle["text/plain"] and "DOT" in bundle["text/plain"]
    assert set(drawing._repr_mimebundle_(include=["image/png"])) == {"text/plain", "image/png"}
    assert "image/png" not in drawing._repr_mimebundle_(exclude=["image/png"])
    assert type(drawing.copy()) is type(drawing)
    tree = _run().draw_tree()
    assert "image/png" in tree._repr_mimebundle_()


@pytest.mark.dot
def test_a_wide_drawing_s_png_is_capped():
    wide = graphviz.Digraph()
    for i in range(200):
        wide.edge("start", f"node_{i:03d}")
    png = base64.b64decode(drawing_bundle(as_drawing(wide), "t")["image/png"])
    width, height = struct.unpack(">II", png[16:24])
    assert max(width, height) <= 24 * 96 and len(png) < 200_000


def test_a_plain_digraph_made_a_drawing_keeps_its_source():
    plain = graphviz.Digraph()
    plain.node("x")
    source = plain.source
    drawing = as_drawing(plain)
    assert drawing is plain and drawing.source == source
    assert drawing_bundle(drawing, "t", include=["text/plain"]) == {"text/plain": "t"}


@pytest.mark.dot
def test_a_run_picker_saves_the_picked_run_s_snapshot():
    def c(state):
        raise ValueError("c fails")

    app = (
        StateGraph(S)
        .add_node("b", lambda s: {"log": ["b"]})
        .add_node("c", c)
        .add_conditional_edges(START, lambda s: s["log"][0])
        .compile()
    )
    picker = app.run_many([{"log": ["b"]}, {"log": ["c"]}], progress=False).inspect()
    bundle = picker._repr_mimebundle_()
    assert WIDGET in bundle and "at step 1 of 1" in bundle["text/html"]
    assert bundle["text/plain"] == repr(picker.inspector) and "RunPicker(" not in repr(bundle)
    picker.status.value = "failed"
    picker.path.value = next(p for _, p in picker.path.options if p and "b" in p)
    assert picker.inspector is None  # (the filters leave no run)
    assert "A batch's run picker" in picker._repr_mimebundle_()["text/html"]


class FakeHandle:
    """What `IPython.display.display(..., display_id=True)` returns: records updates."""

    def __init__(self, shown: dict) -> None:
        self.shown, self.updates = shown, []

    def update(self, bundle: dict, raw: bool = False) -> None:
        assert raw
        self.updates.append(bundle)


@pytest.mark.dot
def test_the_saved_snapshot_follows_the_step_the_person_left_the_inspector_at(monkeypatch):
    import IPython.display

    handles: list[FakeHandle] = []

    def display(bundle, raw=False, display_id=None):
        assert raw and display_id is True
        handles.append(FakeHandle(bundle))
        return handles[-1]

    monkeypatch.setattr(IPython.display, "display", display)
    inspector = _run().inspect()
    inspector._ipython_display_()  # (how a cell's last expression displays it)
    (handle,) = handles
    assert WIDGET in handle.shown and "at step 1 of 2" in handle.shown["text/html"]
    picture = inspector.clicks.picture
    picture._handle_custom_msg({"event": "key", "key": "End"}, [])  # the person steps...
    picture._handle_custom_msg({"event": "left"}, [])  # ...then clicks elsewhere
    (update,) = handle.updates
    assert "at step 2 of 2" in update["text/html"]  # what a saved notebook keeps now
    assert update[WIDGET]["model_id"] == handle.shown[WIDGET]["model_id"]  # the same widget
    picture._handle_custom_msg({"event": "left"}, [])  # left again at the same step
    assert len(handle.updates) == 1  # nothing new to keep: not sent again
