"""The one LangGraph-vs-nbgraph harness: every differential test runs its program through it.

A program is written once against `api`, a namespace of the names a LangGraph program imports
(`api.StateGraph`, `api.START`, `api.interrupt`, `api.InMemorySaver`, ...), and returns what it
observed. `both(program, *args)` runs it on real LangGraph, then on nbgraph, and gives the two
observations; `same(program, *args)` asserts they are equal. Only the imports differ.

- `api_for(lib, saver=..., folder=...)`: the namespace of one library ("langgraph",
  "nbgraph"). Each name comes from where that library keeps it, imported when a program
  first reads it. `api.saver()` is a fresh checkpointer of the kind asked for ("memory" or
  "sqlite", a file of its own in `api.folder`), `api.close()` closes the SQLite ones,
  `api.lib` names the library.
- What differs between suites on purpose is a parameter of `both`: the savers (`saver`,
  `folder`), whether a raised error is an outcome (`raises`, `message`, `catchable`), how a
  result is shaped before it is compared (`shape`), the waits a retry made (`sleeps`), and
  whether what is observed is the program's runs as each library's record (`records`: each
  call's and each thread's, subgraphs' runs included; `tests/support/records.py`).
- `streamed(app, input, config, stream_mode)`: a stream's chunks in `canonical_stream`'s form.
- `@differs(Differs(...))` on a program: how its observations differ between the libraries,
  known and asserted as it is, with the reason and the docs/langgraph.md heading that says so
  (read with `known_difference`); no table elsewhere keyed by the program's name.
- `outcome(call)`: how a call ended, the one shape every suite compares: `("ok", value)` or
  `("raised", kind)` (`("raised", kind, text)` when the message is compared too). The kind
  of an error is `error_kind`'s: LangGraph's graph errors by name (each library has its own
  class), any other by its first builtin class (what a program catching it names).
- `Ids`: the one id mask. Ids a library makes (uuids, interrupt ids, task ids) are compared
  by structure: the n-th distinct id seen becomes `<id n>`, so the same id in the same
  positions compares equal and different ids stay different.
- `plain`, `stable_repr`, `canonical_stream`, `observe`: values, stream chunks and a run's
  final state and stream in a form both libraries give alike (`Overwrite` and `Interrupt`
  by value; parallel tasks' chunks as a multiset within a step).
"""

import contextlib
import datetime
import importlib
import itertools
import operator
import re
import sqlite3
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, NamedTuple, TypedDict

import pytest

LIBRARIES = ("langgraph", "nbgraph")

LANGGRAPH_HOMES = {
    "langgraph.graph": ("StateGraph", "START", "END", "MessagesState"),
    "langgraph.types": (
        "Send", "Command", "Overwrite", "interrupt", "RetryPolicy", "CachePolicy", "StreamWriter",
        "StateUpdate",
    ),
    "langgraph.errors": ("InvalidUpdateError", "GraphRecursionError", "EmptyInputError"),
    "langgraph.channels": ("EphemeralValue",),
    "langgraph.managed": ("RemainingSteps",),
    "langgraph.graph.message": ("add_messages", "REMOVE_ALL_MESSAGES"),
    "langgraph.checkpoint.memory": ("InMemorySaver", "MemorySaver"),
    "langgraph.checkpoint.sqlite": ("SqliteSaver",),
    "langgraph.cache.memory": ("InMemoryCache",),
    "langgraph.runtime": ("Runtime", "get_runtime"),
    "langgraph.config": ("get_config", "get_store", "get_stream_writer"),
    "langgraph.store.base": ("BaseStore",),
    "langgraph.store.memory": ("InMemoryStore",),
    "langgraph.prebuilt": ("ToolNode", "tools_condition"),
    "langgraph.prebuilt.tool_node": ("InjectedState", "InjectedStore", "ToolRuntime"),
    "langchain_core.tools": ("InjectedToolCallId",),
    "langgraph.managed.is_last_step": ("IsLastStep",),
    "langgraph.prebuilt.chat_agent_executor": (
        "create_react_agent", "AgentState", "AgentStatePydantic",
        "AgentStateWithStructuredResponse",
    ),
    "langgraph.func": ("entrypoint", "task"),
    "langgraph.checkpoint.sqlite.aio": ("AsyncSqliteSaver",),
}  # fmt: skip
"""Where a LangGraph program imports each name from."""

