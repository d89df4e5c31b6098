"""Run the notebooks of the manifest with papermill and keep the report folder as a record.

The manifest (``notebooks/reports.toml``) names every notebook of the report::

    seed = 2016                         # injected as `seed` into every notebook

    [notebooks.intro]
    path = "tutorials/intro_to_dp.ipynb"     # relative to the manifest
    title = "Introduction to differential privacy"
    quick = { n_seeds = 5 }             # parameters of the fast profile
    full = { n_seeds = 50 }             # parameters of the full profile

For every selected notebook, :func:`run_reports` executes it with papermill, injecting the profile's parameters
plus ``seed`` and ``output_dir`` (the notebook's own folder of the report, where it saves figures as PNG and tables
as CSV), and writes the executed ``.ipynb`` (with its figures) and a ``run.json`` (profile, seed, time, git
revision, package versions, status) into that folder. A failing notebook does not stop the others.

**Where the manifest is.** :func:`default_manifest` looks for ``notebooks/reports.toml`` in the current folder and
each folder above it (any folder of a clone), then beside the installed package (an editable install's clone), and
otherwise raises an error that names ``--manifest``.

**Changed parameters.** ``changes`` (``dpstats report NAME -p key=value``) runs one notebook with some parameters
changed: each key must be assigned in the notebook's ``parameters`` cell, and its value must have the type of the
default there (an int where a float is expected is fine). Such a run is never the record: it goes to
``reports/_quick/`` (whatever the profile) or ``out``, never into ``reports/`` itself, and its ``run.json`` names
the changes.

**The record cannot be clobbered.** ``reports/`` holds the committed full-profile record; a quick run writes to
``reports/_quick/`` by default (git-ignored), and refuses to overwrite a notebook folder that holds a full-profile
run (pass another ``out`` to put it elsewhere). A partial run (some names) replaces only the folders of the
notebooks it ran: the index is rebuilt from every notebook folder's ``run.json``, so the notebooks that did not
run keep their results, revision and date.

**The index** (``index.md``, no machine paths: the manifest is named relative to the repository, links are
relative to the report folder and point only at committed files) lists every notebook with its status, profile,
git revision, date and time, then gathers the tables whose file name contains ``published_vs_reproduced`` (a
paper's published numbers or claims beside the reproduced ones, see :mod:`dpstats.compendium.comparison`) under
"Published vs reproduced", with a count of verdicts per paper, then each notebook's figures and other tables.
The HTML view of the report is the documentation site (``make docs``), which renders the executed notebooks.

Layout of the report folder::

    reports/
      index.md
      <name>/<name>.ipynb, <name>/run.json     (executed notebook, what ran)
      <name>/*.png, <name>/*.csv               (figures, tables)
      _quick/...                               (quick runs, same layout, not committed)
"""

from __future__ import annotations

import ast
import datetime as _dt
import json
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from .._validation import check_choice, check_int
from ..exceptions import ParameterError
from .runner import execute, relative, summarize_error

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "Manifest",
    "NotebookResult",
    "NotebookSpec",
    "Report",
    "check_changes",
    "default_manifest",
    "default_out",
    "git_revision",
    "list_reports",
    "load_manifest",
    "notebook_parameters",
    "parse_changes",
    "read_record",
    "run_reports",
    "write_index",
]

PROFILES = ("quick", "full")
QUICK_FOLDER = "_quick"
RUN_FILE = "run.json"
COMPARISON_MARK = "published_vs_reproduced"
VERDICT_COLUMN = "verdict"
_VERSIONED = ("dpstats", "numpy", "scipy", "scikit-learn", "matplotlib", "papermill")
_TABLE_ROWS = 40


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

    @property
    def root(self) -> Path:
        """The repository: the folder above the manifest's ``notebooks/`` folder."""
        return self.path.parent.parent

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
    """The record of one notebook's last run in a report folder (its ``run.json`` and files)."""

    name: str
    title: str
    ok: bool
    seconds: float
    error: str = ""
    profile: str = "unknown"
    revision: str = "unknown"
    started: str = "unknown"
    environment: dict = field(default_factory=dict)
    notebook: Path | None = None
    figures: list[Path] = field(default_factory=list)
    tables: list[Path] = field(default_factory=list)


