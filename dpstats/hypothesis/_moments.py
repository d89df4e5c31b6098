"""Tests of means, private: the samples' noisy moments, studentised statistics with the noise in their standard
errors, and their null distributions simulated by a parametric bootstrap with the exact noise.

Shared by :func:`~dpstats.hypothesis.ttest_1samp` (one sample), :func:`~dpstats.hypothesis.ttest_ind` (two) and
:func:`~dpstats.hypothesis.f_oneway` (k).

The releases
------------
For each sample j (bounds [lo, hi] on every value, public; x̄ = (lo + hi)/2, w = hi − lo of the bounds rounded to
the records' fixed-point grid), exactly on that grid (:mod:`dpstats._kernels.fixed_point`): the shifted sum
S_j = Σ(x − x̄), the shifted sum of squares Q_j = Σ(x − x̄)² and, with several samples, the count C_j. The total
number of records n is public. Neighbours replace one record — its value, and with several samples the sample it
belongs to (which sample a person is in is private too: the sizes of the samples are released with noise, never
read as public). Replacing a record moves one S_j by at most w, or two by at most w/2 each (L1 and L2 sensitivity
w); one Q_j by at most w²/4, or two by w²/4 each (L1 w²/2, L2 √2·w²/4); two counts by 1 (L1 2, L2 √2). Each vector
is one release with that sensitivity (exact discrete Laplace for δ = 0, discrete Gaussian for δ > 0), the budget
split S : Q = 4 : 1 for one sample (the split of :func:`dpstats.mean` with ``ci``) and S : C : Q = 4 : 2 : 1 for
several, all charged as one ledger entry. Everything below is post-processing of these noisy numbers and of the
noise's public distribution.

The statistic: studentised, with the null's own variance and the noise
-----------------------------------------------------------------------
With c_j the noisy counts raised to at least 1 and scaled to sum to n (n is public), the sample's mean offset
r_j = S̃_j/c_j estimates μ_j − x̄. Under a null that fixes the offsets ρ_j (one sample: ρ = popmean − x̄; several:
a common ρ, estimated by the pooled ΣS̃_j/n), each sample's variance is estimated *about the null's mean*,
v_j = Q̃_j/c_j − ρ_j² (the identity E(x − x̄)² = σ² + (μ − x̄)²; clipped to [0, (μ_j − lo)(hi − μ_j)], Bhatia &
Davis 2000), and the standard error of r_j carries the noise,

    se_j² = (c_j·v_j + Var η_S + ρ_j²·Var η_C) / c_j²

(S̃_j − ρ_j·C̃_j = (S_j − ρ_j·n_j) + η_S − ρ_j·η_C exactly). One sample: T = (r − ρ)/se — Fieller's (1954) ratio
pivot, as in :mod:`dpstats.inference._mean`, whose interval it inverts; for 0/1 data in (0, 1) the variance about
the null is p₀(1 − p₀) exactly, Wilson's score test with the noise added. Two samples: Welch's (1947) statistic
T = (r_a − r_b − Δ)/√(se_a² + se_b²). k samples: Welch's (1951) heteroscedastic ANOVA, W = Σ ω_j (r_j − r̄_ω)² with
ω_j = 1/se_j² and r̄_ω the ω-weighted mean, reported as F = W/(k − 1). Each is asymptotically pivotal — N(0, 1) or
χ²_{k−1} — whatever the noise, because the noise is in the standard errors; the simulation below takes care of
small samples, skewed data and Laplace tails.

The null distribution: a parametric bootstrap with the exact noise
-------------------------------------------------------------------
The statistic is simulated B times at the null (Ferrando, Wang & Sheldon, AISTATS 2022, Algorithm 1, on the noisy
sufficient statistics as :mod:`dpstats.inference._simulate` does): each sample's mean is drawn with its variance and
the skewness of the Beta distribution on the bounds with that mean and variance
(:func:`~dpstats.inference._simulate.skewed`, :func:`~dpstats.inference._simulate.beta_skewness`), its variance from
the χ²_{n_j−1} law, the releases are rounded to their grids and given their exact noise, and the statistic is computed
from them as from the real releases. The nuisance parameters are plugged in: the variances v_j and, with several
samples, the common mean and the sizes (among the sizes within three noise standard deviations of the released counts,
those closest to equal: :func:`~dpstats.hypothesis._result.balanced_sizes`); the p-value is the largest of the Monte
Carlo p-values (1 + #)/(B + 1) at the variances v_j and v_j ± 2 standard deviations of their noise (in the manner of
Berger & Boos 1994, as the mean's interval does), with common random numbers. Swanberg, Globus-Harris, Griffith, Ritz,
Groce & Bray (PoPETs 2019) calibrate their private ANOVA by simulating its null as well; here the releases are the
sufficient statistics (sums and sums of squares, each of small sensitivity) rather than their F statistic's
absolute-deviation parts. The type-I error is measured in ``tests/test_hypothesis.py`` and
``benchmarks/bench_hypothesis.py``.

References
----------
E. C. Fieller, JRSS B 16, 1954. B. L. Welch, "The generalization of Student's problem when several different
population variances are involved", Biometrika 34, 1947; "On the comparison of several mean values: an alternative
approach", Biometrika 38, 1951. C. Ferrando, S. Wang & D. Sheldon, AISTATS 2022. R. L. Berger & D. D. Boos, JASA 89,
1994. M. Swanberg, I. Globus-Harris, I. Griffith, A. Ritz, A. Groce & A. Bray, "Improved differentially private
analysis of variance", PoPETs 2019. R. Bhatia & C. Davis, Amer. Math. Monthly 107, 2000.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._engine import bounded_sums
from .._kernels.fixed_point import BoundedSums, FixedPoint
from .._release import Planned, plan, split_budget
from .._validation import check_bounds
from ..descriptive._shifted import Shifted, scalar
from ..exceptions import ParameterError
from ..inference._simulate import NoiseModel, beta_skewness, chi2_scale, crossing, pvalue, skewed
from ..noise.release import Statistic
from ._result import charged, noise_of

__all__ = [
    "ONE_SAMPLE_SHARES",
    "SHARES",
    "Moments",
    "Released",
    "World",
    "difference_interval",
    "max_pvalue",
    "moment_plans",
    "moments_note",
    "public_moments",
    "release_moments",
    "scalar_bounds",
]

#: One sample: the budget of S and Q (as dpstats.mean with ci).
ONE_SAMPLE_SHARES = (4, 1)
#: Several samples: the budget of the sums S, the counts C and the sums of squares Q.
SHARES = (4, 2, 1)


@dataclass(frozen=True)
class Released:
    """The noisy moments of k samples, their noise, the bounds and n (module docstring). With one sample the
    count is n, public (``noise_count`` is no noise)."""

    sums: np.ndarray
    counts: np.ndarray
    squares: np.ndarray
    noise_sum: NoiseModel
    noise_count: NoiseModel
    noise_square: NoiseModel
    lower: float
    upper: float
    n: int

    @property
    def midpoint(self) -> float:
        return (self.lower + self.upper) / 2.0

    @property
    def half(self) -> float:
        return (self.upper - self.lower) / 2.0

    def public(self) -> dict:
        """What was released, for the result (public values only)."""
        found = {"sums about the midpoint": self.sums, "sums of squares about the midpoint": self.squares}
        if self.counts.size > 1:
            found["counts"] = self.counts
        return {**found, "midpoint": self.midpoint, "n": self.n}


def release_moments(
    test: str,
    samples: list[np.ndarray],
    names: list[str],
    bounds,
    clip: bool,
    epsilon: float,
    delta: float,
    *,
    rng,
    accountant,
    noise: str,
    note: str = "",
    relation: str = "row",
) -> Released:
    """Check every value of ``samples`` against ``bounds`` (NaN and infinity always raise; values outside raise unless
    ``clip``), sum each sample's records exactly, and release their moments in one charge (module docstring)."""
    lower, upper = scalar_bounds(bounds)
    found = [
        Shifted.of(bounded_sums(x, lower, upper, axis=None, clip=clip, squares=True, name=name), 1)
        for x, name in zip(samples, names, strict=True)
    ]
    first = found[0]
    width = Fraction(scalar(first.shifted_sensitivity))  # w of the rounded bounds (the same grid for every sample)
    k = len(samples)
    several = k > 1
    plans = moment_plans(found, epsilon, delta, noise)
    counts = np.array([g.count.values for g in found], dtype=np.int64)
    n = int(counts.sum())
    what = moments_note(k, n)
    noisy = charged(test, plans, rng=rng, accountant=accountant, note=f"{note}{test}: {what}", relation=relation)
    middle = float(np.asarray(first.midpoint))  # of the bounds rounded to the records' grid
    return Released(
        sums=np.atleast_1d(np.asarray(noisy[0], dtype=np.float64)),
        counts=np.atleast_1d(np.asarray(noisy[2], dtype=np.float64)) if several else counts.astype(np.float64),
        squares=np.atleast_1d(np.asarray(noisy[1], dtype=np.float64)),
        noise_sum=noise_of(plans[0]),
        noise_count=noise_of(plans[2]) if several else NoiseModel.none(),
        noise_square=noise_of(plans[1]),
        lower=middle - float(width) / 2,
        upper=middle + float(width) / 2,
        n=n,
    )


