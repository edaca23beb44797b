"""The random differential fuzz: random graph programs, each run on real LangGraph and on
nbgraph, compared.

A seed makes one `Program`: plain data (nodes, what each writes, asks or returns, static,
conditional and waiting edges, `Send`s, `Command(goto=, update=)`, `defer=True`, reducers
(overwrite, `operator.add` on lists and numbers, a custom one), a subgraph, a saver (none,
in memory, SQLite), a durability mode, a recursion limit, and the calls made on a thread:
an input, answers to questions (`Command(resume=)`, by id when several wait), `invoke(None)`
after a limit, a `Command(goto=, update=)` on a finished thread, `update_state`). `build`
turns it into a graph of one library, through the harness's namespace of names
(`tests.support.harness.api_for`): the same builder for both, only the imports differ.
`observe` runs the calls twice on a thread each, once invoked and once streamed
(`updates` and `values`), and keeps what a program could see: each call's output or error,
the stream's chunks (`canonical_stream`), `get_state` after each call (values, next, tasks
with their interrupts and errors, the interrupts) and at the end the thread's history
(values, next, metadata step and source).

`compare` normalises only what may differ between the libraries (ids, timestamps,
checkpoint ids are not observed at all; an error is its class, and nbgraph's counts as
LangGraph's when LangGraph's class name is among its bases: a LangGraph `except` catches
it; parallel tasks' stream chunks within a step as a multiset) and names the first place
two observations part. `ON_PURPOSE` lists the differences nbgraph keeps on purpose, each a
named predicate with its reason; a difference it matches is counted apart.

    python -m tests.support.fuzz --programs 5000 [--seed N] [--show 5]

runs programs with seeds N, N+1, ... and prints how many ran, how many differ (by kind),
and the first differing seeds with their programs. `tests/parity/test_langgraph_fuzz.py`
runs a fixed set in CI.
"""

from __future__ import annotations

import argparse
import operator
import random
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypedDict

from tests.support.harness import LIBRARIES, MODES, api_for, canonical_stream, plain

__all__ = [
    "ON_PURPOSE",
    "Program",
    "build",
    "compare",
    "generate",
    "main",
    "observe",
    "run_seed",
]


def keep_three(old: list, new: list) -> list:
    """The custom reducer: the last three items of both lists."""
    return (list(old or []) + list(new or []))[-3:]


class State(TypedDict, total=False):
    """Every program's state: a log (`operator.add`), an overwritten value, a counter
    (`operator.add` on ints) and a custom-reduced list."""

    log: Annotated[list, operator.add]
    v: int
    count: Annotated[int, operator.add]
    last: Annotated[list, keep_three]


# ---------------------------------------------------------------------------------------------
# A program, as plain data


@dataclass
class NodeDesc:
    """One node: what it writes (`log` always; `v`, `count`, `last` if asked), whether it
    asks a question (`interrupt()`), fails on its first call, returns a `Command` (its
    `goto`: node names or `("send", node)`), runs deferred, or is the subgraph."""

    name: str
    writes_v: bool = False
    writes_count: bool = False
    writes_last: bool = False
    asks: bool = False
    fails_once: bool = False
    command_goto: list[Any] = field(default_factory=list)
    defer: bool = False
    subgraph: bool = False


@dataclass
class RouterDesc:
    """A conditional edge from `source`: while the log is shorter than `bound` it routes to
    `loop` (names, or `("send", node, n)`: n Sends), then to `done`."""

    source: str
    loop: list[Any]
    done: list[str]
    bound: int


