"""Private partition selection: which keys of a group-by may be released when nobody knows them in advance.

Reading the keys from the data is not private: a key that only one person has reveals that person. The keys are
therefore released only when a noisy count of the *units* that hold them (people, not rows) reaches a threshold
calibrated to δ (Desfontaines, Voss, Gipson & Mandayam, "Differentially private partition selection", PoPETs
2022; Gopi, Gulhane, Kulkarni, Shen, Shokouhi & Yekhanin, "Differentially private set union", ICML 2021). This
module calibrates the noise and the threshold; :mod:`dpstats.descriptive._grouped` counts, charges and releases.

The mechanism
-------------
After contribution bounding (:mod:`dpstats._kernels.groups`) every unit v holds at most k keys (k =
``max_groups``; with ``max_groups=None`` the at most ``max_rows`` keys of its kept rows; one key without a privacy
unit). Unit v adds a_v(p) >= 0 to the statistic of each key p it holds: 1 (``"laplace"``, ``"gaussian"``: the
statistic is the number of distinct units of the key), or the weight w_d = ⌊2^20/√d⌋·2^-20 when it holds d keys
(``"weighted"``, Gopi et al.'s weighted Gaussian: ‖a_v‖₂ <= 1 whatever d). For every key present in the data
(statistic c_p > 0) independent exact integer noise Z_p is drawn (:mod:`dpstats.noise.release`); key p is released
when c_p + Z_p >= τ, with its noisy value c_p + Z_p.

The privacy argument (replace one unit)
---------------------------------------
dpstats' neighbours replace all rows of one unit u (the number of units N public; without a unit, one row).
Desfontaines et al. and Gopi et al. analyse add/remove-one-user; the argument for replace-one-unit follows.

Let D, D′ be neighbours: u's vector a becomes b, every other unit's is the same (their sum H). Split the keys into
S (present in both), A (present in D only: H_p = 0 < a_p, held by u alone) and B (present in D′ only). A has at
most d = |supp a| <= k keys, each with c_p = a_p = w_d (1 for counts); likewise B. The noise of different keys is
independent, so the output is (O_S, O_A, O_B) with O_B = ∅ under D and O_A = ∅ under D′. Let β_A = P_D(O_A ≠ ∅),
β_B = P_D′(O_B ≠ ∅) and β = max(β_A, β_B) <= β_max(τ) = max_{d <= k} 1 − (1 − P(w_d + Z >= τ))^d. Then::

    P_D  = (1 − β)·(P_S  ⊗ ∅ ⊗ ∅) + β·R,        P_D′ = (1 − β)·(P′_S ⊗ ∅ ⊗ ∅) + β·R′

for some distributions R, R′ (the mass of O_A = ∅ under D is 1 − β_A >= 1 − β; what is left over is non-negative
and weighs β). (P_S, P′_S) is the noise mechanism on the keys of S, whose statistic moves by (a − b) restricted to
S: ‖a − b‖₁ <= ‖a‖₁ + ‖b‖₁ <= 2k for counts, and, both vectors being non-negative,
‖a − b‖₂² <= ‖a‖₂² + ‖b‖₂² <= 2k (counts) or 2 (weights). So with probability at least 1 − β the selection is a
post-processing of the Laplace (L1 sensitivity 2k) or Gaussian (L2 sensitivity √(2k), or √2 weighted) mechanism,
and with probability at most β it is anything:

* by joint convexity of the hockey-stick divergence it is (ε, δ_noise + β)-DP, where (ε, δ_noise) is the noise
  mechanism's guarantee;
* under composition the mixtures multiply: k such releases are, with probability at least Π(1 − β_i), a
  composition of their noise mechanisms, so their β_i add to the δ of the composed noise mechanisms. That is
  exactly how the accountant composes a :class:`~dpstats.accounting.Gaussian` event's ``failure`` (PLD, zCDP and
  basic composition), so the Gaussian policies are charged as a Gaussian event with ``failure`` = the δ given to
  the threshold. The Laplace policy moves 2k >= 2 coordinates, where the accountant's Laplace event uses the
  worst case of a pure ε-DP release anyway; it is charged as an :class:`~dpstats.accounting.ApproxDP` event
  (ε, δ), whose loss distribution is that worst case with an extra δ.

Compared with add/remove (where only A or only B exists and the statistic moves by a alone) replacing a unit
doubles the Laplace noise and multiplies the Gaussian noise by √2; the threshold keeps the same δ (β is a maximum
over the two sides, not a sum). The released noisy values of the selected keys are a post-processing of the same
noisy statistic, so with the count policies they are released at no extra cost.

Calibration
-----------
* ``"laplace"``: discrete Laplace of scale t (in grid units) with ε = 2k/t exactly (:func:`make_noise`); the whole
  δ goes to the threshold.
* ``"gaussian"`` and ``"weighted"``: discrete Gaussian; δ = δ_noise + δ_threshold, split to make τ smallest (a
  search over the share f = δ_threshold/δ in steps of 1/64, a public function of ε, δ and k); the noise is
  calibrated at δ_noise (the analytic calibration of Balle & Wang 2018, never below the exact σ).
* τ is the smallest integer of the release's grid with β_max(τ) <= δ_threshold, from the noise's tail:
  discrete Laplace exactly, P(Z >= j) = q^j/(1 + q) with q = e^{−1/t} (j >= 1); discrete Gaussian by the bound
  P(Z >= j) <= Q((j − 1)/σ)/(1 − θ), θ = 2e^{−2π²σ²}/(1 − e^{−2π²σ²}) (Σ_{z >= j} ρ(z) <= ∫_{j−1}^∞ ρ and the
  Poisson-summation bound on the normaliser, :mod:`dpstats.noise.intervals`), tight to one grid unit (2^-20 of
  the sensitivity). τ is found in double precision (with a relative margin of 1e-9 against its rounding), then
  checked with 60 significant digits (mpmath) for the d whose β_d is largest, and raised until the check holds:
  never below the exact threshold.

Which policy keeps most keys (``benchmarks/bench_groups.py``: 10^5 people with 1 + Geometric(1/3) distinct pages
of a Zipf(1.1) law over 10^5 pages, δ = 10^-6, ε in {0.5, 1, 2}; expected keys released): for k = 1 Laplace
thresholding keeps 5-15 % more keys than Gaussian thresholding; for k >= 2 the weighted Gaussian keeps 1.07-1.7
times as many as Gaussian thresholding and 1.3-4.7 times as many as Laplace thresholding (its weights are 1/√d
rather than 1/√k, so people with few keys count fully). These are the defaults of ``descriptive._grouped`` (with
Gaussian thresholding for k >= 2 when its noisy counts are the release). Desfontaines et al.'s optimal policy for
k = 1 (a truncated geometric threshold) needs, under replace-one-unit, the basic composition of the two keys a
replaced unit moves (ε/2, δ/2 each); it then keeps 7 % more keys than Laplace thresholding at ε = 0.5, 2 % more
at ε = 1 and 2 % fewer at ε = 2, and releases no counts, so it is not offered.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._validation import check_choice, check_delta, check_epsilon, check_int
from ..accounting.events import ApproxDP, Event
from ..accounting.ledger import NoiseStatement
from ..exceptions import ParameterError
from .release import Noise, Statistic, make_noise

__all__ = ["MAX_GROUPS", "POLICIES", "WEIGHT_BITS", "Selection", "calibrate_selection", "unit_weight"]

POLICIES = ("laplace", "gaussian", "weighted")
#: The weights of the weighted policy are integers in units of 2^-WEIGHT_BITS.
WEIGHT_BITS = 20
#: Steps of the share of δ given to the threshold (Gaussian policies).
_SHARE_STEPS = 64
_EXACT_DIGITS = 60
#: Relative margin of the double-precision pass of the threshold search over its rounding error (< 1e-13).
_FLOAT_MARGIN = 1e-9
#: How many of the largest β_d are checked with 60 digits.
_EXACT_CHECKS = 8
#: The largest ``max_groups`` accepted (public). The weighted policy's threshold search visits every d <= k, so its
#: calibration takes time proportional to k (about 2 s at 4096, 30 s at 65536 on one core), and at k = 4096 the
#: threshold already asks for about 10^5 units (ε = 1, δ = 1e-6) and the statistics' sensitivities grow like k or
#: √k: a larger k releases nothing useful. Bound the keys per unit instead.
MAX_GROUPS = 4096


def unit_weight(groups: int) -> int:
    """w_d of a unit holding ``groups`` = d keys, in units of 2^-WEIGHT_BITS: ⌊2^20/√d⌋ exactly, so that
    d·w_d² <= 1 (the unit's weight vector has L2 norm at most 1)."""
    return math.isqrt((1 << (2 * WEIGHT_BITS)) // groups)


@dataclass(frozen=True)
class Selection:
    """A calibrated partition selection (module docstring): the noise on the per-key statistic, the threshold, and
    the privacy event to charge.

    Attributes
    ----------
    policy : {"laplace", "gaussian", "weighted"}
    max_groups : int
        k, the keys one unit holds at most.
    noise : Noise
        Exact integer noise on the per-key statistic (distinct units, or weights in units of 2^-20).
    threshold : float
        τ in the statistic's units: a key is kept when its noisy statistic is >= τ (both exact multiples of the
        noise's grid, so the comparison is exact).
    threshold_delta : float
        The δ given to the threshold: β_max(τ) <= threshold_delta.
    event : Event
        What the selection costs (module docstring).
    """

    policy: str
    max_groups: int
    noise: Noise
    threshold: float
    threshold_delta: float
    event: Event

    @property
    def unit(self) -> Fraction:
        """The unit of the per-key statistic: 1 (distinct units) or 2^-WEIGHT_BITS (weights)."""
        return Fraction(1, 1 << WEIGHT_BITS) if self.policy == "weighted" else Fraction(1)

    @property
    def counts_units(self) -> bool:
        """Whether the noisy statistic is the number of distinct units of each key (not a weight)."""
        return self.policy != "weighted"

    def keep(self, values: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
        """(mask of the kept keys, noisy statistic of every key) for the integer statistic ``values`` (in units of
        :attr:`unit`), one per key present, in the order of the keys."""
        noisy = np.asarray(self.noise.apply(Statistic(np.asarray(values), self.unit), rng))  # int64 or Python ints
        return noisy >= self.threshold, noisy

    def statement(self) -> NoiseStatement:
        """The selection's noise, for the ledger, in its statistic's units."""
        return self.noise.statement("units per key" if self.counts_units else "weight per key")

    def note(self) -> str:
        """The ledger note (public values only)."""
        name = {
            "laplace": "Laplace thresholding (Desfontaines et al. 2022) of the distinct units per key",
            "gaussian": "Gaussian thresholding (Desfontaines et al. 2022) of the distinct units per key",
            "weighted": "weighted Gaussian (Gopi et al. 2021): weight 1/sqrt(d) per key of a unit with d keys",
        }[self.policy]
        share = "" if self.policy == "laplace" else f", delta {self.threshold_delta:.3g} of it to the threshold"
        return (
            f"private partition selection: {name}, at most {self.max_groups} key(s) per unit, "
            f"threshold {self.threshold:.6g}{share}"
        )


def calibrate_selection(epsilon: float, delta: float, policy: str, max_groups: int) -> Selection:
    """The noise, threshold and event of a partition selection that is (ε, δ)-DP under replace-one-unit when
    every unit holds at most ``max_groups`` keys (module docstring).

    Parameters
    ----------
    epsilon, delta : float
        The selection's guarantee; δ > 0 is required (a key held by one unit appears with probability at most δ).
    policy : {"laplace", "gaussian", "weighted"}
        Laplace or Gaussian thresholding of the distinct units per key (Desfontaines et al. 2022), or the weighted
        Gaussian of Gopi et al. (2021).
    max_groups : int
        k, the keys one unit holds at most.

    Returns
    -------
    Selection
        ``.threshold`` in units of the per-key statistic, ``.event`` to charge, ``.keep(values, rng)`` to select.

    References
    ----------
    Desfontaines, Voss, Gipson & Mandayam, "Differentially private partition selection", PoPETs 2022. Gopi,
    Gulhane, Kulkarni, Shen, Shokouhi & Yekhanin, "Differentially private set union", ICML 2021.

    Examples
    --------
    >>> from dpstats.noise.selection import calibrate_selection
    >>> selection = calibrate_selection(1.0, 1e-6, "laplace", 1)
    >>> round(selection.threshold, 1)  # a key needs about 27 people to be released half of the time
    27.2
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    policy = check_choice(policy, "selection", POLICIES)
    max_groups = check_int(max_groups, "max_groups", high=MAX_GROUPS)
    if delta == 0:
        raise ParameterError(
            "private partition selection needs delta > 0: a key held by one unit must appear with probability "
            "at most delta; pass delta > 0 (much less than 1/number of units), or the public keys as categories"
        )
    return _calibrated(epsilon, delta, policy, max_groups)


@functools.lru_cache(maxsize=256)
def _calibrated(epsilon: float, delta: float, policy: str, k: int) -> Selection:
    if policy == "laplace":
        noise = make_noise(epsilon=epsilon, delta=0.0, sensitivity=2 * k, changed=2 * k, unit=Fraction(1))
        threshold = _threshold(noise, Fraction(1), policy, k, delta)
        event = ApproxDP(noise.event.epsilon, delta)
        return Selection(policy, k, noise, threshold, delta, event)
    share = _best_share(epsilon, delta, policy, k)
    noise = _gaussian(epsilon, delta, policy, k, share)
    unit = Fraction(1, 1 << WEIGHT_BITS) if policy == "weighted" else Fraction(1)
    threshold = _threshold(noise, unit, policy, k, delta * share)
    return Selection(policy, k, noise, threshold, noise.event.failure, noise.event)


def _gaussian(epsilon: float, delta: float, policy: str, k: int, share: float) -> Noise:
    """Discrete Gaussian noise at δ_noise = δ − δ_threshold, charged with failure δ_threshold = share·δ."""
    sensitivity = math.sqrt(2.0) if policy == "weighted" else math.sqrt(2.0 * k)
    unit = Fraction(1, 1 << WEIGHT_BITS) if policy == "weighted" else Fraction(1)
    sensitivity = math.nextafter(sensitivity, math.inf)  # never below √2 or √(2k)
    return make_noise(
        epsilon=epsilon, delta=delta, sensitivity=sensitivity, changed=2 * k, unit=unit, failure=delta * share
    )


def _best_share(epsilon: float, delta: float, policy: str, k: int) -> float:
    """The share f (a multiple of 1/64) of δ given to the threshold that makes τ smallest, by a golden-section
    search in double precision (a public function of ε, δ, k and the policy)."""
    from scipy.optimize import minimize_scalar

    def tau(step: float) -> float:
        share = min(_SHARE_STEPS - 1, max(1, round(step))) / _SHARE_STEPS
        noise = _gaussian(epsilon, delta, policy, k, share)
        unit = Fraction(1, 1 << WEIGHT_BITS) if policy == "weighted" else Fraction(1)
        return _float_threshold(noise, unit, policy, k, delta * share) * float(noise.grid)

    found = minimize_scalar(tau, bounds=(1, _SHARE_STEPS - 1), method="bounded", options={"xatol": 0.5})
    best = min((round(found.x) + d for d in (-1, 0, 1) if 1 <= round(found.x) + d < _SHARE_STEPS), key=tau)
    return best / _SHARE_STEPS


# ----------------------------------------------------------------------------- the threshold


def _weights(policy: str, k: int, unit: Fraction, grid: Fraction) -> tuple[np.ndarray, np.ndarray]:
    """(d, w_d in grid units) for every number d of keys a unit may hold whose β_d can be the largest: d = k alone
    for counts (w = 1 on each of k keys), every d <= k for the weighted policy."""
    if policy != "weighted":
        return np.array([k]), np.array([int(unit / grid)], dtype=object)
    ratio = unit / grid  # an integer: the grid is at most the weights' unit
    d = np.arange(1, k + 1)
    return d, np.array([unit_weight(int(g)) * ratio for g in d], dtype=object)


def threshold_tail(noise: Noise, j):
    """log of an upper bound on P(Z >= j) (j >= 1, in grid units) for the selection's noise Z, in double
    precision (module docstring: exact for the discrete Laplace, tight to one grid unit for the discrete
    Gaussian)."""
    from scipy.special import log_ndtr

    j = np.asarray(j, dtype=np.float64)
    if noise.kind == "laplace":
        t = float(noise.scale)
        return -j / t - math.log1p(math.exp(-1.0 / t))
    sigma = math.sqrt(noise.scale)
    return log_ndtr(-(j - 1.0) / sigma) - math.log1p(-_theta(noise.scale))


def _theta(variance) -> float:
    """θ = 2q/(1 − q), q = e^{−2π²σ²}: the normaliser of the discrete Gaussian is at least √(2π)σ(1 − θ)."""
    first = math.exp(-2.0 * math.pi**2 * float(variance))
    return 2.0 * first / (1.0 - first)


def _float_betas(noise: Noise, d: np.ndarray, w: np.ndarray, T: int) -> np.ndarray:
    """β_d(T) = 1 − (1 − P(Z >= T − w_d))^d for every d, in double precision."""
    log_p = threshold_tail(noise, np.maximum(1, T - w.astype(np.float64)))
    p = np.exp(log_p)
    return -np.expm1(d * np.log1p(-np.minimum(p, 1.0 - 1e-16)))


def _float_threshold(noise: Noise, unit: Fraction, policy: str, k: int, target: float) -> int:
    """The smallest grid integer T with every β_d(T)·(1 + margin) <= target, in double precision (bisection)."""
    d, w = _weights(policy, k, unit, noise.grid)
    low = int(w.max())  # T <= w: every key with weight w is kept with probability >= 1/2 > target
    step = max(1, int(math.sqrt(noise.scale)) if noise.kind == "gaussian" else int(noise.scale))
    high = low + step
    while _float_betas(noise, d, w, high).max() * (1 + _FLOAT_MARGIN) > target:
        high = low + 2 * (high - low)
    while high - low > 1:
        mid = (low + high) // 2
        if _float_betas(noise, d, w, mid).max() * (1 + _FLOAT_MARGIN) > target:
            low = mid
        else:
            high = mid
    return high


def _threshold(noise: Noise, unit: Fraction, policy: str, k: int, target: float) -> float:
    """τ in the statistic's units: the float threshold, checked with 60 digits for the largest β_d and raised until
    the check holds (module docstring)."""
    d, w = _weights(policy, k, unit, noise.grid)
    T = _float_threshold(noise, unit, policy, k, target)
    while True:
        betas = _float_betas(noise, d, w, T)
        largest = np.argsort(betas)[::-1][:_EXACT_CHECKS]
        if all(_exact_beta(noise, int(d[i]), T - int(w[i])) <= target for i in largest):
            return float(T * noise.grid)
        T += max(1, T >> 30)


def _exact_beta(noise: Noise, d: int, j: int):
    """1 − (1 − P(Z >= j))^d with 60 significant digits (an mpmath number), P from the tail of the module
    docstring."""
    import mpmath

    with mpmath.workdps(_EXACT_DIGITS):
        if noise.kind == "laplace":
            q = mpmath.exp(-1 / mpmath.mpf(noise.scale.numerator) * noise.scale.denominator)
            p = q**j / (1 + q)
        else:
            variance = mpmath.mpf(noise.scale.numerator) / noise.scale.denominator
            first = mpmath.exp(-2 * mpmath.pi**2 * variance)
            p = mpmath.ncdf(-(j - 1) / mpmath.sqrt(variance)) / (1 - 2 * first / (1 - first))
        return -mpmath.expm1(d * mpmath.log1p(-p))