def scalar_bounds(bounds) -> tuple[np.ndarray, np.ndarray]:
    """``bounds`` as a pair of scalars (lower, upper), else a ParameterError naming them."""
    lower, upper = check_bounds(bounds)
    if lower.ndim or upper.ndim:
        raise ParameterError(f"bounds must be a pair of numbers (lower, upper); got {bounds!r}")
    return lower, upper


def public_moments(bounds) -> Shifted:
    """The moments of no records on the public fixed-point grid of ``bounds``: all that :func:`moment_plans` reads of
    a sample besides its values — the width w of the bounds rounded to the grid and the grids of the sums — as
    :func:`release_moments` finds them for every sample (the grid depends on the bounds only). A preview plans with
    it."""
    lower, upper = scalar_bounds(bounds)
    unit, q_lower, q_upper = FixedPoint.of(lower, upper, True).public(())
    return Shifted.of(BoundedSums(0, unit, q_lower, q_upper, 0, 0), 1)


def moment_plans(found: list[Shifted], epsilon: float, delta: float, noise: str) -> list[Planned]:
    """The plans of the moments of k samples (module docstring, "The releases"), each sample's exact moments in
    ``found`` (on one grid): S with sensitivity w, Q with w²/4 per sample it moves, and with several samples the
    counts C (L1 2, L2 √2), ε split S : Q = 4 : 1 for one sample, S : C : Q = 4 : 2 : 1 for several; in the order
    S, Q(, C). The release's and its preview's (:func:`public_moments`)."""
    first = found[0]
    width = Fraction(scalar(first.shifted_sensitivity))  # w of the rounded bounds (the same grid for every sample)
    several = len(found) > 1
    pairs = 2 if several else 1
    shares = split_budget(epsilon, delta, SHARES if several else ONE_SAMPLE_SHARES)
    sums = Statistic(np.array([scalar(g.shifted.values) for g in found], dtype=object), first.shifted.unit)
    squares = Statistic(np.array([scalar(g.squares.values) for g in found], dtype=object), first.squares.unit)
    plans = [
        plan(sums, [width], *shares[0], noise=noise, changed=pairs, units="data units (Σ(x − x̄) of each sample)"),
        plan(
            squares,
            [width * width / 4] * pairs,
            *shares[-1],
            noise=noise,
            changed=pairs,
            units="squared data units (Σ(x − x̄)² of each sample)",
        ),
    ]
    if several:
        counts = np.array([g.count.values for g in found], dtype=np.int64)
        plans.append(plan(Statistic(counts, Fraction(1)), [1, 1], *shares[1], noise=noise, changed=2, units="records"))
    return plans


