"""Group-by over keys nobody knows in advance: the bounding kernel, the selection's calibration, the grouped
releases on every engine, and bad input (issue "Group-by over keys nobody knows in advance").

The privacy audits of the selection are in ``tests/test_audit_groups.py``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import dpstats as dps
from dpstats._kernels.fixed_point import FixedPoint
from dpstats._kernels.groups import GroupSpec, factorize, key_table, merge_tables
from dpstats._kernels.units import canonical_ids
from dpstats.accounting.events import ApproxDP, Gaussian
from dpstats.exceptions import DataValidationError, OutOfBoundsError, ParameterError
from dpstats.noise.selection import calibrate_selection, threshold_tail, unit_weight

#: histogram with keys selected privately warns that its return type changes next release (the release is tested)
pytestmark = pytest.mark.filterwarnings("ignore:histogram of keys selected privately:DeprecationWarning")

pd = pytest.importorskip("pandas")

RNG = np.random.default_rng(24)
N = 6_000
UNITS = RNG.integers(0, 800, N)
KEYS = np.array([f"k{int(v)}" for v in RNG.zipf(1.6, N) % 300])
X = RNG.uniform(0.0, 10.0, N)


def _brute(keys, units, k, m):
    """Per key: distinct units and rows, when nothing is dropped (k and m at least every unit's keys and rows)."""
    found = {}
    for key, unit in zip(keys.tolist(), units.tolist(), strict=True):
        entry = found.setdefault(key, [set(), 0])
        entry[0].add(unit)
        entry[1] += 1
    return {key: (len(u), r) for key, (u, r) in sorted(found.items())}


# ----------------------------------------------------------------------------- the kernel


@pytest.mark.parametrize(
    "values", [np.array([5, 3, 5, 9, 3]), np.array([10**12, 3, 10**12]), np.array(["b", "a", "b"])]
)
def test_factorize_agrees_with_unique_on_both_paths(values):
    distinct, codes = factorize(values)
    expected, inverse = np.unique(values, return_inverse=True)
    np.testing.assert_array_equal(distinct, expected)
    np.testing.assert_array_equal(codes, inverse)


def test_without_bounding_the_table_is_the_brute_force_count():
    ids = canonical_ids(UNITS)
    table = key_table(KEYS, ids, None, GroupSpec(max_rows=10**6, max_groups=10**6, key=1, by_unit=True))
    brute = _brute(KEYS, UNITS, None, None)
    assert table.keys.tolist() == list(brute)
    assert table.units.tolist() == [v[0] for v in brute.values()]
    assert table.rows.tolist() == [v[1] for v in brute.values()]
    assert table.n_units == np.unique(UNITS).size


@pytest.mark.parametrize("m", [1, 3])
def test_without_max_groups_each_unit_keeps_m_rows_in_any_keys(m):
    """max_groups=None: Σ rows over the keys = Σ_u min(c_u, m); the units per key count each unit in the keys of
    its kept rows; with m above every unit's rows, both are the brute-force counts."""
    ids = canonical_ids(UNITS)
    table = key_table(KEYS, ids, None, GroupSpec(max_rows=m, key=3, by_unit=True))
    assert table.rows.sum() == np.minimum(np.bincount(UNITS), m).sum()
    assert table.units.sum() <= table.rows.sum()
    full = key_table(KEYS, ids, None, GroupSpec(max_rows=10**6, key=3, by_unit=True))
    brute = _brute(KEYS, UNITS, None, None)
    assert full.units.tolist() == [v[0] for v in brute.values()]
    assert full.rows.tolist() == [v[1] for v in brute.values()]


@pytest.mark.parametrize("k,m", [(1, 1), (2, 3), (5, 1)])
def test_each_unit_keeps_min_of_its_keys_and_k_and_min_of_its_rows_and_m(k, m):
    """Σ over keys of the distinct units = Σ_u min(d_u, k); rows never exceed min(r, m) per kept pair, and with
    k above every unit's number of keys they are exactly Σ min(r, m)."""
    ids = canonical_ids(UNITS)
    table = key_table(KEYS, ids, None, GroupSpec(max_rows=m, max_groups=k, key=7, by_unit=True, weights=True))
    pairs = {}
    for key, unit in zip(KEYS.tolist(), UNITS.tolist(), strict=True):
        pairs[(unit, key)] = pairs.get((unit, key), 0) + 1
    degree = {}
    for unit, _ in pairs:
        degree[unit] = degree.get(unit, 0) + 1
    assert table.units.sum() == sum(min(d, k) for d in degree.values())
    kept = {u: min(d, k) for u, d in degree.items()}
    assert table.weights.sum() == sum(d * unit_weight(d) for d in kept.values())
    assert table.rows.sum() <= sum(min(r, m) for r in pairs.values())
    full = key_table(KEYS, ids, None, GroupSpec(max_rows=m, max_groups=10**6, key=7, by_unit=True))
    assert full.rows.sum() == sum(min(r, m) for r in pairs.values())


def test_the_choice_does_not_depend_on_the_order_of_the_rows():
    ids = canonical_ids(UNITS)
    spec = GroupSpec(max_rows=2, max_groups=2, key=11, by_unit=True, weights=True, grid=_grid(), squares=True)
    order = np.random.default_rng(1).permutation(N)
    a = key_table(KEYS, ids, X, spec)
    b = key_table(KEYS[order], ids[order], X[order], spec)
    for name in ("keys", "units", "rows", "weights", "sums", "squares"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_a_units_choice_depends_on_its_own_rows_only():
    """Replacing every row of unit 0 changes only the statistics of the keys unit 0 holds before or after."""
    ids = canonical_ids(UNITS)
    spec = GroupSpec(max_rows=2, max_groups=2, key=5, by_unit=True, weights=True, grid=_grid())
    keys = KEYS.copy()
    keys[UNITS == 0] = "k-new"
    a, b = key_table(KEYS, ids, X, spec), key_table(keys, ids, X, spec)
    touched = set(KEYS[UNITS == 0].tolist()) | {"k-new"}
    for key in set(a.keys.tolist()) & set(b.keys.tolist()) - touched:
        i, j = a.keys.tolist().index(key), b.keys.tolist().index(key)
        assert (a.units[i], a.rows[i], a.weights[i]) == (b.units[j], b.rows[j], b.weights[j])
        np.testing.assert_array_equal(a.sums[i], b.sums[j])


def test_the_keys_a_unit_keeps_are_uniform():
    """One unit with 8 keys and k = 2: over random keys each key is kept with probability 1/4 (χ² at α = 1e-4)."""
    keys, ids, trials = np.array([f"q{i}" for i in range(8)]), np.zeros(8, dtype=np.int64), 3000
    seeds = np.random.default_rng(2).integers(0, 2**63, trials)
    counts = np.zeros(8)
    for seed in seeds:
        counts += key_table(keys, ids, None, GroupSpec(max_rows=1, max_groups=2, key=int(seed), by_unit=True)).units
    assert stats.chisquare(counts, np.full(8, trials / 4)).pvalue > 1e-4


def test_rows_within_a_kept_key_are_the_units_rows_chosen_at_random():
    """max_rows = 1 of a unit's 5 rows in one key: each row's value is the one summed with probability 1/5."""
    keys, ids, x = np.array(["a"] * 5), np.zeros(5, dtype=np.int64), np.arange(5.0)
    grid = FixedPoint.of(np.array([0.0]), np.array([8.0]), False)
    seeds = np.random.default_rng(3).integers(0, 2**63, 2000)
    spec = dict(max_rows=1, max_groups=1, by_unit=True, grid=grid)
    chosen = [int(key_table(keys, ids, x, GroupSpec(key=int(s), **spec)).exact_sums()[0, 0]) for s in seeds]
    h = 2.0 ** int(grid.exponent[0])
    counts = np.bincount(np.rint(np.array(chosen) * h).astype(int), minlength=5)
    assert stats.chisquare(counts, np.full(5, 400)).pvalue > 1e-4


def _grid(squares=True):
    return FixedPoint.of(np.array([0.0]), np.array([10.0]), squares)


def test_sums_and_squares_are_exact():
    grid = _grid()
    table = key_table(KEYS, None, X, GroupSpec(grid=grid, squares=True))
    q = grid.quantized(X.reshape(-1, 1), False)[:, 0].astype(np.int64)
    for i, key in enumerate(table.keys.tolist()):
        part = q[KEYS == key].astype(object)
        assert table.exact_sums()[i, 0] == sum(part)
        assert table.exact_squares()[i, 0] == sum(v * v for v in part)


def test_tables_of_blocks_that_share_no_unit_add_up():
    ids = canonical_ids(UNITS)
    spec = GroupSpec(max_rows=2, max_groups=3, key=9, by_unit=True, weights=True, grid=_grid(), squares=True)
    spec = GroupSpec(**{**spec.__dict__, "cells": lambda v: np.floor(v).astype(np.int64)})
    whole = key_table(KEYS, ids, X, spec)
    parts = [key_table(KEYS[ids % 3 == r], ids[ids % 3 == r], X[ids % 3 == r], spec) for r in range(3)]
    merged = merge_tables(parts)
    for name in ("keys", "units", "rows", "weights", "sums", "squares"):
        np.testing.assert_array_equal(getattr(merged, name), getattr(whole, name))
    for a, b in zip(merged.cells, whole.cells, strict=True):
        np.testing.assert_array_equal(a, b)
    assert merged.n_units == whole.n_units


def test_missing_and_unknown_keys_are_counted_not_grouped():
    keys = np.array(["a", None, "b", float("nan")], dtype=object)
    assert key_table(keys, None, None, GroupSpec()).missing == 2
    assert (
        key_table(np.array(["a", "z", None], dtype=object), None, None, GroupSpec(categories=("a", "b"))).outside == 2
    )


# ----------------------------------------------------------------------------- the selection's calibration


def _exact_tail(selection, j):
    """P(Z >= j) from the exact distribution (discrete Laplace), or the tail bound (discrete Gaussian), with 60
    digits."""
    import mpmath

    with mpmath.workdps(60):
        noise = selection.noise
        if noise.kind == "laplace":
            q = mpmath.exp(-mpmath.mpf(noise.scale.denominator) / noise.scale.numerator)
            return q**j / (1 + q)
        var = mpmath.mpf(noise.scale.numerator) / noise.scale.denominator
        return mpmath.ncdf(-(j - 1) / mpmath.sqrt(var)) / (1 - 2 * mpmath.exp(-2 * mpmath.pi**2 * var))


@pytest.mark.parametrize("policy", ["laplace", "gaussian", "weighted"])
@pytest.mark.parametrize("epsilon,delta,k", [(1.0, 1e-6, 1), (0.3, 1e-8, 3), (2.0, 1e-4, 8)])
def test_the_threshold_is_the_smallest_that_keeps_beta_below_delta(policy, epsilon, delta, k):
    """β_max(τ) <= δ_threshold exactly (60 digits), and one grid step lower it is above (up to the search's margin):
    the threshold is never below the exact one and not far above it."""
    import mpmath

    sel = calibrate_selection(epsilon, delta, policy, k)
    grid = sel.noise.grid
    T = int(Fraction(sel.threshold) / grid)
    unit = sel.unit
    ds = [k] if policy != "weighted" else range(1, k + 1)
    weights = {d: (unit_weight(d) * unit / grid if policy == "weighted" else unit / grid) for d in ds}

    def beta(t):
        return max(-mpmath.expm1(d * mpmath.log1p(-_exact_tail(sel, t - int(weights[d])))) for d in ds)

    assert beta(T) <= sel.threshold_delta
    assert beta(T - 1) > sel.threshold_delta * (1 - 1e-8)
    if policy == "laplace":
        assert isinstance(sel.event, ApproxDP) and sel.event.delta == delta
        assert sel.event.epsilon <= epsilon
    else:
        assert isinstance(sel.event, Gaussian) and sel.event.failure == sel.threshold_delta
        assert sel.event.failure < delta and sel.event.delta == delta
    assert math.isfinite(float(threshold_tail(sel.noise, 2)))


def test_selection_needs_delta_and_a_known_policy():
    with pytest.raises(ParameterError, match="delta > 0"):
        calibrate_selection(1.0, 0.0, "laplace", 1)
    with pytest.raises(ParameterError, match="selection must be one of"):
        calibrate_selection(1.0, 1e-6, "optimal", 1)


def test_weighted_weights_have_norm_at_most_one():
    for d in (1, 2, 3, 7, 100, 12345):
        assert d * unit_weight(d) ** 2 <= 1 << 40 < d * (unit_weight(d) + 1) ** 2


# ----------------------------------------------------------------------------- the releases


def test_histogram_of_unknown_keys_is_a_sorted_series_of_the_frequent_keys():
    counts = dps.histogram(KEYS, 1.0, 1e-6, rng=0)
    assert isinstance(counts, pd.Series) and counts.name == "count"
    assert list(counts.index) == sorted(counts.index)
    truth = pd.Series(KEYS).value_counts()
    assert set(truth[truth >= 200].index) <= set(counts.index)  # far above the threshold (about 28)
    assert not set(truth[truth <= 2].index) & set(counts.index)  # far below it
    assert (abs(counts - truth[counts.index]) < 30).all()  # discrete Laplace, b = 2: 30 is 15 b


def test_one_release_one_ledger_entry_with_the_selection_and_its_composition():
    acc = dps.Accountant(10.0, 1e-5, composition="basic")
    dps.histogram(KEYS, 1.0, 1e-6, rng=0, accountant=acc)
    dps.count(KEYS, 1.0, 1e-6, by=KEYS, privacy_unit=UNITS, max_rows=1, max_groups=3, rng=0, accountant=acc)
    dps.mean(X, 1.0, 1e-6, by=KEYS, bounds=(0, 10), privacy_unit=UNITS, max_rows=2, max_groups=3, rng=0, accountant=acc)
    first, second, third = acc.ledger
    assert [type(e).__name__ for e in first.events] == ["ApproxDP"]  # the selection's counts are the histogram
    assert (first.epsilon, first.delta) == (1.0, 1e-6)
    assert "parallel composition" in first.note and "Laplace thresholding" in first.note
    assert [type(e).__name__ for e in second.events] == ["Gaussian"]  # Gaussian thresholding, counts reused
    assert second.events[0].failure > 0 and "moves at most 6 keys" in second.note
    assert "weighted Gaussian" in third.note and len(third.events) == 3  # selection, shifted sum, count
    assert third.epsilon <= 1.0 and third.delta <= 1e-6
    assert acc.spent[0] <= 3.0 + 1e-12


@pytest.mark.parametrize("kind", ["count", "sum", "mean", "variance"])
def test_public_categories_give_one_value_per_category_in_their_order(kind):
    categories = ["k3", "k1", "k2", "absent"]
    keep = np.isin(KEYS, categories[:3])
    f = getattr(dps, kind)
    extra = {} if kind == "count" else {"bounds": (0, 10)}
    out = f(X[keep], 2.0, by=KEYS[keep], categories=categories, rng=0, **extra)
    assert list(out.index) == categories
    truth = pd.DataFrame({"k": KEYS[keep], "x": X[keep]}).groupby("k")["x"]
    expected = {"count": truth.size(), "sum": truth.sum(), "mean": truth.mean(), "variance": truth.var(ddof=0)}[kind]
    tolerance = {"count": 40, "sum": 400, "mean": 0.5, "variance": 3.0}[kind]
    assert (abs(out[categories[:3]] - expected[categories[:3]]) < tolerance).all()


def test_a_key_outside_the_categories_raises_before_any_charge():
    acc = dps.Accountant(1.0)
    with pytest.raises(OutOfBoundsError, match="not in the public categories"):
        dps.sum(X, 1.0, by=KEYS, categories=["k1"], bounds=(0, 10), accountant=acc)
    assert acc.ledger == []


def test_tables_name_keys_and_columns():
    frame = pd.DataFrame({"page": KEYS, "person": UNITS, "seconds": X, "clicks": np.round(X)})
    out = dps.mean(
        frame,
        1.0,
        1e-6,
        by="page",
        bounds={"seconds": (0, 10), "clicks": (0, 10)},
        privacy_unit="person",
        max_rows=2,
        max_groups=2,
        rng=0,
    )
    assert list(out.columns) == ["seconds", "clicks"] and out.index.name == "page"
    single = dps.sum(frame[["page", "seconds"]], 1.0, 1e-6, by="page", bounds=(0, 10), rng=0)
    assert isinstance(single, pd.Series) and single.name == "seconds"
    counts = dps.count(frame, 1.0, 1e-6, by="page", rng=0)
    assert counts.name == "count" and counts.index.name == "page"


def test_polars_in_polars_out():
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"page": KEYS.tolist(), "seconds": X})
    out = dps.mean(frame, 1.0, 1e-6, by="page", bounds=(0, 10), rng=0)
    assert isinstance(out, pl.DataFrame) and out.columns == ["page", "seconds"]
    reference = dps.mean(X, 1.0, 1e-6, by=KEYS, bounds=(0, 10), rng=0)
    assert out["page"].to_list() == list(reference.index)
    np.testing.assert_array_equal(out["seconds"].to_numpy(), reference.to_numpy())
    histogram = dps.histogram(frame["page"], 1.0, 1e-6, rng=0)
    assert histogram.columns == ["page", "count"]


