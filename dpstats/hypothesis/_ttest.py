"""t-tests, private: one sample against a mean, two samples against each other (:mod:`._moments` derives them)."""

from __future__ import annotations

import math

import numpy as np

from .._constraints import BOUNDS, NOISE, UNITS, Data, Flag, Real, privacy
from .._registry import declare
from ..exceptions import DataValidationError, ParameterError
from ..inference._mean import MeanReleases, mean_interval
from ..inference._simulate import DRAWS, NoiseModel
from ._moments import Moments, World, difference_interval, max_pvalue, release_moments, scalar_bounds
from ._result import (
    ALTERNATIVE,
    LEVEL,
    RESAMPLES,
    HypothesisResult,
    balanced_sizes,
    check_total,
    keep_one_per_unit,
    one_record_per_unit,
    read_sample,
)

__all__ = ["check_popmean", "ttest_1samp", "ttest_ind"]

ONE_METHOD = (
    "parametric bootstrap with the exact noise: Fieller's studentised ratio with the variance about the null mean "
    "(Wilson's score test for 0/1 data), variance plugged in at its estimate and ± 2 noise standard deviations "
    "(Ferrando, Wang & Sheldon 2022; Berger & Boos 1994); interval: dpstats.mean's (ci=)"
)
TWO_METHOD = (
    "parametric bootstrap with the exact noise: Welch's statistic with the noise in the standard errors, variances "
    "about the pooled mean plugged in at their estimates and ± 2 noise standard deviations, sizes from the noisy "
    "counts (Welch 1947; Ferrando, Wang & Sheldon 2022); interval: the test inverted"
)


