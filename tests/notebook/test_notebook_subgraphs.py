"""The subgraph patterns notebooks 04 and 06 teach, run on LangGraph and nbgraph (differential),
and the nested pictures they rely on (nbgraph only).

06 runs Eino's multi-agent loop over a pydantic state with each specialist a subgraph with its
own input and output schemas; 04 sends each region to one subgraph whose router picks a
branch. The programs here are those graphs, written against `api.*` so both engines run them.
"""

# No `from __future__ import annotations`: the state classes are defined inside functions and
# both engines read their annotations at run time.

import dataclasses
import itertools
import operator
import re
from typing import Annotated, Literal, TypedDict

import pydantic
import pytest

from tests.support.dot import edges, labels
from tests.support.harness import api_for, both, observe

pytestmark = pytest.mark.langgraph


def merge(old: dict, new: dict) -> dict:
    return {**old, **new}


# --- 06: Eino's specialists as subgraphs of a pydantic parent ---------------------------------

SCRIPT = {
    (0, "research"): ("two sources", 0.6),
    (0, "write"): ("a short draft", 0.5),
    (1, "research"): ("five sources", 0.9),
    (1, "write"): ("Rayleigh scattering: short wavelengths scatter most", 0.85),
    (1, "check"): ("no factual errors", 0.95),
}


class SpecialistState(TypedDict):
    question: str
    round_number: int
    output: str
    confidence: float
    specialist_results: Annotated[dict, merge]
    execution_history: Annotated[list[dict], operator.add]


class SpecialistIn(TypedDict):
    question: str
    round_number: int


class SpecialistOut(TypedDict):
    specialist_results: dict
    execution_history: list[dict]


def specialist_team(api, step: str, *stages, io_schemas: bool = True):
    """A specialist as a subgraph: its stages, then `report` (what goes back to the parent)."""

    def report(state: SpecialistState):
        result = {"output": state["output"], "confidence": state["confidence"]}
        record = {"round": state["round_number"], "step": step, "conf": state["confidence"]}
        return {"specialist_results": {step: result}, "execution_history": [record]}

    schemas = {"input_schema": SpecialistIn, "output_schema": SpecialistOut} if io_schemas else {}
    team = api.StateGraph(SpecialistState, **schemas)
    names = [name for name, _ in stages] + ["report"]
    for name, fn in [*stages, ("report", report)]:
        team.add_node(name, fn)
    team.add_edge(api.START, names[0])
    for before, after in itertools.pairwise(names):
        team.add_edge(before, after)
    return team.compile(name=step)


def work(step: str):
    def node(state: SpecialistState):
        output, confidence = SCRIPT[(state["round_number"], step)]
        return {"output": output, "confidence": confidence}

    return node


def polish(state: SpecialistState):
    return {"output": state["output"][0].upper() + state["output"][1:] + "."}


def eino_teams_program(api, io_schemas: bool = True):
    """plan → execute → the plan's specialists (subgraphs, in parallel) → collect → feedback →
    reflect, looping once: the specialists' results come back through the parent's reducers."""

    class Team(pydantic.BaseModel):
        question: str
        round_number: Annotated[int, operator.add] = 0
        max_rounds: int = 3
        current_plan: dict = {}
        specialist_results: Annotated[dict, merge] = {}
        execution_history: Annotated[list[dict], operator.add] = []
        feedback_history: Annotated[list[dict], operator.add] = []
        should_continue: bool = True
        final_answer: str | None = None

    def plan(state: Team):
        steps = ["research", "write"] + (["check"] if state.round_number else [])
        return {"current_plan": {"version": state.round_number + 1, "steps": steps}}

    def execute(state: Team):
        return {"specialist_results": api.Overwrite({})}

    def dispatch(state: Team):
        return state.current_plan["steps"]

    def feedback(state: Team):
        lowest = min(r["confidence"] for r in state.specialist_results.values())
        good = lowest >= 0.8
        return {
            "feedback_history": [{"round": state.round_number, "good_enough": good}],
            "should_continue": not good and state.round_number + 1 < state.max_rounds,
        }

    def reflect(state: Team) -> api.Command[Literal["plan", "__end__"]]:
        if state.should_continue:
            return api.Command(update={"round_number": 1}, goto="plan")
        answer = state.specialist_results["write"]["output"]
        return api.Command(update={"final_answer": answer}, goto=api.END)

    teams = {
        "research": specialist_team(
            api, "research", ("search", work("research")), io_schemas=io_schemas
        ),
        "write": specialist_team(
            api, "write", ("draft", work("write")), ("polish", polish), io_schemas=io_schemas
        ),
        "check": specialist_team(api, "check", ("verify", work("check")), io_schemas=io_schemas),
    }
    graph = api.StateGraph(Team)
    graph.add_node("plan", plan)
    graph.add_node("execute", execute)
    for name, team in teams.items():
        graph.add_node(name, team)
        graph.add_edge(name, "collect")
    graph.add_node("collect", lambda state: {})
    graph.add_node("feedback", feedback)
    graph.add_node("reflect", reflect)
    graph.add_edge(api.START, "plan")
    graph.add_edge("plan", "execute")
    graph.add_conditional_edges("execute", dispatch, list(teams))
    graph.add_edge("collect", "feedback")
    graph.add_edge("feedback", "reflect")
    return observe(graph.compile(), {"question": "Why is the sky blue?"})


