"""Differential tests: LangGraph's functional API (`@entrypoint`, `@task`), each program run
on real LangGraph (`from langgraph.func import entrypoint, task`) and on nbgraph
(`from nbgraph.func import entrypoint, task`) with the same code, the outcomes compared.

Checkpoint ids, interrupt ids and task ids are each library's own: snapshots are compared by
their values, next nodes and the names and interrupts of their tasks.
"""

import asyncio
import contextlib
import operator
import threading
import time
from typing import Any

import pytest

pytestmark = pytest.mark.langgraph
pytest.importorskip("langgraph")

from langchain_core.runnables import RunnableConfig  # noqa: E402

from tests.support.harness import plain, same  # noqa: E402


def thread(name: str = "1") -> dict:
    return {"configurable": {"thread_id": name}}


def snapshot(s: Any) -> dict:
    """A `StateSnapshot` by what both libraries show alike."""
    tasks = [(t.name, plain(list(t.interrupts))) for t in s.tasks]
    return {"values": plain(s.values), "next": tuple(s.next), "tasks": tasks,
            "interrupts": plain(list(s.interrupts))}  # fmt: skip


# ---------------------------------------------------------------------------------------------
# invoke, futures, parallel calls


def test_invoke_with_parallel_tasks():
    def program(api):
        @api.task
        def double(x: int) -> int:
            return 2 * x

        @api.entrypoint()
        def main(numbers: list) -> list:
            futures = [double(n) for n in numbers]
            return [f.result() for f in futures]

        return main.invoke([1, 2, 3])

    assert same(program)[0] == [2, 4, 6]


def test_tasks_run_in_parallel():
    def program(api):
        barrier = threading.Barrier(3, timeout=5)

        @api.task
        def meet(x: int) -> int:
            barrier.wait()  # fails unless the three calls run at once
            return x

        @api.entrypoint()
        def main(n: int) -> int:
            return sum(f.result() for f in [meet(i) for i in range(n)])

        return main.invoke(3)

    assert same(program)[0] == 3


def test_ainvoke_async_tasks_awaited():
    def program(api):
        @api.task
        async def slow_square(x: int) -> int:
            await asyncio.sleep(0.01)
            return x * x

        @api.entrypoint()
        async def main(numbers: list) -> list:
            return list(await asyncio.gather(*[slow_square(n) for n in numbers]))

        return asyncio.run(main.ainvoke([1, 2, 3]))

    assert same(program)[0] == [1, 4, 9]


def test_calls_nobody_waits_for_end_within_the_step():
    def program(api):
        done = []

        @api.task
        async def slow(x: int) -> int:
            await asyncio.sleep(0.02)
            done.append(("async", x))
            return x

        @api.task
        def slow_sync(x: int) -> int:
            time.sleep(0.02)
            done.append(("sync", x))
            return x

        @api.entrypoint()
        async def main(x: int) -> str:
            slow(x)
            slow_sync(x)
            return "returned"

        async def collect() -> list:
            return [c async for c in main.astream(1, stream_mode="updates")]

        chunks = asyncio.run(collect())
        return chunks[0], sorted(map(repr, chunks[1:])), sorted(done)

    same(program)


def test_ainvoke_sync_task_from_async_entrypoint():
    def program(api):
        @api.task
        def add_one(x: int) -> int:
            return x + 1

        @api.entrypoint()
        async def main(x: int) -> int:
            return await add_one(x) + await add_one(x + 10)

        return asyncio.run(main.ainvoke(1))

    same(program)


def test_task_calling_a_task_and_kwargs():
    def program(api):
        @api.task
        def inner(x: int, *, scale: int = 1) -> int:
            return x * scale

        @api.task(name="outer_task")
        def outer(x: int) -> int:
            return inner(x, scale=3).result() + 1

        @api.entrypoint()
        def main(x: int) -> dict:
            return {"outer": outer(x).result(), "direct": inner(x).result()}

        chunks = list(main.stream(2, stream_mode="updates"))
        return main.invoke(2), sorted(map(repr, chunks))

    same(program)


def test_returns_none_and_dict_input():
    def program(api):
        seen = []

        @api.entrypoint()
        def main(inputs: dict) -> None:
            seen.append(inputs["topic"])

        return main.invoke({"topic": "cats"}), seen

    same(program)