def test_grouped_quantile_per_key():
    """Each key's median lies between its data's quantiles at ranks t ± r: ε' = (ε/2)/Δ_tot with Δ_tot = 2(1 +
    2^-10), and P(|c(j) − t| > r) <= (2^16 + 1)·exp(−ε'r/2) < 5e-4 for r = 150 (the best grid point has weight 1)."""
    out = dps.quantile(X, 0.5, 1.0, bounds=(0, 10), by=KEYS, delta=1e-6, rng=0)
    assert set(out.index) <= set(KEYS.tolist()) and len(out) >= 3
    large = [k for k in out.index if np.count_nonzero(KEYS == k) >= 1000]
    assert large
    for key in large:
        values = np.sort(X[KEYS == key])
        t, r = values.size / 2, 150
        assert values[int(t - r)] - 10 / 2**16 <= out[key] <= values[int(t + r)] + 10 / 2**16
    one = KEYS == "k1"
    public = dps.quantile(X[one], 0.5, 1.0, bounds=(0, 10), by=KEYS[one], categories=["k1", "nobody"], rng=0)
    assert list(public.index) == ["k1", "nobody"] and 0 <= public["nobody"] <= 10


@pytest.mark.parametrize("kind", ["count", "sum", "mean", "variance", "quantile"])
def test_no_key_selected_is_an_empty_result_not_an_error_after_the_charge(kind):
    """Ten units of one row each, every key their own: nothing reaches the threshold; the release is charged and
    empty (Series, DataFrame or polars) — nothing after the charge may fail on particular data."""
    acc = dps.Accountant(10.0, 1e-3)
    keys, x = np.array([f"z{i}" for i in range(10)]), np.linspace(0, 1, 10)
    frame = pd.DataFrame({"k": keys, "a": x, "b": x})
    if kind == "quantile":
        out = dps.quantile(x, 0.5, 1.0, bounds=(0, 1), by=keys, delta=1e-6, rng=0, accountant=acc)
    elif kind == "count":
        out = dps.count(x, 1.0, 1e-6, by=keys, rng=0, accountant=acc)
    else:
        out = getattr(dps, kind)(frame, 1.0, 1e-6, by="k", bounds=(0, 1), rng=0, accountant=acc)
        assert list(out.columns) == ["a", "b"]
    assert len(out) == 0 and len(acc.ledger) == 1


