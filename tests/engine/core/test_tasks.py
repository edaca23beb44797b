"""What a node and a router are handed: the fields of the schema they read, nothing more."""

from typing import TypedDict

from nbgraph import START, StateGraph


class Overall(TypedDict):
    a: str


class Asked(TypedDict):
    a: str
    question: str


class Private(TypedDict):
    secret: str


def test_a_node_typed_with_the_state_schema_does_not_see_private_or_input_only_keys() -> None:
    seen: dict = {}

    def make_secret(state: Overall) -> Private:
        seen["make_secret"] = dict(state)
        return {"secret": "s"}

    def use_secret(state: Private) -> Overall:
        seen["use_secret"] = dict(state)
        return {"a": "used"}

    def overall(state: Overall) -> Overall:
        seen["overall"] = dict(state)
        return {"a": "done"}

    def unannotated(state):
        seen["unannotated"] = dict(state)
        return {}

    app = (
        StateGraph(Overall, input_schema=Asked)
        .add_sequence([make_secret, use_secret, overall, unannotated])
        .add_edge(START, "make_secret")
        .compile()
    )

    assert app.invoke({"a": "x", "question": "q"}) == {"a": "done"}
    assert seen == {
        "make_secret": {"a": "x"},
        "use_secret": {"secret": "s"},
        "overall": {"a": "used"},
        "unannotated": {"a": "done"},
    }


def test_a_router_reads_the_schema_its_first_parameter_is_annotated_with() -> None:
    seen: list = []

    def route_private(state: Private) -> str:
        seen.append(("private", dict(state)))
        return "__end__"

    def route_overall(state: Overall) -> str:
        seen.append(("overall", dict(state)))
        return "__end__"

    app = (
        StateGraph(Overall)
        .add_node("make", lambda s: {"secret": "s", "a": "made"}, input_schema=Overall)
        .add_node("read", lambda s: {}, input_schema=Private)
        .add_edge(START, "make")
        .add_conditional_edges("make", route_private)
        .add_conditional_edges("make", route_overall)
        .compile()
    )
    app.invoke({"a": "x"})

    # the router sees the step's start plus its node's own writes, in its own schema
    assert seen == [("private", {"secret": "s"}), ("overall", {"a": "made"})]


def test_an_open_dict_schema_still_hands_every_key() -> None:
    seen: list = []

    def node(state):
        seen.append(dict(state))
        return {"extra": 1}

    app = (
        StateGraph(dict, reducers={"log": "append"})
        .add_node("n", node)
        .add_node("m", node)
        .add_edge(START, "n")
        .add_edge("n", "m")
        .compile()
    )
    app.invoke({"log": [], "free": True})

    assert seen == [{"log": [], "free": True}, {"log": [], "free": True, "extra": 1}]
