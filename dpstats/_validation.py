"""Checks shared by every mechanism: privacy parameters, data, bounds and randomness.

Each check raises a :class:`~dpstats.exceptions.ParameterError` or
:class:`~dpstats.exceptions.DataValidationError` (both ``ValueError``) whose message
names the parameter, the value and what is allowed.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ._blocks import row_blocks
from ._engine import dask_engine, is_dask
from .exceptions import DataValidationError, OutOfBoundsError, ParameterError

# Rows produced by dividing by a norm can exceed 1 by a few ulps; this tolerance on
# the squared norm absorbs rounding only (it moves a sensitivity by < 1e-10).
NORM_TOLERANCE = 1e-10


def _is_real_scalar(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


#: The smallest ε accepted: below it the noise of any release exceeds 2^50 times its sensitivity (and a
#: subnormal ε would make scales overflow).
MIN_EPSILON = 1e-12


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float after checking it is finite and >= :data:`MIN_EPSILON`."""
    if not _is_real_scalar(epsilon) or not np.isfinite(epsilon) or epsilon < MIN_EPSILON:
        raise ParameterError(f"{name} must be a finite number >= {MIN_EPSILON:g}; got {epsilon!r}")
    return float(epsilon)


def check_delta(delta, name: str = "delta") -> float:
    """Return ``delta`` as a float after checking 0 <= delta < 1."""
    if not _is_real_scalar(delta) or not np.isfinite(delta) or not 0 <= delta < 1:
        raise ParameterError(f"{name} must be a number with 0 <= {name} < 1; got {delta!r}")
    return float(delta)


def check_positive(value, name: str) -> float:
    """Return ``value`` as a float after checking it is finite and > 0."""
    if not _is_real_scalar(value) or not np.isfinite(value) or value <= 0:
        raise ParameterError(f"{name} must be a finite number > 0; got {value!r}")
    return float(value)


def check_int(value, name: str, *, low: int = 1, high: int | None = None) -> int:
    """Return ``value`` as an int after checking ``low <= value <= high``."""
    allowed = f"an integer >= {low}" if high is None else f"an integer in [{low}, {high}]"
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise ParameterError(f"{name} must be {allowed}; got {value!r}")
    if value < low or (high is not None and value > high):
        raise ParameterError(f"{name} must be {allowed}; got {value!r}")
    return int(value)


def check_choice(value, name: str, choices) -> str:
    """Return ``value`` after checking it is one of ``choices``."""
    if value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ParameterError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def check_array(x, name: str, *, ndim: tuple[int, ...] = (1, 2), min_rows: int = 1) -> np.ndarray:
    """Return ``x`` as a float64 array with an allowed number of dimensions.

    Finiteness is not checked here: the bound and norm checks below catch NaN and
    infinity in the same pass that checks the declared bounds.

    A dask array, DataFrame or Series is not read: it comes back as a lazy
    float64 dask array with known row counts (:func:`dpstats._dask.as_array`),
    and the statistic's own pass over the data validates it.
    """
    if is_dask(x):
        return dask_engine().as_array(x, name, ndim=ndim, min_rows=min_rows)
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise DataValidationError(f"{name} must be numeric array-like; got {type(x).__name__}") from err
    if arr.ndim not in ndim:
        allowed = " or ".join(f"{d}-D" for d in ndim)
        raise DataValidationError(f"{name} must be {allowed}; got an array of shape {arr.shape}")
    rows = arr.shape[0] if arr.ndim else 1
    if rows < min_rows:
        raise DataValidationError(f"{name} must have at least {min_rows} row(s); got shape {arr.shape}")
    return arr


def check_finite(x: np.ndarray, name: str) -> np.ndarray:
    """Raise if ``x`` holds NaN or infinite values."""
    if not np.isfinite(x).all():
        raise_nonfinite(name, int(np.size(x) - np.count_nonzero(np.isfinite(x))))
    return x


def raise_nonfinite(name: str, count: int) -> None:
    """Raise the error for ``count`` NaN or infinite values in ``name``."""
    raise DataValidationError(f"{name} contains {count} NaN or infinite value(s); remove or impute them")


