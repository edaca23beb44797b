"""The one way browser tests run a notebook front-end: JupyterLab 4 or Notebook 7 on
127.0.0.1 with private config, settings and runtime folders, driven by Debian's Chromium
through Playwright (`../shared/JUPYTER-NOTES.md`).

- `serve(frontend, tmp_path, notebooks)`: a context manager that writes `notebooks`
  (`{file name: [cell source, ...]}`) to a fresh root, starts the server and yields
  `Served(base, token, path)`; `served.url(name)` is a notebook's URL.
- `open_page(browser, url, errors, height)`: a page on the notebook, its page and console
  errors collected in `errors`, the kernel ready; `open_notebook(playwright, url, errors,
  height)`: Chromium on it, every cell started.
- `execute_notebook(folder, cells)`: a notebook run by nbconvert, saved with its widget state.
- `served_themed(request, tmp_path, name, cells)`: `serve` for a fixture parametrized by
  `THEMED` (each front-end, light and dark); yields `(url, frontend, theme)`.
- `real_errors(errors, url)`: the errors less one Notebook 7 logs by itself.
- `notes_app(first_note)`: the source of a two-node app the sharing tests start from;
  `RESEARCH_APP`: the source of a fan-out and join (`plan` → `search`, `read` → `write`).
- `open_offline(playwright, url, errors, requests, height)`: Chromium with the network off
  on a file or page; its errors, dialogs and every request it tried are collected.
"""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

CHROMIUM = "/usr/bin/chromium"

LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--disable-background-networking", "--no-first-run"]  # fmt: skip

FRONTENDS = {
    # module to run, the notebook's URL path, options only that front-end knows
    "jupyterlab": ("jupyterlab", "lab/tree", ["--LabApp.news_url=None",
                   "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]),
    "notebook7": ("notebook", "notebooks", []),
}  # fmt: skip


def browser_or_skip() -> str:
    """Chromium's path; a skip outside CI when it is missing, a failure in CI."""
    if Path(CHROMIUM).exists():
        return CHROMIUM
    if os.environ.get("CI"):
        pytest.fail("CI must have Chromium at /usr/bin/chromium (bash dev.sh installs it).")
    pytest.skip("Debian's chromium is not installed (sudo apt-get install chromium)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Served:
    """A running front-end: its base URL, token and the notebooks' URL path."""

    base: str
    token: str
    path: str
    frontend: str

    def url(self, name: str) -> str:
        reset = "&reset" if self.frontend == "jupyterlab" else ""  # a fresh workspace
        return f"{self.base}/{self.path}/{name}?token={self.token}{reset}"


KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}


def write_notebook(path: Path, cells: list[str]) -> None:
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c.strip()) for c in cells],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    nbformat.write(notebook, path)


def execute_notebook(folder: Path, cells: list[str], name: str = "shared.ipynb") -> Path:
    """`cells` executed by nbconvert in `folder` (as a notebook runner would), saved as
    `name` with their outputs and the widget state, and not signed: JupyterLab opens it
    untrusted."""
    source = folder / "source.ipynb"
    write_notebook(source, cells)
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
               "--output", name, str(source)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / name


@contextlib.contextmanager
def serve(frontend: str, tmp_path: Path, notebooks: dict[str, list[str]]) -> Iterator[Served]:
    """Start `frontend` ("jupyterlab" or "notebook7") on `notebooks`; stop it after."""
    module, path, extra = FRONTENDS[frontend]
    root, port, token = tmp_path / "root", free_port(), uuid.uuid4().hex
    root.mkdir()
    for name, cells in notebooks.items():
        write_notebook(root / name, cells)
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
        yield Served(base, token, path, frontend)
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the server and the kernels it started
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()