def test_tasks_called_inside_a_state_graph_node():
    def program(api):
        from typing import TypedDict

        class State(TypedDict):
            numbers: list
            total: int

        @api.task
        def square(x: int) -> int:
            return x * x

        def add_up(state: State) -> dict:
            return {"total": sum(f.result() for f in [square(n) for n in state["numbers"]])}

        graph = api.StateGraph(State)
        graph.add_node("add_up", add_up)
        graph.add_edge(api.START, "add_up")
        app = graph.compile()
        chunks = list(app.stream({"numbers": [1, 2, 3]}, stream_mode="updates"))
        return app.invoke({"numbers": [1, 2, 3]}), sorted(map(repr, chunks))

    assert same(program)[0][0]["total"] == 14


# ---------------------------------------------------------------------------------------------
# previous, final, checkpoints


def test_previous_is_what_the_last_run_returned():
    def program(api):
        @api.entrypoint(checkpointer=api.InMemorySaver())
        def counter(n: int, *, previous: Any = None) -> int:
            return (previous or 0) + n

        runs = [counter.invoke(n, thread()) for n in (1, 2, 3)]
        return runs, counter.invoke(5, thread("other"))

    assert same(program)[0] == ([1, 3, 6], 5)


def test_final_returns_value_and_saves_another():
    def program(api):
        @api.entrypoint(checkpointer=api.InMemorySaver())
        def main(n: int, *, previous: Any = None) -> Any:
            total = (previous or 0) + n
            return api.entrypoint.final(value=f"total {total}", save=total)

        out = [main.invoke(n, thread()) for n in (1, 2)]
        return out, snapshot(main.get_state(thread()))

    same(program)


def test_get_state_after_a_run():
    def program(api):
        @api.task
        def double(x: int) -> int:
            return 2 * x

        @api.entrypoint(checkpointer=api.InMemorySaver())
        def main(x: int) -> int:
            return double(x).result()

        main.invoke(4, thread())
        state = main.get_state(thread())
        return snapshot(state), state.metadata["source"]

    assert same(program)[0][0]["values"] == 8


def test_get_state_history_final_and_first():
    def program(api):
        @api.entrypoint(checkpointer=api.InMemorySaver())
        def main(x: int) -> int:
            return x + 1

        main.invoke(1, thread())
        main.invoke(5, thread())
        history = list(main.get_state_history(thread()))
        # (nbgraph keeps one more checkpoint per run, its input step's: docs/SEMANTICS.md)
        outputs = [h.values for h in history if h.values is not None and not h.next]
        return snapshot(history[0]), outputs, history[-1].metadata["source"]

    same(program)


def test_update_state_sets_the_value_and_what_is_saved():
    def program(api):
        @api.entrypoint(checkpointer=api.InMemorySaver())
        def main(x: int, *, previous: Any = None) -> list:
            return [x, previous]

        main.invoke(1, thread())
        main.update_state(thread(), 42)
        state = snapshot(main.get_state(thread()))
        return state, main.invoke(2, thread())

    assert same(program)[0][1] == [2, 42]


def test_stream_values_and_updates():
    def program(api):
        @api.task
        def shout(word: str) -> str:
            return word.upper()

        @api.entrypoint(checkpointer=api.InMemorySaver())
        def main(words: list) -> list:
            return [f.result() for f in [shout(w) for w in words]]

        values = list(main.stream(["a"], thread(), stream_mode="values"))
        mixed = list(main.stream(["b", "c"], thread("2"), stream_mode=["updates", "values"]))
        return values, in_call_order_free_runs([(mode, repr(chunk)) for mode, chunk in mixed])

    same(program)


def in_call_order_free_runs(chunks: list) -> list:
    """`chunks` with each run of consecutive `updates` chunks sorted: parallel `@task` calls
    stream their updates as each ends, in an order their threads decide on either library."""
    out: list = []
    run: list = []
    for chunk in [*chunks, None]:
        if chunk is not None and chunk[0] == "updates":
            run.append(chunk)
            continue
        out += sorted(run)
        run = []
        if chunk is not None:
            out.append(chunk)
    return out


def test_stream_values_on_a_thread_with_runs_before_and_after_an_error():
    def program(api):
        fail = [True]

        @api.task
        def step(x: int) -> int:
            if fail[0]:
                fail[0] = False
                raise RuntimeError("flaky")
            return x + 1

        @api.entrypoint(checkpointer=api.InMemorySaver())
        def main(x: int) -> int:
            return step(x).result()

        try:
            list(main.stream(1, thread(), stream_mode="values"))
        except RuntimeError as error:
            failed = str(error)
        resumed = list(main.stream(None, thread(), stream_mode="values"))
        again = list(main.stream(5, thread(), stream_mode=["values", "updates"]))
        return failed, resumed, again

    same(program)


