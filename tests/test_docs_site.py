"""The documentation site in a real browser: every page of docs/_build/html (built by `make docs`, which
`make test` runs first) is opened once in headless Chromium from the distribution's packages, served over HTTP on
localhost, at a 1280 x 900 window.

Loading: a page fails on a console error or an uncaught exception, a request that fails or returns an error status,
an image that does not load (naturalWidth 0), or an internal link to a missing page or anchor. Search must find a
page.

Reading, as a person sees the page:
* math: on every page with formulas, MathJax has typeset each of them, without a TeX error, and no raw TeX
  (``\\(``, ``\\frac``, ``$$``) is left in the visible text outside code;
* width: the text column does not scroll sideways, no table or code block reaches past the column unless inside its
  own scroll box that fits in the column, the site's tables wrap their cells (no column hidden behind a scroll bar;
  only a table a notebook printed may scroll in its own box), and on the hand-written pages (home, installation,
  guide) code fits without scrolling;
* figures: each figure is shown at no less than 70 % of its natural size (its width in inches, from the PNG's dpi,
  times 96 CSS pixels), so that a 10-point axis label stays at least 9 pixels high;
* leftovers: no page shows a path of the machine that ran the notebooks or outside the repository (``/tmp/…``,
  ``/work/…``, ``site-packages``, ``../shared/…``), and no notebook page's prose or heading shows a parameter's name
  where its value belongs ("ε = `table_epsilon`").

Screenshots of the home page, a tutorial, a paper page, "Published vs reproduced" and the API page of dpstats.mean
are saved under docs/_build/screenshots/ for a person to look at.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import struct
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
    "tutorial_mean": "generated/tutorials/mean.html",
    "paper_hardt_roth": "generated/papers/hardt_roth.html",
    "published_vs_reproduced": "generated/published_vs_reproduced.html",
    "api_mean": "generated/api/dpstats.descriptive.mean.html",
}
HAND_WRITTEN = re.compile(r"(index|install|guide/[^/]+)\.html")  # pages whose code must fit without scrolling
NOTEBOOK_PAGE = re.compile(r"generated/(tutorials|papers)/([^/]+)\.html")
LEGIBLE = 0.7  # a figure's shown width over its natural CSS width: 10 pt labels stay >= 9.3 px
# a path of the machine that ran a notebook, or one leaving the repository
MACHINE_PATH = re.compile(
    r"(?<![\w.~])(/(?:work|tmp|home|root|Users|var/folders)/|\.\./shared/)|(?<!<)site-packages|ipykernel_"
)
RAW_TEX = re.compile(
    r"\\[()\[\]]|\$\$|\\(?:frac|sum|mathrm|mathbb|varepsilon|sqrt|tilde|hat|operatorname|begin|end|left|right|cdot"
    r"|top|sigma|Delta|le|ge|sim)\b"
)

playwright = pytest.importorskip("playwright.sync_api", reason="the docs extra is not installed")
pytestmark = [
    pytest.mark.skipif(not (SITE / "index.html").is_file(), reason="the site is not built: run `make docs`"),
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install chromium)"),
]

# Wait for MathJax and for every image (lazy ones too) to load or fail; then read what a person sees: broken
# images, links, math, boxes wider than the text column, figure sizes, code after a relation sign in prose.
_INSPECT = """async () => {
  if (window.MathJax && window.MathJax.Hub) {  // let MathJax typeset (and fetch its fonts) first
    await new Promise(done => window.MathJax.Hub.Queue(done));
  }
  const images = Array.from(document.images);
  images.forEach(img => { img.loading = "eager"; });
  await Promise.all(images.map(img => img.complete ? null :
      new Promise(done => { img.addEventListener("load", done); img.addEventListener("error", done); })));
  const article = document.querySelector("article.bd-article");
  const found = {
    broken: images.filter(img => img.naturalWidth === 0).map(img => img.getAttribute("src")),
    links: Array.from(document.querySelectorAll("a[href]")).map(a => a.href),
  };
  if (!article) return found;
  // math: every formula node Sphinx wrote, and how many of them MathJax turned into typeset output
  const formulas = Array.from(article.querySelectorAll("span.math.notranslate, div.math.notranslate"));
  found.math = {
    formulas: formulas.length,
    typeset: formulas.filter(f => f.querySelector(".MathJax, mjx-container")).length,
    errors: article.querySelectorAll(".MathJax_Error, .merror, .noError, mjx-merror").length,
  };
  // the visible text outside code and typeset math
  const skip = "pre, code, script, style, textarea, .MathJax, .MathJax_Display, .MathJax_Preview, mjx-container";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const prose = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement.closest(skip) && node.textContent.trim()) prose.push(node.textContent);
  }
  found.prose = prose.join(" ");
  found.text = document.body.innerText;
  // width: the column, and every table and code block against it
  const column = article.getBoundingClientRect();
  const container = document.querySelector(".bd-article-container");
  found.columnScrolls = container.scrollWidth > container.clientWidth + 1;
  const scrolls = el => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  found.boxes = Array.from(article.querySelectorAll("table, pre")).map(el => {
    let box = null;
    for (let s = el; s && s !== article; s = s.parentElement) { if (scrolls(s)) { box = s; break; } }
    const outer = (box || el).getBoundingClientRect();
    return {
      tag: el.tagName, text: (el.innerText || "").trim().slice(0, 60),
      pastColumn: Math.round(outer.right - column.right),
      scrolledBy: box ? box.scrollWidth - box.clientWidth : 0,
      printed: !!el.closest(".cell_output"),
    };
  });
  // figures: the images of the text column, as shown and as stored
  found.figures = Array.from(article.querySelectorAll("img")).filter(img => img.naturalWidth > 0).map(img => ({
    src: new URL(img.src).pathname, natural: img.naturalWidth, shown: img.getBoundingClientRect().width,
  }));
  // prose that names something in code right after a relation sign: "ε = `table_epsilon`"
  found.namedValues = Array.from(article.querySelectorAll("code")).filter(code => !code.closest("pre, .cell_input"))
    .filter(code => /[=≈<>≤≥]\\s*$/.test((code.previousSibling && code.previousSibling.textContent) || ""))
    .map(code => code.innerText.trim());
  return found;
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


