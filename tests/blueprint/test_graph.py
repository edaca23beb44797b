"""Tests for nbgraph.blueprint: the StateGraph builder and the checks compile() makes."""

from __future__ import annotations

import operator
import warnings
from typing import Annotated, Any, Literal, TypedDict

import pytest
import typing_extensions

from nbgraph.blueprint import GraphSpec, WaitingEdge
from nbgraph.errors import GraphBuildError
from nbgraph.notebook import StateGraph
from nbgraph.reducers import get_reducer
from nbgraph.types import END, START


class State(TypedDict):
    log: Annotated[list, operator.add]
    status: str


class Troubled(TypedDict):
    unknown: Annotated[list, "no_such_reducer_for_graph_tests"]
    one_arg: Annotated[list, lambda old: old]
    status: str


class Private(TypedDict):
    secret: str
    status: str


class In(TypedDict):
    question: str


class Out(TypedDict):
    answer: str


class Wide(TypedDict):
    question: str
    answer: str
    log: Annotated[list, operator.add]


def noop(state: Any) -> None:
    return None


def first(state: Any) -> dict:
    return {"log": ["first"]}


def second(state: Any) -> dict:
    return {"log": ["second"]}


def third(state: Any) -> dict:
    return {"log": ["third"]}


def peek(state: Private) -> dict:
    return {"status": state["secret"]}


def spec_of(builder: StateGraph, **kwargs: Any) -> GraphSpec:
    """Compile without warnings being errors, and return the frozen spec."""
    return builder.compile(**kwargs).spec


def build_error(builder: StateGraph) -> GraphBuildError:
    with pytest.raises(GraphBuildError) as caught:
        builder.compile()
    return caught.value


def has_problem(error: GraphBuildError, *parts: str) -> bool:
    """Some problem in `error` mentions every one of `parts`."""
    return any(all(part in problem for part in parts) for problem in error.problems)


# --- the builder -----------------------------------------------------------------------------


def test_every_builder_method_returns_the_builder() -> None:
    builder = StateGraph(State)

    assert builder.add_node("a", noop) is builder
    assert builder.add_node(first) is builder
    assert builder.add_sequence([second, third]) is builder
    assert builder.add_edge(START, "a") is builder
    assert builder.add_edge("a", "first") is builder
    assert builder.add_edge(["a", "first"], "second") is builder
    assert builder.add_conditional_edges("third", lambda s: END, [END]) is builder
    assert builder.set_entry_point("a") is builder
    assert builder.set_finish_point("third") is builder
    assert builder.set_conditional_entry_point(lambda s: "a", ["a"]) is builder


def test_chained_calls_build_a_graph_that_compiles() -> None:
    app = (
        StateGraph(State)
        .add_node("a", first)
        .add_node("b", second)
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", END)
        .compile()
    )

    assert list(app.spec.nodes) == ["a", "b"]
    assert app.spec.edges == {START: ("a",), "a": ("b",), "b": (END,)}


def test_add_node_with_only_a_function_is_named_by_it() -> None:
    builder = StateGraph(State).add_node(first)

    assert list(builder.nodes) == ["first"]
    assert builder.nodes["first"].fn is first


def test_add_node_keeps_defer_and_merge() -> None:
    def merge(states: list[Any]) -> Any:
        return states[0]

    builder = StateGraph(State).add_node("join", noop, defer=True, merge=merge)

    assert builder.nodes["join"].defer is True
    assert builder.nodes["join"].merge is merge


def test_add_node_sees_async_functions_and_config_parameters() -> None:
    async def later(state: Any) -> None:
        return None

    def configured(state: Any, config: Any) -> None:
        return None

    builder = StateGraph(State).add_node(later).add_node(configured).add_node(noop)

    assert builder.nodes["later"].is_async is True
    assert builder.nodes["noop"].is_async is False
    assert builder.nodes["configured"].takes_config is True
    assert builder.nodes["noop"].takes_config is False