@dataclass
class Report:
    """The outcome of :func:`run_reports`: what ran now, and the whole record the index was rebuilt from."""

    out: Path
    profile: str
    seed: int
    ran: list[NotebookResult]
    results: list[NotebookResult]
    seconds: float
    manifest: Path

    @property
    def ok(self) -> bool:
        """False when a notebook of this run failed."""
        return all(r.ok for r in self.ran)


MANIFEST = Path("notebooks") / "reports.toml"


def default_manifest() -> Path:
    """``notebooks/reports.toml`` in the current folder or the nearest folder above it that has one (any folder
    of a clone), else in the clone the package is installed from (an editable install). Raises
    :class:`FileNotFoundError` naming ``--manifest`` when there is none."""
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / MANIFEST).is_file():
            return folder / MANIFEST
    beside = Path(__file__).resolve().parents[2] / MANIFEST  # dpstats/compendium/reports.py -> the clone
    if beside.is_file():
        return beside
    raise FileNotFoundError(
        f"no report manifest: {MANIFEST.as_posix()} is neither in {here} or a folder above it, nor in the clone "
        f"dpstats is installed from ({beside.parent.parent}). Run from a clone of the dpstats repository, or pass "
        "--manifest PATH (the reports.toml of a clone)"
    )


def default_out(profile: str, manifest: Manifest) -> Path:
    """``reports/`` of the repository for the full profile, ``reports/_quick/`` for the quick one."""
    check_choice(profile, "profile", PROFILES)
    out = manifest.root / "reports"
    return out if profile == "full" else out / QUICK_FOLDER


def load_manifest(path: str | Path | None = None) -> Manifest:
    """Read and check a manifest (see the module docstring for its format)."""
    path = Path(path) if path is not None else default_manifest()
    if not path.is_file():
        raise FileNotFoundError(f"report manifest not found: {path} (pass --manifest PATH, a clone's {MANIFEST})")
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


def list_reports(manifest: str | Path | Manifest | None = None) -> list[str]:
    """Lines for ``dpstats report --list``: each report's name and notebook (relative to the repository), then
    what it shows (its title), in manifest order."""
    if not isinstance(manifest, Manifest):
        manifest = load_manifest(manifest)
    width = max(len(name) for name in manifest.notebooks) + 2
    lines = []
    for spec in manifest.notebooks.values():
        lines += [f"{spec.name:<{width}}{relative(spec.path, manifest.root)}", f"{'':<{width}}{spec.title}"]
    return lines


_ANY = object()  # a parameter whose default is an expression: any value is taken


