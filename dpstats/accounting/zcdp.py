"""From zero-concentrated DP to (ε, δ)-DP: the conversion of Canonne, Kamath & Steinke (2020, Proposition 12).

A ρ-zCDP mechanism is (ε, δ)-DP for every order α > 1 with::

    δ = exp((α − 1)(αρ − ε)) (1 − 1/α)^α / (α − 1),

equivalently, solving for ε at a given δ::

    ε(α) = αρ + (α ln(1 − 1/α) − ln(α − 1) − ln δ) / (α − 1).

Every α gives a valid statement, so the functions below minimise over α numerically: an imperfect search only
makes the result larger (never below the truth), and floating-point results are rounded up.
"""

from __future__ import annotations

import math

from .gaussian import ROUND_UP

__all__ = ["zcdp_delta", "zcdp_epsilon"]


def _log_zcdp_delta(rho: float, epsilon: float, alpha: float) -> float:
    """log of exp((α−1)(αρ−ε)) (1 − 1/α)^α / (α − 1), the bound at order α."""
    return (alpha - 1.0) * (alpha * rho - epsilon) + alpha * math.log1p(-1.0 / alpha) - math.log(alpha - 1.0)


def zcdp_delta(rho: float, epsilon: float) -> float:
    """Smallest δ (at the best order α we find) such that ρ-zCDP implies (ε, δ)-DP."""
    if rho == 0:
        return 0.0
    if math.isinf(rho):
        return 1.0
    from scipy.optimize import minimize_scalar

    # The optimal α is at least (1 + ε/ρ)/2; search a bracket around it on a log scale.
    centre = max(1.0 + 1e-9, (1.0 + epsilon / rho) / 2.0)
    res = minimize_scalar(
        lambda t: _log_zcdp_delta(rho, epsilon, 1.0 + math.exp(t)),
        bounds=(math.log(1e-9), math.log(4.0 * centre + 10.0)),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return min(1.0, math.exp(res.fun))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """Smallest ε (at the best order α we find, rounded up) such that ρ-zCDP implies (ε, δ)-DP; ``inf`` if δ <= 0.

    One bounded minimisation of ε(α) over t = ln(α − 1) (about 30 evaluations), around the optimum
    α − 1 ≈ √(ln(1/δ)/ρ) of the simpler bound ρ + 2√(ρ ln(1/δ)) (Bun & Steinke 2016, Proposition 1.3), which
    is also valid and taken if it were ever smaller.
    """
    if rho == 0:
        return 0.0
    if delta <= 0 or math.isinf(rho):
        return math.inf
    if delta >= 1:
        return 0.0
    from scipy.optimize import minimize_scalar

    log_inverse_delta = -math.log(delta)

    def epsilon_at(t: float) -> float:  # α = 1 + e^t, so ln(α − 1) = t exactly
        alpha = 1.0 + math.exp(t)
        return alpha * rho + (alpha * math.log1p(-1.0 / alpha) - t + log_inverse_delta) / (alpha - 1.0)

    centre = 0.5 * math.log(max(log_inverse_delta, 1e-300) / rho)
    res = minimize_scalar(epsilon_at, bounds=(centre - 12.0, centre + 12.0), method="bounded", options={"xatol": 1e-10})
    simple = rho + 2.0 * math.sqrt(rho * log_inverse_delta)
    return max(0.0, min(float(res.fun), simple)) * ROUND_UP
