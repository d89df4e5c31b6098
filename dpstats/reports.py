"""Run the notebooks of the manifest with papermill and write a report folder with an index.

The manifest (``notebooks/reports.toml``) names every notebook of the report::

    seed = 2016                         # injected as `seed` into every notebook

    [notebooks.intro]
    path = "tutorials/intro_to_dp.ipynb"     # relative to the manifest
    title = "Introduction to differential privacy"
    quick = { n_seeds = 5 }             # parameters of the fast profile
    full = { n_seeds = 50 }             # parameters of the full profile

For every selected notebook, :func:`run_reports` executes it with papermill,
injecting the profile's parameters plus ``seed`` and ``output_dir`` (the
notebook's own folder of the report, where it saves figures as PNG and tables
as CSV), writes the executed ``.ipynb`` and an ``.html`` beside them, and
finally an ``index.md`` and ``index.html`` with the run time, profile, seed,
package versions and git revision. Tables whose file name contains
``published_vs_reproduced`` (a paper's printed numbers beside the reproduced
ones, with the difference and its explanation) are gathered at the top of the
index under "Published vs reproduced". A failing notebook does not stop the
others; it is marked in the index with its error.

Layout of the report folder::

    reports/
      index.md, index.html
      <name>/<name>.ipynb, <name>/<name>.html     (executed notebook)
      <name>/*.png, <name>/*.csv                  (figures, tables)
"""

from __future__ import annotations

import datetime as _dt
import html
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from ._validation import check_choice, check_int
from .exceptions import ParameterError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["Manifest", "NotebookResult", "NotebookSpec", "Report", "default_manifest", "load_manifest", "run_reports"]

PROFILES = ("quick", "full")
_VERSIONED = ("dpstats", "numpy", "scipy", "scikit-learn", "matplotlib", "papermill", "nbconvert")
_TABLE_ROWS = 40
COMPARISON_MARK = "published_vs_reproduced"
# Every notebook runs in the interpreter that runs the report (ipykernel's native kernel), whatever
# kernel name the notebook was saved with, so a report uses the environment it was started from.
_KERNEL = "python3"


@dataclass(frozen=True)
class NotebookSpec:
    """One manifest entry."""

    name: str
    path: Path
    title: str
    parameters: dict[str, dict]


@dataclass(frozen=True)
class Manifest:
    """The parsed manifest: a seed and the notebooks in manifest order."""

    path: Path
    seed: int
    notebooks: dict[str, NotebookSpec]

    def select(self, names=None) -> list[NotebookSpec]:
        """The specs for ``names`` (all when empty); an unknown name raises ParameterError listing the valid ones."""
        if not names:
            return list(self.notebooks.values())
        unknown = [n for n in names if n not in self.notebooks]
        if unknown:
            raise ParameterError(
                f"unknown notebook {', '.join(map(repr, unknown))}; valid names: {', '.join(self.notebooks)}"
            )
        return [self.notebooks[n] for n in dict.fromkeys(names)]


@dataclass
class NotebookResult:
    """What running one notebook produced."""

    name: str
    title: str
    ok: bool
    seconds: float
    error: str = ""
    notebook: Path | None = None
    html: Path | None = None
    figures: list[Path] = field(default_factory=list)
    tables: list[Path] = field(default_factory=list)


@dataclass
class Report:
    """The outcome of :func:`run_reports`."""

    out: Path
    profile: str
    seed: int
    results: list[NotebookResult]
    seconds: float
    manifest: Path

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)


def default_manifest() -> Path:
    """``notebooks/reports.toml`` under the current folder, else beside the installed (editable) package."""
    here = Path.cwd() / "notebooks" / "reports.toml"
    if here.is_file():
        return here
    return Path(__file__).resolve().parents[1] / "notebooks" / "reports.toml"


def load_manifest(path: str | Path | None = None) -> Manifest:
    """Read and check a manifest (see the module docstring for its format)."""
    path = Path(path) if path is not None else default_manifest()
    if not path.is_file():
        raise FileNotFoundError(f"report manifest not found: {path}")
    with path.open("rb") as handle:
        raw = tomllib.load(handle)
    seed = check_int(raw.get("seed", 0), f"seed in {path}", low=0)
    entries = raw.get("notebooks")
    if not isinstance(entries, dict) or not entries:
        raise ParameterError(f"{path} must hold a non-empty [notebooks] table")
    notebooks = {}
    for name, entry in entries.items():
        missing = [key for key in ("path", *PROFILES) if key not in entry]
        if missing:
            raise ParameterError(f"{path}: notebook {name!r} lacks {', '.join(missing)}")
        notebooks[name] = NotebookSpec(
            name=name,
            path=(path.parent / entry["path"]).resolve(),
            title=entry.get("title", name),
            parameters={p: dict(entry[p]) for p in PROFILES},
        )
    return Manifest(path=path.resolve(), seed=seed, notebooks=notebooks)


