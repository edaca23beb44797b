"""MkDocs hooks for the docs site (mkdocs.yml `hooks:`).

The notebooks are executed when the site is built. mkdocs-jupyter keeps the widgets' state
in the page, which makes the page fetch the ipywidgets HTML manager from a CDN (unpkg) to
draw them, and hides the static snapshot every nbgraph inspector carries beside its widget
(`text/html`: the picture, the state and the effects of the shown step). Not keeping the
widget state makes nbconvert show that snapshot instead, with nothing fetched: the site
stays offline.

A notebook page's table of contents is made from the headings of the page itself
(`on_page_content`). mkdocs-jupyter makes it from a Markdown copy of the notebook with every
code span cut out ("3. Who wrote `quotes`?" became "3. Who wrote ?") and with anchors that
were not the headings' (the link went to `#3-who-wrote-and`, the heading is
`#3-who-wrote-quotes-runwriters-and-runeffects`).
"""

import functools
import html
import re
from html.parser import HTMLParser

import mkdocs_jupyter.nbconvert2 as nbconvert2
from mkdocs.structure.toc import get_toc

_made = nbconvert2.get_nbconvert_app


@functools.wraps(_made)
def _without_widget_state(*args, **kwargs):
    app = _made(*args, **kwargs)
    app.config["ExecutePreprocessor"]["store_widget_state"] = False
    return app


def on_config(config):
    """Before any page is built: notebooks executed without their widget state."""
    nbconvert2.get_nbconvert_app = _without_widget_state
    return config


class _Headings(HTMLParser):
    """The headings (`h1` to `h6`) that have an id, as `(level, id, text)`; the text is
    escaped HTML (what a table of contents entry holds), the heading's `¶` link left out."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[int, str, str]] = []
        self._open: tuple[int, str, list[str]] | None = None
        self._in_anchor = 0

    def handle_starttag(self, tag, attrs):
        named = dict(attrs)
        if re.fullmatch(r"h[1-6]", tag) and self._open is None and named.get("id"):
            self._open = (int(tag[1]), named["id"], [])
        elif tag == "a" and self._open and "anchor-link" in (named.get("class") or ""):
            self._in_anchor += 1

    def handle_endtag(self, tag):
        if tag == "a" and self._in_anchor:
            self._in_anchor -= 1
        elif self._open and tag == f"h{self._open[0]}":
            level, anchor, parts = self._open
            self.found.append((level, anchor, " ".join("".join(parts).split())))
            self._open = None

    def handle_data(self, data):
        if self._open and not self._in_anchor:
            self._open[2].append(html.escape(data, quote=False))


_CELL = re.compile(r'<div class="jp-Cell ')


def notebook_toc_tokens(page_html: str) -> list[dict]:
    """The table of contents of a notebook's page: the headings of its Markdown cells (not
    those of cells' outputs), nested by level, as the tokens `mkdocs.structure.toc.get_toc`
    reads.

    >>> page = ('<div class="jp-Cell jp-MarkdownCell"><h1 id="t">T</h1>'
    ...         '<h2 id="3-who">3. Who wrote <code>x</code>?<a class="anchor-link">¶</a></h2>'
    ...         '</div><div class="jp-Cell jp-CodeCell"><h2 id="out">an output</h2></div>')
    >>> [(t["name"], [(c["name"], c["id"]) for c in t["children"]])
    ...  for t in notebook_toc_tokens(page)]
    [('T', [('3. Who wrote x?', '3-who')])]
    """
    headings = []
    for cell in _CELL.split(page_html)[1:]:
        if cell.startswith("jp-MarkdownCell"):
            parser = _Headings()
            parser.feed(f'<div class="jp-Cell {cell}')
            parser.close()
            headings += parser.found
    root: dict = {"level": 0, "children": []}
    stack = [root]
    for level, anchor, name in headings:
        token = {"level": level, "id": anchor, "name": name, "children": []}
        while stack[-1]["level"] >= level:
            stack.pop()
        stack[-1]["children"].append(token)
        stack.append(token)
    return root["children"]


def on_page_content(page_html, page, config, files):
    """A notebook page's table of contents from its own headings, code spans kept."""
    if page.file.src_uri.endswith(".ipynb"):
        page.toc = get_toc(notebook_toc_tokens(page_html))
    return page_html