def test_add_sequence_adds_nodes_and_the_edges_between_them() -> None:
    builder = StateGraph(State).add_sequence([first, ("middle", second), third])

    assert list(builder.nodes) == ["first", "middle", "third"]
    assert builder.nodes["middle"].fn is second
    assert builder.edges == [("first", "middle"), ("middle", "third")]


def test_add_sequence_adds_no_edge_from_start() -> None:
    builder = StateGraph(State).add_sequence([first, second])

    error = build_error(builder)

    assert has_problem(error, "START")


def test_add_sequence_of_nothing_is_a_problem() -> None:
    error = build_error(StateGraph(State).add_sequence([]).add_node(first).add_edge(START, "first"))

    assert has_problem(error, "add_sequence")


def test_add_edge_from_a_list_is_a_waiting_edge() -> None:
    builder = (
        StateGraph(State)
        .add_sequence([first, second, third])
        .add_edge(START, "first")
        .add_edge(["first", "second"], "third")
    )

    assert spec_of(builder).waiting == (WaitingEdge(("first", "second"), "third"),)


def test_add_edge_from_a_one_item_list_is_a_waiting_edge_as_in_langgraph() -> None:
    builder = StateGraph(State).add_node(first).add_node(second).add_edge(["first"], "second")

    assert builder.edges == []
    assert builder.waiting == [WaitingEdge(("first",), "second")]


def test_state_filter_is_kept_per_edge() -> None:
    def only_log(state: Any) -> Any:
        return {"log": state["log"]}

    builder = (
        StateGraph(State)
        .add_node(first)
        .add_node(second)
        .add_edge(START, "first")
        .add_edge("first", "second", state_filter=only_log)
    )

    assert spec_of(builder).filters == {("first", "second"): only_log}


def test_duplicate_plain_edges_are_kept_once_in_the_spec() -> None:
    builder = (
        StateGraph(State)
        .add_node(first)
        .add_node(second)
        .add_edge(START, "first")
        .add_edge("first", "second")
        .add_edge("first", "second")
    )

    assert spec_of(builder).edges["first"] == ("second",)


# --- compile() reports every problem at once -------------------------------------------------


def router(state: Any) -> str:
    return "worker"


def many_problems() -> StateGraph:
    return (
        StateGraph(Troubled)
        .add_node("worker", noop)
        .add_node("worker", noop)
        .add_node(START, noop)
        .add_node(END, noop)
        .add_edge("worker", "ghost")
        .add_edge("phantom", "worker")
        .add_conditional_edges("worker", router, {"x": "nowhere"})
    )


def test_compile_reports_every_problem_in_one_error() -> None:
    error = build_error(many_problems())

    assert isinstance(error, ValueError)
    assert len(error.problems) >= 9
    message = str(error)
    for problem in error.problems:
        assert problem in message


def test_compile_reports_no_edge_from_start() -> None:
    assert has_problem(build_error(many_problems()), "No edge from START")


def test_compile_names_an_edge_to_an_unknown_node() -> None:
    assert has_problem(build_error(many_problems()), "'ghost'", "unknown node")


def test_compile_names_an_edge_from_an_unknown_node() -> None:
    assert has_problem(build_error(many_problems()), "'phantom'", "unknown node")


def test_compile_names_a_duplicate_node() -> None:
    assert has_problem(build_error(many_problems()), "'worker'", "twice")


@pytest.mark.parametrize("reserved", [START, END])
def test_compile_names_a_reserved_node_name(reserved: str) -> None:
    assert has_problem(build_error(many_problems()), repr(reserved), "reserved")


def test_compile_names_an_unregistered_reducer_and_lists_registered_ones() -> None:
    error = build_error(many_problems())

    assert has_problem(error, "no_such_reducer_for_graph_tests", "Troubled.unknown")
    assert has_problem(error, "no_such_reducer_for_graph_tests", "append", "merge", "union")


def test_compile_names_a_reducer_that_takes_one_argument() -> None:
    assert has_problem(build_error(many_problems()), "Troubled.one_arg", "two arguments")


def test_compile_names_a_path_map_target_that_is_unknown() -> None:
    assert has_problem(build_error(many_problems()), "path_map", "'nowhere'")


