"""The one place that dispatches on the type of the data: NumPy in memory (the default) or Dask, streamed.

Every mechanism reads its data through the functions of this module; none of them, and nothing below this layer
(:mod:`dpstats._kernels`, the noise and the accounting), asks what kind of array it holds. :func:`engine_of` picks
the engine of the data; the functions below run an operation on it.

An *engine* is a module with the same functions as :mod:`~dpstats._engine.numpy_engine`, the reference
implementation (:mod:`~dpstats._engine.dask_engine` is the other; CONTRIBUTING.md says how to add one):

========================  ===================================================================================
``LAZY``                  whether results as large as the data stay lazy (a low-rank approximation, predictions)
``as_array``              the data as the engine's float64 array, shape checked (contents are checked by the pass)
``check_row_norms``       rows with ‖x‖ <= R, checked now or in the statistic's pass; rescaled with ``clip``
``reduce_rows``           Σ over blocks of a public number of rows of ``leaf(block)``, with a check of every row
``sum_chunks``            Σ of ``share(chunk)`` over any cut of the rows (shares that add up exactly)
``fixed_point_sums``      exact sums of bounded records on a public fixed-point grid
``bin_counts``            counts in public equal-width bins
``persist_rows``          X and y kept where the solver reads them many times (ERM)
``map_rows``              one value per row, blockwise
``sketch``                for the range finder: non-finite count, rows outside the declared bounds, AΩ
``row_product``           QᵀA for a small Q
``lazy_product``          L @ R, as large as the data
``map_row_blocks``        a row-wise map, blockwise
``signed_labels``         labels mapped to ±1 (NaN for any other label)
``bound_rows``            at most ``max_rows`` rows of each privacy unit, chosen by a random key
``unit_sums``             bounding, the check of every record and the exact sums of the kept ones, in one pass
``key_table``             exact per-key statistics of a group-by, after bounding keys and rows per unit
========================  ===================================================================================

Every engine computes the same blocks at the same global row positions (:mod:`dpstats._kernels.reduce`), so a
release is the same on either for the same seed; nothing here reads a chunk size into a calibration.

Tables (pandas, polars) are converted to NumPy at the entry points (:mod:`~dpstats._engine.tables`); privacy units
are read there too (:mod:`~dpstats._engine.units`) and bounded by :func:`bound_rows`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from fractions import Fraction
from types import ModuleType

import numpy as np

from .._kernels.blocks import block_rows
from .._kernels.fixed_point import BoundedSums, FixedPoint
from .._kernels.gram import ExactGram, GridGram, gram_reduction
from .._kernels.groups import GroupSpec, KeyTable
from .._kernels.reduce import DyadicSum, Part
from .._kernels.rows import row_norm_violations
from .._kernels.units import IdSummary, id_target
from .._validation import check_columns
from ..exceptions import ParameterError
from . import numpy_engine
from .kinds import is_lazy
from .units import Bounded, Units, take_units

__all__ = [
    "Bounded",
    "Matrix",
    "Units",
    "as_array",
    "bin_counts",
    "bound_checked",
    "bound_matrix",
    "bound_rows",
    "bounded_sums",
    "bounded_unit_sums",
    "check_row_norms",
    "engine_of",
    "float_gram",
    "grid_gram",
    "is_lazy",
    "key_table",
    "read_matrix",
    "reduce_rows",
    "sum_chunks",
    "take_units",
    "validate_rows",
]


@dataclass(frozen=True)
class Matrix:
    """The rows of a release, read once at its entry point (:func:`read_matrix`): ``X`` a float64 array of the
    data's engine, 2-D with at least one column (its values are checked by the statistic's own pass), ``units`` the
    privacy units aligned with its rows and canonical (None: one row per unit), ``name`` for errors. The floors
    below take it as it is: no second conversion, column check or reading of the units."""

    X: object
    units: Units | None = None
    name: str = "X"

    def scaled(self, X) -> Matrix:
        """The same rows mapped one by one (divided by a norm bound, clipped): the same units."""
        return Matrix(X, self.units, self.name)


def read_matrix(X, privacy_unit=None, max_rows=None, name: str = "X") -> Matrix:
    """``X`` (and its privacy units) read once: a table's privacy-unit column taken out, the rest as a float64 array
    of its engine with at least one column, the identifiers aligned with the rows and canonical. A :class:`Matrix`
    is returned as it is (it was read at an entry point above: a unit given again would be a second reading)."""
    if isinstance(X, Matrix):
        if privacy_unit is not None or max_rows is not None:
            raise ParameterError("the rows were read with their privacy units already; pass the units once")
        return X
    X, units = take_units(X, privacy_unit, max_rows, name)
    X = check_columns(as_array(X, name, ndim=(2,)), name)
    if units is not None:
        units = units.aligned(X.shape[0])
    return Matrix(X, units, name)


def engine_of(*data) -> ModuleType:
    """The engine of ``data``: :mod:`~dpstats._engine.dask_engine` (imported on first use) if any of them is a dask
    collection, else :mod:`~dpstats._engine.numpy_engine`."""
    if "dask" in sys.modules and any(is_lazy(x) for x in data):  # no dask loaded: nothing is a dask collection
        from . import dask_engine

        return dask_engine
    return numpy_engine


def as_array(x, name: str, *, ndim: tuple[int, ...] = (1, 2), min_rows: int = 1):
    """``x`` as a float64 array of its engine with an allowed number of dimensions (a dask collection stays lazy,
    with known row counts)."""
    return engine_of(x).as_array(x, name, ndim=ndim, min_rows=min_rows)


def check_row_norms(X, name: str = "X", *, max_norm: float = 1.0, clip: bool = False):
    """Every row of the 2-D ``X`` with L2 norm <= ``max_norm`` and finite, or rescaled to it with ``clip=True``
    (a map of each row on its own, so it keeps the guarantee). In memory the rows are checked now; a dask ``X``
    is checked by the statistic's own pass."""
    return engine_of(X).check_row_norms(X, name, max_norm=max_norm, clip=clip)


