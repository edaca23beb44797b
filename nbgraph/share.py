"""A saved notebook as one HTML file that shows its inspectors offline:
`python -m nbgraph.share NOTEBOOK.ipynb [-o OUT.html]`, or `notebook_html(path)`.

nbconvert's HTML of a notebook saved with its widget state draws each widget with a script
it loads from a CDN: offline, or once that CDN is gone, an inspector is an empty box. Each
nbgraph widget's output (an inspector, a live run, a run picker) also carries a static
snapshot (`views/inspector/snapshot.py`). Exported through `notebook_html`, an output holding both a
widget view and a static form keeps the static form alone, and the saved widget state goes
too, so the file asks the network for nothing. A widget with no static form (a plain
ipywidgets slider, say) keeps its view and the state it needs, as nbconvert keeps them: that
widget alone needs the CDN's script to show. The file names require.js, MathJax or
mermaid.js only when the notebook uses them (a kept widget or a JavaScript output, math in
Markdown -- `$x$`, `$$x$$`, `\\(x\\)` outside code, not a price or a shell prompt --, a
mermaid diagram).

nbconvert (installed with JupyterLab, the `lab` extra) is imported when the function runs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from nbgraph.errors import NotebookFileError
from nbgraph.record.text import plural

__all__ = ["keep_static_forms", "main", "notebook_html"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_NOT_STATIC = frozenset({WIDGET_VIEW, "text/plain"})
"""An output's forms that show no picture or table: what else it holds is its static form."""
_MODEL_REFERENCE = re.compile(r"IPY_MODEL_([0-9A-Za-z_-]+)")
_MATH = re.compile(
    r"\$\$.+?\$\$"  # display math
    r"|(?<![\\$\w])\$(?=[^\s$])[^$\n]*?[^\s\\$]\$(?![\d$])"  # $x$: not "$5 and $6"
    r"|\\\(.+?\\\)|\\\[.+?\\\]|\\begin\{",
    re.S,
)
"""Math as Jupyter's Markdown renders it, looked for outside code (`_CODE`)."""
_CODE = re.compile(
    r"^ {0,3}(```|~~~).*?(^ {0,3}\1|\Z)"  # a fenced block
    r"|^(?: {4}|\t)[^\n]*"  # an indented line (a code block, or inside a list: no math either)
    r"|(`+)[^\n]+?\3",  # a code span
    re.M | re.S,
)
_TEMPLATE_NAME = "nbgraph_share.html.j2"
_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}
{%- if resources.nbgraph_share.require -%}{{ super() }}{%- endif -%}
{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}
{%- if resources.nbgraph_share.math -%}{{ super() }}{%- endif -%}
{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}
{%- if resources.nbgraph_share.mermaid -%}{{ super() }}{%- endif -%}
{%- endblock html_head_js_mermaidjs -%}
"""
"""nbconvert's `lab` page, less the scripts from a CDN the notebook does not need."""


def notebook_html(path: str | Path, out: str | Path | None = None) -> Path:
    """Export the notebook at `path` to one HTML file whose nbgraph widgets show their
    snapshots: no widget script, nothing fetched from a CDN (see the module's docstring).

    Args:
        path: a Jupyter notebook (`.ipynb`), best saved with its outputs.
        out: the HTML file to write (default: `path` with the suffix `.html`).

    Returns:
        The path written.

    Raises:
        NotebookFileError: `path` is missing, or is not a Jupyter notebook.
    """
    text, _ = export(path)
    target = Path(out) if out is not None else Path(path).with_suffix(".html")
    target.write_text(text, encoding="utf-8")
    return target


def export(path: str | Path) -> tuple[str, dict[str, Any]]:
    """The HTML text of `notebook_html`'s file and what was done: `{"replaced": how many
    widget views gave way to their static form, "kept": the names of the widgets kept}`."""
    try:
        import jinja2
        from nbconvert import HTMLExporter
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"nbgraph.share needs nbconvert ({error.name} is not installed): "
            "pip install 'nbgraph[lab]' (or nbconvert)",
            name=error.name,
        ) from error

    notebook = read_notebook(path)
    exporter = HTMLExporter(
        template_name="lab",
        template_file=_TEMPLATE_NAME,
        extra_loaders=[jinja2.DictLoader({_TEMPLATE_NAME: _TEMPLATE})],
    )
    exporter.register_preprocessor(keep_static_forms)
    source = Path(path)
    resources = {"metadata": {"name": source.stem, "path": str(source.parent)}}
    text, resources = exporter.from_notebook_node(notebook, resources=resources)
    return text, resources["nbgraph_share"]


