"""The inspector in a real browser: JupyterLab 4 and Notebook 7 on 127.0.0.1, driven by
Debian's Chromium through Playwright."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
DOCS_SCREENSHOT = Path(__file__).resolve().parents[1] / "docs" / "inspector.png"

NOTEBOOK_CELLS = [
    """
import operator
from typing import Annotated, TypedDict
from nbgraph import END, START, StateGraph

class State(TypedDict):
    topic: str
    notes: Annotated[list, operator.add]
    verdict: str

def note(name):
    return lambda state: {"notes": [f"{name} on {state['topic']}"]}

app = (
    StateGraph(State)
    .add_node("plan", lambda s: {"verdict": "planning"})
    .add_node("search", note("search"))
    .add_node("read", note("read"))
    .add_node("write", lambda s: {"verdict": f"{len(s['notes'])} notes"})
    .add_edge(START, "plan")
    .add_edge("plan", "search")
    .add_edge("plan", "read")
    .add_edge(["search", "read"], "write")
    .add_edge("write", END)
    .compile()
)
run = app.run({"topic": "<b>the sky</b>"})
""",
    "run.inspect()",
]


def _browser_or_skip() -> str:
    if Path(CHROMIUM).exists():
        return CHROMIUM
    if os.environ.get("CI"):
        pytest.fail("CI must have Chromium at /usr/bin/chromium (bash dev.sh installs it).")
    pytest.skip("Debian's chromium is not installed (sudo apt-get install chromium)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


FRONTENDS = {
    # module to run, the notebook's URL path, options only that front-end knows
    "jupyterlab": ("jupyterlab", "lab/tree", ["--LabApp.news_url=None",
                   "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]),
    "notebook7": ("notebook", "notebooks", []),
}  # fmt: skip


@pytest.fixture(params=sorted(FRONTENDS))
def jupyterlab(request, tmp_path):
    """A JupyterLab 4 or Notebook 7 server on 127.0.0.1 with private config, settings and
    runtime folders; yields the URL of a notebook that displays `run.inspect()`."""
    module, path, extra = FRONTENDS[request.param]
    root, port, token = tmp_path / "root", _free_port(), uuid.uuid4().hex
    root.mkdir()
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c.strip()) for c in NOTEBOOK_CELLS],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    nbformat.write(notebook, root / "inspect.ipynb")
    if module == "jupyterlab":  # JupyterLab's own settings: start the kernel, fetch no news
        settings = tmp_path / "settings" / "@jupyterlab"
        (settings / "notebook-extension").mkdir(parents=True)
        (settings / "apputils-extension").mkdir(parents=True)
        (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
            json.dumps({"autoStartDefaultKernel": True})
        )
        (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false"})
        )
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
    }
    command = [
        sys.executable, "-m", module, "--no-browser", "--ip=127.0.0.1",
        f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}", "--expose-app-in-browser", "--allow-root", *extra,
    ]  # fmt: skip
    log = (tmp_path / "jupyterlab.log").open("w")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        f"{module} did not start:\n{(tmp_path / 'jupyterlab.log').read_text()}"
                    )
                time.sleep(0.3)
        reset = "&reset" if module == "jupyterlab" else ""  # a fresh JupyterLab workspace
        yield f"{base}/{path}/inspect.ipynb?token={token}{reset}"
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the server and the kernels it started
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()


HIGHLIGHTED = """
() => [...document.querySelectorAll('.nbgraph-inspector svg g.node')]
    .filter(g => [...g.querySelectorAll('path, polygon')]
        .some(shape => shape.getAttribute('stroke') === '#b45f06'))
    .map(g => g.querySelector('text').textContent)
    .sort()
"""


def test_the_inspector_renders_and_steps_in_the_browser(jupyterlab, tmp_path):
    from playwright.sync_api import sync_playwright

    executable = _browser_or_skip()
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--disable-background-networking", "--no-first-run"],
        )  # fmt: skip
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("pageerror", lambda error: errors.append(f"page error: {error} {error.stack}"))
            page.on(
                "console",
                lambda message: (
                    errors.append(f"console: {message.text}") if message.type == "error" else None
                ),
            )
            page.goto(jupyterlab, timeout=90_000)
            page.wait_for_function(
                "window.jupyterapp && window.jupyterapp.shell.currentWidget "
                "&& window.jupyterapp.shell.currentWidget.sessionContext",
                timeout=90_000,
            )
            page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.ready")
            page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
            inspector = page.locator(".nbgraph-inspector")
            inspector.wait_for(timeout=90_000)
            label = inspector.locator(".widget-html-content").first
            page.wait_for_function(
                "document.querySelector('.nbgraph-inspector svg g.node') !== null", timeout=30_000
            )
            first_label, first_highlight = label.inner_text(), page.evaluate(HIGHLIGHTED)
            next_button = inspector.get_by_role("button", name="next ▶")
            next_button.click()
            page.wait_for_function(
                "el => !el.innerText.includes('step 1 ')",
                arg=label.element_handle(),
                timeout=15_000,
            )
            next_button.click()
            page.wait_for_function(
                "el => el.innerText.includes('step 3')", arg=label.element_handle(), timeout=15_000
            )
            # the panels update one after another: wait for the picture to follow the label
            page.wait_for_function(f"({HIGHLIGHTED})().includes('write')", timeout=15_000)
            third_label, third_highlight = label.inner_text(), page.evaluate(HIGHLIGHTED)
            screenshot = tmp_path / "inspector.png"
            inspector.screenshot(path=str(screenshot))
            if os.environ.get("NBGRAPH_UPDATE_SCREENSHOT") and "/lab/" in jupyterlab:
                DOCS_SCREENSHOT.parent.mkdir(exist_ok=True)
                shutil.copy(screenshot, DOCS_SCREENSHOT)
            assert inspector.locator(".widget-slider").count() >= 1  # rendered, not its text form
            assert "Inspector(" not in page.content() and "VBox(" not in page.content()
        finally:
            browser.close()
    assert "step 1" in first_label and "plan" in first_label
    assert "step 3" in third_label and "write" in third_label
    assert first_highlight == ["plan"] and "write" in third_highlight
    assert first_highlight != third_highlight
    assert screenshot.stat().st_size > 10_000
    # Notebook 7.6 itself logs this one while loading its settings, with a plain notebook and
    # no nbgraph at all (checked by hand on this machine); every other error counts.
    known = "Cannot read properties of undefined (reading 'schema')"
    errors = [e for e in errors if not ("/notebooks/" in jupyterlab and known in e)]
    assert not errors, errors
