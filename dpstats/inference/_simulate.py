"""Simulating a private statistic: its exact noise, a plug-in model of its sampling error, Monte Carlo quantiles.

This is the machinery every interval (and every simulated null of a test) is built on. An interval or a p-value
is post-processing: it may use the releases of the call (charged) and public values, and nothing else. The noise
dpstats adds is public in distribution — an integer drawn exactly from a discrete Laplace or discrete Gaussian
distribution on a public power-of-two grid (:mod:`dpstats.noise.release`) — so it can be simulated *exactly*,
with the same exact samplers (:mod:`dpstats.noise.exact`). What is not public is the data, so the sampling part
of a statistic's error is simulated from a plug-in model whose parameters are themselves releases: the parametric
bootstrap of Ferrando, Wang & Sheldon (AISTATS 2022, Algorithm 1), here applied to the noisy sufficient
statistics rather than to simulated rows, so that a simulation costs O(draws), never O(n · draws).

The pieces
----------
:class:`NoiseModel`
    The exact distribution of one released coordinate's noise, from the calibrated noise of a planned release
    (:meth:`NoiseModel.of`): ``sample`` draws it exactly, ``release`` simulates a whole release of given exact
    values (rounded to the public grid, then the integer noise, as :meth:`dpstats.noise.release.Noise.apply`
    does), ``variance`` is its exact variance.
:func:`skewed`
    A standardised variable with a given skewness (a standardised gamma, exact through its quantile function;
    the normal at skewness 0): the sampling distribution of a mean of ``n`` records whose skewness is γ has
    skewness γ/√n, which matters for proportions near 0 or 1 and for skewed data at small ``n``.
:func:`beta_skewness`
    The skewness of the Beta distribution on public bounds with a given mean and variance: the plug-in shape of
    bounded data (exact for 0/1 data and for Beta data, 0 for data centred in their bounds).
:func:`chi2_scale`
    χ²_ν/ν draws, the sampling distribution of a variance estimate relative to the variance (ν = n − 1 for
    normal data; :func:`satterthwaite` for others).
:func:`equal_tailed` and :func:`pvalue`
    Monte Carlo quantiles and p-values with a fixed number of draws (:data:`DRAWS`): the order statistics
    ⌊(B + 1)p⌋ (a conservative rule: with B draws from the reference distribution, the interval's tails each hold
    at most their share of the draws), and the p-value (1 + #{T* at least as extreme})/(B + 1), which is valid
    (P(p <= u) <= u under the null) for any B (Davison & Hinkley 1997, Section 4.2.1).
:func:`crossing`
    Where a monotone function crosses a level, by bracketing and bisection: the end of an interval obtained by
    inverting a test.

Each function takes its ``rng`` (a :class:`numpy.random.Generator`, the call's own: a seeded call gives the same
interval) and draws a fixed number of values, whatever the data.

References
----------
C. Ferrando, S. Wang & D. Sheldon, "Parametric bootstrap for differentially private confidence intervals",
AISTATS 2022. C. Canonne, G. Kamath & T. Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020.
A. C. Davison & D. V. Hinkley, "Bootstrap methods and their application", Cambridge University Press, 1997.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..exceptions import ParameterError
from ..noise.exact import discrete_gaussian, discrete_laplace

__all__ = [
    "DRAWS",
    "NoiseModel",
    "beta_skewness",
    "chi2_scale",
    "crossing",
    "equal_tailed",
    "pvalue",
    "satterthwaite",
    "skewed",
]

#: The default number of Monte Carlo draws of an interval's reference distribution (a fixed budget: the work of
#: an interval does not depend on the data).
DRAWS = 2000

#: Below this skewness the sampling distribution is simulated as normal.
_SYMMETRIC = 1e-3


@dataclass(frozen=True)
class NoiseModel:
    """The exact distribution of the noise of one released coordinate.

    ``kind`` is ``"laplace"`` or ``"gaussian"`` (``"none"`` for a value released without noise: a public count);
    on a grid (``grid`` a power of two), ``scale`` is the discrete Laplace t (P(z) ∝ e^{−|z|/t}) or the discrete
    Gaussian σ² (P(z) ∝ e^{−z²/(2σ²)}), in grid units, exactly as drawn by :mod:`dpstats.noise.exact`; without a
    grid (``noise="float"``), the Laplace b or the Gaussian σ in data units. ``factor``: the release is this public
    number times the noisy statistic (a sum released as a mean and used as a sum: n).
    """

    kind: str
    scale: Fraction | float = 0
    grid: Fraction | None = None
    factor: float = 1.0

    @classmethod
    def of(cls, noise, factor: float = 1.0) -> NoiseModel:
        """The model of a calibrated :class:`~dpstats.noise.release.Noise` (a planned release's ``noises[i]``),
        times the public ``factor``."""
        grid = getattr(noise, "grid", None)
        return cls(noise.kind, noise.scale if grid is not None else float(noise.scale), grid, float(factor))

    @classmethod
    def none(cls) -> NoiseModel:
        """No noise (a value that is public, or exact)."""
        return cls("none")

    def times(self, factor: float) -> NoiseModel:
        """The noise of this release multiplied by a public number."""
        return NoiseModel(self.kind, self.scale, self.grid, self.factor * float(factor))

    def variance(self) -> float:
        """The noise's exact variance, in data units squared (for the discrete Gaussian, σ²G², which it never
        exceeds: Canonne, Kamath & Steinke 2020)."""
        if self.kind == "none":
            return 0.0
        if self.grid is None:
            base = 2.0 * float(self.scale) ** 2 if self.kind == "laplace" else float(self.scale) ** 2
        elif self.kind == "gaussian":
            base = float(self.scale) * float(self.grid) ** 2
        else:  # discrete Laplace with p = e^{−1/t}: Var = 2p/(1 − p)²
            t = float(self.scale)
            base = 2.0 * math.exp(-1.0 / t) / math.expm1(-1.0 / t) ** 2 * float(self.grid) ** 2
        return base * self.factor**2

    def sample(self, size, rng: np.random.Generator) -> np.ndarray:
        """``size`` exact draws of the noise, in data units."""
        shape = (int(size),) if isinstance(size, (int, np.integer)) else tuple(size)
        if self.kind == "none":
            return np.zeros(shape)
        if self.grid is None:
            if self.kind == "laplace":
                return rng.laplace(0.0, float(self.scale), shape) * self.factor
            return rng.normal(0.0, float(self.scale), shape) * self.factor
        scale = Fraction(self.scale)
        draw = discrete_laplace if self.kind == "laplace" else discrete_gaussian
        integers = draw(scale.numerator, scale.denominator, shape, rng)
        return np.asarray(integers, dtype=np.float64) * (float(self.grid) * self.factor)

    def rounded(self, values) -> np.ndarray:
        """Exact statistics (in the release's units) rounded to the public grid, as the release rounds them before
        adding the integer noise (:meth:`dpstats.noise.release.Noise.apply`); unchanged without a grid."""
        values = np.asarray(values, dtype=np.float64)
        if self.grid is None or self.kind == "none":
            return values
        step = float(self.grid) * self.factor
        return np.rint(values / step) * step

    def release(self, values, rng: np.random.Generator) -> np.ndarray:
        """Simulated releases of the exact statistics ``values``: rounded to the grid, plus the exact noise."""
        values = self.rounded(values)
        return values + self.sample(values.shape, rng)

    def sf(self, y) -> np.ndarray:
        """P(noise >= y), in data units, elementwise: exact for Laplace-type noise and for no noise; for the
        discrete Gaussian within :attr:`cdf_error` (what a test adds to its p-value to stay conservative).

        The discrete Laplace with scale t on the grid G (P(z) ∝ p^{|z|}, p = e^{−1/t}) has P(Z >= z) = p^z/(1 + p)
        for integers z >= 1 and 1 − p^{1−z}/(1 + p) for z <= 0; y is read in grid units and rounded up to the next
        integer (within 10^-9 of an integer, to that integer: releases and exact statistics lie on the grid). The
        discrete Gaussian's P(Z >= z) is the normal's Φ̄((z − 1/2)/σ) (midpoint rule; see :attr:`cdf_error`)."""
        return self._upper(np.asarray(y, dtype=np.float64))

    def cdf(self, y) -> np.ndarray:
        """P(noise <= y), in data units, elementwise (the noise is symmetric: P(noise >= −y)); as :meth:`sf`."""
        return self._upper(-np.asarray(y, dtype=np.float64))

    @property
    def cdf_error(self) -> float:
        """A bound on the error of :meth:`sf` and :meth:`cdf`: 0 except for the discrete Gaussian, where the midpoint
        rule Σ_{k >= z} φ(k) = ∫_{z−1/2}^∞ φ − Σ φ''(ξ_k)/24 errs by at most (∫|φ''| + 2 max|φ''|)/24 <= 0.05/σ² of
        the total mass (σ in grid units; σ >= 1 on dpstats' grids, where σ is at least 2^10)."""
        if self.kind != "gaussian" or self.grid is None:
            return 0.0
        return 0.05 / float(self.scale)

    def _upper(self, y: np.ndarray) -> np.ndarray:
        """P(noise >= y)."""
        from scipy.special import ndtr

        if self.kind == "none":
            return (y <= 0.0).astype(np.float64)
        if self.grid is None:
            scale = float(self.scale) * self.factor
            if self.kind == "laplace":
                return np.where(y <= 0.0, 1.0 - 0.5 * np.exp(np.minimum(y, 0.0) / scale), 0.5 * np.exp(-y / scale))
            return ndtr(-y / scale)
        z = y / (float(self.grid) * self.factor)  # in grid units
        near = np.rint(z)
        z = np.where(np.abs(z - near) <= 1e-9, near, np.ceil(z))
        if self.kind == "gaussian":
            return ndtr(-(z - 0.5) / math.sqrt(float(self.scale)))
        t = float(self.scale)
        log_p = -1.0 / t
        above = np.exp(np.maximum(z, 1.0) * log_p) / (1.0 + math.exp(log_p))  # z >= 1
        below = 1.0 - np.exp(np.maximum(1.0 - z, 1.0) * log_p) / (1.0 + math.exp(log_p))  # z <= 0
        return np.where(z >= 1.0, above, below)


def skewed(z: np.ndarray, skewness: float) -> np.ndarray:
    """A standardised variable (mean 0, variance 1) with the given skewness, as a monotone function of standard
    normal draws ``z`` (so that draws for different skewnesses are coupled): (G − k)/√k for G a Gamma(k) variable
    with k = 4/skewness² (its skewness is 2/√k) — through the gamma quantile function at Φ(z) for k < 4, and for
    k >= 4 through the Wilson–Hilferty cube, G ≈ k(1 − 1/(9k) + z/(3√k))³ (its quantiles within 0.1 % of the gamma's
    there); mirrored for a negative skewness; ``z`` itself below a skewness of 10^-3."""
    if not math.isfinite(skewness):
        raise ParameterError(f"skewness must be finite; got {skewness!r}")
    z = np.asarray(z, dtype=np.float64)
    if abs(skewness) < _SYMMETRIC:
        return z
    k = 4.0 / skewness**2
    sign = 1.0 if skewness > 0 else -1.0
    if k >= 4.0:
        root = 1.0 / (3.0 * math.sqrt(k))
        gamma = k * np.maximum(1.0 - root * root + root * sign * z, 0.0) ** 3
    else:
        from scipy.special import gammaincinv, ndtr

        gamma = gammaincinv(k, np.clip(ndtr(sign * z), 1e-300, 1.0 - 1e-16))
    return sign * (gamma - k) / math.sqrt(k)


def beta_skewness(mean: float, variance: float, lower: float, upper: float) -> float:
    """The skewness of the Beta distribution on [lower, upper] with this mean and variance (moment matching).

    With t = (mean − lower)/w, v = variance/w² and ν = t(1 − t)/v − 1 >= 0 (the variance of a distribution on
    [lower, upper] is at most (mean − lower)(upper − mean), Bhatia & Davis 2000, with equality only for the two
    points {lower, upper}): 2(1 − 2t)√(ν + 1)/((ν + 2)√(t(1 − t))). At ν = 0 this is the skewness of 0/1 data,
    (1 − 2t)/√(t(1 − t)); it is 0 for a mean in the middle of the bounds."""
    width = upper - lower
    t = min(max((mean - lower) / width, 1e-12), 1.0 - 1e-12)
    v = max(variance / width**2, 1e-300)
    nu = max(t * (1.0 - t) / v - 1.0, 0.0)
    return 2.0 * (1.0 - 2.0 * t) * math.sqrt(nu + 1.0) / ((nu + 2.0) * math.sqrt(t * (1.0 - t)))


def satterthwaite(n: float, kurtosis: float) -> float:
    """The degrees of freedom ν of the scaled χ²_ν/ν that matches the variance of a sample variance of ``n``
    records with this kurtosis (μ₄/σ⁴): Var(s²)/σ⁴ ≈ (κ − 1)/n = 2/ν, so ν = 2n/(κ − 1) (n − 1 for normal data,
    κ = 3). At least 1."""
    excess = max(kurtosis - 1.0, 1e-12)
    return max(2.0 * n / excess, 1.0)


def chi2_scale(df: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws of χ²_df/df (mean 1, variance 2/df)."""
    return rng.chisquare(max(float(df), 1e-6), size) / max(float(df), 1e-6)


def equal_tailed(draws: np.ndarray, level: float, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """The (1 − level)/2 and (1 + level)/2 quantiles of simulated ``draws`` (along ``axis``), as the order
    statistics ⌊(B + 1)(1 − level)/2⌋ and B + 1 − that (1-based; the extreme draws when B is too small): each tail
    beyond them holds at most its share of the simulated distribution."""
    draws = np.sort(np.asarray(draws, dtype=np.float64), axis=axis)
    size = draws.shape[axis]
    k = max(1, math.floor((size + 1) * (1.0 - level) / 2.0))
    return np.take(draws, k - 1, axis=axis), np.take(draws, size - k, axis=axis)


def pvalue(observed: float, draws: np.ndarray, alternative: str = "two-sided") -> float:
    """The Monte Carlo p-value of ``observed`` against simulated ``draws`` of the statistic under the null:
    (1 + #{T* >= t})/(B + 1) for ``"greater"``, with <= for ``"less"``, and twice the smaller (at most 1) for
    ``"two-sided"`` (scipy's convention). Valid for any number of draws B: P(p <= u) <= u under the null."""
    draws = np.asarray(draws, dtype=np.float64).ravel()
    size = draws.size
    greater = (1.0 + np.count_nonzero(draws >= observed)) / (size + 1.0)
    less = (1.0 + np.count_nonzero(draws <= observed)) / (size + 1.0)
    if alternative == "greater":
        return float(greater)
    if alternative == "less":
        return float(less)
    if alternative == "two-sided":
        return float(min(1.0, 2.0 * min(greater, less)))
    raise ParameterError(f"alternative must be 'two-sided', 'less' or 'greater'; got {alternative!r}")


def crossing(
    inside: Callable[[float], bool], start: float, step: float, limit: float, *, tolerance: float = 1e-6
) -> float:
    """The boundary of the set where ``inside`` holds, going from ``start`` (inside) towards ``limit``: doubles
    the step until a point outside (or ``limit``, returned when it is inside), then bisects until the bracket is
    below ``tolerance`` times the first step. Returns the last point known to be inside (the conservative end)."""
    direction = 1.0 if limit >= start else -1.0
    step = abs(step) if step > 0 and math.isfinite(step) else abs(limit - start) / 2.0 or 1.0
    inner, outer = start, None
    while outer is None:
        candidate = start + direction * step
        if direction * (candidate - limit) >= 0:
            if inside(limit):
                return limit
            outer = limit
        elif inside(candidate):
            inner, step = candidate, 2.0 * step
        else:
            outer = candidate
    precision = tolerance * step
    while abs(outer - inner) > precision:
        middle = (inner + outer) / 2.0
        if middle in (inner, outer):
            break
        if inside(middle):
            inner = middle
        else:
            outer = middle
    return inner
