"""The documentation site in a real browser: every page of docs/_build/html (built by `make docs`, which
`make test` runs first) is opened in headless Chromium from the distribution's packages, served over HTTP on
localhost. A page fails on a console error or an uncaught exception, a request that fails or returns an error
status, an image that does not load (naturalWidth 0), or an internal link to a missing page or anchor. Search
must find a page. Screenshots of the home page, the API page of dpstats.mean and a paper page are saved under
docs/_build/screenshots/ for a person to look at.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "docs" / "_build" / "html"
SHOTS = ROOT / "docs" / "_build" / "screenshots"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Headless Chromium as root on a machine without outside network: no sandbox, no GPU, no background traffic.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = {
    "home": "index.html",
    "api_mean": "generated/api/dpstats.mean.html",
    "paper_hardt_roth": "generated/papers/hardt_roth.html",
}

playwright = pytest.importorskip("playwright.sync_api", reason="the docs extra is not installed")
pytestmark = [
    pytest.mark.skipif(not (SITE / "index.html").is_file(), reason="the site is not built: run `make docs`"),
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install chromium)"),
]

# Wait for MathJax and for every image (lazy ones too) to load or fail, then list the broken ones; list every link.
_INSPECT = """async () => {
  if (window.MathJax && window.MathJax.Hub) {  // let MathJax typeset (and fetch its fonts) first
    await new Promise(done => window.MathJax.Hub.Queue(done));
  }
  const images = Array.from(document.images);
  images.forEach(img => { img.loading = "eager"; });
  await Promise.all(images.map(img => img.complete ? null :
      new Promise(done => { img.addEventListener("load", done); img.addEventListener("error", done); })));
  return {
    broken: images.filter(img => img.naturalWidth === 0).map(img => img.getAttribute("src")),
    links: Array.from(document.querySelectorAll("a[href]")).map(a => a.href),
  };
}"""


@pytest.fixture(scope="module")
def site_url():
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),  # a fresh --user-data-dir
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        yield context
        context.close()


def _pages() -> list[str]:
    skip = ("_static", "_sources", "_images")
    pages = (p.relative_to(SITE) for p in SITE.rglob("*.html"))
    return sorted(p.as_posix() for p in pages if p.parts[0] not in skip)


@functools.cache
def _ids(page: Path) -> frozenset[str]:
    return frozenset(re.findall(r'\bid="([^"]+)"', page.read_text(encoding="utf-8", errors="replace")))


def _broken_link(href: str, origin: str) -> str | None:
    """Why an internal link is broken (None if it resolves, or is external)."""
    if not href.startswith(origin):
        return None
    parts = urlsplit(href)
    target = SITE / unquote(parts.path).lstrip("/")
    if target.is_dir():
        target = target / "index.html"
    if not target.is_file():
        return f"{href}: no such page"
    if parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _ids(target):
        return f"{href}: no anchor #{parts.fragment}"
    return None


def test_every_page_loads_cleanly_in_chromium(browser, site_url):
    pages = _pages()
    assert len(pages) > 30 and "generated/api/dpstats.mean.html" in pages
    problems = []
    page = browser.new_page()
    current = {"url": ""}
    page.on("console", lambda m: m.type == "error" and problems.append(f"{current['url']}: console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"{current['url']}: uncaught: {e}"))
    # a request the next navigation cancels (ERR_ABORTED) is not a fault; a missing file shows as an HTTP error
    page.on(
        "requestfailed",
        lambda r: (
            "ERR_ABORTED" not in (r.failure or "")
            and problems.append(f"{current['url']}: request failed: {r.url} {r.failure}")
        ),
    )
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{current['url']}: HTTP {r.status}: {r.url}"))
    checked_links = set()
    for name in pages:
        current["url"] = name
        page.goto(site_url + name, wait_until="load")
        found = page.evaluate(_INSPECT)
        problems += [f"{name}: image does not load: {src}" for src in found["broken"]]
        for href in set(found["links"]) - checked_links:
            checked_links.add(href)
            reason = _broken_link(href, site_url)
            if reason:
                problems.append(f"{name}: broken link {reason}")
    page.close()
    assert not problems, "\n".join(problems[:40])


def test_search_finds_the_mean_page(browser, site_url):
    page = browser.new_page()
    page.goto(site_url + "search.html?q=laplace", wait_until="load")
    # Sphinx appends the results one by one and then writes its summary: wait for the summary, then read them all.
    page.wait_for_function(
        "document.querySelector('#search-results .search-summary')?.textContent.includes('Search finished')",
        timeout=30_000,
    )
    hits = page.eval_on_selector_all("#search-results ul.search li a", "links => links.map(a => a.href)")
    page.close()
    assert any("dpstats.mean" in href for href in hits), hits[:10]


def test_screenshots_for_a_person_to_look_at(browser, site_url):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page()
    for shot, name in SCREENSHOTS.items():
        page.goto(site_url + name, wait_until="load")
        page.screenshot(path=str(SHOTS / f"{shot}.png"))
        page.screenshot(path=str(SHOTS / f"{shot}_full.png"), full_page=True)
    page.close()
    for shot in SCREENSHOTS:
        assert (SHOTS / f"{shot}.png").stat().st_size > 10_000