def notebook_parameters(path: str | Path) -> dict:
    """The parameters of a notebook: the names its ``parameters`` cell assigns, with their literal defaults
    (a default that is an expression, not a literal, takes any value)."""
    notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    cells = [c for c in notebook["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    if not cells:
        raise ParameterError(f"{Path(path).name} has no cell tagged 'parameters'")
    values = {}
    for node in ast.parse("".join(cells[0]["source"])).body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    try:
                        values[target.id] = ast.literal_eval(node.value)
                    except ValueError:
                        values[target.id] = _ANY
    return values


def parse_changes(pairs) -> dict:
    """``["k=v", ...]`` (``-p k=v``) as a dict; each value read as a Python literal (``3``, ``0.5``, ``[1, 2]``,
    ``'text'``), else as the text itself."""
    changes = {}
    for pair in pairs or ():
        key, sep, text = str(pair).partition("=")
        if not sep or not key.strip().isidentifier():
            raise ParameterError(f"-p takes key=value (a parameter name, '=', a value); got {pair!r}")
        try:
            changes[key.strip()] = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            changes[key.strip()] = text.strip()
    return changes


def check_changes(spec: NotebookSpec, changes: dict) -> dict:
    """``changes`` if every key is a parameter of the notebook and every value has its default's type; else a
    ParameterError naming the key, the value and what is allowed (nothing has run)."""
    defaults = notebook_parameters(spec.path)
    for key, value in changes.items():
        if key == "output_dir":
            raise ParameterError("output_dir is set by the runner (use --out for the report folder)")
        if key not in defaults:
            names = ", ".join(k for k in defaults if k != "output_dir")
            raise ParameterError(f"{spec.name} has no parameter {key!r}; its parameters: {names}")
        default = defaults[key]
        if default is _ANY or default is None or _same_type(value, default):
            continue
        raise ParameterError(
            f"{spec.name}: parameter {key}={value!r} must be {_KIND.get(type(default), 'of the type of')} like "
            f"its default {default!r}"
        )
    return dict(changes)


_KIND = {bool: "True or False", int: "an integer", float: "a number", str: "a string", list: "a list", tuple: "a list"}


def _same_type(value, default) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, (list, tuple)):
        return isinstance(value, (list, tuple))
    return isinstance(value, type(default))


def run_reports(
    names=None,
    *,
    profile: str = "quick",
    out: str | Path | None = None,
    jobs: int = 1,
    manifest: str | Path | Manifest | None = None,
    progress: bool = True,
    interval: float = 15.0,
    changes: dict | None = None,
) -> Report:
    """Execute the selected notebooks, record each in its folder, and rebuild the index of the report folder.

    Parameters
    ----------
    names : sequence of str, optional
        Manifest names to run; all by default. The other notebooks keep their recorded results.
    profile : {"quick", "full"}, default "quick"
    out : path, optional
        The report folder; default :func:`default_out` (``reports/`` for full, ``reports/_quick/`` for quick).
    jobs : int, default 1
        Notebooks run in parallel (separate processes).
    manifest : path or Manifest, optional
        Default :func:`default_manifest`.
    progress : bool, default True
        Print a line when a notebook starts and ends, and every ``interval`` seconds while it runs: elapsed time,
        cell, and the notebook's own progress bar (on stderr).
    interval : float, default 15
        Seconds between progress lines.
    changes : dict, optional
        Parameters changed for this run (one notebook only; checked against its ``parameters`` cell, see the
        module docstring). The run goes to ``reports/_quick/`` or ``out``, never into the record.

    Returns
    -------
    Report
        ``report.ok`` is False when a notebook of this run failed.

    Raises
    ------
    ParameterError
        An unknown name, or a quick run that would overwrite a full-profile record.
    """
    check_choice(profile, "profile", PROFILES)
    jobs = check_int(jobs, "jobs")
    if not isinstance(manifest, Manifest):
        manifest = load_manifest(manifest)
    specs = manifest.select(names)
    changes = dict(changes or {})
    if changes:
        if len(specs) != 1:
            raise ParameterError(
                f"-p changes the parameters of one notebook: name one ({', '.join(manifest.notebooks)})"
            )
        check_changes(specs[0], changes)
        out = Path(out if out is not None else default_out("quick", manifest)).resolve()
        if out == (manifest.root / "reports").resolve():
            raise ParameterError(
                f"a run with changed parameters never writes into the record {out}; it goes to "
                f"reports/{QUICK_FOLDER}/ by default, or pass another --out"
            )
    else:
        out = Path(out if out is not None else default_out(profile, manifest)).resolve()
    if profile != "full" or changes:
        _refuse_to_overwrite_full(out, specs)
    out.mkdir(parents=True, exist_ok=True)
    live = interval if progress else None
    tasks = [(spec, profile, manifest.seed, out, manifest.root, live, changes) for spec in specs]
    start = time.perf_counter()
    say = (lambda text: print(text, file=sys.stderr, flush=True)) if progress else (lambda text: None)
    say(f"dpstats report: {len(tasks)} notebook(s), {profile} profile, into {out}")
    done: dict[str, NotebookResult] = {}

    def finished(result: NotebookResult) -> None:
        done[result.name] = result
        status = "ok" if result.ok else f"FAILED: {result.error}"
        say(f"[{len(done)}/{len(tasks)}] {result.name} done in {result.seconds:.1f} s: {status}")

    if jobs == 1:
        for task in tasks:
            say(f"[{len(done) + 1}/{len(tasks)}] {task[0].name} started")
            finished(_run_one(*task))
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context) as pool:
            futures = [pool.submit(_run_one, *task) for task in tasks]
            for future in as_completed(futures):
                finished(future.result())
    results = write_index(out, manifest)
    return Report(
        out=out,
        profile=profile,
        seed=manifest.seed,
        ran=[done[spec.name] for spec in specs],
        results=results,
        seconds=time.perf_counter() - start,
        manifest=manifest.path,
    )


