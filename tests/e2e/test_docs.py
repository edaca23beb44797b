"""The docs pages: the compatibility table is backed by tests, the examples run, no page reads
like a development log, and the site builds with `mkdocs build --strict` (a broken link fails).
"""

import contextlib
import importlib.util
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# The pages written for the site (SEMANTICS, BRANCHES, VALUES and ARCHITECTURE are reference
# pages with their own tests); their Python examples run as written.
GUIDE = ["index", "engine", "record", "inspector", "stepper", "persistence", "many-runs"]
GUIDE += ["langgraph", "performance"]
# Pages whose Python examples run elsewhere: as-langgraph's are LangGraph programs, run under
# `python -m nbgraph.as_langgraph` by tests/test_as_langgraph.py (not in this process).
RUN_ELSEWHERE = ["as-langgraph"]
TABLES = ["What runs", "What differs on purpose", "What does not run yet"]
TEST_FILE = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`")


def section(text: str, heading: str) -> str:
    """The text under `## heading`, up to the next heading of that level."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def table_rows(text: str) -> list[list[str]]:
    """The body rows of the first Markdown table in `text`, as lists of cells."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    assert len(lines) > 2 and set(lines[1]) <= set("|-: "), lines[:2]
    return [re.split(r"(?<!\\)\|", line.strip().strip("|")) for line in lines[2:]]


def assert_names_tests(where: str, text: str) -> None:
    """`text` names at least one test file; each exists and holds a test (the named one)."""
    named = TEST_FILE.findall(text)
    assert named, f"{where} names no test file: {text!r}"
    for path, function in named:
        source = (ROOT / path).read_text(encoding="utf-8") if (ROOT / path).is_file() else None
        assert source is not None, f"{where}: {path} does not exist"
        name = function or r"test_\w*"  # (a def, or a test a helper made: `Programs.test`)
        wanted = rf"^((async )?def {name}\(|{name} = )"
        assert re.search(wanted, source, flags=re.M), f"{where}: {path} has no such test"


@pytest.mark.parametrize("table", TABLES)
def test_every_compatibility_row_names_a_test_file_that_holds_tests(table: str) -> None:
    text = section((DOCS / "langgraph.md").read_text(encoding="utf-8"), table)
    rows = table_rows(text)
    assert len(rows) >= 3, table
    for cells in rows:
        assert len(cells) == 2, cells
        assert_names_tests(f"{table}: {cells[0].strip()[:60]}", cells[1])


def test_every_line_of_the_readmes_langgraph_list_names_a_test_file() -> None:
    text = section((ROOT / "README.md").read_text(encoding="utf-8"), "nbgraph and LangGraph")
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(lines) >= 10
    assert any(line.startswith("- Does not run") for line in lines)
    for line in lines:
        assert_names_tests(f"README: {line[:60]}", line)


@pytest.mark.parametrize("page", GUIDE)
def test_the_examples_of_each_page_run_and_their_asserts_hold(page: str) -> None:
    text = (DOCS / f"{page}.md").read_text(encoding="utf-8")
    for number, block in enumerate(re.findall(r"```python\n(.*?)```", text, flags=re.S), 1):
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(block, f"docs/{page}.md example {number}", "exec"), {})


# What a work log says and a reference page does not: rounds, issue numbers and parts,
# "as before", "new:", a fixed bug's story told as news.
DEVELOPMENT_LOG = [
    r"\bthis round\b",
    r"\bbefore this round\b",
    r"\bissue \d+",
    r"\bpart [A-E]\b",
    r"\bfirst part\b",
    r"\bas before\b",
    r"\(new[:)]",
    r"— new —",
    r"\bnot done\b",
]


@pytest.mark.parametrize(
    "page",
    ["README.md", "benchmarks/README.md", *(f"docs/{p}.md" for p in GUIDE + RUN_ELSEWHERE)],
)
def test_no_page_reads_like_a_development_log(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    for pattern in DEVELOPMENT_LOG:
        found = re.search(pattern, text, flags=re.I)
        near = text[found.start() - 60 : found.end() + 60] if found else ""
        assert not found, f"{page}: {near!r}"


def test_the_saved_widget_state_setting_is_said_plainly() -> None:
    """The package changes a user-visible Jupyter default: the README and the inspector page
    say so, and name the file that does it, which the wheel installs."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "turns on JupyterLab's\nand Notebook 7's \"Save Widget State Automatically\"" in readme
    inspector = (DOCS / "inspector.md").read_text(encoding="utf-8")
    page = section(inspector, "Saved notebooks and widget state")
    assert "jupyter-settings/nbgraph.json" in page and "overrides.d/nbgraph.json" in page
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    installed = "share/jupyter/lab/settings/overrides.d/nbgraph.json"
    assert f'"jupyter-settings/nbgraph.json" = "{installed}"' in pyproject
    assert '"saveState": true' in (ROOT / "jupyter-settings" / "nbgraph.json").read_text()


