"""`nbgraph.share`: a saved notebook exported to HTML shows each nbgraph widget as its
snapshot, with no widget script and nothing from a CDN; a widget with no static form keeps
its view and the state it needs; a file that is not a notebook is refused by name. The file
in a browser, offline: `tests/e2e/test_browser_share_notebook.py`."""

import json
import re

import ipywidgets
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from nbgraph import START, StateGraph
from nbgraph.errors import NotebookFileError
from nbgraph.share import WIDGET_STATE, WIDGET_VIEW, export, main, notebook_html

pytestmark = pytest.mark.dot

CDN = re.compile(r"unpkg|jsdelivr|cdnjs|require\.min\.js|MathJax|mermaid\.esm")


def _inspector_bundle() -> dict:
    app = (
        StateGraph(dict, reducers={"log": "append"})
        .add_node("plan", lambda s: {"log": ["<planned>"]})
        .add_edge(START, "plan")
        .compile()
    )
    bundle = app.run({"log": []}).inspect()._repr_mimebundle_()
    assert WIDGET_VIEW in bundle and "text/html" in bundle
    return bundle


_BEFORE: set[str] = set()


@pytest.fixture(autouse=True)
def _widgets_of_this_test():
    """The widgets alive before the test (earlier tests' widgets are not this notebook's)."""
    _BEFORE.clear()
    _BEFORE.update(ipywidgets.widgets.widget._instances)


def _notebook(tmp_path, *bundles, markdown: str = "") -> tuple:
    """A notebook whose outputs are `bundles`, saved with the widget state of every widget
    this test made (as JupyterLab saves every widget alive in its kernel)."""
    cells = [new_markdown_cell(markdown)] if markdown else []
    cells += [new_code_cell("x", outputs=[new_output("display_data", b)]) for b in bundles]
    notebook = new_notebook(cells=cells)
    alive = ipywidgets.widgets.widget._instances
    mine = [widget for key, widget in alive.items() if key not in _BEFORE]
    notebook.metadata["widgets"] = {WIDGET_STATE: ipywidgets.Widget.get_manager_state(widgets=mine)}
    path = tmp_path / "saved.ipynb"
    nbformat.write(notebook, path)
    return path, notebook


def _widget_scripts(page: str) -> list[str]:
    return re.findall(r'<script type="application/vnd\.jupyter\.widget-[a-z]+\+json">', page)


def test_an_inspector_shows_its_snapshot_and_nothing_is_fetched(tmp_path):
    bundle = _inspector_bundle()
    path, _ = _notebook(tmp_path, bundle)
    page, done = export(path)
    assert done["replaced"] == 1 and done["kept"] == []
    assert "nbgraph-snapshot" in page and "re-run the cell to interact" in page
    snapshot = page[page.index("nbgraph-snapshot") :]
    assert re.search(r'<svg class="nbgraph-drawing".*?<text[^>]*>plan</text>', snapshot, re.S)
    assert "&lt;planned&gt;" in page and "<planned>" not in page, "its table, escaped"
    assert _widget_scripts(page) == [], "no widget view, no saved widget state"
    assert bundle[WIDGET_VIEW]["model_id"] not in page
    assert not CDN.search(page), CDN.search(page)
    assert not re.search(r"<script[^>]+src=", page), "no script from anywhere"


def test_a_widget_with_no_static_form_is_kept_as_nbconvert_keeps_it(tmp_path, capsys):
    slider = ipywidgets.IntSlider(value=7, description="<knob>")
    inspector = _inspector_bundle()
    path, notebook = _notebook(tmp_path, inspector, slider._repr_mimebundle_())
    page, done = export(path)
    assert (done["replaced"], done["kept"]) == (1, ["IntSliderModel"])
    views = re.findall(r'type="application/vnd\.jupyter\.widget-view\+json">\s*(\{.*?\})', page)
    assert [json.loads(v)["model_id"] for v in views] == [slider.model_id]
    state = re.search(r'type="application/vnd\.jupyter\.widget-state\+json">\s*(\{.*?\})\s*<',
                      page, re.S)  # fmt: skip
    kept = json.loads(state.group(1))["state"]
    wanted = {slider.model_id, slider.layout.model_id, slider.style.model_id}
    assert set(kept) == wanted, "the slider's models and what they refer to, no others"
    assert len(notebook.metadata["widgets"][WIDGET_STATE]["state"]) > len(wanted)
    assert "nbgraph-snapshot" in page
    assert "require" in page and "html-manager" in page, "the kept widget's script, as ever"
    assert main([str(path)]) == 0
    assert "1 widget with no static form (IntSliderModel)" in capsys.readouterr().err


def test_scripts_from_a_cdn_come_only_when_the_notebook_needs_them(tmp_path):
    path, _ = _notebook(tmp_path, _inspector_bundle(), markdown="Area: $\\pi r^2$")
    page, done = export(path)
    assert done["math"] and "MathJax" in page
    assert not done["require"] and not done["mermaid"]


@pytest.mark.parametrize(
    ("markdown", "math"),
    [
        ("Install it:\n\n    $ pip install nbgraph\n\nA run costs about $0.02.", False),
        ("```\n$ echo $HOME\n```\nIt costs $5 and $6 with `$x$`.", False),
        ("Area: $x$, or $$\\sum_i x_i$$.", True),
        ("Set \\(a\\) once.", True),
    ],
    ids=["prompt-and-price", "code-and-prices", "dollars", "parens"],
)
def test_mathjax_only_for_math_outside_code(tmp_path, markdown, math):
    path, _ = _notebook(tmp_path, _inspector_bundle(), markdown=markdown)
    page, done = export(path)
    assert done["math"] is math
    assert ("MathJax" in page) is math


def test_the_command_writes_next_to_the_notebook_or_where_asked(tmp_path, capsys):
    path, _ = _notebook(tmp_path, _inspector_bundle())
    assert main([str(path)]) == 0
    assert "nbgraph-snapshot" in (tmp_path / "saved.html").read_text(encoding="utf-8")
    assert "1 widget shown as its snapshot" in capsys.readouterr().out
    written = notebook_html(path, tmp_path / "elsewhere.html")
    assert written == tmp_path / "elsewhere.html" and written.stat().st_size > 10_000


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("missing.ipynb", None, "no such file"),
        ("folder.ipynb", "folder", "is a folder"),
        ("notes.txt", "plain words", "is not a Jupyter notebook: NotJSONError"),
        ("other.ipynb", '{"cells": 3}', "is not a Jupyter notebook"),
    ],
)
def test_a_file_that_is_not_a_notebook_is_refused_by_name(tmp_path, capsys, name, content, says):
    path = tmp_path / name
    if content == "folder":
        path.mkdir()
    elif content is not None:
        path.write_text(content)
    with pytest.raises(NotebookFileError, match=re.escape(repr(str(path)))) as caught:
        notebook_html(path)
    assert says in str(caught.value) and isinstance(caught.value, ValueError)
    assert main([str(path)]) == 2
    assert says in capsys.readouterr().err
    assert not path.with_suffix(".html").exists()


def test_without_nbconvert_the_error_says_what_to_install(tmp_path, monkeypatch):
    import sys

    path, _ = _notebook(tmp_path, {"text/plain": "x"})
    monkeypatch.setitem(sys.modules, "nbconvert", None)  # (what an environment without it has)
    with pytest.raises(ModuleNotFoundError, match=r"needs nbconvert .*nbgraph\[lab\]"):
        notebook_html(path)