def eino_teams_sharing_history_program(api):
    """The same loop with specialists over their whole state (no input/output schemas): each
    hands its whole state back, `question` too, so two specialists write `question` in one
    step: a conflict (and their histories would have been appended whole)."""
    return eino_teams_program(api, io_schemas=False)


def model_parent_program(api):
    """A pydantic parent: the subgraph gets the attributes its input schema knows; a None
    that is also the default and was not set is not passed (LangGraph's rule)."""

    class Parent(pydantic.BaseModel):
        topic: str
        note: str | None = None
        hint: str | None = "none given"
        seen: Annotated[list[str], operator.add] = []

    class Sub(TypedDict):
        topic: str
        note: str | None
        hint: str | None
        seen: Annotated[list[str], operator.add]

    def look(state: Sub):
        return {"seen": [f"{key}={state[key]!r}" for key in sorted(state) if key != "seen"]}

    sub = api.StateGraph(Sub)
    sub.add_node("look", look)
    sub.add_edge(api.START, "look")
    parent = api.StateGraph(Parent)
    parent.add_node("sub", sub.compile())
    parent.add_edge(api.START, "sub")
    app = parent.compile()
    return [
        observe(app, {"topic": "sky"}),
        observe(app, {"topic": "sea", "note": None, "hint": None}),
        observe(app, {"topic": "sun", "note": "hot"}),
    ]


def dataclass_parent_program(api):
    """A dataclass parent: every attribute the subgraph's input schema knows goes in."""

    @dataclasses.dataclass
    class Parent:
        topic: str
        note: str | None = None
        log: Annotated[list[str], operator.add] = dataclasses.field(default_factory=list)

    class SubIn(TypedDict):
        topic: str
        note: str | None

    class Sub(TypedDict):
        topic: str
        note: str | None
        log: Annotated[list[str], operator.add]

    sub = api.StateGraph(Sub, input_schema=SubIn)
    sub.add_node("say", lambda state: {"log": [f"{state['topic']}/{state.get('note')}"]})
    sub.add_edge(api.START, "say")
    parent = api.StateGraph(Parent)
    parent.add_node("sub", sub.compile())
    parent.add_edge(api.START, "sub")
    return observe(parent.compile(), {"topic": "sky"})


# --- 04: each region sent to one subgraph, a router inside it ----------------------------------

CATALOGUE = {"eu": (90.0, "EUR"), "us": (105.0, "USD"), "jp": (14_000.0, "JPY")}
RATES_TO_USD = {"EUR": 1.10, "USD": 1.00, "JPY": 0.0067}


def quote_app(api, foreign: set[str]):
    """plan sends each region to `price` (a subgraph: fetch, then convert or keep); the
    parent merges each region's quote. A typo in `foreign` sends one region the wrong way."""

    class Quote(TypedDict):
        item: str
        quotes: Annotated[dict, merge]
        log: Annotated[list, operator.add]
        cheapest: str

    class Price(TypedDict):
        region: str
        amount: float
        currency: str
        quotes: Annotated[dict, merge]
        log: Annotated[list, operator.add]

    class PriceOut(TypedDict):
        quotes: dict
        log: list

    def fetch(state: Price):
        amount, currency = CATALOGUE[state["region"]]
        return {"amount": amount, "currency": currency, "log": [f"{state['region']}: fetched"]}

    def route(state: Price) -> Literal["convert", "keep"]:
        return "convert" if state["currency"] in foreign else "keep"

    def convert(state: Price):
        usd = round(state["amount"] * RATES_TO_USD[state["currency"]], 2)
        return {"quotes": {state["region"]: usd}, "log": [f"{state['region']}: converted"]}

    def keep(state: Price):
        return {"quotes": {state["region"]: state["amount"]}, "log": [f"{state['region']}: kept"]}

    price = api.StateGraph(Price, output_schema=PriceOut)
    price.add_node("fetch", fetch)
    price.add_node("convert", convert)
    price.add_node("keep", keep)
    price.add_edge(api.START, "fetch")
    price.add_conditional_edges("fetch", route)

    def summarise(state: Quote):
        best = min(state["quotes"], key=state["quotes"].get)
        return {"cheapest": f"{best} at ${state['quotes'][best]:.2f}", "log": ["summary"]}

    parent = api.StateGraph(Quote)
    parent.add_node("plan", lambda state: {"log": ["plan"]})
    parent.add_node("price", price.compile(name="price"))
    parent.add_node("summarise", summarise)
    parent.add_edge(api.START, "plan")
    parent.add_conditional_edges(
        "plan", lambda state: [api.Send("price", {"region": r}) for r in CATALOGUE], ["price"]
    )
    parent.add_edge("price", "summarise")
    parent.add_edge("summarise", api.END)
    return parent.compile()


