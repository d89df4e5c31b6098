"""The Gram matrix XᵀX of rows with ‖x‖ <= 1, computed so that its floating-point error cannot depend on the data
in a way the privacy analysis does not cover (AG, CCA, the power method, PPCA).

**Exact sums on a fixed-point grid** (:class:`ExactGram`, the exact releases of AG, CCA and Dong et al.). Every
checked row is mapped, on its own and with public numbers only, to q = round(x·M) with M = 2^b − ⌈√d⌉: an integer
vector with ‖q·h‖ <= R for h = 2^-b (R the rows' norm bound, :func:`norm_bound`; the shrink by M·h = 1 − ⌈√d⌉h
pays for the rounding, so the rounded rows keep the bound the sensitivity assumes). The products QᵀQ of blocks of
s = 2^k rows of such integers are then exact in floating point, in any order of the additions (every partial sum is
an integer below s·R²·2^2b <= 2^53), and the block results are added exactly as integers: Σ_i q_i q_iᵀ exactly. It
does not depend on how the rows are cut into blocks, cores, chunks or workers, so each engine uses the blocks that
suit its data (the Dask engine one task per chunk, whatever the chunks: no row is copied to meet a neighbour), and
the release is the same, bit for bit, on any. It is rounded once to the release's public grid G: neighbours'
statistics then differ by at most their sensitivity for rows of norm <= R plus one grid step per entry, whatever
the data (:func:`grid_gram_slack`). The shrink costs a relative ⌈√d⌉·2^-b of the matrix (4.8e-6 at d = 100), the
rounding a relative 2^-b per entry; neither is a privacy cost. s and b depend on d only (a block of about
1 MiB and at least 1,024 rows, b = ⌊(52 − k)/2⌋: 18 to 21 bits).

**Floating point.** Without a grid, the block products are added by the fixed tree of
:class:`dpstats._kernels.reduce.DyadicSum` over blocks of a public number of rows at global positions, with the
public error bound :func:`float_gram_error`: each block of r rows gives BᵀB in floating point, with every entry
within γ_r Σ_i |x_ij x_il| <= γ_r r R² of the exact value for any summation order (Higham 2002, Theorem 3.5).

The blocks are summed by an engine (:func:`dpstats._engine.float_gram`, :func:`dpstats._engine.grid_gram`); this
module holds what a block computes and the bounds, all from public quantities (n, d, the grid).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._rounding import UNIT_ROUNDOFF, gamma, sqrt_up
from .blocks import block_rows
from .reduce import DyadicSum, ExactSum
from .rows import NORM_TOLERANCE, RowNormViolations, row_norm_violations

__all__ = [
    "ExactGram",
    "GramShare",
    "GridGram",
    "float_gram_error",
    "gram_block_rows",
    "gram_reduction",
    "grid_gram_slack",
    "norm_bound",
    "norm_bound_squared",
    "symmetric_from_upper",
]

# Float Gram matrices: rows per block are bounded so that the per-block error stays small (see float_gram_error).
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
    """XᵀX as integers on a grid: ``values`` × ``grid``, with the per-entry slack of the construction (in grid
    steps: how far an entry can move between neighbours beyond the sensitivity of rows of norm <= R)."""

    values: np.ndarray
    grid: Fraction
    slack: float


#: Bytes of the blocks of rows whose exact products :class:`ExactGram` adds (in cache while they are checked,
#: rounded and multiplied).
_EXACT_BLOCK_BYTES = 1 << 20


@dataclass(frozen=True)
class ExactGram:
    """Σ_i q_i q_iᵀ exactly, for the rows of a d-column matrix rounded to the fixed-point grid h = 2^-``bits``
    (module docstring): blocks of ``rows`` = 2^k rows (about 1 MiB), q = round(x·``multiplier``)."""

    d: int
    rows: int
    bits: int

    @classmethod
    def of(cls, d: int) -> ExactGram:
        """The plan for rows of length ``d`` (public): k from the block's bytes, 10 <= k <= 16 (fewer rows would
        leave BLAS inefficient and the per-block integer additions, O(d²), no longer negligible next to the product,
        O(s·d²)), b = ⌊(52 − k)/2⌋ (21 at k = 10), so that a block's sums stay below s·R²·2^2b < 2^53 (R² < 2)."""
        k = min(16, max(10, (_EXACT_BLOCK_BYTES // (8 * max(d, 1))).bit_length() - 1))
        return cls(d, 1 << k, (52 - k) // 2)

    @property
    def multiplier(self) -> int:
        """M = 2^b − ⌈√d⌉: ‖round(x·M)‖·h <= R for every ‖x‖ <= R (R >= 1). The computed x·M is within u·M|x_j| of
        the exact product and rint within 1/2 of it, so ‖q − x·M‖ <= √d/2 + u·M·‖x‖, and ‖q‖·h <= R(1 + u)(1 −
        ⌈√d⌉h) + √d·h/2 <= R, as ⌈√d⌉·h·R exceeds √d·h/2 + R·u by far."""
        return (1 << self.bits) - math.isqrt(max(self.d, 1) - 1) - 1

    @property
    def unit(self) -> Fraction:
        """h², the unit of the exact sums."""
        return Fraction(1, 1 << (2 * self.bits))

    def share(self, X: np.ndarray) -> GramShare:
        """The exact Σ q_i q_iᵀ of the rows of ``X`` (any number: the result adds up over any cut), each block's rows
        checked first (:func:`~dpstats._kernels.rows.row_norm_violations`, counted over every row; once a row fails,
        nothing more is multiplied: the release will raise)."""
        n, d = X.shape
        total = ExactSum((d, d), self.rows * norm_bound_squared(d) * float(1 << (2 * self.bits)))
        q = np.empty((min(self.rows, n), d))  # reused: in cache for the check, the rounding and the product
        multiplier, checks = float(self.multiplier), None
        for start in range(0, n, self.rows):
            block = X[start : start + self.rows]
            found = row_norm_violations(block)
            if found is not None or checks is not None:
                checks = found if checks is None else checks if found is None else checks + found
                continue
            rounded = q[: len(block)]
            np.multiply(block, multiplier, out=rounded)
            np.rint(rounded, out=rounded)
            total.add((rounded.T @ rounded).astype(np.int64))  # exact integers below 2^53
        return GramShare(total, checks)

    def on_grid(self, share: GramShare, grid: Fraction) -> GridGram:
        """The exact sums rounded once to the release grid ``grid`` (a power of two; half up, exactly), with the
        slack of :func:`grid_gram_slack`."""
        values = share.total.total()
        shift = Fraction(grid) / self.unit  # a power of two
        if shift.denominator != 1:  # the grid is finer than h²: exact
            return GridGram(values.astype(object) * shift.denominator, Fraction(grid), 0.0)
        bits = shift.numerator.bit_length() - 1
        if values.dtype == object:  # sums beyond int64 (n > 2^20 rows or so): Python integers, then int64 if they fit
            rounded = [(int(v) + (1 << bits >> 1)) >> bits for v in values.ravel()]
            fits = all(abs(v) < 2**62 for v in rounded)
            rounded = np.array(rounded, dtype=np.int64 if fits else object).reshape(values.shape)
        else:
            rounded = (values + np.int64(1 << bits >> 1)) >> np.int64(bits)
        return GridGram(rounded, Fraction(grid), grid_gram_slack(0, self.d, grid))


@dataclass(frozen=True)
class GramShare:
    """What :meth:`ExactGram.share` found in some rows (added up over any cut with ``+``): the exact sums and the
    rows that failed the check (None: none)."""

    total: ExactSum
    checks: RowNormViolations | None = None

    def __add__(self, other: GramShare) -> GramShare:
        total = self.total.copy()  # shares are task results: never changed in place
        total.extend(other.total)
        if self.checks is None or other.checks is None:
            return GramShare(total, self.checks or other.checks)
        return GramShare(total, self.checks + other.checks)


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
    """The per-entry slack of :class:`ExactGram`'s sums rounded once to ``grid``, in grid steps: one step (the
    rounding; none when the grid is finer than the sums' unit h²), for rows of length d, whatever n (public)."""
    return 1.0 if Fraction(grid) > ExactGram.of(d).unit else 0.0


def gram_reduction(n: int, d: int):
    """What an engine needs to sum XᵀX in floating point over blocks: ``(rows per block, leaf, new_sum)``: float
    products added by the fixed tree."""
    return gram_block_rows(n, d), _float_product, DyadicSum


def _float_product(block: np.ndarray) -> np.ndarray:
    return block.T @ block


def symmetric_from_upper(upper_values: np.ndarray, d: int) -> np.ndarray:
    """The symmetric d × d matrix whose upper triangle (diagonal included, row-major, as ``numpy.triu_indices``)
    is ``upper_values`` (how AG and CCA release their noisy matrices)."""
    A = np.zeros((d, d))
    A[np.triu_indices(d)] = upper_values
    return A + np.triu(A, 1).T
