"""Sweeps, error bars, figures and tables shared by the notebooks.

Every notebook of the compendium repeats a mechanism over a grid (ε, n, δ, ...)
and several seeds, plots the mean with error bars and saves figures (PNG) and
tables (CSV) into the folder the report runner gives it (``output_dir``). This
module holds that code once, so the notebooks stay short and agree with each
other.

Seeding: the run for grid point ``i`` and repetition ``j`` uses the generator
``numpy.random.default_rng([seed, i, j])``, so a sweep is reproducible from its
seed alone, every cell is an independent stream, and enlarging the grid or the
number of repetitions leaves the existing cells unchanged.
"""

from __future__ import annotations

import csv
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from .._validation import check_int

__all__ = [
    "Table",
    "mean_and_error",
    "output_folder",
    "plot_sweep",
    "progress",
    "save_figure",
    "save_table",
    "sweep",
]


def output_folder(output_dir: str | Path | None) -> Path | None:
    """The folder a notebook writes its figures and tables into: ``output_dir``, created if needed.

    None means "show, do not save": :func:`save_figure` and :func:`save_table` then write nothing. (A temporary
    folder would outlive a kernel that is killed rather than shut down, as nbval does after every notebook, and
    fill /tmp; the report runner always passes a folder.)
    """
    if output_dir is None:
        return None
    folder = Path(output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def progress(iterable=None, **options):
    """A tqdm progress bar over ``iterable`` (``options`` go to tqdm: ``total``, ``desc``, ``disable``, ...).

    Interactively it is tqdm's automatic choice (a widget in Jupyter). Under the report runner, which sets the
    environment variable ``DPSTATS_PROGRESS=text`` in the notebook's kernel, it is a plain-text bar on stderr,
    redrawn at most once a second: the runner streams it to the terminal while the cell runs, and the executed
    notebook keeps only its final state.
    """
    if os.environ.get("DPSTATS_PROGRESS") == "text":
        from tqdm.std import tqdm

        options = {"file": sys.stderr, "mininterval": 1.0, **options}
    else:
        from tqdm.auto import tqdm
    return tqdm(iterable, **options)


_progress_bar = progress  # sweep's own parameter is called `progress`


def sweep(
    fn: Callable[[object, np.random.Generator], object],
    grid: Sequence,
    *,
    n_seeds: int,
    seed: int,
    desc: str | None = None,
    progress: bool = True,
) -> np.ndarray:
    """Run ``fn(value, rng)`` for every grid value and ``n_seeds`` independent generators.

    Parameters
    ----------
    fn : callable
        ``fn(value, rng)`` returns a number or a fixed-length array of numbers
        (several metrics of one run).
    grid : sequence
        The values swept (ε, n, ...); any objects ``fn`` accepts.
    n_seeds : int
        Repetitions per grid value.
    seed : int
        Root seed; cell (i, j) uses ``numpy.random.default_rng([seed, i, j])``.
    desc : str, optional
        Label of the progress bar.
    progress : bool, default True
        Show a tqdm progress bar over the ``len(grid) * n_seeds`` runs.

    Returns
    -------
    ndarray of shape (len(grid), n_seeds) or (len(grid), n_seeds, m)
        The results; ``m`` is the length of what ``fn`` returns, if an array.

    Examples
    --------
    >>> import dpstats as dps
    >>> from dpstats.compendium.experiments import sweep
    >>> x = [0.2, 0.4, 0.9]
    >>> runs = sweep(lambda eps, rng: dps.mean(x, eps, bounds=(0, 1), rng=rng), [0.5, 5.0],
    ...              n_seeds=3, seed=0, progress=False)
    >>> runs.shape
    (2, 3)
    """
    n_seeds = check_int(n_seeds, "n_seeds")
    seed = check_int(seed, "seed", low=0)
    grid = list(grid)
    results = []
    with _progress_bar(total=len(grid) * n_seeds, desc=desc, disable=not progress) as bar:
        for i, value in enumerate(grid):
            row = []
            for j in range(n_seeds):
                row.append(np.asarray(fn(value, np.random.default_rng([seed, i, j])), dtype=float))
                bar.update()
            results.append(row)
    return np.array(results)


def mean_and_error(values: np.ndarray, axis: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Mean over repetitions and its standard error (sample std / √repetitions; 0 for one repetition)."""
    values = np.asarray(values, dtype=float)
    reps = values.shape[axis]
    mean = values.mean(axis=axis)
    if reps < 2:
        return mean, np.zeros_like(mean)
    return mean, values.std(axis=axis, ddof=1) / np.sqrt(reps)


def plot_sweep(ax, x: Sequence[float], values: np.ndarray, *, label: str, **style):
    """Plot the mean over repetitions (axis 1 of ``values``) against ``x`` with ±1 standard-error bars.

    Returns the matplotlib ``ErrorbarContainer``. ``style`` goes to ``ax.errorbar``.
    """
    mean, error = mean_and_error(values)
    style = {"marker": "o", "capsize": 3, **style}
    return ax.errorbar(x, mean, yerr=error, label=label, **style)


def save_figure(fig, folder: str | Path | None, name: str) -> Path | None:
    """Save ``fig`` as ``folder/name.png`` (150 dpi, tight bounding box) and return the path; None: save nothing."""
    if folder is None:
        return None
    path = Path(folder) / f"{name}.png"
    fig.savefig(path, dpi=150, bbox_inches="tight")
    return path


class Table:
    """A small table that notebooks display as Markdown and save as CSV.

    Parameters
    ----------
    header : sequence of str
    rows : sequence of sequences
        Floats are formatted with ``fmt``; integers are printed in full; other
        cells with ``str``.
    fmt : str, default "{:.3g}"
    """

    def __init__(self, header: Sequence[str], rows: Sequence[Sequence], fmt: str = "{:.3g}"):
        self.header = [str(h) for h in header]
        self.rows = [[_cell(value, fmt) for value in row] for row in rows]
        for i, row in enumerate(self.rows):
            if len(row) != len(self.header):
                raise ValueError(f"rows[{i}] has {len(row)} cells; the header has {len(self.header)}")

    def to_markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def __str__(self) -> str:
        return self.to_markdown()


def _cell(value, fmt: str) -> str:
    """Floats through ``fmt``; integers in full; anything else with ``str``."""
    if isinstance(value, (float, np.floating)):
        return fmt.format(value)
    return str(value)


def save_table(table: Table, folder: str | Path | None, name: str) -> Path | None:
    """Write ``table`` as ``folder/name.csv`` (header row first) and return the path; None: write nothing."""
    if folder is None:
        return None
    path = Path(folder) / f"{name}.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(table.header)
        writer.writerows(table.rows)
    return path