def test_the_keys_released_depend_on_their_units_not_their_rows():
    """A key held by one unit with 500 rows: released as a row-level key (500 'people'), never as a unit's."""
    keys = np.r_[KEYS, np.full(500, "one-person")]
    units = np.r_[UNITS, np.full(500, 10**6)]
    rows_level = dps.histogram(keys, 1.0, 1e-6, rng=0)
    unit_level = dps.histogram(keys, 1.0, 1e-6, privacy_unit=units, max_rows=1, max_groups=1, rng=0)
    assert "one-person" in rows_level.index and "one-person" not in unit_level.index


# ----------------------------------------------------------------------------- bad input, before any charge


BAD = [
    (dict(max_groups=0), ParameterError, "max_groups must be an integer in \\[1, 4096\\]; got 0"),
    (dict(max_groups=1.5), ParameterError, "max_groups must be an integer in \\[1, 4096\\]; got 1.5"),
    (dict(max_groups=True), ParameterError, "max_groups must be an integer"),
    (dict(max_groups="2"), ParameterError, "max_groups must be an integer"),
    (dict(max_groups=2, privacy_unit=None, max_rows=None), ParameterError, "max_groups applies only with privacy_unit"),
    (dict(by=KEYS[:-1]), DataValidationError, f"by must have one key per row of x \\({N} rows\\); got {N - 1}"),
    (dict(by=np.r_[KEYS[:-2], [None, None]].astype(object)), DataValidationError, "by has 2 missing key"),
    (dict(by=np.r_[np.arange(N - 1.0), np.nan]), DataValidationError, "by has 1 missing key"),
    (dict(delta=0.0), ParameterError, "needs delta > 0.*categories"),
    (dict(categories=["k1", "k1"]), ParameterError, "categories must be unique"),
    (dict(categories=[]), ParameterError, "categories must hold at least one label"),
    (dict(selection="optimal"), ParameterError, "selection must be one of"),
    (dict(selection="laplace", categories=list(np.unique(KEYS))), ParameterError, "selection applies only"),
    (dict(by="page"), ParameterError, "by='page' names a column, which needs a DataFrame"),
    (dict(axis=1), ParameterError, "axis must be None or 0"),
    (dict(bounds=(0, 5)), OutOfBoundsError, "outside the declared bounds"),
]


