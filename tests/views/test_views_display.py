"""Jupyter display: mimebundles honour include/exclude, render offline, escape all HTML."""

import base64
import operator
import os
import subprocess
import sys
import textwrap
from typing import Annotated, TypedDict

import pytest

from nbgraph import START, StateGraph
from nbgraph.views.drawings import render
from nbgraph.views.drawings.display import drawing_bundle, run_html, styled

EVIL = "<img src=x onerror=alert(1)>"


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]
    note: str


def app():
    return (
        StateGraph(S)
        .add_node("a", lambda s: {"log": [EVIL], "note": "<script>alert(2)</script>"})
        .add_edge(START, "a")
        .compile()
    )


@pytest.mark.dot
def test_graph_and_run_bundles_have_text_and_svg_made_by_dot():
    render.clear_cache()
    compiled = app()
    bundle = compiled._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "image/svg+xml", "image/png"}
    assert "nbgraph-fit" in bundle["text/html"]  # what a notebook shows: the picture fitted
    assert bundle["image/svg+xml"].lstrip().startswith(("<?xml", "<svg"))
    assert base64.b64decode(bundle["image/png"]).startswith(b"\x89PNG")  # untrusted shows it
    assert render.renderers()[0][0] == "dot"
    run = compiled.run({"log": []})
    run_bundle = run._repr_mimebundle_()
    assert set(run_bundle) == {"text/plain", "image/svg+xml", "image/png", "text/html"}
    assert "<svg" in run_bundle["text/html"]  # the picture travels inside the HTML too
    assert "src='data:image/svg+xml;base64," in run_bundle["text/html"]  # and its copy
    assert StateGraph(S).add_node("x", lambda s: None)._repr_mimebundle_()["text/plain"]


def test_include_and_exclude_are_honoured_and_text_is_always_there():
    run = app().run({"log": []})
    assert set(run._repr_mimebundle_(include=["text/plain"])) == {"text/plain"}
    assert set(run._repr_mimebundle_(include=["text/html"])) == {"text/plain", "text/html"}
    assert "text/html" not in run._repr_mimebundle_(exclude=["text/html"])
    assert "image/svg+xml" not in app()._repr_mimebundle_(exclude=["image/svg+xml"])


def test_run_html_escapes_every_value_and_name():
    graph = StateGraph(S).add_node(EVIL, lambda s: {"log": [EVIL], "note": "<script>x</script>"})
    run = graph.add_edge(START, EVIL).compile().run({"log": []})
    page = run_html(run)
    assert EVIL not in page and "<script>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    styler = styled(run.effects)
    assert EVIL not in styler.to_html()


