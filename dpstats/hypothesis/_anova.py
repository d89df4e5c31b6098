"""One-way analysis of variance, private (Welch's heteroscedastic form; :mod:`._moments` derives it)."""

from __future__ import annotations

from .._constraints import BOUNDS, NOISE, Data, Flag, privacy
from .._registry import declare
from ..inference._simulate import DRAWS
from ._moments import Moments, World, max_pvalue, release_moments
from ._result import RESAMPLES, HypothesisResult, balanced_sizes, check_total, read_samples

__all__ = ["f_oneway"]

METHOD = (
    "parametric bootstrap with the exact noise: Welch's heteroscedastic ANOVA statistic with the noise in the "
    "standard errors, variances about the pooled mean plugged in at their estimates and ± 2 noise standard "
    "deviations, sizes from the noisy counts (Welch 1951; Swanberg et al. 2019; Ferrando, Wang & Sheldon 2022)"
)


@declare(
    family="hypothesis",
    statistic="the sizes, sums and sums of squares of k samples of bounded values, for a one-way ANOVA",
    data={"samples": Data("samples")},
    parameters={**privacy(), "bounds": BOUNDS, "clip": Flag(), "n_resamples": RESAMPLES, **NOISE},
    relations=("row",),
    cases="dpstats.hypothesis._cases:f_oneway",
    preview="dpstats.hypothesis._previews:f_oneway_preview",
)
def f_oneway(
    samples,
    epsilon: float,
    delta: float = 0.0,
    *,
    bounds,
    clip: bool = False,
    n_resamples: int = DRAWS,
    rng=None,
    accountant=None,
    noise: str = "exact",
) -> HypothesisResult:
    """Private one-way ANOVA: do k populations have the same mean? (scipy.stats.f_oneway)

    ``samples`` is one sequence of the k samples (scipy takes them as ``*samples``: here ε must follow the data as
    in every dpstats release, so they come as one argument). Neighbours replace one record, its value and the
    sample it is in (n public, the sizes released with noise). Releases each sample's size, sum and sum of squares
    about the bounds' midpoint (ε split 2 : 4 : 1) and tests Welch's heteroscedastic ANOVA statistic, the noise in
    its standard errors, against its null distribution simulated by a parametric bootstrap with the exact noise
    (:mod:`dpstats.hypothesis._moments`). The statistic is reported as an F (W/(k − 1)); it equals scipy's F
    asymptotically when the variances are equal and there is no noise.

    Parameters
    ----------
    samples : sequence of array_like or pandas Series
        At least two samples, every value inside ``bounds``; a sample may be empty (its size is private), n >= 2 in all.
    epsilon, delta : float
        The budget of the releases.
    bounds : tuple (lower, upper)
        Public bounds on every value.
    clip : bool, default False
        Clip values outside ``bounds`` (the test is then about the clipped variable).
    n_resamples : int, default 2000
        B, the number of simulated draws of the null.
    rng, accountant, noise
        As in :func:`dpstats.mean`.

    Returns
    -------
    HypothesisResult
        ``statistic``: F = W/(k − 1); ``released``: the noisy sizes, sums and sums of squares, the midpoint and n.

    References
    ----------
    B. L. Welch, Biometrika 38, 1951. M. Swanberg, I. Globus-Harris, I. Griffith, A. Ritz, A. Groce & A. Bray,
    "Improved differentially private analysis of variance", PoPETs 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats import hypothesis
    >>> rng = np.random.default_rng(0)
    >>> groups = [rng.uniform(0.0, 0.8, 300), rng.uniform(0.1, 0.9, 300), rng.uniform(0.2, 1.0, 300)]
    >>> result = hypothesis.f_oneway(groups, 1.0, bounds=(0, 1), rng=0)
    >>> bool(result.pvalue < 0.01)
    True
    """
    found = read_samples(samples, minimum=0)  # a sample's size is private
    check_total(found, per_sample=2)  # the null simulates at least 2 records per sample
    names = [f"samples[{j}]" for j in range(len(found))]
    r = release_moments(
        "f_oneway", found, names, bounds, clip, epsilon, delta, rng=rng, accountant=accountant, noise=noise
    )
    moments = Moments(r)
    observed = float(moments.several(r.sums, r.counts, r.squares))
    world = World(r, balanced_sizes(r.counts, r.n, r.noise_count, minimum=2), n_resamples, rng)
    shifts = moments.pooled(r.sums)
    pvalue = max_pvalue(observed, moments.several, world, shifts, moments.variances(shifts), "greater")
    return HypothesisResult(
        statistic=observed / (len(found) - 1),
        pvalue=pvalue,
        test="f_oneway",
        alternative=None,
        null="the populations of the samples have the same mean" + (" (clipped to the bounds)" if clip else ""),
        method=METHOD,
        released=r.public(),
        n_resamples=n_resamples,
    )