def _refuse_to_overwrite_full(out: Path, specs) -> None:
    """A quick run may not replace a notebook folder whose recorded run has the full profile."""
    full = [spec.name for spec in specs if _recorded_profile(out, spec.name) == "full"]
    if full:
        raise ParameterError(
            f"{out} holds the full-profile record of {', '.join(full)}; a quick run would overwrite it. "
            f"Quick runs go to reports/{QUICK_FOLDER}/ by default; pass another --out to put this one elsewhere"
        )


def _recorded_profile(out: Path, name: str) -> str:
    run = out / name / RUN_FILE
    if run.is_file():
        record = json.loads(run.read_text(encoding="utf-8"))
        return "changed" if record.get("changed") else record.get("profile", "unknown")
    return _legacy_header(out).get("profile", "unknown") if (out / name / f"{name}.ipynb").is_file() else "none"


def _legacy_header(out: Path) -> dict[str, str]:
    """The ``| key | value |`` header of an index.md written before run.json existed (profile, revision, date)."""
    index = out / "index.md"
    if not index.is_file():
        return {}
    header = {}
    for line in index.read_text(encoding="utf-8").splitlines()[:12]:
        match = re.fullmatch(r"\| (profile|git revision|started \(UTC\)) \| (.+) \|", line)
        if match:
            header[match.group(1)] = match.group(2)
    return header


def _run_one(
    spec: NotebookSpec,
    profile: str,
    seed: int,
    out: Path,
    root: Path,
    interval: float | None,
    changes: dict | None = None,
) -> NotebookResult:
    """Execute one notebook with papermill (the profile's parameters, then ``changes``) and write its run.json;
    never raises."""
    folder = out / spec.name
    folder.mkdir(parents=True, exist_ok=True)
    for stale in [*folder.glob("*.png"), *folder.glob("*.csv"), folder / RUN_FILE]:
        stale.unlink(missing_ok=True)  # the folder shows this run only
    executed = folder / f"{spec.name}.ipynb"
    # output_dir relative to the notebook's working directory: no machine path in the executed notebook
    parameters = {"seed": seed, **spec.parameters[profile], **(changes or {})}
    parameters["output_dir"] = relative(folder, spec.path.parent)
    started = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    revision = git_revision(root, report=out)  # before the run: what it writes into the report is not a change
    start = time.perf_counter()
    try:
        error = execute(spec.path, executed, parameters, name=spec.name, root=root, interval=interval)
    except Exception as err:  # papermill or the kernel could not even start
        error = summarize_error(err)
    record = {
        "name": spec.name,
        "title": spec.title,
        "ok": not error,
        "seconds": round(time.perf_counter() - start, 1),
        "error": error,
        "profile": profile,
        "seed": seed,
        "revision": revision,
        "started": started,
        "environment": _environment(),
    }
    if changes:
        record["changed"] = dict(changes)
    (folder / RUN_FILE).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return _result(folder, record)


