"""Replaying the differential suites with every run recorded on both libraries: the proof of
tests/record/test_langgraph_import_subgraphs.py that each LangGraph run imported into nbgraph's
record (`Run.from_langgraph`) agrees with nbgraph's own record of the same program.

A `Recorder` (tests/support/records.py) sees every top-level call of a compiled app while a
program runs, on LangGraph (each imported right after) or on nbgraph (its record kept); the
harness's `both(program, records=True)` runs a program so. `differential_programs()` lists
the programs of the suites in `MODULES` and their other test functions, each with its
parameter sets, ready to run under both recorders.
"""

import contextlib
from typing import Any

import pytest

from tests.record.import_views import deep_differences, deep_view
from tests.support.harness import Differs, Ids, both, known_difference
from tests.support.records import Recorder, Records, checkpointed, kept


def by_structure(view: Any) -> Any:
    """A view's text with each id (message and tool-call ids) as its label (`Ids`)."""
    return Ids().text(repr(view))


def paired_records(lg: Records, nb: Records) -> list[tuple[str, Any, Any]]:
    """`(what, imported, nbgraph's)`: each top-level call without a saver (nbgraph's live
    record), then each thread of each app compiled with a saver (nbgraph's record rebuilt
    from its saver), in order."""
    if len(lg.calls) != len(nb.calls):
        return [("calls", f"{len(lg.calls)} calls recorded", f"{len(nb.calls)}")]
    pairs = zip(lg.calls, nb.calls, strict=True)
    found = [(f"call {i}", a, b) for i, (a, b) in enumerate(pairs)]
    lg_roots, nb_roots = checkpointed(lg.apps), checkpointed(nb.apps)
    if len(lg_roots) != len(nb_roots):
        return [("apps", f"{len(lg_roots)} apps with a saver", f"{len(nb_roots)}")]
    if [t for t, _ in lg.threads] != [t for t, _ in nb.threads]:
        return [("threads", f"{len(lg.threads)} threads imported", f"{len(nb.threads)}")]
    for (thread_id, imported), (_, ours) in zip(lg.threads, nb.threads, strict=True):
        found.append((f"thread {thread_id}", imported, ours))
    return found


def record_differences(lg: Records, nb: Records) -> list[list[str]]:
    """Per call and thread, the keys of `deep_view` that differ (ids by structure)."""
    found = []
    for _what, imported, ours in paired_records(lg, nb):
        if isinstance(imported, str):
            found.append([imported.split(":")[0]])
            continue
        a, b = input_rows_sorted(deep_view(imported)), input_rows_sorted(deep_view(ours))
        keys = deep_differences(a, b)
        found.append([k for k in keys if by_structure(_at(a, k)) != by_structure(_at(b, k))])
    return found


def input_rows_sorted(view: dict) -> dict:
    """A `deep_view` with each subrun's step-0 effect rows (its input, one row per field)
    sorted by field: a subgraph's input fields are written in the parent's field order on
    nbgraph and in LangGraph's channel order on LangGraph (same writes, rows in another
    order)."""
    subruns = []
    for task, sub in view["subruns"]:
        sub = input_rows_sorted(sub)
        head = sorted(row for row in sub["effects"] if row[0] == "0")
        sub["effects"] = head + [row for row in sub["effects"] if row[0] != "0"]
        subruns.append((task, sub))
    return {**view, "subruns": subruns}


def _at(view: dict, key: str) -> Any:
    """The part of a `deep_view` a `deep_differences` key names."""
    where, _, name = key.rpartition(":")
    for task in where.split("/")[1:]:
        view = dict(view["subruns"])[task]
    return view[name] if name != "subruns" else [t for t, _ in view["subruns"]]


def parametrized(fn: Any) -> list[tuple[str, dict]]:
    """A test function's parameter sets from its `parametrize` marks: `(id, kwargs)` each."""
    sets: list[tuple[str, dict]] = [("", {})]
    for mark in getattr(fn, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        rows = []
        for index, value in enumerate(values):
            value = value.values if hasattr(value, "values") and hasattr(value, "marks") else value
            value = tuple(value) if len(names) > 1 else (value,)
            rows.append((f"{names[0]}{index}", dict(zip(names, value, strict=True))))
        sets = [(f"{a}-{b}".strip("-"), {**ka, **kb}) for a, ka in sets for b, kb in rows]
    return sets


def run_test_function(fn: Any, kwargs: dict) -> tuple[Records, Records]:
    """A differential test function (it runs LangGraph and nbgraph itself) run under both
    recorders; its fixtures `sleeps`, `monkeypatch`, `tmp_path` given as pytest would."""
    import inspect
    import tempfile
    import time
    from pathlib import Path

    lg, nb = Recorder(), Recorder()
    with lg.on_langgraph(), nb.on_nbgraph(), pytest.MonkeyPatch.context() as patch:
        for name in inspect.signature(fn).parameters:
            if name == "sleeps":
                kwargs = {**kwargs, name: []}
                patch.setattr(time, "sleep", kwargs[name].append)
            elif name == "monkeypatch":
                kwargs = {**kwargs, name: patch}
            elif name == "tmp_path":
                kwargs = {**kwargs, name: Path(tempfile.mkdtemp())}
        outcomes = (Exception, pytest.fail.Exception, pytest.skip.Exception)
        with contextlib.suppress(*outcomes):  # (the differential test itself judges them)
            fn(**kwargs)
    return kept("langgraph", lg), kept("nbgraph", nb)


MODULES = (
    "test_langgraph_subgraphs", "test_langgraph_subgraph_checkpoints",
    "test_langgraph_subgraph_edges", "test_langgraph_messages", "test_langgraph_tools",
    "test_langgraph_retry", "test_langgraph_context",
)  # fmt: skip
"""The differential suites of tests/parity whose programs the proof widens to (the 51
programs of compat_programs.py are test_langgraph_import.py's). They are replayed, not
used: nothing of theirs is called but their programs and test functions."""


def differential_programs() -> list[tuple[str, Any, Differs | None]]:
    """`(id, run, known)` for every program of `MODULES`: a `PROGRAMS` list's programs (run on
    the harness's two apis), and every other test function of the module with each of its
    parameter sets (it runs both engines itself). `run()` gives `(lg, nb)` `Records`;
    `known` is how their records differ, as the program declares (`@differs`), or None."""
    import importlib

    found = []
    for name in MODULES:
        module = importlib.import_module(f"tests.parity.{name}")
        for program in getattr(module, "PROGRAMS", ()):
            ident = f"{name}::{program.__name__}"
            found.append((ident, _program_run(program), known_difference(program)))
        for attr, fn in vars(module).items():
            if attr.startswith("test_") and callable(fn):
                sets = parametrized(fn)
                if any("program" in kwargs for _, kwargs in sets):
                    continue  # it runs the PROGRAMS above
                for param, kwargs in sets:
                    ident = f"{name}::{attr}" + (f"[{param}]" if param else "")
                    found.append((ident, _test_run(fn, kwargs), known_difference(fn, param)))
    return found


def _program_run(program: Any) -> Any:
    def run() -> tuple[Records, Records]:
        return both(program, records=True, raises=True)  # (what it raises: the test judges)

    return run


def _test_run(fn: Any, kwargs: dict) -> Any:
    return lambda: run_test_function(fn, kwargs)


def program_differences(run: Any) -> tuple[int, list[str]]:
    """How many records a program made (calls and threads) and the keys that differ in any
    of them (first-level subrun paths kept), sorted."""
    lg, nb = run()
    per_record = record_differences(lg, nb)
    return len(per_record), sorted({key for keys in per_record for key in keys})
