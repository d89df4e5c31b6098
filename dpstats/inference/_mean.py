"""The confidence interval of a private mean, for the population mean: sampling error and noise together.

The releases (charged in the same call, :mod:`dpstats.descriptive._intervals`): the shifted sum S̃ = Σ(x − x̄) + η_S
(x̄ = (lo + hi)/2 the bounds' midpoint; released as the mean itself when n is public), the record count C̃ (public
and exact without a privacy unit), and the shifted sum of squares Q̃ = Σ(x − x̄)² + η_Q. With a privacy unit of
several records the unit-level second moments Σ_u S_u², Σ_u S_u C_u and Σ_u C_u² replace Q̃ (S_u, C_u: a unit's
shifted sum and count). Everything below is post-processing of these numbers and of the noise's public, exact
distribution (:mod:`dpstats.inference._simulate`).

The method: a studentised test, inverted, calibrated by a parametric bootstrap
---------------------------------------------------------------------------------
For a candidate mean μ = x̄ + R the statistic is Fieller's (1954) ratio pivot, studentised::

    T(R) = (S̃ − R·C̃) / √(C′·v(R) + Var η_S + R²·Var η_C),      C′ = max(C̃, 1)

S̃ − R·C̃ = (S − R·C) + η_S − R·η_C exactly: the sampling error of the records' sum about the candidate mean plus
the noise of both releases, with no linearisation. v(R) is the records' variance *under the candidate*: for records
(each record its own unit, the same for the records of a key) the population identity E(X − x̄)² = σ² + R² gives
v(R) = Q̃/C′ − R², clipped to [0, (μ − lo)(hi − μ)] (the most a variable on the bounds with mean μ can vary,
Bhatia & Davis 2000). For 0/1 data Q̃/C′ = 1/4 exactly (up to noise), so v(R) = μ(1 − μ): the interval is then
Wilson's (1927) score interval for a proportion, with the noise added — the interval that stays valid near p = 0
where the Wald interval (the estimate ± its estimated standard error) collapses. For privacy units of several
records, v(R) = (Σ S_u² − 2R Σ S_u C_u + R² Σ C_u²)/N, the variance of S_u − R·C_u over the N units (the ratio
estimator's linearisation; the interval covers E[S_u]/E[C_u] + x̄, the mean over the records of the population of
units after bounding to max_rows each).

T(R) is calibrated by simulating it at a candidate (R, σ²) — a parametric bootstrap (Ferrando, Wang & Sheldon,
AISTATS 2022, Algorithm 1) from the noisy sufficient statistics: the records' mean is drawn with the variance σ²
and the skewness of the Beta distribution on the bounds with that mean and variance
(:func:`~dpstats.inference._simulate.beta_skewness`: exact for 0/1 and Beta data, 0 for data centred in their
bounds), their variance from the χ²_{n−1} law, and the *exact* noise of every release is added (discrete Laplace or
Gaussian on the public grid, the rounding to the grid included); T* is computed from the simulated releases as T
from the real ones. The interval is the set of R where T(R) lies between the (1 − level)/2 and (1 + level)/2
quantiles of T*: its lower end is calibrated at the lower end itself and its upper end at the upper end (a first
pass at the estimate finds them approximately). The variance of the simulated world is the nuisance. At an end R
the world takes the larger of v(R) and the estimate's v(R̂): v(R) is the variance the candidate implies (exact for
0/1 data, which makes the ends Wilson's), but for data far from the bounds' midpoint it moves with R much more than
the data's variance can (∂v/∂R = −2R), and an end calibrated with a collapsed v(R) is too short. The quantiles are
then taken over the worst of three values (that variance and ± two standard deviations of its noise), in the
manner of Berger & Boos (1994), so that a noisy variance does not make the interval too short.

Why this method (and not the noise-only interval, or a plug-in)
----------------------------------------------------------------
The noise-only interval (the estimate ± the noise's quantile, what every peer reports) covers the *sample* mean,
not the population's: with little noise (large n·ε) its coverage of the population mean falls towards 0. Du, Foot,
Moniot, Bray & Groce (2020, "Differentially private confidence intervals", NOISYVAR and the simulation of their
Algorithm 3) add a private variance and simulate the sampling error with the noise; with a plug-in variance the
interval is too short when the variance is noisy, and for proportions near 0 or 1 (or skewed data at small n) a
normal sampling model undercovers. The studentised, skewness-aware test inversion above keeps its level in those
cells of dpstats' coverage benchmark (``benchmarks/bench_intervals.py``); the price of learning the variance
privately is a share of ε (the estimate's noise grows by 1/share) and, for data in a small corner of very wide
bounds, an interval wider than an oracle that knows the variance (the second moment about the bounds' midpoint
says little about a spread far below the bounds' width).

References
----------
E. C. Fieller, "Some problems in interval estimation", JRSS B 16, 1954. E. B. Wilson, "Probable inference, the law
of succession, and statistical inference", JASA 22, 1927. R. Bhatia & C. Davis, "A better bound on the variance",
Amer. Math. Monthly 107, 2000. R. L. Berger & D. D. Boos, "P values maximized over a confidence set for the
nuisance parameter", JASA 89, 1994. W. Du, C. Foot, M. Moniot, A. Bray & A. Groce, "Differentially private
confidence intervals", arXiv:2001.02285, 2020. C. Ferrando, S. Wang & D. Sheldon, "Parametric bootstrap for
differentially private confidence intervals", AISTATS 2022. V. Karwa & S. Vadhan, "Finite sample differentially
private confidence intervals", ITCS 2018.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._simulate import DRAWS, NoiseModel, beta_skewness, chi2_scale, crossing, equal_tailed, skewed

__all__ = ["METHOD", "MeanReleases", "UnitMoments", "mean_interval"]

METHOD = (
    "studentised ratio test inverted, calibrated by a parametric bootstrap with the exact noise "
    "(Fieller 1954; Wilson 1927 for proportions; Ferrando, Wang & Sheldon 2022; Du et al. 2020)"
)


@dataclass(frozen=True)
class UnitMoments:
    """The noisy unit-level second moments Σ S_u², Σ S_u C_u, Σ C_u² over the N units, and their noise."""

    ss: float
    sc: float
    cc: float
    noise_ss: NoiseModel
    noise_sc: NoiseModel
    noise_cc: NoiseModel


@dataclass(frozen=True)
class MeanReleases:
    """What one coordinate's interval is computed from: the noisy shifted sum ``total`` (Σ(x − x̄)), the noisy or
    public record ``count``, and either the noisy shifted sum of ``squares`` (records) or the unit-level
    ``moments`` (units of several records), each with its noise; the bounds; ``units`` N (with unit moments)."""

    total: float
    count: float
    noise_total: NoiseModel
    noise_count: NoiseModel
    lower: float
    upper: float
    squares: float | None = None
    noise_squares: NoiseModel | None = None
    moments: UnitMoments | None = None
    units: int = 0

    @property
    def midpoint(self) -> float:
        return (self.lower + self.upper) / 2.0

    @property
    def half_width(self) -> float:
        return (self.upper - self.lower) / 2.0


def mean_interval(
    releases: MeanReleases, level: float, rng: np.random.Generator, draws: int = DRAWS
) -> tuple[float, float, float]:
    """(low, high, standard error) of the population mean, from one coordinate's releases (module docstring)."""
    pivot = _Pivot(releases)
    world = _World(releases, draws, rng)
    start = pivot.estimate()
    estimated = pivot.variances(start)
    quantiles = world.quantiles(start, estimated, level)
    ends = []
    for side, limit in ((1, -releases.half_width), (0, releases.half_width)):
        end = pivot.end(start, quantiles, side, limit)
        # calibrated at the end itself, with the larger of its own variance and the estimate's (module docstring)
        variances = pivot.variances(end) if pivot.record_variance(end) > estimated[0] else estimated
        end = pivot.end(start, world.quantiles(end, variances, level), side, limit)
        ends.append(releases.midpoint + end)
    return ends[0], ends[1], pivot.standard_error(start)


