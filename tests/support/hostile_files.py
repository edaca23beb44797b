"""Hostile but valid run and checkpoint files: small files whose replay would ask for much
memory or time (numpy broadcasting through `operator.add`/`matmul`, a repeat whose count
is an enum or a numpy integer, big numbers multiplied again and again, a tuple or a str
concatenated again and again, a `union` of long lists, values nested near the depth
limit), and a loader that reads each in a child process under a memory cap and a time
bound (`load_capped`).

Each file is one nbgraph could have written (the fuzz in `file_fuzz.py` damages files;
these are well formed): the bounds of docs/VALUES.md ("What loading a file may cost") must
refuse them by name, or load them, within the cap and the time.

    PYTHONPATH=. python -m tests.support.hostile_files    # builds them, loads each capped
"""

from __future__ import annotations

import base64
import itertools
import json
import operator
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from nbgraph import END, START, StateGraph
from nbgraph.checkpoint.sqlite import SqliteSaver

MEMORY_CAP = 256 * 2**20
"""Address space a load may add (`RLIMIT_AS` over what the loader holds before it)."""
SECONDS = 10.0
"""The time a load may take."""


class _Any(TypedDict):
    a: Annotated[Any, operator.add]


def _template(reducer: str = "operator.add", steps: int = 2) -> dict[str, Any]:
    """A run file's document of a chain of `steps` nodes writing field `a`, its reducer
    named `reducer` (an `operator` function, or a registered name)."""
    app = StateGraph(_Any)
    names = [f"n{i}" for i in range(steps)]
    for name in names:
        app.add_node(name, lambda s: {"a": 1})
    app.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        app.add_edge(a, b)
    app.add_edge(names[-1], END)
    doc = json.loads(app.compile().run({"a": 0}).to_json())
    field = doc["graph"]["fields"][0]
    if reducer.startswith("operator."):
        field.update(function=reducer, reducer=reducer.split(".")[1], registered=False)
    else:
        field.update(reducer=reducer, registered=True)
        field.pop("function", None)
    return doc


def _writes(doc: dict[str, Any], start: Any, writes: list[list[Any]]) -> str:
    """`doc` with input `start` and step i+1's one task writing `writes[i]` (pairs)."""
    steps = doc["run"]["steps"]
    for step, pairs in zip(steps[1:], writes, strict=True):
        step["tasks"][0]["writes"] = pairs
    doc["run"]["input"] = doc["run"]["final"] = {"a": start}
    steps[0]["tasks"][0]["writes"] = [["a", start]] if steps[0]["tasks"] else []
    return json.dumps(doc, separators=(",", ":"))


def _array(shape: list[int]) -> dict[str, Any]:
    raw = base64.b64encode(bytes(shape[0] * shape[1])).decode()
    return {"$type": "numpy", "dtype": "|b1", "shape": shape, "base64": raw}


def _broadcast(function: str, n: int = 8000) -> str:
    """(n x 1 onto 1 x n: 64 MB from 16 KB, for n = 8,000)"""
    return _writes(_template(function, 1), _array([n, 1]), [[["a", _array([1, n])]]])


def _counted(count: Any) -> str:
    return _writes(_template("operator.mul", 1), "x" * 100, [[["a", count]]])


def _numpy_count() -> str:
    raw = base64.b64encode((2_000_000).to_bytes(8, "little")).decode()
    return _counted({"$type": "numpy", "dtype": "<i8", "shape": None, "base64": raw})


def _big_numbers() -> str:
    return _writes(_template("operator.mul", 1), 1, [[["a", int("7" * 600)]] * 2000])


def _long_tuples() -> str:
    piece = {"$type": "tuple", "items": list(range(1000))}
    return _writes(_template("operator.add", 1), piece, [[["a", piece]] * 1000])


def _long_text(size: int = 10_000, times: int = 1000) -> str:
    return _writes(_template("operator.add", 1), "", [[["a", "x" * size]] * times])


def _unions() -> str:
    return _writes(_template("union", 1), list(range(20_000)), [[["a", list(range(-20_000, 0))]]])


def _deep() -> str:
    text = _writes(_template("max", 1), "DEEP", [[["a", "DEEP"]] * 50])
    return text.replace('"DEEP"', "[" * 900 + "1" + "]" * 900)  # (json's encoder: 1,000 at most)


RUN_FILES: dict[str, Callable[[], str]] = {
    "numpy broadcast, operator.add": lambda: _broadcast("operator.add"),
    "numpy broadcast, operator.matmul": lambda: _broadcast("operator.matmul"),
    "mul count, re.RegexFlag": lambda: _counted(
        {"$type": "enum", "class": "re:RegexFlag", "value": 2_000_000}
    ),
    "mul count, numpy int64": _numpy_count,
    "big numbers multiplied 2,000 times": _big_numbers,
    "a tuple added 1,000 times": _long_tuples,
    "a 10 KB text added 1,000 times": _long_text,
    "a 2 KB text added 300 times (a transcript)": lambda: _long_text(2000, 300),
    "union of two 20,000-item lists": _unions,
    "values nested 900 deep, max": _deep,
    "union of lists of 5,000 dicts": lambda: _writes(
        _template("union", 1),
        [{"k": i} for i in range(5000)],
        [[["a", [{"k": -i} for i in range(5000)]]]],
    ),
}
"""Each hostile run file's name and how to make its JSON text."""
REFUSED = frozenset({
    "numpy broadcast, operator.add", "numpy broadcast, operator.matmul",
    "mul count, re.RegexFlag", "mul count, numpy int64", "big numbers multiplied 2,000 times",
    "a tuple added 1,000 times", "union of lists of 5,000 dicts",
    "a 10 KB text added 1,000 times",
    "checkpoint file, mul count re.RegexFlag",
})  # fmt: skip
"""The files whose replay passes a bound: refused, naming the field, the step and the bound."""


