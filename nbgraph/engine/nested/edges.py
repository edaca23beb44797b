"""Where a subgraph's run meets its parent's task, as LangGraph has it meet.

Two edges of that meeting, decided here so the loop and the record only ask:

- **Handed to the parent.** A subgraph node that returns `Command(graph=Command.PARENT, ...)`
  stops its run (`engine.core.tasks.ParentCommand`) and the parent's task takes the command. That
  run did not fail: its status is `"to_parent"` (`TO_PARENT`), its `error` is None, and the
  task that returned the command keeps the `ParentCommand` (its `command` is what the parent
  took) with the task status `"to_parent"`. A graph with no parent still fails on it.
- **Keys the parent lacks.** A compiled graph added as a node returns its output schema's
  values; LangGraph writes the keys its parent has and drops the others without a word
  (`_get_updates` keeps `k in output_key_set`). nbgraph drops them the same way, records
  them on the task (`run.effects` rows flagged `dropped_key`) and does not warn: they are
  the subgraph's own keys, still in its subrun's output.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TO_PARENT", "finish_handed", "handed_text", "hands_to_parent"]

TO_PARENT = "to_parent"
"""The status of a run stopped by `Command.PARENT` (and of the task that returned it)."""

_PARENT_COMMAND = "ParentCommand"


def hands_to_parent(error: BaseException | None) -> bool:
    """Whether a task's `error` is a command for the parent graph, not a failure (live, or
    as a saved run keeps it: a `RecordedError` of that type's name)."""
    return error is not None and type(error).__name__ == _PARENT_COMMAND


def finish_handed(run: Any, error: BaseException) -> bool:
    """Record a run that `error` stops as handed to its parent, if it is one: a
    `Command.PARENT` raised out of a graph running inside a node. False otherwise (the
    run failed; a graph with no parent fails on `Command.PARENT` too)."""
    if not hands_to_parent(error) or run.caller is None:
        return False
    log = run.log
    log.status = TO_PARENT  # type: ignore[assignment]
    log.error = None
    return True


def handed_text(error: Any) -> str:
    """A short account of a handed command for a drawing: `"to parent: goto x"`."""
    command = getattr(error, "command", None)
    goto = getattr(command, "goto", None)
    if goto in (None, (), []):
        return "to parent"
    targets = goto if isinstance(goto, (list, tuple)) else [goto]
    names = ", ".join(str(getattr(t, "node", t)) for t in targets)
    return f"to parent: goto {names}"