def read_notebook(path: str | Path) -> Any:
    """The notebook at `path` (nbformat 4), or a `NotebookFileError` naming the file."""
    import nbformat

    source = Path(path)
    if not source.exists():
        raise NotebookFileError(f"{str(source)!r}: no such file (expected a .ipynb notebook)")
    if source.is_dir():
        raise NotebookFileError(f"{str(source)!r} is a folder, not a Jupyter notebook")
    try:
        return nbformat.read(source, as_version=4)
    except Exception as error:  # (nbformat's: not JSON, not a notebook, an unknown version)
        found = f"{type(error).__name__}: {str(error)[:200]}"
        raise NotebookFileError(f"{str(source)!r} is not a Jupyter notebook: {found}") from error


def keep_static_forms(notebook: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """nbconvert preprocessor: each output with a widget view and a static form keeps the
    static form alone; the saved widget state keeps only the models the remaining widget
    views need (none: the state goes). Sets `resources["nbgraph_share"]` (see `export`).

    >>> from nbformat.v4 import new_code_cell, new_notebook, new_output
    >>> both = {WIDGET_VIEW: {"model_id": "a"}, "text/html": "<p>snapshot</p>"}
    >>> nb = new_notebook(cells=[new_code_cell(outputs=[new_output("display_data", both)])])
    >>> nb.metadata["widgets"] = {WIDGET_STATE: {"state": {"a": {}}}}
    >>> nb, done = keep_static_forms(nb, {})
    >>> sorted(nb.cells[0].outputs[0].data), "widgets" in nb.metadata, done["nbgraph_share"]
    (['text/html'], False, {'replaced': 1, 'kept': [], 'require': False, 'math': False, \
'mermaid': False})
    """
    replaced, kept_views = 0, []
    for cell in notebook.cells:
        for output in cell.get("outputs", ()):
            data = output.get("data") or {}
            if WIDGET_VIEW not in data:
                continue
            if set(data) - _NOT_STATIC:
                del data[WIDGET_VIEW]
                replaced += 1
            else:
                kept_views.append(data[WIDGET_VIEW].get("model_id", ""))
    states = _keep_state_of(notebook, kept_views)
    resources["nbgraph_share"] = {
        "replaced": replaced,
        "kept": [states.get(m, {}).get("model_name", "a widget") for m in kept_views],
        **_scripts_needed(notebook, bool(kept_views)),
    }
    return notebook, resources


def _keep_state_of(notebook: Any, views: list[str]) -> dict[str, Any]:
    """Cut the saved widget state to the models `views` reach (by their `IPY_MODEL_`
    references); drop it when none. Returns the models kept."""
    widgets = notebook.metadata.get("widgets") or {}
    saved = (widgets.get(WIDGET_STATE) or {}).get("state") or {}
    kept: dict[str, Any] = {}
    todo = [m for m in views if m in saved]
    while todo:
        model = todo.pop()
        if model in kept:
            continue
        kept[model] = saved[model]
        todo += [m for m in _MODEL_REFERENCE.findall(json.dumps(saved[model])) if m in saved]
    if kept:
        widgets[WIDGET_STATE]["state"] = kept
    else:
        widgets.pop(WIDGET_STATE, None)
        if not widgets:
            notebook.metadata.pop("widgets", None)
    return kept


def _scripts_needed(notebook: Any, widgets: bool) -> dict[str, bool]:
    """Which of nbconvert's scripts from a CDN the page needs: require.js (a kept widget, a
    JavaScript output), MathJax (math in Markdown), mermaid.js (a mermaid diagram)."""
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    prose = _CODE.sub(" ", markdown)  # (a `$ pip install` in a code block is no math)
    kinds = {
        kind
        for cell in notebook.cells
        for output in cell.get("outputs", ())
        for kind in output.get("data") or {}
    }
    return {
        "require": widgets or "application/javascript" in kinds,
        "math": bool(_MATH.search(prose)) or "text/latex" in kinds,
        "mermaid": "```mermaid" in markdown or "text/vnd.mermaid" in kinds,
    }


def main(argv: list[str] | None = None) -> int:
    """`python -m nbgraph.share NOTEBOOK.ipynb [-o OUT.html]`: write the file, say where,
    and name the widgets that still need the network. Returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m nbgraph.share",
        description="Export a notebook to one HTML file that shows nbgraph's inspectors "
        "offline (their snapshots instead of widgets drawn by a script from a CDN).",
    )
    parser.add_argument("notebook", help="the .ipynb file")
    parser.add_argument("-o", "--output", help="the HTML file (default: NOTEBOOK.html)")
    args = parser.parse_args(argv)
    try:
        text, done = export(args.notebook)
    except NotebookFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    target = Path(args.output or Path(args.notebook).with_suffix(".html"))
    target.write_text(text, encoding="utf-8")
    replaced = done["replaced"]
    whose = "its snapshot" if replaced == 1 else "their snapshots"
    print(f"wrote {target} ({plural(replaced, 'widget')} shown as {whose})")
    if done["kept"]:
        names = ", ".join(sorted(set(done["kept"])))
        print(
            f"note: {plural(len(done['kept']), 'widget')} with no static form ({names}) kept as "
            "nbconvert keeps them: they show only with the network (a script from a CDN)",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