def moments_note(k: int, n: int | None) -> str:
    """What :func:`release_moments` releases, in words, for k samples of n records in all (public; None: a preview
    not given n, which no noise here depends on)."""
    size = "n public, not given" if n is None else f"n = {n}, public"
    if k > 1:
        return (
            f"the sum and the sum of squares about the bounds' midpoint of {k} samples and their sizes ({size}), "
            "epsilon split 4 : 1 : 2"
        )
    return f"the sum and the sum of squares about the bounds' midpoint ({size}), epsilon split 4 : 1"


class Moments:
    """The studentised statistics of :class:`Released`-like moments (module docstring), vectorised: ``sums``,
    ``counts`` and ``squares`` of shape (..., k)."""

    def __init__(self, r: Released):
        self.r = r
        self.var_sum = r.noise_sum.variance()
        self.var_count = r.noise_count.variance()

    def sizes(self, counts) -> np.ndarray:
        """c_j: the noisy counts at least 1 and scaled to sum to n (n is public; post-processing)."""
        c = np.maximum(counts, 1.0)
        return c * (self.r.n / np.sum(c, axis=-1, keepdims=True))

    def parts(self, sums, counts, squares, shifts):
        """(r_j, se_j², v_j) at the null's offsets ``shifts`` (broadcast to the samples)."""
        c = self.sizes(counts)
        offsets = sums / c
        shifts = np.clip(shifts, -self.r.half, self.r.half)
        cap = np.maximum(self.r.half**2 - shifts**2, 0.0)
        v = np.clip(squares / c - shifts**2, 0.0, cap)
        se2 = (c * v + self.var_sum + shifts**2 * self.var_count) / (c * c)
        return offsets, np.maximum(se2, 1e-300), v

    def pooled(self, sums) -> np.ndarray:
        """The common offset under the null of equal means: Σ S̃_j / n, within the bounds."""
        return np.clip(np.sum(sums, axis=-1, keepdims=True) / self.r.n, -self.r.half, self.r.half)

    def two_shifts(self, sums, counts, difference: float) -> np.ndarray:
        """The offsets (ρ_a, ρ_b) of two samples under μ_a − μ_b = ``difference`` with the pooled mean kept."""
        c = self.sizes(counts)
        pooled = self.pooled(sums)
        total = c.sum(axis=-1, keepdims=True)
        return pooled + difference * np.concatenate([c[..., 1:] / total, -c[..., :1] / total], axis=-1)

    def one(self, sums, counts, squares, shift: float):
        """T = (r − ρ)/se for one sample."""
        offsets, se2, _ = self.parts(sums, counts, squares, shift)
        return ((offsets - shift) / np.sqrt(se2))[..., 0]

    def two(self, sums, counts, squares, difference: float = 0.0):
        """Welch's T = (r_a − r_b − Δ)/√(se_a² + se_b²)."""
        shifts = self.two_shifts(sums, counts, difference)
        offsets, se2, _ = self.parts(sums, counts, squares, shifts)
        return (offsets[..., 0] - offsets[..., 1] - difference) / np.sqrt(se2[..., 0] + se2[..., 1])

    def several(self, sums, counts, squares):
        """Welch's W = Σ ω_j (r_j − r̄_ω)² (ω_j = 1/se_j²)."""
        offsets, se2, _ = self.parts(sums, counts, squares, self.pooled(sums))
        weights = 1.0 / se2
        centre = np.sum(weights * offsets, axis=-1, keepdims=True) / np.sum(weights, axis=-1, keepdims=True)
        return np.sum(weights * (offsets - centre) ** 2, axis=-1)

    def variances(self, shifts) -> list[np.ndarray]:
        """The world's variances: the real releases' v_j at ``shifts``, and v_j ∓ 2 standard deviations of their
        noise (within [0, the Bhatia–Davis bound])."""
        r = self.r
        _, _, v = self.parts(r.sums, r.counts, r.squares, shifts)
        sd = math.sqrt(r.noise_square.variance()) / self.sizes(r.counts)
        cap = np.maximum(r.half**2 - np.clip(shifts, -r.half, r.half) ** 2, 0.0)
        return [v, np.maximum(v - 2.0 * sd, 0.0), np.minimum(v + 2.0 * sd, cap)]