@pytest.mark.parametrize("bad,error,match", BAD)
@pytest.mark.parametrize("kind", ["sum", "mean"])
def test_bad_input_raises_before_any_charge(kind, bad, error, match):
    acc = dps.Accountant(10.0, 1e-3)
    args = dict(
        x=X,
        epsilon=1.0,
        delta=1e-6,
        by=KEYS,
        bounds=(0, 10),
        privacy_unit=UNITS,
        max_rows=2,
        max_groups=2,
        rng=0,
        accountant=acc,
    )
    args.update(bad)
    with pytest.raises(error, match=match):
        getattr(dps, kind)(**args)
    assert acc.ledger == []


def test_bad_input_of_the_other_grouped_releases():
    acc = dps.Accountant(10.0, 1e-3)
    with pytest.raises(ParameterError, match="range is required.*delta > 0 to select the keys privately"):
        dps.histogram(KEYS, 1.0, accountant=acc)
    with pytest.raises(ParameterError, match="categories, max_groups apply only to grouped releases"):
        dps.count(KEYS, 1.0, categories=["a"], max_groups=2, accountant=acc)
    with pytest.raises(ParameterError, match="q must be one level"):
        dps.quantile(X, [0.1, 0.9], 1.0, bounds=(0, 10), by=KEYS, delta=1e-6, accountant=acc)
    with pytest.raises(ParameterError, match="apply only to grouped quantiles"):
        dps.quantile(X, 0.5, 1.0, bounds=(0, 10), delta=1e-6, accountant=acc)
    with pytest.raises(ParameterError, match="by='nope' is not a column of x"):
        dps.count(pd.DataFrame({"a": KEYS}), 1.0, 1e-6, by="nope", accountant=acc)
    with pytest.raises(ParameterError, match="max_groups and selection apply to histograms of keys"):
        dps.histogram(X, 1.0, range=(0, 10), max_groups=2, accountant=acc)
    with pytest.raises(DataValidationError, match="one kind"):
        dps.histogram(np.array(["a", 1] * 10, dtype=object), 1.0, 1e-6, accountant=acc)
    assert acc.ledger == []


