"""The teaching notebooks keep their promises to a teacher: each exercise has a scaffold cell
and an answer cell right after it, the answers open collapsed, and the command the notebook
gives removes them (the notebooks themselves run under `pytest --nbmake`)."""

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


def test_each_answer_opens_collapsed_tagged_and_follows_its_scaffold():
    found = cells(LESSON)
    answers = [i for i, cell in enumerate(found) if is_answer(cell)]
    assert len(answers) == 3
    for i in answers:
        answer, scaffold = found[i], found[i - 1]
        assert answer["cell_type"] == "code" and "hide-input" in answer["metadata"]["tags"]
        assert answer["metadata"]["jupyter"] == {"source_hidden": True, "outputs_hidden": True}
        assert scaffold["cell_type"] == "code" and not is_answer(scaffold)
        assert "..." in text(scaffold) and "check(" in text(scaffold)  # left for the student
        assert "assert check(" in text(answer)  # the answer is checked when the notebook runs


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
    assert len(handed_out) == len(cells(LESSON)) - 3
    assert not any(is_answer(cell) for cell in handed_out)
    scaffolds = [c for c in handed_out if c["cell_type"] == "code" and "= ..." in text(c)]
    assert len(scaffolds) == 2  # (and exercise 1's function body left as `...`)
    assert "...  # your code" in "".join(text(c) for c in handed_out)