@dataclass
class Program:
    """One random program (see the module's doc)."""

    seed: int
    nodes: list[NodeDesc]
    starts: list[str]
    edges: list[tuple[str, str]]
    waits: list[tuple[tuple[str, ...], str]]
    routers: list[RouterDesc]
    saver: str  # "none", "memory", "sqlite"
    durability: str | None
    limit: int
    sub_asks: bool
    calls: list[Any]  # after the input: "answer", "plain", "none", ("goto", node), ("update", node)

    def lines(self) -> list[str]:
        """The program, briefly (what the summary prints for a differing seed)."""
        out = [f"seed {self.seed}: saver={self.saver} durability={self.durability} "
               f"recursion_limit={self.limit}"]  # fmt: skip
        for node in self.nodes:
            flags = [k for k in ("writes_v", "writes_count", "writes_last", "asks", "fails_once",
                                 "defer", "subgraph") if getattr(node, k)]  # fmt: skip
            if node.command_goto:
                flags.append(f"Command(goto={node.command_goto})")
            if node.subgraph and self.sub_asks:
                flags.append("subgraph asks")
            out.append(f"  node {node.name}: {', '.join(flags) or 'plain'}")
        out.append(f"  START -> {self.starts}")
        out += [f"  edge {a} -> {b}" for a, b in self.edges]
        out += [f"  waiting edge {list(a)} -> {b}" for a, b in self.waits]
        out += [f"  router {r.source}: {r.loop} while len(log) < {r.bound}, else {r.done}"
                for r in self.routers]  # fmt: skip
        out.append(f"  calls: input, then {self.calls}")
        return out


