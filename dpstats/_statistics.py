"""Statistics before noise, computed so that their floating-point error cannot depend on the data in a way the
privacy analysis does not cover.

Two constructions (see :mod:`dpstats.noise.release` for how the results are released):

* **Fixed-point records** (mean, variance). Each value is rounded to a public
  fixed-point grid h (a power of two, 2^-bits of the bound's magnitude): a map
  applied to every record on its own, using only public numbers, like clipping,
  so the statistic of the rounded records has the same kind of sensitivity,
  computed from the rounded bounds. The sums of the rounded values are exact
  integers: within a block every partial sum stays below 2^53 (so the float
  additions are exact in any order), and blocks are added in int64 / Python
  integers. Sums of squares split each integer q = a·2^13 + b so that a², ab and
  b² sum exactly too.
* **Per-block rounding** (the Gram matrix XᵀX of AG and CCA). Each block of r
  rows gives BᵀB in floating point, with every entry within
  γ_r Σ_i |x_ij x_il| <= γ_r r R² of the exact value, for any summation order
  (Higham 2002, Theorem 3.5; γ_r = r u/(1 − r u), u = 2^-53, R² the rows'
  squared-norm bound); it is rounded to the public release grid G and the
  integers are added exactly. The integer statistic is within
  n_b (1/2 + γ_r r R²/G) grid steps of XᵀX/G per entry (n_b blocks), for any
  order of the rows; between neighbours it therefore moves by at most ‖D‖/G
  plus n_b (1 + 2 γ_r r R²/G) per entry — the slack the release charges. It
  does not rely on the replaced row keeping its position: a caller whose row
  order depends on the data (a sorted table) is covered. The relative cost is
  about n_b 2^-20 (3.6e-4 at n = 1e6, d = 784).
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._blocks import block_rows
from ._engine import dask_engine, is_dask
from ._reduce import DyadicSum, ExactSum, reduce_rows
from ._validation import NORM_TOLERANCE, raise_nonfinite, row_norm_violations
from .exceptions import OutOfBoundsError, ParameterError

__all__ = ["BinCounts", "BoundedSums", "ChunkSums", "FixedPoint", "GridGram", "bin_counts", "bounded_sums",
           "float_gram", "float_gram_error", "gram_block_rows", "grid_gram", "norm_bound_squared",
           "symmetric_from_upper"]

_U = 2.0**-53
_SUM_BITS = 36  # fixed-point bits of a record for sums: |q| <= 2^36, blocks of <= 2^16 values sum exactly
_SQUARE_BITS = 26  # for sums of squares: q = a·2^13 + b with |a|, |b| <= 2^13
_SPLIT = 2.0**13
_SUM_BLOCK_VALUES = 1 << 16

# Gram matrices: rows per block are bounded so that the per-block rounding slack stays small (see grid_gram).
_GRAM_BLOCK_BYTES = 16 * 2**20
_MIN_BLOCK_ROWS = 256


def norm_bound_squared(d: int) -> float:
    """The largest true ‖x‖² of a row of length ``d`` that passes the row-norm check (computed ‖x‖² <= 1 + τ).

    The computed sum of squares is within γ_{d} of the true one (any order), so
    the true value is at most (1 + τ)/(1 − γ_d) <= (1 + τ)(1 + 2(d + 1)u) for
    d·u < 0.1. Sensitivities use this bound instead of 1, so the tolerance τ
    (:data:`dpstats._validation.NORM_TOLERANCE`, for rows normalised in floating
    point) never understates them.
    """
    return math.nextafter((1.0 + NORM_TOLERANCE) * (1.0 + 2.0 * (d + 1) * _U), math.inf)


# ----------------------------------------------------------------------------- fixed-point sums


@dataclass(frozen=True)
class BoundedSums:
    """Exact sums of fixed-point records: Σq (and Σq²) per output coordinate, q = round(x/h).

    Attributes
    ----------
    n : int
        Number of records.
    unit : Fraction or numpy.ndarray of Fraction
        h per output coordinate (a power of two).
    q_lower, q_upper : numpy.ndarray of int
        round(lower/h), round(upper/h): every record's q lies between them.
    sums : object
        Σq (Python int, or object array of them).
    squares : object or None
        Σq² when asked for.
    """

    n: int
    unit: np.ndarray
    q_lower: np.ndarray
    q_upper: np.ndarray
    sums: object
    squares: object | None


def bounded_sums(x, lower: np.ndarray, upper: np.ndarray, *, axis, clip: bool, squares: bool,
                 name: str = "x") -> BoundedSums:
    """Check ``x`` against [lower, upper] (NaN and ±inf always raise) and sum its fixed-point records exactly.

    The records are the slices of ``x`` along ``axis`` (every value when
    ``axis`` is None); ``lower`` and ``upper`` have the shape of one record's
    output. One pass over the data, block by block: minimum, maximum,
    (clipping,) rounding to the fixed-point grid and the sums. A dask ``x`` is
    streamed chunk by chunk in one compute (:func:`dpstats._dask.bounded_sums`);
    the integer sums are exact, so the result is the same.
    """
    grid = FixedPoint.of(lower, upper, squares)
    if is_dask(x):
        found = dask_engine().bounded_sums(x, grid, axis=axis, clip=clip)
    else:
        records = x.reshape(-1, 1) if axis is None else np.moveaxis(x, axis, 0).reshape(x.shape[axis], -1)
        found = grid.chunk_sums(records, clip)
    return grid.result(found, () if axis is None else lower.shape, name)


@dataclass(frozen=True)
class ChunkSums:
    """Exact fixed-point sums of some records (added up over chunks with ``+``), or what was wrong with them.

    ``sums`` and ``parts`` (Σa², Σab, Σb² of the split q = a·2^13 + b) are object arrays of Python ints; when
    ``nonfinite`` or ``outside`` is non-zero they are None (the release will raise).
    """

    n: int
    sums: np.ndarray | None
    parts: tuple | None
    nonfinite: int = 0
    outside: int = 0

    def __add__(self, other: ChunkSums) -> ChunkSums:
        nonfinite, outside = self.nonfinite + other.nonfinite, self.outside + other.outside
        if nonfinite or outside:
            return ChunkSums(self.n + other.n, None, None, nonfinite, outside)
        parts = None if self.parts is None else tuple(a + b for a, b in zip(self.parts, other.parts, strict=True))
        return ChunkSums(self.n + other.n, self.sums + other.sums, parts)


@dataclass(frozen=True)
class FixedPoint:
    """The public fixed-point grid of bounded records: h = 2^exponent per coordinate (2^-bits of the bounds'
    magnitude), the bounds, and the bounds rounded to the grid. Depends on the bounds only."""

    lo: np.ndarray
    hi: np.ndarray
    exponent: np.ndarray
    squares: bool

    @classmethod
    def of(cls, lower: np.ndarray, upper: np.ndarray, squares: bool) -> FixedPoint:
        lo, hi = lower.reshape(-1), upper.reshape(-1)
        bits = _SQUARE_BITS if squares else _SUM_BITS
        magnitude = np.maximum(np.abs(lo), np.abs(hi))
        if (magnitude < 2.0**-900).any():
            raise ParameterError(f"bounds are too close to 0 (largest magnitude {float(magnitude.min()):.3g}) for "
                                 "the fixed-point grid of the records; rescale the data")
        exponent = np.ceil(np.log2(magnitude)).astype(int) - bits
        return cls(lo, hi, exponent, squares)

    def chunk_sums(self, records: np.ndarray, clip: bool) -> ChunkSums:
        """Check and sum records (rows of a 2-D array, one column per output coordinate), block by block: every
        partial sum of a block stays below 2^53, so it is exact in floating point."""
        scale = np.ldexp(1.0, -self.exponent)  # 1/h, exact
        lo, hi = self.lo, self.hi
        m = records.shape[1]
        rows = max(1, _SUM_BLOCK_VALUES // m)
        bits = _SQUARE_BITS if self.squares else _SUM_BITS
        sums = ExactSum((m,), rows * 2.0**bits)
        parts = [ExactSum((m,), rows * 2.0**26) for _ in range(3)] if self.squares else []
        buffer = np.empty((min(rows, records.shape[0]), m))  # reused: a fresh array per block costs page faults
        for start in range(0, records.shape[0], rows):
            block = records[start:start + rows]
            seen_lo, seen_hi = block.min(axis=0), block.max(axis=0)
            if not (np.isfinite(seen_lo).all() and np.isfinite(seen_hi).all()) or \
                    (not clip and ((seen_lo < lo).any() or (seen_hi > hi).any())):
                return self._violations(records, clip)
            q = buffer[:block.shape[0]]
            if clip:
                np.clip(block, lo, hi, out=q)
                block = q
            np.multiply(block, scale, out=q)
            np.rint(q, out=q)
            sums.add(q.sum(axis=0).astype(np.int64))
            if self.squares:
                a = np.floor(q / _SPLIT)
                b = q - a * _SPLIT
                for part, product in zip(parts, (a * a, a * b, b * b), strict=True):
                    part.add(product.sum(axis=0).astype(np.int64))
        return ChunkSums(records.shape[0], _objects(sums.total()),
                         tuple(_objects(p.total()) for p in parts) if self.squares else None)

    def _violations(self, records: np.ndarray, clip: bool) -> ChunkSums:
        """Count the non-finite values and (without clipping) the values outside the bounds."""
        nonfinite = int(records.size - np.count_nonzero(np.isfinite(records)))
        outside = 0 if clip else int(np.count_nonzero((records < self.lo) | (records > self.hi)))
        return ChunkSums(records.shape[0], None, None, nonfinite, outside)

    def result(self, found: ChunkSums, shape: tuple[int, ...], name: str) -> BoundedSums:
        """The sums in the shape of one record's output, or the error for what was found."""
        if found.nonfinite:
            raise_nonfinite(name, found.nonfinite)
        if found.outside:
            _raise_out_of_bounds(found.outside, self.lo, self.hi, name)
        squares = None
        if self.squares:
            aa, ab, bb = found.parts
            squares = _reshape(aa * (1 << 26) + ab * (1 << 14) + bb, shape)
        unit = _reshape(np.array([Fraction(2) ** int(e) for e in self.exponent], dtype=object), shape)
        scale = np.ldexp(1.0, -self.exponent)
        q_lo, q_hi = np.rint(self.lo * scale), np.rint(self.hi * scale)
        return BoundedSums(found.n, unit, q_lo.astype(np.int64).reshape(shape), q_hi.astype(np.int64).reshape(shape),
                           _reshape(found.sums, shape), squares)


