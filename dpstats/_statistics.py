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

from ._blocks import block_rows, row_blocks
from ._validation import NORM_TOLERANCE, check_finite, check_row_norms
from .exceptions import OutOfBoundsError, ParameterError

__all__ = ["BoundedSums", "GridGram", "bounded_sums", "float_gram", "float_gram_error", "grid_gram",
           "norm_bound_squared", "symmetric_from_upper"]

_U = 2.0**-53
_SUM_BITS = 36  # fixed-point bits of a record for sums: |q| <= 2^36, blocks of <= 2^16 values sum exactly
_SQUARE_BITS = 26  # for sums of squares: q = a·2^13 + b with |a|, |b| <= 2^13
_SPLIT = 2.0**13
_SUM_BLOCK_VALUES = 1 << 16
_INT64_ROOM = 2**62

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


# ----------------------------------------------------------------------------- exact integer accumulation


class _ExactSum:
    """Adds int64 arrays exactly: in int64 until the next term could overflow, then into Python integers."""

    def __init__(self, shape: tuple[int, ...], max_term: float) -> None:
        self._fast = np.zeros(shape, dtype=np.int64)
        self._slow = None  # Python integers, once int64 could overflow
        self._room = max(1, int(_INT64_ROOM // max(max_term, 1.0)))
        self._count = 0

    def add(self, term: np.ndarray) -> None:
        if self._count == self._room:
            self._flush()
        self._fast += term
        self._count += 1

    def _flush(self) -> None:
        fast = self._fast.astype(object)
        self._slow = fast if self._slow is None else self._slow + fast
        self._fast = np.zeros_like(self._fast)
        self._count = 0

    def total(self) -> np.ndarray:
        """The exact sum: an int64 array while it fits, else an object array of Python ints."""
        if self._slow is None:
            return self._fast
        self._flush()
        return self._slow


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


def bounded_sums(x: np.ndarray, lower: np.ndarray, upper: np.ndarray, *, axis, clip: bool, squares: bool,
                 name: str = "x") -> BoundedSums:
    """Check ``x`` against [lower, upper] (NaN and ±inf always raise) and sum its fixed-point records exactly.

    The records are the slices of ``x`` along ``axis`` (every value when
    ``axis`` is None); ``lower`` and ``upper`` have the shape of one record's
    output. One pass over the data, block by block: minimum, maximum,
    (clipping,) rounding to the fixed-point grid and the sums.
    """
    records = x.reshape(-1, 1) if axis is None else np.moveaxis(x, axis, 0).reshape(x.shape[axis], -1)
    out_shape = () if axis is None else lower.shape
    lo, hi = lower.reshape(-1), upper.reshape(-1)
    bits = _SQUARE_BITS if squares else _SUM_BITS
    magnitude = np.maximum(np.abs(lo), np.abs(hi))
    if (magnitude < 2.0**-900).any():
        raise ParameterError(f"bounds are too close to 0 (largest magnitude {float(magnitude.min()):.3g}) for the "
                             "fixed-point grid of the records; rescale the data")
    exponent = np.ceil(np.log2(magnitude)).astype(int) - bits
    scale = np.ldexp(1.0, -exponent)  # 1/h, exact
    q_lo, q_hi = np.rint(lo * scale), np.rint(hi * scale)
    m = records.shape[1]
    rows = max(1, _SUM_BLOCK_VALUES // m)
    sums = _ExactSum((m,), rows * 2.0**bits)
    parts = [_ExactSum((m,), rows * 2.0**26) for _ in range(3)] if squares else []
    for start in range(0, records.shape[0], rows):
        block = records[start:start + rows]
        seen_lo, seen_hi = block.min(axis=0), block.max(axis=0)
        if not (np.isfinite(seen_lo).all() and np.isfinite(seen_hi).all()):
            check_finite(block, name)
        if clip:
            block = np.clip(block, lo, hi)
        elif (seen_lo < lo).any() or (seen_hi > hi).any():
            _raise_out_of_bounds(records, lo, hi, name)
        q = np.rint(block * scale)
        sums.add(q.sum(axis=0).astype(np.int64))
        if squares:
            a = np.floor(q / _SPLIT)
            b = q - a * _SPLIT
            for part, product in zip(parts, (a * a, a * b, b * b), strict=True):
                part.add(product.sum(axis=0).astype(np.int64))
    shape = out_shape
    total_squares = None
    if squares:
        aa, ab, bb = (p.total() for p in parts)
        total_squares = _reshape(_objects(aa) * (1 << 26) + _objects(ab) * (1 << 14) + _objects(bb), shape)
    unit = _reshape(np.array([Fraction(2) ** int(e) for e in exponent], dtype=object), shape)
    return BoundedSums(records.shape[0], unit, q_lo.astype(np.int64).reshape(shape),
                       q_hi.astype(np.int64).reshape(shape), _reshape(_objects(sums.total()), shape), total_squares)


def _objects(values: np.ndarray) -> np.ndarray:
    return values.astype(object)


def _reshape(values: np.ndarray, shape: tuple[int, ...]):
    """A Python scalar for shape (), else the array in that shape."""
    return values[0] if shape == () else values.reshape(shape)


def _raise_out_of_bounds(records: np.ndarray, lo: np.ndarray, hi: np.ndarray, name: str) -> None:
    outside = int(np.count_nonzero((records < lo) | (records > hi)))
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


def float_gram(X: np.ndarray) -> np.ndarray:
    """Check the rows of ``X`` (‖x_i‖² <= 1 + τ, finite) and return XᵀX (float, symmetric, not divided by n)."""
    return _gram(X, None)[0]


def grid_gram(X: np.ndarray, grid: Fraction) -> GridGram:
    """Check the rows of ``X`` and return XᵀX rounded block by block to ``grid`` (see the module docstring)."""
    values, rows = _gram(X, grid)
    per_block_error = _gamma(rows) * rows * norm_bound_squared(X.shape[1])
    blocks = -(-X.shape[0] // rows)
    return GridGram(values, grid, blocks * (1.0 + 2.0 * per_block_error / float(grid)))


def float_gram_error(n: int, d: int) -> float:
    """A bound on |Ã_jl − A_jl| for every entry of :func:`float_gram`'s result Ã (public: depends on n, d only).

    Each block's product is within γ_r r R² (module docstring); the n_b block
    results and the per-core partial sums are then added in floating point,
    within γ_{n_b+2} Σ_b |BᵀB| <= γ_{n_b+2} n R². With r rows per block.
    """
    rows = min(block_rows(8 * d, _GRAM_BLOCK_BYTES, _MIN_BLOCK_ROWS), max(n, 1))
    blocks = -(-n // rows) + 2
    bound = norm_bound_squared(d)
    return math.nextafter(blocks * _gamma(rows) * rows * bound + _gamma(blocks) * n * bound, math.inf)


def _gamma(r: int) -> float:
    return r * _U / (1.0 - r * _U)


def _gram(X: np.ndarray, grid: Fraction | None):
    """Shared by :func:`float_gram` and :func:`grid_gram`: one contiguous part of the rows per core, each in its
    own thread with a single-threaded BLAS, blocks checked while in cache. Returns (matrix, rows per block)."""
    blocks = row_blocks(X, _GRAM_BLOCK_BYTES, _MIN_BLOCK_ROWS)
    rows = min(blocks[0].stop - blocks[0].start, X.shape[0]) if blocks else 1
    parts = min(_cores(), len(blocks))
    if parts == 1:
        partials = [_checked_part(X, grid, rows)]
    else:
        from concurrent.futures import ThreadPoolExecutor  # only large X needs threads: keep `import dpstats` light

        edges = np.linspace(0, X.shape[0], parts + 1).astype(int)
        with _blas_controller().limit(limits=1, user_api="blas"), ThreadPoolExecutor(parts) as pool:
            partials = list(pool.map(lambda a, b: _checked_part(X[a:b], grid, rows), edges[:-1], edges[1:]))
    if any(p is None for p in partials):
        check_row_norms(X, "X")  # raises with the count over all rows
    if grid is None:
        return sum(partials[1:], partials[0]), rows
    total = partials[0].astype(object) if len(partials) > 1 else partials[0]
    for p in partials[1:]:  # exact: each partial is below 2^62, their sum need not be
        total = total + p.astype(object)
    return (total if total.dtype != object else _int64_if_small(total)), rows


def _int64_if_small(values: np.ndarray) -> np.ndarray:
    """An object array of Python ints as int64 when every entry is below 2^62 in magnitude."""
    flat = values.ravel()
    if flat.size == 0 or max(abs(int(flat.max())), abs(int(flat.min()))) < _INT64_ROOM:
        return values.astype(np.int64)
    return values


def _checked_part(X: np.ndarray, grid: Fraction | None, rows: int):
    """Σ over blocks of BᵀB (rounded to ``grid`` per block and added exactly, if given), or None as soon as a
    block has a row with norm² > 1 + τ (or NaN)."""
    d = X.shape[1]
    limit = 1.0 + NORM_TOLERANCE
    if grid is None:
        total = np.zeros((d, d))
    else:
        inverse = 1.0 / float(grid)  # a power of two: scaling is exact
        total = _ExactSum((d, d), rows * norm_bound_squared(d) * inverse + 1.0)
    for start in range(0, X.shape[0], rows):
        block = X[start:start + rows]
        if not np.einsum("ij,ij->i", block, block).max() <= limit:  # also true for NaN
            return None
        product = block.T @ block
        if grid is None:
            total += product
        else:
            total.add(np.rint(product * inverse).astype(np.int64))
    return total if grid is None else total.total()


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