def run_reports(names=None, *, profile: str = "quick", out: str | Path = "reports", jobs: int = 1,
                manifest: str | Path | Manifest | None = None, progress: bool = True) -> Report:
    """Execute the selected notebooks and write the report folder and its index.

    Parameters
    ----------
    names : sequence of str, optional
        Manifest names to run; all by default.
    profile : {"quick", "full"}, default "quick"
    out : path, default "reports"
    jobs : int, default 1
        Notebooks run in parallel (separate processes).
    manifest : path or Manifest, optional
        Default :func:`default_manifest`.
    progress : bool, default True
        Show a progress bar of notebooks done.

    Returns
    -------
    Report
        ``report.ok`` is False when any notebook failed.
    """
    from tqdm.auto import tqdm

    check_choice(profile, "profile", PROFILES)
    jobs = check_int(jobs, "jobs")
    if not isinstance(manifest, Manifest):
        manifest = load_manifest(manifest)
    specs = manifest.select(names)
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    tasks = [(spec, profile, manifest.seed, out) for spec in specs]
    start = time.perf_counter()
    started = _dt.datetime.now(_dt.timezone.utc)
    with tqdm(total=len(tasks), desc=f"notebooks ({profile})", unit="nb", disable=not progress) as bar:
        if jobs == 1:
            results = []
            for task in tasks:
                results.append(_run_one(*task))
                bar.update()
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor, as_completed

            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context) as pool:
                futures = {pool.submit(_run_one, *task): task[0].name for task in tasks}
                done = {}
                for future in as_completed(futures):
                    done[futures[future]] = future.result()
                    bar.update()
            results = [done[spec.name] for spec in specs]
    report = Report(out=out, profile=profile, seed=manifest.seed, results=results,
                    seconds=time.perf_counter() - start, manifest=manifest.path)
    _write_index(report, started)
    return report


def _run_one(spec: NotebookSpec, profile: str, seed: int, out: Path) -> NotebookResult:
    """Execute one notebook with papermill and convert it to HTML; never raises."""
    import papermill

    folder = out / spec.name
    folder.mkdir(parents=True, exist_ok=True)
    executed = folder / f"{spec.name}.ipynb"
    parameters = {"seed": seed, **spec.parameters[profile], "output_dir": str(folder)}
    start = time.perf_counter()
    error = ""
    try:
        papermill.execute_notebook(
            str(spec.path), str(executed), parameters=parameters, cwd=str(spec.path.parent),
            kernel_name=_KERNEL, progress_bar=False, log_output=False,
        )
    except Exception as err:  # any failure is recorded in the index, the other notebooks still run
        error = _describe(err)
    seconds = time.perf_counter() - start
    page = None
    if executed.is_file():
        try:
            page = _to_html(executed)
        except Exception as err:  # a broken conversion is reported like a broken notebook
            error = error or f"HTML conversion failed: {_describe(err)}"
    return NotebookResult(
        name=spec.name, title=spec.title, ok=not error, seconds=seconds, error=error,
        notebook=executed if executed.is_file() else None, html=page,
        figures=sorted(folder.glob("*.png")), tables=sorted(folder.glob("*.csv")),
    )


def _describe(err: BaseException) -> str:
    ename, evalue = getattr(err, "ename", None), getattr(err, "evalue", None)
    text = f"{ename}: {evalue}" if ename else f"{type(err).__name__}: {err}"
    return text.strip().splitlines()[0] if text.strip() else type(err).__name__


def _to_html(notebook: Path) -> Path:
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(nbformat.read(notebook, as_version=4))
    target = notebook.with_suffix(".html")
    target.write_text(body, encoding="utf-8")
    return target


# --------------------------------------------------------------------------- index


def _environment() -> dict[str, str]:
    info = {"python": platform.python_version()}
    for package in _VERSIONED:
        try:
            info[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            info[package] = "not installed"
    return info


def git_revision(folder: Path) -> str:
    """``git describe``-style revision of the repository holding ``folder`` (``+dirty`` if modified)."""
    try:
        rev = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=folder, capture_output=True,
                             text=True, check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=folder,
                               capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return rev + ("+dirty" if dirty else "")


def _read_table(path: Path) -> list[list[str]]:
    import csv

    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))[: _TABLE_ROWS + 1]


