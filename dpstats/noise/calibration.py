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
"""

from __future__ import annotations

import math
import warnings

from .._validation import check_choice, check_delta, check_epsilon
from ..exceptions import NotPrivateWarning, ParameterError

__all__ = [
    "CALIBRATIONS",
    "gaussian_privacy_gap",
    "gaussian_sigma",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
    "laplace_scale",
]

CALIBRATIONS = ("analytic", "classic")


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Laplace scale ``b = Δ₁ / ε`` for L1 sensitivity ``Δ₁``."""
    return float(sensitivity) / check_epsilon(epsilon)


def gaussian_privacy_gap(sigma: float, sensitivity: float, epsilon: float) -> float:
    """The smallest δ for which N(0, σ²) noise on a Δ₂-sensitive query is (ε, δ)-DP.

    This is the left side of Balle & Wang (2018), Theorem 8, evaluated in log
    space so that it stays finite for large ε.
    """
    from scipy.special import log_ndtr

    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    return math.exp(log_ndtr(a - b)) - math.exp(epsilon + log_ndtr(-a - b))


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
        σ, accurate to a relative 1e-12 and never below the exact value.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if delta == 0:
        raise ParameterError("delta must be > 0 for Gaussian noise; use Laplace noise for delta = 0")
    if sensitivity == 0:
        return 0.0
    lo, hi = sensitivity, sensitivity
    while gaussian_privacy_gap(lo, sensitivity, epsilon) <= delta:
        lo /= 2.0
    while gaussian_privacy_gap(hi, sensitivity, epsilon) > delta:
        hi *= 2.0
    while hi - lo > 1e-12 * hi:
        mid = math.sqrt(lo * hi)
        if gaussian_privacy_gap(mid, sensitivity, epsilon) > delta:
            lo = mid
        else:
            hi = mid
    return hi


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
