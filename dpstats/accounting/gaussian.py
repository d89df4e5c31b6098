"""The Gaussian mechanism's privacy, exactly: its (ε, δ) curve, and the discrete Gaussian's place on it.

* :func:`gaussian_privacy_gap` — the smallest δ at which N(0, σ²) noise on a Δ₂-sensitive query is (ε, δ)-DP,
  the exact condition of Balle & Wang (ICML 2018, Theorem 8)::

      δ(ε) = Φ(Δ₂/(2σ) − εσ/Δ₂) − e^ε Φ(−Δ₂/(2σ) − εσ/Δ₂)

  and :func:`exact_gaussian_privacy_gap`, the same with 60 significant digits;
* :func:`gaussian_epsilon` — the inverse: the smallest ε for a noise multiplier σ/Δ₂ and a δ;
* :func:`raise_until_exact` — how a float found by bisection is moved up until the exact check holds, so that no
  result here is ever on the wrong side of the exact one;
* :func:`dominating_sigma` — the continuous Gaussian that accounts for discrete Gaussian noise (the lemma below).

The noise layer (:mod:`dpstats.noise.calibration`) inverts these curves to choose σ; the composition rules
(:mod:`dpstats.accounting.compose`) read them to add releases up. Nothing here imports the noise layer.

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
(:func:`dpstats.noise.calibration.discrete_gaussian_sigma`); the grid (:mod:`dpstats.noise.release`)
makes σ itself about 2^20, so σ₁ changes it by a relative 1e-11.
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = [
    "SMOOTHING_SIGMA",
    "dominating_sigma",
    "exact_gaussian_privacy_gap",
    "gaussian_epsilon",
    "gaussian_privacy_gap",
    "raise_until_exact",
]

#: σ₁ of the smoothing lemma (module docstring): the discrete Gaussian N_Z(0, σ²) is accounted as the continuous
#: Gaussian mechanism with σ_c = √(σ² − σ₁²).
SMOOTHING_SIGMA = 3.0

_EXACT_DIGITS = 60
# Floating-point results are multiplied by this before they are compared with a budget: it covers the rounding
# of the handful of operations that produce them (each exact to a few ulps).
ROUND_UP = 1.0 + 1e-12


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


def raise_until_exact(value: float, holds) -> float:
    """The smallest of value·(1 + 2^-40)^j, j = 0, 1, ..., for which ``holds`` (an exact check) is true."""
    while not holds(value):
        value *= 1.0 + 2.0**-40
    return value


def gaussian_epsilon(noise_multiplier: float, delta: float) -> float:
    """Smallest ε with which the Gaussian mechanism of multiplier σ/Δ is (ε, δ)-DP (Balle & Wang 2018,
    Theorem 8), never below the exact value (checked with 60 significant digits); ``inf`` for δ <= 0."""
    if delta <= 0:
        return math.inf
    if delta >= 1 or math.isinf(noise_multiplier):  # zero sensitivity: the release reveals nothing
        return 0.0
    if gaussian_privacy_gap(noise_multiplier, 1.0, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while gaussian_privacy_gap(noise_multiplier, 1.0, hi) > delta:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-12 * hi:
        mid = (lo + hi) / 2.0
        if gaussian_privacy_gap(noise_multiplier, 1.0, mid) > delta:
            lo = mid
        else:
            hi = mid
    # The float gap loses precision to cancellation: check with 60 digits and move up until the exact gap fits.
    return raise_until_exact(hi * ROUND_UP, lambda e: exact_gaussian_privacy_gap(noise_multiplier, 1.0, e) <= delta)


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
