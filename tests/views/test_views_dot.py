"""Drawings, checked through their DOT source: nodes, edges, styles, run overlays, escaping."""

import operator
import re
from typing import Annotated, Literal, TypedDict

import pytest

from nbgraph import END, START, Command, Send, StateGraph
from nbgraph.views.drawings.dot import label
from tests.support.dot import edges, labels


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]
    note: str


def node_id(source: str, text: str) -> str:
    return next(i for i, t in labels(source).items() if t.split("\\n")[0] == text)


def full_graph():
    def goto(state) -> Command[Literal["d"]]:
        return Command(goto="d")

    return (
        StateGraph(S)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_node("c", goto)
        .add_node("d", lambda s: {"log": ["d"]}, defer=True)
        .add_node("j", lambda s: {"log": ["j"]}, merge=lambda states: states[0])
        .add_edge(START, "a")
        .add_conditional_edges("a", lambda s: "b", {"go": "b", "stop": END})
        .add_edge("a", "c", state_filter=lambda s: s)
        .add_edge(["b", "c"], "j")
        .add_edge("j", END)
    )


def test_graph_drawing_has_terminals_nodes_and_every_kind_of_edge():
    source = full_graph().compile().draw().source
    names = {t.split("\\n")[0] for t in labels(source).values()}
    assert {"START", "END", "a", "b", "c", "d", "j"} <= names
    a, b, j = (node_id(source, n) for n in "abj")
    conditional = next(e for e in edges(source) if e[0] == a and e[1] == b)
    assert "dashed" in conditional[2] and "label=go" in conditional[2]
    filtered = next(e for e in edges(source) if e[0] == a and e[1] == node_id(source, "c"))
    assert "filter" in filtered[2]
    goto = next(e for e in edges(source) if e[1] == node_id(source, "d"))
    assert "dotted" in goto[2] and "goto" in goto[2]
    # the waiting edge is one junction: b and c go into it, it goes into j
    junction = next(e for e in edges(source) if e[1] == j)[0]
    assert junction.startswith("join")
    assert {e[0] for e in edges(source) if e[1] == junction} == {b, node_id(source, "c")}
    deferred = labels(source)[node_id(source, "d")]
    assert "(deferred)" in deferred and re.search(rf"{node_id(source, 'd')} \[.*dashed", source)
    assert "merge: <lambda>" in labels(source)[j]


def test_a_graph_being_built_draws_and_marks_unknown_nodes():
    source = StateGraph(S).add_node("a", lambda s: None).add_edge("a", "later").draw().source
    assert "later\\n(unknown node)" in source


def test_router_without_path_map_draws_a_dynamic_choice():
    app = (
        StateGraph(S)
        .add_node("a", lambda s: None)
        .add_node("w", lambda arg: {"log": [arg]})
        .add_edge(START, "a")
        .add_conditional_edges("a", lambda s: [Send("w", 1), Send("w", 2)])
        .compile()
    )
    assert "any node or Send" in app.draw().source
    run = app.run({"log": []})
    source = run.draw().source
    w = node_id(source, "w")
    sent = next(e for e in edges(source) if e[1] == w)
    assert "Send ×2" in sent[2]
    assert "ran ×2" in labels(source)[w]


WRITE = "write"  # a router may name a node through a global


def looping_app():
    """draft loops on itself through a lambda router with no path map, then goes to write."""
    return (
        StateGraph(S)
        .add_node("draft", lambda s: {"log": ["d"]})
        .add_node(WRITE, lambda s: {"note": "done"})
        .add_edge(START, "draft")
        .add_conditional_edges("draft", lambda s: "draft" if len(s["log"]) < 3 else WRITE)
        .add_edge(WRITE, END)
        .compile()
    )


