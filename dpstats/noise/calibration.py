"""Calibration: the noise scale that makes a mechanism (ε, δ)-DP for a given sensitivity.

* Laplace (pure ε-DP): scale ``b = Δ₁ / ε`` (Dwork, McSherry, Nissim & Smith 2006).
* Gaussian, analytic (default): the smallest σ for which the Gaussian mechanism
  with L2 sensitivity Δ₂ is (ε, δ)-DP, from the exact condition of Balle & Wang
  (ICML 2018, Theorem 8)::

      Φ(Δ₂/(2σ) − εσ/Δ₂) − e^ε Φ(−Δ₂/(2σ) − εσ/Δ₂) <= δ

  The left side decreases in σ, so σ is found by bisection; it is valid for
  every ε > 0 and always at most the classic σ.
* Gaussian, classic: ``σ = Δ₂ √(2 ln(1.25/δ)) / ε`` (Dwork & Roth 2014,
  Theorem A.1), proven only for ε < 1. Offered for paper-faithful reproduction;
  for ε >= 1 it warns with :class:`~dpstats.exceptions.NotPrivateWarning`.

On the safe side. The bisection runs in floating point; its result is then
checked against the exact condition evaluated with 60 significant digits
(mpmath) and moved up until the check passes, so the returned σ is never below
the exact one (and above it by at most about 1e-10, relative).

The discrete Gaussian
---------------------
dpstats adds discrete Gaussian noise N_Z(0, σ²) (P(z) ∝ exp(−z²/(2σ²)) on the
integers) to integer-valued statistics (:mod:`dpstats.noise.release`). Its
privacy follows from the continuous mechanism's by a smoothing argument:

    *Lemma.* Let c ∈ Z^m, σ₁ > 0, σ_c² = σ² − σ₁² > 0. Draw y ~ N(c, σ_c² I)
    and then x ~ N_Z(y, σ₁² I) (a discrete Gaussian centred at the real y).
    Then for every x ∈ Z^m, the probability p(x) of x and the discrete Gaussian
    probability q(x) = N_Z(c, σ² I)(x) satisfy e^{−η} <= p(x)/q(x) <= e^{η} with
    η = m·ln((1 + θ)/(1 − θ)) and θ = 2 Σ_{l>=1} exp(−2π²σ₁²l²).

    *Proof.* Per coordinate, Poisson summation gives
    Σ_k exp(−(k − y)²/(2s²)) = √(2π) s Σ_l exp(−2π²s²l²) cos(2πly) ∈
    √(2π) s [1 − θ_s, 1 + θ_s] for every real y, with θ_s as θ for s. So the
    normaliser of N_Z(y, σ₁²) is √(2π)σ₁ (1 ± θ), and
    p(x) = ∫ φ_{σ_c}(y − c) exp(−(x − y)²/(2σ₁²)) / (√(2π)σ₁(1 ± θ)) dy
    = φ_σ(x − c)/(1 ± θ) (a Gaussian convolution). The same bound with s = σ
    (θ_σ <= θ since σ > σ₁) gives q(x) = √(2π)σ φ_σ(x − c)/(√(2π)σ(1 ± θ_σ)).
    The ratio follows; coordinates are independent. ∎

So adding N_Z(0, σ²) to an integer statistic c is, pointwise up to e^{±η}, the
post-processing (y ↦ x) of the continuous Gaussian mechanism c + N(0, σ_c² I):
if that mechanism is (ε, δ)-DP, the discrete one is (ε + 2η, e^η δ)-DP, and
the same holds for adaptive compositions (the ratio bounds multiply). With
σ₁ = :data:`SMOOTHING_SIGMA` = 3, θ < 1.5e-77 and η < 3e-77·m: below 1e-60 for
any m < 1e16: far below what any float can represent next to an ε of order
1 (under "pld" and "zcdp" the accountant also rounds each result up by a
relative 1e-12; under "basic", where the (ε, δ) labels are added exactly, the
2η of a release is below the spacing of doubles at its ε and is not added). dpstats therefore calibrates the discrete
Gaussian by the analytic condition at σ_c and adds σ₁² to the variance
(:func:`discrete_gaussian_sigma`); the grid (:mod:`dpstats.noise.release`)
makes σ itself about 2^20, so σ₁ changes it by a relative 1e-11.
"""

from __future__ import annotations

import functools
import math
import warnings
from fractions import Fraction

from .._validation import check_choice, check_delta, check_epsilon
from ..exceptions import NotPrivateWarning, ParameterError

__all__ = [
    "CALIBRATIONS",
    "SMOOTHING_SIGMA",
    "discrete_gaussian_sigma",
    "dominating_sigma",
    "exact_gaussian_privacy_gap",
    "gaussian_privacy_gap",
    "gaussian_sigma",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
    "laplace_scale",
]

CALIBRATIONS = ("analytic", "classic")

#: σ₁ of the smoothing lemma (module docstring): the discrete Gaussian N_Z(0, σ²) is accounted as the continuous
#: Gaussian mechanism with σ_c = √(σ² − σ₁²).
SMOOTHING_SIGMA = 3.0