@pytest.mark.slow
def test_the_site_builds_strict_offline_with_the_notebooks_and_their_outputs(docs_site) -> None:
    """`mkdocs build --strict` (warnings, among them broken links and anchors, fail it:
    the `docs_site` fixture, tests/e2e/conftest.py); the notebooks are executed and shown
    with their outputs; no page loads a script or a style sheet from the network."""
    site = docs_site
    pages = {p.relative_to(site).as_posix(): p.read_text("utf-8") for p in site.rglob("*.html")}
    assert "langgraph/index.html" in pages and "index.html" in pages
    notebooks = sorted(p for p in pages if p.startswith("notebooks/") and p.count("/") == 2)
    assert len(notebooks) == len(list((ROOT / "notebooks").glob("*.ipynb"))), notebooks
    quick = pages["notebooks/01_quickstart/index.html"]
    assert "jp-OutputArea-output" in quick and "<svg" in quick  # executed: outputs, drawings
    assert "nbgraph-snapshot" in quick  # an inspector shows its static snapshot
    debug = pages["notebooks/04_debug_a_branch/index.html"]  # the buggy and fixed runs compared
    assert "nbgraph-compare nbgraph-snapshot" in debug and "first differ at step 3" in debug
    for name, html in pages.items():
        remote = re.findall(r"<(?:script|link)\b[^>]*(?:src|href)=\"(https?:[^\"]+)\"", html)
        assert not remote, (name, remote)
        for host in ("fonts.googleapis", "unpkg.com", "jsdelivr"):
            assert host not in html, (name, host)
        assert "widget-view+json" not in html, name  # no widget left to draw from a CDN
        assert 'data-md-component="source"' not in html, name  # (it asks api.github.com)


def test_a_notebook_pages_table_of_contents_keeps_code_spans_and_the_headings_anchors() -> None:
    """docs/hooks.py makes a notebook page's table of contents from the page's headings:
    mkdocs-jupyter's own cut every code span out ("3. Who wrote ? and") and linked to
    anchors no heading had. (tests/e2e/test_browser_docsite.py checks the built site.)"""
    pytest.importorskip("mkdocs_jupyter", reason="install the docs extra: pip install -e .[docs]")
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    heading = (
        '<h2 id="3-who-wrote-quotes-runwriters">3. Who wrote <code>quotes</code>? '
        '<code>run.writers()</code> &amp; <code>a&lt;b</code><a class="anchor-link" '
        'href="#3-who-wrote-quotes-runwriters">¶</a></h2>'
    )
    page = (
        f'<div class="jp-Cell jp-MarkdownCell"><h1 id="title">Title</h1>{heading}'
        '<h3 id="under">under it</h3></div><div class="jp-Cell jp-CodeCell">'
        '<h2 id="out">an output\'s heading</h2></div>'
        '<div class="jp-Cell jp-MarkdownCell"><h2 id="next">Next</h2></div>'
    )
    [title] = hooks.notebook_toc_tokens(page)
    assert (title["name"], title["id"]) == ("Title", "title")
    names = [(t["name"], t["id"], [c["id"] for c in t["children"]]) for t in title["children"]]
    assert names == [
        ("3. Who wrote quotes? run.writers() &amp; a&lt;b", "3-who-wrote-quotes-runwriters",
         ["under"]),
        ("Next", "next", []),
    ]  # fmt: skip


def test_the_sites_repository_link_asks_nothing_of_github() -> None:
    """Material's header link to the repository carries `data-md-component="source"`, which
    makes each page ask api.github.com for stars and the latest release: the site overrides
    that partial with the plain link."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r"^  custom_dir: docs/overrides\b", config, flags=re.M)
    partial = (DOCS / "overrides" / "partials" / "source.html").read_text(encoding="utf-8")
    link = partial.split("-#}")[-1]  # (the comment above it names the attribute)
    assert 'class="md-source"' in link and "data-md-component" not in link


@pytest.mark.parametrize("page", ["README.md", *(f"docs/{p}.md" for p in GUIDE + RUN_ELSEWHERE)])
def test_every_file_a_page_names_exists(page: str) -> None:
    """The test files, scripts and notebooks a page names in code spans are in the repository."""
    text = (ROOT / page).read_text(encoding="utf-8")
    named = re.findall(r"`((?:tests|benchmarks|nbgraph|notebooks|docs)/[\w./-]+\.\w+)", text)
    assert named or page == "docs/index.md"
    for path in named:
        assert (ROOT / path).exists(), f"{page} names {path}"


def test_the_test_command_installs_what_the_docs_build_needs() -> None:
    """`bash dev.sh test` (what CI runs) installs the docs extra, so the build test runs there;
    `bash dev.sh docs` serves the site."""
    dev = (ROOT / "dev.sh").read_text(encoding="utf-8")
    test_extras = re.search(r"test\)\n(?:.*\n)*?\s*setup_python\s+\"?([\w,]+)\"?", dev)
    assert test_extras and "docs" in test_extras.group(1).split(",")
    assert re.search(r"docs\)\n(?:.*\n)*?.*mkdocs\" serve", dev)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    extra = re.search(r"^docs = \[(.*)\]$", pyproject, flags=re.M)
    assert extra and all(name in extra.group(1) for name in ("mkdocs-material", "mkdocs-jupyter"))
