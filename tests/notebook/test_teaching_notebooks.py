"""The teaching notebooks keep their promises to a teacher and a learner: no cell above the
lesson's "Answers" section gives an answer away, the prediction exercises are asked by
`run.quiz()` (the learner predicts, the widget checks), the answers wait in one tagged section
at the end, and the command the notebook gives removes them (the notebooks themselves run
under `pytest --nbmake`)."""

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"
LESSON = NOTEBOOKS / "02_reducer_semantics.ipynb"


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def text(cell: dict) -> str:
    return "".join(cell["source"])


def is_answer(cell: dict) -> bool:
    return "answer" in cell["metadata"].get("tags", [])


def exercises_and_answers() -> tuple[list[dict], list[dict]]:
    """The lesson's cells before its "Answers" section, and the section's cells."""
    found = cells(LESSON)
    heading = next(i for i, c in enumerate(found) if text(c).startswith("## Answers"))
    return found[:heading], found[heading:]


def test_the_answers_wait_in_one_tagged_section_at_the_end():
    before, answers = exercises_and_answers()
    assert all(is_answer(cell) for cell in answers)  # (the heading too: a teacher removes all)
    assert not any(is_answer(cell) for cell in before)
    code = [c for c in answers if c["cell_type"] == "code"]
    assert len(code) == 3
    for number, cell in enumerate(code, 1):
        assert text(cell).startswith(f"# Exercise {number}:")  # its first line: which one
        assert "hide-input" in cell["metadata"]["tags"]
        assert "assert " in text(cell)  # the answer is checked when the notebook runs


ANSWERS = ['["a", "web"]', "['a', 'web']", '{"notes": ["fresh"]}', "{'notes': ['fresh']}"]


def test_no_cell_above_the_answers_gives_an_answer_away():
    before, _ = exercises_and_answers()
    said = "\n".join(text(cell) for cell in before)
    for answer in ANSWERS:
        assert answer not in said
    assert 'append(["a"], "' not in said  # (section 1 once showed exercise 2's case)
    assert "    if old is MISSING:\n        return new" not in said  # exercise 1's answer


def test_the_prediction_exercises_are_asked_by_the_quiz_and_the_lesson_uses_it():
    before, _ = exercises_and_answers()
    code = [text(c) for c in before if c["cell_type"] == "code"]
    assert any(source.startswith("quiz = run.quiz()") for source in code)
    quizzes = [s for s in code if ".quiz(" in s and s.rstrip().endswith(("quiz_2", "quiz_3"))]
    assert len(quizzes) == 2  # exercises 2 and 3: the learner predicts, the widget checks


def test_exercise_1_makes_the_engine_call_the_reducer_with_missing():
    before, _ = exercises_and_answers()
    scaffold = next(text(c) for c in before if '@register_reducer("longest")' in text(c))
    assert "...  # your code" in scaffold
    assert "str | None" in scaffold  # a type with no empty value: the first merge gets MISSING
    assert "effect_list[0].before is MISSING" in scaffold  # asserted when the notebook runs


def test_the_lesson_opens_with_the_idea_and_sends_the_advanced_parts_on():
    first, imports = cells(LESSON)[:2]
    assert first["cell_type"] == "markdown" and "02b_reducers_advanced.ipynb" in text(first)
    assert "use_message_kind" not in text(imports) and "set_option" not in text(imports)
    assert (NOTEBOOKS / "02b_reducers_advanced.ipynb").exists()
    assert sorted(p.name for p in NOTEBOOKS.glob("02*.ipynb")) == [
        "02_reducer_semantics.ipynb",
        "02b_reducers_advanced.ipynb",
    ]


def test_the_notebooks_command_hands_out_the_exercises_without_the_answers(tmp_path):
    said = "\n".join(text(cell) for cell in cells(LESSON))
    command = re.search(r"```\n(jupyter nbconvert .*?)\n```", said, re.S)
    assert command is not None
    args = shlex.split(command[1].replace("\\\n", " "))
    if shutil.which("jupyter") is None and not Path(sys.executable).with_name("jupyter").exists():
        pytest.skip("jupyter nbconvert is not installed")
    jupyter = str(Path(sys.executable).with_name("jupyter"))
    args = [jupyter, *args[1:]]
    args[-1] = str(LESSON)
    args[args.index("--output") + 1] = str(tmp_path / "exercises.ipynb")
    subprocess.run(args, check=True, capture_output=True)
    handed_out = cells(tmp_path / "exercises.ipynb")
    _, answers = exercises_and_answers()
    assert len(handed_out) == len(cells(LESSON)) - len(answers)
    assert not any(is_answer(cell) for cell in handed_out)
    assert not any(text(cell).startswith("## Answers") for cell in handed_out)
    assert "...  # your code" in "".join(text(c) for c in handed_out)


