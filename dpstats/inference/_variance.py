"""The confidence interval of a private variance, for the population variance: sampling error and noise together.

The releases (charged in the same call, :mod:`dpstats.descriptive._intervals`): the variance ṽ itself (ddof 0, the
release of :func:`dpstats.variance` at its share of ε), and the nuisance moments about the bounds' midpoint x̄ on a
coarse public grid, a_k = (1/n)Σ(x − x̄)^k + η_k for k = 1, 3, 4 (:mod:`dpstats._kernels.powers`).

The method: a parametric bootstrap test, inverted
-------------------------------------------------
The sampling distribution of the variance of n records depends on the population's kurtosis κ = μ₄/σ⁴:
Var(s²) ≈ σ⁴(κ − 1)/n — 2σ⁴/n for normal data, far more for heavy tails (a log-normal's κ exceeds 100), less for 0/1
data. It is modelled as σ²·(n − 1)/n·χ²_ν/ν with ν = 2n/(κ − 1) (Satterthwaite's moment match: the normal-theory
χ²_{n−1} law at κ = 3), and κ is estimated from the released moments: with d = a₁ (the mean's offset from x̄) and
m₂ = σ̂² + d², μ₄ = a₄ − 4d·a₃ + 6d²·m₂ − 3d⁴, clipped to the range a variable on the bounds allows (σ⁴ <= μ₄ <=
σ²·max((μ − lo)², (hi − μ)²)), and raised by twice its noise's standard deviation (an underestimated kurtosis makes
the interval too short). For a candidate σ² the released ṽ is then simulated — σ²(n − 1)/n·χ²_ν/ν plus the *exact*
noise of the variance release — and the interval is the set of σ² for which the real ṽ lies between the simulated
(1 − level)/2 and (1 + level)/2 quantiles (common random numbers for every candidate, so the set is an interval
found by bisection).

Why this method
---------------
The parametric bootstrap of Ferrando, Wang & Sheldon (AISTATS 2022, Algorithm 1) simulates the private estimator
from a model fitted to the private estimates; with a *normal* model its variance interval assumes κ = 3 and, where
the sampling error dominates the noise (large n·ε), undercovers for heavy-tailed data and overcovers for light
tails. Releasing the third and fourth moments (a share of ε) makes the model's spread the data's own (the
nonparametric delta method for s², e.g. Lehmann 1999, Section 2.4), and the χ²_ν shape keeps the right skew of a
variance at small n. Where the noise dominates (small n·ε, or bounds much wider than the data) the moments are
noisy, but the interval is then governed by the noise, whose distribution is exact.

References
----------
C. Ferrando, S. Wang & D. Sheldon, "Parametric bootstrap for differentially private confidence intervals", AISTATS
2022. F. E. Satterthwaite, "An approximate distribution of estimates of variance components", Biometrics Bulletin
2, 1946. E. L. Lehmann, "Elements of large-sample theory", Springer, 1999.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._simulate import DRAWS, NoiseModel, chi2_scale, crossing, equal_tailed, satterthwaite

__all__ = ["METHOD", "VarianceReleases", "variance_interval"]

METHOD = (
    "parametric bootstrap test inverted: scaled chi-square with the released kurtosis, plus the exact noise "
    "(Ferrando, Wang & Sheldon 2022; Satterthwaite 1946)"
)


@dataclass(frozen=True)
class VarianceReleases:
    """One coordinate's releases: the noisy variance (ddof 0) and the noisy moments a₁, a₃, a₄ about the
    midpoint, each with its noise; the bounds; n."""

    variance: float
    noise_variance: NoiseModel
    first: float
    third: float
    fourth: float
    noise_first: NoiseModel
    noise_third: NoiseModel
    noise_fourth: NoiseModel
    lower: float
    upper: float
    n: int


def variance_interval(
    r: VarianceReleases, level: float, rng: np.random.Generator, draws: int = DRAWS
) -> tuple[float, float, float]:
    """(low, high, standard error) of the population variance, from one coordinate's releases."""
    n, half = r.n, (r.upper - r.lower) / 2.0
    offset = min(max(r.first, -half), half)  # d = μ − x̄, noisy: it only enters the kurtosis
    cap = half**2  # Popoviciu: σ² <= (hi − lo)²/4 (Bhatia-Davis's (μ − lo)(hi − μ) would need μ without noise)
    sigma2 = min(max(r.variance * n / (n - 1), 0.0), cap)
    kurtosis = _kurtosis(r, offset, sigma2, half)
    df = satterthwaite(n, kurtosis)
    chi = chi2_scale(df, draws, rng)
    noise = r.noise_variance.sample(draws, rng)
    shrink = (n - 1) / n

    def simulated(candidate: float) -> np.ndarray:
        return r.noise_variance.rounded(candidate * shrink * chi) + noise

    def not_too_low(candidate: float) -> bool:  # the real ṽ is not below the simulated (1 − level)/2 quantile
        return r.variance >= equal_tailed(simulated(candidate), level)[0]

    def not_too_high(candidate: float) -> bool:  # nor above the (1 + level)/2 quantile
        return r.variance <= equal_tailed(simulated(candidate), level)[1]

    start = sigma2
    if not (not_too_low(start) and not_too_high(start)):
        start = _inside(not_too_low, not_too_high, cap)
    scale = math.sqrt(max(sigma2**2 * (kurtosis - 1.0) / n + r.noise_variance.variance(), 1e-300))
    low = 0.0 if start is None else crossing(not_too_high, start, scale, 0.0)
    high = cap if start is None else crossing(not_too_low, start, scale, cap)
    return low, high, scale


def _kurtosis(r: VarianceReleases, d: float, sigma2: float, half: float) -> float:
    """κ̂ raised by twice its noise's standard deviation, in [1, its largest value on the bounds] (module
    docstring); 3 (normal) when the variance estimate is 0."""
    if sigma2 <= 0.0:
        return 3.0
    m2 = sigma2 + d * d
    mu4 = r.fourth - 4.0 * d * r.third + 6.0 * d * d * m2 - 3.0 * d**4
    spread = math.sqrt(r.noise_fourth.variance() + 16.0 * d * d * r.noise_third.variance())
    reach = max((half + d) ** 2, (half - d) ** 2)  # the farthest a value is from the mean, squared
    mu4 = min(max(mu4 + 2.0 * spread, sigma2**2), sigma2 * reach)
    return max(mu4 / sigma2**2, 1.0)


def _inside(not_too_low, not_too_high, cap: float, points: int = 64) -> float | None:
    """A σ² in [0, cap] where both tests accept, from a scan (None if none: the interval is then the bounds')."""
    for candidate in np.linspace(0.0, cap, points):
        if not_too_low(float(candidate)) and not_too_high(float(candidate)):
            return float(candidate)
    return None
