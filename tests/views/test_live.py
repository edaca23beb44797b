"""Live inspection (`app.run(input, live=True)`): the inspector is displayed at once, grows
with the run (newest step shown unless the slider moved), and the run returned is the run's
record as without `live`."""

from __future__ import annotations

import time
from typing import TypedDict

import pytest

from nbgraph import END, START, StateGraph
from nbgraph.notebook.run import Run
from nbgraph.views.inspector import live_view
from nbgraph.views.inspector.live_view import LiveView


class S(TypedDict):
    n: int


def counter(steps: int, pause: float = 0.0, fail_at: int | None = None):
    def tick(state: S) -> dict:
        if pause:
            time.sleep(pause)
        if state["n"] == fail_at:
            raise ValueError(f"broke at {fail_at}")
        return {"n": state["n"] + 1}

    return (
        StateGraph(S)
        .add_node("tick", tick)
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= steps else "tick")
        .compile()
    )


@pytest.fixture
def shown(monkeypatch):
    """What `display` was given (the kernel's front-end is missing here)."""
    seen: list = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **_: seen.append(obj))
    return seen


def test_live_run_displays_at_once_and_returns_the_same_record(shown):
    app = counter(12)
    live = app.run({"n": 0}, live=True)
    plain = app.run({"n": 0})
    assert len(shown) == 1 and "nbgraph-live" in shown[0]._dom_classes
    assert live.output == plain.output == {"n": 12}
    assert live.effects.to_string() == plain.effects.to_string()
    box = shown[0]
    header, inspector = box.children
    assert "done" in header.value and "12 steps done" in header.value
    assert inspector.slider.max == inspector.step == 12  # the whole run, at its last step


def test_updates_follow_each_step_and_respect_a_moved_slider(monkeypatch):
    for name, value in (("first_after", 0.0), ("min_interval", 0.0), ("share", 1.0)):
        monkeypatch.setattr(LiveView, name, value)  # (no throttle: every step is drawn)
    app = counter(6)
    st = app.stepper({"n": 0})
    view = LiveView(Run, background=False)
    maxima = []
    while not st.done:
        st.step()
        view.step_done(st._driver.log)
        maxima.append(view.inspector.slider.max)
        if len(maxima) == 3:
            view.inspector.go(1)  # the person looks back at step 1
    assert view.shown == [1, 2, 3, 4, 5, 6, 7]  # (steps recorded, the input's included)
    assert maxima == [0, 1, 2, 3, 4, 5, 6]
    assert view.inspector.step == 1  # not pulled back to the newest
    view.finish(st._driver.log)
    assert "done" in view.header.value and view.inspector.step == 1


def test_redraws_happen_while_the_run_goes(shown, monkeypatch):
    monkeypatch.setattr(LiveView, "first_after", 0.0)
    monkeypatch.setattr(LiveView, "min_interval", 0.02)
    monkeypatch.setattr(LiveView, "share", 0.9)
    drawn: list[int] = []
    original = LiveView._draw

    def spy(self, log, finished):
        drawn.append(len(log.steps) if not finished else -1)
        original(self, log, finished)

    monkeypatch.setattr(LiveView, "_draw", spy)
    run = counter(25, pause=0.03).run({"n": 0}, live=True)
    assert run.output == {"n": 25}
    during = [count for count in drawn if count != -1]
    assert drawn[-1] == -1 and len(during) >= 2  # redrawn while running, then once at the end
    assert during == sorted(during) and during[-1] <= 26


def test_a_failing_live_run_is_returned_failed_and_shown_failed(shown):
    run = counter(10, fail_at=4).run({"n": 0}, live=True)
    assert run.status == "failed" and isinstance(run.error, ValueError)
    header, inspector = shown[0].children
    assert "failed" in header.value
    assert "broke at 4" in inspector.error.value


def test_a_running_view_is_the_log_cut_at_a_step():
    run = counter(5).run({"n": 0})
    view = live_view.running_view(run.log, 3)
    assert len(view.steps) == 3 and view.status == "running" and len(run.log.steps) == 6
    assert Run(view).state_at(2) == run.state_at(2)


def test_the_node_picker_names_a_node_while_the_run_grows(monkeypatch):
    for name, value in (("first_after", 0.0), ("min_interval", 0.0), ("share", 1.0)):
        monkeypatch.setattr(LiveView, name, value)
    sg = StateGraph(S)
    sg.add_node("tick", lambda s: {"n": s["n"] + 1})
    sg.add_node("tock", lambda s: {"n": s["n"] + 1})
    sg.add_edge(START, "tick").add_edge("tick", "tock").add_edge("tock", END)
    st = sg.compile().stepper({"n": 0})
    view = LiveView(Run, background=False)
    picks = []
    while not st.done:
        st.step()
        view.step_done(st._driver.log)
        if view.inspector is not None and view.inspector.node.options:
            picks.append(view.inspector.node.value)
    # never emptied to None by a redraw; it names the node of the step shown (the newest)
    assert picks == ["tick", "tock"] and list(view.inspector.node.options) == ["tick", "tock"]


def test_controls_are_inert_while_the_run_goes_and_wake_when_it_ends(monkeypatch):
    """Jupyter delivers clicks only when the cell ends: during the run the inspector's
    controls are disabled, take no pointer events, and the header says why."""
    for name, value in (("first_after", 0.0), ("min_interval", 0.0), ("share", 1.0)):
        monkeypatch.setattr(LiveView, name, value)
    st = counter(4).stepper({"n": 0})
    view = LiveView(Run, background=False)
    st.step()
    view.step_done(st._driver.log)
    inspector = view.inspector
    controls = live_view._controls(inspector)
    assert {inspector.next, inspector.previous, inspector.slider, inspector.node} <= set(controls)
    fork = inspector.fork_panel.button
    assert fork.disabled  # (no checkpointer: disabled for its own reason)
    assert all(c.disabled for c in controls)
    assert "nbgraph-live-running" in view.box._dom_classes
    assert live_view.INERT_NOTE in view.header.value
    assert ".nbgraph-live-running .nbgraph-inspector{pointer-events:none" in view.header.value
    while not st.done:
        st.step()
        view.step_done(st._driver.log)
        assert inspector.next.disabled and inspector.slider.disabled  # still inert
    view.finish(st._driver.log)
    assert not inspector.next.disabled and not inspector.slider.disabled
    assert not inspector.fields.disabled and fork.disabled  # its own reason stands
    assert "nbgraph-live-running" not in view.box._dom_classes
    assert live_view.INERT_NOTE not in view.header.value and "done" in view.header.value


def test_a_live_run_as_the_cell_s_last_line_is_one_line_not_the_run_again(shown, monkeypatch):
    import IPython

    class Shell:
        execution_count = 7

    monkeypatch.setattr(IPython, "get_ipython", lambda: Shell)
    run = counter(3).run({"n": 0}, live=True)
    assert run.shown_live_in == 7
    bundle = run._repr_mimebundle_()
    assert bundle == {"text/plain": f"{run!r}, shown live above"}
    Shell.execution_count = 8  # a later cell shows it whole
    later = run._repr_mimebundle_()
    assert "text/html" in later and "image/svg+xml" in later
    assert counter(3).run({"n": 0}).shown_live_in is None  # (not live: shown as always)