def test_compile_names_a_conditional_edge_from_an_unknown_node() -> None:
    builder = (
        StateGraph(State)
        .add_node(first)
        .add_edge(START, "first")
        .add_conditional_edges("nobody", router, ["first"])
    )

    assert has_problem(build_error(builder), "'nobody'", "unknown node")


def test_compile_names_a_waiting_edge_with_an_unknown_source() -> None:
    builder = (
        StateGraph(State)
        .add_node(first)
        .add_node(second)
        .add_edge(START, "first")
        .add_edge(["first", "missing_one"], "second")
    )

    assert has_problem(build_error(builder), "'missing_one'", "unknown node")


def test_compile_refuses_end_as_a_source_and_start_as_a_target() -> None:
    builder = (
        StateGraph(State)
        .add_node(first)
        .add_edge(START, "first")
        .add_edge(END, "first")
        .add_edge("first", START)
    )

    error = build_error(builder)

    assert has_problem(error, "END cannot be the source")
    assert has_problem(error, "START cannot be the target")


def test_compile_names_a_node_that_is_not_callable() -> None:
    builder = StateGraph(State).add_node("broken", "not a function").add_edge(START, "broken")

    assert has_problem(build_error(builder), "'broken'", "callable")


def test_compile_names_an_unknown_interrupt_node() -> None:
    builder = StateGraph(State).add_node(first).add_edge(START, "first")

    with pytest.raises(GraphBuildError) as caught:
        builder.compile(interrupt_before=["nope"])

    assert has_problem(caught.value, "interrupt_before", "'nope'")


def test_compile_names_an_unexpected_state_graph_argument() -> None:
    builder = StateGraph(State, colour="blue").add_node(first).add_edge(START, "first")

    assert has_problem(build_error(builder), "'colour'")


def test_a_correct_graph_compiles_without_warnings() -> None:
    builder = StateGraph(State).add_sequence([first, second]).add_edge(START, "first")

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        app = builder.compile()

    assert set(app.spec.nodes) == {"first", "second"}


# --- unreachable nodes warn ------------------------------------------------------------------


def test_unreachable_node_is_a_warning_naming_it_not_an_error() -> None:
    builder = StateGraph(State).add_node(first).add_node("orphan", noop).add_edge(START, "first")

    with pytest.warns(UserWarning, match="'orphan'") as caught:
        app = builder.compile()

    assert "orphan" in app.spec.nodes
    assert not any("'first'" in str(w.message) for w in caught)


def test_node_reached_only_after_a_waiting_edge_is_reachable() -> None:
    builder = (
        StateGraph(State)
        .add_node(first)
        .add_node(second)
        .add_node(third)
        .add_edge(START, "first")
        .add_edge(START, "second")
        .add_edge(["first", "second"], "third")
    )

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        builder.compile()


def test_node_reached_through_a_path_map_is_reachable() -> None:
    builder = (
        StateGraph(State)
        .add_node(first)
        .add_node(second)
        .add_edge(START, "first")
        .add_conditional_edges("first", lambda s: "done", {"done": "second"})
    )

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        builder.compile()


# --- routers ---------------------------------------------------------------------------------


def choose(state: Any) -> Literal["first", "second"]:
    return "first"


def choose_or_end(state: Any) -> Literal["first", "__end__"]:
    return END


def test_router_annotated_with_literal_gets_a_path_map() -> None:
    builder = (
        StateGraph(State).add_node(first).add_node(second).add_conditional_edges(START, choose)
    )

    [branch] = spec_of(builder).branches[START]

    assert branch.router is choose
    assert dict(branch.path_map) == {"first": "first", "second": "second"}


def test_literal_router_targets_count_as_reachable() -> None:
    builder = (
        StateGraph(State).add_node(first).add_node(second).add_conditional_edges(START, choose)
    )

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        builder.compile()


def test_literal_router_may_name_end() -> None:
    builder = (
        StateGraph(State)
        .add_node(first)
        .add_edge(START, "first")
        .add_conditional_edges("first", choose_or_end)
    )

    [branch] = spec_of(builder).branches["first"]

    assert dict(branch.path_map) == {"first": "first", END: END}