def check_bounds(bounds, name: str = "bounds") -> tuple[np.ndarray, np.ndarray]:
    """Return ``(lower, upper)`` as float arrays after checking lower < upper, both finite.

    ``bounds`` is a pair; each side is a scalar or an array broadcastable to the
    shape of one record (for example one value per column).
    """
    if bounds is None:
        raise ParameterError(
            f"{name} is required: pass (lower, upper) chosen without looking at the data"
        )
    try:
        lower, upper = bounds
        lower = np.asarray(lower, dtype=np.float64)
        upper = np.asarray(upper, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ParameterError(f"{name} must be a pair (lower, upper); got {bounds!r}") from err
    if not (np.isfinite(lower).all() and np.isfinite(upper).all()) or not (lower < upper).all():
        raise ParameterError(
            f"{name} must be finite with lower < upper; got ({lower.tolist()}, {upper.tolist()})"
        )
    with np.errstate(over="ignore"):
        width = upper - lower
    if not np.isfinite(width).all():
        raise ParameterError(f"{name} are too wide: upper - lower overflows a float; rescale the data")
    return lower, upper


def enforce_bounds(x: np.ndarray, lower, upper, *, name: str, axis=None, clip: bool) -> tuple[np.ndarray, np.ndarray]:
    """Check that every value of ``x`` lies in ``[lower, upper]``, or clip it when asked.

    Returns ``x`` (or its clipped copy) and its sum along ``axis``, which the
    caller would otherwise compute in a pass of its own. The minimum, maximum
    and sum come from one pass (:func:`_min_max_sum`); NaN propagates through
    the minimum and maximum, so the same pass detects non-finite data. With
    ``clip=True`` the values are clipped (a data-independent transformation,
    so it keeps the guarantee); without it an out-of-bounds value raises
    :class:`OutOfBoundsError`.
    """
    lo_seen, hi_seen, total = _min_max_sum(x, axis)
    if np.isnan(lo_seen).any() or np.isnan(hi_seen).any():
        check_finite(x, name)
    if clip:
        x = np.clip(x, _expand(lower, x, axis), _expand(upper, x, axis))
        return x, np.sum(x, axis=axis)
    if (lo_seen < lower).any() or (hi_seen > upper).any():
        lo_b, hi_b = _expand(lower, x, axis), _expand(upper, x, axis)
        outside = int(np.count_nonzero((x < lo_b) | (x > hi_b)))
        raise OutOfBoundsError(
            f"{name} has {outside} value(s) outside the declared bounds "
            f"[{_fmt(lower)}, {_fmt(upper)}]; fix the bounds, clip the data yourself, "
            "or pass clip=True to clip them (clipping keeps the privacy guarantee)"
        )
    return x, total


def _min_max_sum(x: np.ndarray, axis) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Minimum, maximum and sum of ``x`` along ``axis`` (None: all values), reading x from memory once.

    x is cut into cache-sized blocks along its first axis; the three reductions
    of a block run while it is in cache (1.8x the time of
    ``np.mean`` at 1e7 values, against 2.7x for three whole-array passes).
    """
    axis = None if axis is None else axis % x.ndim
    lo, hi, total = [], [], []
    for rows in row_blocks(x):
        block = x[rows]
        lo.append(np.min(block, axis=axis))
        hi.append(np.max(block, axis=axis))
        total.append(np.sum(block, axis=axis))
    if axis is None or axis == 0:  # every block reduces to the full output shape: combine them
        return np.minimum.reduce(lo), np.maximum.reduce(hi), np.add.reduce(total)
    return np.concatenate(lo), np.concatenate(hi), np.concatenate(total)  # blocks hold different output rows


@dataclass(frozen=True)
class RowNormViolations:
    """What a row-norm check found in some rows (added up over chunks): NaN or infinite values, rows with a norm
    above the bound, and the largest squared norm among those rows."""

    nonfinite: int = 0
    over: int = 0
    largest: float = 0.0

    def __add__(self, other: RowNormViolations) -> RowNormViolations:
        return RowNormViolations(self.nonfinite + other.nonfinite, self.over + other.over,
                                 max(self.largest, other.largest))

    def raise_error(self, name: str, max_norm: float = 1.0) -> None:
        """Raise the error these violations call for (non-finite values first)."""
        if self.nonfinite:
            raise_nonfinite(name, self.nonfinite)
        raise OutOfBoundsError(
            f"{name} has {self.over} row(s) with L2 norm > {max_norm:g} "
            f"(largest {np.sqrt(self.largest):.4g}); clip them with "
            f"dpstats.datasets.clip_rows({name}, {max_norm:g}) or pass clip=True "
            "(dividing by the largest norm reads the data and is not private)"
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
    return RowNormViolations(over=int(over.sum()), largest=float(sq.max()))


def check_row_norms(X, name: str = "X", *, max_norm: float = 1.0, clip: bool = False):
    """Check that every row of the 2-D array ``X`` has L2 norm <= ``max_norm``.

    Non-finite values are caught in the same pass. With ``clip=True`` rows with a
    larger norm are scaled down to ``max_norm`` (the private-safe alternative to
    dividing by the largest norm, which reads the data).

    A dask array is not read here: with ``clip=True`` the rescaling is added to
    its graph; the statistic's pass checks the rows (every dask statistic of
    rows with a norm bound does).
    """
    if is_dask(X):
        return dask_engine().clip_rows(X, max_norm) if clip else X
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


def _expand(bound: np.ndarray, x: np.ndarray, axis) -> np.ndarray:
    if axis is None or bound.ndim == 0:
        return bound
    return np.expand_dims(bound, axis)


def _fmt(bound: np.ndarray) -> str:
    return f"{float(bound):g}" if bound.ndim == 0 else np.array2string(bound, precision=4)