def _result(folder: Path, record: dict) -> NotebookResult:
    notebook = folder / f"{folder.name}.ipynb"
    return NotebookResult(
        name=folder.name,
        title=record.get("title", folder.name),
        ok=bool(record.get("ok", True)),
        seconds=float(record.get("seconds", float("nan"))),
        error=record.get("error", ""),
        profile=record.get("profile", "unknown"),
        revision=record.get("revision", "unknown"),
        started=record.get("started", "unknown"),
        environment=record.get("environment", {}),
        notebook=notebook if notebook.is_file() else None,
        figures=sorted(folder.glob("*.png")),
        tables=sorted(folder.glob("*.csv")),
    )


def read_record(out: str | Path, manifest: str | Path | Manifest | None = None) -> list[NotebookResult]:
    """The recorded results in a report folder, in manifest order (notebooks without a folder are left out).

    A folder written before ``run.json`` existed is read from its files, with the profile and revision of the old
    index's header.
    """
    out = Path(out)
    if not isinstance(manifest, Manifest):
        manifest = load_manifest(manifest)
    legacy = _legacy_header(out)
    results = []
    for spec in manifest.notebooks.values():
        folder = out / spec.name
        run = folder / RUN_FILE
        if run.is_file():
            record = json.loads(run.read_text(encoding="utf-8"))
        elif (folder / f"{spec.name}.ipynb").is_file():
            record = {
                "ok": True,
                "profile": legacy.get("profile", "unknown"),
                "revision": legacy.get("git revision", "unknown"),
                "started": legacy.get("started (UTC)", ""),
            }
        else:
            continue
        results.append(_result(folder, {**record, "title": spec.title}))
    return results


def git_revision(folder: Path, report: Path | None = None) -> str:
    """The short commit of the repository holding ``folder``, ``+dirty`` if tracked files are modified.

    Files under ``report`` (the report's own output folder) do not count: regenerating the committed report
    modifies them by design, and the code that produced it is what the revision identifies.
    """
    inside = report is not None and Path(report).resolve().is_relative_to(Path(folder).resolve())
    exclude = [f":(exclude){relative(report, folder)}"] if inside else []
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ":/", *exclude],
            cwd=folder,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return rev + ("+dirty" if dirty else "")