def generate(seed: int) -> Program:
    """The program of `seed` (the same on every machine and Python run)."""
    rng = random.Random(seed)
    count = rng.randint(2, 6)
    names = [f"n{i}" for i in range(count)]
    saver = rng.choices(["none", "memory", "sqlite"], [3, 6, 2])[0]
    nodes = []
    for name in names:
        node = NodeDesc(
            name,
            writes_v=rng.random() < 0.15,
            writes_count=rng.random() < 0.3,
            writes_last=rng.random() < 0.3,
            asks=rng.random() < (0.2 if saver != "none" else 0.05),
            fails_once=rng.random() < 0.05,
            defer=rng.random() < 0.12,
        )
        if rng.random() < 0.12:
            node.command_goto = [rng.choice([*names, ("send", rng.choice(names))])]
        nodes.append(node)
    if saver != "none" and rng.random() < 0.12:
        rng.choice(nodes[1:]).subgraph = True
    starts = rng.sample(names, k=1 if rng.random() < 0.8 else 2)
    edges, waits, routers = [], [], []
    for i, name in enumerate(names):
        kind = rng.choices(["edge", "router", "none", "two"], [5, 3, 1, 1])[0]
        later = names[i + 1 :] or ["__end__"]
        if kind == "edge":
            edges.append((name, rng.choice([*later, "__end__"] if rng.random() < 0.3 else later)))
        elif kind == "two":
            for target in rng.sample(names, k=min(2, len(names))):
                if target != name or rng.random() < 0.3:
                    edges.append((name, target))
        elif kind == "router":
            loop: list[Any] = [rng.choice(names)]
            if rng.random() < 0.35:
                loop = [("send", rng.choice(names), rng.randint(1, 3))]
            elif rng.random() < 0.2:
                loop.append(rng.choice(names))
            done = [rng.choice([*later, "__end__"])]
            routers.append(RouterDesc(name, loop, done, rng.randint(2, 9)))
    if len(names) >= 3 and rng.random() < 0.2:
        a, b, c = rng.sample(names, 3)
        waits.append(((a, b), c))
    durability = None
    if saver != "none" and rng.random() < 0.25:
        durability = rng.choice(["sync", "async", "exit"])
    calls: list[Any] = []
    if saver != "none":
        for _ in range(rng.randint(1, 3)):
            calls.append(rng.choices(["answer", "plain", "none"], [6, 1, 2])[0])
        if rng.random() < 0.2:
            calls.append(("goto", rng.choice(names)))
        if rng.random() < 0.15:
            calls.append(("update", rng.choice(names)))
    return Program(
        seed, nodes, starts, edges, waits, routers, saver, durability,
        rng.choice([2, 3, 4, 5, 6, 8, 25]), rng.random() < 0.4, calls,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Building it in one library


def _node_fn(api: Any, node: NodeDesc, phase: dict) -> Callable[[Any], Any]:
    """What `node` runs: deterministic in the state it is handed (and `phase["first"]`: a
    node that fails once fails in every task of it during the thread's first call, so
    parallel tasks of it fail alike, and not after)."""

    def run(state: Any) -> Any:
        log = state.get("log") or []
        if node.fails_once and phase["first"]:
            time.sleep(0.02)  # (LangGraph drops the siblings that have not finished when a
            raise KeyError(f"{node.name} fails once")  # task fails: let them finish first)
        said = ""
        if node.asks:
            said = f":{api.interrupt(f'{node.name}?')}"
        update: dict[str, Any] = {"log": [f"{node.name}{said}"]}
        if node.writes_v:
            update["v"] = len(log)
        if node.writes_count:
            update["count"] = 1
        if node.writes_last:
            update["last"] = [node.name]
        if node.command_goto:
            goto = [api.Send(g[1], {"log": [f"to {g[1]}"]}) if isinstance(g, tuple) else g
                    for g in node.command_goto]  # fmt: skip
            return api.Command(update=update, goto=goto)
        return update

    run.__name__ = node.name
    return run


def _router(api: Any, router: RouterDesc) -> Callable[[Any], Any]:
    def route(state: Any) -> Any:
        if len(state.get("log") or []) >= router.bound:
            return list(router.done)
        out = []
        for target in router.loop:
            if isinstance(target, tuple):
                _, node, n = target
                out += [api.Send(node, {"log": [f"send {i}"]}) for i in range(n)]
            else:
                out.append(target)
        return out

    return route


def _subgraph(api: Any, asks: bool) -> Any:
    def inner(state: Any) -> Any:
        said = f":{api.interrupt('sub?')}" if asks else ""
        return {"log": [f"sub{said}"], "count": 1}

    builder = api.StateGraph(State).add_node("inner", inner)
    builder.add_node("inner2", lambda s: {"log": ["sub2"]})
    graph = builder.add_edge(api.START, "inner").add_edge("inner", "inner2").compile()

    def run_subgraph(state: Any) -> Any:  # (its new entries only: a subgraph added as the
        seen = len(state.get("log") or [])  # node hands back its whole log, which `add`
        out = graph.invoke(state)  # doubles, and a loop through it soon holds millions)
        return {"log": out["log"][seen:], "count": 1}

    return run_subgraph


def build(api: Any, program: Program, phase: dict | None = None) -> Any:
    """`program` compiled in `api`'s library (its saver from `api.saver()`); `phase`:
    `{"first": bool}`, whether the thread's first call runs (its nodes that fail once fail)."""
    builder = api.StateGraph(State)
    phase = {"first": True} if phase is None else phase
    for node in program.nodes:
        if node.subgraph:
            builder.add_node(node.name, _subgraph(api, program.sub_asks), defer=node.defer)
        else:
            builder.add_node(node.name, _node_fn(api, node, phase), defer=node.defer)
    for start in program.starts:
        builder.add_edge(api.START, start)
    for a, b in program.edges:
        builder.add_edge(a, api.END if b == "__end__" else b)
    for sources, target in program.waits:
        builder.add_edge(list(sources), target)
    for router in program.routers:
        builder.add_conditional_edges(router.source, _router(api, router))
    saver = None if program.saver == "none" else api.saver()
    return builder.compile(checkpointer=saver)


# ---------------------------------------------------------------------------------------------
# Running it


LANGGRAPH_ASYNC_RACE = (
    "LangGraph's default durability, 'async', saves a checkpoint on another thread while "
    "the next step runs, and a waiting edge's channel hands the checkpoint its live set of "
    "sources (NamedBarrierValue.checkpoint returns self.seen): the saved checkpoint may hold "
    "a source of the next step, so its `next` in the history lists a node that does not run "
    "then. LangGraph runs under 'sync' here when a program asks for 'async' or nothing (the "
    "checkpoints it saves under 'async' are meant to be the same); nbgraph runs the program's "
    "own mode."
)


def _error(error: BaseException) -> tuple:
    """An error as compared: its class name and its classes' names (`compare`)."""
    return ("raised", type(error).__name__, tuple(c.__name__ for c in type(error).__mro__))


def _snapshot(state: Any) -> dict[str, Any]:
    return {
        "values": plain(state.values),
        "next": tuple(state.next),
        "tasks": [
            (t.name, [plain(i.value) for i in t.interrupts], t.error is not None)
            for t in state.tasks
        ],
        "interrupts": [plain(i.value) for i in state.interrupts],
        "step": state.metadata["step"] if state.metadata else None,
        "source": state.metadata["source"] if state.metadata else None,
    }


def _history(app: Any, config: dict) -> list:
    return [
        (plain(s.values), tuple(s.next), s.metadata["step"], s.metadata["source"])
        for s in app.get_state_history(config)
    ]


def _call_input(api: Any, app: Any, config: dict, call: Any, last: Any) -> Any:
    """The input of a follow-up call (None: the call is skipped)."""
    if call == "none":
        return None if last == "GraphRecursionError" or _paused(app, config) else "skip"
    if call in ("answer", "plain"):
        state = app.get_state(config)
        asked = state.interrupts
        if not asked:
            return "skip"
        if (len(asked) > 1 and call == "answer") or (len(asked) == 1 and len(state.tasks) > 1):
            # (one plain answer beside other tasks of the step: on LangGraph it goes to the
            # first task that calls interrupt() as the threads go, not to the one that asked)
            return api.Command(resume={i.id: f"a{n}" for n, i in enumerate(asked)})
        return api.Command(resume="yes")
    kind, node = call
    if kind == "goto":
        return api.Command(goto=node, update={"log": [f"goto {node}"]})
    app.update_state(config, {"log": [f"update as {node}"]}, as_node=node)
    return None


def _paused(app: Any, config: dict) -> bool:
    return bool(app.get_state(config).next)


def _one_call(app: Any, graph_input: Any, config: dict, streamed: bool, options: dict) -> Any:
    try:
        if streamed:
            chunks = list(app.stream(graph_input, config, stream_mode=MODES, **options))
            return ("ok", _around_questions(canonical_stream(chunks, MODES)))
        return ("ok", _questions_as_set(plain(app.invoke(graph_input, config, **options))))
    except Exception as error:  # (any error is an outcome compared)
        return _error(error)


def _questions_as_set(output: Any) -> Any:
    """An output's `__interrupt__` list sorted: LangGraph lists the questions of a step's
    parallel tasks in the order the tasks asked them (as the threads go)."""
    if isinstance(output, dict) and isinstance(output.get("__interrupt__"), (list, tuple)):
        output = {**output, "__interrupt__": sorted(output["__interrupt__"], key=repr)}
    return output


def _around_questions(stream: list) -> list:
    """`canonical_stream`'s groups, with a paused step's `values` chunks (those holding
    `__interrupt__`, one per task that asked) as a set and the updates around them as one
    group: tasks that ran beside the ones that asked finish before or after those chunks
    are made, and the askers in any order, as the threads go."""

    def asks(item: tuple) -> bool:
        return item[0] == "values" and isinstance(item[1], dict) and "__interrupt__" in item[1]

    out, index = list(stream), 1
    while index < len(out) - 1:
        if not asks(out[index]) or out[index - 1][0] != "updates":
            index += 1
            continue
        end = index  # the window: updates, asking values, updates, asking values, ..., updates
        while end + 2 < len(out) and out[end + 1][0] == "updates" and asks(out[end + 2]):
            end += 2
        if end + 1 >= len(out) or out[end + 1][0] != "updates":
            index = end + 1
            continue
        window = out[index - 1 : end + 2]
        updates = sorted(u for mode, group in window if mode == "updates" for u in group)
        questions = sorted((item for item in window if item[0] == "values"), key=repr)
        out[index - 1 : end + 2] = [("updates", updates)] + [
            part for q in questions for part in (q, ("updates", []))
        ]
        index = end + 2
    return out


def _thread(api: Any, program: Program, thread: str, streamed: bool) -> list:
    """One thread's calls, invoked (`streamed` False) or streamed, with what follows each."""
    try:
        phase = {"first": True}
        app = build(api, program, phase)
    except Exception as error:
        return [("build", _error(error))]
    config: dict[str, Any] = {"configurable": {"thread_id": thread},
                              "recursion_limit": program.limit}  # fmt: skip
    options = {} if program.durability is None else {"durability": program.durability}
    if api.lib == "langgraph" and program.durability in (None, "async") and program.saver != "none":
        options = {"durability": "sync"}  # (see `LANGGRAPH_ASYNC_RACE`)
    seen: list = []
    first = _one_call(app, {"log": [], "count": 0}, config, streamed, options)
    phase["first"] = False
    seen.append(("input", first))
    if program.saver == "none":
        return seen
    seen.append(("state", _safe(lambda: _snapshot(app.get_state(config)))))
    last = first[1] if first[0] == "raised" else None
    for call in program.calls:
        try:
            graph_input = _call_input(api, app, config, call, last)
        except Exception as error:
            seen.append((repr(call), _error(error)))
            continue
        if graph_input == "skip":
            continue
        ended = _one_call(app, graph_input, config, streamed, options)
        seen.append((repr(call), ended))
        seen.append(("state", _safe(lambda: _snapshot(app.get_state(config)))))
        last = ended[1] if ended[0] == "raised" else None
    seen.append(("history", _safe(lambda: _history(app, config))))
    return seen


def _safe(read: Callable[[], Any]) -> Any:
    try:
        return read()
    except Exception as error:
        return _error(error)


def observe(lib: str, program: Program, folder: Path) -> dict[str, list]:
    """What `program` shows on `lib`: its calls invoked on one thread, streamed on another."""
    api = api_for(lib, saver="sqlite" if program.saver == "sqlite" else "memory",
                  folder=folder)  # fmt: skip
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return {
                "invoked": _thread(api, program, "invoked", streamed=False),
                "streamed": _thread(api, program, "streamed", streamed=True),
            }
    finally:
        api.close()


# ---------------------------------------------------------------------------------------------
# Comparing


def _same(langgraph: Any, nbgraph: Any) -> bool:
    """Equal, an error counting as LangGraph's when a LangGraph `except` catches it."""
    if (
        isinstance(langgraph, tuple) and isinstance(nbgraph, tuple)
        and len(langgraph) == 3 and len(nbgraph) == 3
        and langgraph[0] == nbgraph[0] == "raised"
    ):  # fmt: skip
        return langgraph[1] in nbgraph[2]
    if type(langgraph) is not type(nbgraph):
        return False
    if isinstance(langgraph, (list, tuple)):
        return len(langgraph) == len(nbgraph) and all(map(_same, langgraph, nbgraph))
    if isinstance(langgraph, dict):
        return langgraph.keys() == nbgraph.keys() and all(
            _same(langgraph[k], nbgraph[k]) for k in langgraph
        )
    return langgraph == nbgraph


def compare(langgraph: dict, nbgraph: dict) -> str | None:
    """Where two observations first part (`"invoked call 2 (state): next"`), or None."""
    for way in ("invoked", "streamed"):
        lg, nb = langgraph[way], nbgraph[way]
        for a, b in zip(lg, nb, strict=False):
            if a[0] != b[0]:
                return f"{way}: calls differ ({a[0]} / {b[0]})"
            if not _same(a[1], b[1]):
                return f"{way} {a[0]}: {_what(a[1], b[1])}"
        if len(lg) != len(nb):
            return f"{way}: {len(lg)} / {len(nb)} observations"
    return None


def _what(a: Any, b: Any) -> str:
    """Which part differs: an error's class, a snapshot's key, or the value."""

    def raised(x: Any) -> bool:
        return isinstance(x, tuple) and len(x) == 3 and x[0] == "raised"

    if raised(a):
        return f"raised {a[1]}" + (f" / nbgraph {b[1]}" if raised(b) else " / ok")
    if raised(b):
        return f"ok / nbgraph raised {b[1]}"
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k in a if not _same(a.get(k), b.get(k))]
        return ", ".join(map(str, keys)) or "keys"
    return "value"