def test_a_lambda_routers_loop_is_drawn_back_to_its_node():
    """LangGraph's drawing of this graph has no way back to draft and none to write (its
    get_graph() knows only draft -> END, which ours mirrors); nbgraph's draw() adds a dotted
    "maybe" way from the router to each node its code names."""
    from langgraph.graph import StateGraph as LangGraph

    app = looping_app()
    theirs = LangGraph(S)
    theirs.add_node("draft", lambda s: {"log": ["d"]})
    theirs.add_node(WRITE, lambda s: {"note": "done"})
    theirs.add_edge(START, "draft")
    theirs.add_conditional_edges("draft", lambda s: "draft" if len(s["log"]) < 3 else WRITE)
    theirs.add_edge(WRITE, END)
    as_pairs = lambda graph: sorted((e.source, e.target) for e in graph.edges)  # noqa: E731
    assert as_pairs(app.get_graph()) == as_pairs(theirs.compile().get_graph())
    source = app.draw().source
    draft, write = node_id(source, "draft"), node_id(source, "write")
    router = node_id(source, "route after draft")
    maybe = {e[1] for e in edges(source) if e[0] == router and "maybe" in e[2]}
    assert maybe == {draft, write}
    # over a run, the ways it took are drawn from draft itself (counted), not as "maybe"
    run_source = app.run({"log": []}).draw().source
    draft = node_id(run_source, "draft")
    taken = {e[1]: e[2] for e in edges(run_source) if e[0] == draft}
    assert "×2" in taken[draft] and "×1" in taken[node_id(run_source, "write")]
    assert not [e for e in edges(run_source) if "maybe" in e[2]]


def test_run_overlay_counts_runs_and_taken_edges_and_marks_the_failure():
    def boom(state):
        raise KeyError("missing tool")

    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("boom", boom)
        .add_node("never", lambda s: None)
        .add_edge(START, "a")
        .add_edge("a", "boom")
        .add_edge("boom", "never")
        .compile()
    )
    run = app.run({"log": []})
    source = run.draw().source
    boom_id, never = node_id(source, "boom"), node_id(source, "never")
    assert "raised KeyError" in labels(source)[boom_id]
    assert re.search(rf'{boom_id} \[.*fillcolor="#f4cccc"', source)
    assert re.search(rf'{never} \[.*color="#c8c8c8"', source)  # never ran: faded
    taken = next(e for e in edges(source) if e[1] == boom_id)
    assert "×1" in taken[2] and "penwidth=2" in taken[2]
    assert "KeyError" in source.splitlines()[4]  # the caption names the error


def test_step_and_branch_focus_highlight_and_fade():
    app = (
        StateGraph(S)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_node("c", lambda s: {"log": ["c"]})
        .add_node("d", lambda s: {"log": ["d"]})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge("a", "c")
        .add_edge("b", "d")
        .compile()
    )
    run = app.run({"log": []})
    step = run.draw(step=2).source
    assert re.search(rf"{node_id(step, 'c')} \[.*penwidth=2.5", step)
    assert re.search(rf'{node_id(step, "b")} \[.*fontcolor="#c8c8c8"', step)  # not in step 2
    task_d = run.steps.set_index("node").loc["d", "task_id"]
    branch = run.draw(branch=task_d).source
    for name in ("b", "d"):
        assert re.search(rf"{node_id(branch, name)} \[.*penwidth=2.5", branch)
    for name in ("a", "c"):
        assert not re.search(rf"{node_id(branch, name)} \[.*penwidth=2.5", branch)
    with pytest.raises(ValueError, match="no step 7"):
        run.draw(step=7)
    with pytest.raises(ValueError, match="no task"):
        run.draw(branch="9:9:zz")


def test_labels_from_names_and_values_are_escaped():
    evil = '<b>x</b> "q" \\ <script>'
    app = (
        StateGraph(S)
        .add_node(evil, lambda s: {"note": "<img src=x onerror=alert(1)>", "log": [evil]})
        .add_edge(START, evil)
        .compile()
    )
    run = app.run({"log": []})
    for drawing in (app.draw(), run.draw(), run.draw_tree()):
        source = drawing.source
        assert "label=<" not in source  # never an HTML-like label
        assert '\\"q\\"' in source and "\\\\" in source  # quotes and backslashes as text
    assert str(label("a\\b")) == "a\\\\b"


