"""`run.quiz()`: predict, then see. The widget is driven as a learner would: type the value
after into the box, click "check", read the feedback."""

import html
import operator
from typing import Annotated, Any, TypedDict

import pytest

from nbgraph import END, MISSING, START, Overwrite, StateGraph, add_messages, register_reducer
from nbgraph.errors import InvalidArgumentError


class Log(TypedDict):
    log: Annotated[list, operator.add]
    last: str


def fan_in_run():
    """START -> a, b (one step, both write `log`) -> c: `log` folds two writes at step 1."""
    return (
        StateGraph(Log)
        .add_node("a", lambda s: {"log": ["a"], "last": "a"})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_node("c", lambda s: {"log": ["c"], "last": "c"})
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge(["a", "b"], "c")
        .add_edge("c", END)
        .compile()
        .run({"log": [], "last": ""})
    )


def at(quiz, step, field):
    """Go to the merge of `field` at `step`."""
    quiz.go(next(i for i, m in enumerate(quiz.merges) if (m.step, m.field) == (step, field)))
    return quiz


def answer(quiz, text):
    """Type `text` and click check, as a learner does; the feedback's HTML."""
    quiz.answer.value = text
    quiz.check_button.click()
    return quiz.feedback.value


def test_the_quiz_walks_the_merges_in_run_order_with_writes_in_write_order():
    quiz = fan_in_run().quiz()
    assert [(m.step, m.field) for m in quiz.merges] == [
        (0, "log"),
        (0, "last"),
        (1, "log"),
        (1, "last"),
        (2, "log"),
        (2, "last"),
    ]
    at(quiz, 1, "log")
    shown = quiz.question.value
    assert "Merge 3 of 6" in shown and "step 1" in shown and "add" in shown
    assert shown.index("from node &#x27;a&#x27;") < shown.index("from node &#x27;b&#x27;")
    assert "[&#x27;a&#x27;, &#x27;b&#x27;]" not in shown  # the value after is not shown
    quiz.next.click()
    assert (quiz.merge.step, quiz.merge.field) == (1, "last")
    quiz.previous.click()
    assert (quiz.merge.step, quiz.merge.field) == (1, "log")


def test_a_right_answer_says_so_and_spells_out_operator_add_write_by_write():
    quiz = at(fan_in_run().quiz(), 1, "log")
    said = answer(quiz, "['a', 'b']")
    assert "Right!" in said
    assert "operator.add([], ['a']) -> ['a']" in html.unescape(said)
    assert "operator.add(['a'], ['b']) -> ['a', 'b']" in html.unescape(said)
    assert "Score: 1 right of 1 checked" in quiz.score.value


def test_a_wrong_answer_says_so_shows_the_fold_and_counts_once():
    quiz = at(fan_in_run().quiz(), 2, "log")
    said = answer(quiz, "['c']")
    assert "Not quite." in said and "Right!" not in said
    assert "[&#x27;a&#x27;, &#x27;b&#x27;, &#x27;c&#x27;]" in said  # the real value after
    assert "Right!" in answer(quiz, "['a', 'b', 'c']")  # a second try is judged ...
    assert "Score: 0 right of 1 checked" in quiz.score.value  # ... but the first counted


def test_an_unparsable_answer_is_explained_and_never_evaluated(monkeypatch):
    import builtins

    def no_eval(*args: Any) -> None:
        raise AssertionError("the quiz must not eval an answer")

    quiz = at(fan_in_run().quiz(), 1, "log")
    monkeypatch.setattr(builtins, "eval", no_eval)
    said = answer(quiz, "a, b")
    assert "Could not read" in said and "strings in quotes" in said
    assert "[&#x27;a&#x27;, &#x27;b&#x27;]" not in said  # no answer given away
    assert "__import__" in answer(quiz, "__import__('os').getcwd()")  # (named, not run)
    assert "Could not read" in quiz.feedback.value
    assert "type the value after" in answer(quiz, "   ").lower()
    assert quiz.results == {}  # nothing parsed: nothing scored


def test_overwrite_says_the_last_write_wins():
    quiz = at(fan_in_run().quiz(), 2, "last")
    said = answer(quiz, "'c'")
    assert "Right!" in said and "the last write wins" in said
    assert "&#x27;a&#x27; -&gt; &#x27;c&#x27;" in said


def test_an_overwrite_write_bypasses_the_reducer_in_the_fold():
    class Notes(TypedDict):
        notes: Annotated[list, "append"]

    run = (
        StateGraph(Notes)
        .add_node("clear", lambda s: {"notes": Overwrite(["fresh"])})
        .add_edge(START, "clear")
        .compile()
        .run({"notes": ["a", "b"]})
    )
    quiz = at(run.quiz("notes"), 1, "notes")
    said = answer(quiz, "['a', 'b', 'fresh']")
    assert "Not quite." in said and "Overwrite from node &#x27;clear&#x27; bypasses append" in said
    assert "Right!" in answer(quiz, "['fresh']")


def test_a_custom_reducer_and_its_missing_first_value():
    @register_reducer("quiz_longest")
    def longest(old, new):
        return new if old is MISSING or len(new) > len(old) else old

    class Draft(TypedDict):
        best: Annotated[str | None, "quiz_longest"]

    run = (
        StateGraph(Draft)
        .add_node("one", lambda s: {"best": "draft"})
        .add_node("two", lambda s: {"best": "a long draft"})
        .add_node("three", lambda s: {"best": "final"})
        .add_edge(START, "one")
        .add_edge("one", "two")
        .add_edge("one", "three")
        .compile()
        .run({})
    )
    quiz = run.quiz()
    assert [(m.step, str(m.before)) for m in quiz.merges] == [(1, "MISSING"), (2, "draft")]
    assert "MISSING (no value yet)" in quiz.question.value
    said = answer(quiz, "'draft'")
    assert "Right!" in said and "quiz_longest(MISSING, &#x27;draft&#x27;)" in said
    quiz.go(1)
    said = answer(quiz, "'a long draft'")
    assert "quiz_longest(&#x27;draft&#x27;, &#x27;final&#x27;) -&gt; &#x27;draft&#x27;" in said
    assert "quiz_longest(&#x27;draft&#x27;, &#x27;a long draft&#x27;) -&gt;" in said
    assert "Right!" in said