class World:
    """Simulated releases of the samples' moments (module docstring), with common random numbers drawn once:
    ``draws`` worlds of k samples of the given ``sizes``."""

    def __init__(self, r: Released, sizes: np.ndarray, draws: int, rng: np.random.Generator):
        self.r = r
        self.sizes = np.asarray(sizes, dtype=np.int64)
        k = self.sizes.size
        self.z = rng.standard_normal((draws, k))
        self.chi = np.stack([chi2_scale(max(int(m) - 1, 1), draws, rng) for m in self.sizes], axis=1)
        self.noise_sum = r.noise_sum.sample((draws, k), rng)
        self.noise_square = r.noise_square.sample((draws, k), rng)
        self.noise_count = r.noise_count.sample((draws, k), rng)

    def releases(self, shifts, variances) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(S*, C*, Q*) of shape (draws, k) for samples with mean offsets ``shifts`` and variances ``variances``."""
        r = self.r
        m = self.sizes.astype(np.float64)
        shifts = np.broadcast_to(np.asarray(shifts, dtype=np.float64).reshape(-1), m.shape)
        variances = np.broadcast_to(np.asarray(variances, dtype=np.float64).reshape(-1), m.shape)
        deviation = np.empty_like(self.z)
        for j in range(m.size):
            mean = r.midpoint + shifts[j]
            skewness = beta_skewness(mean, variances[j], r.lower, r.upper) / math.sqrt(m[j])
            deviation[:, j] = math.sqrt(variances[j] / m[j]) * skewed(self.z[:, j], skewness)
        spread = variances * self.chi * (m - 1.0) / m
        centre = shifts + deviation
        sums = r.noise_sum.rounded(m * centre) + self.noise_sum
        squares = r.noise_square.rounded(m * (spread + centre**2)) + self.noise_square
        counts = m + self.noise_count
        return sums, counts, squares


def max_pvalue(observed: float, statistic, world: World, shifts, variances_list, alternative: str) -> float:
    """The largest Monte Carlo p-value of ``observed`` over the world's variances (common random numbers)."""
    return max(pvalue(observed, statistic(*world.releases(shifts, v)), alternative) for v in variances_list)


def difference_interval(
    moments: Moments, world: World, level: float, estimate: float, scale: float
) -> tuple[float, float]:
    """The interval for μ_a − μ_b: the Δ where Welch's test of μ_a − μ_b = Δ is not rejected at 1 − level by either
    one-sided test at (1 − level)/2 (the tests inverted, with the world's common random numbers)."""
    r = moments.r
    beta = (1.0 - level) / 2.0

    def test(difference: float, alternative: str) -> float:
        shifts = moments.two_shifts(r.sums, r.counts, difference)
        observed = float(moments.two(r.sums, r.counts, r.squares, difference))
        return max_pvalue(
            observed,
            lambda s, c, q: moments.two(s, c, q, difference),
            world,
            shifts,
            moments.variances(shifts),
            alternative,
        )

    width = 2.0 * r.half
    step = max(scale, width * 1e-6)
    ends = []
    for alternative, limit in (("greater", -width), ("less", width)):
        inside = lambda d, a=alternative: test(d, a) > beta  # noqa: E731
        ends.append(crossing(inside, estimate, step, limit, tolerance=1e-3) if inside(estimate) else estimate)
    return float(ends[0]), float(ends[1])