def test_stream_subgraphs_and_astream_of_a_sync_entrypoint():
    def program(api):
        @api.task
        def double(x: int) -> int:
            return 2 * x

        @api.entrypoint()
        def main(x: int) -> int:
            return sum(f.result() for f in [double(x), double(x + 1)])

        async def collect() -> tuple:
            streamed = [c async for c in main.astream(2, stream_mode="updates")]
            return sorted(map(repr, streamed)), await main.ainvoke(3)

        nested = list(main.stream(2, stream_mode=["updates", "custom"], subgraphs=True))
        return sorted(map(repr, nested)), asyncio.run(collect())

    same(program)


def test_stream_custom_from_entrypoint_and_task():
    def program(api):
        @api.task
        def work(x: int) -> int:
            api.get_stream_writer()({"task": x})
            return x

        @api.entrypoint()
        def main(x: int, *, writer: api.StreamWriter) -> int:
            writer("started")
            return work(x).result()

        return list(main.stream(7, stream_mode="custom"))

    assert same(program)[0] == ["started", {"task": 7}]


def chat_model(text: str) -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    return GenericFakeChatModel(messages=iter([AIMessage(content=text, id="m1")]))


def token(chunk: Any) -> tuple:
    """A `"messages"` chunk by what both libraries give alike (the step is each one's
    own: nbgraph's entrypoint runs at step 1, after its input step; docs/SEMANTICS.md)."""
    message, metadata = chunk
    keys = ("langgraph_node", "langgraph_triggers", "langgraph_path")
    return type(message).__name__, message.content, {k: metadata.get(k) for k in keys}


def test_stream_messages_from_a_chat_model_in_a_task():
    def program(api):
        @api.task
        def chat(question: str) -> str:
            return chat_model("hello there friend").invoke(question).content

        @api.entrypoint()
        def main(question: str) -> str:
            return chat(question).result()

        tokens = [token(c) for c in main.stream("hi", stream_mode="messages")]
        both_modes = list(main.stream("hi", stream_mode=["messages", "updates"]))
        return tokens, [c[1] for c in both_modes if c[0] == "updates"]

    assert len(same(program)[0][0]) == 5


def test_astream_messages_from_an_async_task():
    def program(api):
        @api.task
        async def chat(question: str) -> str:
            return (await chat_model("one two").ainvoke(question)).content

        @api.entrypoint()
        async def main(question: str) -> str:
            return await chat(question)

        async def collect() -> list:
            return [token(c) async for c in main.astream("hi", stream_mode="messages")]

        return asyncio.run(collect())

    same(program)


# ---------------------------------------------------------------------------------------------
# interrupts and resuming


def test_interrupt_in_entrypoint_and_resume():
    def program(api):
        @api.entrypoint(checkpointer=api.InMemorySaver())
        def review(draft: str) -> dict:
            answer = api.interrupt({"draft": draft})
            return {"draft": draft, "answer": answer}

        first = plain(review.invoke("hello", thread()))
        paused = snapshot(review.get_state(thread()))
        done = review.invoke(api.Command(resume="ok"), thread())
        return first, paused, done, snapshot(review.get_state(thread()))

    same(program)


def test_interrupt_in_a_task_and_resume_runs_done_tasks_once():
    def program(api):
        calls = []

        @api.task
        def prepare(x: int) -> int:
            calls.append("prepare")
            return x * 10

        @api.task
        def ask(x: int) -> str:
            calls.append("ask")
            return api.interrupt(f"approve {x}?")

        @api.entrypoint(checkpointer=api.InMemorySaver())
        def main(x: int) -> list:
            value = prepare(x).result()
            return [value, ask(value).result()]

        first = plain(main.invoke(1, thread()))
        paused = snapshot(main.get_state(thread()))
        done = main.invoke(api.Command(resume="yes"), thread())
        return first, paused, done, calls

    out = same(program)[0]
    assert out[3] == ["prepare", "ask", "ask"]


def test_interrupt_in_a_task_with_an_sqlite_saver(tmp_path):
    def program(api):
        calls = []

        @api.task
        def fetch(x: int) -> dict:
            calls.append("fetch")
            return {"x": x, "tags": ["a", "b"]}

        @api.task
        def approve(item: dict) -> Any:
            return api.interrupt({"approve": item["x"]})

        @api.entrypoint(checkpointer=api.saver())
        def main(x: int) -> list:
            item = fetch(x).result()
            return [item, approve(item).result()]

        first = plain(main.invoke(3, thread()))
        done = main.invoke(api.Command(resume=True), thread())
        return first, done, snapshot(main.get_state(thread())), calls

    assert same(program, saver="sqlite", folder=tmp_path)[0][3] == ["fetch"]


