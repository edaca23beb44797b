"""A run file whose step lines agree with its header (`step_lines`: their count and CRC-32) is
read without its steps; each step is read, checked and replayed when first asked for, and a
damaged one is refused then, by name, before any of its data is returned (docs/record.md,
"The run file's layout"). A file whose lines do not agree is read whole and checked at once."""

import copy
import json
import operator
import pickle
import re
import zlib
from typing import Annotated, TypedDict

import pytest

from nbgraph import END, START, Run, StateGraph
from nbgraph.record.files.lazy_steps import LazySteps
from nbgraph.record.files.log_shape import LogShapeError, check_document
from nbgraph.record.files.serialize import RunFileError, _decode_log
from nbgraph.record.files.step_decoding import BrokenDocument
from nbgraph.record.files.step_lines import find_step_lines, step_lines_entry
from tests.support.file_fuzz import summed_text
from tests.support.step_damages import STEP_DAMAGES, loop_document, step_view


class Count(TypedDict):
    count: int
    log: Annotated[list, operator.add]


def _loop(steps: int) -> Run:
    app = (
        StateGraph(Count)
        .add_node("tick", lambda s: {"count": s["count"] + 1, "log": [s["count"]]})
        .add_edge(START, "tick")
        .add_conditional_edges("tick", lambda s: END if s["count"] >= steps else "tick")
        .compile()
    )
    return app.run({"count": 0, "log": []}, {"recursion_limit": steps + 10})


def test_a_saved_run_loads_without_reading_a_step_and_reads_each_when_first_asked(tmp_path):
    run = _loop(50)
    loaded = Run.load(run.save(tmp_path / "run.json"))
    steps = loaded.log.steps
    assert isinstance(steps, LazySteps) and len(steps) == 51 and steps.read == 0
    assert loaded.status == "done" and loaded.output == run.output and steps.read == 0
    assert steps[3].tasks[0].writes == [("count", 3), ("log", [2])] and steps.read == 4
    assert [s.step for s in steps[-3:]] == [48, 49, 50] and steps.read == 51
    assert loaded.effect_list == run.effect_list
    assert loaded.state_at(20) == run.state_at(20)
    assert loaded.to_json() == run.to_json()
    assert type(pickle.loads(pickle.dumps(steps))) is list
    assert type(copy.deepcopy(loaded.log).steps) is list


def test_a_damaged_step_line_makes_the_sum_disagree_and_the_file_is_read_whole(tmp_path):
    path = _loop(5).save(tmp_path / "run.json")
    text = path.read_text()
    path.write_text(text.replace('"count",3]', '"count",3}', 1))
    with pytest.raises(RunFileError, match=r"is not valid JSON \(.* at line \d+, column \d+"):
        Run.load(path)  # (refused at load, as a whole file is)
    path.write_text(text.replace('"count",3]', '"count",33]', 1))  # (valid: read whole)
    assert type(Run.load(path).log.steps) is list


def _summed(document: dict) -> str:
    text = summed_text(document)
    assert isinstance(Run.from_json(text).log.steps, LazySteps)
    return text


@pytest.mark.parametrize("damage", STEP_DAMAGES)
def test_a_damaged_step_is_refused_when_first_read_as_a_whole_load_refuses_it(damage):
    """The 16 damages of `test_serialize` in a file read step by step (its sum made again,
    as a crafted file's could be): it loads, the steps before the damaged one read, and the
    damaged one is refused when first asked for (and again after), with the message a whole
    load gives naming its entry; a damage the whole check lets through reads the same."""
    document = loop_document()
    STEP_DAMAGES[damage](document["run"]["steps"][2])
    run = Run.from_json(_summed(document))
    steps = run.log.steps
    assert [s.step for s in steps[:2]] == [0, 1]
    expected = _whole_refusal(document)
    if expected is None:
        general = _decode_log(json.loads(json.dumps(document)), None, "The text")
        assert [step_view(s) for s in steps] == [step_view(s) for s in general.steps]
        return
    for ask in (lambda: steps[2], lambda: steps[3], lambda: run.effect_list, lambda: list(steps)):
        with pytest.raises(RunFileError) as refused:
            ask()
        assert str(refused.value) == f"{expected} (entry 2 of its steps, checked when first read)."
    assert steps.read == 2 and steps[1].step == 1


def _whole_refusal(document: dict) -> str | None:
    """What `Run.from_json` of the whole document says, without the last full stop."""
    try:
        check_document(json.loads(json.dumps(document)))
    except LogShapeError as error:
        return f"The text is not a complete nbgraph run: {error}"
    try:
        _decode_log(json.loads(json.dumps(document)), None, "The text")
    except BrokenDocument as error:
        return f"The text is not a complete nbgraph run: {error}"
    return None


def test_a_step_that_does_not_replay_is_refused_when_first_read_naming_its_entry():
    document = json.loads(_loop(6).to_json())
    document["run"]["steps"][4]["tasks"][0]["writes"][1][1] = 7  # (a list + 7)
    run = Run.from_json(_summed(document))
    assert run.state_at(2) == {"count": 2, "log": [0, 1]}
    with pytest.raises(RunFileError, match="cannot be replayed") as refused:
        run.effects  # noqa: B018
    assert "(TypeError: " in str(refused.value)
    assert "entry 4 of its steps, checked when first read" in str(refused.value)
    with pytest.raises(RunFileError, match="entry 4 of its steps"):
        run.state_at(5)
    whole = json.dumps(document)
    with pytest.raises(RunFileError, match="cannot be replayed"):
        Run.from_json(whole)  # (read whole: refused at load)


