"""Previews of the hypothesis tests (:func:`dpstats.preview`; each declared as the test's ``preview=``,
``"dpstats.hypothesis._previews:NAME"``).

A test's ledger entry states the noise of what it releases (a count, a table, sums, a rank statistic and sizes) in
the units of that release; its p-value is post-processing of the releases. Each preview plans the same releases
with the test's own planning function (:func:`~dpstats.hypothesis._binomial.count_plan`,
:func:`~dpstats.hypothesis._chisquare.counts_plan`, :func:`~dpstats.hypothesis._moments.moment_plans` on the
public grid of the bounds, :func:`~dpstats.hypothesis._ranks.mannwhitneyu_plans`,
:func:`~dpstats.hypothesis._ranks.kruskal_plans`) from public values, so its events and statements are the ledger's.

Public arguments, as each test's neighbouring relation makes them public:

* **one sample of records** (``binomtest``, ``chisquare``, ``chi2_contingency``, ``ttest_1samp``): replace one
  record; ``n`` records, or with a privacy unit ``units`` (N) and ``max_rows=1`` (one record kept per unit, as
  the tests require). Their sensitivities (1; 2 in L1; w and w²/4, w the width of the bounds rounded to the
  records' grid) do not depend on the size, so it is optional (checked when given; at least 2 for a t-test): it
  only decides the relation (row, or unit with ``units``) and the note.
* **several samples** (``ttest_ind``, ``f_oneway``, ``mannwhitneyu``, ``kruskal``; row level only): replace one
  record, its value and the sample it is in. Only the total ``n`` is public; the sizes of the samples are private
  and released with noise, so a preview takes no sizes. ``n`` fixes the rank statistics' sensitivities (n − 1 for
  Mann–Whitney's W, 2(n − 1) for Kruskal–Wallis' K): it is needed there, optional for the moments (their
  sensitivities w, w²/4 and 1 do not depend on it). ``k``, the number of samples of ``f_oneway`` and ``kruskal``, is
  public (the call's structure) and needed.

The test's options that change no noise (``alternative``, ``confidence_level``, ``n_resamples``, ``p``,
``popmean``, ``f_exp``) are taken, checked as the test checks them, and stated in the note only.

What no preview states: the p-value and the power. They depend on the data, and for the several-sample tests on
the released sizes too (the null is simulated at sizes read from the noisy counts,
:func:`~dpstats.hypothesis._result.balanced_sizes`); the noise the null includes is the one stated here, exactly.
"""

from __future__ import annotations

import numpy as np

from .._release import Preview, previewed, public_count
from ..accounting import Relation
from ..descriptive._previews import PublicRows, public_rows
from ..exceptions import ParameterError
from ..inference._simulate import DRAWS
from ._binomial import count_plan
from ._chisquare import category_pair, counts_plan, expected_frequencies, public_categories
from ._moments import moment_plans, moments_note, public_moments
from ._ranks import kruskal_note, kruskal_plans, mannwhitneyu_note, mannwhitneyu_plans
from ._result import check_one_record, unit_note
from ._ttest import check_popmean

__all__ = [
    "binomtest_preview",
    "chi2_contingency_preview",
    "chisquare_preview",
    "f_oneway_preview",
    "kruskal_preview",
    "mannwhitneyu_preview",
    "ttest_1samp_preview",
    "ttest_ind_preview",
]

_PRIVATE_SIZES = "the sizes of the samples are private (released with noise) and are not taken"


# ----------------------------------------------------------------------------- the public size


def _records(n, units, max_rows, minimum: int = 1) -> PublicRows | None:
    """The public size of a one-sample test: ``n`` records, or ``units`` and ``max_rows=1``; None when none is
    given (the noise does not depend on it)."""
    if n is None and units is None and max_rows is None:
        return None
    rows = public_rows(n, units, max_rows)
    if rows.max_rows is not None:
        check_one_record(rows.max_rows)
    if rows.count < minimum:
        name = "n" if rows.max_rows is None else "units"
        raise ParameterError(f"{name} must be >= {minimum} for a t-test (N is public); got {rows.count}")
    return rows


def _total(n, minimum: int, needed: str | None = None) -> int | None:
    """The public total ``n`` of a several-sample test (at least ``minimum``); ``needed``: why it cannot be left
    out (None: it may be)."""
    if n is None:
        if needed is not None:
            raise ParameterError(f"n is needed: the total number of records (public), {needed}; {_PRIVATE_SIZES}")
        return None
    n = public_count(n, "n")
    if n < minimum:
        raise ParameterError(
            f"n must be >= {minimum} (the records of all the samples: what the null simulates per sample; one sample "
            f"may be empty); got {n}"
        )
    return n


def _samples(k) -> int:
    """The public number of samples k (at least 2)."""
    if k is None:
        raise ParameterError("k is needed: the number of samples the call will pass (public)")
    k = public_count(k, "k")
    if k < 2:
        raise ParameterError(f"k must be >= 2 (a test compares at least two samples); got {k}")
    return k