def test_stream_values_of_a_paused_run_and_the_config_a_call_sees():
    def program(api):
        seen = []

        @api.task
        def ask(x: int) -> int:
            metadata = api.get_config()["metadata"]
            seen.append((metadata["langgraph_node"], metadata["langgraph_triggers"]))
            return api.interrupt(x)

        @api.entrypoint(checkpointer=api.InMemorySaver())
        def main(x: int) -> int:
            return ask(x).result() * 2

        first = list(main.stream(1, thread(), stream_mode=["values", "updates"]))
        second = list(main.stream(api.Command(resume=5), thread(), stream_mode="values"))
        return plain(first), plain(second), seen

    same(program)


def fetch_then_flaky(api, calls: list):
    """An entrypoint `main(x)`: `flaky(fetch(x))`, whose `flaky` task raises the first time
    it runs; each task call is appended to `calls`."""
    fail = [True]

    @api.task
    def fetch(x: int) -> int:
        calls.append(("fetch", x))
        return x + 1

    @api.task
    def flaky(x: int) -> int:
        calls.append(("flaky", x))
        if fail[0]:
            fail[0] = False
            raise ValueError("boom")
        return x * 2

    @api.entrypoint(checkpointer=api.InMemorySaver())
    def main(x: int) -> int:
        return flaky(fetch(x).result()).result()

    return main


def test_resume_after_error_does_not_rerun_finished_tasks():
    def program(api):
        calls = []
        main = fetch_then_flaky(api, calls)
        try:
            main.invoke(1, thread())
        except ValueError as error:
            first = str(error)
        paused = snapshot(main.get_state(thread()))
        return first, paused["next"], main.invoke(None, thread()), calls

    out = same(program)[0]
    assert out[3] == [("fetch", 1), ("flaky", 2), ("flaky", 2)]


def test_two_parallel_interrupts_answered_by_id():
    def program(api):
        @api.task
        def ask(topic: str) -> str:
            return api.interrupt(topic)

        @api.entrypoint(checkpointer=api.InMemorySaver())
        def main(topics: list) -> list:
            return [f.result() for f in [ask(t) for t in topics]]

        out = main.invoke(["a", "b"], thread())
        shown = []
        while isinstance(out, dict) and "__interrupt__" in out and len(shown) < 4:
            asked = main.get_state(thread()).interrupts
            shown.append(([i.value for i in out["__interrupt__"]], [i.value for i in asked]))
            out = main.invoke(api.Command(resume={i.id: i.value.upper() for i in asked}), thread())
        return shown, out

    assert same(program)[0][1] == ["A", "B"]


def test_stream_updates_of_a_paused_task():
    def program(api):
        @api.task
        def ask(x: int) -> int:
            return api.interrupt(x)

        @api.entrypoint(checkpointer=api.InMemorySaver())
        def main(x: int) -> int:
            return ask(x).result() + 1

        first = list(main.stream(1, thread(), stream_mode="updates"))
        second = list(main.stream(api.Command(resume=41), thread(), stream_mode="updates"))
        return plain(first), plain(second)

    same(program)


def test_a_resume_streams_the_tasks_that_finished_before_the_pause_no_more():
    def program(api):
        @api.task
        def write(topic: str) -> str:
            return f"an essay about {topic}"

        @api.task
        def polish(text: str) -> str:
            return text + "!"

        @api.entrypoint(checkpointer=api.InMemorySaver())
        def main(topic: str) -> dict:
            essay = polish(write(topic).result()).result()
            return {"essay": essay, "approved": api.interrupt({"essay": essay})}

        seen = []
        for n, mode in enumerate(["updates", ["updates", "values"], ["updates", "custom"]]):
            seen.append(plain(list(main.stream("cats", thread(str(n)), stream_mode=mode))))
            resume = api.Command(resume=True)
            seen.append(plain(list(main.stream(resume, thread(str(n)), stream_mode=mode))))
        return seen

    out = same(program)[0]
    assert out[1] == [{"main": {"essay": "an essay about cats!", "approved": True}}]