@pytest.fixture(scope="module")
def visited(browser, site_url):
    """Every page opened once: what _INSPECT read on it, and the problems seen while it loaded."""
    pages = _pages()
    assert len(pages) > 30 and "generated/api/dpstats.descriptive.mean.html" in pages
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
    seen = {}
    for name in pages:
        current["url"] = name
        page.goto(site_url + name, wait_until="load")
        seen[name] = page.evaluate(_INSPECT)
    page.close()
    return seen, problems


def test_every_page_loads_cleanly_in_chromium(visited, site_url):
    seen, problems = visited
    problems = list(problems)
    checked_links = set()
    for name, found in seen.items():
        problems += [f"{name}: image does not load: {src}" for src in found["broken"]]
        for href in set(found["links"]) - checked_links:
            checked_links.add(href)
            reason = _broken_link(href, site_url)
            if reason:
                problems.append(f"{name}: broken link {reason}")
    assert not problems, "\n".join(problems[:40])


def test_math_is_typeset_on_every_page_that_has_math(visited):
    seen, _ = visited
    with_math = {name: found for name, found in seen.items() if found.get("math", {}).get("formulas")}
    # the tutorials and papers are written with formulas: if none is found, the pages were not read right
    assert "generated/tutorials/mean.html" in with_math and "generated/papers/icassp2016.html" in with_math
    problems = []
    for name, found in with_math.items():
        math = found["math"]
        if math["typeset"] < math["formulas"]:
            problems.append(f"{name}: {math['formulas'] - math['typeset']} of {math['formulas']} formulas not typeset")
        if math["errors"]:
            problems.append(f"{name}: {math['errors']} TeX errors")
    for name, found in seen.items():
        raw = RAW_TEX.search(found.get("prose", ""))
        if raw:
            at = found["prose"][max(0, raw.start() - 40) : raw.end() + 40]
            problems.append(f"{name}: raw TeX {raw.group(0)!r} visible: …{at}…")
    assert not problems, "\n".join(problems[:40])


