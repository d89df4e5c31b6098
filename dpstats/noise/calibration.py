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

The discrete Gaussian is calibrated by the smoothing lemma of :mod:`dpstats.accounting.gaussian`: the analytic
σ_c of the continuous mechanism, plus σ₁² in variance (:func:`discrete_gaussian_sigma`).
"""

from __future__ import annotations

import functools
import math
import warnings

from .._validation import check_choice, check_delta, check_epsilon
from ..accounting.gaussian import (
    SMOOTHING_SIGMA,
    dominating_sigma,
    exact_gaussian_privacy_gap,
    gaussian_privacy_gap,
    raise_until_exact,
)
from ..exceptions import NotPrivateWarning, ParameterError

__all__ = [
    "CALIBRATIONS",
    "discrete_gaussian_sigma",
    "gaussian_sigma",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
    "laplace_scale",
]

CALIBRATIONS = ("analytic", "classic")


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Laplace scale ``b = Δ₁ / ε`` for L1 sensitivity ``Δ₁``."""
    return float(sensitivity) / check_epsilon(epsilon)


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
    return raise_until_exact(hi, lambda s: exact_gaussian_privacy_gap(s, sensitivity, epsilon) <= delta)


def discrete_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """σ of discrete Gaussian noise on an integer statistic of L2 sensitivity Δ₂ that is (ε, δ)-DP: the analytic
    σ_c of the continuous mechanism, plus σ₁² in variance (the smoothing lemma of
    :mod:`dpstats.accounting.gaussian`), rounded up."""
    sigma_c = gaussian_sigma_analytic(sensitivity, epsilon, delta)
    sigma = math.nextafter(math.sqrt(sigma_c * sigma_c + SMOOTHING_SIGMA**2), math.inf)
    return raise_until_exact(sigma, lambda s: dominating_sigma(s) >= sigma_c)


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
