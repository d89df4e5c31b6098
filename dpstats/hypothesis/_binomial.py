"""The binomial test of a proportion, private: a noisy count and the exact convolution of its noise with the
binomial null.

The release: the number of ones K of a 0/1 sample of n records (n public), with sensitivity 1 (replacing one record
changes K by at most 1), released as every dpstats count is — rounded to a public grid and given exact discrete
Laplace noise (δ = 0) or discrete Gaussian noise (δ > 0), :mod:`dpstats.noise.release` — so the release is
T = K + η with η's distribution known exactly (:class:`~dpstats.inference._simulate.NoiseModel`).

The p-value: under the null K ~ Binomial(n, p), so the null distribution of T is the exact convolution

    P(T' >= t) = Σ_k C(n, k) p^k (1 − p)^{n−k} · P(η >= t − k),

(and likewise P(T' <= t)), computed over the binomial's support within 12 standard deviations of n·p; the mass
outside that window, a bound on the rounding of the binomial's log-probabilities and, for discrete Gaussian noise,
the error of its distribution function are added, so the p-value is never below the exact one. ``"greater"`` is
P(T' >= t), ``"less"`` P(T' <= t), ``"two-sided"`` twice the smaller (at most 1). Each is a valid p-value for the
private statistic: P(p <= u) <= u under the null, for the exact noise, at every n. Nothing is simulated.

This is the test of Awan & Slavković (NeurIPS 2018) with dpstats' count in place of their Tulap noise: they show
that the uniformly most powerful ε-DP test of a binomial proportion is a test on K + Tulap noise (Tulap: a discrete
Laplace plus a uniform; their Theorem 3.3 and Algorithm 1), with exact p-values from the convolution with the
binomial. A continuous Laplace of scale 1/ε — which dpstats' grid noise is, up to a grid of 2^-12 — has nearly the
same variance as Tulap (2/ε² against 1/12 + 2e^{−ε}/(1 − e^{−ε})²: within 5 % for ε <= 4), and the test on it has
nearly the same power (measured against OpenDP's Tulap test in ``benchmarks/bench_hypothesis.py``); the release
stays the one release path every dpstats count takes.

The confidence interval for p inverts the one-sided tests (Clopper & Pearson 1934, with the noise): its ends are the
p at which P_p(T' >= t) and P_p(T' <= t) equal (1 − level)/2.

References
----------
J. Awan & A. Slavković, "Differentially private uniformly most powerful tests for binomial data", NeurIPS 2018.
C. J. Clopper & E. S. Pearson, "The use of confidence or fiducial limits illustrated in the case of the binomial",
Biometrika 26, 1934.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._constraints import NOISE, UNITS, Data, Real, privacy
from .._registry import declare
from .._release import Planned, plan
from ..exceptions import DataValidationError
from ..inference._simulate import NoiseModel
from ..noise.release import Statistic
from ._result import (
    ALTERNATIVE,
    LEVEL,
    HypothesisResult,
    charged,
    keep_one_per_unit,
    noise_of,
    one_record_per_unit,
    read_sample,
)

__all__ = ["binomtest", "count_plan"]

METHOD = (
    "exact: the binomial null convolved with the count's exact noise (Awan & Slavković 2018, with dpstats' discrete "
    "Laplace or Gaussian count); interval by inverting the one-sided tests (Clopper & Pearson 1934)"
)
#: Binomial standard deviations kept on each side of n·p (the mass beyond, below 10^-32, is added to the p-value).
_WINDOW = 12.0


@declare(
    family="hypothesis",
    statistic="the number of ones of a 0/1 sample, for an exact binomial test",
    data={"x": Data("values")},
    parameters={
        **privacy(),
        "p": Real(0.0, 1.0),
        "alternative": ALTERNATIVE,
        "confidence_level": LEVEL,
        **UNITS,
        **NOISE,
    },
    relations=("row", "unit"),
    cases="dpstats.hypothesis._cases:binomtest",
    preview="dpstats.hypothesis._previews:binomtest_preview",
)
def binomtest(
    x,
    epsilon: float,
    delta: float = 0.0,
    *,
    p: float = 0.5,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant=None,
    noise: str = "exact",
) -> HypothesisResult:
    """Private exact binomial test: is the proportion of ones in the population ``p``? (scipy.stats.binomtest)

    Releases the number of ones K of ``x`` with noise (sensitivity 1: replacing one record moves K by at most 1;
    with a privacy unit, one record per unit is kept, so replacing a unit moves K by at most 1 too) and computes the
    p-value of the released count T = K + η from the exact convolution of η's distribution with the Binomial(n, p)
    null (module docstring): valid at every n, nothing simulated.

    Parameters
    ----------
    x : array_like or pandas Series of 0/1 (or bool)
        The sample: one 0/1 value per record (n = its length, public). Any other value is refused (before anything
        is charged), as is a sample of size 0.
    epsilon, delta : float
        The budget of the count (δ = 0: discrete Laplace noise; δ > 0: discrete Gaussian).
    p : float, default 0.5
        The proportion under the null, 0 < p < 1.
    alternative : {"two-sided", "less", "greater"}
        As scipy's: "less" tests whether the proportion is below ``p``.
    confidence_level : float or None, default 0.95
        The level of ``ci``, the interval for the population proportion (None: no interval).
    privacy_unit, max_rows
        As in :func:`dpstats.mean`, with ``max_rows=1``: one record per unit, chosen at random (n is then N, the
        number of units).
    rng, accountant, noise
        As in :func:`dpstats.mean`.

    Returns
    -------
    HypothesisResult
        ``statistic``: the noisy proportion T/n (scipy's k/n); ``pvalue``: exact; ``ci``: the interval for the
        proportion; ``released``: the noisy count and n.

    References
    ----------
    J. Awan & A. Slavković, NeurIPS 2018. C. J. Clopper & E. S. Pearson, Biometrika 1934.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats import hypothesis
    >>> x = np.r_[np.ones(70), np.zeros(30)]
    >>> result = hypothesis.binomtest(x, 1.0, p=0.5, rng=0)
    >>> bool(result.pvalue < 0.01), result.test
    (True, 'binomtest')
    """
    x, units = one_record_per_unit(x, privacy_unit, max_rows, "x")
    values = read_sample(x, "x")
    _check_binary(values)
    unit_note, relation = "", "row"
    if units is not None:
        (values,), _, unit_note = keep_one_per_unit((values,), units, rng)
        relation = "unit"
    n = int(values.shape[0])
    ones = int(np.count_nonzero(values))
    planned = count_plan(ones, epsilon, delta, noise)
    note = (
        f"{unit_note}binomtest: the number of ones of a 0/1 sample of n = {n} (public), the whole budget; the "
        "p-value is the exact convolution of its noise with the Binomial(n, p) null"
    )
    (count,) = charged("binomtest", [planned], rng=rng, accountant=accountant, note=note, relation=relation)
    model = noise_of(planned)
    upper, lower = tails(count, n, p, model)
    pvalue = {"greater": upper, "less": lower, "two-sided": 2.0 * min(upper, lower)}[alternative]
    return HypothesisResult(
        statistic=count / n,
        pvalue=min(1.0, pvalue),
        test="binomtest",
        alternative=alternative,
        null=f"the population proportion of ones is {p:g}",
        method=METHOD,
        released={"count": count, "n": n},
        ci=None if confidence_level is None else proportion_interval(count, n, model, confidence_level),
        confidence_level=confidence_level,
    )


def count_plan(ones: int, epsilon: float, delta: float, noise: str) -> Planned:
    """The plan of the number of ones: sensitivity 1, the whole budget (the release's and its preview's)."""
    return plan(Statistic(ones, Fraction(1)), [1], epsilon, delta, noise=noise, units="records")


def _check_binary(values: np.ndarray) -> None:
    """Every value 0 or 1 (refused before anything is charged, naming ``x``)."""
    bad = ~((values == 0.0) | (values == 1.0))
    if bad.any():
        raise DataValidationError(
            f"x must be a 0/1 sample (one 0 or 1 per record, or booleans); {int(bad.sum())} value(s) are neither "
            "(NaN included)"
        )


def tails(count: float, n: int, p: float, model: NoiseModel, which: str = "both") -> tuple[float, float]:
    """Upper bounds on (P(T' >= count), P(T' <= count)) for T' = Binomial(n, p) + the noise (module docstring);
    ``which`` = "upper" or "lower" computes only that one (the other is returned as nan)."""
    from scipy.special import gammaln
    from scipy.stats import binom

    sd = math.sqrt(n * p * (1.0 - p))
    first = max(0, math.floor(n * p - _WINDOW * sd) - 2)
    last = min(n, math.ceil(n * p + _WINDOW * sd) + 2)
    k = np.arange(first, last + 1, dtype=np.float64)
    log_pmf = gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0) + k * math.log(p) + (n - k) * math.log1p(-p)
    pmf = np.exp(log_pmf)
    # the mass outside the window, the noise's distribution function's error, and the rounding of the log-pmf
    # (each term of size at most L = log n! + n(|log p| + |log(1 − p)|), computed with a relative error of 2^-52)
    rounding = 8.0 * 2.0**-52 * (float(gammaln(n + 1.0)) + n * (abs(math.log(p)) + abs(math.log1p(-p)))) + 1e-15
    lost = float(binom.cdf(first - 1, n, p) + binom.sf(last, n, p)) + model.cdf_error + rounding
    upper = float(pmf @ model.sf(count - k)) + lost if which in ("both", "upper") else math.nan
    lower = float(pmf @ model.cdf(count - k)) + lost if which in ("both", "lower") else math.nan
    return min(upper, 1.0), min(lower, 1.0)


def proportion_interval(count: float, n: int, model: NoiseModel, level: float) -> tuple[float, float]:
    """The interval for the proportion: the p where the one-sided p-values equal (1 − level)/2 (module docstring)."""
    beta = (1.0 - level) / 2.0
    eps = 1e-12

    def above(q: float) -> float:  # increasing in q
        return tails(count, n, q, model, "upper")[0] - beta

    def below(q: float) -> float:  # decreasing in q
        return tails(count, n, q, model, "lower")[1] - beta

    estimate = min(max(count / n, eps), 1.0 - eps)
    spread = math.sqrt(estimate * (1.0 - estimate) / n + model.variance() / n**2) + 1.0 / n
    low = _end(above, eps, 1.0 - eps, 0.0, 1.0, (estimate - 12.0 * spread, estimate))
    high = _end(below, 1.0 - eps, eps, 1.0, 0.0, (estimate, estimate + 12.0 * spread))
    return float(min(low, high)), float(max(low, high))


def _end(f, start: float, stop: float, at_start: float, at_stop: float, near: tuple[float, float]) -> float:
    """The root of the monotone ``f`` between ``start`` and ``stop`` (``at_start`` if f(start) >= 0 already,
    ``at_stop`` if f(stop) < 0 still), bracketed first within ``near`` (a normal approximation's reach)."""
    from scipy.optimize import brentq

    a, b = (max(near[0], min(start, stop)), min(near[1], max(start, stop)))
    if a < b and f(a) * f(b) < 0.0:
        return brentq(f, a, b, xtol=1e-9, rtol=1e-7)
    if f(start) >= 0.0:
        return at_start
    if f(stop) < 0.0:
        return at_stop
    return brentq(f, min(start, stop), max(start, stop), xtol=1e-9, rtol=1e-7)