def test_no_table_or_code_block_overflows_its_column(visited):
    seen, _ = visited
    problems = []
    for name, found in seen.items():
        if found.get("columnScrolls"):
            problems.append(f"{name}: the text column scrolls sideways (something is wider than the page)")
        for box in found.get("boxes", []):
            what = f"{name}: {box['tag'].lower()} {box['text']!r}"
            if box["pastColumn"] > 1:
                problems.append(f"{what} reaches {box['pastColumn']} px past the text column")
            elif box["scrolledBy"] > 1 and (
                (box["tag"] == "TABLE" and not box["printed"]) or HAND_WRITTEN.fullmatch(name)
            ):
                problems.append(f"{what} hides {box['scrolledBy']} px behind a scroll bar")
    assert not problems, "\n".join(problems[:40])


def test_figures_are_shown_near_their_natural_size(visited):
    seen, _ = visited
    problems, figures = [], 0
    for name, found in seen.items():
        for figure in found.get("figures", []):
            path = SITE / unquote(figure["src"]).lstrip("/")
            natural = figure["natural"] * 96 / _png_dpi(path)  # CSS pixels at the figure's own size in inches
            if natural < 300:
                continue  # an icon or a badge, not a figure
            figures += 1
            if figure["shown"] < LEGIBLE * natural:
                problems.append(
                    f"{name}: {path.name} shown {figure['shown']:.0f} px wide, natural {natural:.0f} px "
                    f"({figure['shown'] / natural:.0%} < {LEGIBLE:.0%})"
                )
    assert figures > 20
    assert not problems, "\n".join(problems[:40])


def test_no_page_shows_a_machine_path_or_an_unexpanded_parameter(visited):
    seen, _ = visited
    problems = []
    for name, found in seen.items():
        for match in MACHINE_PATH.finditer(found.get("text", "")):
            at = found["text"][max(0, match.start() - 40) : match.end() + 40].replace("\n", " ")
            problems.append(f"{name}: path {match.group(0)!r}: …{at}…")
        notebook = NOTEBOOK_PAGE.fullmatch(name)
        if notebook and found.get("prose") is not None:
            parameters = _parameters(*notebook.groups())
            for code in found["namedValues"]:
                if code in parameters:
                    problems.append(f"{name}: the prose shows the parameter name `{code}` where its value belongs")
    assert not problems, "\n".join(problems[:40])


def _parameters(kind: str, name: str) -> set[str]:
    """The names the notebook behind a page takes as parameters (its ``parameters`` cell and papermill's)."""
    import ast

    notebook = json.loads((ROOT / "docs" / "generated" / kind / f"{name}.ipynb").read_text(encoding="utf-8"))
    names = set(notebook.get("metadata", {}).get("papermill", {}).get("parameters", {}))
    for cell in notebook["cells"]:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            for node in ast.parse("".join(cell["source"])).body:
                if isinstance(node, ast.Assign):
                    names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _png_dpi(path: Path) -> float:
    """The resolution a PNG states in its pHYs chunk (matplotlib writes it), else 96: CSS pixels."""
    data = path.read_bytes()[:4096] if path.suffix.lower() == ".png" else b""
    at = data.find(b"pHYs")
    if at < 0:
        return 96.0
    x_per_unit, _, unit = struct.unpack(">IIB", data[at + 4 : at + 13])
    return x_per_unit * 0.0254 if unit == 1 and x_per_unit else 96.0


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
    assert any(re.search(r"/api/dpstats\.(descriptive\.)?mean\.html", href) for href in hits), hits[:10]


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
