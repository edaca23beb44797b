"""The record asks a reducer what it is (`Reducer.appends`, `extends_in_place`, `order`): a
reducer a user declares is treated as it says, one nobody declared is not assumed to append
or to be free of order. (Before, the record compared the reducer's function with a few known
ones, so a user's appending or order-free reducer was never seen as such.)"""

import operator
import uuid
from typing import Annotated, Any, TypedDict

from nbgraph import StateGraph
from nbgraph.blueprint.description import describe_graph, graph_from_description
from nbgraph.engine.persistence.history_fold import _Copier
from nbgraph.record.effects import grows_in_place
from nbgraph.record.replaying import ExtendsLists, replay_graph
from nbgraph.record.whatif.analysis import _order_dependent
from nbgraph.reducers import _append_in_place, append, register_reducer
from nbgraph.schema import FieldSpec


def _registered(**declared: Any) -> str:
    name = f"test_declared_{uuid.uuid4().hex}"
    register_reducer(name, **declared)(lambda old, new: append(old, new))
    return name


def _graph(reducer: Any) -> Any:
    class State(TypedDict):  # (no `from __future__ import annotations`: a local reducer)
        log: Annotated[list, reducer]

    graph = StateGraph(State)
    graph.add_node("a", lambda state: {"log": [1]})
    graph.set_entry_point("a")
    return graph.compile().spec


def test_a_user_reducer_declared_free_of_order_is_not_order_dependent() -> None:
    free, undeclared = _registered(order="free"), _registered()
    free_field = FieldSpec("n", int, _graph(free).fields["log"].reducer)
    assert _order_dependent(free_field) is False
    assert _order_dependent(FieldSpec("n", int, _graph(undeclared).fields["log"].reducer))


def test_addition_is_free_of_order_on_numbers_only_as_the_reducer_says() -> None:
    iadd = _graph(operator.iadd).fields["log"].reducer  # (declared in nbgraph.reducers)
    assert _order_dependent(FieldSpec("n", int, iadd)) is False
    assert _order_dependent(FieldSpec("n", list, iadd)) is True


def test_a_user_reducer_declared_appending_with_an_in_place_form_grows_in_place() -> None:
    grows = _registered(appends=True, in_place=lambda old, new: _append_in_place(old, new))
    spec = _graph(grows)
    assert grows_in_place(spec.fields["log"], [("a", [1])])
    assert "log" in _Copier(spec).appending
    assert not grows_in_place(_graph(_registered()).fields["log"], [("a", [1])])
    assert "log" not in _Copier(_graph(_registered())).appending


def test_a_replay_extends_the_list_of_any_reducer_that_says_it_appends() -> None:
    for reducer in (_registered(appends=True), "add", operator.add):
        replayed = replay_graph(_graph(reducer)).fields["log"].reducer
        assert type(replayed.in_place) is ExtendsLists, reducer
    undeclared = replay_graph(_graph(_registered())).fields["log"].reducer
    assert undeclared.in_place is None


def test_a_well_known_reducer_read_back_from_a_file_says_what_it_is() -> None:
    spec = graph_from_description(describe_graph(_graph(operator.add)))
    reducer = spec.fields["log"].reducer
    assert (reducer.appends, reducer.order) == (True, "free for numbers")