@declare(
    family="hypothesis",
    statistic="the sum and sum of squares of bounded values, for a one-sample t-test",
    data={"a": Data("values")},
    own=("popmean",),
    parameters={
        **privacy(),
        "popmean": Real(),
        "bounds": BOUNDS,
        "alternative": ALTERNATIVE,
        "clip": Flag(),
        "confidence_level": LEVEL,
        "n_resamples": RESAMPLES,
        **UNITS,
        **NOISE,
    },
    relations=("row", "unit"),
    cases="dpstats.hypothesis._cases:ttest_1samp",
    preview="dpstats.hypothesis._previews:ttest_1samp_preview",
)
def ttest_1samp(
    a,
    popmean: float,
    epsilon: float,
    delta: float = 0.0,
    *,
    bounds,
    alternative: str = "two-sided",
    clip: bool = False,
    confidence_level: float = 0.95,
    n_resamples: int = DRAWS,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant=None,
    noise: str = "exact",
) -> HypothesisResult:
    """Private one-sample t-test: is the population mean ``popmean``? (scipy.stats.ttest_1samp)

    Releases the sample's sum and sum of squares about the bounds' midpoint (sensitivities w and w²/4, w the
    bounds' width; ε split 4 : 1, as :func:`dpstats.mean` with ``ci``) and tests the studentised mean — its
    standard error from the variance about ``popmean`` and the noise — against its null distribution, simulated
    by a parametric bootstrap with the exact noise (:mod:`dpstats.hypothesis._moments` derives it all).

    Parameters
    ----------
    a : array_like or pandas Series
        The sample (n >= 2 records, n public), every value inside ``bounds``.
    popmean : float
        The population mean under the null, inside ``bounds``.
    epsilon, delta : float
        The budget of the two releases.
    bounds : tuple (lower, upper)
        Public bounds on every value, chosen without looking at the data.
    alternative : {"two-sided", "less", "greater"}
        As scipy's: "less" tests whether the mean is below ``popmean``.
    clip : bool, default False
        Clip values outside ``bounds`` instead of refusing them: the test is then about the mean of the clipped
        variable.
    confidence_level : float or None, default 0.95
        The level of ``ci``, the interval for the population mean (None: no interval): :func:`dpstats.mean`'s
        interval on the same releases (:mod:`dpstats.inference._mean`; with its own simulation draws, so near the
        boundary it can disagree with the p-value by the Monte Carlo error).
    n_resamples : int, default 2000
        B, the number of simulated draws of the null.
    privacy_unit, max_rows
        As in :func:`dpstats.mean`, with ``max_rows=1``.
    rng, accountant, noise
        As in :func:`dpstats.mean`.

    Returns
    -------
    HypothesisResult
        ``statistic``: T (a t statistic with the noise in its standard error); ``ci``: the interval for the mean;
        ``released``: the noisy sums, the midpoint, n and the mean's estimate.

    References
    ----------
    E. C. Fieller, JRSS B 1954. C. Ferrando, S. Wang & D. Sheldon, AISTATS 2022. R. L. Berger & D. D. Boos, JASA
    1994. S. Couch, Z. Kazan, K. Shi, A. Bray & A. Groce, CCS 2019 (a private one-sample t-test with a simulated
    null).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats import hypothesis
    >>> heights = np.random.default_rng(0).normal(172, 8, 500).clip(140, 210)
    >>> result = hypothesis.ttest_1samp(heights, 170.0, 1.0, bounds=(140, 210), rng=0)
    >>> bool(result.pvalue < 0.05), bool(result.ci[0] < 172 < result.ci[1])
    (True, True)
    """
    a, units = one_record_per_unit(a, privacy_unit, max_rows, "a")
    values = read_sample(a, "a", minimum=2 if units is None else 1)  # with units the rows are private, N is not
    check_popmean(popmean, bounds)
    unit_note, relation = "", "row"
    if units is not None:
        (values,), count, unit_note = keep_one_per_unit((values,), units, rng)
        relation = "unit"
        if count < 2:
            raise DataValidationError(f"a t-test needs at least 2 units (N is public); got N = {count}")
    r = release_moments(
        "ttest_1samp",
        [values],
        ["a"],
        bounds,
        clip,
        epsilon,
        delta,
        rng=rng,
        accountant=accountant,
        noise=noise,
        note=unit_note,
        relation=relation,
    )
    moments = Moments(r)
    shift = float(popmean) - r.midpoint
    observed = float(moments.one(r.sums, r.counts, r.squares, shift))
    world = World(r, np.array([r.n]), n_resamples, rng)
    pvalue = max_pvalue(
        observed,
        lambda s, c, q: moments.one(s, c, q, shift),
        world,
        shift,
        moments.variances(shift),
        alternative,
    )
    ci = None if confidence_level is None else _mean_interval(r, confidence_level, rng, n_resamples)
    mean = r.midpoint + float(np.clip(r.sums[0] / r.n, -r.half, r.half))
    return HypothesisResult(
        statistic=observed,
        pvalue=pvalue,
        test="ttest_1samp",
        alternative=alternative,
        null=f"the population mean of a{' (clipped to the bounds)' if clip else ''} is {float(popmean):g}",
        method=ONE_METHOD,
        released={**r.public(), "mean": mean},
        ci=ci,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
    )


def _mean_interval(r, level: float, rng, draws: int) -> tuple[float, float]:
    """dpstats.mean's interval (:func:`dpstats.inference._mean.mean_interval`) on the one sample's releases."""
    releases = MeanReleases(
        total=float(r.sums[0]),
        count=float(r.n),
        noise_total=r.noise_sum,
        noise_count=NoiseModel.none(),
        lower=r.lower,
        upper=r.upper,
        squares=float(r.squares[0]),
        noise_squares=r.noise_square,
    )
    low, high, _ = mean_interval(releases, level, rng, draws)
    return float(low), float(high)