def use_theme(tmp_path: Path, theme: str) -> None:
    """Make the server started with `serve(..., tmp_path, ...)` show `theme` ("light" or
    "dark"): its settings folder is read when a page asks for its settings, so this may
    come after the server started, before the page opens."""
    if theme == "dark":
        themes = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
        themes.mkdir(parents=True, exist_ok=True)
        (themes / "themes.jupyterlab-settings").write_text('{"theme": "JupyterLab Dark"}')


THEMED = [(frontend, theme) for frontend in sorted(FRONTENDS) for theme in ("light", "dark")]


@contextlib.contextmanager
def served_themed(request, tmp_path: Path, name: str, cells: list[str]) -> Iterator[tuple]:
    """For a fixture parametrized by `THEMED`: the notebook `name` served by the front-end
    of `request.param` in its theme; yields `(url, frontend, theme)`."""
    frontend, theme = request.param
    with serve(frontend, tmp_path, {name: cells}) as server:
        use_theme(tmp_path, theme)
        yield server.url(name), frontend, theme


def notes_app(first_note: str = "plan") -> str:
    """The source of a cell defining `app`: `plan` then `write`, each appending a note to
    `notes` (`plan`'s is `first_note`)."""
    return f"""
import operator
from typing import Annotated, TypedDict
from nbgraph import END, START, StateGraph

class State(TypedDict):
    topic: str
    notes: Annotated[list, operator.add]

app = (
    StateGraph(State)
    .add_node("plan", lambda s: {{"notes": [{first_note!r}]}})
    .add_node("write", lambda s: {{"notes": ["write"]}})
    .add_edge(START, "plan").add_edge("plan", "write").add_edge("write", END)
    .compile()
)
"""


def open_offline(playwright, url: str, errors: list[str], requests: list[str], height: int = 900):
    """Chromium, offline, on `url` (a `file://` page, say): page errors, console errors and
    dialogs go to `errors`, every URL it asked for to `requests`; returns (browser, page)."""
    browser = playwright.chromium.launch(executable_path=browser_or_skip(), args=LAUNCH_ARGS)
    context = browser.new_context(offline=True, viewport={"width": 1300, "height": height})
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: errors.append(message.text) if message.type == "error" else None,
    )
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: errors.append(f"dialog: {dialog.message}"))
    page.goto(url)
    return browser, page


RESEARCH_APP = """
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
"""
"""A cell defining `app`: `plan`, then `search` and `read` in parallel, joined by `write`."""


def real_errors(errors: list[str], url: str) -> list[str]:
    """The page's errors, less one Notebook 7.6 logs itself while loading its settings,
    with a plain notebook and no nbgraph at all (checked by hand on this machine)."""
    known = "Cannot read properties of undefined (reading 'schema')"
    return [e for e in errors if not ("/notebooks/" in url and known in e)]


def open_page(browser, url: str, errors: list[str], height: int = 2400):
    """A new page of `browser` on the notebook at `url`, its errors collected in `errors`,
    once the notebook's kernel is ready."""
    page = browser.new_page(viewport={"width": 1400, "height": height})
    page.on("pageerror", lambda error: errors.append(f"page error: {error} {error.stack}"))
    page.on(
        "console",
        lambda message: (
            errors.append(f"console: {message.text}") if message.type == "error" else None
        ),
    )
    page.goto(url, timeout=90_000)
    page.wait_for_function(
        "window.jupyterapp && window.jupyterapp.shell.currentWidget "
        "&& window.jupyterapp.shell.currentWidget.sessionContext",
        timeout=90_000,
    )
    page.evaluate(
        "async () => { await window.jupyterapp.shell.currentWidget.sessionContext.ready; }"
    )
    return page


def open_notebook(playwright, url: str, errors: list[str], height: int = 2400):
    """Chromium on `url` (`open_page`), every cell started (not awaited: the command
    settles only when every cell has run). The default height shows the whole inspector.
    Returns `(browser, page)`."""
    browser = playwright.chromium.launch(executable_path=browser_or_skip(), args=LAUNCH_ARGS)
    page = open_page(browser, url, errors, height)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    return browser, page
