"""TukeyEM (Amin, Joseph, Ribero & Vassilvitskii, ICLR 2023): a model of high approximate Tukey depth among OLS
models fitted on disjoint subsets, chosen by a restricted exponential mechanism behind a propose-test-release step.

**The algorithm** (the paper's TukeyEM, Algorithm 2, with its restricted exponential mechanism, Algorithm 1, and the
propose-test-release check of Brown, Gaboardi, Smith, Ullman & Zakynthinou 2021):

1. The rows are split at random (``rng``, before anything is read) into m disjoint subsets of ⌊n/m⌋ rows (the
   n − m⌊n/m⌋ left over are not used) and an OLS model β_i ∈ R^k is fitted on each (k = d, plus 1 with an
   intercept; the minimum-norm least-squares solution, a function of that subset's rows only). With a privacy unit
   the rows are first bounded as every unit-level release bounds them (:func:`dpstats._engine.bound_rows`: at most
   ``max_rows`` rows of each unit, chosen by a keyed hash of the unit's own rows, in an order that depends on the
   rows' values only), then the *units* are split: a unit goes to subset h(id) mod m, h a keyed 64-bit hash of
   its canonical identifier (a second key drawn from ``rng``: public, independent of the data). A unit's rows all
   fall in its one subset, and which one depends on its own identifier and the key alone (renaming a unit moves
   its rows from one subset to another: two models, nothing else). The subsets' sizes are then random
   (multinomial: with N/m units per subset on average, a fraction of about e^{−N/m} are empty and give the zero
   model, a function of their — empty — rows); keep N well above m.
2. Approximate Tukey depth (the paper's Definition 2): T(y) = min over coordinates j of min(#{i : β_ij <= y_j},
   #{i : β_ij >= y_j}). The region of depth >= p is the box Π_j [S_j(p), S_j(m + 1 − p)] (S_j the sorted j-th
   coordinates), of volume V_p, for p = 1 … P = ⌊m/2⌋ (V_p = ∞ for p <= 0, V_{P+1} = 0).
3. PTR: k̂ = 1 + the largest k >= 0 such that some g >= 1 has V_{t−k−2}·e^{−cg} <= θ·V_{t+k+g+1} (0 if none),
   t = ⌊P/2⌋ (the paper's m/4); release k̂ + Lap(2/ε) and stop with no model (a warning, NaN coefficients) unless
   it is at least the threshold T >= (2/ε)·ln(1/δ) (rounded up, see "Privacy"). Everything is charged before the
   Laplace noise is drawn.
4. The restricted exponential mechanism at rate c: a depth p ∈ {t, …, P} with probability ∝ (V_p − V_{p+1})e^{cp},
   then a point uniformly in the region of depth exactly p (the paper's Algorithm 1 sampler: the coordinate where
   the depth is attained, then uniform coordinates).

**Neighbours and sensitivity.** Replacing one row changes at most one model, because the subsets are disjoint and
fixed before the data are read (a permutation of the n positions). Replacing all rows of one unit changes at most
one model too: the other units keep the same rows (bounding chooses a unit's rows from its own rows and the key),
in the same subsets (h of their own identifiers), in the same order (the canonical order of the kept rows is a
function of their values), so every other subset's rows, and its model, are the same bit for bit. Every count in
T then moves by at most one, so |T(y) − T′(y)| <= 1 for every y, and the regions nest, R_{p+1} ⊆ R′_p ⊆ R_{p−1}:
V′_p ∈ [V_{p+1}, V_{p−1}] (at distance k: [V_{p+k}, V_{p−k}]). The sensitivity checker observes this as the
number of depths p whose log-volume is at least L, for every L of a public grid: it moves by at most one.

**Privacy (derived here for replace-one neighbours).** For neighbours B, B′ of model sets and any output set S,
with the unnormalised weight w_B(y) = e^{c T_B(y)} on {T_B >= t} and Z_B its integral:
P_B(S) <= e^{2c}(1 + a_B) P_{B′}(S) + b_B, with a_B = e^{c(t−1)}(V_{t−1} − V_t)/Z_B (the mass B′ can add at depth
t − 1) and b_B = e^{ct}(V_t − V_{t+1})/Z_B (the mass at depth t that B′ can drop). Since Z_B >= e^{c(t+g)}V_{t+g},
both are at most e^{−cg}V_{t−1}/V_{t+g}; for any dataset within distance k of B (and its neighbours, within k + 1)
they are at most e^{−cg}V_{t−k−2}/V_{t+g+k+1}. So the condition of step 3 at k makes every dataset within distance k
*safe*: its restricted mechanism is (2c + ln(1 + θ), θ)-indistinguishable from its neighbours'. The condition
holding at k implies it at k − 1 for a neighbour, so k̂ moves by at most 1 between neighbours (sensitivity 1), and
k̂ >= 1 implies the data are safe. PTR (Dwork & Lei 2009; Brown et al. 2021): an unsafe dataset has k̂ = 0 and
passes with probability at most δ (the discrete Laplace tail beyond the threshold T >= b·ln(1/δ), b its scale); a
safe one gives an output within (ε_PTR + 2c + ln(1 + θ), e^{ε_PTR}θ) of its neighbours'. With θ <= δ·e^{−ε/2} and
2c <= ε − ε_PTR − θ (ε_PTR = ε/2, as its event states it), the whole is **(ε, δ)-DP** (ln(1 + θ) <= θ). θ, c, T and
the test's ln θ are rounded so that this holds exactly (:func:`calibration`: θ, c and ln θ down, T up, from rigorous
enclosures of e^{−ε/2}, ln θ and ln(1/δ)). Amin et al. state the check with their own constants (δ/(8e^ε), indices
t − k − 1); dpstats uses the ones derived above, which are what this implementation needs, and δ > 0 is required.

**Configurations that can never release are refused.** V_p is non-increasing in p, so the margin of step 3 is at
least −c·g for any data, and k̂ is at most its value when all volumes are equal:
k̂_max = 1 + min(t − 3, P − t − 1 − g₀) (0 if negative), g₀ the smallest g with c·g >= ln(1/θ) — a function of
(m, ε, δ) alone (:func:`reachable_distance`). When k̂_max is below the threshold T, every dataset passes with
probability below 1/2 (and far below for most): such a call is refused with a ParameterError before anything is
charged, naming the smallest workable m (:func:`smallest_subsets`), as is θ >= ε/2 (c <= 0). At δ = 1e-6 the
smallest workable m (:data:`SMALLEST_SUBSETS`) is

=====  =====  =====  =====  =====
ε      0.1    0.3    1      3      10
m      3326   1118   342    122    42
=====  =====  =====  =====  =====

so the default m = 1000 needs ε >= 0.3 (roughly m >= 4(T + g₀) with T = 2 ln(1/δ)/ε and g₀ ≈ 4 ln(e^{ε/2}/δ)/ε:
m grows as 1/ε). m must also leave each model at least k rows (n >= m·k), and at the smallest workable m only
data whose volumes hardly shrink with depth pass: the paper's m = 1000 at ε >= 1 leaves room.

**What is exact and what is not.** The PTR noise is exact discrete Laplace on a public grid
(:func:`dpstats.noise.release.make_noise`; k̂ is an integer). The exponential mechanism's volumes, the depth's
Gumbel-max draw and the uniform point are floating point, and no exact sampler is known for this continuous,
data-dependent output: the release is recorded as **unproven** (an :class:`~dpstats.Accountant` refuses it unless
created with ``allow_unproven=True``), as the joint quantile mechanism is.

m, the number of models (``subsets``), is public: the paper's experiments use m = 1000 (its default here). Each
model needs at least k rows (n >= m·k, checked before anything is charged); the paper recommends n well above
1000·k.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._engine import Bounded, bound_rows
from .._kernels.blocks import single_threaded_blas
from .._kernels.units import value_hashes
from .._release import calibrate, charge
from .._rounding import enclose, float_down, float_up
from .._trace import draw, observe
from .._validation import check_int, warn_caller
from ..accounting.events import ApproxDP
from ..exceptions import DataValidationError, ParameterError, PrivacyError
from ..noise.release import Statistic

__all__ = [
    "DEFAULT_SUBSETS",
    "SMALLEST_SUBSETS",
    "PTRFailedWarning",
    "calibration",
    "fit_tukey",
    "reachable_distance",
    "smallest_subsets",
]

#: The paper's number of models m (its experiments).
DEFAULT_SUBSETS = 1000


class PTRFailedWarning(UserWarning):
    """TukeyEM's propose-test-release check did not pass: no model is released (the coefficients are NaN)."""


