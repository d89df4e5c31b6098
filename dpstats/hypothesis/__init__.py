"""Hypothesis tests on private data, with p-values that stay valid after the noise: scipy.stats' tests, private.

``from dpstats import hypothesis``; each test takes the data first, then ``epsilon`` and ``delta``, then keyword
options, and returns a :class:`HypothesisResult` with scipy's ``statistic`` and ``pvalue`` (and ``ci`` where
scipy's result has an interval). Each test releases what it needs (a noisy count, table, sums or rank statistic)
in one charge whose ledger note states the split, and its p-value is computed from the null distribution of the
*private* statistic — the exact noise dpstats added included — from those releases and public values only: by
exact convolution for the binomial test, by Monte Carlo simulation of the null otherwise ((1 + #)/(B + 1), valid
for any number B of draws, ``n_resamples``). Plugging a noisy statistic into scipy's p-value ignores the noise and
rejects far too often (measured in ``benchmarks/bench_hypothesis.py`` and the tutorial "Testing a hypothesis on
private data").

============================  =================================================  ==========================
test                          released                                           null distribution
============================  =================================================  ==========================
:func:`binomtest`             the number of ones                                 exact convolution
:func:`chisquare`             counts over public categories                      exact (simulated)
:func:`chi2_contingency`      the r × c table                                    margins plugged in
:func:`ttest_1samp`           sum and sum of squares                             variance plugged in
:func:`ttest_ind`             sizes, sums and sums of squares of 2 samples       variances, sizes plugged in
:func:`f_oneway`              sizes, sums and sums of squares of k samples       variances, sizes plugged in
:func:`mannwhitneyu`          a centred rank sum and a size                      permutations, size plugged in
:func:`kruskal`               Σ |centred rank sums| and the sizes                permutations, sizes plugged in
============================  =================================================  ==========================

Every test is declared in :mod:`dpstats.registry` (family ``"hypothesis"``); each module states the neighbouring
relation, the sensitivities with their derivation, the papers it follows and how a nuisance parameter is handled.
"""

from ._anova import f_oneway
from ._binomial import binomtest
from ._chisquare import chi2_contingency, chisquare
from ._ranks import kruskal, mannwhitneyu
from ._result import HypothesisResult
from ._ttest import ttest_1samp, ttest_ind

__all__ = [
    "HypothesisResult",
    "binomtest",
    "chi2_contingency",
    "chisquare",
    "f_oneway",
    "kruskal",
    "mannwhitneyu",
    "ttest_1samp",
    "ttest_ind",
]