@dataclass
class OnPurpose:
    """A difference nbgraph keeps on purpose: `applies(program, langgraph, nbgraph)`."""

    name: str
    reason: str
    applies: Callable[[Program, dict, dict], bool]


def _exit_subgraph_resumed(program: Program, langgraph: dict, nbgraph: dict) -> bool:
    """A program with a subgraph run under durability "exit", differing after its first call
    (where a resume finds, or does not find, the subgraph's checkpoint)."""
    if program.durability != "exit" or not any(node.subgraph for node in program.nodes):
        return False
    difference = compare(langgraph, nbgraph) or ""
    return not difference.split(": ")[0].endswith(" input")


ON_PURPOSE: list[OnPurpose] = [
    OnPurpose(
        "a subgraph under durability='exit' goes on where it stopped",
        "Under durability='exit' LangGraph saves a subgraph's checkpoint when the run ends, but "
        "a resumed parent's task does not find it (get_state(subgraphs=True) fails on that "
        "thread), so a subgraph stopped by an error or the step limit starts again from its "
        "input; nbgraph resumes it from its checkpoint, as both libraries do under 'sync' and "
        "'async' (tests/parity/test_langgraph_fuzz_findings.py).",
        _exit_subgraph_resumed,
    ),
]
"""The differences the fuzz counts apart (each also a row of docs/langgraph.md)."""