def test_a_step_line_that_is_not_json_is_refused_when_first_read():
    text = _summed(json.loads(_loop(4).to_json()))
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith('   {"step":2,'))
    lines[at] = lines[at].replace('"applied":true', '"applied":tru', 1)
    damaged = "\n".join(lines)
    start, end = find_step_lines(damaged.encode()).listed  # (summed again, as a crafted file is)
    crc = step_lines_entry(damaged.encode()[start:end])["crc32"]
    damaged = re.sub(r'"crc32": \d+', f'"crc32": {crc}', damaged, count=1)
    run = Run.from_json(damaged)
    assert isinstance(run.log.steps, LazySteps) and run.log.steps[1].step == 1
    with pytest.raises(RunFileError, match=r"not valid JSON in entry 2 of its steps, checked"):
        run.log.steps[2]


def test_a_hostile_file_read_step_by_step_is_refused_by_its_bound_when_first_read():
    from tests.support.hostile_files import RUN_FILES

    document = json.loads(RUN_FILES["a tuple added 1,000 times"]())
    run = Run.from_json(_summed(document))
    with pytest.raises(RunFileError, match="entry 1 of its steps"):
        run.effect_list  # noqa: B018


def test_a_read_interrupted_mid_step_reads_again_from_the_first_step(tmp_path, monkeypatch):
    run = _loop(8)
    loaded = Run.load(run.save(tmp_path / "run.json"))
    steps, replayed = loaded.log.steps, LazySteps._replayed
    calls = []

    def interrupted(self, step):
        calls.append(step.step)
        if len(calls) == 5:  # (after decoding step 4, halfway through its replay)
            raise KeyboardInterrupt
        replayed(self, step)

    monkeypatch.setattr(LazySteps, "_replayed", interrupted)
    with pytest.raises(KeyboardInterrupt):
        list(steps)
    assert steps.read == 0
    assert loaded.effect_list == run.effect_list and steps.read == 9
    assert calls == [0, 1, 2, 3, 4, *range(9)]


@pytest.mark.parametrize("count", [3, 5])
def test_a_header_counting_other_than_the_lines_is_refused_when_the_lines_run_out(count):
    document = json.loads(_loop(3).to_json())  # (4 steps)
    text = summed_text(document)
    start, end = find_step_lines(text.encode()).listed
    steps = text.encode()[start:end]
    crc = zlib.crc32(steps, zlib.crc32(b"%d\n" % count))  # (the count summed with the lines)
    text = re.sub(r'"count": 4,\n  "crc32": \d+', f'"count": {count},\n  "crc32": {crc}', text)
    run = Run.from_json(text)
    assert len(run.log.steps) == count and run.log.steps[1].step == 1
    with pytest.raises(RunFileError, match=f"complete .* where the header counts {count}"):
        list(run.log.steps)


def test_a_changed_count_makes_the_sum_disagree_and_the_file_is_read_whole():
    text = _loop(3).to_json()
    assert '"count": 4,' in text
    assert type(Run.from_json(text.replace('"count": 4,', '"count": 5,')).log.steps) is list


def test_a_damaged_file_read_step_by_step_is_read_or_refused_as_read_whole():
    """Seeded damages (`file_fuzz.mutate_summed`: most in one step, summed again): the file
    read step by step and the same document read whole read, or refuse by name, the same
    files (`read_run` reads every view's data). `python -m tests.support.file_fuzz` runs
    such cases among its others, by the thousand."""
    import random

    from nbgraph.errors import NbgraphError
    from tests.support.file_fuzz import mutate_summed, read_run, run_documents

    def outcome(text: str) -> str:
        try:
            read_run(text)
        except NbgraphError:
            return "refused"
        return "read"

    documents, rng, outcomes = run_documents(), random.Random(11), set()
    for _ in range(150):
        text, edit = mutate_summed(rng, rng.choice(documents))
        try:
            whole = json.dumps(json.loads(text))
        except ValueError:
            continue
        both = (outcome(text), outcome(whole))
        assert both[0] == both[1], (edit, both)
        outcomes.add(both[0])
    assert outcomes == {"read", "refused"}


def test_a_continued_threads_run_saves_and_loads_with_its_input_step_numbered_past_a_gap(tmp_path):
    """The second invoke on a thread restores step 2 and numbers its input's step 4 (as
    LangGraph numbers its checkpoints): the file reads back whole and step by step, while a
    step missing anywhere else is still refused."""
    from nbgraph import MemorySaver

    class S(TypedDict):
        log: Annotated[list, operator.add]

    graph = StateGraph(S).add_node("a", lambda s: {"log": ["a"]}).add_edge(START, "a")
    app = graph.add_edge("a", END).compile(checkpointer=MemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    app.invoke({"log": ["x"]}, config)
    app.invoke({"log": ["y"]}, config)
    run = app.last_run
    numbers = [step.step for step in run.log.steps]
    assert numbers[1] > numbers[0] + 1  # (the gap this test is about)
    loaded = Run.load(run.save(tmp_path / "run.json"))
    assert [step.step for step in loaded.log.steps] == numbers
    assert loaded.effects.equals(run.effects)
    document = json.loads((tmp_path / "run.json").read_text())
    document["run"]["steps"][2]["step"] += 1  # (a gap after the input's step: refused)
    for task in document["run"]["steps"][2]["tasks"]:
        task["step"] += 1
    (tmp_path / "gap.json").write_text(json.dumps(document))
    with pytest.raises(RunFileError, match="a step is missing"):
        list(Run.load(tmp_path / "gap.json").log.steps)
