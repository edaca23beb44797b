"""Tests for nbgraph/__init__.py: a light import, the public names, and the error hierarchy."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import nbgraph

REQUIRED_NAMES = [
    "StateGraph",
    "START",
    "END",
    "Send",
    "Command",
    "Overwrite",
    "Ephemeral",
    "EphemeralValue",
    "RemainingSteps",
    "MISSING",
    "register_reducer",
    "generate_state_schema",
    "Message",
    "RemoveMessage",
    "REMOVE_ALL_MESSAGES",
    "add_messages",
    "Mutation",
    "NbgraphError",
    "GraphBuildError",
    "InvalidUpdateError",
    "GraphRecursionError",
    "EmptyInputError",
]

HEAVY_MODULES = ["pandas", "graphviz", "ipywidgets", "langchain_core", "tqdm", "distributed"]

ON_FIRST_USE_MODULES = [
    "pydantic",
    "sqlite3",
    "nbgraph.messages.model",
    "nbgraph.checkpoint.sqlite",
]
"""Imported by the first use of a name that needs them, not by `import nbgraph`."""

ERRORS_AND_BUILTINS = [
    ("GraphBuildError", ValueError),
    ("InvalidUpdateError", ValueError),
    ("GraphRecursionError", RecursionError),
    ("EmptyInputError", ValueError),
]


def run_python(code: str) -> str:
    """Run `code` in a fresh interpreter and return what it printed."""
    finished = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert finished.returncode == 0, finished.stderr
    return finished.stdout


def test_import_nbgraph_loads_no_heavy_module() -> None:
    code = (
        "import json, sys\n"
        "import nbgraph\n"
        f"print(json.dumps([m for m in {HEAVY_MODULES!r} if m in sys.modules]))\n"
    )

    assert json.loads(run_python(code)) == []


def test_the_heavy_module_check_does_see_a_loaded_module() -> None:
    code = (
        "import json, sys\n"
        "import nbgraph, pandas\n"
        f"print(json.dumps([m for m in {HEAVY_MODULES!r} if m in sys.modules]))\n"
    )

    assert json.loads(run_python(code)) == ["pandas"]


def test_import_nbgraph_loads_neither_pydantic_nor_sqlite3() -> None:
    code = (
        "import json, sys\n"
        "import nbgraph\n"
        f"print(json.dumps([m for m in {ON_FIRST_USE_MODULES!r} if m in sys.modules]))\n"
    )

    assert json.loads(run_python(code)) == []


@pytest.mark.parametrize(
    ("use", "loaded"),
    [
        ("nbgraph.Message(role='user', content='hi')", ["pydantic", "nbgraph.messages.model"]),
        (
            "nbgraph.messages.use_message_kind('nbgraph')\nnbgraph.add_messages([], ['hi'])",
            ["pydantic", "nbgraph.messages.model"],
        ),
        ("nbgraph.add_messages([], [('user', 'hi')])", ["pydantic"]),  # langchain's classes
        ("nbgraph.MessagesState", ["pydantic", "nbgraph.messages.model"]),
        ("nbgraph.SqliteSaver", ["sqlite3", "nbgraph.checkpoint.sqlite"]),
    ],
)
def test_first_use_imports_what_the_name_needs(use: str, loaded: list[str]) -> None:
    code = (
        "import json, sys\n"
        "import nbgraph\n"
        f"{use}\n"
        f"print(json.dumps([m for m in {ON_FIRST_USE_MODULES!r} if m in sys.modules]))\n"
    )

    assert json.loads(run_python(code)) == loaded


def test_names_built_on_first_use_are_the_ones_of_their_modules() -> None:
    import pydantic

    from nbgraph.checkpoint import SqliteSaver
    from nbgraph.checkpoint.sqlite import ReadOnlyCheckpointError
    from nbgraph.messages import Message, MessagesState, RemoveMessage

    assert (nbgraph.Message, nbgraph.RemoveMessage) == (Message, RemoveMessage)
    assert (nbgraph.MessagesState, nbgraph.SqliteSaver) == (MessagesState, SqliteSaver)
    assert nbgraph.checkpoint.ReadOnlyCheckpointError is ReadOnlyCheckpointError
    assert issubclass(RemoveMessage, Message)
    assert issubclass(Message, pydantic.BaseModel)
    assert Message.model_config["frozen"]
    previous = nbgraph.messages.use_message_kind("nbgraph")
    try:
        assert isinstance(nbgraph.add_messages([], [("user", "hi")])[0], nbgraph.Message)
    finally:
        nbgraph.messages.use_message_kind(previous)
    assert repr(Message) == "<class 'nbgraph.messages.Message'>"
    assert {"Message", "SqliteSaver"} <= set(dir(nbgraph))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Mesage'"):
        _ = nbgraph.Mesage
    with pytest.raises(AttributeError, match="no attribute 'Mesage'"):
        _ = nbgraph.messages.Mesage
    with pytest.raises(AttributeError, match="no attribute 'Saver'"):
        _ = nbgraph.checkpoint.Saver


def test_required_names_import_in_a_fresh_interpreter() -> None:
    run_python(f"from nbgraph import {', '.join(REQUIRED_NAMES)}")


@pytest.mark.parametrize("name", REQUIRED_NAMES)
def test_required_name_is_public(name: str) -> None:
    assert hasattr(nbgraph, name)
    assert name in nbgraph.__all__


def test_every_name_in_all_exists() -> None:
    missing = [name for name in nbgraph.__all__ if not hasattr(nbgraph, name)]

    assert missing == []


MODULES_WITH_ALL = sorted(
    ".".join(
        path.with_suffix("").relative_to(Path(nbgraph.__file__).parents[1]).parts
    ).removesuffix(".__init__")
    for path in Path(nbgraph.__file__).parent.rglob("*.py")
    if "\n__all__" in path.read_text()
)
"""The modules that name their public surface (`__all__`); read as text, imported per test."""


@pytest.mark.parametrize("module", MODULES_WITH_ALL)
def test_every_name_in_a_modules_all_exists(module: str) -> None:
    loaded = importlib.import_module(module)
    missing = [name for name in loaded.__all__ if not hasattr(loaded, name)]

    assert missing == []
    assert not [name for name in loaded.__all__ if name.startswith("_")]


def test_star_import_gives_every_required_name() -> None:
    code = (
        "import json\n"
        "from nbgraph import *\n"
        f"print(json.dumps([n for n in {REQUIRED_NAMES!r} if n not in globals()]))\n"
    )

    assert json.loads(run_python(code)) == []


def test_public_names_are_the_ones_of_their_modules() -> None:
    from nbgraph.messages import add_messages
    from nbgraph.notebook import StateGraph
    from nbgraph.reducers import register_reducer
    from nbgraph.types import END, MISSING, START

    assert nbgraph.StateGraph is StateGraph
    assert nbgraph.add_messages is add_messages
    assert nbgraph.register_reducer is register_reducer
    assert nbgraph.MISSING is MISSING
    assert (nbgraph.START, nbgraph.END) == (START, END)


def test_ephemeral_value_is_ephemeral() -> None:
    assert nbgraph.EphemeralValue is nbgraph.Ephemeral


@pytest.mark.parametrize(("name", "builtin"), ERRORS_AND_BUILTINS)
def test_each_error_subclasses_nbgraph_error_and_its_builtin(name: str, builtin: type) -> None:
    error_type = getattr(nbgraph, name)

    assert issubclass(error_type, nbgraph.NbgraphError)
    assert issubclass(error_type, builtin)


@pytest.mark.parametrize(("name", "builtin"), ERRORS_AND_BUILTINS)
def test_each_error_is_caught_as_its_builtin(name: str, builtin: type) -> None:
    error_type = getattr(nbgraph, name)
    args = (["a problem"],) if name == "GraphBuildError" else ("a problem",)

    with pytest.raises(builtin, match="a problem"):
        raise error_type(*args)


def test_nbgraph_error_is_an_exception() -> None:
    assert issubclass(nbgraph.NbgraphError, Exception)


def test_graph_build_error_keeps_its_problems() -> None:
    error = nbgraph.GraphBuildError(["first problem", "second problem"])

    assert error.problems == ["first problem", "second problem"]
    assert "2 problems" in str(error)
    assert "first problem" in str(error)
    assert "second problem" in str(error)


def test_import_nbgraph_loads_no_event_loop_machinery() -> None:
    # asyncio (with ssl and logging) costs about a third of `import nbgraph`: the async
    # drivers and the live streams load it when a run needs it
    code = (
        "import json, sys\n"
        "import nbgraph\n"
        "print(json.dumps([m for m in ['asyncio', 'concurrent.futures'] if m in sys.modules]))\n"
    )

    assert json.loads(run_python(code)) == []
