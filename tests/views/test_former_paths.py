"""The views' modules before they were foldered: `nbgraph.views.X` still imports, as the
module `nbgraph.views.<folder>.X` itself (`nbgraph/views/__init__.py`)."""

import importlib
import subprocess
import sys

import pytest

import nbgraph.views
from nbgraph.views import former_paths


@pytest.mark.parametrize(
    "name", ["display", "render", "step_list", "inspector_widget", "quiz_fold"]
)
def test_a_former_path_is_the_same_module(name):
    former = importlib.import_module(f"nbgraph.views.{name}")
    assert former is importlib.import_module(former_paths()[name])
    assert former.__name__ == former.__spec__.name == former_paths()[name]


def test_every_module_of_the_folders_has_its_former_path():
    assert len(former_paths()) >= 35
    assert former_paths()["display"] == "nbgraph.views.drawings.display"
    assert not set(former_paths()) & set(nbgraph.views.FOLDERS)  # no name is a folder's


def test_a_name_that_never_was_is_not_found():
    with pytest.raises(ModuleNotFoundError, match=r"nbgraph\.views\.nothing"):
        importlib.import_module("nbgraph.views.nothing")


def test_a_fresh_process_imports_a_former_path():
    code = "from nbgraph.views.display import styled; print(styled.__module__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "nbgraph.views.drawings.display"


def test_a_module_now_a_folder_still_gives_its_names():
    from nbgraph.views.inspector import inspect
    from nbgraph.views.quiz import Quiz

    assert inspect.__module__ == "nbgraph.views.inspector.inspector"
    assert Quiz.__module__ == "nbgraph.views.quiz.quiz"
    with pytest.raises(AttributeError, match="nothing"):
        nbgraph.views.inspector.nothing  # noqa: B018
