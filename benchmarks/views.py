"""Render timings: a 200-node graph, and a 10,000-step run's overlay and state tree.

Run: `.venv/bin/python benchmarks/views.py`. Each figure is the best of several runs; the
baseline named next to each is measured in the same process (this machine is a noisy VM).
Renderers: the system `dot` (if installed) and `graphviz-pure` (installed with nbgraph).
"""

import itertools
import subprocess
import time
from typing import Annotated, TypedDict

from timing import best_seconds

from nbgraph import END, START, StateGraph
from nbgraph.views.drawings import render


def wide_graph(n: int):
    """n nodes in layers of 10, each layer fanning into the next."""

    class S(TypedDict):
        log: Annotated[list, "append"]

    graph = StateGraph(S)
    names = [f"node_{i:03d}" for i in range(n)]
    for name in names:
        graph.add_node(name, lambda s: None)
    layers = [names[i : i + 10] for i in range(0, n, 10)]
    for name in layers[0]:
        graph.add_edge(START, name)
    for upper, lower in itertools.pairwise(layers):
        for i, name in enumerate(lower):
            graph.add_edge(upper[i], name)
            graph.add_edge(upper[(i + 1) % len(upper)], name)
    for name in layers[-1]:
        graph.add_edge(name, END)
    return graph.compile()


def long_run(steps: int):
    class L(TypedDict):
        n: int
        log: Annotated[list, "append"]

    app = (
        StateGraph(L)
        .add_node("tick", lambda s: {"n": s["n"] + 1, "log": [s["n"]]})
        .add_node("check", lambda s: None)
        .add_edge(START, "tick")
        .add_edge("tick", "check")
        .add_conditional_edges("check", lambda s: END if s["n"] >= steps else "tick")
        .compile()
    )
    return app.run({"n": 0, "log": []}, {"recursion_limit": 2 * steps + 10})


def render_with(program: str, source: str) -> float:
    def once() -> None:
        done = subprocess.run([program, "-Tsvg"], input=source.encode(), capture_output=True)
        assert done.returncode == 0, done.stderr

    return best_seconds(once, 3)


def main() -> None:
    available = dict(render.renderers())
    print(f"renderers found: {', '.join(available) or 'none'}")
    graph = wide_graph(200)
    build = best_seconds(lambda: graph.draw().source)
    source = graph.draw().source
    print(f"200-node graph: DOT built in {build * 1e3:.1f} ms")
    for name, program in available.items():
        seconds = render_with(program, source)
        print(f"  rendered by {name:<14} {seconds * 1e3:8.1f} ms  ({seconds / build:6.0f}x DOT)")

    run_started = time.perf_counter()
    run = long_run(5000)
    run_seconds = time.perf_counter() - run_started
    steps = len(run.log.steps) - 1
    print(f"{steps:,}-step run recorded in {run_seconds * 1e3:.0f} ms (baseline)")
    overlay = best_seconds(lambda: run.draw().source, 3)
    print(
        f"  overlay DOT           {overlay * 1e3:8.1f} ms  ({overlay / run_seconds:5.2f}x the run)"
    )
    focused = best_seconds(lambda: run.draw(step=steps // 2).source, 3)
    print(
        f"  overlay, one step     {focused * 1e3:8.1f} ms  ({focused / run_seconds:5.2f}x the run)"
    )
    tree = best_seconds(lambda: run.draw_tree().source, 3)
    print(f"  state-tree DOT        {tree * 1e3:8.1f} ms  ({tree / run_seconds:5.2f}x the run)")
    overlay_source = run.draw().source
    tree_source = run.draw_tree().source
    for name, program in available.items():
        print(
            f"  overlay rendered by {name:<14} {render_with(program, overlay_source) * 1e3:7.1f} ms"
        )
        print(f"  tree rendered by {name:<17} {render_with(program, tree_source) * 1e3:7.1f} ms")
    render.clear_cache()
    cold = best_seconds(lambda: (render.clear_cache(), render.render_svg(overlay_source)), 3)
    warm = best_seconds(lambda: render.render_svg(overlay_source))
    print(
        f"  cached re-render: {warm * 1e6:.1f} µs vs {cold * 1e3:.1f} ms cold ({cold / warm:,.0f}x)"
    )


def inspector_timing() -> None:
    """Python work per step change in the inspector on a 10,000-step run."""
    run = long_run(5000)
    steps = len(run.log.steps) - 1
    started = time.perf_counter()
    inspector = run.inspect()
    opened = time.perf_counter() - started
    print(f"inspector on a {steps:,}-step run: opened in {opened * 1e3:.0f} ms")
    render.clear_cache()
    picks = [1, steps // 2, steps - 1, steps // 3, 2 * steps // 3]
    cold = []
    for step in picks:
        started = time.perf_counter()
        inspector.go(step)
        cold.append(time.perf_counter() - started)
    warm = []
    for step in picks:  # the same steps again: their SVG layouts are cached
        started = time.perf_counter()
        inspector.go(step)
        warm.append(time.perf_counter() - started)
    nexts = []
    for _ in range(20):
        started = time.perf_counter()
        inspector.next.click()
        nexts.append(time.perf_counter() - started)
    print(
        f"  step change, new layout: median {sorted(cold)[2] * 1e3:.1f} ms, "
        f"worst {max(cold) * 1e3:.1f} ms (target 50 ms)"
    )
    print(f"  step change, cached layout: median {sorted(warm)[2] * 1e3:.1f} ms")
    print(f"  'next' pressed 20 times: median {sorted(nexts)[10] * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
    inspector_timing()
