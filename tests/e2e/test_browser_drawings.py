"""Stand-alone drawings (`app.draw()`, `run.draw()`, `run.draw_tree()`) in the real lessons
02, 03, 04 and 06, seen in JupyterLab 4 and Notebook 7, light and dark, 1,400 and 800 px wide
(`tests/support/browser.py`): no drawing is wider than its output, labels stay >= 10 px (past
that floor the drawing's own box scrolls), the "full size" control shows the drawing at its
own size, and the state tree's legend is one line under it. Trusted (the notebook signed, as
one a user ran) and untrusted (the HTML sanitized: no style sheet), and as static HTML
(nbconvert, as the docs site shows the lessons), offline.

The notebooks are executed once by nbconvert; each front-end opens the saved outputs, which
is what it shows after a run, without running four lessons per theme and width.
With `NBGRAPH_UPDATE_SCREENSHOT=1`, JupyterLab's light screenshot of 03's tree goes to
`docs/drawing-fitted.png`.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.support.browser import (
    LAUNCH_ARGS,
    THEMED,
    browser_or_skip,
    execute_notebook,
    open_offline,
    real_errors,
    serve,
    use_theme,
)

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ("02_reducer_semantics", "03_parallel_merges", "04_debug_a_branch", "06_seed_workflows")
WIDTHS = (1400, 800)
CONFIGS = [(*pair, width, "trusted") for pair in THEMED for width in WIDTHS]
CONFIGS += [("jupyterlab", "light", 800, "untrusted"), ("notebook7", "dark", 1400, "untrusted")]

MEASURE = """
async () => {
    const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    const found = [];
    for (const fit of document.querySelectorAll('.nbgraph-fit')) {
        fit.scrollIntoView({block: 'center'});
        await frame();
        const img = fit.querySelector('.nbgraph-fitted-picture');
        await img.decode().catch(() => {});
        const area = fit.closest('.jp-OutputArea-output').getBoundingClientRect();
        const box = fit.querySelector('.nbgraph-fitted');
        const legend = fit.querySelector('.nbgraph-legend');
        const shown = img.getBoundingClientRect();
        const svg = atob(img.src.split(',')[1]);
        const view = parseFloat(svg.match(/viewBox="[\\d.+-]+[ ,]+[\\d.+-]+[ ,]+([\\d.]+)/)[1]);
        const scale = svg.match(/class="graph" transform="scale\\(([\\d.]+)/);
        const fonts = [...svg.matchAll(/font-size="([\\d.]+)"/g)].map(m => parseFloat(m[1]));
        const perUnit = (scale ? parseFloat(scale[1]) : 1) / view;
        found.push({
            area_right: area.right, area_width: area.width,
            box_right: box.getBoundingClientRect().right,
            img_right: shown.right, img_width: shown.width, natural: img.naturalWidth,
            scrolls: box.scrollWidth > box.clientWidth + 1,
            label: Math.min(...fonts) * shown.width * perUnit,
            natural_label: Math.min(...fonts) * img.naturalWidth * perUnit,
            full_size: fit.querySelector('details.nbgraph-full-size') !== null,
            legend: legend ? legend.innerText : null,
            legend_cut: legend ? legend.scrollWidth > legend.clientWidth + 1 : false,
            legend_right: legend ? legend.getBoundingClientRect().right : 0,
            in_picture_legend: svg.includes('cluster_legend'),
        });
    }
    return found;
}
"""

FULL_SIZE = """
fit => {
    const area = fit.closest('.jp-OutputArea-output').getBoundingClientRect();
    const full = fit.querySelector('.nbgraph-full-picture');
    const box = full.parentElement;
    return {
        area_right: area.right,
        full_width: full.getBoundingClientRect().width, natural: full.naturalWidth,
        box_right: box.getBoundingClientRect().right, box_width: box.clientWidth,
        scrolls: box.scrollWidth > box.clientWidth + 1,
        full_shown: full.checkVisibility(),
        fitted_shown: fit.querySelector('.nbgraph-fitted').checkVisibility(),
    };
}
"""


def _code(name: str) -> list[str]:
    cells = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def _fitted_outputs(path: Path) -> int:
    """How many of a saved notebook's outputs are fitted drawings."""
    notebook = json.loads(path.read_text())
    htmls = [
        "".join(o.get("data", {}).get("text/html", ""))
        for c in notebook["cells"]
        for o in c.get("outputs", [])
    ]
    return sum("nbgraph-fit" in h for h in htmls)


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> dict[str, Path]:
    """The four lessons' code, executed once by nbconvert, saved with their outputs."""
    folder = tmp_path_factory.mktemp("lessons")
    return {name: execute_notebook(folder, _code(name), f"{name}.ipynb") for name in NOTEBOOKS}


@pytest.fixture(params=CONFIGS, ids=lambda c: "-".join(map(str, c)))
def config(request):
    return request.param


def _check_drawings(name: str, drawings: list[dict], width: int) -> None:
    for index, d in enumerate(drawings):
        where = (name, index, d)
        assert d["box_right"] <= d["area_right"] + 1, where  # never wider than its output
        assert d["label"] >= 9.9, where  # labels readable at the fitted size
        if d["img_right"] > d["area_right"] + 1:  # past the floor: its own box scrolls
            assert d["scrolls"] and d["label"] <= 10.6, where
        else:  # shrunk only as much as the output needs
            assert d["img_width"] >= min(d["natural"], d["area_width"]) - 24, where
        assert not d["in_picture_legend"], where
        if d["legend"] is not None:
            assert d["legend"].startswith("edges:") and not d["legend_cut"], where
            assert d["legend_right"] <= d["area_right"] + 1, where
    trees = [d for d in drawings if d["legend"] is not None]
    assert trees, f"{name}: its draw_tree() output has a legend line"
    if width == 1400 and name[:2] in ("02", "03"):  # the numbered merge, the reset hexagon:
        assert not any(d["scrolls"] for d in trees), (name, trees)  # whole, unscrolled


def _full_size(page, trusted: bool) -> tuple[dict, dict]:
    """Open the widest drawing's "full size" and close it again: what each showed."""
    fits = page.locator(".nbgraph-fit:has(details.nbgraph-full-size)")
    widths = fits.evaluate_all(
        "fs => fs.map(f => f.querySelector('.nbgraph-fitted-picture').naturalWidth)"
    )
    fit = fits.nth(widths.index(max(widths)))
    fit.scroll_into_view_if_needed()
    fit.locator("summary").click()
    page.wait_for_timeout(300)
    opened = fit.evaluate(FULL_SIZE)
    fit.locator("summary").click()
    page.wait_for_timeout(300)
    closed = fit.evaluate(FULL_SIZE)
    if trusted:  # (the style sheet that hides the fitted copy while the full size is open)
        assert not opened["fitted_shown"], opened
    return opened, closed


def test_drawings_fit_their_output_in_each_lesson(config, executed, tmp_path, monkeypatch):
    from playwright.sync_api import sync_playwright

    frontend, theme, width, trust = config
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))  # (the server's notary)
    (tmp_path / "data").mkdir()
    # (imported here: importing nbformat.sign changes how sqlite3 binds datetimes for the
    # whole process, and collecting this file must not: tests.support.harness)
    from nbformat.sign import NotebookNotary

    notary = NotebookNotary(data_dir=str(tmp_path / "data"))
    errors: list[str] = []
    results: dict[str, list[dict]] = {}
    with serve(frontend, tmp_path, {}) as served:
        use_theme(tmp_path, theme)
        for path in executed.values():
            notebook = nbformat.read(path, as_version=4)
            if trust == "trusted":  # as a notebook the user ran: its HTML not sanitized
                notary.sign(notebook)
            nbformat.write(notebook, tmp_path / "root" / path.name)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=browser_or_skip(), args=LAUNCH_ARGS
            )
            page = browser.new_page(viewport={"width": width, "height": 1000})
            page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
            try:
                for name, path in executed.items():
                    url = served.url(path.name)
                    page.goto(url, timeout=90_000)
                    expected = _fitted_outputs(path)
                    page.wait_for_function(
                        "n => document.querySelectorAll('.nbgraph-fit').length >= n",
                        arg=expected,
                        timeout=90_000,
                    )
                    cell = page.locator(".jp-Cell").first
                    trusted = page.evaluate(
                        "window.jupyterapp.shell.currentWidget.content.model.cells.get(0).trusted"
                    )
                    assert trusted == (trust == "trusted"), (name, trusted)
                    results[name] = page.evaluate(MEASURE)
                    assert len(results[name]) == expected, name
                    results[name + " full size"] = list(_full_size(page, trust == "trusted"))
                    if name.startswith("03") and frontend == "jupyterlab" and width == 1400:
                        tree = page.locator(".nbgraph-fit:has(.nbgraph-legend)").first
                        tree.scroll_into_view_if_needed()
                        tree.screenshot(path=str(tmp_path / f"tree-{theme}.png"))
                    assert cell.count() > 0
            except Exception:
                page.screenshot(path=str(tmp_path / "failed.png"))
                raise
            finally:
                browser.close()
    assert not real_errors(errors, served.url("x")), errors
    for name in NOTEBOOKS:
        _check_drawings(name, results[name], width)
        opened, closed = results[name + " full size"]
        assert abs(opened["full_width"] - opened["natural"]) <= 1.5, (name, opened)
        assert opened["box_right"] <= opened["area_right"] + 1, (name, opened)
        assert opened["scrolls"] == (opened["natural"] > opened["box_width"] + 1), opened
        assert opened["full_shown"] and not closed["full_shown"], (name, opened, closed)
        assert closed["fitted_shown"], (name, closed)
    shot = tmp_path / "tree-light.png"
    if os.environ.get("NBGRAPH_UPDATE_SCREENSHOT") and shot.exists() and trust == "trusted":
        shutil.copy(shot, ROOT / "docs" / "drawing-fitted.png")


@pytest.mark.parametrize("width", WIDTHS)
def test_drawings_fit_in_static_html_offline(width, executed, tmp_path):
    """nbconvert's HTML of 03 (as the docs site shows the lessons), opened from disk with the
    network off: the drawings fit, and "full size" opens with no script."""
    from playwright.sync_api import sync_playwright

    lesson = executed["03_parallel_merges"]
    page_path = tmp_path / "lesson.html"
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--output",
               str(page_path), str(lesson)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser, page = open_offline(playwright, page_path.as_uri(), errors, requests)
        try:
            page.set_viewport_size({"width": width, "height": 1000})
            page.wait_for_timeout(500)
            drawings = page.evaluate(MEASURE)
            opened, closed = _full_size(page, trusted=True)
        finally:
            browser.close()
    assert len(drawings) == _fitted_outputs(lesson)
    _check_drawings("03 as HTML", drawings, width)
    assert abs(opened["full_width"] - opened["natural"]) <= 1.5, opened
    assert opened["full_shown"] and not closed["full_shown"] and closed["fitted_shown"]
