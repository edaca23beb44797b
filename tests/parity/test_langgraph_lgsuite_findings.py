"""Differential programs for what LangGraph's own public-API tests (`../shared/lgsuite`) showed
nbgraph doing otherwise: copying a checkpoint (`as_node="__copy__"`), a node that runs two
stateful subgraphs, a subgraph compiled with a saver of its own inside a checkpointed parent,
and a saver's listing of a thread with its subgraphs' checkpoints.

Each program takes an `api` namespace (LangGraph's names, or nbgraph's) and returns what a user
of it observes; the test runs it on real LangGraph and on nbgraph, with each kind of saver, and
compares.
"""

# No `from __future__ import annotations`: states are defined inside functions with `api.*`
# names in their annotations, which both engines read at run time.

import operator
from typing import Annotated, Any, TypedDict

import pytest

from tests.support.harness import SAVER_KINDS, Ids, Programs, plain, same

pytestmark = pytest.mark.langgraph

PROGRAMS = Programs()
program = PROGRAMS.add


@pytest.mark.parametrize("saver", SAVER_KINDS)
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.__name__)
def test_same_as_langgraph(prog, saver, tmp_path) -> None:
    same(prog, saver=saver, folder=tmp_path, raises=True, shape=plain)


class Trail(TypedDict):
    trail: Annotated[list, operator.add]


def thread(name: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def snapshot_view(snapshot: Any, ids: Ids) -> tuple:
    """What a user reads of a `StateSnapshot`: values, next, metadata, which checkpoint it
    follows (by label), its tasks' questions and its interrupts."""
    parent = (
        snapshot.parent_config["configurable"]["checkpoint_id"] if snapshot.parent_config else None
    )
    return (
        snapshot.values,
        snapshot.next,
        {k: snapshot.metadata.get(k) for k in ("source", "step")},
        ids(snapshot.config["configurable"]["checkpoint_id"]),
        None if parent is None else ids(parent),
        [(t.name, [i.value for i in t.interrupts]) for t in snapshot.tasks],
        [i.value for i in snapshot.interrupts],
    )


# ---------------------------------------------------------------------------------------------
# update_state(config, None, as_node="__copy__"): a sibling copy of a checkpoint


def asking_chain(api, saver):
    """`first -> ask (interrupt) -> last`, each appending to `trail`."""

    def ask(state):
        return {"trail": [f"answer:{api.interrupt('which?')}"]}

    return (
        api.StateGraph(Trail)
        .add_node("first", lambda s: {"trail": ["first"]})
        .add_node("ask", ask)
        .add_node("last", lambda s: {"trail": ["last"]})
        .add_edge(api.START, "first")
        .add_edge("first", "ask")
        .add_edge("ask", "last")
        .compile(checkpointer=saver)
    )


@program
def copying_a_checkpoint_asks_its_question_again(api):
    app, ids = asking_chain(api, api.saver()), Ids()
    app.invoke({"trail": []}, thread())
    app.invoke(api.Command(resume="one"), thread())
    history = list(app.get_state_history(thread()))
    for snapshot in reversed(history):  # (labels in the order the checkpoints were made)
        ids(snapshot.config["configurable"]["checkpoint_id"])
    paused = next(s for s in history if s.next == ("ask",))
    copy = app.update_state(paused.config, None, as_node="__copy__")
    seen = [sorted(copy["configurable"]), snapshot_view(app.get_state(copy), ids)]
    seen.append(app.invoke(None, copy))
    seen.append(app.invoke(api.Command(resume="two"), copy))
    seen.append([snapshot_view(s, ids) for s in app.get_state_history(thread())])
    return seen


@program
def a_copy_then_an_update_in_bulk(api):
    app, ids = asking_chain(api, api.saver()), Ids()
    app.invoke({"trail": []}, thread())
    paused = next(s for s in app.get_state_history(thread()) if s.next == ("ask",))
    ids(paused.config["configurable"]["checkpoint_id"])
    last = app.bulk_update_state(
        paused.config,
        [[api.StateUpdate(None, "__copy__")], [api.StateUpdate({"trail": ["edited"]}, "first")]],
    )
    return snapshot_view(app.get_state(last), ids), app.invoke(None, last)


@program
def copying_is_refused_with_other_updates_or_without_a_checkpoint(api):
    app = asking_chain(api, api.saver())
    errors = []
    try:
        app.update_state(thread("empty"), None, as_node="__copy__")
    except Exception as error:
        errors.append(type(error).__name__)
    app.invoke({"trail": []}, thread())
    try:
        app.bulk_update_state(
            thread(),
            [[api.StateUpdate(None, "__copy__"), api.StateUpdate({"trail": ["x"]}, "first")]],
        )
    except Exception as error:
        errors.append(type(error).__name__)
    return errors, app.get_state(thread()).values
