"""Save, close and reopen notebooks 04 and 05, twenty times each, in JupyterLab 4 and
Notebook 7: never "Error displaying widget: model not found", never a widget error in the
console, and every widget an output shows is in the widget state saved in the file.

The cycle is the one users go through: run every cell once, then save, close the page and
reopen it on the same server, twenty times on the kernel that made the widgets. Then the
kernel is shut down and four more cycles reopen on kernels that never made them: the
widgets come from the state saved in the file, and that state must survive the next save
(it did not: the front-end saves only widgets with a live kernel, so the second reopen
showed "model not found"; `views/static/clickable_graph.js`, `keepShownWidgetState`). On
those kernels the front-end's own race (two restores at once, docs/inspector.md) may show
"model not found" once; the next reopen must then draw everything from the file. The
cells run once: re-running them is not what broke, and the cycles stay cheap (each reopen
waits only until every widget output is drawn).
"""

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.support.browser import (
    FRONTENDS,
    LAUNCH_ARGS,
    browser_or_skip,
    open_page,
    real_errors,
    serve,
)

pytestmark = pytest.mark.browser

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAMES = ["04_debug_a_branch.ipynb", "05_time_travel.ipynb"]
SAME_KERNEL = 20
"""Cycles that reopen on the kernel that made the widgets (the issue's same-server reopen)."""
NEW_KERNELS = 4
"""Cycles after those that reopen on kernels that never made the widgets."""
CYCLES = SAME_KERNEL + NEW_KERNELS

VIEW = "application/vnd.jupyter.widget-view+json"

RAN = """() => { const nb = window.jupyterapp.shell.currentWidget;
  const kernel = nb && nb.sessionContext.session && nb.sessionContext.session.kernel;
  return Boolean(kernel) && kernel.status === 'idle' && nb.content.widgets.every(
    c => c.model.type !== 'code'
      || (c.model.executionCount !== null && c.model.executionState !== 'running'));
}"""
"""Every code cell ran (Run All's command settles only then; it is not awaited)."""

WIDGETS = """() => {
  const outputs = [...document.querySelectorAll('.jp-OutputArea-output')];
  const text = o => o.textContent;
  return {
    missing: outputs.filter(o => text(o).includes('model not found')).length,
    loading: outputs.filter(o => text(o).trim() === 'Loading widget...').length,
    inspectors: document.querySelectorAll('.nbgraph-inspector').length,
  };
}"""
"""What the page's widget outputs show (`textContent`: cells off screen count too)."""

SETTLED = f"""n => {{ const w = ({WIDGETS})();
  return w.missing > 0 || (w.loading === 0 && w.inspectors >= n); }}"""


def _open(browser, url: str, errors: list[str]):
    return open_page(browser, url, errors, height=1200)


def _save(page) -> None:
    page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.context.save(); }")


def _unsaved_views(path: Path) -> list[tuple[int, str]]:
    """The widget outputs of the saved notebook whose model is not in its saved state."""
    notebook = json.loads(path.read_text())
    widgets = notebook["metadata"].get("widgets", {})
    state = widgets.get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    views = [
        (index, output["data"][VIEW]["model_id"])
        for index, cell in enumerate(notebook["cells"])
        for output in cell.get("outputs", [])
        if VIEW in output.get("data", {})
    ]
    return [(index, model) for index, model in views if model not in state]


def _widget_errors(errors: list[str], url: str) -> list[str]:
    words = ("widget", "model", "comm")
    return [e for e in real_errors(errors, url) if any(w in e.lower() for w in words)]


def _cycles(browser, url: str, saved: Path) -> list[dict]:
    """Run every cell, then `CYCLES` times save, close, reopen; what each reopen showed."""
    errors: list[str] = []
    page = _open(browser, url, errors)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_timeout(1000)
    page.wait_for_function(RAN, timeout=300_000, polling=500)
    page.wait_for_function(SETTLED, arg=1, timeout=60_000)
    shown = page.evaluate(WIDGETS)["inspectors"]
    seen = []
    for cycle in range(CYCLES):
        _save(page)
        unsaved = _unsaved_views(saved)
        if cycle == SAME_KERNEL:  # from now on, kernels that never made these widgets
            page.evaluate(
                "async () => { await window.jupyterapp.shell.currentWidget"
                ".sessionContext.shutdown(); }"
            )
        page.close()
        errors.clear()
        page = _open(browser, url, errors)
        page.wait_for_function(SETTLED, arg=shown, timeout=90_000, polling=250)
        page.wait_for_timeout(300)  # (an error logged just after the last output drew)
        raced = 0
        if cycle >= SAME_KERNEL and page.evaluate(WIDGETS)["missing"]:
            # The front-end's own race on a kernel that never made the widgets (its two
            # restores at once; docs/inspector.md): what the file saved must still draw on
            # the next reopen. A wiped state (the bug fixed here) shows it again.
            raced = 1
            page.close()
            errors.clear()
            page = _open(browser, url, errors)
            page.wait_for_function(SETTLED, arg=shown, timeout=90_000, polling=250)
            page.wait_for_timeout(300)
        seen.append(
            {
                "raced": raced,
                "cycle": cycle,
                "expected": shown,
                **page.evaluate(WIDGETS),
                "unsaved": unsaved,
                "errors": _widget_errors(errors, url),
            }
        )
    _save(page)
    page.close()
    return seen


@pytest.mark.parametrize("frontend", sorted(FRONTENDS))
def test_twenty_reopens_never_show_model_not_found(frontend, tmp_path):
    from playwright.sync_api import sync_playwright

    report = {}
    with serve(frontend, tmp_path, {}) as served:
        root = tmp_path / "root"
        for name in NAMES:
            shutil.copy(NOTEBOOKS / name, root / name)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=browser_or_skip(), args=LAUNCH_ARGS
            )
            try:
                for name in NAMES:
                    started = time.monotonic()
                    report[name] = _cycles(browser, served.url(name), root / name)
                    took = time.monotonic() - started
                    print(f"{frontend} {name}: {CYCLES} cycles in {took:.0f} s")
            finally:
                browser.close()
    for name, seen in report.items():
        assert len(seen) == CYCLES
        assert seen[0]["expected"] >= 1, seen  # (each notebook shows inspectors)
        bad = [
            s
            for s in seen
            if s["missing"] or s["unsaved"] or s["errors"] or s["loading"]
            or s["inspectors"] < s["expected"]
        ]  # fmt: skip
        assert not bad, f"{name}: " + "\n".join(map(str, bad))
        assert sum(s["raced"] for s in seen) <= 1, seen  # the race is rare, not the rule