def quote_with_typo_program(api):
    return observe(quote_app(api, {"EUR", "GBP", "JYP"}), {"item": "a kettle"})


def quote_fixed_program(api):
    return observe(quote_app(api, {"EUR", "GBP", "JPY"}), {"item": "a kettle"})


PROGRAMS = [
    eino_teams_program,
    eino_teams_sharing_history_program,
    model_parent_program,
    dataclass_parent_program,
    quote_with_typo_program,
    quote_fixed_program,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
@pytest.mark.filterwarnings("ignore:Node .* wrote keys that were dropped")
def test_the_notebooks_subgraph_programs_behave_as_on_langgraph(program):
    on_langgraph, on_nbgraph = both(program)
    assert on_nbgraph == on_langgraph


def test_what_the_notebooks_say_about_those_programs():
    """The claims 04 and 06 make in words, checked on LangGraph's own results."""
    api = api_for("langgraph")
    teams = eino_teams_program(api)[1]["final"]
    assert [r["step"] for r in teams["execution_history"]] == [
        "research", "write", "check", "research", "write"
    ]  # fmt: skip
    assert teams["final_answer"] == "Rayleigh scattering: short wavelengths scatter most."
    assert eino_teams_sharing_history_program(api) == ("raised", "InvalidUpdateError")
    typo = quote_with_typo_program(api)[1]["final"]
    fixed = quote_fixed_program(api)[1]["final"]
    assert typo["quotes"]["jp"] == 14_000.0 and typo["cheapest"] == "eu at $99.00"
    assert fixed["quotes"]["jp"] == 93.8 and fixed["cheapest"] == "jp at $93.80"


# --- the pictures 04 relies on (nbgraph only) -------------------------------------------------


def test_a_sent_subgraphs_cluster_counts_each_branch_its_runs_took():
    api = api_for("nbgraph")
    for foreign, convert, keep in (({"EUR", "JYP"}, 1, 2), ({"EUR", "JPY"}, 2, 1)):
        run = quote_app(api, foreign).run({"item": "a kettle"})
        assert [sub.task for sub in run.subruns] == ["2:0:price", "2:1:price", "2:2:price"]
        source = run.draw().source
        assert "subgraph price — 6 tasks inside" in source
        found = labels(source)
        assert f"convert\\nran ×{convert}" in found.values()
        assert f"keep\\nran ×{keep}" in found.values()
        taken = {attrs.split('"')[1] for _, _, attrs in edges(source) if "×" in attrs}
        assert {f"convert ×{convert}", f"keep ×{keep}", "price Send ×3"} <= taken


def test_a_faded_subgraph_node_is_faded_inside_its_cluster_too():
    from nbgraph.views.drawings.dot import FADED, HIGHLIGHT_INK

    api = api_for("nbgraph")
    run = quote_app(api, {"EUR", "JPY"}).run({"item": "a kettle"})

    def inside(source: str) -> list[str]:
        """The lines drawing the cluster's nodes and edges (its ids are n<k>_n<j>)."""
        return [line for line in source.splitlines() if re.search(r"\bn\d+_n\d+\b", line)]

    for picture in (run.draw(step=1), run.draw(branch="1:0:plan")):  # price left out
        lines = inside(picture.source)
        # START, END, 3 nodes, 3 edges, convert's and keep's ways to END, the link from price
        assert len(lines) == 11
        assert all(FADED in line for line in lines), lines
    for picture in (run.draw(step=2), run.draw(branch="3:0:summarise")):  # price in focus
        assert f'color="{HIGHLIGHT_INK}"' in picture.source
        assert not any(FADED in line for line in inside(picture.source))
    assert not any(FADED in line for line in inside(run.draw().source))