_EXACT_DIGITS = 60


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Laplace scale ``b = Δ₁ / ε`` for L1 sensitivity ``Δ₁``."""
    return float(sensitivity) / check_epsilon(epsilon)


def gaussian_privacy_gap(sigma: float, sensitivity: float, epsilon: float) -> float:
    """The smallest δ for which N(0, σ²) noise on a Δ₂-sensitive query is (ε, δ)-DP.

    This is the left side of Balle & Wang (2018), Theorem 8, evaluated in log
    space so that it stays finite for large ε: with L₁ = log Φ(a − b) and
    L₂ = ε + log Φ(−a − b), δ = −e^{L₁} expm1(L₂ − L₁). Accurate to about 1e-10
    relative where the two terms nearly cancel; :func:`exact_gaussian_privacy_gap`
    is exact.
    """
    from scipy.special import log_ndtr

    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    first = float(log_ndtr(a - b))
    return -math.exp(first) * math.expm1(epsilon + float(log_ndtr(-a - b)) - first)


def exact_gaussian_privacy_gap(sigma: float, sensitivity: float, epsilon: float):
    """:func:`gaussian_privacy_gap` evaluated with 60 significant digits (an ``mpmath.mpf``); the inputs are
    taken as the exact values of their floats."""
    import mpmath

    with mpmath.workdps(_EXACT_DIGITS):
        a = mpmath.mpf(sensitivity) / (2 * mpmath.mpf(sigma))
        b = mpmath.mpf(epsilon) * mpmath.mpf(sigma) / mpmath.mpf(sensitivity)
        return mpmath.ncdf(a - b) - mpmath.exp(mpmath.mpf(epsilon)) * mpmath.ncdf(-a - b)


def _raise_until_exact(value: float, holds) -> float:
    """The smallest of value·(1 + 2^-40)^j, j = 0, 1, ..., for which ``holds`` (an exact check) is true."""
    while not holds(value):
        value *= 1.0 + 2.0**-40
    return value


def gaussian_sigma_analytic(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest σ making the Gaussian mechanism (ε, δ)-DP (Balle & Wang 2018, Thm 8).

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity Δ₂ of the query (>= 0).
    epsilon : float
        Privacy parameter, > 0 (any size).
    delta : float
        Privacy parameter, 0 < δ < 1.

    Returns
    -------
    float
        σ, never below the exact value and above it by at most about 1e-10
        (relative): the float bisection's result is checked with
        :func:`exact_gaussian_privacy_gap` and raised until the check passes.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if delta == 0:
        raise ParameterError("delta must be > 0 for Gaussian noise; use Laplace noise for delta = 0")
    return _sigma_analytic(float(sensitivity), epsilon, delta)


@functools.lru_cache(maxsize=1024)
def _sigma_analytic(sensitivity: float, epsilon: float, delta: float) -> float:
    """:func:`gaussian_sigma_analytic` on validated floats, cached (the exact check costs milliseconds)."""
    if sensitivity == 0:
        return 0.0
    lo, hi = sensitivity, sensitivity
    while gaussian_privacy_gap(lo, sensitivity, epsilon) <= delta:
        lo /= 2.0
    while gaussian_privacy_gap(hi, sensitivity, epsilon) > delta:
        hi *= 2.0
    while hi - lo > 1e-13 * hi:
        mid = math.sqrt(lo * hi)
        if gaussian_privacy_gap(mid, sensitivity, epsilon) > delta:
            lo = mid
        else:
            hi = mid
    return _raise_until_exact(hi, lambda s: exact_gaussian_privacy_gap(s, sensitivity, epsilon) <= delta)


def dominating_sigma(sigma: float) -> float:
    """σ_c = √(σ² − σ₁²) of the continuous Gaussian mechanism that accounts for discrete noise N_Z(0, σ²)
    (the smoothing lemma of the module docstring), rounded down (exactly: σ_c² <= σ² − σ₁² as rationals); 0 when
    σ <= σ₁ (no guarantee from it)."""
    if sigma <= SMOOTHING_SIGMA:
        return 0.0
    target = Fraction(sigma) ** 2 - Fraction(SMOOTHING_SIGMA) ** 2
    value = math.sqrt(float(target))
    while Fraction(value) ** 2 > target:
        value = math.nextafter(value, 0.0)
    return value


def discrete_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """σ of discrete Gaussian noise on an integer statistic of L2 sensitivity Δ₂ that is (ε, δ)-DP: the analytic
    σ_c of the continuous mechanism, plus σ₁² in variance (module docstring), rounded up."""
    sigma_c = gaussian_sigma_analytic(sensitivity, epsilon, delta)
    sigma = math.nextafter(math.sqrt(sigma_c * sigma_c + SMOOTHING_SIGMA**2), math.inf)
    return _raise_until_exact(sigma, lambda s: dominating_sigma(s) >= sigma_c)


def gaussian_sigma_classic(sensitivity: float, epsilon: float, delta: float) -> float:
    """Classic σ = Δ₂ √(2 ln(1.25/δ)) / ε (Dwork & Roth 2014, Theorem A.1).

    Proven only for ε < 1; for ε >= 1 this warns with
    :class:`~dpstats.exceptions.NotPrivateWarning` and returns the formula's value,
    for reproducing papers that used it there.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if delta == 0:
        raise ParameterError("delta must be > 0 for Gaussian noise; use Laplace noise for delta = 0")
    if epsilon >= 1:
        warnings.warn(
            f"the classic Gaussian calibration is proven only for epsilon < 1 (got {epsilon:g}); "
            "this release may not be (epsilon, delta)-DP. Use calibration='analytic'.",
            NotPrivateWarning,
            stacklevel=3,
        )
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def gaussian_sigma(sensitivity: float, epsilon: float, delta: float, calibration: str = "analytic") -> float:
    """σ for the Gaussian mechanism with the chosen ``calibration`` ("analytic" or "classic")."""
    check_choice(calibration, "calibration", CALIBRATIONS)
    if calibration == "classic":
        return gaussian_sigma_classic(sensitivity, epsilon, delta)
    return gaussian_sigma_analytic(sensitivity, epsilon, delta)