@dataclass(frozen=True)
class BinCounts:
    """Counts of values in public equal-width bins (added up over chunks with ``+``), and what was wrong: NaN or
    infinite values, values outside the range (not counted when clipping)."""

    counts: np.ndarray
    nonfinite: int = 0
    outside: int = 0

    def __add__(self, other: BinCounts) -> BinCounts:
        return BinCounts(self.counts + other.counts, self.nonfinite + other.nonfinite, self.outside + other.outside)


def bin_counts(x, bins: int, lower: float, upper: float, *, clip: bool, name: str = "x") -> np.ndarray:
    """Check the 1-D ``x`` against [lower, upper] (NaN and ±inf always raise; values outside raise unless
    ``clip``, which puts them in the first or last bin) and count its values in ``bins`` equal-width bins.

    A dask ``x`` is counted chunk by chunk in one compute (:func:`dpstats._dask.bin_counts`).
    """
    if is_dask(x):
        found = dask_engine().bin_counts(x, bins, lower, upper, clip=clip)
    else:
        found = chunk_bin_counts(x, bins, lower, upper, clip=clip)
    if found.nonfinite:
        raise_nonfinite(name, found.nonfinite)
    if found.outside:
        raise OutOfBoundsError(
            f"{name} has {found.outside} value(s) outside the declared range [{lower:g}, {upper:g}]; fix "
            "the range, clip the data yourself, or pass clip=True (clipping keeps the privacy guarantee)")
    return found.counts


