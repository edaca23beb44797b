"""`nbgraph.trace(app, input)` (and `atrace`, awaited): run a LangGraph app and return the `Run`
of that run.

LangGraph records a run's steps, tasks and writes in its checkpoints (what its `debug`
stream shows as `checkpoint` and `task_result` events); `trace` runs the app with a
checkpointer — a fresh in-memory one on a copy of the app when it was compiled without one,
its own otherwise — and imports the thread with `Run.from_langgraph`. An error the run
raised is the record's error (LangGraph's history alone cannot always tell it).
"""

from __future__ import annotations

import uuid
from typing import Any

from nbgraph.notebook.run import Run
from nbgraph.record.langgraph.graph import LangGraphHistoryError, check_langgraph_app

__all__ = ["atrace", "trace"]


def trace(app: Any, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Run:
    """Run a compiled LangGraph graph once (`app.invoke(input, config, **kwargs)`) and
    return its record, as `Run.from_langgraph` reads it.

    Args:
        app: a compiled LangGraph graph, with or without a checkpointer (a LangChain
            `create_agent` agent too). Without one, a copy of it runs with a fresh
            `InMemorySaver` (needs `nbgraph[langgraph]`); with one, `config` must name the
            thread, and the record is that thread's history.
        input: the run's input (or a `Command`, to resume a thread).
        config: the run's config.
        **kwargs: passed to `invoke` (`context=`, `interrupt_before=`, `durability=`, ...).

    Raises:
        NotALangGraphError: `app` is not a compiled LangGraph graph.
        LangGraphHistoryError: the app has a checkpointer and `config` names no thread.
    """
    app, config = _traced(app, config, "nbgraph.trace")
    try:
        app.invoke(input, config, **kwargs)
    except Exception as exc:  # the run's own error: kept on the record
        return _record(app, config, exc)
    return _record(app, config, None)


async def atrace(app: Any, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Run:
    """`trace` for an app that must run asynchronously (async-only tools or middleware):
    `await app.ainvoke(input, config, **kwargs)`, then the record of its thread.

    Args:
        app: a compiled LangGraph graph (see `trace`).
        input: the run's input (or a `Command`, to resume a thread).
        config: the run's config.
        **kwargs: passed to `ainvoke`.

    Raises:
        NotALangGraphError: `app` is not a compiled LangGraph graph.
        LangGraphHistoryError: the app has a checkpointer and `config` names no thread.
    """
    app, config = _traced(app, config, "nbgraph.atrace")
    try:
        await app.ainvoke(input, config, **kwargs)
    except Exception as exc:  # the run's own error: kept on the record
        return _record(app, config, exc)
    return _record(app, config, None)


def _traced(app: Any, config: dict[str, Any] | None, what: str) -> tuple[Any, dict[str, Any]]:
    """The app to run (a copy with a fresh `InMemorySaver` if it has no checkpointer) and
    the config naming its thread."""
    check_langgraph_app(app, what)
    config = dict(config or {})
    configurable = dict(config.get("configurable") or {})
    saver = getattr(app, "checkpointer", None)
    if saver is None or isinstance(saver, bool):
        from langgraph.checkpoint.memory import InMemorySaver

        app = app.copy(update={"checkpointer": InMemorySaver()})
        configurable.setdefault("thread_id", f"nbgraph-trace-{uuid.uuid4().hex}")
    elif "thread_id" not in configurable:
        raise LangGraphHistoryError(
            f"This app has its own checkpointer: pass config={{'configurable': {{'thread_id': "
            f"...}}}} to {what}, as to app.invoke."
        )
    config["configurable"] = configurable
    return app, config


def _record(app: Any, config: dict[str, Any], error: BaseException | None) -> Run:
    """The thread's record, with the error the run raised (if any) as its error."""
    configurable = config["configurable"]
    thread = {k: configurable[k] for k in ("thread_id", "checkpoint_ns") if k in configurable}
    run = Run.from_langgraph(app, {"configurable": thread})
    if error is not None:
        run.log.status, run.log.error = "failed", error
        run.log.warnings.append(f"the run raised {type(error).__name__}: {error}")
    return run