class _Pivot:
    """T(R) of the real releases (module docstring)."""

    def __init__(self, r: MeanReleases):
        self.r = r
        self.scaled = max(r.count, 1.0)
        self.var_total = r.noise_total.variance()
        self.var_count = r.noise_count.variance()
        if r.moments is None:
            self.var_squares = r.noise_squares.variance()
        else:
            m = r.moments
            self.var_moments = (m.noise_ss.variance(), m.noise_sc.variance(), m.noise_cc.variance())

    def estimate(self) -> float:
        """R̂ = S̃/C′ within the bounds."""
        return float(np.clip(self.r.total / self.scaled, -self.r.half_width, self.r.half_width))

    def record_variance(self, shift: float) -> float:
        """v(R) (module docstring), clipped to [0, the Bhatia-Davis bound]."""
        r = self.r
        cap = max(r.half_width**2 - shift**2, 0.0)
        if r.moments is None:
            v = r.squares / self.scaled - shift**2
        else:
            m = r.moments
            v = (m.ss - 2.0 * shift * m.sc + shift**2 * m.cc) / r.units
            cap *= max(m.cc / r.units, 1.0)  # a unit's c records: Var(S_u − R·C_u) <= c²·(μ − lo)(hi − μ)
        return min(max(v, 0.0), cap)

    def _size(self) -> float:
        return float(self.r.units) if self.r.moments is not None else self.scaled

    def denominator(self, shift: float) -> float:
        spread = self._size() * self.record_variance(shift) + self.var_total + shift**2 * self.var_count
        return math.sqrt(max(spread, 1e-300))

    def statistic(self, shift: float) -> float:
        return (self.r.total - shift * self.r.count) / self.denominator(shift)

    def standard_error(self, shift: float) -> float:
        """The standard error of the mean's estimate (sampling and noise), at R."""
        return self.denominator(shift) / self.scaled

    def variances(self, shift) -> tuple[float, ...]:
        """The world variances at R: v(R), and v(R) ± twice the standard deviation of its noise, on the bounds."""
        v = self.record_variance(shift)
        cap = max(self.r.half_width**2 - shift**2, 0.0)
        if self.r.moments is None:
            sd = math.sqrt(self.var_squares) / self.scaled
        else:
            vs, vc, vcc = self.var_moments
            sd = math.sqrt(vs + 4.0 * shift**2 * vc + shift**4 * vcc) / self.r.units
            cap *= max(self.r.moments.cc / self.r.units, 1.0)
        return (v, max(v - 2.0 * sd, 0.0), min(v + 2.0 * sd, cap))

    def end(self, start: float, quantiles: tuple[float, float], side: int, limit: float) -> float:
        """The end of {R : q_lo <= T(R) <= q_hi} on one side of ``start``: side 1 (the lower end, where T reaches
        q_hi) or 0 (the upper end, where T falls to q_lo)."""
        low, high = quantiles

        def inside(shift: float) -> bool:
            t = self.statistic(shift)
            return t <= high if side == 1 else t >= low

        if not inside(start):
            return start
        step = self.standard_error(start)
        return crossing(inside, start, step, limit)