def test_literal_router_naming_an_unknown_node_is_a_problem() -> None:
    builder = StateGraph(State).add_node(first).add_conditional_edges(START, choose)

    assert has_problem(build_error(builder), "'second'", "unknown node")


def test_router_without_annotation_has_no_path_map() -> None:
    builder = StateGraph(State).add_node(first).add_conditional_edges(START, router)

    assert builder.branches[0].path_map is None


def test_path_map_as_a_list_maps_each_name_to_itself() -> None:
    builder = StateGraph(State).add_node(first).add_conditional_edges(START, router, ["first"])

    assert builder.branches[0].path_map == {"first": "first"}


def test_path_map_as_a_dict_is_kept() -> None:
    builder = (
        StateGraph(State).add_node(first).add_conditional_edges(START, router, {True: "first"})
    )

    assert builder.branches[0].path_map == {True: "first"}


def test_router_that_is_not_callable_is_a_problem() -> None:
    builder = (
        StateGraph(State)
        .add_node(first)
        .add_edge(START, "first")
        .add_conditional_edges("first", "first")
    )

    assert has_problem(build_error(builder), "router is not callable")


# --- fields: private, input and output schemas -----------------------------------------------


def test_node_input_annotation_adds_its_keys_as_private_fields() -> None:
    builder = StateGraph(State).add_node(peek).add_edge(START, "peek")

    fields = spec_of(builder).fields

    assert "secret" in fields
    assert fields["secret"].private is True


def test_node_input_schema_argument_adds_private_fields_too() -> None:
    builder = StateGraph(State).add_node("peek", noop, input_schema=Private).add_edge(START, "peek")

    fields = spec_of(builder).fields

    assert "secret" in fields
    assert fields["secret"].private is True


def test_state_fields_stay_public_when_a_node_input_declares_them_too() -> None:
    builder = StateGraph(State).add_node(peek).add_edge(START, "peek")

    fields = spec_of(builder).fields

    assert fields["status"].private is False
    assert fields["log"].private is False
    assert fields["log"].reducer.fn is operator.add


def test_node_annotated_with_the_state_schema_has_no_own_input() -> None:
    def plain(state: State) -> None:
        return None

    builder = StateGraph(State).add_node(plain).add_edge(START, "plain")

    assert spec_of(builder).nodes["plain"].input is None


def test_node_input_schema_problems_are_reported_by_compile() -> None:
    def troubled(state: Troubled) -> None:
        return None

    builder = StateGraph(State).add_node(troubled).add_edge(START, "troubled")

    assert has_problem(build_error(builder), "'troubled'", "no_such_reducer_for_graph_tests")


def test_input_and_output_schemas_end_up_in_the_spec() -> None:
    builder = (
        StateGraph(Wide, input_schema=In, output_schema=Out)
        .add_node(first)
        .add_edge(START, "first")
    )

    spec = spec_of(builder)

    assert spec.state.cls is Wide
    assert spec.input.cls is In
    assert spec.output.cls is Out
    assert spec.input.keys == ("question",)
    assert spec.output.keys == ("answer",)
    assert set(spec.fields) == {"question", "answer", "log"}


def test_input_and_output_keys_outside_the_state_become_fields() -> None:
    builder = (
        StateGraph(State, input_schema=In, output_schema=Out)
        .add_node(first)
        .add_edge(START, "first")
    )

    fields = spec_of(builder).fields

    assert {"log", "status", "question", "answer"} <= set(fields)
    assert fields["question"].private is False


def test_legacy_input_and_output_arguments_are_accepted() -> None:
    builder = StateGraph(Wide, input=In, output=Out).add_node(first).add_edge(START, "first")

    spec = spec_of(builder)

    assert spec.input.cls is In
    assert spec.output.cls is Out


def test_without_input_and_output_schemas_they_are_the_state() -> None:
    spec = spec_of(StateGraph(State).add_node(first).add_edge(START, "first"))

    assert spec.input is spec.state
    assert spec.output is spec.state


