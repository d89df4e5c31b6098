"""Row-norm checks and clipping on NumPy rows: the bound ‖x_i‖₂ <= R every PCA, CCA and ERM mechanism assumes.

A row passes when its computed squared norm is at most R²(1 + τ), τ = :data:`NORM_TOLERANCE` (rows normalised in
floating point can exceed R by a few ulps); the sensitivities use the largest true norm that passes
(:func:`dpstats._kernels.gram.norm_bound_squared`), so τ never understates them. Non-finite values are counted in
the same pass. Clipping scales a row with a larger norm down to R: a map of each row on its own with a public R, so
it keeps the guarantee (dividing by the largest norm reads the data and does not).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_finite, raise_nonfinite
from ..exceptions import OutOfBoundsError

__all__ = [
    "NORM_TOLERANCE",
    "RowNormViolations",
    "PROFILE_BITS",
    "check_row_norms",
    "clip_rows_to_norm",
    "norm_profile",
    "row_norm_violations",
    "scaled_rows",
]

# Rows produced by dividing by a norm can exceed 1 by a few ulps; this tolerance on
# the squared norm absorbs rounding only (it moves a sensitivity by < 1e-10).
NORM_TOLERANCE = 1e-10


@dataclass(frozen=True)
class RowNormViolations:
    """What a row-norm check found in some rows (added up over chunks): NaN or infinite values and rows with a
    norm above the bound, counted (the error names counts, never a value of the data)."""

    nonfinite: int = 0
    over: int = 0

    def __add__(self, other: RowNormViolations) -> RowNormViolations:
        return RowNormViolations(self.nonfinite + other.nonfinite, self.over + other.over)

    def raise_error(self, name: str, max_norm: float = 1.0) -> None:
        """Raise the error these violations call for (non-finite values first)."""
        if self.nonfinite:
            raise_nonfinite(name, self.nonfinite)
        raise OutOfBoundsError(
            f"{name} has {self.over} row(s) with L2 norm > {max_norm:g}; clip them with "
            f"dpstats.preprocessing.clip_rows({name}, {max_norm:g}) or pass clip=True "
            "(dividing by the largest norm reads the data and is not private). If you do not know a bound, PCA, "
            "CCA and covariance can choose one privately: norm_bound='private' (dps.pca, dps.cca, DPPCA, DPCCA, "
            "dps.covariance_dong; dps.preprocessing.private_norm_bound)"
        )


def row_norm_violations(X: np.ndarray, max_norm: float = 1.0) -> RowNormViolations | None:
    """None if every row of ``X`` is finite with ‖x‖² <= max_norm² (1 + τ), else what is wrong (counted)."""
    sq = np.einsum("ij,ij->i", X, X)
    limit = max_norm * max_norm * (1 + NORM_TOLERANCE)
    if sq.size == 0 or sq.max() <= limit:  # also false for NaN
        return None
    if not np.isfinite(sq).all():
        bad = int(np.size(X) - np.count_nonzero(np.isfinite(X)))
        if bad:
            return RowNormViolations(nonfinite=bad)
    over = sq > limit  # an overflowing square of finite values counts as over the bound
    return RowNormViolations(over=int(over.sum()))


def check_row_norms(X: np.ndarray, name: str = "X", *, max_norm: float = 1.0, clip: bool = False) -> np.ndarray:
    """Check that every row of the 2-D array ``X`` has L2 norm <= ``max_norm`` (non-finite values are caught in the
    same pass); with ``clip=True`` rows with a larger norm are scaled down to ``max_norm`` instead."""
    if clip:
        return clip_rows_to_norm(X, max_norm, name)
    found = row_norm_violations(X, max_norm)
    if found is not None:
        found.raise_error(name, max_norm)
    return X


def clip_rows_to_norm(X: np.ndarray, max_norm: float, name: str = "X") -> np.ndarray:
    """``X`` with rows of norm > ``max_norm`` scaled down to it (raises on NaN or infinity)."""
    if not np.isfinite(np.einsum("ij,ij->i", X, X)).all():
        check_finite(X, name)
    return scaled_rows(X, max_norm)


def scaled_rows(X: np.ndarray, max_norm: float) -> np.ndarray:
    """``X`` with rows of norm > ``max_norm`` scaled down to it; rows with NaN stay as they are (and an infinite
    value becomes NaN), for the check that follows to count."""
    sq = np.einsum("ij,ij->i", X, X)
    over = sq > max_norm * max_norm * (1 + NORM_TOLERANCE)
    if not over.any():
        return X
    scale = np.ones_like(sq)
    scale[over] = max_norm / np.sqrt(sq[over])
    return X * scale[:, None]


#: The squared norms summed by :func:`norm_profile` are rounded to multiples of 2^-PROFILE_BITS.
PROFILE_BITS = 36


def norm_profile(block: np.ndarray, levels: int, bound: float) -> np.ndarray:
    """What a block of rows contributes to the profile of its squared norms: the int64 vector
    ``[Σq, c_1, …, c_levels]``.

    q = round(min(‖x‖², ``bound``)·2^PROFILE_BITS) is each row's squared norm on a public fixed-point grid, so Σq
    is exact in any order (a block of up to 2^16 rows of q <= 2^37 stays far below 2^63). c_l counts the rows with
    4^-l < ‖x‖² <= 4^-(l−1), i.e. norm in (2^-l, 2^-(l−1)], for l = 1 … ``levels``; rows with ‖x‖² > 1 (within the
    norm check's tolerance) count in c_1, rows of norm <= 2^-levels in none. Each row's q and level depend on that
    row alone (its computed squared norm): replacing one row moves Σq by at most round(bound·2^PROFILE_BITS) and
    one row between two counts, whatever the rounding does.
    """
    sq = np.einsum("ij,ij->i", block, block)
    q = np.rint(np.minimum(sq, bound) * 2.0**PROFILE_BITS).astype(np.int64)
    with np.errstate(divide="ignore"):
        level = np.floor(-np.log2(sq) / 2.0) + 1.0  # 4^-level < sq <= 4^-(level-1), up to the log's rounding
    level = np.clip(np.nan_to_num(level, posinf=levels + 1.0), 1.0, levels + 1.0).astype(np.int64)
    level -= (sq > np.ldexp(1.0, -2 * (level - 1))) & (level > 1)  # exact comparisons with powers of four
    level += sq <= np.ldexp(1.0, -2 * level)
    counts = np.bincount(np.minimum(level, levels + 1), minlength=levels + 2)[1 : levels + 1]
    return np.concatenate([[int(q.sum())], counts]).astype(np.int64)