class _World:
    """Simulated releases at a candidate (R, σ²): the common random numbers, drawn once."""

    def __init__(self, r: MeanReleases, draws: int, rng: np.random.Generator):
        self.r = r
        self.z = rng.standard_normal(draws)
        self.noise_total = r.noise_total.sample(draws, rng)
        self.noise_count = r.noise_count.sample(draws, rng)
        self.var_total = r.noise_total.variance()
        self.var_count = r.noise_count.variance()
        if r.moments is None:
            self.records = max(int(round(max(r.count, 1.0))), 1)
            self.chi = chi2_scale(max(self.records - 1, 1), draws, rng)
            self.noise_squares = r.noise_squares.sample(draws, rng)
        else:
            m = r.moments
            self.noise_moments = tuple(n.sample(draws, rng) for n in (m.noise_ss, m.noise_sc, m.noise_cc))

    def quantiles(self, shift: float, variances: tuple[float, ...], level: float) -> tuple[float, float]:
        """The outermost (1 ∓ level)/2 quantiles of T* over the world variances given."""
        lows, highs = zip(*(equal_tailed(self.statistics(shift, v), level) for v in variances), strict=True)
        return float(min(lows)), float(max(highs))

    def statistics(self, shift: float, variance: float) -> np.ndarray:
        """T* at the candidate R = ``shift`` with record (or unit) variance ``variance``."""
        r = self.r
        if r.moments is not None:
            return self._unit_statistics(shift, variance)
        n = self.records
        mean = r.midpoint + shift
        skewness = beta_skewness(mean, variance, r.lower, r.upper) / math.sqrt(n)
        deviation = math.sqrt(variance / n) * skewed(self.z, skewness)  # x̄* − μ
        spread = variance * self.chi * (n - 1) / n  # s²* (ddof 0)
        total = r.noise_total.rounded(n * (shift + deviation)) + self.noise_total
        count = n + self.noise_count
        squares = r.noise_squares.rounded(n * (spread + (shift + deviation) ** 2)) + self.noise_squares
        scaled = np.maximum(count, 1.0)
        cap = max(r.half_width**2 - shift**2, 0.0)
        v = np.clip(squares / scaled - shift**2, 0.0, cap)
        denominator = np.sqrt(np.maximum(scaled * v + self.var_total + shift**2 * self.var_count, 1e-300))
        return (total - shift * count) / denominator

    def _unit_statistics(self, shift: float, variance: float) -> np.ndarray:
        """T* for units of several records: the units' sum about R·C is normal with variance N·σ² (their number
        is large wherever a ratio interval is asked for); the second moments carry their noise."""
        r, m = self.r, self.r.moments
        units = r.units
        error = math.sqrt(units * variance) * self.z + self.noise_total - shift * self.noise_count
        ss, sc, cc = self.noise_moments
        v = variance + (ss - 2.0 * shift * sc + shift**2 * cc) / units
        cap = max(r.half_width**2 - shift**2, 0.0) * max(m.cc / units, 1.0)
        v = np.clip(v, 0.0, cap)
        denominator = np.sqrt(np.maximum(units * v + self.var_total + shift**2 * self.var_count, 1e-300))
        return error / denominator