def test_without_dot_on_path_graphviz_pure_still_draws():
    # A fresh interpreter with PATH stripped: `dot` cannot be found, the bundled renderer can.
    code = textwrap.dedent(
        """
        import json, operator
        from typing import Annotated, TypedDict
        from nbgraph import START, StateGraph
        from nbgraph.views.drawings import render

        class S(TypedDict):
            log: Annotated[list, operator.add]

        app = StateGraph(S).add_node("a", lambda s: {"log": ["a"]}).add_edge(START, "a").compile()
        bundle = app._repr_mimebundle_()
        print(json.dumps([r[0] for r in render.renderers()]))
        print(json.dumps(sorted(bundle)))
        """
    )
    env = {**os.environ, "PATH": "/nonexistent"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    renderers, mimes = done.stdout.strip().splitlines()
    assert renderers == '["graphviz-pure"]'
    assert mimes == '["image/png", "image/svg+xml", "text/html", "text/plain"]'


def test_with_no_renderer_at_all_the_dot_source_and_one_hint_are_shown(monkeypatch):
    monkeypatch.setattr(render, "renderers", lambda: [])
    render.clear_cache()
    bundle = app()._repr_mimebundle_()
    assert set(bundle) == {"text/plain"}
    text = bundle["text/plain"]
    assert "apt-get install graphviz" in text and "digraph" in text
    assert "Traceback" not in text
    run_bundle = app().run({"log": []})._repr_mimebundle_()
    assert "image/svg+xml" not in run_bundle and "text/html" in run_bundle
    render.clear_cache()


def test_a_renderer_that_fails_is_reported_not_raised(monkeypatch, tmp_path):
    broken = tmp_path / "dot"
    broken.write_text("#!/bin/sh\necho 'syntax error' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setattr(render, "renderers", lambda: [("dot", str(broken))])
    render.clear_cache()
    bundle = drawing_bundle(app().draw(), "text")
    assert "Rendering failed" in bundle["text/plain"] and "syntax error" in bundle["text/plain"]
    render.clear_cache()


def test_rendering_is_cached_by_source(monkeypatch):
    calls = []
    real = subprocess.run

    def counting(*args, **kwargs):
        calls.append(args[0][0])
        return real(*args, **kwargs)

    render.clear_cache()
    monkeypatch.setattr(render.subprocess, "run", counting)
    drawing = app().draw()
    first = render.render_svg(drawing.source)
    second = render.render_svg(drawing.source)
    assert first == second and len(calls) == 1
    render.clear_cache()


def test_a_run_holding_values_whose_repr_or_str_raises_still_displays():
    class Broken(Exception):
        def __repr__(self):
            raise ValueError(EVIL)

        def __str__(self):
            raise ValueError(EVIL)

    def fail(state):
        raise Broken()

    run = (
        StateGraph(dict)
        .add_node("a", lambda s: {"h": Broken()})
        .add_node("b", fail)
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
        .run({"h": None})
    )
    bundle = run._repr_mimebundle_(include=["text/html"])  # raised ValueError before
    page = bundle["text/html"]
    assert "&lt;Broken: repr raised ValueError: &lt;img src=x" in page and EVIL not in page
    assert run.steps.error.iloc[1] == f"Broken: <Broken: str raised ValueError: {EVIL}>"
    assert "Broken: repr raised" in styled(run.effects).to_html()


def test_a_long_run_displays_its_last_rows_without_building_its_tables():
    from nbgraph import END, Run
    from nbgraph.record.tails import _LONG_RUN_STEPS, last_effects, last_tasks

    steps = _LONG_RUN_STEPS + 200
    app = (
        StateGraph(dict, reducers={"log": "append"})
        .add_node("step", lambda s: {"n": s["n"] + 1, "log": [s["n"]]})
        .add_edge(START, "step")
        .add_conditional_edges("step", lambda s: END if s["n"] >= steps else "step", ["step", END])
        .compile()
    )
    run = app.run({"n": 0, "log": []}, {"recursion_limit": steps + 10})
    page = run._repr_mimebundle_(include=["text/html"])["text/html"]
    assert not {"effect_list", "effects", "steps", "tree"} & set(vars(run))
    assert "last 20 effects; see <code>run.effects</code>" in page
    tail, total = last_effects(run, 5)
    whole = Run(run.log)
    expected = whole.effects.tail(5)
    assert total is None and list(tail.step) == list(expected.step)
    assert list(tail.step) == [steps - 2, steps - 1, steps - 1, steps, steps]
    assert tail.after.tolist() == expected.after.tolist()
    assert tail.before.tolist() == expected.before.tolist()
    assert tail.after.iloc[-1] == list(range(steps))
    columns = ["step", "node", "task_id", "triggers", "writes", "status"]
    tasks = last_tasks(run, 3)[columns].values.tolist()
    assert tasks == whole.steps.tail(3)[columns].values.tolist()


def test_a_long_runs_summary_reads_only_its_last_steps_for_paused_ones():
    """The run's summary says which shown steps are paused by reading the log from its end,
    up to the first step shown, never the whole log (a long run's repr stays cheap)."""
    import operator
    from typing import Annotated, TypedDict

    from nbgraph import END, START, StateGraph
    from nbgraph.views.drawings.display import run_html

    class Loop(TypedDict):
        n: int
        log: Annotated[list, operator.add]

    graph = StateGraph(Loop).add_node("tick", lambda s: {"n": s["n"] + 1, "log": [s["n"]]})
    graph.add_edge(START, "tick")
    graph.add_conditional_edges("tick", lambda s: END if s["n"] >= 300 else "tick")
    run = graph.compile().run({"n": 0, "log": []}, {"recursion_limit": 1000})

    read = []

    class Counted(list):
        def __reversed__(self):
            for step in super().__reversed__():
                read.append(step.step)
                yield step

    run.log.steps = Counted(run.log.steps)
    page = run_html(run, max_rows=5)
    assert "tick" in page and 0 < len(read) <= 10, len(read)
