"""The Gram matrix XᵀX of rows with ‖x‖ <= 1, computed so that its floating-point error cannot depend on the data
in a way the privacy analysis does not cover (AG, CCA, the power method, PPCA).

**Per-block rounding.** Each block of r rows gives BᵀB in floating point, with every entry within
γ_r Σ_i |x_ij x_il| <= γ_r r R² of the exact value, for any summation order (Higham 2002, Theorem 3.5;
γ_r = r u/(1 − r u), u = 2^-53, R² the rows' squared-norm bound); it is rounded to the public release grid G and
the integers are added exactly. The integer statistic is within n_b (1/2 + γ_r r R²/G) grid steps of XᵀX/G per
entry (n_b blocks), for any order of the rows; between neighbours it therefore moves by at most ‖D‖/G plus
n_b (1 + 2 γ_r r R²/G) per entry — the slack the release charges. It does not rely on the replaced row keeping its
position: a caller whose row order depends on the data (a sorted table) is covered. The relative cost is about
n_b 2^-20 (3.6e-4 at n = 1e6, d = 784).

**Floating point.** Without a grid, the block products are added by the fixed tree of
:class:`dpstats._kernels.reduce.DyadicSum`, with the public error bound :func:`float_gram_error`.

The blocks are summed by an engine (:func:`dpstats._engine.float_gram`, :func:`dpstats._engine.grid_gram`); this
module holds what a block computes and the bounds, all from public quantities (n, d, the grid).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._rounding import UNIT_ROUNDOFF, gamma, sqrt_up
from .blocks import block_rows
from .reduce import DyadicSum, ExactSum
from .rows import NORM_TOLERANCE

__all__ = [
    "GridGram",
    "float_gram_error",
    "gram_block_rows",
    "gram_reduction",
    "grid_gram_slack",
    "norm_bound",
    "norm_bound_squared",
    "symmetric_from_upper",
]

# Gram matrices: rows per block are bounded so that the per-block rounding slack stays small (see grid_gram_slack).
_GRAM_BLOCK_BYTES = 16 * 2**20
_MIN_BLOCK_ROWS = 256


def norm_bound_squared(d: int) -> float:
    """The largest true ‖x‖² of a row of length ``d`` that passes the row-norm check (computed ‖x‖² <= 1 + τ).

    The computed sum of squares is within γ_{d} of the true one (any order), so
    the true value is at most (1 + τ)/(1 − γ_d) <= (1 + τ)(1 + 2(d + 1)u) for
    d·u < 0.1. Sensitivities use this bound instead of 1, so the tolerance τ
    (:data:`dpstats._kernels.rows.NORM_TOLERANCE`, for rows normalised in floating
    point) never understates them.
    """
    return math.nextafter((1.0 + NORM_TOLERANCE) * (1.0 + 2.0 * (d + 1) * UNIT_ROUNDOFF), math.inf)


def norm_bound(d: int) -> float:
    """R = √:func:`norm_bound_squared`, rounded up: the largest true ‖x‖ of a row that passes the check."""
    return sqrt_up(norm_bound_squared(d))


@dataclass(frozen=True)
class GridGram:
    """XᵀX as integers on a grid: ``values`` × ``grid``, with the per-entry rounding slack of the construction."""

    values: np.ndarray
    grid: Fraction
    slack: float


def gram_block_rows(n: int, d: int) -> int:
    """Rows per block of the Gram matrices (public: from n and d only, never from chunk sizes or cores)."""
    return min(block_rows(8 * d, _GRAM_BLOCK_BYTES, _MIN_BLOCK_ROWS), max(n, 1))


def float_gram_error(n: int, d: int) -> float:
    """A bound on |Ã_jl − A_jl| for every entry of :func:`float_gram`'s result Ã (public: depends on n, d only).

    Each block's product is within γ_r r R² (module docstring); the n_b block
    results are then added in floating point, by a tree in which each passes
    through fewer than n_b + 2 additions (:mod:`dpstats._kernels.reduce`), within
    γ_{n_b+2} Σ_b |BᵀB| <= γ_{n_b+2} n R². With r = :func:`gram_block_rows` rows per block, on either engine.
    """
    rows = gram_block_rows(n, d)
    blocks = -(-n // rows) + 2
    bound = norm_bound_squared(d)
    return math.nextafter(blocks * gamma(rows) * rows * bound + gamma(blocks) * n * bound, math.inf)


def grid_gram_slack(n: int, d: int, grid: Fraction) -> float:
    """The per-entry slack of XᵀX rounded block by block to ``grid``, in grid steps: n_b (1 + 2 γ_r r R²/G)
    (module docstring), for n rows of length d (public)."""
    rows = gram_block_rows(n, d)
    per_block_error = gamma(rows) * rows * norm_bound_squared(d)
    blocks = -(-n // rows)
    return blocks * (1.0 + 2.0 * per_block_error / float(grid))


def gram_reduction(n: int, d: int, grid: Fraction | None):
    """What an engine needs to sum XᵀX over blocks: ``(rows per block, leaf, new_sum)``. ``grid=None``: float
    products added by the fixed tree; a grid: each block's product rounded to it, the integers added exactly."""
    rows = gram_block_rows(n, d)
    if grid is None:
        return rows, _float_product, DyadicSum
    leaf = functools.partial(_rounded_product, inverse=1.0 / float(grid))  # a power of two: scaling is exact
    return rows, leaf, functools.partial(ExactSum, (d, d), rows * norm_bound_squared(d) / float(grid) + 1.0)


def _float_product(block: np.ndarray) -> np.ndarray:
    return block.T @ block


def _rounded_product(block: np.ndarray, inverse: float) -> np.ndarray:
    return np.rint((block.T @ block) * inverse).astype(np.int64)


def symmetric_from_upper(upper_values: np.ndarray, d: int) -> np.ndarray:
    """The symmetric d × d matrix whose upper triangle (diagonal included, row-major, as ``numpy.triu_indices``)
    is ``upper_values`` (how AG and CCA release their noisy matrices)."""
    A = np.zeros((d, d))
    A[np.triu_indices(d)] = upper_values
    return A + np.triu(A, 1).T