def sum_chunks(arrays: tuple, share, *, parallel: bool = False):
    """Σ of ``share(*chunk arrays)`` over a cut of the row-aligned ``arrays`` into chunks that the engine chooses
    (the cores in memory, the chunks of dask arrays), added with ``+``: for shares whose sum does not depend on the
    cut (exact sums), so that no row is moved to meet another."""
    return engine_of(*arrays).sum_chunks(arrays, share, parallel=parallel)


def reduce_rows(arrays: tuple, rows: int, leaf, new_sum, check=None, *, parallel: bool = False) -> Part:
    """Σ over blocks of ``rows`` rows of ``leaf(*block arrays)``, and ``check`` of every row, on the engine of the
    row-aligned ``arrays`` (:func:`dpstats._engine.numpy_engine.reduce_rows`)."""
    return engine_of(*arrays).reduce_rows(arrays, rows, leaf, new_sum, check, parallel=parallel)


def bounded_sums(
    x, lower: np.ndarray, upper: np.ndarray, *, axis, clip: bool, squares: bool, name: str = "x"
) -> BoundedSums:
    """Check ``x`` against [lower, upper] (NaN and ±inf always raise) and sum its fixed-point records exactly.

    The records are the slices of ``x`` along ``axis`` (every value when ``axis`` is None); ``lower`` and
    ``upper`` have the shape of one record's output. One pass over the data, block by block: minimum, maximum,
    (clipping,) rounding to the fixed-point grid and the sums (:mod:`dpstats._kernels.fixed_point`). The integer
    sums are exact, so every engine gives the same result.
    """
    grid = FixedPoint.of(lower, upper, squares)
    found = engine_of(x).fixed_point_sums(x, grid, axis=axis, clip=clip)
    return grid.result(found, () if axis is None else lower.shape, name)


def bounded_unit_sums(
    records, lower: np.ndarray, upper: np.ndarray, units: Units, rng, *, clip: bool, squares: bool, name: str = "x"
) -> tuple[BoundedSums, Bounded]:
    """Check every record against [lower, upper], keep at most ``units.max_rows`` of each unit and sum the kept
    ones exactly: ``(the sums, the units)``, in one pass over the data.

    ``records`` has one record per row (its first axis), ``units`` are aligned with them. The kept records are
    :func:`bound_rows`' (the key is drawn from ``rng`` the same way, so the same seed keeps the same rows); every
    record, kept or not, is checked, and what is found raises as :func:`bounded_sums` of all records would (missing
    identifiers first), before anything is charged. The result's ``Bounded`` holds no rows: only the number of
    units N and ``max_rows``. On Dask the whole of it is one shuffle by unit (:func:`dpstats._engine.dask_engine.
    unit_sums`).
    """
    grid = FixedPoint.of(lower, upper, squares)
    check = FixedPoint.of(lower, upper, False) if squares else grid
    key = int(rng.integers(0, 2**63))
    found = engine_of(records, units.ids).unit_sums(records, units, key, grid, check, clip)
    if found.missing:
        id_target(IdSummary(missing=found.missing))  # raises, as for identifiers checked before the pass
    return grid.result(found.checked, lower.shape, name), Bounded((), found.units, units.max_rows)


def bin_counts(x, bins: int, lower: float, upper: float, *, clip: bool, name: str = "x") -> np.ndarray:
    """Check the 1-D ``x`` against [lower, upper] (NaN and ±inf always raise; values outside raise unless
    ``clip``, which puts them in the first or last bin) and count its values in ``bins`` equal-width bins."""
    return engine_of(x).bin_counts(x, bins, lower, upper, clip=clip).checked(lower, upper, name)