def _described(rows: PublicRows | None) -> tuple[str, int | None, Relation]:
    """(the unit's part of the note, n or None, the relation) of a one-sample test's size."""
    if rows is None:
        return "", None, Relation.ROW
    if rows.max_rows is None:
        return "", rows.count, Relation.ROW
    return unit_note(rows.count), rows.count, Relation.UNIT


def _size(n: int | None) -> str:
    """n as a note states it (as the ledger's, or that it was not given: no noise of these tests depends on it)."""
    return "n public, not given" if n is None else f"n = {n}, public"


def _preview(test: str, plans, note: str, relation: Relation) -> Preview:
    """The preview of ``plans`` stated as the ledger will state them (:meth:`dpstats._release.Planned.statements`)."""
    statements = [s for p in plans for s in p.statements()]
    return previewed(test, plans, statements, note=note, relation=relation)


# ----------------------------------------------------------------------------- counts


def binomtest_preview(
    epsilon,
    delta,
    *,
    n=None,
    units=None,
    max_rows=None,
    p=0.5,
    alternative="two-sided",
    confidence_level=0.95,
    noise="exact",
) -> Preview:
    """hypothesis.binomtest: replace one record (with a privacy unit, one unit, one record kept of each); the
    number of ones, sensitivity 1, the whole budget (:func:`~dpstats.hypothesis._binomial.count_plan`)."""
    unit, size, relation = _described(_records(n, units, max_rows))
    note = (
        f"{unit}binomtest: the number of ones of a 0/1 sample ({_size(size)}), the whole budget, sensitivity "
        f"1; the p-value ({alternative}, p = {float(p):g}) is the exact convolution of its noise with the "
        "Binomial(n, p) null"
    )
    return _preview("binomtest", [count_plan(0, epsilon, delta, noise)], note, relation)


def chisquare_preview(
    epsilon,
    delta,
    *,
    categories=None,
    f_exp=None,
    n_resamples=DRAWS,
    n=None,
    units=None,
    max_rows=None,
    noise="exact",
) -> Preview:
    """hypothesis.chisquare: replace one record (or unit, one record kept of each); the counts of the k public
    categories, L1 sensitivity 2 and L2 √2 (one count down, one up), the whole budget
    (:func:`~dpstats.hypothesis._chisquare.counts_plan`)."""
    if categories is None:
        raise ParameterError("categories is needed: the public categories the call will take (at least two)")
    k = len(public_categories(categories, "categories"))
    expected_frequencies(f_exp, k)
    unit, size, relation = _described(_records(n, units, max_rows))
    note = (
        f"{unit}chisquare: the counts of {k} public categories ({_size(size)}), the whole budget, L1 sensitivity "
        f"2 (L2 sqrt(2)); the p-value by {n_resamples} draws of the multinomial null with the exact noise"
    )
    return _preview("chisquare", [counts_plan(np.zeros(k, np.int64), epsilon, delta, noise)], note, relation)


def chi2_contingency_preview(
    epsilon,
    delta,
    *,
    categories=None,
    n_resamples=DRAWS,
    n=None,
    units=None,
    max_rows=None,
    noise="exact",
) -> Preview:
    """hypothesis.chi2_contingency: replace one record (or unit, one record kept of each); the r × c table of the
    public categories, L1 sensitivity 2 and L2 √2 (one cell down, one up), the whole budget
    (:func:`~dpstats.hypothesis._chisquare.counts_plan`)."""
    if categories is None:
        raise ParameterError("categories is needed: the pair (categories of x, categories of y) the call will take")
    rows, columns = category_pair(categories)
    r, c = len(rows), len(columns)
    unit, size, relation = _described(_records(n, units, max_rows))
    note = (
        f"{unit}chi2_contingency: the {r} × {c} table of public categories ({_size(size)}), the whole budget, "
        f"L1 sensitivity 2 (L2 sqrt(2)); the p-value by {n_resamples} tables simulated at the margins estimated from "
        "the noisy table, with the exact noise"
    )
    table = np.zeros((r, c), np.int64)
    return _preview("chi2_contingency", [counts_plan(table, epsilon, delta, noise)], note, relation)


# ----------------------------------------------------------------------------- means