def test_a_resume_after_an_error_streams_only_what_runs_again():
    def program(api):
        main = fetch_then_flaky(api, [])
        first = []
        with contextlib.suppress(ValueError):  # (the chunks before the error are kept)
            for chunk in main.stream(1, thread(), stream_mode="updates"):
                first.append(chunk)
        return plain(first), plain(list(main.stream(None, thread(), stream_mode="updates")))

    same(program)


def tasks_chunks(chunks: list) -> list:
    """`tasks` chunks without their ids (each library's own), errors by repr."""
    out = []
    for chunk in chunks:
        shown = {k: v for k, v in chunk.items() if k != "id"}
        if shown.get("error") is not None:
            shown["error"] = repr(shown["error"])
        if shown.get("interrupts"):
            shown["interrupts"] = [i["value"] for i in shown["interrupts"]]
        out.append(shown)
    return out


def test_the_tasks_stream_shows_each_call_and_the_entrypoint_as_langgraph():
    """Each `@task` call's start (its `(args, kwargs)`) and result (`{"__return__": ...}`);
    on resume a finished call's start alone; a cache hit's start alone; the entrypoint's
    own task with its bare input and `{"__end__": ...}`."""

    def program(api):
        @api.task
        def write(topic: str, *, style: str = "plain") -> str:
            return f"essay {topic} {style}"

        @api.task(cache_policy=api.CachePolicy())
        def double(x: int) -> int:
            return x * 2

        @api.task
        def boom(x: int) -> int:
            raise ValueError("boom")

        @api.entrypoint(checkpointer=api.InMemorySaver(), cache=api.InMemoryCache())
        def main(topic: str) -> dict:
            essay = write(topic, style="fancy").result()
            doubled = double(3).result()
            with contextlib.suppress(ValueError):
                boom(1).result()
            return {"essay": essay, "ok": api.interrupt(essay), "doubled": doubled}

        @api.entrypoint(checkpointer=api.InMemorySaver())
        def saving(x: int, *, previous: Any = None) -> Any:
            return api.entrypoint.final(value=x * 2, save=(previous or 0) + x)

        out = []
        for name in ("1", "2"):
            out.append(tasks_chunks(main.stream("cats", thread(name), stream_mode="tasks")))
            resume = api.Command(resume=True)
            out.append(tasks_chunks(main.stream(resume, thread(name), stream_mode="tasks")))
        for x in (3, 4):
            chunks = saving.stream(x, thread(), stream_mode=["tasks", "updates"])
            out.append([(m, tasks_chunks([c]) if m == "tasks" else c) for m, c in chunks])
        return out

    same(program)


def test_the_tasks_and_updates_of_an_async_entrypoint_interleave_as_langgraph():
    def program(api):
        @api.task
        async def write(topic: str) -> str:
            return f"essay {topic}"

        @api.entrypoint(checkpointer=api.InMemorySaver())
        async def main(topic: str) -> dict:
            essay = await write(topic)
            return {"essay": essay, "ok": api.interrupt(essay)}

        async def go() -> list:
            out = []
            for given in ("cats", api.Command(resume=True)):
                chunks = main.astream(given, thread(), stream_mode=["tasks", "updates"])
                out.append([(m, tasks_chunks([c]) if m == "tasks" else plain(c))
                            async for m, c in chunks])  # fmt: skip
            return out

        return asyncio.run(go())

    same(program)


def test_the_tasks_stream_of_a_graph_node_calling_a_task():
    def program(api):
        from typing import Annotated, TypedDict

        class State(TypedDict):
            x: int
            log: Annotated[list, operator.add]

        @api.task
        def double(x: int) -> int:
            return 2 * x

        def node(state: State) -> dict:
            doubled = double(state["x"]).result()
            return {"x": doubled, "log": [api.interrupt(doubled)]}

        builder = api.StateGraph(State).add_node("node", node).add_edge(api.START, "node")
        app = builder.compile(checkpointer=api.InMemorySaver())
        first = tasks_chunks(app.stream({"x": 3, "log": []}, thread(), stream_mode="tasks"))
        again = app.stream(api.Command(resume="yes"), thread(), stream_mode="tasks")
        return first, tasks_chunks(again)

    same(program)


# ---------------------------------------------------------------------------------------------
# policies


def test_retry_policy_on_a_task(monkeypatch):
    monkeypatch.setattr(time, "sleep", lambda seconds: None)

    def program(api):
        attempts = []

        @api.task(retry_policy=api.RetryPolicy(max_attempts=3, retry_on=ValueError))
        def flaky(x: int) -> int:
            attempts.append(x)
            if len(attempts) < 3:
                raise ValueError("not yet")
            return x

        @api.entrypoint()
        def main(x: int) -> int:
            return flaky(x).result()

        return main.invoke(5), attempts

    assert same(program)[0] == (5, [5, 5, 5])


