"""The README's Python examples run as written, and show what they claim."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_quick_start_runs_and_its_commented_result_is_true():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no Python example"
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(blocks[0], "README.md", "exec"), namespace)
    claimed = re.search(r"app\.invoke\((.*)\)\n# (\{.*\})", blocks[0])
    assert claimed, "the quick start should show invoke's result in a comment"
    assert namespace["app"].invoke(eval(claimed.group(1))) == eval(claimed.group(2))


def test_every_readme_example_runs_and_its_asserts_hold():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2
    for number, block in enumerate(blocks[1:], start=2):
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(block, f"README.md example {number}", "exec"), {})


def test_readme_gives_the_two_commands_ci_runs():
    text = README.read_text()
    assert "bash dev.sh lab" in text and "bash dev.sh test" in text
    ci = (README.parent / ".ci" / "run").read_text()
    assert "dev.sh test" in ci


def test_every_picture_and_link_in_the_readme_is_in_the_repository():
    text = README.read_text()
    targets = re.findall(r"\]\(((?:docs|notebooks|benchmarks)/[^)#\s]+)\)", text)
    assert "docs/run.svg" in targets and "docs/inspector.png" in targets
    for target in targets:
        assert (README.parent / target).exists(), target
    svg = (README.parent / "docs" / "run.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for node in ("START", "END", "a", "b", "c"):  # the quick start's run, drawn
        assert f">{node}" in svg, node


def test_the_fifteen_lines_are_fifteen_lines_of_code():
    """The heading's count: the quick start's lines, blank lines and comment lines aside."""
    text = README.read_text()
    assert "## Fifteen lines to paste into a notebook" in text
    block = re.findall(r"```python\n(.*?)```", text.split("## Fifteen lines", 1)[1], flags=re.S)[0]
    code = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert len(code) == 15, code


def test_the_pictured_run_is_the_quick_start():
    """docs/run.svg is drawn by docs/pictures.py from the README's quick start."""
    import importlib.util

    script = README.parent / "docs" / "pictures.py"
    spec = importlib.util.spec_from_file_location("pictures", script)
    pictures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pictures)
    quick = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)[0]
    claimed = re.search(r"app\.invoke\((.*)\)\n# (\{.*\})", quick)
    run = pictures.quick_start_run()
    assert run.output == eval(claimed.group(2))
    assert set(run.steps["node"]) >= {"a", "b", "c"}


def test_the_notebooks_table_names_the_comparison_view_notebook_04_uses():
    """The README says notebook 04 steps its buggy and fixed runs in `run.compare_view`:
    the notebook does, and checks what the view shows (it runs under `pytest --nbmake`)."""
    import nbformat

    row = next(line for line in README.read_text().splitlines() if "04_debug_a_branch" in line)
    assert "`run.compare_view(fixed)`" in row
    notebook = nbformat.read(README.parent / "notebooks" / "04_debug_a_branch.ipynb", 4)
    sources = [c.source for c in notebook.cells]
    shown = next(i for i, s in enumerate(sources) if "run.compare_view(fixed" in s)
    assert sources[shown].rstrip().endswith("compared")  # displayed, then checked below
    assert "assert compared.step == 3" in sources[shown + 1]
    assert "compared.fields.value" in sources[shown + 1]