def float_gram(X, rows_bound: int | None = None, name: str = "X") -> np.ndarray:
    """Check the rows of ``X`` (‖x_i‖² <= 1 + τ, finite) and return XᵀX (float, symmetric, not divided by n).

    The block products are added by the fixed tree of :class:`dpstats._kernels.reduce.DyadicSum`: the result is
    bitwise the same whatever the number of cores, or the chunks of a dask ``X``; its error is within
    :func:`dpstats._kernels.gram.float_gram_error` per entry for ``rows_bound`` rows. ``rows_bound`` is the public
    bound on the rows (their number, or N·m after contribution bounding, when the number is not public); the rows
    per block are computed from it. ``name`` names the data in the errors. In memory, one contiguous run of blocks
    per core, each in its own thread with a single-threaded BLAS.
    """
    rows, leaf, new_sum = gram_reduction(X.shape[0] if rows_bound is None else rows_bound, X.shape[1])
    found = reduce_rows((X,), rows, leaf, new_sum, check=row_norm_violations, parallel=True)
    if found.checks is not None:
        found.checks.raise_error(name)
    return found.body.total()


def grid_gram(X, grid: Fraction, rows_bound: int | None = None, name: str = "X") -> GridGram:
    """Check the rows of ``X`` and return Σ q_i q_iᵀ, the exact Gram matrix of the rows rounded to a public
    fixed-point grid within their norm bound, rounded once to ``grid`` (:class:`dpstats._kernels.gram.ExactGram`),
    with its slack (one grid step). The sums are exact, so any cut of the rows gives the same matrix: each core in
    memory, and each chunk of a dask ``X`` whatever its size, sums its own rows, and the release is the same on
    either engine bit for bit. ``rows_bound`` is not needed (kept for the callers of :func:`float_gram`'s form)."""
    plan = ExactGram.of(X.shape[1])
    found = engine_of(X).sum_chunks((X,), plan.share, parallel=True)
    if found.checks is not None:
        found.checks.raise_error(name)
    return plan.on_grid(found, grid)


def validate_rows(arrays: tuple, check):
    """``check`` (a per-block check of the row-aligned ``arrays``, as in :func:`reduce_rows`) over every row, on
    the data's engine, in one pass; returns what it found (None: every row is valid)."""
    rows = block_rows(max(8, int(np.prod(arrays[0].shape[1:], dtype=np.int64)) * 8))
    return reduce_rows(arrays, rows, _nothing, DyadicSum, check).checks


def _nothing(*blocks) -> float:
    return 0.0


def bound_rows(arrays: tuple, units: Units, rng, *, canonical: bool = False) -> Bounded:
    """At most ``units.max_rows`` rows of each privacy unit of the row-aligned ``arrays``, on their engine.

    The rows are chosen by a 64-bit key drawn from ``rng`` (the caller's random source, before any noise) as
    :mod:`dpstats._kernels.units` describes: uniformly at random within each unit, whatever the order of the rows.
    The result holds the number of units N (public under the replace-one-unit relation); the number of rows kept
    is in nothing public (``Bounded.rows_bound`` = N·m bounds it). ``canonical`` puts the kept rows in an order
    that depends on their values only (for statistics computed in floating point: the release is then the same for
    any order of the input, bit for bit, in memory).
    """
    key = int(rng.integers(0, 2**63))
    return engine_of(*arrays, units.ids).bound_rows(arrays, units, key, canonical)


def bound_checked(
    arrays: tuple, units: Units | None, rng, *, check=None, name: str = "X", canonical: bool = True
) -> Bounded:
    """The rows a release reads: all of them without a privacy unit; with one, every row checked first by
    ``check`` (as in :func:`validate_rows`; what it finds raises, naming ``name``), then at most ``max_rows`` rows
    of each unit (:func:`bound_rows`, in canonical order by default: these are the rows of floating-point
    statistics)."""
    rows = arrays[0].shape[0]
    if units is None:
        return Bounded(arrays, rows, 1, by_unit=False)
    if check is not None:
        found = validate_rows(arrays, check)
        if found is not None:
            found.raise_error(name)
    return bound_rows(arrays, units.aligned(rows), rng, canonical=canonical)


def bound_matrix(X, privacy_unit=None, max_rows=None, *, clip: bool, rng, check=row_norm_violations) -> Bounded:
    """The rows a second-moment release reads (PCA, covariance, CCA): read once (:func:`read_matrix`; a
    :class:`Matrix` from an entry point above passes as it is), rescaled to norm 1 with ``clip``, else checked by
    ``check`` in the statistic's pass; with a privacy unit every row checked, then at most ``max_rows`` kept per
    unit (:func:`bound_checked`)."""
    data = read_matrix(X, privacy_unit, max_rows)
    X = check_row_norms(data.X, data.name, clip=True) if clip else data.X
    return bound_checked((X,), data.units, rng, check=None if clip else check, name=data.name)


def key_table(keys, units, values, spec: GroupSpec) -> KeyTable:
    """The exact per-key statistics of a group-by (:mod:`dpstats._kernels.groups`) on the engine of the
    row-aligned ``keys``, ``units`` (canonical identifiers, or None) and ``values`` (or None): at most
    ``spec.max_groups`` keys and ``spec.max_rows`` rows per unit and key, chosen by ``spec.key``; every key's
    distinct units, rows, weights, fixed-point sums or cells. On Dask the rows are shuffled by unit on the cluster
    and only the per-key statistics come back."""
    return engine_of(keys, units, values).key_table(keys, units, values, spec)
