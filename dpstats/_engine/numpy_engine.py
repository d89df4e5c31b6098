"""The in-memory engine: NumPy arrays, read block by block, on the cores of this machine.

The reference implementation of the engine interface (:mod:`dpstats._engine`): every function takes NumPy arrays
(or array-likes) and hands them to the kernels (:mod:`dpstats._kernels`) as one chunk, or as one chunk of whole
blocks per core for the reductions that are worth it (the Gram matrix). The blocks, and so every result, are the
same as the Dask engine's.
"""

from __future__ import annotations

import functools
import operator
import os
from collections.abc import Callable

import numpy as np

from .._kernels import groups
from .._kernels.blocks import single_threaded_blas
from .._kernels.fixed_point import BinCounts, ChunkSums, FixedPoint, chunk_bin_counts
from .._kernels.reduce import Part, chunk_part, merge_parts
from .._kernels.rows import check_row_norms as _check_rows
from .._kernels.units import UnitSums, row_hashes, select_rows, unit_chunk_sums
from .._validation import check_array
from .units import Bounded, Units

__all__ = [
    "LAZY",
    "as_array",
    "bin_counts",
    "bound_rows",
    "bounded_row_count",
    "check_row_norms",
    "fixed_point_sums",
    "key_table",
    "lazy_product",
    "map_row_blocks",
    "map_rows",
    "persist_rows",
    "reduce_rows",
    "row_product",
    "signed_labels",
    "sketch",
    "sum_chunks",
    "unit_sums",
]

#: Results as large as the data are computed at once (NumPy), not kept lazy.
LAZY = False


def as_array(x, name: str, *, ndim: tuple[int, ...], min_rows: int = 1) -> np.ndarray:
    """``x`` as a float64 array with an allowed number of dimensions (:func:`dpstats._validation.check_array`)."""
    return check_array(x, name, ndim=ndim, min_rows=min_rows)


def check_row_norms(X: np.ndarray, name: str, *, max_norm: float, clip: bool) -> np.ndarray:
    """Every row of ``X`` checked now (norm <= ``max_norm``, finite), or rescaled to it with ``clip``."""
    return _check_rows(X, name, max_norm=max_norm, clip=clip)