def test_tree_drawing_shows_merges_resets_and_collapses_long_runs():
    class J(TypedDict, total=False):
        log: Annotated[list, operator.add]
        scratch: str

    app = (
        StateGraph(J)
        .add_node("a", lambda s: {"log": ["a"], "scratch": "x"})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_node("join", lambda s: {"log": ["j"]}, merge=lambda states: {"log": ["merged"]})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge(["a", "b"], "join")
        .compile()
    )
    source = app.run({"log": []}).draw_tree().source
    assert "root reset (merge) for join\\ndropped: scratch" in source
    merge_1 = node_id(source, "merge 1")
    into_merge = [e for e in edges(source) if e[1] == merge_1]
    assert [re.search(r"label=(\d)", e[2]).group(1) for e in into_merge] == ["1", "2"]

    class L(TypedDict):
        n: int

    loop = (
        StateGraph(L)
        .add_node("tick", lambda s: {"n": s["n"] + 1})
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["n"] >= 3000 else "tick")
        .compile()
        .run({"n": 0}, {"recursion_limit": 4000})
    )
    long_source = loop.draw_tree().source
    assert "steps 3–2998: 2996 tasks (tick ×2996)" in long_source
    assert len(long_source.splitlines()) < 60


def test_a_paused_run_draws_its_waiting_node_and_tree_task():
    from nbgraph import MemorySaver, interrupt

    app = (
        StateGraph(S)
        .add_node("ask", lambda s: {"note": interrupt("approve <this>?")})
        .add_edge(START, "ask")
        .compile(checkpointer=MemorySaver())
    )
    app.invoke({"log": []}, {"configurable": {"thread_id": "p"}})
    run = app.last_run
    source = run.draw().source
    ask = node_id(source, "ask")
    assert "paused: waiting for an answer" in labels(source)[ask]
    assert re.search(rf'{ask} \[.*fillcolor="#cfe2f3"', source)
    assert "paused: 'approve <this>?'" in run.draw_tree().source
    assert list(run.steps.status) == ["paused"]


class Broken:
    """A value whose repr raises (a proxy to a closed resource, say)."""

    def __repr__(self):
        raise RuntimeError('closed "handle" <b>')


def test_a_value_whose_repr_raises_draws_as_a_placeholder():
    from nbgraph.views.drawings.dot import short

    run = (
        StateGraph(dict)
        .add_node("a", lambda s: {"h": Broken(), "items": [1, Broken()]})
        .add_edge(START, "a")
        .compile()
        .run({"h": None})
    )
    source = run.draw_tree().source  # raised RuntimeError before
    assert "h ← <Broken: repr raised Runtim…" in source and "label=<" not in source
    assert "items ← [1, <Broken: repr raised" in source
    assert (
        short([1, Broken()], 80) == '[1, <Broken: repr raised RuntimeError: closed "handle" <b>>]'
    )
    assert short(list(range(10**6)), 12) == "[0, 1, 2, 3…"  # long values are read as far as shown


class _Log(TypedDict):
    log: Annotated[list, operator.add]


def test_a_loaded_run_with_a_dense_graph_is_not_laid_out(tmp_path):
    import json
    import time

    from nbgraph import Run
    from nbgraph.views.drawings.render import LAYOUT_EDGES, layout_problem, render_svg

    app = StateGraph(_Log).add_node("a", lambda s: {"log": ["a"]}).add_edge(START, "a").compile()
    assert layout_problem("digraph {a -> b}") == ""
    doc = json.loads(app.run({"log": []}).to_json())
    node = doc["graph"]["nodes"][0]
    doc["graph"]["nodes"] = [dict(node, name=f"n{i}") for i in range(300)] + [node]
    for i in range(30):  # a 30 x 30 block: 900 edges, about 7 s of graphviz layout
        doc["graph"]["edges"][f"n{i}"] = [f"n{j}" for j in range(30)]
    run = Run.from_json(json.dumps(doc))
    started = time.perf_counter()
    page = run.save_html(tmp_path / "dense.html").read_text(encoding="utf-8")
    assert time.perf_counter() - started < 5
    assert "too large to lay out" in page
    dense = "digraph {" + "".join(f"a{i} -> b{i};" for i in range(LAYOUT_EDGES + 1)) + "}"
    shown = render_svg(dense)
    assert shown.svg is None and f"{LAYOUT_EDGES:,} edges" in shown.problem
