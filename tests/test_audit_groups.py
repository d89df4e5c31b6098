"""Audits of private partition selection and of grouped statistics.

1. **A key held by one unit appears with probability at most δ**, checked against its exact bound: for every
   policy, the selection's own noise and threshold are applied to many keys that a single unit holds (statistic 1,
   or the weight w_1 of a unit with one key); the number released is Binomial(runs, p) with p <= p_bound, the
   exact tail P(w + Z >= τ) (:mod:`dpstats.noise.selection`), so it must stay below the binomial's
   (1 − 10^-3)-quantile at p_bound; with the discrete Laplace's exact tail it must also not be far *below* it (a
   two-sided binomial test: the tail formula is the sampler's). A deliberately un-thresholded variant (the same
   noise, threshold 1/2: every key whose noisy count rounds to at least one) is flagged by the same check.
2. **End to end** (:func:`dpstats.audit.audit`): neighbours that differ in one unit holding a key nobody else
   holds, with 16 rows; the event "the key is released". The real release with the unit stays below ε (with its
   δ), while the same release without the unit (every row a unit, so the key has 16 "people") and the
   un-thresholded variant are flagged far above it.
3. A grouped sum with public categories, whose heavy unit moves its 16 rows from one key to another: below ε with
   the unit, flagged without it.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

import dpstats as dps
from dpstats.audit import audit
from dpstats.noise.selection import calibrate_selection, unit_weight

#: histogram with keys selected privately warns that its return type changes next release (the release is tested)
pytestmark = pytest.mark.filterwarnings("ignore:histogram of keys selected privately:DeprecationWarning")

pytest.importorskip("pandas")

ALPHA = 1e-3
RUNS = 200_000
HEAVY = 16
EPS, DELTA = 1.0, 0.01


def _p_bound(selection, weight_units: int) -> float:
    """P(w + Z >= τ) for a key of statistic w (in the statistic's units), from the exact tail (discrete Laplace)
    or the tail bound (discrete Gaussian), with 60 digits, rounded up."""
    noise, grid = selection.noise, selection.noise.grid
    j = int(Fraction(selection.threshold) / grid) - int(weight_units * selection.unit / grid)
    with mpmath.workdps(60):
        if noise.kind == "laplace":
            q = mpmath.exp(-mpmath.mpf(noise.scale.denominator) / noise.scale.numerator)
            p = q**j / (1 + q)
        else:
            var = mpmath.mpf(noise.scale.numerator) / noise.scale.denominator
            p = mpmath.ncdf(-(j - 1) / mpmath.sqrt(var)) / (1 - 2 * mpmath.exp(-2 * mpmath.pi**2 * var))
    return float(p) * (1 + 1e-12)


@pytest.mark.parametrize("policy,k", [("laplace", 1), ("laplace", 3), ("gaussian", 3), ("weighted", 3)])
def test_a_key_held_by_one_unit_appears_with_probability_at_most_its_bound(policy, k):
    selection = calibrate_selection(EPS, DELTA, policy, k)
    weight = unit_weight(1) if policy == "weighted" else 1  # the worst case: a unit with one key, full weight
    p = _p_bound(selection, weight)
    assert 1 - (1 - p) ** (1 if policy == "weighted" else k) <= selection.threshold_delta * (1 + 1e-9)
    kept, _ = selection.keep(np.full(RUNS, weight), np.random.default_rng(hash((policy, k)) % 2**32))
    hits = int(kept.sum())
    assert hits <= stats.binom.ppf(1 - ALPHA, RUNS, p)
    if policy == "laplace":  # the exact tail: the sampler must release at that rate, not far below it
        assert stats.binomtest(hits, RUNS, p).pvalue > ALPHA
    careless = dataclasses.replace(selection, threshold=0.5)  # no threshold to speak of
    kept, _ = careless.keep(np.full(RUNS, weight), np.random.default_rng(1))
    assert int(kept.sum()) > stats.binom.ppf(1 - ALPHA, RUNS, p)


def _keys(rare: bool):
    """40 units with key "a", 40 with "b", and one unit (id 999) with 16 rows of "rare" (or of "a")."""
    keys = np.array(["a"] * 40 + ["b"] * 40 + (["rare"] if rare else ["a"]) * HEAVY)
    return keys, np.r_[np.arange(80), np.full(HEAVY, 999)]


def _appears(out) -> bool:
    return "rare" in out.index


def test_end_to_end_a_unit_with_a_key_of_its_own_is_hidden_and_the_row_level_variant_is_not():
    (data, ids), (neighbour, _) = _keys(True), _keys(False)
    unit = audit(
        lambda keys, r: dps.histogram(keys, EPS, DELTA, privacy_unit=ids, max_rows=1, max_groups=1, rng=r),
        data,
        neighbour,
        _appears,
        n_runs=1000,
        delta=DELTA,
        rng=1,
    )
    rows = audit(
        lambda keys, r: dps.histogram(keys, EPS, DELTA, rng=r),
        data,
        neighbour,
        _appears,
        n_runs=1000,
        delta=DELTA,
        rng=2,
    )
    assert unit.epsilon_lower <= EPS and unit.counts[1] == 0
    assert rows.epsilon_lower > 3 * EPS


def test_end_to_end_the_unthresholded_variant_is_flagged(monkeypatch):
    import dpstats.descriptive._grouped as groups

    def careless(grouping, epsilon, delta, calibrate=groups.calibrate):
        return dataclasses.replace(calibrate(grouping, epsilon, delta), threshold=0.5)

    monkeypatch.setattr(groups, "calibrate", careless)
    (data, ids), (neighbour, _) = _keys(True), _keys(False)
    result = audit(
        lambda keys, r: dps.histogram(keys, EPS, DELTA, privacy_unit=ids, max_rows=1, max_groups=1, rng=r),
        data,
        neighbour,
        _appears,
        n_runs=1000,
        delta=DELTA,
        rng=3,
    )
    assert result.epsilon_lower > 3 * EPS


def test_grouped_sum_with_a_heavy_unit_moving_between_keys():
    """The heavy unit's 16 rows of value 1 are in key "a" (data) or "b" (neighbour): the noiseless sums of "a"
    differ by 16; the event is the sum of "a" above the halfway point."""
    ids = np.r_[np.full(HEAVY, 999), np.arange(40)]
    values = np.r_[np.ones(HEAVY), np.full(40, 0.5)]
    data = np.r_[["a"] * HEAVY, ["a", "b"] * 20]
    neighbour = np.r_[["b"] * HEAVY, ["a", "b"] * 20]
    halfway = 10 + HEAVY / 2

    def release(keys, r, units):
        extra = {} if units is None else dict(privacy_unit=units, max_rows=HEAVY, max_groups=1)
        return dps.sum(values, EPS, by=keys, categories=["a", "b"], bounds=(0, 1), rng=r, **extra)

    results = [
        audit(
            lambda k, r, u=u: release(k, r, u), data, neighbour, lambda out: out["a"] > halfway, n_runs=1000, rng=seed
        ).epsilon_lower
        for seed, u in ((4, ids), (5, None))
    ]
    assert results[0] <= EPS
    assert results[1] > 2 * EPS