def chunk_bin_counts(x: np.ndarray, bins: int, lower: float, upper: float, *, clip: bool) -> BinCounts:
    """:func:`bin_counts` of one chunk, without raising: np.histogram drops NaN and out-of-range values, so a
    short total reveals them in the same pass."""
    counts, _ = np.histogram(x, bins=bins, range=(lower, upper))
    if counts.sum() == x.size:
        return BinCounts(counts.astype(np.int64))
    nonfinite = int(x.size - np.count_nonzero(np.isfinite(x)))
    if not clip:
        return BinCounts(counts.astype(np.int64), nonfinite, int(np.count_nonzero((x < lower) | (x > upper))))
    counts, _ = np.histogram(np.clip(x, lower, upper), bins=bins, range=(lower, upper))
    return BinCounts(counts.astype(np.int64), nonfinite)


def _objects(values: np.ndarray) -> np.ndarray:
    return values.astype(object)


def _reshape(values: np.ndarray, shape: tuple[int, ...]):
    """A Python scalar for shape (), else the array in that shape."""
    return values[0] if shape == () else values.reshape(shape)


def _raise_out_of_bounds(outside: int, lo: np.ndarray, hi: np.ndarray, name: str) -> None:
    bounds = f"[{_fmt(lo)}, {_fmt(hi)}]"
    raise OutOfBoundsError(
        f"{name} has {outside} value(s) outside the declared bounds {bounds}; fix the bounds, clip the data "
        "yourself, or pass clip=True to clip them (clipping keeps the privacy guarantee)"
    )


def _fmt(bound: np.ndarray) -> str:
    return f"{float(bound[0]):g}" if bound.size == 1 else np.array2string(bound, precision=4)


