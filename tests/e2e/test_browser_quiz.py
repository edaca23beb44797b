"""`run.quiz()` in a real browser: lesson 02's code (its answers section left out, as a
teacher hands it out) in JupyterLab 4 and Notebook 7, driven by Debian's Chromium through
Playwright (`tests/support/browser.py`). Exercise 2's quiz: the question shown without its
answer, a wrong prediction typed and checked, then the right one, the fold spelled out."""

import json
from pathlib import Path

import pytest

from tests.support.browser import FRONTENDS, open_notebook, real_errors, serve

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "notebooks" / "02_reducer_semantics.ipynb"
SCREENSHOT = ROOT / "docs" / "quiz.png"


def lesson_code() -> list[str]:
    """02's code cells above its answers section, in order."""
    found = []
    for cell in json.loads(LESSON.read_text())["cells"]:
        if "answer" in cell["metadata"].get("tags", []):
            break
        if cell["cell_type"] == "code":
            found.append("".join(cell["source"]))
    return found


@pytest.fixture(params=sorted(FRONTENDS))
def served(request, tmp_path):
    with serve(request.param, tmp_path, {"lesson.ipynb": lesson_code()}) as server:
        yield request.param, server.url("lesson.ipynb")


def _type(page, locator, text: str) -> None:
    """Fill the quiz's box as a person does before reaching for "check"."""
    locator.fill(text)
    locator.blur()
    page.wait_for_timeout(500)


def test_the_quiz_asks_checks_a_prediction_and_spells_out_the_fold(served, tmp_path):
    from playwright.sync_api import sync_playwright

    frontend, url = served
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_notebook(playwright, url, errors, height=1400)
        try:
            page.locator(".nbgraph-quiz").nth(2).wait_for(timeout=180_000)  # (all three)
            quiz = page.locator(".nbgraph-quiz").nth(1)  # exercise 2
            quiz.scroll_into_view_if_needed()
            question = quiz.locator(".nbgraph-quiz-question").inner_text()
            box = quiz.locator("input[type='text']")
            _type(page, box, "['a', 'w', 'e', 'b']")
            quiz.get_by_role("button", name="check").click()
            feedback = quiz.locator(".nbgraph-quiz-feedback")
            feedback.filter(has_text="Not quite").wait_for(timeout=30_000)
            wrong = feedback.inner_text()
            _type(page, box, "a, web")
            quiz.get_by_role("button", name="check").click()
            feedback.filter(has_text="Could not read").wait_for(timeout=30_000)
            unreadable = feedback.inner_text()
            _type(page, box, "['a', 'web']")
            quiz.get_by_role("button", name="check").click()
            feedback.filter(has_text="Right!").wait_for(timeout=30_000)
            right = feedback.inner_text()
            score = quiz.inner_text()
            quiz.screenshot(path=str(tmp_path / "quiz.png"))
        except Exception:
            page.screenshot(path=str(tmp_path / "failed.png"), full_page=True)  # (to look at)
            raise
        finally:
            browser.close()
    assert "Merge 1 of 1" in question and "before: ['a']" in question, question
    assert "'web'" in question and "from node 'web'" in question and "after: ?" in question
    assert "['a', 'web']" not in question  # asked, not given
    assert "Not quite." in wrong and "append(['a'], 'web') -> ['a', 'web']" in wrong, wrong
    assert "Could not read 'a, web'" in unreadable, unreadable
    assert "Right!" in right and "after: ['a', 'web']" in right, right
    assert "Score: 0 right of 1 checked" in score, score  # the first check counted
    assert not real_errors(errors, url), errors
    if frontend == "jupyterlab":  # the picture in the docs
        SCREENSHOT.write_bytes((tmp_path / "quiz.png").read_bytes())
