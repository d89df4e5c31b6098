"""The records' statistics about the bounds' midpoint, exact: count, shifted sum and shifted sum of squares.

Shared by the privacy-unit releases of :mod:`dpstats.descriptive._moments` and by the releases with an interval
(:mod:`dpstats.descriptive._intervals`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._kernels.fixed_point import BoundedSums
from ..noise.release import Statistic

__all__ = ["Shifted", "scalar"]


@dataclass(frozen=True)
class Shifted:
    """The statistics of the (kept) records, exact (:mod:`dpstats.descriptive._moments`, "Privacy units"): the
    count C, the shifted sum S = Σ(x − x̄) and sum of squares Q = Σ(x − x̄)² per coordinate, with their units and
    their sensitivities for units of at most m records (m = 1: one record), and the midpoints x̄."""

    count: Statistic
    shifted: Statistic
    squares: Statistic | None
    count_sensitivity: int
    shifted_sensitivity: np.ndarray
    squares_sensitivity: np.ndarray
    midpoint: np.ndarray

    @classmethod
    def of(cls, sums: BoundedSums, m: int) -> Shifted:
        h = np.asarray(sums.unit, dtype=object)
        lo, hi = np.asarray(sums.q_lower, dtype=object), np.asarray(sums.q_upper, dtype=object)
        width, middle = hi - lo, lo + hi  # in steps h; x̄ = middle·h/2
        total = np.asarray(sums.sums, dtype=object)
        twice = 2 * total - sums.n * middle  # Σ(2q − (q_lo + q_hi)) = 2S/h
        squares = None
        if sums.squares is not None:  # Σ(2q − (q_lo + q_hi))² = 4Q/h²
            squares = Statistic(
                scalar(4 * np.asarray(sums.squares, dtype=object) - 4 * middle * total + sums.n * middle * middle),
                scalar(h * h / 4),
            )
        return cls(
            Statistic(sums.n, Fraction(1)),
            Statistic(scalar(twice), scalar(h / 2)),
            squares,
            m - 1,
            m * width * h,
            m * width * width * h * h / 4,
            np.asarray(middle * h / 2, dtype=np.float64),
        )


def scalar(values):
    """A 0-d object array as its Python object (a statistic of one coordinate), else the array."""
    return values.item() if isinstance(values, np.ndarray) and values.ndim == 0 else values