# ---------------------------------------------------------------------------------------------
# Running many


@dataclass
class Outcome:
    seed: int
    difference: str | None
    on_purpose: str | None
    langgraph: dict
    nbgraph: dict
    program: Program


def run_seed(seed: int, folder: Path | None = None) -> Outcome:
    """Generate the program of `seed`, observe it on both libraries and compare."""
    program = generate(seed)
    with tempfile.TemporaryDirectory(prefix="nbgraph-fuzz-") as temp:
        where = Path(folder or temp) / str(seed)
        seen = {lib: observe(lib, program, where) for lib in LIBRARIES}
    difference = compare(seen["langgraph"], seen["nbgraph"])
    purpose = None
    if difference is not None:
        lg, nb = seen["langgraph"], seen["nbgraph"]
        purpose = next((p.name for p in ON_PURPOSE if p.applies(program, lg, nb)), None)
    return Outcome(seed, difference, purpose, seen["langgraph"], seen["nbgraph"], program)


def _kind(difference: str) -> str:
    return difference.split(":")[0] + ": " + difference.split(": ", 1)[1].split(" / ")[0]


def _print_outcome(found: Outcome, width: int = 900) -> None:
    """The program and, on the thread where they part, each library's observations up to
    and including the first that differs."""
    print("\n".join(found.program.lines()))
    print(f"  differs at: {found.difference}")
    way = found.difference.split(" ")[0].rstrip(":")
    lg, nb = found.langgraph[way], found.nbgraph[way]
    pairs = enumerate(zip(lg, nb, strict=False))
    upto = next((i for i, (a, b) in pairs if not _same(a, b)), len(lg))
    for index in range(min(upto + 1, max(len(lg), len(nb)))):
        for lib, seen in (("langgraph", lg), ("nbgraph", nb)):
            if index < len(seen) and (index == upto or lib == "langgraph"):
                label, value = seen[index]
                print(f"    {lib if index == upto else 'both'} {label}: {value!r}"[:width])


