"""DPTheilSen for one feature (Alabi, McMillan, Sarathy, Smith & Vadhan, PoPETs 2022): private medians of the
predictions of pairwise lines.

**The algorithm** (the paper's DPTheilSen, Section 4, with the exponential-mechanism median, "DPExpTheilSen"):

1. k random perfect matchings of the n rows are drawn from ``rng`` before anything is read (a matching pairs the
   rows of a random permutation two by two; an odd row out is left unpaired), so each row is in at most k pairs.
2. Each pair (x_i, y_i), (x_j, y_j) gives the line through its two points and its predictions at the public
   points x₂₅ = l + (u − l)/4 and x₇₅ = l + 3(u − l)/4 of ``bounds_X`` = (l, u): p = y_i + s·(x − x_i) with
   s = (y_j − y_i)/(x_j − x_i) (a pair with x_i = x_j predicts (y_i + y_j)/2 at both points). Each prediction is
   clipped to ``bounds_y`` (a map of the pair alone, part of the estimator: the medians' output range).
3. The median of the p₂₅'s and the median of the p₇₅'s are released, each by the exponential mechanism on a public
   grid of ``bounds_y`` (Smith 2011; :func:`dpstats.quantile`'s mechanism, sampled exactly by
   :func:`dpstats.noise.exponential.sample_runs`) with ε/2; the line through (x₂₅, p̃₂₅) and (x₇₅, p̃₇₅) is the
   model (post-processing).

**Neighbours and sensitivity.** Replacing one row changes the at most k pairs it is in, so every rank of the
median's utility u(j) = −|c(j) − N/2| (N = the number of pairs, public: a function of n and k) moves by at most k:
Δu = k, and each median is ε/2-DP with the mechanism run at ε/(2k) per unit of rank (McSherry & Talwar 2007).
The whole is ε-DP (basic composition of the two medians): pure DP, δ = 0 (a δ > 0 is refused). **No privacy
unit**: the number of pairs, hence the median's target rank, would then depend on how many rows a unit has (not
public), and the matchings on the rows kept; ``privacy_unit`` is refused.

**Why the exponential mechanism, not smooth sensitivity.** Alabi et al. compare the exponential-mechanism median
(DPExpTheilSen) with a widened variant and a smooth-sensitivity one (DPSSTheilSen); the exponential mechanism is
pure ε-DP, needs only the public output range, and has an exact sampler on a grid (every output a grid point, no
floating-point noise), while smooth-sensitivity noise is scaled by a data-dependent bound and has no exact sampler
here. The paper recommends Theil–Sen for the smallest data sets (tens to hundreds of rows); beyond them the
sufficient-statistics methods win (its Section 6).

The paper's DPExpTheilSen uses every pair (k = n − 1 matchings); here the work of the exact sampler grows as n·k
(every rank is in its window), and more matchings did not help: on CPS 1985 (log wage on years of schooling, 427
training rows, ε = 1, ten splits) the held-out R² was 0.09–0.11 for every k from 4 to 64 (within a standard error),
at 15 ms for k = 4 and 200 ms for k = 64. The default is ``matchings`` = min(n − 1, 8) (public).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._release import charge
from .._trace import draw, observe
from .._validation import check_int
from ..accounting import Relation, split_epsilon
from ..accounting.events import Exponential
from ..exceptions import DataValidationError
from ..noise.exponential import sample_runs

__all__ = ["DEFAULT_MATCHINGS", "GRID_SIZE", "fit_theil_sen"]

#: The default cap on the number of matchings k (the paper uses all pairs, k = n − 1; see the module docstring).
DEFAULT_MATCHINGS = 8
#: Cells of the public output grid of each median (bounds_y in 2^16 steps).
GRID_SIZE = 2**16
_EPSILON_BITS = 40
_TARGET_BITS = 10


def _pairs(n: int, k: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of k random perfect matchings of n rows (each row in at most k pairs)."""
    half = n // 2
    first, second = [], []
    for _ in range(k):
        order = rng.permutation(n)
        first.append(order[: 2 * half : 2])
        second.append(order[1 : 2 * half : 2])
    return np.concatenate(first), np.concatenate(second)


def _predictions(x: np.ndarray, y: np.ndarray, i: np.ndarray, j: np.ndarray, at: float, lower: float, upper: float):
    """Each pair's line evaluated at ``at`` (the mean of the two y for a vertical pair), clipped to [lower, upper]."""
    dx = x[j] - x[i]
    same = dx == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = (y[j] - y[i]) / np.where(same, 1.0, dx)
        p = np.where(same, (y[i] + y[j]) / 2.0, y[i] + slope * (at - x[i]))
    return np.clip(np.nan_to_num(p, nan=(lower + upper) / 2.0, posinf=upper, neginf=lower), lower, upper)


