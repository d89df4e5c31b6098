"""Generate the site's derived pages into ``docs/generated/`` (not committed; rebuilt on every ``make docs``).

* ``api/index.rst``: one autosummary list per public module, from each module's ``__all__`` (so a new public
  name gets its page without editing the docs); autosummary writes one stub page per name beside it.
* ``tutorials/<name>.ipynb``, ``papers/<name>.ipynb``: the executed notebooks of the report folder, with a note
  on the run they come from inserted under the title. Progress-bar widgets are dropped (their state is not stored,
  and rendering them would load widget JavaScript from the network); the rest of the outputs are kept as run. Where
  the prose names a parameter as a value ("δ = `delta`"), the page shows the value the notebook ran with
  ("δ = 1e-06 (`delta`)"): a reader of the site sees no parameter cell beside it.
* ``tutorials.md``, ``papers.md``: the lists of those pages, in manifest order.
* ``published_vs_reproduced.md``: the comparison tables of every paper notebook (the same section as the index).
* ``benchmarks.md``: ``reports/benchmarks/results.md`` and its figures.
* ``report.md``: the record: every notebook's status, profile, git revision, date and run time.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
import re
import shutil
from pathlib import Path

API_MODULES = {
    "dpstats": "The top level: ``import dpstats as dps``. Mechanisms, the accountant, errors and warnings.",
    "dpstats.estimators": "scikit-learn estimators (``fit``/``transform``/``predict``, pipelines, ``clone``).",
    "dpstats.accounting": "The privacy accountant and its ledger.",
    "dpstats.noise": "Noise calibration and samplers.",
    "dpstats.noise.release": "Releases on a public grid with exact integer noise (every mechanism's default).",
    "dpstats.noise.accuracy": "Planning from accuracy: the epsilon a target error needs, the error an epsilon buys.",
    "dpstats.noise.exact": "Exact discrete Laplace and discrete Gaussian samplers.",
    "dpstats.noise.selection": "Private partition selection: the noise and threshold that release only the keys "
    "enough units share.",
    "dpstats.noise.random": "The cryptographically secure default random source.",
    "dpstats.accounting.gaussian": "The Gaussian mechanism's exact privacy curve.",
    "dpstats.preprocessing": "Preprocessing that keeps the guarantee (row clipping, a private norm bound).",
    "dpstats.metrics": "Utility measures used by the notebooks.",
    "dpstats.audit": "Empirical privacy audits (lower confidence bounds on ε).",
    "dpstats.exceptions": "Every error and warning class.",
    "dpstats.compendium.datasets": "The compendium: real datasets (fetch, load) and synthetic generators.",
    "dpstats.compendium.experiments": "The compendium: sweeps, error bars, figures and tables for the notebooks.",
    "dpstats.compendium.comparison": "The compendium: published vs reproduced tables.",
    "dpstats.compendium.pca_benchmark": "The compendium: the private-PCA benchmark (every mechanism, its peers, "
    "the winners per cell).",
    "dpstats.compendium.interval_benchmark": "The compendium: the coverage benchmark of confidence intervals (an "
    "oracle, the noise-only interval, OpenDP).",
    "dpstats.compendium.reports": "The compendium: the report runner behind ``dpstats report``.",
    "dpstats.compendium.exceptions": "The compendium's errors (data sets missing or not downloaded).",
}
WIDGET = "application/vnd.jupyter.widget-view+json"


def generate(out: Path, root: Path, reports: Path) -> None:
    """Write every generated page into ``out`` (emptied first, except the copied MathJax)."""
    out.mkdir(parents=True, exist_ok=True)
    for child in out.iterdir():
        if child.name != "_mathjax":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    _api(out / "api")
    from dpstats.compendium.reports import load_manifest, read_record

    manifest = load_manifest(root / "notebooks" / "reports.toml")
    results = {r.name: r for r in read_record(reports, manifest)}
    pages = {}
    for kind in ("tutorials", "papers"):
        specs = [s for s in manifest.notebooks.values() if s.path.parent.name == kind]
        pages[kind] = [_notebook_page(out / kind, spec, results.get(spec.name), root) for spec in specs]
        _listing(out / f"{kind}.md", kind, specs, pages[kind])
    _comparisons(out / "published_vs_reproduced.md", list(results.values()), root, reports)
    _benchmarks(out / "benchmarks.md", reports / "benchmarks")
    _record(out / "report.md", manifest, list(results.values()), root, reports)


def mathjax_static(out: Path) -> Path:
    """A static folder holding ``mathjax/`` (MathJax 2 from the jupyter-server-mathjax wheel)."""
    import jupyter_server_mathjax

    static = out / "_mathjax"
    target = static / "mathjax"
    if not (target / "MathJax.js").is_file():
        shutil.copytree(Path(jupyter_server_mathjax.__file__).parent / "static", target, dirs_exist_ok=True)
    return static


# --------------------------------------------------------------------------- API


def _api(out: Path) -> None:
    out.mkdir(parents=True)
    lines = [
        "API reference",
        "=============",
        "",
        "Every public name of dpstats, from each module's ``__all__``; one page per name, from its docstring.",
        "Rows are people: data matrices are ``n_samples × n_features``.",
        "",
    ]
    documented: set[int] = set()  # objects re-exported by several modules get one page, under the first
    for module_name, (blurb, all_names) in api_sections().items():
        module = importlib.import_module(module_name)
        names = [
            n
            for n in all_names
            if not inspect.ismodule(getattr(module, n)) and _first_time(getattr(module, n), documented)
        ]
        if not names:
            continue
        lines += [
            f"``{module_name}``",
            "-" * (len(module_name) + 4),
            "",
            blurb,
            "",
            f".. currentmodule:: {module_name}",
            "",
            ".. autosummary::",
            "   :toctree: .",
            "",
            *[f"   {n}" for n in names],
            "",
        ]
    (out / "index.rst").write_text("\n".join(lines), encoding="utf-8")


def api_sections() -> dict[str, tuple[str, list[str]]]:
    """module -> (its blurb, the names it documents): first every family of :data:`dpstats.registry.FAMILIES`, with
    its declared releases (read from the registry, so a new release gets its page with its declaration alone)
    and then the rest of its ``__all__``; then the modules of :data:`API_MODULES`."""
    from dpstats import registry

    sections = {}
    for family in registry.FAMILIES:
        module = importlib.import_module(f"dpstats.{family}")
        declared = [d.name for d in registry.releases(family).values() if d.kind == "release"]
        blurb = (module.__doc__ or family).strip().split("\n\n")[0].replace("\n", " ")
        sections[f"dpstats.{family}"] = (blurb, declared + [n for n in module.__all__ if n not in declared])
    for module_name, blurb in API_MODULES.items():
        sections[module_name] = (blurb, list(importlib.import_module(module_name).__all__))
    return sections


def _first_time(obj, seen: set[int]) -> bool:
    """True the first time ``obj`` is met (and remember it); constants are always listed."""
    if not (inspect.isclass(obj) or inspect.isfunction(obj)):
        return True
    if id(obj) in seen:
        return False
    seen.add(id(obj))
    return True


# --------------------------------------------------------------------------- notebooks


def _notebook_page(folder: Path, spec, result, root: Path) -> str | None:
    """Copy the executed notebook of ``spec`` (if recorded) as ``folder/<name>.ipynb``; return its page name."""
    if result is None or result.notebook is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    notebook = json.loads(result.notebook.read_text(encoding="utf-8"))
    notebook.get("metadata", {}).pop("widgets", None)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = [o for o in cell.get("outputs", []) if WIDGET not in o.get("data", {})]
    _expand_parameters(notebook)
    note = copy.deepcopy(next(c for c in notebook["cells"] if c["cell_type"] == "markdown"))
    note.pop("id", None)
    note["source"] = [_provenance(spec, result, root)]
    first_markdown = next(i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "markdown")
    notebook["cells"].insert(first_markdown + 1, note)
    if notebook.get("nbformat_minor", 0) >= 5:
        note["id"] = f"dpstats-provenance-{spec.name}"
    (folder / f"{spec.name}.ipynb").write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")
    return spec.name


# a relation sign, then a parameter's name in backticks: "δ = `delta`", "k ≤ `max_groups`"
_NAMED_VALUE = re.compile(r"([=≈<>≤≥]\s*)`([A-Za-z_]\w*)`")


def parameter_values(notebook: dict) -> dict:
    """The parameters an executed notebook ran with: the literal defaults of its ``parameters`` cell, then what
    papermill injected (``metadata.papermill.parameters``)."""
    values = {}
    for cell in notebook["cells"]:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            for node in ast.parse("".join(cell["source"])).body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    try:
                        values[node.targets[0].id] = ast.literal_eval(node.value)
                    except ValueError:  # an expression, not a literal: left as its name
                        pass
    values.update(notebook.get("metadata", {}).get("papermill", {}).get("parameters", {}))
    return values


def _shown(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return str(value)


def _expand_parameters(notebook: dict) -> None:
    """Write the value beside every parameter the Markdown cells name after a relation sign."""
    values = parameter_values(notebook)

    def expand(match: re.Match) -> str:
        sign, name = match.groups()
        return f"{sign}{_shown(values[name])} (`{name}`)" if name in values else match.group(0)

    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = _NAMED_VALUE.sub(expand, "".join(cell["source"]))


def _provenance(spec, result, root: Path) -> str:
    source = spec.path.relative_to(root).as_posix()
    status = "ran without error" if result.ok else f"**failed**: `{result.error}`"
    profile = result.profile if result.profile == "full" else f"{result.profile} (not comparable with the paper)"
    return (
        f":::{{note}}\nRendered from the executed notebook of the last report run, not re-run for this page: "
        f"profile **{profile}**, git revision `{result.revision}`, run {result.started} UTC, "
        f"{result.seconds:.0f} s, {status}. Source: `{source}`; rerun it with "
        f"`dpstats report {spec.name} --profile full`.\n:::\n"
    )


def _listing(path: Path, kind: str, specs, pages) -> None:
    title = {"tutorials": "Tutorials", "papers": "Paper reproductions"}[kind]
    intro = {
        "tutorials": "One notebook per mechanism, an introduction to differential privacy and one on budgets.",
        "papers": "One notebook per reproduced paper or poster: what it reproduces, with which data and parameters, "
        "and where and why the result differs. Their published-vs-reproduced tables are gathered on "
        "[Published vs reproduced](published_vs_reproduced.md).",
    }[kind]
    lines = [f"# {title}", "", intro, "", "```{toctree}", ":maxdepth: 1", ""]
    lines += [f"{kind}/{page}" for page in pages if page]
    lines += ["```", ""]
    missing = [spec for spec, page in zip(specs, pages, strict=True) if not page]
    if missing:
        lines += ["Not yet in the report (run `make reports`):", ""]
        lines += [f"- {spec.title} (`{spec.name}`)" for spec in missing]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- report pages


def _comparisons(path: Path, results, root: Path, reports: Path) -> None:
    from dpstats.compendium.reports import comparison_markdown

    lines = [
        "# Published vs reproduced",
        "",
        "For each seed paper, every published number or claim beside this compendium's reproduction: the "
        "setting (ε, δ, n, k, data), the unit, the difference, the tolerance and a verdict with its reason. "
        "The verdict rule is in {mod}`dpstats.compendium.comparison`. The tables come from the last report run "
        f"(`{_where(reports, root)}`); each paper's notebook page shows how they were computed.",
        "",
        "**Covertype** (UCI, used by ICASSP 2016) is not in the project's shared data folder, so its rows say "
        "*not run*. With the file installed (`dpstats data fetch covtype`, about 11 MB, checked against its "
        "SHA-256) the ICASSP notebook adds the Covertype panels and fills those rows on the next "
        "`dpstats report icassp2016 --profile full`.",
        "",
    ]
    # the summary links to each paper's table on this page (MyST's heading anchors), each table to its notebook
    from myst_parser.slugs import github_slugify

    from dpstats.compendium.comparison import NOT_COMPARABLE

    def section(r) -> str:
        return "#" + github_slugify(r.title + (f" ({NOT_COMPARABLE})" if r.profile != "full" else ""))

    body = comparison_markdown(results, None, heading="#", link=section, source=lambda r: f"papers/{r.name}.ipynb")
    lines += body[1:] if body else ["No paper notebook has been run yet: run `make reports`."]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _benchmarks(path: Path, source: Path) -> None:
    lines = [
        "# Benchmarks",
        "",
        "Speed and utility against the floor (plain NumPy) and against diffprivlib, from `make bench` "
        "(results committed under `reports/benchmarks/`).",
        "",
    ]
    if (source / "results.md").is_file():
        for png in sorted(source.glob("*.png")):  # results.md links its figures by file name
            shutil.copy2(png, path.parent / png.name)
        lines += [source.joinpath("results.md").read_text(encoding="utf-8")]
    else:
        lines += ["No benchmark results yet: run `make bench`."]
    pca = source / "pca_peers"
    if (pca / "winners.md").is_file():  # the private-PCA benchmark's full grid (benchmarks/bench_pca_peers.py)
        lines += [
            "",
            "## The private-PCA benchmark: winners per cell",
            "",
            "Every PCA mechanism of dpstats against diffprivlib's and OpenDP's PCA "
            "(`python -m benchmarks.bench_pca_peers`; all cells, targets and fits under "
            "`reports/benchmarks/pca_peers/`; see also [Which private PCA](../guide/which_pca.md)).",
            "",
            pca.joinpath("winners.md").read_text(encoding="utf-8"),
        ]
        for png in sorted(pca.glob("*.png")):
            shutil.copy2(png, path.parent / png.name)
            lines += [f"![{png.stem}]({png.name})", ""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _record(path: Path, manifest, results, root: Path, reports: Path) -> None:
    lines = [
        "# The report record",
        "",
        f"What the site renders: the report folder `{_where(reports, root)}`, one executed notebook per entry "
        "of the manifest `notebooks/reports.toml`. `make reports` regenerates all of it with the full profile; "
        "`dpstats report NAME --profile full` reruns one notebook and keeps the others; quick runs go to "
        "`reports/_quick/` and never replace this record.",
        "",
        "| notebook | status | profile | git revision | run (UTC) | time |",
        "|---|---|---|---|---|---|",
    ]
    kinds = {spec.name: spec.path.parent.name for spec in manifest.notebooks.values()}
    for r in results:
        status = "ok" if r.ok else f"failed: {r.error}"
        page = f"[{r.title}]({kinds[r.name]}/{r.name}.ipynb)" if r.notebook else r.title
        lines.append(f"| {page} | {status} | {r.profile} | `{r.revision}` | {r.started} | {r.seconds:.0f} s |")
    environment = max(results, key=lambda r: r.started).environment if results else {}
    if environment:
        lines += [
            "",
            "Package versions of the latest run: " + ", ".join(f"{k} {v}" for k, v in environment.items()) + ".",
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _where(reports: Path, root: Path) -> str:
    try:
        return reports.relative_to(root).as_posix() + "/"
    except ValueError:
        return reports.name + "/ (outside the repository)"
