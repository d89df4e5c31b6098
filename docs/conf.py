"""Sphinx configuration of the dpstats documentation site (``make docs``).

The site never executes a notebook: the tutorial and paper pages are the executed notebooks of the last report
run committed under ``reports/<name>/<name>.ipynb`` (``nb_execution_mode = "off"``). Pages that are derived from
the code or the report (the API list, the notebook pages, "Published vs reproduced", the benchmarks, the run
record) are generated into ``docs/generated/`` by ``_ext/pages.py`` when this file is read; that folder is not
committed. Set ``DPSTATS_REPORTS`` to render another report folder (e.g. a fresh ``reports/_quick``).
"""

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

import pages  # noqa: E402  (docs/_ext/pages.py)

import dpstats  # noqa: E402

REPORTS = Path(os.environ.get("DPSTATS_REPORTS", ROOT / "reports")).resolve()
pages.generate(DOCS / "generated", ROOT, REPORTS)

project = "dpstats"
author = "The dpstats developers"
copyright = "the dpstats developers (MIT licence)"
release = version = dpstats.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "plaintext",  # docs/_ext/plaintext.py: |x| and name_ in docstrings are prose, not markup
]
templates_path = ["_templates"]
exclude_patterns = ["_build", "_ext", "**.ipynb_checkpoints"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# Notebooks: render the stored outputs of the executed report notebooks, never run them.
nb_execution_mode = "off"
nb_merge_streams = True
nb_render_markdown_format = "myst"  # the notebooks display their tables as Markdown (GFM tables)
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # notebooks start their sections at "##" below a "#" title: intended

# API reference from the numpydoc docstrings.
autosummary_generate = True
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# MathJax 2 from the jupyter-server-mathjax wheel (the site works offline; no CDN). MyST marks the top section of
# every Markdown page and notebook "tex2jax_ignore mathjax_ignore" and gives each formula the class "math", then
# writes the classes to process as a MathJax 3 option, which MathJax 2 never reads: without tex2jax's own
# processClass every formula of a notebook page stayed raw TeX. So MathJax 2 is told the same classes here, and
# the dead MathJax 3 option is dropped (see setup below).
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax3_config = None
myst_mathjax_classes = "tex2jax_process|mathjax_process|math|output_area"
mathjax2_config = {
    "messageStyle": "none",  # no "Processing math: 100%" box over the page's bottom left corner
    "tex2jax": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processRefs": False,
        "processEnvironments": False,
        "ignoreClass": "tex2jax_ignore|mathjax_ignore",
        "processClass": myst_mathjax_classes,
    },
    # the wheel ships the STIX-Web fonts only (as Jupyter configures it). MathJax 2 declares a placeholder font
    # at url('about:blank'), which Chromium refuses with a console error: it is looked up locally instead.
    "HTML-CSS": {
        "availableFonts": ["STIX-Web"],
        "preferredFont": "STIX-Web",
        "webFont": "STIX-Web",
        "imageFont": None,
        "styles": {"@font-face": {"font-family": "MathJax_Blank", "src": "local('MathJax_Blank')"}},
    },
}

html_theme = "pydata_sphinx_theme"
html_title = f"dpstats {release}"
html_static_path = ["_static", str(pages.mathjax_static(DOCS / "generated"))]
html_theme_options = {
    "navigation_with_keys": False,
    "header_links_before_dropdown": 5,
    "navbar_align": "left",
    "show_toc_level": 2,
    # the comparison tables take the whole width; the summary table at the top of that page leads to each paper
    "secondary_sidebar_items": {"**": ["page-toc"], "generated/published_vs_reproduced": []},
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# Every page but the API pages (whose sidebar lists every public name) uses the full width: no navigation sidebar
# (the navbar, the section index pages and the previous/next links lead through the pages) and no cap on the text
# column (docs/_static/dpstats.css), so nine-column tables, two-panel figures and code fit.
WIDE_PAGES = ["index", "install", "guide/*", "generated/*", "generated/tutorials/*", "generated/papers/*"]
html_sidebars = {**dict.fromkeys(WIDE_PAGES, []), "generated/api/index": []}
html_css_files = ["dpstats.css"]
html_show_sourcelink = False
html_favicon = "_static/favicon.svg"
html_context = {"default_mode": "light"}


def _no_mathjax3_option(app):
    """Drop the MathJax 3 options MyST writes (``window.MathJax = {options: ...}``): the site runs MathJax 2,
    configured above with the same classes."""
    app.config.mathjax3_config = None
    if hasattr(app.config, "mathjax4_config"):
        app.config.mathjax4_config = None


def setup(app):
    app.connect("builder-inited", _no_mathjax3_option, priority=900)  # after MyST's own handler (priority 500)