def _median(values: np.ndarray, epsilon: float, sensitivity: int, lower: float, upper: float, rng) -> float:
    """The exponential-mechanism median (Smith 2011) of ``values`` in [lower, upper] on a grid of GRID_SIZE cells,
    sampled exactly (:func:`dpstats.noise.exponential.sample_runs`): P(j) ∝ exp(−(ε′/2)|c(j) − N/2|/Δu), ε′ = ε
    rounded down to a multiple of 2^-40 per unit of Δu."""
    width = (upper - lower) / GRID_SIZE
    cells = np.sort(np.clip(np.floor((values - lower) / width), 0, GRID_SIZE - 1).astype(np.int64))
    scale = 1 << _TARGET_BITS
    eps_num = math.floor(Fraction(epsilon) / sensitivity * (1 << _EPSILON_BITS))
    target = round(Fraction(1, 2) * cells.size * scale)
    rate = Fraction(eps_num, 1 << (_EPSILON_BITS + _TARGET_BITS + 1))
    scores = lambda: -np.abs(np.searchsorted(cells, np.arange(GRID_SIZE + 1)) * scale - target)  # noqa: E731
    observe("Theil-Sen median scores", scores, sensitivity=sensitivity * scale, norm="linf")
    lengths = np.diff(np.concatenate([[-1], cells, [GRID_SIZE]]))
    j = draw(
        "exponential mechanism (median of pairwise predictions)",
        rng,
        lambda: sample_runs(lengths, target, scale, rate, rng),
    )
    return lower if j == 0 else upper if j == GRID_SIZE else lower + (upper - lower) * (j / GRID_SIZE)


def check_matchings(matchings, rows: int) -> int:
    """k: public, 1 <= k (default min(n − 1, 8)); n >= 2 rows (n is public: a pair needs two)."""
    if rows < 2:
        raise DataValidationError(
            f"X has {rows} row: method='theil_sen' fits lines through pairs of rows and needs at least 2"
        )
    return check_int(min(rows - 1, DEFAULT_MATCHINGS) if matchings is None else matchings, "matchings", low=1)


def fit_theil_sen(
    x: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    *,
    bounds,
    clip: tuple[bool, bool],
    matchings,
    rng,
    accountant,
    events=(),
    note: str = "",
) -> tuple[np.ndarray, float]:
    """DPTheilSen (module docstring) on validated 1-D ``x``, ``y`` (within their public bounds, or to be clipped:
    ``clip`` for x and y). ``bounds``: ((l_x, u_x), (l_y, u_y)), or a zero-argument function returning them that
    draws private bounds after the charge (``events``/``note``: their releases, charged with this one as one ledger
    entry). Returns (coef, intercept)."""
    k = check_matchings(matchings, x.shape[0])
    i, j = _pairs(x.shape[0], k, rng)
    half = split_epsilon(epsilon, 2)
    public = not callable(bounds)
    if public:
        (lower, upper), _ = bounds
        at = (lower + (upper - lower) / 4.0, lower + 3.0 * (upper - lower) / 4.0)
        points = f"x = {at[0]:g} and {at[1]:g}"
    else:
        points = "x = l + (u - l)/4 and l + 3(u - l)/4 of the private bounds_X (l, u)"
    charge(
        "linear_regression",
        [*events, Exponential(half), Exponential(half)],
        rng=rng,
        accountant=accountant,
        relation=Relation.ROW,
        note=f"{note + '; ' if note else ''}DPTheilSen (Alabi et al. 2022) with {k} matchings: two "
        "exponential-mechanism medians (epsilon/2 "
        f"each, utility sensitivity {k}) of the pairs' predictions at {points}, on a public grid "
        f"of {GRID_SIZE + 1} points of bounds_y; exact sampler",
    )
    (lower, upper), (low, high) = bounds if public else bounds()
    at = (lower + (upper - lower) / 4.0, lower + 3.0 * (upper - lower) / 4.0)
    x = np.clip(x, lower, upper) if clip[0] else x
    y = np.clip(y, low, high) if clip[1] else y
    p25, p75 = (_median(_predictions(x, y, i, j, a, low, high), half, k, low, high, rng) for a in at)
    slope = (p75 - p25) / (at[1] - at[0])
    return np.array([slope]), float(p25 - slope * at[0])
