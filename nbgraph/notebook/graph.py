"""`StateGraph`: the builder (`nbgraph.blueprint.GraphBuilder`) with `compile()`, which hands the
checked spec to a `CompiledStateGraph`, and `draw()`, the graph as it stands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from nbgraph.blueprint.builder import GraphBuilder
from nbgraph.blueprint.validate import compile_problems, ignored
from nbgraph.engine.core.caching import check_cache
from nbgraph.messages import add_messages
from nbgraph.schema import read_schema

if TYPE_CHECKING:
    from nbgraph.notebook.app import CompiledStateGraph

__all__ = ["MessageGraph", "StateGraph"]


class StateGraph(GraphBuilder):
    """Build a graph of nodes that read a typed state and return the fields they change.

    Args:
        state_schema: a TypedDict, pydantic `BaseModel`, dataclass, or `dict`.
        input_schema: keys accepted as input (default: the state schema).
        output_schema: keys returned by `invoke` (default: the state schema).
        reducers: for a `dict` schema, `{field: reducer or registered name}` (langgraphgo).
        ephemeral: for a `dict` schema, fields that live for one superstep.
        state_merger: `(current, [updates]) -> merged` for parallel writes to fields that
            have no reducer (langgraphgo's `stateMerger`); without it they are a conflict.

    >>> from nbgraph import START
    >>> app = (StateGraph(dict, reducers={"log": "append"})
    ...        .add_node("a", lambda s: {"log": ["a"]})
    ...        .add_edge(START, "a").compile())
    >>> app.invoke({"log": ["start"]})
    {'log': ['start', 'a']}
    """

    def compile(
        self,
        checkpointer: Any = None,
        *,
        interrupt_before: Sequence[str] = (),
        interrupt_after: Sequence[str] = (),
        debug: bool = False,
        name: str | None = None,
        semantics: str = "supersteps",
        end_merge: Callable[[list[Any]], Any] | str = "delta",
        store: Any = None,
        **options: Any,
    ) -> CompiledStateGraph:
        """Check the graph and return a runnable `CompiledStateGraph`.

        Args:
            checkpointer: a saver (`MemorySaver()`, `SqliteSaver(path)`) to keep threads.
            interrupt_before, interrupt_after: node names (or `"*"`) to pause at.
            semantics: `"supersteps"` (LangGraph's, the default) or `"branches"`: each
                parallel branch carries its own copy of the state until a join merges it
                (EvoFabric's and the Rust seed's model; docs/BRANCHES.md gives the rules).
            end_merge: with `"branches"`, how END merges the lineages that reach it:
                `"delta"` (default), `"fold"`, or a strategy `(list_of_states) -> state`.
            name: the graph's name, shown in its repr.
            cache: where nodes with a `cache_policy=` keep their writes, e.g.
                `InMemoryCache()` (as LangGraph's `compile(cache=...)`).
            store: a store (`nbgraph.store.memory.InMemoryStore()`) for memory shared
                across threads: nodes reach it as `runtime.store` or a `store` parameter.

        Raises:
            GraphBuildError: listing every problem (unknown nodes, no edge from START,
                duplicate names, unknown reducer names, bad reducers, ...).
            TypeError: `checkpointer` is not a saver, True, False or None.
        """
        from nbgraph.notebook.app import CompiledStateGraph  # (the run loop loads here)

        ignored("compile()", options, keep=("store", "cache"))
        _check_compile_arguments(interrupt_before, interrupt_after, store)
        cache = options.get("cache")
        extra = compile_problems(semantics, end_merge) + check_cache(cache)
        spec = self.validate(interrupt_before, interrupt_after, extra)
        object.__setattr__(spec, "semantics", semantics)
        object.__setattr__(spec, "end_merge", end_merge)
        object.__setattr__(spec, "cache", cache)
        app = CompiledStateGraph(
            spec,
            checkpointer=checkpointer,
            name=name or "LangGraph",  # (LangGraph's default name, which add_node(app) uses)
            store=store,
            context_schema=self.context_schema,
        )
        app.builder = self  # (LangGraph's `app.builder`: the graph compiled)
        return app

    def draw(self, expand: bool = True) -> Any:
        """The graph as it stands, as a `graphviz.Digraph` — even before it compiles.

        Edges to nodes that do not exist yet are drawn to a red "unknown" box.

        Args:
            expand: a compiled graph added as a node (a subgraph) is drawn inside it as a
                cluster holding that graph's own drawing (nested ones too); False: one box,
                as `app.draw(expand=False)` draws it.
        """
        from nbgraph.views.drawings.dot import (
            graph_dot,  # drawings read the spec; they never run it
        )

        problems: list[str] = []
        state = read_schema(
            self.state_schema, reducers=self.reducers, ephemeral=self.ephemeral, problems=problems
        )
        return graph_dot(self._spec(state, state, state, dict(state.fields)), expand=expand)

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        from nbgraph.views.drawings.display import drawing_bundle

        return drawing_bundle(self.draw(), repr(self), include, exclude)


def _check_compile_arguments(before: Any, after: Any, store: Any) -> None:
    """Refuse `compile`'s `interrupt_before`/`after` that are not node names, and a `store`
    that is no store (it would fail only when a node used it)."""
    from nbgraph.errors import check_names, wrong_argument

    check_names("compile(interrupt_before=)", before)
    check_names("compile(interrupt_after=)", after)
    if store is not None and not all(callable(getattr(store, m, None)) for m in _STORE_METHODS):
        raise wrong_argument("compile(store=)", "a store (InMemoryStore(), ...) or None", store)


_STORE_METHODS = ("get", "put", "search", "delete")


class MessageGraph(StateGraph):
    """A graph whose whole state is a list of messages merged by `add_messages` (LangGraph's
    `MessageGraph`, deprecated there for `StateGraph(MessagesState)`): each node takes the
    list and returns messages to add."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(Annotated[list, add_messages], **kwargs)