# ----------------------------------------------------------------------------- Gram matrices


@dataclass(frozen=True)
class GridGram:
    """XᵀX as integers on a grid: ``values`` × ``grid``, with the per-entry rounding slack of the construction."""

    values: np.ndarray
    grid: Fraction
    slack: float


def float_gram(X) -> np.ndarray:
    """Check the rows of ``X`` (‖x_i‖² <= 1 + τ, finite) and return XᵀX (float, symmetric, not divided by n).

    The block products are added by the fixed tree of :class:`dpstats._reduce.DyadicSum`: the result is bitwise
    the same whatever the number of cores, or the chunks of a dask ``X``.
    """
    return _gram(X, None)[0]


def grid_gram(X, grid: Fraction) -> GridGram:
    """Check the rows of ``X`` and return XᵀX rounded block by block to ``grid`` (see the module docstring)."""
    values, rows = _gram(X, grid)
    per_block_error = _gamma(rows) * rows * norm_bound_squared(X.shape[1])
    blocks = -(-X.shape[0] // rows)
    return GridGram(values, grid, blocks * (1.0 + 2.0 * per_block_error / float(grid)))


def gram_block_rows(n: int, d: int) -> int:
    """Rows per block of the Gram matrices (public: from n and d only, never from chunk sizes or cores)."""
    return min(block_rows(8 * d, _GRAM_BLOCK_BYTES, _MIN_BLOCK_ROWS), max(n, 1))


def float_gram_error(n: int, d: int) -> float:
    """A bound on |Ã_jl − A_jl| for every entry of :func:`float_gram`'s result Ã (public: depends on n, d only).

    Each block's product is within γ_r r R² (module docstring); the n_b block
    results are then added in floating point, by a tree in which each passes
    through fewer than n_b + 2 additions (:mod:`dpstats._reduce`), within
    γ_{n_b+2} Σ_b |BᵀB| <= γ_{n_b+2} n R². With r = :func:`gram_block_rows` rows per block, on either engine.
    """
    rows = gram_block_rows(n, d)
    blocks = -(-n // rows) + 2
    bound = norm_bound_squared(d)
    return math.nextafter(blocks * _gamma(rows) * rows * bound + _gamma(blocks) * n * bound, math.inf)


def _gamma(r: int) -> float:
    return r * _U / (1.0 - r * _U)


def _gram(X, grid: Fraction | None):
    """Shared by :func:`float_gram` and :func:`grid_gram`: blocks of :func:`gram_block_rows` rows, each checked
    while in cache, then multiplied (:func:`dpstats._reduce.reduce_rows`; in memory, one contiguous run of blocks
    per core, each in its own thread with a single-threaded BLAS). Returns (matrix, rows per block)."""
    n, d = X.shape
    rows = gram_block_rows(n, d)
    if grid is None:
        leaf, new_sum = _float_product, DyadicSum
    else:
        leaf = functools.partial(_rounded_product, inverse=1.0 / float(grid))  # a power of two: scaling is exact
        new_sum = functools.partial(ExactSum, (d, d), rows * norm_bound_squared(d) / float(grid) + 1.0)
    parts = 1 if is_dask(X) else min(_cores(), -(-n // rows))
    if parts > 1:
        with _blas_controller().limit(limits=1, user_api="blas"):
            found = reduce_rows((X,), rows, leaf, new_sum, check=row_norm_violations, parts=parts)
    else:
        found = reduce_rows((X,), rows, leaf, new_sum, check=row_norm_violations)
    if found.checks is not None:
        found.checks.raise_error("X")
    return found.body.total(), rows


def _float_product(block: np.ndarray) -> np.ndarray:
    return block.T @ block


def _rounded_product(block: np.ndarray, inverse: float) -> np.ndarray:
    return np.rint((block.T @ block) * inverse).astype(np.int64)


@functools.cache
def _blas_controller():
    """threadpoolctl's handle on the BLAS libraries loaded so far (numpy's is loaded with numpy); made once,
    because finding the libraries costs milliseconds per call."""
    from threadpoolctl import ThreadpoolController  # installed with scikit-learn

    return ThreadpoolController()


def _cores() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def symmetric_from_upper(upper_values: np.ndarray, d: int) -> np.ndarray:
    """The symmetric d × d matrix whose upper triangle (diagonal included, row-major, as ``numpy.triu_indices``)
    is ``upper_values`` (how AG and CCA release their noisy matrices)."""
    A = np.zeros((d, d))
    A[np.triu_indices(d)] = upper_values
    return A + np.triu(A, 1).T
