"""A seeded mutation fuzzer over run files and checkpoint files: every failure must be named.

Valid files are made once (run files of plain, failing, fan-out, subgraph and branch-lineage
runs, and with numpy the small hostile ones of `hostile_files.SMALL`: broadcasting arrays,
int-like repeat counts, a tuple added again and again; SQLite checkpoint files of a plain
and a branch thread), then each case edits one of
them at random (a value replaced, an entry dropped or added, a list reordered, the text cut
or a character changed; in SQLite, one column of one row of `checkpoints` or `writes`, or a
few bytes of the file) and
reads it back the way a notebook does: `Run.from_json` and the record's effects, tree,
output and subruns; `Run.from_checkpointer`, `get_state` and `get_state_history`. A case
ends in one of: read fine, a named error (an `NbgraphError`), a raw error (any other
exception: a defect), or a hang (past `CASE_SECONDS`: a defect).

The CI test (`tests/record/test_file_fuzz.py`) runs a few hundred cases; run it longer by
hand, e.g. 20,000 cases from seed 7:

    PYTHONPATH=. python -m tests.support.file_fuzz --cases 20000 --seed 7

(or `NBGRAPH_FUZZ_CASES=20000` for the test). It prints the counts and each raw error's kind,
with the edit that caused it.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime
import decimal
import importlib.util
import json
import operator
import os
import random
import resource
import shutil
import signal
import sqlite3
import sys
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from nbgraph import END, START, Run, Send, StateGraph
from nbgraph.checkpoint.sqlite import SqliteSaver
from nbgraph.errors import NbgraphError
from nbgraph.policies import RetryPolicy

CASE_SECONDS = 10
"""A case that takes longer than this is a hang."""


class _Hang(BaseException):
    """Raised by the alarm inside a case that ran past `CASE_SECONDS`."""


@dataclass
class Counts:
    """What the cases ended in; `raw` and `hangs` keep (kind, edit) for each defect."""

    cases: int = 0
    ok: int = 0
    named: int = 0
    raw: list[tuple[str, str]] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    kinds: Counter = field(default_factory=Counter)
    grown_mb: float = 0.0  # how far the process's peak memory rose during the cases

    def line(self) -> str:
        return (
            f"{self.cases} cases: {self.ok} read, {self.named} named errors, "
            f"{len(self.raw)} raw errors, {len(self.hangs)} hangs"
        )


# --- the valid files ---------------------------------------------------------------------------


class _State(TypedDict, total=False):
    log: Annotated[list, operator.add]
    count: Annotated[int, operator.add]
    item: Any


def _node(name: str) -> Callable[[dict], dict]:
    def run(state: dict) -> dict:
        return {"log": [name], "count": 1, "item": {"at": name, "when": (1, 2)}}

    return run


def _plain_app(checkpointer: Any = None, interrupt_before: tuple[str, ...] = ()) -> Any:
    return (
        StateGraph(_State)
        .add_node("a", _node("a"))
        .add_node("b", lambda s: {"log": ["b"], "item": decimal.Decimal("1.5")})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", END)
        .compile(checkpointer=checkpointer, interrupt_before=interrupt_before)
    )


def _paused_app(checkpointer: Any = None) -> Any:
    """The plain graph paused before `b`: reading its thread resumes it."""
    return _plain_app(checkpointer, interrupt_before=("b",))


def _fan_out_app() -> Any:
    def route(state: dict) -> list[Send]:
        return [Send("w", {"log": [str(i)]}) for i in range(3)]

    return (
        StateGraph(_State)
        .add_node("start", lambda s: {"item": datetime.date(2024, 1, 2)})
        .add_node("w", lambda s: {"log": s["log"], "count": 2})
        .add_edge(START, "start")
        .add_conditional_edges("start", route)
        .compile()
    )


def _failing_app() -> Any:
    def flaky(state: dict) -> dict:
        raise RuntimeError("down")

    return (
        StateGraph(_State)
        .add_node("a", _node("a"))
        .add_node("f", flaky, retry_policy=RetryPolicy(max_attempts=2, initial_interval=0))
        .add_edge(START, "a")
        .add_edge("a", "f")
        .compile()
    )


def _subgraph_app() -> Any:
    inner = StateGraph(_State).add_node("i", _node("i")).add_edge(START, "i").compile()
    return (
        StateGraph(_State)
        .add_node("outer", inner)
        .add_node("b", _node("b"))
        .add_edge(START, "outer")
        .add_edge("outer", "b")
        .compile()
    )


def _branch_app(checkpointer: Any = None) -> Any:
    graph = StateGraph(dict, reducers={"log": "append"})
    for name in "abcd":
        graph.add_node(name, lambda s, name=name: {"log": [name], "item": bytes(name, "ascii")})
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("a", "c").add_edge(["b", "c"], "d")
    return graph.compile(semantics="branches", checkpointer=checkpointer)


def run_documents() -> list[dict[str, Any]]:
    """The valid run documents every run-file case starts from."""
    runs = [
        _plain_app().run({"log": [], "count": 0}),
        _fan_out_app().run({"log": [], "count": 0}),
        _failing_app().run({"log": [], "count": 0}),
        _subgraph_app().run({"log": [], "count": 0}),
        _branch_app().run({"log": []}),
    ]
    documents = [json.loads(run.to_json()) for run in runs]
    if "numpy" in sys.modules or importlib.util.find_spec("numpy") is not None:
        import numpy  # noqa: F401  (numpy values decode as arrays, as in a notebook)

        from tests.support.hostile_files import SMALL

        documents += [json.loads(make()) for make in SMALL.values()]  # (hostile, but valid)
    return documents


_THREADS = {"plain": _plain_app, "branch": _branch_app, "paused": _paused_app}


def checkpoint_file(folder: str) -> str:
    """A valid SQLite checkpoint file holding one thread of each kind in `_THREADS`."""
    path = os.path.join(folder, "valid.db")
    saver = SqliteSaver(path)
    try:
        _plain_app(saver).invoke({"log": [], "count": 0}, _config("plain"))
        _branch_app(saver).invoke({"log": []}, _config("branch"))
        _paused_app(saver).invoke({"log": [], "count": 0}, _config("paused"))
    finally:
        saver.close()
    return path


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


# --- edits -------------------------------------------------------------------------------------

_ODD_VALUES: tuple[Any, ...] = (
    None, True, 0, -1, 1, 2**70, 1.5, "", "x", "__start__", "a", [], [1], {}, {"a": 1},
    {"$type": "decimal", "value": "x"}, {"$type": "tuple", "items": 5}, {"$type": "nope"},
    {"$type": "dict", "items": [[[1], 2]]}, {"$type": "bytes", "base64": "!!"},
    {"$type": "datetime", "value": "soon"}, {"$type": "timedelta", "value": ["a", 1, 2]},
    {"$type": "enum", "class": "x:Y"}, [[1, 2]], ["log", 1], [["log"]], 1e308, -(2**63),
)  # fmt: skip


def _places(data: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """Every (path, value) inside `data`, the root included."""
    yield path, data
    if type(data) is dict:
        for key, value in data.items():
            yield from _places(value, (*path, key))
    elif type(data) is list:
        for index, value in enumerate(data):
            yield from _places(value, (*path, index))


def _at(data: Any, path: tuple) -> Any:
    for key in path:
        data = data[key]
    return data


def _odd(rng: random.Random, around: Any) -> Any:
    if rng.random() < 0.3 and type(around) in (list, dict) and around:
        return copy.deepcopy(rng.choice(list(around.values()) if type(around) is dict else around))
    return copy.deepcopy(rng.choice(_ODD_VALUES))


def mutate_data(rng: random.Random, data: Any) -> tuple[Any, str]:
    """`data` (JSON data) with one random edit, and a line saying what it was."""
    data = copy.deepcopy(data)
    places = [p for p in _places(data) if p[0]]
    if not places:
        return _odd(rng, data), "the whole value replaced"
    path, value = rng.choice(places)
    parent, key = _at(data, path[:-1]), path[-1]
    how = rng.randrange(6)
    if how == 0:
        parent[key] = _odd(rng, value)
        return data, f"{list(path)} = {parent[key]!r}"[:200]
    if how == 1:
        del parent[key]
        return data, f"{list(path)} dropped"
    if how == 2 and type(value) is list and len(value) > 1:
        rng.shuffle(value)
        return data, f"{list(path)} reordered"
    if how == 3 and type(value) is list and value:
        value.append(copy.deepcopy(rng.choice(value)))
        return data, f"{list(path)} item repeated"
    if how == 4 and type(value) is dict:
        extra = rng.choice(["step", "parent", "values", "writes", "x", "$type", "kind"])
        value[extra] = _odd(rng, value)
        return data, f"{list(path)}[{extra!r}] added"
    if type(value) is str and value:
        cut = rng.randrange(len(value))
        parent[key] = value[:cut] + rng.choice(["", "x", "0", ":", "\ud800"]) + value[cut + 1 :]
        return data, f"{list(path)} edited to {parent[key]!r}"[:200]
    if type(value) in (int, float) and type(value) is not bool:
        parent[key] = rng.choice([value + 1, value - 1, -value, value * 1000, 0])
        return data, f"{list(path)} = {parent[key]!r}"
    parent[key] = _odd(rng, value)
    return data, f"{list(path)} = {parent[key]!r}"[:200]


def mutate_text(rng: random.Random, text: str) -> tuple[str, str]:
    """`text` cut short or with one character changed."""
    at = rng.randrange(len(text))
    if rng.random() < 0.5:
        return text[:at], f"text cut at {at}"
    return text[:at] + rng.choice('{}[]",:0x \\') + text[at + 1 :], f"character {at} changed"


def summed_text(document: dict[str, Any]) -> str:
    """`document` laid out as `Run.save` lays a run file out (a step a line, the run data's
    other entries a line each) with its step lines counted and summed in the header
    (`step_lines`): whatever the document holds, `Run.from_json` reads it step by step if
    the rest of it is right."""
    from nbgraph.record.files.step_lines import step_lines_entry

    def compact(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    data = document.get("run")
    steps = data.get("steps") if type(data) is dict else None
    lines = compact(steps) if type(steps) is not list or not steps else (
        "[\n   " + ",\n   ".join(map(compact, steps)) + "\n  ]"
    )  # fmt: skip
    summed = step_lines_entry(lines.encode("utf-8", "surrogatepass"))
    head = {k: v for k, v in document.items() if k not in ("run", "step_lines")}
    head = {"format": head.pop("format", None), "version": head.pop("version", None),
            "step_lines": summed, **head}  # fmt: skip
    if type(data) is not dict:
        return json.dumps({**head, "run": data}, ensure_ascii=False)
    entries = [
        "\n  " + json.dumps(key) + ": " + (lines if key == "steps" else compact(value))
        for key, value in data.items()
    ]
    return (
        json.dumps(head, indent=1, ensure_ascii=False)[:-2]
        + ',\n "run": {'
        + ",".join(entries)
        + "\n }\n}"
    )


def mutate_summed(rng: random.Random, document: dict[str, Any]) -> tuple[str, str]:
    """`document` with one random edit (most often in one step), laid out and summed
    (`summed_text`): a file whose damage only reading its steps finds."""
    steps = document["run"]["steps"]
    if steps and rng.random() < 0.7:
        index = rng.randrange(len(steps))
        step, edit = mutate_data(rng, steps[index])
        data = {**document, "run": {**document["run"], "steps": [*steps]}}
        data["run"]["steps"][index] = step
        return summed_text(data), f"summed, step entry {index}: {edit}"
    data, edit = mutate_data(rng, document)
    if type(data) is not dict:
        return json.dumps(data), edit
    return summed_text(data), f"summed: {edit}"


# --- reading ------------------------------------------------------------------------------------


def read_run(text: str, *, look: bool = False) -> None:
    """Read a run file's text as a notebook does: load, effects, tree, output, subruns; with
    `look`, also draw it (the DOT text of the run and of its state tree) and put its effects
    in a table."""
    run = Run.from_json(text)
    run.effect_list  # noqa: B018
    run.tree  # noqa: B018
    run.output  # noqa: B018
    for sub in run.subruns:
        sub.effect_list  # noqa: B018
        sub.tree  # noqa: B018
    run.to_json()
    if look:
        run.draw().source  # noqa: B018
        run.draw_tree().source  # noqa: B018
        run.effects  # noqa: B018


def read_checkpoints(path: str, thread: str) -> None:
    """Read a thread as a notebook does: its record, its state, its history; then go on
    from it: resume it (the paused thread runs `b`), write to it, run new input on it."""
    saver = SqliteSaver(path)
    try:
        Run.from_checkpointer(saver, thread).effect_list  # noqa: B018
        app = _THREADS[thread](saver)
        config = _config(thread)
        app.get_state(config)
        list(app.get_state_history(config))
        app.invoke(None, config)
        app.update_state(config, {"log": ["u"]})
        app.invoke({"log": []}, config)
    finally:
        saver.close()


_COLUMNS = {
    "checkpoints": ("payload", "snapshot", "step", "parent_id", "checkpoint_id", "source"),
    "writes": ("payload", "task_id", "checkpoint_id", "seq"),
}


def corrupt_bytes(rng: random.Random, source: str, target: str) -> tuple[str, str]:
    """Copy `source` to `target` with a few bytes past its header changed (a damaged disk)."""
    data = bytearray(open(source, "rb").read())  # noqa: SIM115 - a small file, read once
    spots = [rng.randrange(100, len(data)) for _ in range(rng.choice((1, 4, 32)))]
    for spot in spots:
        data[spot] = rng.randrange(256)
    with open(target, "wb") as handle:
        handle.write(data)
    return rng.choice(sorted(_THREADS)), f"bytes {spots[:4]}... changed"


def mutate_checkpoints(rng: random.Random, source: str, target: str) -> tuple[str, str]:
    """Copy `source` to `target` with one column of one row edited; the thread it touched
    (or, one time in ten, a few of its bytes changed)."""
    if rng.random() < 0.1:
        return corrupt_bytes(rng, source, target)
    shutil.copyfile(source, target)
    conn = sqlite3.connect(target)
    try:
        table = "checkpoints" if rng.random() < 0.8 else "writes"
        rows = conn.execute(f"SELECT rowid, thread_id FROM {table}").fetchall()
        if not rows:
            table, rows = (
                "checkpoints",
                conn.execute("SELECT rowid, thread_id FROM checkpoints").fetchall(),
            )
        rowid, thread = rng.choice(rows)
        column = rng.choice(_COLUMNS[table])
        (value,) = conn.execute(f"SELECT {column} FROM {table} WHERE rowid=?", (rowid,)).fetchone()
        if column in ("payload", "snapshot") and type(value) is str and rng.random() < 0.9:
            data, edit = mutate_data(rng, json.loads(value))
            new: Any = json.dumps(data)
        else:
            new = _odd(rng, None)
            new = new if type(new) in (int, str) or new is None else json.dumps(new)
            new = new if type(new) is not int or abs(new) < 2**63 else str(new)
            edit = f"= {new!r}"[:200]
        with contextlib.suppress(sqlite3.IntegrityError):  # a clash of keys: leave the row
            conn.execute(f"UPDATE {table} SET {column}=? WHERE rowid=?", (new, rowid))
            conn.commit()
        return thread, f"{table} row {rowid} ({thread}) {column} {edit}"
    finally:
        conn.close()


# --- the cases ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    def ring(signum: int, frame: Any) -> None:
        raise _Hang

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _case(counts: Counts, edit: str, read: Callable[[], None]) -> None:
    counts.cases += 1
    try:
        with _time_limit(CASE_SECONDS):
            read()
        counts.ok += 1
    except NbgraphError as error:
        counts.named += 1
        counts.kinds[type(error).__name__] += 1
    except _Hang:
        counts.hangs.append(edit)
    except Exception as error:  # a defect: a raw error
        frames = traceback.extract_tb(error.__traceback__)
        where = " < ".join(f"{os.path.basename(f.filename)}:{f.lineno}" for f in frames[::-1][:6])
        counts.raw.append((f"{type(error).__name__} at {where}: {str(error)[:100]}", edit))


def fuzz(cases: int, seed: int = 0, sqlite_share: float = 0.25) -> Counts:
    """Run `cases` seeded cases (`sqlite_share` of them on checkpoint files)."""
    rng = random.Random(seed)
    counts = Counts()
    documents = run_documents()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    folder = tempfile.mkdtemp(prefix="nbgraph-fuzz-")
    try:
        valid = checkpoint_file(folder)
        target = os.path.join(folder, "case.db")
        for _ in range(cases):
            if rng.random() < sqlite_share:
                thread, edit = mutate_checkpoints(rng, valid, target)
                _case(counts, edit, lambda thread=thread: read_checkpoints(target, thread))
                continue
            document = rng.choice(documents)
            if rng.random() < 0.2:  # laid out and summed as Run.save does: read step by step
                text, edit = mutate_summed(rng, document)
            elif rng.random() < 0.1:
                text, edit = mutate_text(rng, json.dumps(document))
            else:
                data, edit = mutate_data(rng, document)
                text = json.dumps(data)
            look = rng.random() < 0.25
            _case(counts, edit, lambda text=text, look=look: read_run(text, look=look))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    counts.grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) / 1024
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sqlite-share", type=float, default=0.25)
    args = parser.parse_args(argv)
    counts = fuzz(args.cases, args.seed, args.sqlite_share)
    print(counts.line())
    print("named:", dict(counts.kinds.most_common()))
    for kind, edit in counts.raw:
        print(f"RAW {kind}\n    after {edit}")
    for edit in counts.hangs:
        print(f"HANG after {edit}")
    return 1 if counts.raw or counts.hangs else 0


if __name__ == "__main__":
    raise SystemExit(main())
