"""TukeyEM (Amin, Joseph, Ribero & Vassilvitskii, ICLR 2023): a model of high approximate Tukey depth among OLS
models fitted on disjoint subsets, chosen by a restricted exponential mechanism behind a propose-test-release step.

**The algorithm** (the paper's TukeyEM, Algorithm 2, with its restricted exponential mechanism, Algorithm 1, and the
propose-test-release check of Brown, Gaboardi, Smith, Ullman & Zakynthinou 2021):

1. The rows are split at random (``rng``, before anything is read) into m disjoint subsets of ⌊n/m⌋ rows (the
   n − m⌊n/m⌋ left over are not used; with a privacy unit, the units are split, each unit's rows in one subset)
   and an OLS model β_i ∈ R^k is fitted on each (k = d, plus 1 with an intercept; the minimum-norm least-squares
   solution, a function of that subset's rows only).
2. Approximate Tukey depth (the paper's Definition 2): T(y) = min over coordinates j of min(#{i : β_ij <= y_j},
   #{i : β_ij >= y_j}). The region of depth >= p is the box Π_j [S_j(p), S_j(m + 1 − p)] (S_j the sorted j-th
   coordinates), of volume V_p, for p = 1 … P = ⌊m/2⌋ (V_p = ∞ for p <= 0, V_{P+1} = 0).
3. PTR: k̂ = 1 + the largest k >= 0 such that some g >= 1 has V_{t−k−2}·e^{−cg} <= θ·V_{t+k+g+1} (0 if none),
   t = ⌊P/2⌋ (the paper's m/4); release k̂ + Lap(2/ε) and stop with no model (a warning, NaN coefficients) unless
   it is at least (2/ε)·ln(1/δ).
4. The restricted exponential mechanism at rate c: a depth p ∈ {t, …, P} with probability ∝ (V_p − V_{p+1})e^{cp},
   then a point uniformly in the region of depth exactly p (the paper's Algorithm 1 sampler: the coordinate where
   the depth is attained, then uniform coordinates).

**Neighbours and sensitivity.** Replacing one row (one unit) changes at most one model, because the subsets are
disjoint and fixed before the data are read: every count in T moves by at most one, so |T(y) − T′(y)| <= 1 for
every y, and the regions nest, R_{p+1} ⊆ R′_p ⊆ R_{p−1}: V′_p ∈ [V_{p+1}, V_{p−1}] (at distance k: [V_{p+k},
V_{p−k}]).

**Privacy (derived here for replace-one neighbours).** For neighbours B, B′ of model sets and any output set S,
with the unnormalised weight w_B(y) = e^{c T_B(y)} on {T_B >= t} and Z_B its integral:
P_B(S) <= e^{2c}(1 + a_B) P_{B′}(S) + b_B, with a_B = e^{c(t−1)}(V_{t−1} − V_t)/Z_B (the mass B′ can add at depth
t − 1) and b_B = e^{ct}(V_t − V_{t+1})/Z_B (the mass at depth t that B′ can drop). Since Z_B >= e^{c(t+g)}V_{t+g},
both are at most e^{−cg}V_{t−1}/V_{t+g}; for any dataset within distance k of B (and its neighbours, within k + 1)
they are at most e^{−cg}V_{t−k−2}/V_{t+g+k+1}. So the condition of step 3 at k makes every dataset within distance k
*safe*: its restricted mechanism is (2c + ln(1 + θ), θ)-indistinguishable from its neighbours'. The condition
holding at k implies it at k − 1 for a neighbour, so k̂ moves by at most 1 between neighbours (sensitivity 1), and
k̂ >= 1 implies the data are safe. PTR (Dwork & Lei 2009; Brown et al. 2021): an unsafe dataset has k̂ = 0 and
passes with probability at most δ (the discrete Laplace tail); a safe one gives an output within
(ε/2 + 2c + ln(1 + θ), e^{ε/2}θ) of its neighbours'. With c = (ε/2 − θ)/2 and θ = δ·e^{−ε/2} the whole is
**(ε, δ)-DP** (ln(1 + θ) <= θ). Amin et al. state the check with their own constants (δ/(8e^ε), indices t − k − 1);
dpstats uses the ones derived above, which are what this implementation needs, and δ > 0 is required.

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

import math
import warnings
from fractions import Fraction

import numpy as np

from .._engine import bound_rows
from .._kernels.blocks import single_threaded_blas
from .._release import calibrate, charge
from .._trace import draw, observe
from .._validation import check_int
from ..accounting import Relation
from ..accounting.events import ApproxDP
from ..exceptions import DataValidationError, PrivacyError
from ..noise.release import Statistic

__all__ = ["DEFAULT_SUBSETS", "PTRFailedWarning", "fit_tukey"]

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


def _probe_depths(models: np.ndarray) -> np.ndarray:
    """Approximate Tukey depth at public probe points (a fixed seed), for the sensitivity checker."""
    probes = np.random.default_rng(0).normal(0.0, 1.0, (64, models.shape[1]))
    below = (models[None, :, :] <= probes[:, None, :]).sum(axis=1)
    above = (models[None, :, :] >= probes[:, None, :]).sum(axis=1)
    return np.minimum(below, above).min(axis=1)


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
        size = n // subsets
        order = rng.permutation(n)
        groups = [order[i * size : (i + 1) * size] for i in range(subsets)]
        note = ""
    else:
        kept = bound_rows((Z, y, np.arange(n)), units.aligned(n), rng)
        Z, y, _ = kept.arrays
        ids = np.asarray(units.aligned(n).ids)
        # the kept rows' units: the unit of each kept row, read from the identifiers of the rows kept
        unit_of = np.unique(ids, return_inverse=True)[1][kept.arrays[2]]
        assignment = rng.permutation(kept.units) % subsets  # each unit to one subset, at random
        where = assignment[unit_of]
        groups = [np.flatnonzero(where == i) for i in range(subsets)]
        note = f"privacy unit: {kept.units} units (public), each unit's rows in one subset; "
    with single_threaded_blas():  # m small least-squares problems: a BLAS team per problem only waits
        models = _models(Z, y, groups)
    depth = subsets // 2
    t = depth // 2
    epsilon_ptr = epsilon / 2.0
    theta = delta * math.exp(-epsilon_ptr)
    rate = (epsilon / 2.0 - theta) / 2.0
    sorted_models = np.sort(models.T, axis=1)
    log_v = _log_volumes(sorted_models)
    distance = _distance(log_v, t, rate, math.log(theta))
    ptr = calibrate(epsilon=epsilon_ptr, delta=0.0, sensitivity=1.0, changed=1, unit=Fraction(1))
    threshold = ptr.noise_scale * math.log(1.0 / delta)
    charge(
        "linear_regression",
        [ApproxDP(epsilon, delta)],
        rng=rng,
        accountant=accountant,
        relation=Relation.of(units is not None),
        proven=False,
        note=f"{note}TukeyEM (Amin et al. 2023): {subsets} OLS models on disjoint subsets, propose-test-release on the "
        f"distance to unsafety (epsilon/2, exact discrete Laplace, threshold {threshold:.4g}) then the restricted "
        "exponential mechanism on approximate Tukey depth (epsilon/2 - delta*exp(-epsilon/2)); the mechanism's "
        "sampler is floating point (no exact sampler known): guarantee unproven",
        noise=[ptr.statement("depth units (distance to unsafety)")],
    )
    noisy = float(np.asarray(ptr.apply(Statistic(np.array([distance]), Fraction(1)), rng))[0])
    if noisy < threshold:
        warnings.warn(
            "TukeyEM's propose-test-release check did not pass (the models are too spread for the budget: more rows "
            "per model, fewer subsets or a larger epsilon help); no model is released",
            PTRFailedWarning,
            stacklevel=3,
        )
        return np.full(d, np.nan), (math.nan if intercept else 0.0), False
    observe("approximate Tukey depth at public probes", lambda: _probe_depths(models), sensitivity=1, norm="linf")
    weights = _depth_weights(log_v, t, rate)
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


def check_subsets(subsets, rows: int, width: int, units: int | None) -> int:
    """m, checked against the public number of rows (or units): every model needs ``width`` rows (one unit each)."""
    m = check_int(DEFAULT_SUBSETS if subsets is None else subsets, "subsets", low=4)
    if units is None and rows < m * width:
        raise DataValidationError(
            f"TukeyEM fits one model per subset and each needs at least {width} rows: n = {rows} rows are fewer "
            f"than subsets x {width} = {m * width}; pass a smaller subsets= (public; the paper recommends many rows "
            "per model) or use method='adassp'"
        )
    if units is not None and units < m:
        raise DataValidationError(
            f"TukeyEM puts each privacy unit in one subset: {units} units are fewer than subsets = {m}; pass a "
            "smaller subsets="
        )
    return m