def test_dict_schema_with_reducers_and_ephemeral_is_open() -> None:
    builder = (
        StateGraph(dict, reducers={"log": "append"}, ephemeral=["tmp"])
        .add_node(first)
        .add_edge(START, "first")
    )

    spec = spec_of(builder)

    assert spec.open_schema is True
    assert spec.fields["log"].reducer is get_reducer("append")
    assert spec.fields["tmp"].ephemeral is True


def test_state_graph_without_any_schema_is_a_build_error() -> None:
    with pytest.raises(GraphBuildError):
        StateGraph()


def test_interrupts_are_kept_and_star_means_every_node() -> None:
    builder = StateGraph(State).add_sequence([first, second]).add_edge(START, "first")

    spec = builder.validate(interrupt_before=["second"], interrupt_after=["*"])

    assert spec.interrupt_before == ("second",)
    assert spec.interrupt_after == ("first", "second")


def test_langgraph_options_nbgraph_does_not_act_on_are_named_in_a_warning() -> None:
    from typing import TypedDict

    class S(TypedDict):
        x: int

    graph = StateGraph(S)
    with pytest.warns(UserWarning, match="input_hints"):
        graph.add_node("a", lambda s: None, input_hints=object(), metadata={"k": 1})
    graph.add_edge(START, "a")
    with pytest.warns(UserWarning, match="checkpoint_during"):
        graph.compile(checkpoint_during=True)


# --- LangGraph parity: typing_extensions schemas, str path_map, unsupported policies ---------


class ExtOverall(typing_extensions.TypedDict):
    question: str
    answer: str
    log: Annotated[list, operator.add]


class ExtIn(typing_extensions.TypedDict):
    question: str


class ExtOut(typing_extensions.TypedDict):
    answer: str


class ExtPrivate(typing_extensions.TypedDict):
    draft: typing_extensions.NotRequired[str]


def ext_draft(state: ExtIn) -> ExtPrivate:
    return {"draft": state["question"].upper()}


def ext_answer(state: ExtPrivate) -> ExtOverall:
    return {"answer": state["draft"] + "!", "log": ["answered"]}


def test_typing_extensions_schemas_work_everywhere_a_schema_is_read() -> None:
    builder = (
        StateGraph(ExtOverall, input_schema=ExtIn, output_schema=ExtOut)
        .add_sequence([ext_draft, ext_answer])
        .add_edge(START, "ext_draft")
    )

    spec = builder.validate()

    assert spec.fields["draft"].private and spec.nodes["ext_answer"].input.cls is ExtPrivate
    assert builder.compile().invoke({"question": "hi"}) == {"answer": "HI!"}


def test_a_string_path_map_is_not_split_into_characters() -> None:
    builder = (
        StateGraph(State)
        .add_node("first", first)
        .add_node("second", second)
        .add_edge(START, "first")
        .add_conditional_edges("first", lambda s: "second", "second")
    )

    spec = builder.validate()

    assert spec.branches["first"][0].path_map is None  # as LangGraph: not a map
    assert builder.compile().invoke({"log": []})["log"] == ["first", "second"]


def test_a_string_path_map_falls_back_to_the_routers_literal_annotation() -> None:
    def route(state: State) -> Literal["second"]:
        return "second"

    builder = (
        StateGraph(State)
        .add_node("first", first)
        .add_node("second", second)
        .add_edge(START, "first")
        .add_conditional_edges("first", route, "ignored")
    )

    assert builder.validate().branches["first"][0].path_map == {"second": "second"}


@pytest.mark.parametrize("option", ["retry_policy", "cache_policy", "retry"])
def test_a_policy_that_is_not_one_is_refused_naming_the_node(option: str) -> None:
    builder = StateGraph(State).add_node("flaky", first, **{option: object()})
    builder.add_edge(START, "flaky")

    with pytest.raises(GraphBuildError) as caught:
        builder.compile()

    assert f"Node 'flaky': {option}= must be a" in str(caught.value)


def test_a_policy_of_none_is_no_policy() -> None:
    builder = StateGraph(State).add_node("a", first, retry_policy=None, cache_policy=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        builder.add_edge(START, "a").compile()
