"""How a run starts: the input step, resuming from a checkpoint, and a resuming `Command`.

`Starting` is mixed into `engine.loop.RunLoop`; its methods use the loop's state
(`spec`, `values`, `pull`, `push`, `thread`, ...), which `RunLoop.__init__` sets.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from typing import Any

from nbgraph.engine.core.runlog import RootReset, StepLog, initial_values
from nbgraph.engine.core.tasks import Task, absorb_output, prepared
from nbgraph.engine.core.writes import applied_writes, apply_step
from nbgraph.errors import EmptyInputError, InvalidUpdateError
from nbgraph.isolation import isolate
from nbgraph.schema import pydantic_updates
from nbgraph.types import END, START, Command, Send


class Starting:
    """`RunLoop.begin` and the steps it takes before the first superstep."""

    # --- the input -------------------------------------------------------------------------

    def begin(self, input: Any) -> StepLog:
        """Record the input and apply it through the reducers (step 0 of a new thread).

        With a checkpointer: `None` resumes the thread where its last checkpoint stopped, and
        new input on a thread that has checkpoints is applied on top of its state.
        """
        if self.thread is not None and self.thread.ns:  # a subgraph resumed where it paused
            resumed = self.thread.enter(self)
            if resumed is not None:
                return resumed
        restored = self.thread.restore() if self.thread is not None else None
        if input is None:
            if restored is None:
                raise EmptyInputError(
                    "Received no input: invoke(None) resumes a checkpointed thread, and this "
                    "one has no checkpoint; pass a dict of initial values."
                )
            if START in restored.control["pull"]:  # an input checkpoint: apply its input
                self.resume(restored, keep_next=False)
                if not restored.latest:  # a replay grows a new branch, as any replay does
                    self.thread.branch(restored)
                    self.step += 1
                return self._input_step(restored.control.get("input", []))
            return self.resume(restored)
        if isinstance(input, Command):
            if restored is None or not restored.paused:
                raise InvalidUpdateError(
                    "Command(resume=...) answers a run paused by interrupt(); this thread "
                    "has no pending interrupt."
                )
            log = self.resume(restored)
            self._take_command(input, restored.paused)
            return log
        self.log.input = isolate(input)
        if restored is not None:
            self.resume(restored, keep_next=False)
        else:
            self.values = initial_values(self.spec)
            self.log.final = self.values
        writes = []
        for key, value in self._input_pairs(input):
            writes.append((key, prepared(self.spec.fields.get(key), value)))
        if self.thread is not None:  # LangGraph's input checkpoint: the input, not yet applied
            self.step += restored is not None
            self.thread.save_input(self.step, writes, restored, self.values)
        return self._input_step(writes)

    def _input_step(self, writes: list[tuple[str, Any]]) -> StepLog:
        """The step that applies the input's `writes` (the START task) and routes from it."""
        self.step += 1
        self.stop = self.step - 1 + self.limit + 1
        task = Task(step=self.step, index=0, node=START, kind="input", started=time.time())
        task.writes.extend(tuple(w) for w in writes)
        self.route(task)
        task.ended = task.started
        return self.commit([task], source="loop")

    def resume(self, restored: Any, keep_next: bool = True) -> StepLog:
        """Start from a checkpoint: its values (as a root reset of this run's record) and,
        unless new input replaces it, what was to run next and what had already finished."""
        self.values = self.log.final = restored.values
        self.step, self.stop = restored.step, restored.step + self.limit + 1
        self.thread.head = restored.checkpoint_id
        if keep_next and not restored.latest:
            self.thread.branch(restored)  # a replay grows a new branch from the past
            self.step += 1  # (its fork checkpoint is a step, as in LangGraph)
        if keep_next:
            control = restored.control
            self.pull = {k: list(v) for k, v in control["pull"].items()}
            push = control.get("push", ())
            self.push = [(sender, Send(node, arg)) for sender, node, arg in push]
            seen = control.get("seen") or [() for _ in self.spec.waiting]
            self.seen = [set(names) for names in seen]
            self.deferred = {k: list(v) for k, v in control.get("deferred", {}).items()}
            incoming = control.get("incoming", {})
            self.incoming = {k: [tuple(p) for p in v] for k, v in incoming.items()}
            self.finished = dict(restored.finished)
            self.answers = {k: list(v["answers"]) for k, v in restored.paused.items()}
            self._past_breakpoint = True  # resuming steps over the breakpoint it stopped at
            if restored.updates:  # a Command's update and goto, kept while paused
                self.root_updated = True
                routes = [r for update in restored.updates for r in update["routes"]]
                self._take_gotos([Send(*r) if isinstance(r, list) else r for r in routes])
        recorded = {k: isolate(v) for k, v in restored.values.items()}
        reset = RootReset(restored.step, restored.checkpoint_id, "resume", (), (), recorded)
        log = StepLog(restored.step, [], self.spec.fields, resets=[reset], applied=True)
        self.log.steps.append(log)
        return log

    def _take_command(self, command: Command, paused: dict[str, dict[str, Any]]) -> None:
        """Resume with a `Command`, as LangGraph does: its `update` goes into the state before
        the paused step runs again (through the reducers, as the graph's input), its `goto`
        adds nodes to that step, and its `resume` (unless None) answers the interrupts.

        The update and goto are kept with the paused checkpoint until the step commits (the
        next checkpoint starts from the updated state), so `get_state` shows them and a run
        that pauses again keeps them.
        """
        if command.graph == Command.PARENT:
            raise InvalidUpdateError(
                "Command(graph=Command.PARENT) was given as graph input; there is no parent "
                "graph to send it to."
            )
        update, goto = command.update, command.goto_targets()
        if (update is not None or goto) and self.spec.semantics != "supersteps":
            raise InvalidUpdateError(
                "Command(update=..., goto=...) when resuming is not supported with semantics="
                f'"{self.spec.semantics}" yet; use update_state(config, values, as_node=...).'
            )
        if command.resume is not None:
            self._answer(command.resume, paused)
        if update is not None or goto:
            task = Task(self.step, 0, START, "update", started=time.time())
            absorb_output(self.spec, None, task, Command(update=update, goto=goto))
            if task.dropped:
                self._warn(
                    f"Command(update=...) wrote keys the state does not have; they were "
                    f"dropped: {[key for key, _, _ in task.dropped]}."
                )
            apply_step(self.spec.fields, self.values, applied_writes(self.spec.fields, [task]),
                       self.step)  # fmt: skip
            self.thread.save_update(task)
            self._take_gotos(task.routes)
            self.root_updated = True

    def _take_gotos(self, routes: Any) -> None:
        """Add a resuming Command's `goto` targets to the step that runs next."""
        for route in routes:
            if isinstance(route, Send):
                self.push.append((START, route))
            elif route != END:
                self.pull.setdefault(route, []).append(START)

    def _answer(self, resume: Any, paused: dict[str, dict[str, Any]]) -> None:
        """Give the paused tasks their answers: one value for one pending interrupt, or
        `{interrupt_id: value}` for several."""
        pending = {i.id: task_id for task_id, p in paused.items() for i in p["interrupts"]}
        if isinstance(resume, dict) and resume and set(resume) <= set(pending):
            for interrupt_id, value in resume.items():
                self.answers.setdefault(pending[interrupt_id], []).append(value)
                self.resumed[interrupt_id] = (pending[interrupt_id], value)  # (for subgraphs)
            return
        if len(pending) != 1:
            raise InvalidUpdateError(
                f"{len(pending)} interrupts are waiting; answer each by id: "
                f"Command(resume={{{', '.join(repr(i) + ': ...' for i in pending)}}})."
            )
        ((interrupt_id, task_id),) = pending.items()
        self.answers.setdefault(task_id, []).append(resume)
        self.resumed[interrupt_id] = (task_id, resume)  # (a subgraph's task finds it by id)

    def _input_pairs(self, input: Any) -> list[tuple[str, Any]]:
        schema = self.spec.input
        if schema.kind == "pydantic":
            if isinstance(input, schema.cls):
                return pydantic_updates(input)
            model = schema.cls.model_validate(input)  # raises pydantic's ValidationError
            given = input.keys() if isinstance(input, Mapping) else type(model).model_fields
            return [(k, getattr(model, k)) for k in given if k in type(model).model_fields]
        pairs = schema.updates_from(input)
        if pairs is None:
            if not isinstance(input, Mapping):
                raise InvalidUpdateError(
                    f"Expected dict as graph input, got {type(input).__name__} {input!r}."
                )
            pairs = list(input.items())
        if self.spec.open_schema:
            return pairs
        accepted = schema.fields
        kept = [(k, v) for k, v in pairs if k in accepted and not accepted[k].managed]
        dropped = [k for k, _ in pairs if k not in accepted]
        if dropped:
            self._warn(
                f"Input key(s) {dropped} are not in the input schema "
                f"{getattr(schema.cls, '__name__', schema.cls)!s} and were dropped."
            )
        return kept

    def _warn(self, message: str) -> None:
        self.log.warnings.append(message)
        # _warn < _input_pairs < begin < drive < invoke/stream < the caller's line
        warnings.warn(message, UserWarning, stacklevel=6)