def reduce_rows(
    arrays: tuple,
    rows: int,
    leaf: Callable,
    new_sum: Callable,
    check: Callable | None = None,
    *,
    parallel: bool = False,
) -> Part:
    """The :class:`~dpstats._kernels.reduce.Part` of the whole data: every block's ``leaf`` summed, and the
    ``check`` of every row.

    ``arrays`` are row-aligned (X, or X and y, ...). With ``parallel`` the rows are cut into one contiguous run of
    whole blocks per core, each reduced in its own thread with a single-threaded BLAS; the runs are merged in
    order. The blocks, and so the result, are the same either way.
    """
    n = len(arrays[0])
    blocks = -(-n // rows)
    parts = max(1, min(_cores() if parallel else 1, blocks))
    if parts == 1:
        return chunk_part(arrays, 0, n, rows, leaf, new_sum, check)
    from concurrent.futures import ThreadPoolExecutor  # only large data need threads: keep `import dpstats` light

    edges = [rows * (blocks * i // parts) for i in range(parts)] + [n]

    def run(a: int, b: int) -> Part:
        return chunk_part(tuple(x[a:b] for x in arrays), a, n, rows, leaf, new_sum, check)

    with single_threaded_blas(), ThreadPoolExecutor(parts) as pool:
        found = list(pool.map(run, edges[:-1], edges[1:]))
    total = found[0]
    for part in found[1:]:
        total = merge_parts(total, part, n, rows, leaf)
    return total


def sum_chunks(arrays: tuple, share: Callable, *, parallel: bool = False):
    """``share`` of one contiguous run of rows per core (each in its own thread, with a single-threaded BLAS),
    added in order; one run without ``parallel``."""
    n = len(arrays[0])
    parts = max(1, min(_cores() if parallel else 1, n))
    if parts == 1:
        return share(*arrays)
    from concurrent.futures import ThreadPoolExecutor

    edges = [n * i // parts for i in range(parts + 1)]
    with single_threaded_blas(), ThreadPoolExecutor(parts) as pool:
        found = list(pool.map(lambda a, b: share(*(x[a:b] for x in arrays)), edges[:-1], edges[1:]))
    return functools.reduce(operator.add, found)


def _cores() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def fixed_point_sums(x: np.ndarray, grid: FixedPoint, *, axis, clip: bool) -> ChunkSums:
    """The exact fixed-point sums of the records of ``x`` (the slices along ``axis``; every value for None)."""
    records = x.reshape(-1, 1) if axis is None else np.moveaxis(x, axis, 0).reshape(x.shape[axis], -1)
    return grid.chunk_sums(records, clip)


def bin_counts(x: np.ndarray, bins: int, lower: float, upper: float, *, clip: bool) -> BinCounts:
    """The counts of the 1-D ``x`` in ``bins`` equal-width bins of [lower, upper], and what was wrong."""
    return chunk_bin_counts(x, bins, lower, upper, clip=clip)


def bound_rows(arrays: tuple, units: Units, key: int, canonical: bool = False) -> Bounded:
    """At most ``units.max_rows`` rows of each unit (:func:`dpstats._kernels.units.select_rows`): in the data's
    order, or with ``canonical`` in the order of their keyed hashes, a function of the kept rows' values only (so
    that a floating-point statistic of them is the same, bit for bit, for any order of the input)."""
    keep, count = select_rows(units.ids, arrays, units.max_rows, key)
    rows = np.flatnonzero(keep)
    if canonical:
        rows = rows[np.argsort(row_hashes(tuple(np.asarray(a)[rows] for a in arrays), key), kind="stable")]
    return Bounded(tuple(np.asarray(a)[rows] for a in arrays), count, units.max_rows)


def unit_sums(records, units: Units, key: int, grid: FixedPoint, check: FixedPoint, clip: bool) -> UnitSums:
    """Contribution bounding, the check of every record and the exact sums of the kept ones
    (:func:`dpstats._kernels.units.unit_chunk_sums`), in memory: one block."""
    records = np.asarray(records)
    return unit_chunk_sums(units.ids, records.reshape(len(records), -1), units.max_rows, key, grid, check, clip)


def bounded_row_count(units: Units) -> tuple[int, int]:
    """Σ_u min(c_u, m), the number of rows bounding keeps (c_u: unit u's rows), and the number of units."""
    counts = np.unique(units.ids, return_counts=True)[1]
    return int(np.minimum(counts, units.max_rows).sum()), int(counts.size)


def key_table(keys, units, values, spec: groups.GroupSpec) -> groups.KeyTable:
    """The exact per-key statistics of the rows after contribution bounding
    (:func:`dpstats._kernels.groups.key_table`), in memory: one block (``units`` canonical)."""
    return groups.key_table(keys, units, values, spec)


# ----------------------------------------------------------------------------- solvers' passes (ERM, low rank)


def persist_rows(X: np.ndarray, y: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """In memory already: X and y as they are."""
    return X, y


def map_rows(blockwise: Callable, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``blockwise(X, y)``: one value per row."""
    return blockwise(X, y)


def sketch(A: np.ndarray, omega: np.ndarray, lower: float, upper: float) -> tuple[int, int, np.ndarray]:
    """For the range finder of :func:`dpstats.low_rank`: the number of NaN or infinite values, the number of rows
    with an entry outside the declared [lower, upper], and AΩ (empty when either count is not 0: the release
    raises)."""
    nonfinite = int(A.size - np.count_nonzero(np.isfinite(A)))
    outside = int(np.count_nonzero(((A < lower) | (A > upper)).any(axis=1))) if A.size else 0
    if nonfinite or outside:
        return nonfinite, outside, np.empty((0, omega.shape[1]))
    return 0, 0, A @ omega


def row_product(Q: np.ndarray, A: np.ndarray) -> np.ndarray:
    """QᵀA."""
    return Q.T @ A


def lazy_product(L: np.ndarray, R: np.ndarray, like: np.ndarray) -> np.ndarray:
    """L @ R (in memory, like the data)."""
    return L @ R


def map_row_blocks(fn: Callable, X: np.ndarray, width: int) -> np.ndarray:
    """``fn(X)`` (rows to rows of ``width`` columns)."""
    return fn(X)


def signed_labels(y, classes: np.ndarray) -> np.ndarray:
    """Labels mapped to +1 (``classes[1]``), −1 (``classes[0]``) and NaN (any other label)."""
    y = np.asarray(y)
    return np.where(y == classes[1], 1.0, np.where(y == classes[0], -1.0, np.nan))
