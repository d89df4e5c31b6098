"""How far a release is from its exact statistic: the half-width of an interval that holds with a given
confidence, for each noise dpstats adds.

Each function returns h such that every coordinate's error (release minus exact statistic) lies in [−h, h]
with probability at least ``confidence``; the intervals are tight (not a loose tail bound), so that a user can
read them as "the release is within ±h of the truth, 19 times in 20".

* **Discrete Laplace** with scale t on a grid G (:mod:`dpstats.noise.release`):
  P(Z = z) ∝ p^{|z|} with p = e^{−1/t}, so P(|Z| > m) = 2p^{m+1}/(1 + p) exactly; m is the smallest integer
  with that at most 1 − confidence, found from the closed form and checked.
* **Discrete Gaussian** N_Z(0, σ²) on a grid G: with ρ(z) = e^{−z²/(2σ²)} decreasing in |z|,
  Σ_{z>m} ρ(z) <= ∫_m^∞ ρ = √(2π) σ Q(m/σ), and by Poisson summation the normaliser Σ_z ρ(z) is at least
  √(2π) σ (1 − θ) with θ = 2 Σ_{l>=1} e^{−2π²σ²l²} <= 2q/(1 − q), q = e^{−2π²σ²}
  (see :mod:`dpstats.accounting.gaussian`); hence
  P(|Z| > m) <= 2Q(m/σ)/(1 − θ), and m = ⌈σ Q⁻¹((1 − confidence)(1 − θ)/2)⌉ suffices.
* In both, the statistic is first rounded to the grid, which moves it by at most G/2: h = (m + 1/2)·G.
* **Continuous noise** (``noise="float"``): Laplace(b), h = b ln(1/(1 − confidence)); Gaussian N(0, σ²),
  h = σ Φ⁻¹((1 + confidence)/2).

The interval is for one coordinate at a time (each coordinate's error is in its interval with that
probability), not for all coordinates of a vector at once.
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["continuous_half_width", "grid_half_width"]


def grid_half_width(kind: str, scale: Fraction, grid: Fraction, confidence: float) -> float:
    """h for exact integer noise on ``grid``: ``kind`` "laplace" (``scale`` = t) or "gaussian" (``scale`` = σ²),
    both in grid units; h in the statistic's units (see the module docstring)."""
    m = _laplace_quantile(float(scale), confidence) if kind == "laplace" else _gaussian_quantile(scale, confidence)
    return (m + 0.5) * float(grid)


def continuous_half_width(kind: str, scale: float, confidence: float) -> float:
    """h for continuous Laplace (``scale`` = b) or Gaussian (``scale`` = σ) noise."""
    from scipy.special import ndtri

    if kind == "laplace":
        return scale * -math.log1p(-confidence)
    return scale * float(ndtri((1.0 + confidence) / 2.0))


def _laplace_tail(t: float, m: int) -> float:
    """P(|Z| > m) for the discrete Laplace of scale t: 2 p^{m+1} / (1 + p), p = e^{−1/t}."""
    return 2.0 * math.exp(-(m + 1) / t) / (1.0 + math.exp(-1.0 / t))


def _laplace_quantile(t: float, confidence: float) -> int:
    """The smallest m >= 0 with P(|Z| > m) <= 1 − confidence."""
    p = math.exp(-1.0 / t)
    m = max(0, math.ceil(-t * math.log((1.0 - confidence) * (1.0 + p) / 2.0)) - 1)
    while m > 0 and _laplace_tail(t, m - 1) <= 1.0 - confidence:  # the closed form, corrected for rounding
        m -= 1
    while _laplace_tail(t, m) > 1.0 - confidence:
        m += 1
    return m


def _gaussian_quantile(variance: Fraction, confidence: float) -> int:
    """An m with P(|Z| > m) <= 1 − confidence for Z ~ N_Z(0, σ²), tight to one grid unit (the module docstring)."""
    from scipy.special import ndtri

    sigma = math.sqrt(variance)
    first = math.exp(-2.0 * math.pi**2 * float(variance))
    theta = 2.0 * first / (1.0 - first) if first < 1.0 else math.inf  # >= θ, as e^{-c l²} <= e^{-c l}
    if theta >= 1.0:
        return math.inf
    z = -float(ndtri((1.0 - confidence) * (1.0 - theta) / 2.0))
    return math.ceil(sigma * z * (1.0 + 1e-12))  # rounded up: the float product is within 1e-15 of the exact one
