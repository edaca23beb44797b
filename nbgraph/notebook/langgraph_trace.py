"""`nbgraph.trace(app, input)`: run a LangGraph app and return the `Run` of that run.

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

__all__ = ["trace"]


def trace(app: Any, input: Any, config: dict[str, Any] | None = None, **kwargs: Any) -> Run:
    """Run a compiled LangGraph graph once (`app.invoke(input, config, **kwargs)`) and
    return its record, as `Run.from_langgraph` reads it.

    Args:
        app: a compiled LangGraph graph, with or without a checkpointer. Without one, a copy
            of it runs with a fresh `InMemorySaver` (needs `nbgraph[langgraph]`); with one,
            `config` must name the thread, and the record is that thread's history.
        input: the run's input (or a `Command`, to resume a thread).
        config: the run's config.
        **kwargs: passed to `invoke` (`context=`, `interrupt_before=`, ...).

    Raises:
        NotALangGraphError: `app` is not a compiled LangGraph graph.
        LangGraphHistoryError: the app has a checkpointer and `config` names no thread.
    """
    check_langgraph_app(app, "nbgraph.trace")
    config = dict(config or {})
    configurable = dict(config.get("configurable") or {})
    saver = getattr(app, "checkpointer", None)
    if saver is None or isinstance(saver, bool):
        from langgraph.checkpoint.memory import InMemorySaver

        app = app.copy(update={"checkpointer": InMemorySaver()})
        configurable.setdefault("thread_id", f"nbgraph-trace-{uuid.uuid4().hex}")
    elif "thread_id" not in configurable:
        raise LangGraphHistoryError(
            "This app has its own checkpointer: pass config={'configurable': {'thread_id': "
            "...}} to nbgraph.trace, as to app.invoke."
        )
    config["configurable"] = configurable
    error: BaseException | None = None
    try:
        app.invoke(input, config, **kwargs)
    except Exception as exc:  # the run's own error: kept on the record
        error = exc
    thread = {k: configurable[k] for k in ("thread_id", "checkpoint_ns") if k in configurable}
    run = Run.from_langgraph(app, {"configurable": thread})
    if error is not None:
        run.log.status, run.log.error = "failed", error
        run.log.warnings.append(f"the run raised {type(error).__name__}: {error}")
    return run