SMALL: dict[str, Callable[[], str]] = {
    "numpy broadcast, operator.add": lambda: _broadcast("operator.add", 1000),
    "numpy broadcast, operator.matmul": lambda: _broadcast("operator.matmul", 1000),
    "mul count, re.RegexFlag": RUN_FILES["mul count, re.RegexFlag"],
    "mul count, numpy int64": _numpy_count,
    "a tuple added 30 times": lambda: _writes(
        _template("operator.add", 1), {"$type": "tuple", "items": [1, 2]},
        [[["a", {"$type": "tuple", "items": list(range(100))}]] * 30],
    ),
}  # fmt: skip
"""Small hostile files (a few KB) the mutation fuzz starts from too (`file_fuzz.py`)."""


class _Mul(TypedDict):
    a: Annotated[Any, operator.mul]


def checkpoint_file(folder: str) -> str:
    """An SQLite checkpoint file whose thread `t` multiplies "x" * 100 by a count the file
    holds as an `re.RegexFlag` of 2,000,000 (a 200 MB str if replayed)."""
    path = os.path.join(folder, "hostile.db")
    saver = SqliteSaver(path)
    app = (
        StateGraph(_Mul)
        .add_node("n", lambda s: {"a": 7})
        .add_edge(START, "n")
        .add_edge("n", END)
        .compile(checkpointer=saver)
    )
    app.invoke({"a": "x" * 100}, {"configurable": {"thread_id": "t"}})
    saver.close()
    count = json.dumps({"$type": "enum", "class": "re:RegexFlag", "value": 2_000_000})
    with sqlite3.connect(path) as conn:
        for table, column in (("checkpoints", "payload"), ("writes", "payload")):
            rows = conn.execute(f"SELECT rowid, {column} FROM {table}").fetchall()
            for rowid, text in rows:
                if isinstance(text, str) and '["a",7]' in text.replace(" ", ""):
                    edited = text.replace('["a", 7]', f'["a", {count}]')
                    edited = edited.replace('["a",7]', f'["a",{count}]')
                    conn.execute(f"UPDATE {table} SET {column}=? WHERE rowid=?", (edited, rowid))
    return path


_CHILD = r"""
import json, os, resource, sys, time
import numpy  # (imported, as in a notebook: numpy values decode)
from nbgraph import Run
from nbgraph.checkpoint.sqlite import SqliteSaver
from nbgraph.errors import NbgraphError

def vm():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

cap, results = int(sys.argv[1]), {}
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
for name, path in json.loads(sys.argv[2]).items():
    resource.setrlimit(resource.RLIMIT_AS, (vm() + cap, hard))
    started = time.perf_counter()
    try:
        if path.endswith(".db"):
            saver = SqliteSaver(path)
            try:
                Run.from_checkpointer(saver, "t")
            finally:
                saver.close()
        else:
            Run.load(path)
        outcome = "loaded"
    except NbgraphError as error:
        outcome = "refused: " + type(error).__name__ + ": " + str(error)[-600:]
    except MemoryError:
        outcome = "MemoryError"
    except BaseException as error:
        outcome = "raw: " + type(error).__name__ + ": " + str(error)[:200]
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    results[name] = [outcome, time.perf_counter() - started]
print(json.dumps(results))
"""


def load_capped(paths: dict[str, str], cap: int = MEMORY_CAP, timeout: float = 120) -> dict:
    """Load each file (a run file, or a `.db` checkpoint file's thread `t`) in one child
    process, each under `RLIMIT_AS` = the child's size then + `cap`; returns
    `{name: [outcome, seconds]}` (outcome "loaded", "refused: ...", "MemoryError", "raw: ...").

    Raises:
        subprocess.TimeoutExpired: the child ran past `timeout` (a load hung).
    """
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(cap), json.dumps(paths)],
        capture_output=True, text=True, timeout=timeout, env=env, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the loader failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def write_all(folder: str) -> dict[str, str]:
    """Every hostile file written into `folder`: `{name: path}`."""
    paths = {}
    for index, (name, make) in enumerate(RUN_FILES.items()):
        path = os.path.join(folder, f"hostile{index}.json")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(make())
        paths[name] = path
    paths["checkpoint file, mul count re.RegexFlag"] = checkpoint_file(folder)
    return paths


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        paths = write_all(folder)
        for name, (outcome, seconds) in load_capped(paths).items():
            size = os.path.getsize(paths[name])
            print(f"{name:42s} {size:>10,} bytes  {seconds:6.2f} s  {outcome[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
