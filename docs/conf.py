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

# MathJax from the jupyter-server-mathjax wheel (the site works offline; no CDN).
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax3_config = None
mathjax2_config = {
    "tex2jax": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processRefs": False,
        "processEnvironments": False,
    },
    # the wheel ships the STIX-Web fonts only (as Jupyter configures it)
    "HTML-CSS": {"availableFonts": ["STIX-Web"], "preferredFont": "STIX-Web", "webFont": "STIX-Web", "imageFont": None},
}

html_theme = "pydata_sphinx_theme"
html_title = f"dpstats {release}"
html_static_path = ["_static", str(pages.mathjax_static(DOCS / "generated"))]
html_theme_options = {
    "navigation_with_keys": False,
    "header_links_before_dropdown": 5,
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "install": []}
html_show_sourcelink = False
html_favicon = "_static/favicon.svg"
html_context = {"default_mode": "light"}