def _models(X: np.ndarray, y: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """One minimum-norm least-squares model per group of rows (each a function of its own rows only); a
    non-finite coordinate (an overflow) is mapped to ±1e300, a map of that model alone."""
    models = np.empty((len(groups), X.shape[1]))
    for i, rows in enumerate(groups):
        models[i] = np.linalg.lstsq(X[rows], y[rows], rcond=None)[0]
    return np.nan_to_num(models, nan=0.0, posinf=1e300, neginf=-1e300)


def _log_volumes(sorted_models: np.ndarray) -> np.ndarray:
    """log V_p for p = 1 … P = ⌊m/2⌋ (index p − 1): Σ_j log(S_j(m + 1 − p) − S_j(p)); −∞ for an empty box."""
    m = sorted_models.shape[1]
    depth = m // 2
    widths = sorted_models[:, ::-1][:, :depth] - sorted_models[:, :depth]
    with np.errstate(divide="ignore", over="ignore"):
        return np.sum(np.log(np.maximum(widths, 0.0)), axis=0)


def _distance(log_v: np.ndarray, t: int, rate: float, log_theta: float) -> int:
    """k̂ of step 3 (module docstring): 1 + the largest k with V_{t−k−2}e^{−cg} <= θV_{t+k+g+1} for some g >= 1."""
    depth = log_v.size
    found = 0
    for k in range(0, t - 2):  # V_{t−k−2} needs t − k − 2 >= 1
        low = t - k - 2
        highs = np.arange(t + k + 2, depth + 1)  # t + k + g + 1 for g >= 1, up to P
        if highs.size == 0:
            break
        g = highs - (t + k + 1)
        with np.errstate(invalid="ignore"):
            margin = log_v[low - 1] - log_v[highs - 1] - rate * g
        if not np.any(margin <= log_theta):
            break
        found = k + 1
    return found


def _depth_weights(log_v: np.ndarray, t: int, rate: float) -> np.ndarray:
    """log((V_p − V_{p+1})e^{cp}) for p = t … P."""
    depth = log_v.size
    p = np.arange(t, depth + 1)
    upper = log_v[p - 1]
    following = np.append(log_v[p[:-1]], -np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = upper + np.log1p(-np.exp(following - upper))
    return np.where(np.isfinite(exact), exact, -np.inf) + rate * p


def _sample_at_depth(sorted_models: np.ndarray, p: int, rng) -> np.ndarray:
    """A uniform point of the region of approximate depth exactly p (the paper's Algorithm 1 sampler): the region is
    the disjoint union over j of {depth p attained first at coordinate j}."""
    k, m = sorted_models.shape
    low_p, high_p = sorted_models[:, p - 1], sorted_models[:, m - p]
    low_q, high_q = sorted_models[:, p], sorted_models[:, m - p - 1]
    inner = np.maximum(high_q - low_q, 0.0)  # depth >= p + 1
    outer = np.maximum(high_p - low_p, 0.0)  # depth >= p
    ring = np.maximum(outer - inner, 0.0)
    with np.errstate(divide="ignore"):
        log_inner, log_outer, log_ring = np.log(inner), np.log(outer), np.log(ring)
    before = np.concatenate([[0.0], np.cumsum(log_inner)[:-1]])
    after = np.concatenate([np.cumsum(log_outer[::-1])[::-1][1:], [0.0]])
    pieces = log_ring + before + after
    j = int(np.argmax(pieces + rng.gumbel(size=k)))
    point = np.empty(k)
    point[:j] = rng.uniform(low_q[:j], high_q[:j])
    point[j + 1 :] = rng.uniform(low_p[j + 1 :], high_p[j + 1 :])
    left, right = low_q[j] - low_p[j], high_p[j] - high_q[j]
    u = rng.uniform(0.0, left + right)
    point[j] = low_p[j] + u if u < left else high_q[j] + (u - left)
    return point


#: Log-volume levels at which the sensitivity checker counts the depths (public: a grid of step 1/16 over the
#: range of a float's logarithm in a few coordinates).
_LEVELS = np.arange(-16 * 2000, 16 * 2000 + 1) / 16.0


def _volume_levels(log_v: np.ndarray) -> np.ndarray:
    """For every public level L: the number of depths p with log V_p >= L (module docstring, "Neighbours"): it moves
    by at most one between neighbours, since V′_p ∈ [V_{p+1}, V_{p−1}] — what the sensitivity checker observes."""
    return np.searchsorted(-log_v, -_LEVELS, side="right")


@dataclass(frozen=True)
class Calibration:
    """TukeyEM's public constants at (ε, δ) (module docstring, "Privacy"): the PTR noise (ε/2, discrete Laplace),
    θ <= δe^{−ε/2} and ln θ rounded down (the test's side), the rate c with 2c <= ε − ε_PTR − θ, and the threshold
    T >= b·ln(1/δ)."""

    ptr: object
    theta: float
    log_theta: float
    rate: float
    threshold: float


def distance_sensitivity() -> float:
    """Δ of the distance to unsafety k̂ (module docstring, "Privacy"): 1."""
    return 1.0


@functools.lru_cache(maxsize=64)
def calibration(epsilon: float, delta: float) -> Calibration:
    """The constants of TukeyEM at (ε, δ), rounded so that the guarantee is never overstated: θ rounded down from a
    rigorous lower bound on δe^{−ε/2}, c rounded down from (ε − ε_PTR − θ)/2 in exact arithmetic (ε_PTR the PTR
    event's own ε), the threshold rounded up from a rigorous upper bound on b·ln(1/δ). Raises a ParameterError
    when c <= 0 (θ >= ε/2: δ too large for ε)."""
    ptr = calibrate(epsilon=epsilon / 2.0, delta=0.0, sensitivity=distance_sensitivity(), changed=1, unit=Fraction(1))
    exp_low, _ = enclose("exp", -Fraction(epsilon) / 2)
    theta = float_down(Fraction(delta) * exp_low)
    room = Fraction(epsilon) - Fraction(ptr.event.epsilon) - Fraction(theta)
    rate = float_down(room / 2) if room > 0 else 0.0
    if theta <= 0.0 or rate <= 0.0:
        raise ParameterError(
            f"TukeyEM needs delta * exp(-epsilon/2) < epsilon/2 (its exponential mechanism's rate is "
            f"(epsilon/2 - delta * exp(-epsilon/2))/2); got epsilon={epsilon!r}, delta={delta!r}: a larger epsilon or "
            "a smaller delta"
        )
    log_theta = float_down(enclose("log1p", Fraction(theta) - 1)[0])  # the test accepts no more than θ allows
    _, log_high = enclose("log1p", 1 / Fraction(delta) - 1)  # ln(1/δ)
    threshold = float_up(Fraction(ptr.scale) * Fraction(ptr.grid) * log_high)
    return Calibration(ptr, theta, log_theta, rate, threshold)


def reachable_distance(subsets: int, epsilon: float, delta: float) -> int:
    """k̂_max: the largest distance to unsafety the test of step 3 can find for m = ``subsets`` models at (ε, δ), on
    any data (module docstring, "Configurations that can never release"; the value of :func:`_distance` when every
    volume is equal, the most favourable case, in closed form)."""
    cal = calibration(epsilon, delta)
    depth = subsets // 2
    t = depth // 2
    need = -cal.log_theta  # the margin at equal volumes is 0 - 0 - fl(c·g): g must reach fl(c·g) >= ln(1/θ)
    g = max(1, math.ceil(need / cal.rate))
    while g > 1 and cal.rate * (g - 1) >= need:
        g -= 1
    while cal.rate * g < need:
        g += 1
    top = min(t - 3, depth - t - 1 - g)
    return top + 1 if top >= 0 else 0


def smallest_subsets(epsilon: float, delta: float) -> int:
    """The smallest m >= 4 whose reachable distance reaches the threshold at (ε, δ) (k̂_max grows with m)."""
    threshold = calibration(epsilon, delta).threshold
    high = 4
    while reachable_distance(high, epsilon, delta) < threshold:
        high *= 2
    low = high // 2
    while low + 1 < high:  # reachable at high, not at low (or low < 4)
        middle = (low + high) // 2
        if middle >= 4 and reachable_distance(middle, epsilon, delta) >= threshold:
            high = middle
        else:
            low = middle
    return max(high, 4)


#: The smallest workable m at δ = 1e-6, by ε (:func:`smallest_subsets`; documented, and checked by the tests).
SMALLEST_SUBSETS = {0.1: 3326, 0.3: 1118, 1.0: 342, 3.0: 122, 10.0: 42}


def _subsets(n: int, subsets: int, rng, ids: np.ndarray | None) -> list[np.ndarray]:
    """The rows of each subset (step 1): without units ⌊n/m⌋ rows each of a random permutation of the n positions;
    with units (``ids``: the kept rows' canonical identifiers) every unit's rows in subset h(id) mod m, h a keyed
    hash (its key drawn from ``rng``): a function of the unit's own identifier and the key. Each subset's rows stay
    in their order (the canonical order of the kept rows)."""
    if ids is None:
        size = n // subsets
        order = rng.permutation(n)
        return [order[i * size : (i + 1) * size] for i in range(subsets)]
    key = int(rng.integers(0, 2**63))
    where = (value_hashes(np.asarray(ids), key) % np.uint64(subsets)).astype(np.int64)
    order = np.argsort(where, kind="stable")
    return np.split(order, np.cumsum(np.bincount(where, minlength=subsets))[:-1])


def fit_tukey(
    X,
    y,
    units,
    epsilon: float,
    delta: float,
    *,
    subsets: int,
    intercept: bool,
    rng,
    accountant,
) -> tuple[np.ndarray, float, bool]:
    """TukeyEM (module docstring) on validated NumPy ``X`` (n × d), ``y``. Returns (coef, intercept, passed)."""
    n, d = X.shape
    Z = np.column_stack([X, np.ones(n)]) if intercept else X
    if units is None:
        rows = Bounded((Z, y), n, 1, by_unit=False)
        groups = _subsets(n, subsets, rng, None)
    else:
        aligned = units.aligned(n)
        rows = bound_rows((Z, y, aligned.ids), aligned, rng, canonical=True)
        Z, y, ids = rows.arrays
        groups = _subsets(Z.shape[0], subsets, rng, ids)
    with single_threaded_blas():  # m small least-squares problems: a BLAS team per problem only waits
        models = _models(Z, y, groups)
    depth = subsets // 2
    t = depth // 2
    cal = calibration(epsilon, delta)
    sorted_models = np.sort(models.T, axis=1)
    log_v = _log_volumes(sorted_models)
    distance = _distance(log_v, t, cal.rate, cal.log_theta)
    ptr = cal.ptr
    split = "each unit's rows in one subset; " if rows.by_unit else ""
    charge(
        "linear_regression",
        [ApproxDP(epsilon, delta)],
        rng=rng,
        accountant=accountant,
        rows=rows,
        proven=False,
        note=f"{split}TukeyEM (Amin et al. 2023): {subsets} OLS models on disjoint subsets, propose-test-release on "
        f"the distance to unsafety (epsilon/2, exact discrete Laplace, threshold {cal.threshold:.4g}) then the "
        f"restricted exponential mechanism on approximate Tukey depth (rate {cal.rate:.6g}, theta {cal.theta:.4g}); "
        "the mechanism's sampler is floating point (no exact sampler known): guarantee unproven",
        noise=[ptr.statement("depth units (distance to unsafety)")],
    )
    noisy = float(np.asarray(ptr.apply(Statistic(np.array([distance]), Fraction(1)), rng))[0])
    if noisy < cal.threshold:
        warn_caller(
            "TukeyEM's propose-test-release check did not pass (the models are too spread for the budget: more rows "
            "per model, fewer subsets or a larger epsilon help); no model is released",
            PTRFailedWarning,
        )
        return np.full(d, np.nan), (math.nan if intercept else 0.0), False
    observe(
        "depths of log-volume at least L, at public levels L", lambda: _volume_levels(log_v), sensitivity=1, norm="linf"
    )
    weights = _depth_weights(log_v, t, cal.rate)
    if not np.isfinite(weights).any():
        raise PrivacyError("TukeyEM: every depth region is empty")  # unreachable after a pass: V_{t+g} > 0 then
    depths = np.arange(t, depth + 1)

    def sample():
        p = int(depths[np.argmax(weights + rng.gumbel(size=weights.size))])
        return _sample_at_depth(sorted_models, p, rng)

    beta = draw("restricted exponential mechanism (approximate Tukey depth)", rng, sample)
    if intercept:
        return beta[:d], float(beta[d]), True
    return beta, 0.0, True


def check_subsets(subsets, rows: int, width: int, by_unit: bool, epsilon: float, delta: float) -> int:
    """m, checked against public values only, before anything is charged: (m, ε, δ) must be able to release
    (:func:`reachable_distance` against the threshold), and without units every model needs ``width`` rows (n is
    public under replace-one rows; the number of units is not, and is never checked)."""
    m = check_int(DEFAULT_SUBSETS if subsets is None else subsets, "subsets", low=4)
    cal = calibration(epsilon, delta)
    reach = reachable_distance(m, epsilon, delta)
    if reach < cal.threshold:
        raise ParameterError(
            f"TukeyEM with subsets = {m} at epsilon = {epsilon:g}, delta = {delta:g} can never pass its "
            f"propose-test-release check: the largest distance its test can find on any data is {reach}, below the "
            f"threshold {cal.threshold:.4g}, so it would refuse (and be charged) with probability above 1/2 whatever "
            f"the data. Use subsets >= {smallest_subsets(epsilon, delta)} (public; n >= subsets x {width} rows), a "
            "larger epsilon, or method='adassp'"
        )
    if not by_unit and rows < m * width:
        raise DataValidationError(
            f"TukeyEM fits one model per subset and each needs at least {width} rows: n = {rows} rows are fewer "
            f"than subsets x {width} = {m * width}; pass a smaller subsets= (public; the paper recommends many rows "
            "per model) or use method='adassp'"
        )
    # With privacy units the number of units is private (add/remove a unit): no refusal may follow from it. Fewer
    # units than subsets leave some subsets empty, each giving the zero model (step 1), and the depth test refuses
    # or releases on those models like on any others.
    return m
