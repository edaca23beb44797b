"""MkDocs hooks for the docs site (mkdocs.yml `hooks:`).

The notebooks are executed when the site is built. mkdocs-jupyter keeps the widgets' state
in the page, which makes the page fetch the ipywidgets HTML manager from a CDN (unpkg) to
draw them, and hides the static snapshot every nbgraph inspector carries beside its widget
(`text/html`: the picture, the state and the effects of the shown step). Not keeping the
widget state makes nbconvert show that snapshot instead, with nothing fetched: the site
stays offline.
"""

import functools

import mkdocs_jupyter.nbconvert2 as nbconvert2

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