@declare(
    family="hypothesis",
    statistic="the sizes, sums and sums of squares of two samples of bounded values, for Welch's t-test",
    data={"a": Data("sample"), "b": Data("sample")},
    parameters={
        **privacy(),
        "bounds": BOUNDS,
        "alternative": ALTERNATIVE,
        "clip": Flag(),
        "confidence_level": LEVEL,
        "n_resamples": RESAMPLES,
        **NOISE,
    },
    relations=("row",),
    cases="dpstats.hypothesis._cases:ttest_ind",
    preview="dpstats.hypothesis._previews:ttest_ind_preview",
)
def ttest_ind(
    a,
    b,
    epsilon: float,
    delta: float = 0.0,
    *,
    bounds,
    alternative: str = "two-sided",
    clip: bool = False,
    confidence_level: float = 0.95,
    n_resamples: int = DRAWS,
    rng=None,
    accountant=None,
    noise: str = "exact",
) -> HypothesisResult:
    """Private two-sample t-test (Welch's): do the two populations have the same mean? (scipy.stats.ttest_ind,
    ``equal_var=False``)

    Neighbours replace one record, its value and the sample it is in (n = len(a) + len(b) is public; the sizes of
    the samples are not, and are released with noise). Releases each sample's size, sum and sum of squares about
    the bounds' midpoint (ε split 2 : 4 : 1; sensitivities 2, w and w²/2 in L1) and tests Welch's statistic — the
    noise in its standard errors — against its null distribution, simulated by a parametric bootstrap with the
    exact noise (:mod:`dpstats.hypothesis._moments`).

    Parameters
    ----------
    a, b : array_like or pandas Series
        The two samples, every value inside ``bounds`` (one may be empty: its size is private; n >= 2 in all).
    epsilon, delta : float
        The budget of the releases.
    bounds : tuple (lower, upper)
        Public bounds on every value of both samples.
    alternative : {"two-sided", "less", "greater"}
        As scipy's: "less" tests whether the mean of ``a``'s population is below ``b``'s.
    clip : bool, default False
        Clip values outside ``bounds`` (the test is then about the clipped variable).
    confidence_level : float or None, default 0.95
        The level of ``ci``, the interval for the difference of the means (a − b), by inverting the test (None: no
        interval).
    n_resamples : int, default 2000
        B, the number of simulated draws of the null.
    rng, accountant, noise
        As in :func:`dpstats.mean`.

    Returns
    -------
    HypothesisResult
        ``statistic``: Welch's T; ``ci``: the interval for μ_a − μ_b; ``released``: the noisy sizes, sums and sums
        of squares, the midpoint, n and the estimated difference.

    References
    ----------
    B. L. Welch, Biometrika 1947. C. Ferrando, S. Wang & D. Sheldon, AISTATS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats import hypothesis
    >>> rng = np.random.default_rng(0)
    >>> treated, control = rng.uniform(0.2, 1.0, 400), rng.uniform(0.0, 0.8, 400)
    >>> result = hypothesis.ttest_ind(treated, control, 1.0, bounds=(0, 1), rng=0)
    >>> bool(result.pvalue < 0.01)
    True
    """
    samples = [read_sample(a, "a", minimum=0), read_sample(b, "b", minimum=0)]  # a sample's size is private
    check_total(samples, per_sample=2)  # the null simulates at least 2 records per sample
    r = release_moments(
        "ttest_ind", samples, ["a", "b"], bounds, clip, epsilon, delta, rng=rng, accountant=accountant, noise=noise
    )
    moments = Moments(r)
    observed = float(moments.two(r.sums, r.counts, r.squares, 0.0))
    world = World(r, balanced_sizes(r.counts, r.n, r.noise_count, minimum=2), n_resamples, rng)
    shifts = moments.two_shifts(r.sums, r.counts, 0.0)
    pvalue = max_pvalue(
        observed, lambda s, c, q: moments.two(s, c, q, 0.0), world, shifts, moments.variances(shifts), alternative
    )
    offsets, se2, _ = moments.parts(r.sums, r.counts, r.squares, shifts)
    estimate = float(offsets[0] - offsets[1])
    ci = None
    if confidence_level is not None:
        ci = difference_interval(moments, world, confidence_level, estimate, math.sqrt(float(se2.sum())))
    return HypothesisResult(
        statistic=observed,
        pvalue=pvalue,
        test="ttest_ind",
        alternative=alternative,
        null="the populations of a and b have the same mean" + (" (clipped to the bounds)" if clip else ""),
        method=TWO_METHOD,
        released={**r.public(), "difference": estimate},
        ci=ci,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
    )


def check_popmean(popmean: float, bounds) -> None:
    """``popmean`` inside the bounds (refused naming it: the mean of values inside them cannot lie outside); the
    release's check and its preview's."""
    lower, upper = scalar_bounds(bounds)
    if not float(lower) <= popmean <= float(upper):
        raise ParameterError(
            f"popmean must lie inside the bounds [{float(lower):g}, {float(upper):g}] (the mean of values inside "
            f"them cannot lie outside); got {popmean!r}"
        )