DEBUG = NOTEBOOKS / "04_debug_a_branch.ipynb"


def first_cell(found: list[dict], needle: str, kind: str = "code") -> int:
    return next(i for i, c in enumerate(found) if c["cell_type"] == kind and needle in text(c))


def test_04_shows_each_finding_before_it_asserts_it():
    """Symptom, tool, cause: a cell checks what a table found only after the table is shown,
    never above it in the cell that shows it."""
    found = cells(DEBUG)
    code = [c for c in found if c["cell_type"] == "code"]
    for cell in code:  # a cell that ends showing a table asserts nothing the table finds
        lines = text(cell).rstrip().splitlines()
        shown = lines[-1] if lines else ""
        finders = ("writers", "order", "branches", "seen_by_suspect", "picture", "why")
        if shown in finders or shown.startswith(
            ("run.effects.query", "jp_run.effects", "broken.steps[")
        ):
            assert not any(line.startswith("assert") for line in lines), text(cell)
    table = first_cell(found, "run.effects.query(\"field == 'quotes'\")[")
    cause = first_cell(found, '"jp_convert": {"us": 93.8}')
    said = first_cell(found, "There it is", "markdown")
    assert table < said < cause
    typo_found = first_cell(found, "print(sorted(FOREIGN))")
    assert typo_found < first_cell(found, '"JPY" not in FOREIGN')


def test_04_keeps_its_bugs_out_of_plain_sight():
    found = cells(DEBUG)
    first = text(found[first_cell(found, "def jp_convert")])
    converters = [f"def {region}_convert(state):" for region in ("eu", "us", "jp")]
    assert all(name in first for name in converters)  # one of three look-alikes, not singled out
    jp = first[first.index("def jp_convert") :].split("\n\n")[0]
    assert "#" not in jp  # no comment pointing at it
    part_9 = text(found[first_cell(found, "def build_price")])
    assert "JYP" not in part_9 and "FOREIGN = set(" in part_9  # the typo is found, not shown


def test_10_shows_the_inspector_its_text_promises():
    found = cells(NOTEBOOKS / "10_functional_api.ipynb")
    said = first_cell(found, "steps through it in the inspector", "markdown")
    shown = found[said + 1]
    assert shown["cell_type"] == "code" and "resumed.inspect()" in text(shown)
    assert text(shown).rstrip().endswith("inspector")  # displayed, not only made


def test_01_saves_its_shared_page_where_a_browser_user_can_open_it():
    """Not a server's temp folder a browser cannot reach: next to the notebook, linked."""
    found = cells(NOTEBOOKS / "01_quickstart.ipynb")
    saving = text(found[first_cell(found, "run.save_html(")])
    assert re.search(r"run\.save_html\(\"[\w.-]+\.html\"\)", saving)  # a relative path
    assert "tempfile" not in saving and "gettempdir" not in saving and "/tmp" not in saving
    assert saving.rstrip().endswith("FileLink(str(shared))")  # a link the browser opens


def test_after_run_all_no_output_above_the_answers_gives_one_away():
    """Run All, as a learner might first: every output above the answers section (the
    quizzes' saved forms included) asks, and none shows an exercise's answer."""
    nbformat = pytest.importorskip("nbformat")
    from nbconvert.preprocessors import ExecutePreprocessor

    notebook = nbformat.read(LESSON, as_version=4)
    ExecutePreprocessor(timeout=300).preprocess(notebook, {"metadata": {"path": str(NOTEBOOKS)}})
    heading = next(i for i, c in enumerate(notebook.cells) if c.source.startswith("## Answers"))
    shown = json.dumps([c.get("outputs", []) for c in notebook.cells[:heading]])
    quizzes = shown.count("nbgraph-quiz-snapshot")
    assert quizzes == 3  # section 5's and exercises 2 and 3: each shows its question
    for answer in ("['a', 'web']", "{'notes': ['fresh']}", "after: ['fresh']"):
        assert answer not in shown and answer.replace("'", "&#x27;") not in shown
    assert "exercise 1: not yet" in shown  # the scaffold runs, and says so
