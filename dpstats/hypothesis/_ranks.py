"""Rank tests, private: Mann–Whitney's and Kruskal–Wallis' — distribution-free statistics of small sensitivity, their
null distributions simulated exactly from random permutations, the exact noise added.

Neighbours replace one record: its value and the sample it belongs to (the total n is public; the sizes of the
samples are not). The ranks are the pooled sample's, ties given their average rank (midranks). With c = (n + 1)/2,
the centred rank sum of sample j is

    W_j = Σ_{i in j} (r_i − c) = ½ Σ_{i in j} Σ_{l not in j} sign(v_i − v_l),

a sum over the pairs of records in and out of j, each contributing ±½ (0 for a tie). Replacing record i changes
only the pairs that hold it: before, i is in n − 1 pairs with the others, in at most max(n − n_j, n_j) of them for
one sample; after, likewise. Hence (``tests/test_hypothesis.py`` and the sensitivity checker's worst cases check it):

* **Mann–Whitney** (two samples): W_x = U_x − n_x·n_y/2 (U_x scipy's statistic of x) moves by at most n − 1 (i
  stays in x and crosses every y: n_y pairs change by 1; i moves from x to y: at most n_y/2 + (n_x − 1)/2).
* **Kruskal–Wallis** (k samples): K = Σ_j |W_j|, the statistic of Couch, Kazan, Shi, Bray & Groce (CCS 2019, their
  H_abs = 4(n − 1)/n² · K, which replaces Kruskal–Wallis' squares by absolute values so that its sensitivity stays
  bounded), moves by at most Σ_j |ΔW_j| <= 2(n − 1): each W_j not holding i before or after changes by at most n_j,
  the one i leaves and the one it joins by at most (n − 1)/2 each, and Σ_j n_j over the others is <= n − 2.

The releases: W_x (or K) with the test's share of ε (19/20) and sensitivity n − 1 (2(n − 1)), and the sizes of the
samples (1/20: n_x, sensitivity 1; for k samples the k counts, L1 2, L2 √2), in one charge.

The null: under H0 (the samples from one continuous distribution) the ranks are a uniformly random permutation of
1..n given the sizes, whatever the distribution — W_x and K are distribution-free. Their null distributions are
simulated: B random permutations split by the sizes (exact, for n <= 2000), or, for larger n, the W_j drawn from
their exact multivariate normal limit (mean 0, Cov(W_j, W_l) = (n + 1)/12 · (n·n_j·δ_jl − n_j·n_l); the rank sums of
a random subset have lighter tails than the normal, so this reference errs on the conservative side), then rounded
to the release's grid and given the exact noise. The sizes are the nuisance parameter: W_j's spread grows as the
sizes approach balance (Var W_j = n_j(n − n_j)(n + 1)/12). A plain plug-in of noisy sizes is not enough — a size
pushed towards 0 by the noise shrinks the reference and inflates the type-I error (measured: 0.09 at α = 0.05 for n
= 1000, ε = 0.1) — so the reference takes, among the sizes within three noise standard deviations of the released
ones, those closest to equal (:func:`~dpstats.hypothesis._result.balanced_sizes`): the plug-in where the sizes are
precise, a conservative reference where they are not. Couch et al. simulate their reference with equal sizes, which
is conservative in the same way but loses power for unequal samples whatever n·ε; releasing the sizes costs a
twentieth of ε (a noise 5 % larger on the statistic). With ties the midranks' statistic has a smaller spread than
the untied permutations simulated, so the test stays conservative.

References
----------
S. Couch, Z. Kazan, K. Shi, A. Bray & A. Groce, "Differentially private nonparametric hypothesis testing", ACM CCS
2019 (the private Kruskal–Wallis statistic H_abs and the private Mann–Whitney test). H. B. Mann & D. R. Whitney,
Ann. Math. Statist. 18, 1947. W. H. Kruskal & W. A. Wallis, JASA 47, 1952.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._constraints import NOISE, Data, privacy
from .._registry import declare
from .._release import Planned, plan, split_budget
from ..exceptions import DataValidationError
from ..inference._simulate import DRAWS, pvalue
from ..noise.release import Statistic
from ._result import (
    ALTERNATIVE,
    RESAMPLES,
    HypothesisResult,
    balanced_sizes,
    charged,
    check_total,
    noise_of,
    read_sample,
    read_samples,
)

__all__ = ["kruskal", "kruskal_plans", "mannwhitneyu", "mannwhitneyu_plans", "rank_sums"]

#: The budget's shares: the rank statistic, the sizes (the sizes only place the null's reference).
SHARES = (19, 1)
#: Up to this n the permutations are drawn exactly; beyond, the rank sums' normal limit.
EXACT = 2000

MW_METHOD = (
    "Monte Carlo: random permutations of the ranks at the sizes released with noise, plus the exact noise "
    "(the distribution-free null; Couch, Kazan, Shi, Bray & Groce 2019)"
)
KW_METHOD = (
    "Monte Carlo: Couch et al.'s absolute-value Kruskal-Wallis statistic over random permutations of the ranks at "
    "the sizes released with noise, plus the exact noise (Couch, Kazan, Shi, Bray & Groce 2019)"
)


@declare(
    family="hypothesis",
    statistic="the centred rank sum of one of two samples and its size, for a Mann-Whitney test",
    data={"x": Data("sample"), "y": Data("sample")},
    parameters={**privacy(), "alternative": ALTERNATIVE, "n_resamples": RESAMPLES, **NOISE},
    relations=("row",),
    cases="dpstats.hypothesis._cases:mannwhitneyu",
    preview="dpstats.hypothesis._previews:mannwhitneyu_preview",
)
def mannwhitneyu(
    x,
    y,
    epsilon: float,
    delta: float = 0.0,
    *,
    alternative: str = "two-sided",
    n_resamples: int = DRAWS,
    rng=None,
    accountant=None,
    noise: str = "exact",
) -> HypothesisResult:
    """Private Mann–Whitney U test: do x and y come from the same distribution? (scipy.stats.mannwhitneyu)

    Releases the centred rank sum W = U_x − n_x·n_y/2 of ``x`` in the pooled sample (sensitivity n − 1) and the
    size of ``x`` (sensitivity 1; ε split 19 : 1), and computes the p-value from the distribution-free permutation
    null at the noisy size, the exact noise added (module docstring). No bounds are needed: ranks are bounded.

    Parameters
    ----------
    x, y : array_like or pandas Series
        The two samples (finite numbers; one may be empty: its size is private). n = len(x) + len(y) >= 2 is public.
    epsilon, delta : float
        The budget of the releases.
    alternative : {"two-sided", "less", "greater"}
        As scipy's: "greater" tests whether x's distribution is stochastically greater than y's.
    n_resamples : int, default 2000
        B, the number of simulated permutations.
    rng, accountant, noise
        As in :func:`dpstats.mean`.

    Returns
    -------
    HypothesisResult
        ``statistic``: the private U of x (W̃ + ñ_x(n − ñ_x)/2); ``released``: W̃, the noisy size of x and n.

    References
    ----------
    S. Couch, Z. Kazan, K. Shi, A. Bray & A. Groce, ACM CCS 2019. H. B. Mann & D. R. Whitney, 1947.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats import hypothesis
    >>> rng = np.random.default_rng(0)
    >>> result = hypothesis.mannwhitneyu(rng.normal(1, 1, 300), rng.normal(0, 1, 300), 1.0, rng=0)
    >>> bool(result.pvalue < 0.01)
    True
    """
    samples = [_finite(read_sample(x, "x", minimum=0), "x"), _finite(read_sample(y, "y", minimum=0), "y")]
    n = check_total(samples)  # a sample's size is private
    twice = _twice_rank_sums(samples)
    plans = mannwhitneyu_plans(int(twice[0]), samples[0].size, n, epsilon, delta, noise)
    note = f"mannwhitneyu: {mannwhitneyu_note(n)}"
    w, size = charged("mannwhitneyu", plans, rng=rng, accountant=accountant, note=note, relation="row")
    sizes = balanced_sizes([size, n - size], n, noise_of(plans[1]))
    null = noise_of(plans[0]).release(rank_sums(n, sizes, n_resamples, rng)[:, 0], rng)
    return HypothesisResult(
        statistic=float(w + size * (n - size) / 2.0),
        pvalue=pvalue(w, null, alternative),
        test="mannwhitneyu",
        alternative=alternative,
        null="x and y come from the same (continuous) distribution",
        method=MW_METHOD,
        released={"W (centred rank sum of x)": w, "size of x": size, "n": n},
        n_resamples=n_resamples,
    )


@declare(
    family="hypothesis",
    statistic="the sum of the k samples' absolute centred rank sums and their sizes, for a Kruskal-Wallis test",
    data={"samples": Data("samples")},
    parameters={**privacy(), "n_resamples": RESAMPLES, **NOISE},
    relations=("row",),
    cases="dpstats.hypothesis._cases:kruskal",
    preview="dpstats.hypothesis._previews:kruskal_preview",
)
def kruskal(
    samples,
    epsilon: float,
    delta: float = 0.0,
    *,
    n_resamples: int = DRAWS,
    rng=None,
    accountant=None,
    noise: str = "exact",
) -> HypothesisResult:
    """Private Kruskal–Wallis H test: do k samples come from the same distribution? (scipy.stats.kruskal)

    ``samples`` is one sequence of the k samples (scipy takes ``*samples``; here ε follows the data, as in every
    dpstats release). Releases Couch et al.'s statistic K = Σ_j |W_j| (W_j the centred rank sum of sample j;
    sensitivity 2(n − 1)) and the sizes (L1 sensitivity 2; ε split 19 : 1), and computes the p-value from the
    distribution-free permutation null at the noisy sizes, the exact noise added (module docstring).

    Parameters
    ----------
    samples : sequence of array_like or pandas Series
        At least two samples of finite numbers (a sample may be empty: its size is private); n >= 2, the total,
        is public.
    epsilon, delta : float
        The budget of the releases.
    n_resamples : int, default 2000
        B, the number of simulated permutations.
    rng, accountant, noise
        As in :func:`dpstats.mean`.

    Returns
    -------
    HypothesisResult
        ``statistic``: Couch et al.'s H_abs = 4(n − 1)/n² · K̃; ``released``: K̃, the noisy sizes and n.

    References
    ----------
    S. Couch, Z. Kazan, K. Shi, A. Bray & A. Groce, ACM CCS 2019. W. H. Kruskal & W. A. Wallis, JASA 1952.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats import hypothesis
    >>> rng = np.random.default_rng(0)
    >>> result = hypothesis.kruskal([rng.normal(m, 1, 200) for m in (-1, 0, 1)], 1.0, rng=0)
    >>> bool(result.pvalue < 0.01)
    True
    """
    found = [_finite(s, f"samples[{j}]") for j, s in enumerate(read_samples(samples, minimum=0))]
    k = len(found)
    n = check_total(found)  # a sample's size is private
    twice = _twice_rank_sums(found)
    counts = np.array([s.size for s in found], dtype=np.int64)
    plans = kruskal_plans(int(np.abs(twice).sum()), counts, n, epsilon, delta, noise)
    note = f"kruskal: {kruskal_note(k, n)}"
    total, sizes = charged("kruskal", plans, rng=rng, accountant=accountant, note=note, relation="row")
    draws = rank_sums(n, balanced_sizes(sizes, n, noise_of(plans[1])), n_resamples, rng)
    null = noise_of(plans[0]).release(np.abs(draws).sum(axis=1), rng)
    return HypothesisResult(
        statistic=float(4.0 * (n - 1) / n**2 * total),
        pvalue=pvalue(total, null, "greater"),
        test="kruskal",
        alternative=None,
        null="the samples come from the same (continuous) distribution",
        method=KW_METHOD,
        released={"K (sum of |centred rank sums|)": total, "sizes": np.asarray(sizes), "n": n},
        n_resamples=n_resamples,
    )


def mannwhitneyu_plans(twice_w: int, size: int, n: int, epsilon: float, delta: float, noise: str) -> list[Planned]:
    """The plans of Mann–Whitney's releases (module docstring): 2W of x on the grid ½ (W moves by at most n − 1)
    and the size of x (sensitivity 1), ε split 19 : 1. The release's and its preview's (n public)."""
    (e_w, d_w), (e_c, d_c) = split_budget(epsilon, delta, SHARES)
    return [
        plan(Statistic(int(twice_w), Fraction(1, 2)), [n - 1], e_w, d_w, noise=noise, units="ranks (W of x)"),
        plan(Statistic(int(size), Fraction(1)), [1], e_c, d_c, noise=noise, units="records in x"),
    ]


def mannwhitneyu_note(n) -> str:
    return f"the centred rank sum of x in the pooled sample of n = {n} (public) and the size of x, epsilon split 19 : 1"


def kruskal_plans(twice_k: int, counts: np.ndarray, n: int, epsilon: float, delta: float, noise: str) -> list[Planned]:
    """The plans of Kruskal–Wallis' releases (module docstring): 2K on the grid ½ (K moves by at most 2(n − 1)) and
    the k sizes (L1 2, L2 √2), ε split 19 : 1. The release's and its preview's (n public)."""
    (e_k, d_k), (e_c, d_c) = split_budget(epsilon, delta, SHARES)
    return [
        plan(Statistic(int(twice_k), Fraction(1, 2)), [2 * (n - 1)], e_k, d_k, noise=noise, units="ranks"),
        plan(Statistic(counts, Fraction(1)), [1, 1], e_c, d_c, noise=noise, changed=2, units="records per sample"),
    ]


def kruskal_note(k, n) -> str:
    return (
        f"the sum of the absolute centred rank sums of {k} samples in the pooled sample of n = {n} (public) and their "
        "sizes, epsilon split 19 : 1"
    )


def _finite(values: np.ndarray, name: str) -> np.ndarray:
    bad = int(np.count_nonzero(~np.isfinite(values)))
    if bad:
        raise DataValidationError(f"{name} has {bad} value(s) that are NaN or infinite: ranks need finite numbers")
    return values


def _twice_rank_sums(samples: list[np.ndarray]) -> np.ndarray:
    """2·W_j for each sample, exact integers (midranks are multiples of ½)."""
    from scipy.stats import rankdata

    pooled = np.concatenate(samples)
    twice = np.rint(2.0 * rankdata(pooled, method="average")).astype(np.int64) - (pooled.size + 1)
    edges = np.cumsum([0, *(s.size for s in samples)])
    return np.array([int(twice[a:b].sum()) for a, b in zip(edges[:-1], edges[1:], strict=True)], dtype=np.int64)


def rank_sums(n: int, sizes: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """``draws`` × k centred rank sums W_j under the permutation null for samples of ``sizes`` (Σ = n): exact
    random permutations for n <= :data:`EXACT`, else the multivariate normal limit (module docstring)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if n > EXACT:
        # y = √n_j·z_j (z standard normal); W = √(n(n + 1)/12)·(y − n_j·Σ_l y_l / n) has the rank sums' covariance
        # (n + 1)/12·(n·n_j·δ_jl − n_j·n_l), as Σ_j n_j = n
        y = rng.standard_normal((draws, sizes.size)) * np.sqrt(sizes)
        return math.sqrt(n * (n + 1) / 12.0) * (y - sizes * y.sum(axis=1, keepdims=True) / n)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    ranks = np.arange(1, n + 1, dtype=np.int32)
    out = np.empty((draws, sizes.size))
    rows = max(1, 4_000_000 // n)
    for first in range(0, draws, rows):
        block = rng.permuted(np.broadcast_to(ranks, (min(rows, draws - first), n)), axis=1)
        out[first : first + block.shape[0]] = np.add.reduceat(block, starts, axis=1, dtype=np.int64)
    return out - sizes * (n + 1) / 2.0