def ttest_1samp_preview(
    epsilon,
    delta,
    *,
    popmean=None,
    bounds=None,
    alternative="two-sided",
    confidence_level=0.95,
    n_resamples=DRAWS,
    n=None,
    units=None,
    max_rows=None,
    noise="exact",
) -> Preview:
    """hypothesis.ttest_1samp: replace one record (or unit, one record kept of each); the shifted sum S (sensitivity
    w) and sum of squares Q (w²/4) about the midpoint of the bounds, w their width on the records' grid, ε split
    4 : 1 (:func:`~dpstats.hypothesis._moments.moment_plans` on :func:`~dpstats.hypothesis._moments.public_moments`).
    ``popmean`` is checked (inside the bounds) when given."""
    moments = public_moments(bounds)
    if popmean is not None:
        check_popmean(popmean, bounds)
    unit, size, relation = _described(_records(n, units, max_rows, minimum=2))
    width = float(moments.shifted_sensitivity)
    note = (
        f"{unit}ttest_1samp: {moments_note(1, size)} (sensitivities w and w^2/4, w = {width:g} "
        f"the width of the bounds on the records' grid); the p-value by {n_resamples} draws of a parametric "
        "bootstrap with the exact noise"
    )
    plans = moment_plans([moments], epsilon, delta, noise)
    return _preview("ttest_1samp", plans, note, relation)


def ttest_ind_preview(
    epsilon,
    delta,
    *,
    bounds=None,
    alternative="two-sided",
    confidence_level=0.95,
    n_resamples=DRAWS,
    n=None,
    noise="exact",
) -> Preview:
    """hypothesis.ttest_ind: replace one record, its value and its sample (n public, the sizes private); the two
    samples' shifted sums (L1 and L2 sensitivity w), sums of squares (w²/4 for each of two samples) and sizes (L1 2,
    L2 √2), ε split 4 : 1 : 2 (:func:`~dpstats.hypothesis._moments.moment_plans`)."""
    return _moments_preview("ttest_ind", epsilon, delta, bounds, 2, _total(n, 4), n_resamples, noise)


def f_oneway_preview(epsilon, delta, *, bounds=None, n_resamples=DRAWS, n=None, k=None, noise="exact") -> Preview:
    """hypothesis.f_oneway: replace one record, its value and its sample (n public, the sizes private); the k
    samples' shifted sums (L1 and L2 sensitivity w), sums of squares (w²/4 for each of two samples) and sizes (L1 2,
    L2 √2), ε split 4 : 1 : 2 (:func:`~dpstats.hypothesis._moments.moment_plans`)."""
    k = _samples(k)
    return _moments_preview("f_oneway", epsilon, delta, bounds, k, _total(n, 2 * k), n_resamples, noise)


def _moments_preview(test, epsilon, delta, bounds, k: int, n: int | None, draws, noise) -> Preview:
    moments = public_moments(bounds)
    note = (
        f"{test}: {moments_note(k, n)} (sensitivities w, w^2/4 per sample moved and 1 per "
        f"size, w = {float(moments.shifted_sensitivity):g} the width of the bounds on the records' grid); "
        f"{_PRIVATE_SIZES}; the p-value by {draws} draws of a parametric bootstrap with the exact noise, at sizes "
        "read from the noisy counts"
    )
    plans = moment_plans([moments] * k, epsilon, delta, noise)
    return _preview(test, plans, note, Relation.ROW)


# ----------------------------------------------------------------------------- ranks


def mannwhitneyu_preview(
    epsilon, delta, *, alternative="two-sided", n_resamples=DRAWS, n=None, noise="exact"
) -> Preview:
    """hypothesis.mannwhitneyu: replace one record, its value and its sample (n public, the sizes private); the
    centred rank sum W of x (sensitivity n − 1) and the size of x (1), ε split 19 : 1
    (:func:`~dpstats.hypothesis._ranks.mannwhitneyu_plans`)."""
    n = _total(n, 2, "which fixes the sensitivity n − 1 of W")
    note = (
        f"mannwhitneyu: {mannwhitneyu_note(n)}, sensitivities {n - 1} and 1; {_PRIVATE_SIZES}; the p-value by "
        f"{n_resamples} random permutations at sizes read from the noisy size, with the exact noise"
    )
    return _preview("mannwhitneyu", mannwhitneyu_plans(0, 0, n, epsilon, delta, noise), note, Relation.ROW)


def kruskal_preview(epsilon, delta, *, n_resamples=DRAWS, n=None, k=None, noise="exact") -> Preview:
    """hypothesis.kruskal: replace one record, its value and its sample (n public, the sizes private); K = Σ|W_j|
    (sensitivity 2(n − 1)) and the k sizes (L1 2, L2 √2), ε split 19 : 1
    (:func:`~dpstats.hypothesis._ranks.kruskal_plans`)."""
    k = _samples(k)
    n = _total(n, max(2, k), "which fixes the sensitivity 2(n − 1) of K")
    note = (
        f"kruskal: {kruskal_note(k, n)}, sensitivities {2 * (n - 1)} and 2 (L1); {_PRIVATE_SIZES}; the p-value by "
        f"{n_resamples} random permutations at sizes read from the noisy sizes, with the exact noise"
    )
    plans = kruskal_plans(0, np.zeros(k, np.int64), n, epsilon, delta, noise)
    return _preview("kruskal", plans, note, Relation.ROW)