NBGRAPH_HOMES = {
    "nbgraph.prebuilt": ("ToolNode", "tools_condition"),
    "nbgraph.prebuilt.injection": (
        "InjectedState", "InjectedStore", "ToolRuntime", "InjectedToolCallId",
    ),
    "nbgraph.prebuilt.react_agent": (
        "create_react_agent", "AgentState", "AgentStatePydantic",
        "AgentStateWithStructuredResponse",
    ),
    "nbgraph.types": ("StateUpdate",),
    "nbgraph.func": ("entrypoint", "task"),
    "nbgraph.checkpoint": ("AsyncSqliteSaver",),
}  # fmt: skip
"""Where an nbgraph program imports a name from when it is not the top-level `nbgraph`."""

HOMES = {
    "langgraph": {name: module for module, names in LANGGRAPH_HOMES.items() for name in names},
    "nbgraph": {name: module for module, names in NBGRAPH_HOMES.items() for name in names},
}
NAMES = frozenset(HOMES["langgraph"])

SAVER_KINDS = ("memory", "sqlite")

Message = str | Callable[[str], Any] | None
"""How much of an error's text an outcome holds: None (none), `"full"`, `"first line"`, or
what a function makes of the text (e.g. whether it names the limit)."""


class Programs(list):
    """A test module's differential programs, in the order they are written: decorate each
    with `@program` (`PROGRAMS = Programs(); program = PROGRAMS.add`), and parametrize one
    test over `PROGRAMS` (`test_same_as_langgraph = PROGRAMS.test(raises=True)`)."""

    def add(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        self.append(fn)
        return fn

    def test(self, **options: Any) -> Callable[..., None]:
        """One test per program (named by it): `same(program, **options)`."""

        @pytest.mark.parametrize("prog", self, ids=lambda p: p.__name__)
        def test_same_as_langgraph(prog: Callable[..., Any]) -> None:
            same(prog, **options)

        return test_same_as_langgraph


class Differs(NamedTuple):
    """A known difference between the two libraries' records of a program, declared where
    the program is (`@differs(...)`) and asserted as it is: `keys`, what differs (for a
    record imported from LangGraph, the keys of `deep_view` in tests/record/import_views.py);
    `why`; `doc`, the heading of docs/langgraph.md that says so."""

    keys: tuple[str, ...]
    why: str
    doc: str


def differs(
    known: Differs | None = None, *, params: dict[str, Differs | None] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare on a program or a differential test function how its records differ between
    the libraries: `known` for each of its parameter sets, `params` for those named by
    their pytest id (`"how0-limit1"`, overriding `known`). Read with `known_difference`."""

    def declare(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.differs = {"": known, **(params or {})}  # type: ignore[attr-defined]
        return fn

    return declare


def known_difference(fn: Callable[..., Any], param: str = "") -> Differs | None:
    """The difference `@differs` declared on `fn` for its parameter set `param`, or None."""
    declared = getattr(fn, "differs", {})
    return declared[param] if param in declared else declared.get("")


def lib_module(api: Any, module: str) -> Any:
    """`<library>.<module>`: LangGraph's module path (`"store.sqlite"`) in `api`'s library."""
    return importlib.import_module(f"{api.lib}.{module}")


class Log(TypedDict):
    """A state of one list field that nodes append their names to."""

    log: Annotated[list, operator.add]


def chain(api: Any, names: list[str], **compile_options: Any) -> Any:
    """`START -> names[0] -> names[1] -> ...` in `api`'s library, each node appending its
    name to `log` (a `Log` state), compiled with `compile_options`."""
    builder = api.StateGraph(Log)
    for name in names:
        builder.add_node(name, lambda state, name=name: {"log": [name]})
    builder.add_edge(api.START, names[0])
    for a, b in itertools.pairwise(names):
        builder.add_edge(a, b)
    return builder.compile(**compile_options)


class Api:
    """The names a LangGraph program imports, from one library (see the module's doc)."""

    def __init__(self, lib: str, saver: str = "memory", folder: Path | None = None) -> None:
        if lib not in LIBRARIES or saver not in SAVER_KINDS:
            raise ValueError(f"no such library or saver: {lib!r}, {saver!r}")
        if saver == "sqlite" and folder is None:
            raise ValueError("an sqlite saver needs a folder")
        self.lib, self.saver_kind = lib, saver
        self.folder = None if folder is None else Path(folder) / lib
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
        self._closers: list[Callable[[], Any]] = []
        self._files = itertools.count()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in NAMES:
            raise AttributeError(name)
        module = HOMES[self.lib].get(name, "nbgraph")
        value = getattr(importlib.import_module(module), name)
        setattr(self, name, value)  # (a program may replace it: capture_apps does)
        return value

    def saver(self) -> Any:
        """A fresh, empty checkpointer of this namespace's kind."""
        if self.saver_kind == "memory":
            return self.InMemorySaver()
        assert self.folder is not None
        path = self.folder / f"saver-{next(self._files)}.sqlite"
        if self.lib == "langgraph":
            conn = sqlite3.connect(str(path), check_same_thread=False)
            self._closers.append(conn.close)
            return self.SqliteSaver(conn)
        saver = self.SqliteSaver(path)
        self._closers.append(saver.close)
        return saver

    def close(self) -> None:
        """Close the SQLite savers `saver()` opened."""
        while self._closers:
            self._closers.pop()()

    def __repr__(self) -> str:
        return f"<api {self.lib} saver={self.saver_kind}>"


def api_for(lib: str, *, saver: str = "memory", folder: Path | None = None) -> Api:
    """The namespace of `lib` ("langgraph" or "nbgraph"); `saver` is the kind `api.saver()`
    makes, `folder` where its files go (each library in a folder of its own)."""
    return Api(lib, saver, folder)


def both(
    program: Callable[..., Any],
    *args: Any,
    saver: str | tuple[str, str] = "memory",
    folder: Path | None = None,
    raises: bool = False,
    message: Message = None,
    catchable: bool = False,
    shape: Callable[[Any], Any] | None = None,
    sleeps: list[float] | None = None,
    records: bool = False,
) -> tuple[Any, Any]:
    """`program(api, *args)` run on LangGraph, then on nbgraph: `(langgraph's, nbgraph's)`.

    - `saver`: the kind of `api.saver()`, one for both or `(langgraph's, nbgraph's)`;
      `folder`: where SQLite files go. The savers are closed after the program.
    - `raises`: a program that raises is an outcome (`outcome`'s shape, with `message`);
      otherwise the error propagates (a program that fails on both would compare equal and
      test nothing). With `catchable` too, where both raised, nbgraph's error counts as
      LangGraph's when a program catching LangGraph's builtin class catches it (nbgraph
      raises narrower classes of its own: `InvalidUpdateError` where LangGraph raises a
      `ValueError`).
    - `shape`: applied to what the program returned (e.g. `plain`).
    - `sleeps`: the list a patched `time.sleep` appends to; it is emptied before each library
      and what it holds after is added to the outcome under `"sleeps"`.
    - `records`: what is observed is the program's runs as each library's record
      (`tests/support/records.py`'s `Records`: a record per top-level call without a saver,
      and one per thread of each app compiled with a saver, imported from LangGraph's history
      or nbgraph's own), what it returned (shaped, an outcome with `raises`) in `returned`.
    """
    assert not (catchable and message), "a caught error's message is its own"
    kinds = (saver, saver) if isinstance(saver, str) else saver
    seen, errors = [], []
    for lib, kind in zip(LIBRARIES, kinds, strict=True):
        namespace = api_for(lib, saver=kind, folder=folder)
        if sleeps is not None:
            sleeps.clear()
        error = None
        try:
            observed = _run(program, namespace, args, records, shape)
            if raises:
                observed = _returned(observed, ("ok", _returned(observed)))
        except Exception as exc:
            if not raises:
                raise
            error, kept = exc, getattr(exc, "nbgraph_test_records", None)
            observed = _returned(kept, raised(exc, message))
        finally:
            namespace.close()
        if sleeps is not None:
            observed = {**observed, "sleeps": list(sleeps)}
        seen.append(observed)
        errors.append(error)
    langgraph_error, nbgraph_error = errors
    if (
        catchable
        and langgraph_error is not None
        and isinstance(nbgraph_error, builtin_class(langgraph_error))
    ):
        seen[1] = seen[0]
    return seen[0], seen[1]


def _run(program: Callable[..., Any], api: Any, args: tuple, records: bool, shape: Any) -> Any:
    """What `both` observes of one library's run: what the program returned (shaped), or with
    `records` its `Records`; an error it raised propagates (`records` holds what was made)."""
    if not records:
        observed = program(api, *args)
        return observed if shape is None else shape(observed)
    from tests.support.records import recorded

    seen = recorded(api.lib, lambda: program(api, *args))
    if seen.error is not None:
        seen.error.nbgraph_test_records = seen  # type: ignore[attr-defined]
        raise seen.error
    seen.returned = seen.returned if shape is None else shape(seen.returned)
    return seen


def _returned(observed: Any, value: Any = ...) -> Any:
    """Without `value`: what a program returned (a `Records`' `returned`, else `observed`).
    With it: `observed` with what it returned replaced by `value` (a `Records` kept)."""
    is_records = type(observed).__name__ == "Records"
    if value is ...:
        return observed.returned if is_records else observed
    if is_records:
        observed.returned = value
        return observed
    return value


def same(program: Callable[..., Any], *args: Any, **options: Any) -> tuple[Any, Any]:
    """`both(program, *args, **options)`, asserting nbgraph observed what LangGraph did."""
    langgraph, nbgraph = both(program, *args, **options)
    assert nbgraph == langgraph
    return langgraph, nbgraph


# ---------------------------------------------------------------------------------------------
# How a call ended

GRAPH_ERRORS = ("InvalidUpdateError", "GraphRecursionError", "EmptyInputError")
"""Errors both libraries name alike, each with its own class: compared by name."""


def error_kind(exc: BaseException) -> str:
    """The kind of an exception: one of `GRAPH_ERRORS` by name, else its first builtin class."""
    name = type(exc).__name__
    return name if name in GRAPH_ERRORS else builtin_class(exc).__name__


def builtin_class(exc: BaseException) -> type:
    """The first builtin class of an exception (what a program catching it would name)."""
    return next(cls for cls in type(exc).__mro__ if cls.__module__ == "builtins")


def outcome(
    call: Callable[..., Any],
    *args: Any,
    message: Message = None,
    shape: Callable[[Any], Any] | None = None,
    **kwargs: Any,
) -> tuple:
    """`("ok", value)` or `("raised", kind)`: how `call(*args, **kwargs)` ended.

    With `message`, `("raised", kind, text)`: the error's text as `message` says; `shape` is
    applied to the value returned.
    """
    try:
        value = call(*args, **kwargs)
    except Exception as error:
        return raised(error, message)
    return ("ok", value if shape is None else shape(value))


def raised(error: BaseException, message: Message = None) -> tuple:
    """The outcome of a call that raised `error`: `("raised", kind)`, or with `message`
    `("raised", kind, text)`."""
    if message is None:
        return ("raised", error_kind(error))
    return ("raised", error_kind(error), message_part(str(error), message))


def message_part(text: str, message: Message) -> Any:
    """The part of an error's `text` an outcome compares (see `Message`)."""
    if message == "full":
        return text
    if message == "first line":
        return text.split("\n")[0]
    assert callable(message), message
    return message(text)


def ignored(value: Any) -> None:
    """A `shape` for calls whose value is not compared (only that they did not raise)."""
    return None


# ---------------------------------------------------------------------------------------------
# Values and stream chunks both libraries give alike


def plain(value: Any) -> Any:
    """`value` with every `Overwrite` as `("Overwrite", value)` and every `Interrupt` as
    `("Interrupt", value)` (its id is each library's own), recursively; a mapping a dict."""
    kind = type(value).__name__
    if kind == "Overwrite":
        return ("Overwrite", plain(value.value))
    if kind == "Interrupt":
        return ("Interrupt", plain(value.value))
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    return value


def stable_repr(value: Any) -> str:
    """A repr that does not depend on the insertion order of dict keys."""
    if isinstance(value, dict):
        items = sorted((repr(k), stable_repr(v)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(stable_repr(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(stable_repr(v) for v in value) + ",)"
    return repr(value)


MODES = ["updates", "values"]
"""The stream modes `observe` streams (both at once: the values chunks mark the steps)."""


def canonical_stream(chunks: list, stream_mode: Any) -> list:
    """Chunks in a form where the completion order of parallel tasks does not matter.

    With both modes, the chunks are cut into groups at each `values` chunk; the `updates` of a
    group are compared as a sorted list, the `values` chunks exactly and the groups in order.
    With `updates` alone nothing marks the steps, so the updates are compared as a multiset.
    """
    if stream_mode == "values":
        return [("values", plain(chunk)) for chunk in chunks]
    if stream_mode == "updates":
        return [("updates", sorted(stable_repr(plain(chunk)) for chunk in chunks))]
    out: list = []
    pending: list[str] = []
    for mode, chunk in chunks:
        if mode == "values":
            out.append(("updates", sorted(pending)))
            out.append(("values", plain(chunk)))
            pending = []
        else:
            pending.append(stable_repr(plain(chunk)))
    out.append(("updates", sorted(pending)))
    return out


def streamed(app: Any, graph_input: Any, config: Any = None, stream_mode: Any = None) -> list:
    """`app.stream(graph_input, config, stream_mode=...)`'s chunks as `canonical_stream` gives
    them; `stream_mode` is `MODES` unless given."""
    stream_mode = MODES if stream_mode is None else stream_mode
    chunks = list(app.stream(graph_input, config, stream_mode=stream_mode))
    return canonical_stream(chunks, stream_mode)


def observe(app: Any, graph_input: Any, config: Any = None, *, warned: bool = False) -> tuple:
    """One input's run, invoked then streamed: `("ok", {"final": state, "stream": chunks})`
    (`canonical_stream` of `MODES`) or `("raised", kind)`. With `warned`, the outcome also holds
    the `UserWarning`s the two runs gave (`"warnings"`)."""

    def run() -> dict[str, Any]:
        final = plain(app.invoke(graph_input, config))
        chunks = list(app.stream(graph_input, config, stream_mode=MODES))
        return {"final": final, "stream": canonical_stream(chunks, MODES)}

    if not warned:
        return outcome(run)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ended = outcome(run)
    if ended[0] == "ok":
        said = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        ended[1]["warnings"] = said
    return ended


# ---------------------------------------------------------------------------------------------
# The id mask

ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{16,32}\b")
"""An id a library made: a uuid (task, checkpoint, message, run ids) or a word of 16 to 32
hex digits (interrupt ids: 32 on LangGraph, 16 on nbgraph)."""


class Ids:
    """Ids by structure: the n-th distinct id seen becomes `<id n>`. One mask per comparison
    side: the same id in the same positions gives the same labels on both libraries."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, raw: Any) -> Any:
        """A whole value that is an id (of any form: nbgraph's task ids are `step:index:node`
        where LangGraph's are uuids) as its label."""
        return self.seen.setdefault(raw, f"<id {len(self.seen)}>")

    def text(self, text: Any) -> Any:
        """`text` with each id inside it (`ID`) as its label; a non-string as it is."""
        if not isinstance(text, str):
            return text
        return ID.sub(lambda m: self(m.group()), text)

    def ns(self, ns: str) -> str:
        """A checkpoint namespace with each part's task id as its label: `node:<id k>|...`."""
        parts = []
        for part in ns.split("|") if ns else ():
            node, sep, task_id = part.partition(":")
            parts.append(f"{node}{sep}{self(task_id)}" if sep else node)
        return "|".join(parts)

    def deep(self, value: Any) -> Any:
        """`value` with `text` applied to every string in it, keys too, recursively."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.deep(k): self.deep(v) for k, v in value.items()}
        if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
            return type(value)(*(self.deep(v) for v in value))
        if isinstance(value, list | tuple):
            return type(value)(self.deep(v) for v in value)
        return value


@contextlib.contextmanager
def python_sqlite_datetimes() -> Iterator[None]:
    """`sqlite3` binds a `datetime` as Python itself does ("YYYY-MM-DD HH:MM:SS...") while
    the block runs. Importing `nbformat.sign` (as a test module or Jupyter may) registers, for
    the whole process, an adapter writing "YYYY-MM-DDTHH:MM:SS": LangGraph's SQLite store
    then compares its expiry times with SQLite's `CURRENT_TIMESTAMP` as text, and no item
    ever expires. The adapter the process had is put back afterwards."""
    key = (datetime.datetime, sqlite3.PrepareProtocol)
    had = sqlite3.adapters.get(key)
    sqlite3.register_adapter(datetime.datetime, lambda value: value.isoformat(" "))
    try:
        yield
    finally:
        if had is None:
            sqlite3.adapters.pop(key, None)
        else:
            sqlite3.adapters[key] = had