def test_retry_policy_gives_up():
    def program(api):
        attempts = []

        @api.task(retry_policy=api.RetryPolicy(max_attempts=2, initial_interval=0.01,
                                               retry_on=KeyError))  # fmt: skip
        def broken(x: int) -> int:
            attempts.append(x)
            raise KeyError("missing")

        @api.entrypoint()
        def main(x: int) -> int:
            return broken(x).result()

        try:
            main.invoke(1)
        except KeyError as error:
            return repr(error), attempts

    assert same(program)[0][1] == [1, 1]


def test_cache_policy_on_a_task():
    def program(api):
        calls = []

        @api.task(cache_policy=api.CachePolicy())
        def square(x: int) -> int:
            calls.append(x)
            return x * x

        @api.entrypoint(cache=api.InMemoryCache())
        def main(x: int) -> list:
            return [square(x).result(), square(x + 1).result()]  # (LangGraph keeps a
            # result in the cache after its call returns: a second call in the same run may
            # or may not find it there, so each run calls each argument once)

        runs = [main.invoke(2), main.invoke(2)]
        chunks = list(main.stream(3, stream_mode="updates"))
        return runs, calls, sorted(map(repr, chunks))

    same(program)


# ---------------------------------------------------------------------------------------------
# store, context, config


def test_store_injection():
    def program(api):
        store = api.InMemoryStore()
        store.put(("users",), "u1", {"name": "Ada"})

        @api.task
        def greet(name: str) -> str:
            return f"hi {name}"

        @api.entrypoint(store=store)
        def main(user: str, *, store: api.BaseStore) -> str:
            name = store.get(("users",), user).value["name"]
            store.put(("seen",), user, {"ok": True})
            return greet(name).result()

        return main.invoke("u1"), store.get(("seen",), "u1").value

    same(program)


def test_context_through_runtime():
    def program(api):
        from dataclasses import dataclass

        @dataclass
        class Ctx:
            user: str

        @api.entrypoint(context_schema=Ctx, checkpointer=api.InMemorySaver())
        def main(x: int, *, runtime: Any, previous: Any = None) -> str:
            return f"{runtime.context.user}:{x}:{runtime.previous}"

        first = main.invoke(1, thread(), context=Ctx(user="ada"))
        return first, main.invoke(2, thread(), context={"user": "bob"})

    same(program)


def test_config_injection():
    def program(api):
        @api.entrypoint()
        def main(x: int, *, config: RunnableConfig) -> Any:
            return [x, config["configurable"].get("user")]

        return main.invoke(1, {"configurable": {"user": "ada"}})

    assert same(program)[0] == [1, "ada"]


# ---------------------------------------------------------------------------------------------
# errors


def test_task_called_outside_an_entrypoint():
    def program(api):
        @api.task
        def double(x: int) -> int:
            return 2 * x

        try:
            double(1)
        except Exception as error:
            return type(error).__name__, str(error)

    same(program)


def test_error_in_a_task_reaches_the_caller():
    def program(api):
        @api.task
        def bad(x: int) -> int:
            raise ZeroDivisionError("no")

        @api.entrypoint()
        def main(x: int) -> int:
            return bad(x).result()

        try:
            main.invoke(1)
        except ZeroDivisionError as error:
            return "ZeroDivisionError", str(error)

    same(program)


def test_error_caught_by_the_entrypoint():
    def program(api):
        @api.task
        def bad(x: int) -> int:
            raise ValueError(f"bad {x}")

        @api.entrypoint()
        def main(x: int) -> str:
            try:
                return str(bad(x).result())
            except ValueError as error:
                return f"caught {error}"

        return main.invoke(3)

    assert same(program)[0] == "caught bad 3"


def test_retry_policy_on_the_entrypoint(monkeypatch):
    monkeypatch.setattr(time, "sleep", lambda seconds: None)

    def program(api):
        runs = []

        @api.task
        def count(x: int) -> int:
            runs.append(("task", x))
            return x

        @api.entrypoint(retry_policy=api.RetryPolicy(max_attempts=2, retry_on=OSError))
        def main(x: int) -> int:
            value = count(x).result()
            runs.append(("main", x))
            if len(runs) < 3:
                raise OSError("once")
            return value

        return main.invoke(3), runs

    same(program)