def _environment() -> dict[str, str]:
    info = {"python": platform.python_version()}
    for package in _VERSIONED:
        try:
            info[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            info[package] = "not installed"
    return info


# --------------------------------------------------------------------------- index


def write_index(out: str | Path, manifest: str | Path | Manifest | None = None) -> list[NotebookResult]:
    """Rebuild ``out/index.md`` from the recorded notebooks (:func:`read_record`) and return them."""
    out = Path(out)
    if not isinstance(manifest, Manifest):
        manifest = load_manifest(manifest)
    results = read_record(out, manifest)
    lines = ["# dpstats report", "", "| | |", "|---|---|", *[f"| {k} | {v} |" for k, v in _header(results, manifest)]]
    lines += [
        "",
        "| notebook | status | profile | git revision | run (UTC) | time | executed notebook |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        status = "ok" if r.ok else f"**FAILED**: {r.error}"
        link = f"[{r.notebook.name}]({relative(r.notebook, out)})" if r.notebook else "—"
        lines.append(
            f"| [{r.title}](#{r.name}) | {status} | {r.profile} | {r.revision} | {r.started} | "
            f"{r.seconds:.1f} s | {link} |"
        )
    lines += ["", *comparison_markdown(results, out, heading="##")]
    for r in results:
        lines += ["", f"## {r.title}", f'<a id="{r.name}"></a>', ""]
        if not r.ok:
            lines += [f"**FAILED**: `{r.error}`", ""]
        lines += [f"![{p.stem}]({relative(p, out)})" for p in r.figures]
        for table in r.tables:
            if not is_comparison(table):
                lines += table_markdown(table, f"{table.name}", relative(table, out))
    (out / "index.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return results


def _header(results: list[NotebookResult], manifest: Manifest) -> list[tuple[str, str]]:
    latest = max(results, key=lambda r: r.started, default=None)
    profiles = sorted({r.profile for r in results})
    profile = profiles[0] if len(profiles) == 1 else "mixed: " + ", ".join(profiles)
    if any(p != "full" for p in profiles):
        profile += " (quick-profile numbers are not comparable with the papers)"
    failed = sum(not r.ok for r in results)
    return [
        ("last run (UTC)", latest.started if latest else "—"),
        ("profile", profile),
        ("seed", str(manifest.seed)),
        ("git revision", ", ".join(sorted({r.revision for r in results})) or "—"),
        ("manifest", relative(manifest.path, manifest.root)),
        ("notebooks", f"{len(results)} recorded, {failed} failed"),
        *(latest.environment.items() if latest else []),
    ]


def is_comparison(table: Path) -> bool:
    """A table gathered under "Published vs reproduced" (its file name contains ``published_vs_reproduced``)."""
    return COMPARISON_MARK in table.stem


def read_table(path: Path, limit: int | None = _TABLE_ROWS) -> list[list[str]]:
    """The rows of a CSV table, header first (at most ``limit`` data rows)."""
    import csv

    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows if limit is None else rows[: limit + 1]


def table_markdown(table: Path, caption: str, link: str | None = None, limit: int | None = _TABLE_ROWS) -> list[str]:
    """A CSV table as Markdown lines under a bold caption (linked to the CSV when ``link`` is given)."""
    rows = read_table(table, limit)
    title = f"**{caption}** ([csv]({link}))" if link else f"**{caption}**"
    lines = ["", title, ""]
    if rows:
        cells = [[cell.replace("|", "\\|").replace("\n", " ") for cell in row] for row in rows]
        lines += ["| " + " | ".join(cells[0]) + " |", "|" + "---|" * len(cells[0])]
        lines += ["| " + " | ".join(row) + " |" for row in cells[1:]]
    return lines


def table_verdicts(table: Path) -> list[str]:
    """The verdict of every row of a comparison table (none if it has no ``verdict`` column)."""
    rows = read_table(table, limit=None)
    if not rows or VERDICT_COLUMN not in rows[0]:
        return []
    column = rows[0].index(VERDICT_COLUMN)
    return [row[column] for row in rows[1:]]


def comparison_markdown(
    results: list[NotebookResult],
    out: Path | None,
    heading: str = "##",
    link=lambda result: f"#{result.name}",
    source=None,
) -> list[str]:
    """The "Published vs reproduced" section: verdict counts per paper, then every comparison table.

    ``out`` is the report folder the CSV links are made relative to; None leaves the tables unlinked.
    ``link(result)`` is where a paper's title points (default: its section of the index). ``source(result)``, if
    given, is the page of the notebook that computed a table, linked under the table's heading.
    """
    found = [(r, t) for r in results for t in r.tables if is_comparison(t)]
    if not found:
        return []
    from .comparison import NOT_COMPARABLE, VERDICTS, verdict_counts

    lines = [
        f"{heading} Published vs reproduced",
        "",
        "One table per paper: each published number or claim, the setting, our reproduction, the difference, "
        "the tolerance, a verdict and its reason. Tables of a quick-profile run are marked "
        f"*{NOT_COMPARABLE}*: their settings are far smaller than the papers'.",
        "",
        "| paper | profile | " + " | ".join(VERDICTS) + " |",
        "|---|---|" + "---|" * len(VERDICTS),
    ]
    for r, table in found:
        counts = verdict_counts(table_verdicts(table))
        lines.append(
            f"| [{r.title}]({link(r)}) | {r.profile} | " + " | ".join(str(counts.get(v, 0)) for v in VERDICTS) + " |"
        )
    for r, table in found:
        note = f" ({NOT_COMPARABLE})" if r.profile != "full" else ""
        lines += ["", f"{heading}# {r.title}{note}"]
        if source is not None:
            lines += ["", f"Computed in [the notebook]({source(r)})."]
        lines += table_markdown(table, table.name, relative(table, out) if out else None, limit=None)
    return lines
