"""The confidence interval of a private quantile, for the population quantile: a rank interval whose ends are private.

The interval's ends are themselves released by Smith's exponential mechanism on the public grid (exact sampler,
:mod:`dpstats.descriptive._quantiles`), each at a *target rank* chosen so that the interval holds its level for the
sampling of the data and the mechanism's own randomness together: the approach of Drechsler, Globus-Harris,
McMillan, Sarathy & Smith (2022, "Nonparametric differentially private confidence intervals for the median",
Section 4, the exponential-mechanism interval "ExpMech"; their point that the two sources of error must be
accounted for jointly, not one after the other), here for any level q of dpstats' quantile.

The targets (public: a function of n, q, the level and ε only)
---------------------------------------------------------------
Let θ = inf{x : F(x) >= q} be the population quantile and K the number of records <= θ: K ~ Binomial(n, F(θ)),
F(θ) >= q. If the lower end L, a grid point g_J released at target rank t, exceeds θ, every record <= θ lies in a
cell below J, so the rank of the release c(J) = #{records in cells below J} is >= K. The mechanism picks a grid
point with probability ∝ exp(−(ε′/2)|c(j) − t|) (ε′ = ε rounded down to 2^-40, over the score's sensitivity); with
the records' ranks equally spread over the grid points near the target, its rank error E = c(J) − t is the
two-sided geometric variable P(E = e) ∝ r^{|e|}, r = e^{−ε′/2}, so

    P(L > θ) <= Σ_k P(K = k) · P(E >= k − t),      K ~ Binomial(n, q)

(the binomial with F(θ) = q is the worst case: a larger F(θ) makes K larger). The target of L is the largest
integer t with this at most (1 − level)/2; symmetrically, the target of the upper end is the smallest t with
Σ_k P(K′ = k)·P(E <= k − t) <= (1 − level)/2 (K′ the records < θ, at most Binomial(n, q) in distribution). When no
target in [0, n] is small enough, that end is the bound itself (no release is drawn for it; the budget it was
planned with is still charged, so that what is charged never depends on the data).

The equal-spreading model is what an approximation means here: near the quantile of a continuous distribution the
records' spacings on a fine grid vary little between neighbouring ranks, and where they do (a sparse tail), the
mechanism leans towards the sparse side — outwards, for the ends of an interval around the bulk of the data. The
coverage is measured in dpstats' tests and benchmark. With atoms (many records in one grid cell, e.g. integer data
on a fine grid) ranks are skipped and the level is not guaranteed.

References
----------
J. Drechsler, I. Globus-Harris, A. McMillan, J. Sarathy & A. Smith, "Nonparametric differentially private
confidence intervals for the median", Journal of Survey Statistics and Methodology 10(3), 2022 (arXiv:2106.10333).
A. Smith, "Privacy-preserving statistical estimation with optimal convergence rates", STOC 2011.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["METHOD", "SHARES", "end_targets"]

METHOD = (
    "rank interval with private ends: exponential-mechanism quantiles at target ranks accounting for sampling and "
    "the mechanism together (Drechsler, Globus-Harris, McMillan, Sarathy & Smith 2022)"
)
#: The budget's shares: the estimate, the lower end, the upper end.
SHARES = (2, 1, 1)
_EPSILON_BITS = 40  # as the sampler rounds ε (dpstats.descriptive._quantiles)
_WINDOW = 12.0  # binomial standard deviations kept on each side of n·q


def end_targets(n: int, q: float, level: float, epsilon: float, sensitivity=1) -> tuple[int | None, int | None]:
    """The target ranks (t_low, t_high) of the interval's ends (module docstring); None for an end that is the
    bound itself. ``epsilon`` is each end's ε and ``sensitivity`` the score's (1 for records)."""
    from scipy.stats import binom

    rate = Fraction(math.floor(Fraction(epsilon) / Fraction(sensitivity) * (1 << _EPSILON_BITS)), 1 << _EPSILON_BITS)
    r = math.exp(-float(rate) / 2.0)
    beta = (1.0 - level) / 2.0
    sd = math.sqrt(n * q * (1.0 - q))
    first = max(0, math.floor(n * q - _WINDOW * sd) - 2)
    last = min(n, math.ceil(n * q + _WINDOW * sd) + 2)
    k = np.arange(first, last + 1)
    pmf = binom.pmf(k, n, q)

    def at_least(e: np.ndarray) -> np.ndarray:  # P(E >= e)
        e = np.asarray(e, dtype=np.float64)
        positive = np.power(r, np.maximum(e, 0.0)) / (1.0 + r)
        return np.where(e >= 1, positive, 1.0 - np.power(r, np.maximum(1.0 - e, 0.0)) / (1.0 + r))

    def lower_failure(t: int) -> float:
        return float(np.sum(pmf * at_least(k - t)))

    def upper_failure(t: int) -> float:
        return float(np.sum(pmf * (1.0 - at_least(k - t + 1))))

    low = _largest(lower_failure, beta, 0, n)
    high = _smallest(upper_failure, beta, 0, n)
    return low, high


def _largest(failure, beta: float, first: int, last: int) -> int | None:
    """The largest integer t in [first, last] with failure(t) <= beta (failure increasing), or None."""
    if failure(first) > beta:
        return None
    lo, hi = first, last
    if failure(hi) <= beta:
        return hi
    while hi - lo > 1:
        middle = (lo + hi) // 2
        if failure(middle) <= beta:
            lo = middle
        else:
            hi = middle
    return lo


def _smallest(failure, beta: float, first: int, last: int) -> int | None:
    """The smallest integer t in [first, last] with failure(t) <= beta (failure decreasing), or None."""
    if failure(last) > beta:
        return None
    lo, hi = first, last
    if failure(lo) <= beta:
        return lo
    while hi - lo > 1:
        middle = (lo + hi) // 2
        if failure(middle) <= beta:
            hi = middle
        else:
            lo = middle
    return hi