def test_messages_are_folded_by_id_and_answered_by_their_contents():
    class Chat(TypedDict):
        chat: Annotated[list, add_messages]

    run = (
        StateGraph(Chat)
        .add_node("bot", lambda s: {"chat": [("ai", "hello")]})
        .add_edge(START, "bot")
        .compile()
        .run({"chat": [("user", "hi")]})
    )
    quiz = at(run.quiz(), 1, "chat")
    said = answer(quiz, "['hi', 'hello']")
    assert "Right!" in said and "id" in said and "replaces" in said
    quiz.results.clear()
    assert "Right!" in answer(quiz, "[('user', 'hi'), ('ai', 'hello')]")
    assert "Not quite." in answer(quiz, "['hello']")


def test_a_hostile_value_is_escaped_everywhere():
    hostile = "<img src=x onerror=alert(1)>"

    class Page(TypedDict):
        html: Annotated[list, operator.add]

    run = (
        StateGraph(Page)
        .add_node("evil", lambda s: {"html": [hostile]})
        .add_edge(START, "evil")
        .compile()
        .run({"html": []})
    )
    quiz = at(run.quiz(), 1, "html")
    said = answer(quiz, "['<script>']")
    bundle = quiz._repr_mimebundle_()
    for shown in (quiz.question.value, said, bundle["text/html"], quiz.feedback.value):
        assert "<img" not in shown and "<script" not in shown
    assert "&lt;img src=x onerror=alert(1)&gt;" in quiz.question.value


def test_the_static_snapshot_and_text_ask_without_giving_the_answer():
    quiz = at(fan_in_run().quiz(), 1, "log")
    bundle = quiz._repr_mimebundle_()
    assert {"text/plain", "text/html", "application/vnd.jupyter.widget-view+json"} <= set(bundle)
    for form in (bundle["text/html"], bundle["text/plain"]):
        assert "['a', 'b']" not in form and "[&#x27;a&#x27;, &#x27;b&#x27;]" not in form
    assert "re-run the cell to answer" in bundle["text/html"]
    assert "Merge 3 of 6" in bundle["text/html"]
    assert "field 'log'" in bundle["text/plain"] and "after = ?" in bundle["text/plain"]


def test_reveal_shows_the_answer_and_scores_it_as_not_right():
    quiz = at(fan_in_run().quiz(), 1, "log")
    quiz.reveal_button.click()
    assert "The answer" in quiz.feedback.value
    assert "[&#x27;a&#x27;, &#x27;b&#x27;]" in quiz.feedback.value
    assert quiz.results == {quiz.index: False}


def test_a_run_without_merges_of_a_field_is_refused_by_name():
    with pytest.raises(InvalidArgumentError, match="no merges of 'nope'"):
        fan_in_run().quiz("nope")


def test_steps_pick_the_merges_asked_about():
    quiz = fan_in_run().quiz("log", steps=[1, 2])
    assert [(m.step, m.field) for m in quiz.merges] == [(1, "log"), (2, "log")]
    assert [m.step for m in fan_in_run().quiz(steps=1).merges] == [1, 1]
    with pytest.raises(InvalidArgumentError, match="at step"):
        fan_in_run().quiz(steps=9)


def test_a_shared_notebook_shows_the_question_and_not_the_answer(tmp_path):
    """`python -m nbgraph.share` puts the quiz's static form where the widget was."""
    pytest.importorskip("nbconvert")
    from nbgraph.share import export
    from tests.support.browser import execute_notebook

    cells = [
        "import operator\nfrom typing import Annotated, TypedDict\n"
        "from nbgraph import START, StateGraph\n"
        "class Log(TypedDict):\n    log: Annotated[list, operator.add]\n"
        "run = (StateGraph(Log).add_node('a', lambda s: {'log': ['zebra']})"
        ".add_edge(START, 'a').compile().run({'log': ['yak']}))",
        "run.quiz('log', steps=1)",
    ]
    text, done = export(execute_notebook(tmp_path, cells))
    assert done["replaced"] >= 1
    assert "nbgraph-quiz-snapshot" in text and "Merge 1 of 1" in text
    assert "&#x27;yak&#x27;, &#x27;zebra&#x27;" not in text  # the value after: never shown
    assert "['yak', 'zebra']" not in text


def test_a_run_read_from_a_file_is_quizzed_with_the_same_folds(tmp_path):
    from nbgraph.notebook.run import Run

    path = fan_in_run().save(tmp_path / "run.json")
    quiz = at(Run.load(path).quiz(), 1, "log")
    assert "Right!" in answer(quiz, "['a', 'b']")
    assert "operator.add(['a'], ['b']) -> ['a', 'b']" in html.unescape(quiz.feedback.value)


def test_a_merges_values_are_shown_reading_only_what_is_shown():
    """The quiz's text of a value reads as much of it as it shows (issue 36's rule for
    every look at a value): a long list's later items are never asked for their repr."""
    from nbgraph.views.quiz.quiz_fold import shown

    asked = []

    class Item:
        def __repr__(self):
            asked.append(self)
            return "item"

    text = shown([Item() for _ in range(100_000)])
    assert text.startswith("[item, item")
    assert len(text) <= 2000
    assert len(asked) < 1000