# ----------------------------------------------------------------------------- Dask


@pytest.mark.parametrize("kind", ["count", "sum", "mean", "variance", "quantile"])
@pytest.mark.parametrize(
    "units", [{}, dict(privacy_unit="u", max_rows=2, max_groups=2), dict(privacy_unit="u", max_rows=3)]
)
def test_dask_gives_the_numpy_release(kind, units):
    dd = pytest.importorskip("dask.dataframe")
    frame = pd.DataFrame({"k": KEYS, "u": UNITS, "x": X})[["k", "x"] + (["u"] if units else [])]
    lazy = dd.from_pandas(frame, npartitions=5)
    if kind == "quantile":
        release = lambda data: dps.quantile(data, 0.5, 1.0, bounds=(0, 10), by="k", delta=1e-6, rng=3, **units)  # noqa: E731
    else:
        extra = {} if kind == "count" else {"bounds": (0, 10)}
        release = lambda data: getattr(dps, kind)(data, 1.0, 1e-6, by="k", rng=3, **units, **extra)  # noqa: E731
    pd.testing.assert_series_equal(release(frame), release(lazy))


# ----------------------------------------------------------------------------- composition


@pytest.mark.parametrize("rule", ["basic", "zcdp", "pld"])
@pytest.mark.parametrize("k", [1, 3])
def test_a_grouped_release_fits_its_own_budget_under_every_rule_and_composes_as_from_scratch(rule, k):
    """One release of (ε, δ) fits an accountant of exactly (ε, δ) (the selection's δ inside it); under basic
    composition a second does not (the tight rules may find room: the Gaussian pieces compose better than their
    sum); the running total equals the ledger composed from scratch, and never exceeds the basic sum."""
    from dpstats.accounting import compose

    acc = dps.Accountant(1.0, 1e-6, composition=rule)
    release = dict(by=KEYS, bounds=(0, 10), privacy_unit=UNITS, max_rows=2, max_groups=k, accountant=acc)
    dps.mean(X, 1.0, 1e-6, rng=0, **release)
    assert acc.spent[0] <= 1.0 and acc.spent[1] <= 1e-6
    if rule == "basic":
        with pytest.raises(dps.BudgetExceededError):
            dps.mean(X, 0.5, 1e-7, rng=1, **release)
    else:
        try:
            dps.mean(X, 0.5, 1e-7, rng=1, **release)
        except dps.BudgetExceededError:
            pass
    events = [e for entry in acc.ledger for e in entry.events]
    assert compose(events, rule, 1e-6) == acc.spent
    assert acc.spent[0] <= compose(events, "basic", 1e-6)[0]


def test_the_fallback_sort_keeps_k_keys_per_unit_too(monkeypatch):
    """With more priority bits than one int64 holds beside the unit and the position, the keys are chosen by a
    three-key sort: still min(d_u, k) keys per unit, whatever the order of the rows."""
    monkeypatch.setattr("dpstats._kernels.groups.PRIORITY_BITS", 62)
    ids, k = canonical_ids(UNITS), 2
    spec = GroupSpec(max_rows=1, max_groups=k, key=13, by_unit=True)
    table = key_table(KEYS, ids, None, spec)
    degree = np.array([np.unique(KEYS[UNITS == u]).size for u in np.unique(UNITS)])
    assert table.units.sum() == np.minimum(degree, k).sum()
    order = np.random.default_rng(4).permutation(N)
    np.testing.assert_array_equal(key_table(KEYS[order], ids[order], None, spec).units, table.units)