def main(argv: list[str] | None = None) -> int:
    """`python -m tests.support.fuzz --programs N [--seed S] [--show K]` (see the module)."""
    parser = argparse.ArgumentParser(prog="python -m tests.support.fuzz", description=__doc__)
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=3, help="differing programs to print")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    started, kinds, purposes, differing = time.monotonic(), Counter(), Counter(), []
    for ran, seed in enumerate(range(args.seed, args.seed + args.programs), start=1):
        if ran % 500 == 0 and not args.quiet:
            print(f"... {ran} programs, {len(differing)} differ", flush=True)
        found = run_seed(seed)
        if found.difference is None:
            continue
        if found.on_purpose:
            purposes[found.on_purpose] += 1
            continue
        kinds[_kind(found.difference)] += 1
        differing.append(found)
        if not args.quiet:
            print(f"seed {seed}: {found.difference}", flush=True)
    took = time.monotonic() - started
    print(f"\n{args.programs} programs (seeds {args.seed}..{args.seed + args.programs - 1}) "
          f"in {took:.0f} s: {len(differing)} differ, {sum(purposes.values())} differ on "
          "purpose")  # fmt: skip
    for kind, n in kinds.most_common():
        print(f"  {n:5d}  {kind}")
    for name, n in purposes.most_common():
        print(f"  {n:5d}  on purpose: {name}")
    for found in differing[: args.show]:
        print()
        _print_outcome(found)
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