def _header(report: Report, started: _dt.datetime) -> list[tuple[str, str]]:
    failed = sum(not r.ok for r in report.results)
    return [
        ("started (UTC)", started.strftime("%Y-%m-%d %H:%M:%S")),
        ("run time", f"{report.seconds:.1f} s"),
        ("profile", report.profile),
        ("seed", str(report.seed)),
        ("git revision", git_revision(report.manifest.parent)),
        ("manifest", str(report.manifest)),
        ("notebooks", f"{len(report.results)} run, {failed} failed"),
        *[(k, v) for k, v in _environment().items()],
    ]


def _write_index(report: Report, started: _dt.datetime) -> None:
    header = _header(report, started)
    (report.out / "index.md").write_text(_index_md(report, header), encoding="utf-8")
    (report.out / "index.html").write_text(_index_html(report, header), encoding="utf-8")


def _rel(report: Report, path: Path) -> str:
    return path.relative_to(report.out).as_posix()


def _index_md(report: Report, header) -> str:
    lines = ["# dpstats report", "", "| | |", "|---|---|", *[f"| {k} | {v} |" for k, v in header], ""]
    lines += ["| notebook | status | time | executed |", "|---|---|---|---|"]
    for r in report.results:
        status = "ok" if r.ok else f"**FAILED**: {r.error}"
        links = " · ".join(f"[{p.suffix[1:]}]({_rel(report, p)})" for p in (r.html, r.notebook) if p)
        lines.append(f"| [{r.title}](#{r.name}) | {status} | {r.seconds:.1f} s | {links} |")
    comparisons = [(r, t) for r in report.results for t in r.tables if _is_comparison(t)]
    if comparisons:
        lines += ["", "## Published vs reproduced"]
        for r, table in comparisons:
            lines += _table_md(report, table, f"{r.title}: {table.name}")
    for r in report.results:
        lines += ["", f"## {r.title}", f'<a id="{r.name}"></a>', ""]
        if not r.ok:
            lines += [f"**FAILED**: `{r.error}`", ""]
        lines += [f"![{p.stem}]({_rel(report, p)})" for p in r.figures]
        for table in r.tables:
            if not _is_comparison(table):
                lines += _table_md(report, table, table.name)
    return "\n".join(lines) + "\n"


def _is_comparison(table: Path) -> bool:
    return COMPARISON_MARK in table.stem


def _table_md(report: Report, table: Path, caption: str) -> list[str]:
    rows = _read_table(table)
    lines = ["", f"**{caption}** ([csv]({_rel(report, table)}))", ""]
    if rows:
        lines += ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
    return lines


def _table_html(report: Report, table: Path, caption: str) -> list[str]:
    esc = html.escape
    parts = [f"<h3><a href='{esc(_rel(report, table))}'>{esc(caption)}</a></h3><table>"]
    for i, row in enumerate(_read_table(table)):
        cell = "th" if i == 0 else "td"
        parts.append("<tr>" + "".join(f"<{cell}>{esc(c)}</{cell}>" for c in row) + "</tr>")
    parts.append("</table>")
    return parts


def _index_html(report: Report, header) -> str:
    esc = html.escape
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>dpstats report</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:3px 8px}.failed{color:#b00;font-weight:bold}"
             "img{max-width:100%}</style></head><body><h1>dpstats report</h1><table>"]
    parts += [f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in header]
    parts.append("</table><h2>Notebooks</h2><table><tr><th>notebook</th><th>status</th><th>time</th>"
                 "<th>executed</th></tr>")
    for r in report.results:
        status = "ok" if r.ok else f"<span class='failed'>FAILED</span>: {esc(r.error)}"
        links = " ".join(f"<a href='{esc(_rel(report, p))}'>{p.suffix[1:]}</a>" for p in (r.html, r.notebook) if p)
        parts.append(f"<tr><td><a href='#{esc(r.name)}'>{esc(r.title)}</a></td><td>{status}</td>"
                     f"<td>{r.seconds:.1f} s</td><td>{links}</td></tr>")
    parts.append("</table>")
    comparisons = [(r, t) for r in report.results for t in r.tables if _is_comparison(t)]
    if comparisons:
        parts.append("<h2>Published vs reproduced</h2>")
        for r, table in comparisons:
            parts += _table_html(report, table, f"{r.title}: {table.name}")
    for r in report.results:
        parts.append(f"<h2 id='{esc(r.name)}'>{esc(r.title)}</h2>")
        if not r.ok:
            parts.append(f"<p class='failed'>FAILED: {esc(r.error)}</p>")
        parts += [f"<img src='{esc(_rel(report, p))}' alt='{esc(p.stem)}'>" for p in r.figures]
        for table in r.tables:
            if not _is_comparison(table):
                parts += _table_html(report, table, table.name)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
