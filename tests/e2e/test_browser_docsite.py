"""The docs site in a real browser: built as `bash dev.sh docs` builds it (`mkdocs build
--strict`, the notebooks executed), opened from disk in Chromium with the network off at a
1400 px window. No page asks for anything beyond the machine (no GitHub API, no CDN), a
notebook page's table of contents keeps its headings' code spans and links to them, and
every label of every drawing (an inspector's snapshot, a stand-alone drawing, the home
page's picture) measures at least 10 px on screen.
"""

import base64
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from tests.support.browser import open_offline

pytestmark = [pytest.mark.browser, pytest.mark.dot, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SMALLEST = 10.0  # px: the least a label may measure on screen
WIDTH = 1400

INLINE_LABELS = """() => {
  // each shown inline SVG drawing in a cell's output: its smallest label, in screen px
  // (the font size in the drawing's units times what one unit measures on screen)
  const out = [];
  for (const svg of document.querySelectorAll('.jp-OutputArea-output svg')) {
    if (!svg.getClientRects().length) continue;  // hidden (the copy the other one stands for)
    for (const t of svg.querySelectorAll('text')) {
      const size = parseFloat(t.getAttribute('font-size') || getComputedStyle(t).fontSize);
      out.push({px: size * t.getScreenCTM().a, text: t.textContent,
                snapshot: !!svg.closest('.nbgraph-snapshot')});
    }
  }
  return out;
}"""

SVG_IMAGES = """() => [...document.querySelectorAll('.md-content img')]
  .filter(i => i.getClientRects().length
               && (i.src.startsWith('data:image/svg+xml') || /\\.svg$/.test(i.src)))
  .map(i => ({src: i.src, width: i.getBoundingClientRect().width,
              snapshot: !!i.closest('.nbgraph-snapshot')}))"""

TOC = """() => [...document.querySelectorAll('nav.md-nav--secondary a.md-nav__link')]
  .map(a => ({text: a.textContent.trim().replace(/\\s+/g, ' '), href: a.getAttribute('href'),
              target: !!document.getElementById(decodeURIComponent(
                  a.getAttribute('href').slice(1)))}))"""

HEADINGS = """() => [...document.querySelectorAll('.jp-MarkdownCell :is(h2, h3, h4)[id]')]
  .map(h => ({id: h.id, text: h.textContent.replace('¶', '').trim().replace(/\\s+/g, ' '),
              code: !!h.querySelector('code')}))"""


@pytest.fixture
def site(docs_site) -> Path:
    """The site, built once for this file and tests/e2e/test_docs.py (tests/e2e/conftest.py)."""
    return docs_site


def _pages(site: Path) -> list[str]:
    """The home page and every notebook's page."""
    notebooks = sorted(p.relative_to(site).as_posix() for p in site.glob("notebooks/*/index.html"))
    assert len(notebooks) == len(list((ROOT / "notebooks").glob("*.ipynb")))
    return ["index.html", *notebooks]


def _open(playwright, site: Path, page_name: str, errors: list, requests: list):
    browser, page = open_offline(playwright, (site / page_name).as_uri(), errors, requests)
    page.set_viewport_size({"width": WIDTH, "height": 900})
    return browser, page


def _svg_text(src: str) -> str:
    """The SVG an image shows: a `data:` URI's or a file's."""
    if src.startswith("data:"):
        head, _, body = src.partition(",")
        return base64.b64decode(body).decode() if head.endswith(";base64") else unquote(body)
    return Path(unquote(urlparse(src).path)).read_text(encoding="utf-8")


def smallest_label(svg: str, width: float) -> tuple[float, str]:
    """The smallest label of a graphviz SVG shown `width` px wide: its height in screen px
    (font size × the graph's scale × px per viewBox unit) and its text.

    >>> svg = ('<svg viewBox="0 0 200 100"><g class="graph" transform="scale(0.5 0.5)">'
    ...        '<text font-size="9.00">a</text><text font-size="14.00">b</text></g></svg>')
    >>> smallest_label(svg, 400)
    (9.0, 'a')
    """
    box = re.search(r'viewBox="([-\d.]+)[ ,]+([-\d.]+)[ ,]+([\d.]+)', svg)
    assert box, svg[:300]
    scale = re.search(r'class="graph"[^>]*transform="scale\(([\d.]+)', svg)
    unit = width / float(box.group(3)) * (float(scale.group(1)) if scale else 1.0)
    labels = re.findall(r'<text[^>]*font-size="([\d.]+)"[^>]*>([^<]*)</text>', svg)
    assert labels, svg[:300]
    size, text = min(labels, key=lambda label: float(label[0]))
    return float(size) * unit, text


def test_no_page_asks_for_anything_beyond_the_machine(site):
    """Every request of the home page and of each notebook's page is for a file of the site:
    no GitHub API (the header's repository link), no CDN, no web font; no page error."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        for name in _pages(site):
            errors: list[str] = []
            requests: list[str] = []
            browser, page = _open(playwright, site, name, errors, requests)
            try:
                page.wait_for_load_state("networkidle")
                assert page.locator(".md-source").count(), "the repository link is still there"
            finally:
                browser.close()
            away = [url for url in requests if not url.startswith(("file:", "data:"))]
            assert not away, (name, away)
            assert not errors, (name, errors)
            assert len(requests) > 3, (name, requests)  # (the listener saw the page's files)


def test_the_table_of_contents_keeps_code_spans_and_reaches_its_headings(site):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        errors: list[str] = []
        browser, page = _open(playwright, site, "notebooks/04_debug_a_branch/index.html",
                              errors, [])  # fmt: skip
        try:
            entries = page.evaluate(TOC)
            headings = page.evaluate(HEADINGS)
        finally:
            browser.close()
    texts = [entry["text"] for entry in entries]
    assert "3. Who wrote quotes? run.writers() and run.effects" in texts, texts
    assert all(entry["target"] for entry in entries), [e for e in entries if not e["target"]]
    with_code = [h for h in headings if h["code"] and not h["id"].startswith("recap")]
    assert len(with_code) >= 2, headings
    for heading in with_code:  # each heading with a code span: its entry, word for word
        assert {"text": heading["text"], "href": f"#{heading['id']}", "target": True} in entries


def test_every_label_of_every_drawing_measures_at_least_10_px(site):
    """At a 1400 px window, on the home page and every notebook's page: the labels of the
    inspectors' snapshots (inline SVG), of the stand-alone drawings (SVG images) and of the
    home page's picture. A drawing wider than the page scrolls in its own box instead."""
    from playwright.sync_api import sync_playwright

    small: list[tuple] = []
    snapshots = drawings = 0
    with sync_playwright() as playwright:
        for name in _pages(site):
            errors: list[str] = []
            browser, page = _open(playwright, site, name, errors, [])
            try:
                inline = page.evaluate(INLINE_LABELS)
                images = page.evaluate(SVG_IMAGES)
                wider = page.evaluate("document.documentElement.scrollWidth") > WIDTH
            finally:
                browser.close()
            assert not wider, f"{name}: the page itself scrolls sideways"
            snapshots += sum(label["snapshot"] for label in inline)
            small += [(name, "inline", t["text"], round(t["px"], 1)) for t in inline
                      if t["px"] < SMALLEST]  # fmt: skip
            for image in images:
                drawings += 1
                px, text = smallest_label(_svg_text(image["src"]), image["width"])
                if px < SMALLEST:
                    small.append((name, "image", text, round(px, 1), round(image["width"])))
    assert snapshots > 50 and drawings > 30, (snapshots, drawings)
    assert not small, small
