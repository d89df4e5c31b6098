"""Privacy units: contribution bounding, the unit-level releases of every mechanism, and their bad input."""

from __future__ import annotations

import numpy as np
import pytest
from _registry import examples
from scipy import stats

import dpstats as dps
from dpstats._kernels.units import canonical_ids, row_hashes, select_rows
from dpstats.exceptions import DataValidationError, ParameterError

RNG = np.random.default_rng(2023)
N_ROWS = 3000
IDS = np.concatenate([np.zeros(400, dtype=np.int64), RNG.integers(1, 600, N_ROWS - 400)])  # unit 0: 400 rows
VALUES = RNG.uniform(0, 10, N_ROWS)
X = RNG.normal(size=(N_ROWS, 4)) * [1.0, 0.7, 0.4, 0.2]
X /= np.linalg.norm(X, axis=1, keepdims=True).max()
Y = np.where(X[:, 0] + 0.1 * RNG.normal(size=N_ROWS) > 0, 1.0, -1.0)
VIEW_Y = RNG.normal(size=(N_ROWS, 2))
VIEW_Y *= 0.79 / np.linalg.norm(VIEW_Y, axis=1, keepdims=True).max()  # with 0.6·X: joint rows of norm < 1
LABELS = RNG.choice(["a", "b", "c"], N_ROWS)


# ----------------------------------------------------------------------------- the bounding kernel


def _kept_per_unit(ids, keep):
    units, counts = np.unique(ids, return_counts=True)
    kept = np.array([np.count_nonzero(keep & (ids == u)) for u in units])
    return units, counts, kept


@pytest.mark.parametrize("m", [1, 3, 50])
def test_each_unit_keeps_min_of_its_rows_and_max_rows(m):
    keep, n_units = select_rows(canonical_ids(IDS), (VALUES,), m, key=7)
    units, counts, kept = _kept_per_unit(IDS, keep)
    assert n_units == units.size
    np.testing.assert_array_equal(kept, np.minimum(counts, m))


def test_the_kept_rows_do_not_depend_on_the_order_of_the_rows():
    order = RNG.permutation(N_ROWS)
    keep, _ = select_rows(canonical_ids(IDS), (X, Y), 5, key=11)
    keep_shuffled, _ = select_rows(canonical_ids(IDS[order]), (X[order], Y[order]), 5, key=11)
    kept = np.sort(row_hashes((X[keep], Y[keep]), 0))
    kept_shuffled = np.sort(row_hashes((X[order][keep_shuffled], Y[order][keep_shuffled]), 0))
    np.testing.assert_array_equal(kept, kept_shuffled)


def test_a_units_choice_depends_on_its_own_rows_only():
    """The guarantee's premise: changing unit 0's rows leaves every other unit's kept rows as they were."""
    keep, _ = select_rows(canonical_ids(IDS), (VALUES,), 5, key=3)
    changed = VALUES.copy()
    changed[IDS == 0] = RNG.uniform(0, 10, 400)
    keep_changed, _ = select_rows(canonical_ids(IDS), (changed,), 5, key=3)
    others = IDS != 0
    np.testing.assert_array_equal(keep[others], keep_changed[others])


def test_the_choice_is_uniform_within_a_unit():
    """Over random keys, each of a unit's 20 distinct rows is kept with probability m/20 (χ² at α = 1e-4)."""
    ids, values, m, trials = np.zeros(20, dtype=np.int64), np.arange(20.0), 4, 5000
    keys = np.random.default_rng(5).integers(0, 2**63, trials)
    counts = sum(select_rows(ids, (values,), m, int(k))[0].astype(int) for k in keys)
    expected = np.full(20, trials * m / 20)
    assert stats.chisquare(counts, expected).pvalue > 1e-4


def test_identical_rows_are_chosen_with_their_multiplicity():
    """99 equal rows and one other, max_rows = 1: the other is kept with probability 1/100, not 1/2."""
    ids, values, trials = np.zeros(100, dtype=np.int64), np.r_[np.zeros(99), 1.0], 4000
    keys = np.random.default_rng(6).integers(0, 2**63, trials)
    hits = sum(bool(select_rows(ids, (values,), 1, int(k))[0][-1]) for k in keys)
    assert stats.binomtest(hits, trials, 0.01).pvalue > 1e-4


def test_identifiers_of_every_kind():
    np.testing.assert_array_equal(canonical_ids(np.array([3, 3.0, -0.0, 0.0])), [3.0, 3.0, 0.0, 0.0])
    assert canonical_ids(np.array(["x", "y"], dtype=object)).dtype.kind == "U"
    assert canonical_ids([True, False]).dtype == np.int64
    for bad, match in [
        (np.array([1.0, np.nan]), "missing"),
        (np.array(["a", None], dtype=object), "missing"),
        (np.array([1, "a"], dtype=object), "one kind"),
        (np.zeros((2, 2)), "1-D"),
    ]:
        with pytest.raises(DataValidationError, match=match):
            canonical_ids(bad)


# ----------------------------------------------------------------------------- every mechanism


def _df():
    import pandas as pd

    return pd.DataFrame({"user": IDS, "amount": VALUES})


def _with_units(declaration, example):
    """``run(ids, max_rows, rng, accountant)``: the declared example on the unit data, with ``ids`` (None: without a
    unit) and ``max_rows``, its rows in the order of the module's current arrays (see the sorted-table test)."""

    def run(ids, max_rows, rng, accountant):
        data = example.data()[:-1]
        if ORDER is not None:
            data = tuple(a[ORDER] for a in data)
        return declaration.run(example, (*data, ids), rng, accountant, max_rows=max_rows)

    return run


#: every declared example of a unit-level release on the unit data (:mod:`tests._registry`). The accountants below
#: allow unproven guarantees (TukeyEM's sampler is floating point): these tests check the units, not the proofs.
MECHANISMS = {label: _with_units(*found) for label, found in examples("units").items()}
#: a permutation of the rows the examples read (the sorted-table test), or None
ORDER = None


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_every_mechanism_bounds_units_and_notes_it(name):
    acc = dps.Accountant(100.0, 1e-3, allow_unproven=True)
    out = np.asarray(MECHANISMS[name](IDS, 5, 0, acc), dtype=float)
    assert np.isfinite(out).all()
    assert acc.ledger and all("privacy unit" in entry.note for entry in acc.ledger)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_a_sorted_table_gives_the_same_release(name):
    """The same seed, the rows in another order: the kept rows, and so the release, are the same bit for bit."""
    global ORDER
    order = RNG.permutation(N_ROWS)
    first = np.asarray(MECHANISMS[name](IDS, 5, 1, None), dtype=float)
    try:
        ORDER = order
        second = np.asarray(MECHANISMS[name](IDS[order], 5, 1, None), dtype=float)
    finally:
        ORDER = None
    np.testing.assert_array_equal(first, second)


def _charges(name) -> bool:
    """Whether the row-level call of ``name`` charges an accountant (count without a unit is public: it does not)."""
    acc = dps.Accountant(1000.0, 1e-2, allow_unproven=True)
    MECHANISMS[name](None, None, 0, acc)
    return bool(acc.ledger)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_every_mechanism_states_its_relation_and_a_block_takes_only_its_own(name):
    """Each release records the relation it protects; a block opened for units takes the unit-level release, one
    opened by rows refuses it (a unit's rows may lie in several parts) and takes the row-level one, and the reverse:
    refused before anything is recorded. A mechanism that did not state its relation would be refused by both."""
    acc = dps.Accountant(1000.0, 1e-2, allow_unproven=True)
    MECHANISMS[name](IDS, 5, 0, acc)
    MECHANISMS[name](None, None, 0, acc)
    assert {e.relation for e in acc.ledger} == ({"unit", "row"} if _charges(name) else {"unit"})
    acc = dps.Accountant(1000.0, 1e-2, allow_unproven=True)
    with acc.parallel(1, by="unit") as block:
        MECHANISMS[name](IDS, 5, 0, block[0])
        if _charges(name):
            with pytest.raises(ParameterError, match="protects one row"):
                MECHANISMS[name](None, None, 0, block[0])
    with acc.parallel(1) as block:
        with pytest.raises(ParameterError, match=r"by='unit'\) and split by a public function of the unit's"):
            MECHANISMS[name](IDS, 5, 0, block[0])
        MECHANISMS[name](None, None, 0, block[0])
    blocks = {}
    for entry in acc.ledger:
        blocks.setdefault(entry.part.split(",")[0], set()).add(entry.relation)
    assert blocks == ({"parallel 1": {"unit"}, "parallel 2": {"row"}} if _charges(name) else {"parallel 1": {"unit"}})


def test_a_split_by_rows_does_not_charge_unit_level_releases_in_parallel():
    """The review's reproducer (parallel_units.py): 1,000 rows of 50 people split in two halves by position, a
    unit-level mean at ε = 1 in each. Every person has rows in both halves, so the two means compose to ε = 2; the
    block by rows used to charge 1.0. Now it refuses (nothing recorded); a split by a keyed hash of the identifier
    puts each person in one part, and the block by units charges 1.0."""
    import hashlib

    rng = np.random.default_rng(0)
    n, ids, x = 1000, rng.integers(0, 50, 1000), rng.uniform(0, 10, 1000)
    halves = np.array_split(np.arange(n), 2)
    acc = dps.Accountant(2.0, 0.0, composition="basic")
    with acc.parallel(2) as block, pytest.raises(ParameterError, match="by='unit'"):
        dps.mean(x[halves[0]], 1.0, bounds=(0, 10), privacy_unit=ids[halves[0]], max_rows=5, rng=1, accountant=block[0])
    assert acc.ledger == [] and acc.spent == (0.0, 0.0)
    for rows in halves:  # outside a block they compose
        dps.mean(x[rows], 1.0, bounds=(0, 10), privacy_unit=ids[rows], max_rows=5, rng=1, accountant=acc)
    assert acc.spent[0] == sum(e.epsilon for e in acc.ledger) > 1.99
    part = np.array([hashlib.blake2b(str(i).encode(), key=b"public key").digest()[0] % 2 for i in ids])
    by_unit = dps.Accountant(1.0, 0.0, composition="basic")
    with by_unit.parallel(2, by="unit") as block:
        for i in range(2):
            rows = part == i
            dps.mean(x[rows], 1.0, bounds=(0, 10), privacy_unit=ids[rows], max_rows=5, rng=1, accountant=block[i])
    assert by_unit.spent[0] == max(e.epsilon for e in by_unit.ledger) <= 1.0
    assert [e.relation for e in by_unit.ledger] == ["unit", "unit"]


BAD = [
    (dict(privacy_unit=IDS, max_rows=None), ParameterError, "max_rows"),
    (dict(privacy_unit=None, max_rows=3), ParameterError, "max_rows applies only with privacy_unit"),
    (dict(privacy_unit=IDS, max_rows=0), ParameterError, "max_rows"),
    (dict(privacy_unit=IDS, max_rows=2.5), ParameterError, "max_rows"),
    (dict(privacy_unit=IDS, max_rows=True), ParameterError, "max_rows"),
    (dict(privacy_unit=IDS, max_rows="3"), ParameterError, "max_rows"),
    (dict(privacy_unit=IDS[:-1], max_rows=3), DataValidationError, "one identifier per row"),
    (dict(privacy_unit=np.where(IDS == 0, np.nan, IDS), max_rows=3), DataValidationError, "missing"),
    (dict(privacy_unit=np.where(IDS == 0, None, IDS).astype(object), max_rows=3), DataValidationError, "missing"),
    (dict(privacy_unit="user", max_rows=3), ParameterError, "names a column, which needs a DataFrame"),
]


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize("bad,error,match", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_privacy_unit_raises_before_any_charge(name, bad, error, match):
    acc = dps.Accountant(100.0, 1e-3)
    with pytest.raises(error, match=match):
        MECHANISMS[name](bad["privacy_unit"], bad["max_rows"], 0, acc)
    assert acc.ledger == []


def test_a_column_name_is_the_unit_and_never_a_value():
    import pandas as pd

    frame = pd.DataFrame({"user": IDS, "amount": VALUES})
    by_name = dps.mean(frame, 1.0, bounds={"amount": (0, 10)}, privacy_unit="user", max_rows=5, rng=3)
    by_array = dps.mean(frame[["amount"]], 1.0, bounds={"amount": (0, 10)}, privacy_unit=IDS, max_rows=5, rng=3)
    assert list(by_name.index) == ["amount"]
    assert by_name["amount"] == by_array["amount"]
    with pytest.raises(ParameterError, match="not a column"):
        dps.mean(frame, 1.0, bounds=(0, 10), privacy_unit="person", max_rows=5)
    polars = pytest.importorskip("polars")
    pl_frame = polars.DataFrame({"user": IDS, "amount": VALUES})
    assert float(dps.sum(pl_frame, 1.0, bounds=(0, 10), privacy_unit="user", max_rows=5, rng=3)["amount"][0]) == float(
        dps.sum(VALUES, 1.0, bounds=(0, 10), privacy_unit=IDS, max_rows=5, rng=3)
    )


def test_low_rank_refuses_a_privacy_unit_and_says_why():
    with pytest.raises(ParameterError, match="Aggregate each unit into one row"):
        dps.low_rank(np.eye(4) / 2, 1, 1.0, 1e-6, privacy_unit=[0, 0, 1, 1], max_rows=1)


def test_without_a_unit_the_count_is_public_and_with_one_row_per_unit_too():
    acc = dps.Accountant(1.0, 0.0, composition="basic")
    assert dps.count(VALUES, 1.0, accountant=acc) == N_ROWS
    assert dps.count(VALUES, 1.0, privacy_unit=IDS, max_rows=1, accountant=acc) == np.unique(IDS).size
    assert acc.ledger == []


def test_every_record_is_checked_even_those_not_kept():
    values = VALUES.copy()
    values[IDS == 0] = 11.0  # unit 0 keeps 5 of its 400 rows: 395 out-of-bounds rows are never used
    with pytest.raises(dps.OutOfBoundsError, match="400 value"):
        dps.mean(values, 1.0, bounds=(0, 10), privacy_unit=IDS, max_rows=5, rng=0)
    rows = X.copy()
    rows[IDS == 0] *= 10
    with pytest.raises(dps.OutOfBoundsError, match="row"):
        dps.pca_ag(rows, 1.0, 1e-6, privacy_unit=IDS, max_rows=5, rng=0)


# ----------------------------------------------------------------------------- estimators


def test_estimators_take_the_unit_in_fit_and_route_it_in_pipelines_and_searches():
    import sklearn
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    from dpstats.estimators import DPPCA, DPLogisticRegression

    acc = dps.Accountant(1000.0, 1e-2)
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_pipeline(
            DPPCA(2, max_rows=5, random_state=0, accountant=acc).set_fit_request(privacy_unit=True),
            DPLogisticRegression(classes=[-1, 1], max_rows=5, random_state=0, accountant=acc).set_fit_request(
                privacy_unit=True
            ),
        )
        pipe.fit(X, Y, privacy_unit=IDS)
        search = GridSearchCV(pipe, {"dplogisticregression__lam": [0.01, 0.1]}, cv=2).fit(X, Y, privacy_unit=IDS)
    assert search.best_estimator_ is not None
    assert len(acc.ledger) == 2 + 2 * (2 * 2 + 1)  # the pipeline, then two steps per fit of the search
    assert all("privacy unit" in entry.note for entry in acc.ledger)
    with pytest.raises(ParameterError, match="max_rows"):
        DPPCA(2).fit(X, privacy_unit=IDS)


# ----------------------------------------------------------------------------- Dask


def test_dask_bounds_units_on_the_cluster_and_gives_the_numpy_release():
    """The same kept rows as in memory (the priorities are the rows' own): exact statistics agree bit for bit;
    floating-point ones agree within their public error bounds (the rows arrive in the shuffle's order)."""
    import dask.array as da

    x, ids = da.from_array(VALUES, chunks=700), da.from_array(IDS, chunks=700)
    for release in (
        lambda v, u: dps.mean(v, 1.0, bounds=(0, 10), privacy_unit=u, max_rows=5, rng=4),
        lambda v, u: dps.variance(v, 1.0, 1e-6, bounds=(0, 10), privacy_unit=u, max_rows=5, rng=4),
        lambda v, u: dps.sum(v, 1.0, bounds=(0, 10), privacy_unit=u, max_rows=5, rng=4),
        lambda v, u: dps.count(v, 1.0, privacy_unit=u, max_rows=5, rng=4),
        lambda v, u: dps.histogram(v, 1.0, bins=4, range=(0, 10), privacy_unit=u, max_rows=5, rng=4)[0],
    ):
        np.testing.assert_array_equal(release(x, ids), release(VALUES, IDS))
        np.testing.assert_array_equal(release(x, IDS), release(VALUES, IDS))  # NumPy identifiers for dask data
    Xd = da.from_array(X, chunks=(700, 4))
    V_dask = dps.pca(Xd, 2, 1.0, mechanism="ppm", privacy_unit=ids, max_rows=5, rng=4)
    V_numpy = dps.pca(X, 2, 1.0, mechanism="ppm", privacy_unit=IDS, max_rows=5, rng=4)
    assert abs(abs(float(V_dask[:, 0] @ V_numpy[:, 0])) - 1) < 1e-6
    with pytest.raises(dps.OutOfBoundsError):
        dps.mean(da.from_array(VALUES + 20, chunks=700), 1.0, bounds=(0, 10), privacy_unit=ids, max_rows=5, rng=4)


def _counted(values, chunks, reads):
    """``values`` as a dask array whose every chunk counts, in ``reads``, how often it is computed."""
    import dask.array as da

    def block(block_id=None):
        reads[block_id[0]] = reads.get(block_id[0], 0) + 1
        start = block_id[0] * chunks
        return values[start : start + chunks]

    sizes = tuple(min(chunks, len(values) - s) for s in range(0, len(values), chunks))
    return da.map_blocks(block, chunks=(sizes,), dtype=values.dtype, meta=np.empty(0, values.dtype))


@pytest.mark.parametrize("release", ["mean", "variance", "sum"])
def test_dask_unit_level_moments_read_the_data_once(release):
    """The record check, the bounding, the unit count and the sums in one shuffle: every chunk of the values and
    of the identifiers is computed once, and the release is NumPy's bit for bit."""
    import dask

    call = getattr(dps, release)
    reads_x, reads_ids = {}, {}
    x, ids = _counted(VALUES, 700, reads_x), _counted(IDS, 700, reads_ids)
    with dask.config.set(scheduler="sync"):
        released = call(x, 1.0, 1e-6, bounds=(0, 10), privacy_unit=ids, max_rows=5, rng=4)
    assert released == call(VALUES, 1.0, 1e-6, bounds=(0, 10), privacy_unit=IDS, max_rows=5, rng=4)
    assert set(reads_x.values()) == {1} and len(reads_x) == 5
    assert set(reads_ids.values()) == {1} and len(reads_ids) == 5


@pytest.mark.parametrize("chunks", [700, 1_000])
def test_dask_checks_every_record_kept_or_not_before_the_charge(chunks):
    """Unit 0 keeps 5 of its 400 rows: out-of-bounds or NaN values in all of them (kept or not), or in rows of
    other units in the last chunk, raise with the count over every row, and nothing is charged."""
    import dask.array as da

    ids = da.from_array(IDS, chunks=chunks)
    for rows, value, error, match in (
        (IDS == 0, 11.0, dps.OutOfBoundsError, "400 value"),
        (np.arange(N_ROWS) >= N_ROWS - 3, -1.0, dps.OutOfBoundsError, "3 value"),
        (IDS == 0, np.nan, DataValidationError, "400 NaN"),
    ):
        values = VALUES.copy()
        values[rows] = value
        for x, u in ((values, IDS), (da.from_array(values, chunks=chunks), ids)):
            acc = dps.Accountant(100.0, 1e-3)
            with pytest.raises(error, match=match):
                dps.mean(x, 1.0, bounds=(0, 10), privacy_unit=u, max_rows=5, rng=0, accountant=acc)
            assert acc.ledger == []
    values = VALUES.copy()
    values[IDS == 0] = 11.0
    assert dps.mean(
        da.from_array(values, chunks=chunks), 1.0, bounds=(0, 10), clip=True, privacy_unit=ids, max_rows=5, rng=0
    ) == dps.mean(values, 1.0, bounds=(0, 10), clip=True, privacy_unit=IDS, max_rows=5, rng=0)


def test_dask_unit_level_means_of_records_with_several_axes():
    """Records of any shape (axis 0 of a 3-D array, or another axis) are flattened for the shuffle and bounded as
    in memory."""
    import dask.array as da

    cube = RNG.uniform(0, 1, (N_ROWS, 2, 3))
    lazy_cube = da.from_array(cube, chunks=(700, 1, 3))
    for axis, data, lazy_data in ((0, cube, lazy_cube), (2, cube.transpose(1, 2, 0), lazy_cube.transpose(1, 2, 0))):
        np.testing.assert_array_equal(
            dps.mean(
                lazy_data, 1.0, 1e-6, bounds=(0, 1), axis=axis, privacy_unit=da.from_array(IDS, 900), max_rows=3, rng=5
            ),
            dps.mean(data, 1.0, 1e-6, bounds=(0, 1), axis=axis, privacy_unit=IDS, max_rows=3, rng=5),
        )


# ----------------------------------------------------------------------------- identifiers: one rule, every engine


def _object_ids(values):
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


# Unit 7 has 20 rows of value 10, written half as the int 7 and half as the float 7.0 (or 0 as 0.0 and -0.0);
# 30 other units have one row of value 0: with max_rows=2, the sum is at most 2·10 = 20 (it was 40 on Dask).
SPLIT_IDS = {
    "int and float": _object_ids([7] * 10 + [7.0] * 10 + list(range(100, 130))),
    "zero and minus zero": np.r_[np.where(np.arange(20) % 2, -0.0, 0.0), np.arange(100.0, 130.0)],
}
SPLIT_VALUES = np.r_[np.full(20, 10.0), np.zeros(30)]


@pytest.mark.parametrize("kind", sorted(SPLIT_IDS))
@pytest.mark.parametrize("chunks", [50, 13])
def test_dask_identifiers_are_canonical_like_numpy_ones(kind, chunks):
    import dask
    import dask.array as da

    ids = SPLIT_IDS[kind]
    x, lazy_ids = da.from_array(SPLIT_VALUES, chunks=chunks), da.from_array(ids, chunks=chunks)
    with dask.config.set(scheduler="sync"):
        for release in (
            lambda v, u: dps.sum(v, 1e6, bounds=(0, 10), privacy_unit=u, max_rows=2, rng=0),
            lambda v, u: dps.mean(v, 1e6, bounds=(0, 10), privacy_unit=u, max_rows=2, rng=0),
            lambda v, u: dps.count(v, 1.0, privacy_unit=u, max_rows=1),
            lambda v, u: dps.count(v, 1.0, privacy_unit=u, max_rows=3, rng=0),
        ):
            assert release(x, lazy_ids) == release(SPLIT_VALUES, ids)
        assert abs(dps.sum(x, 1e6, bounds=(0, 10), privacy_unit=lazy_ids, max_rows=2, rng=0) - 20) < 1e-3
        assert dps.count(x, 1.0, privacy_unit=lazy_ids, max_rows=1) == 31


@pytest.mark.parametrize(
    "name,call",
    [
        ("count", lambda x, u, a: dps.count(x, 1.0, privacy_unit=u, max_rows=3, rng=0, accountant=a)),
        ("count m=1", lambda x, u, a: dps.count(x, 1.0, privacy_unit=u, max_rows=1, accountant=a)),
        ("mean", lambda x, u, a: dps.mean(x, 1.0, bounds=(0, 10), privacy_unit=u, max_rows=3, rng=0, accountant=a)),
        (
            "mean by",
            lambda x, u, a: dps.mean(
                x, 1.0, 1e-6, by=LABELS, bounds=(0, 10), privacy_unit=u, max_rows=3, rng=0, accountant=a
            ),
        ),
    ],
)
def test_dask_refuses_missing_identifiers_like_numpy(name, call):
    import dask.array as da

    ids = IDS.astype(np.float64)
    ids[[5, 900, 2999]] = np.nan
    for x, u in ((VALUES, ids), (da.from_array(VALUES, chunks=700), da.from_array(ids, chunks=700))):
        acc = dps.Accountant(100.0, 1e-3)
        with pytest.raises(DataValidationError, match="privacy_unit has 3 missing identifier"):
            call(x, u, acc)
        assert acc.ledger == []


def test_dask_refuses_kinds_mixed_across_blocks():
    """Each block is of one kind (strings, then integers); together they are not."""
    import dask.array as da

    ids = _object_ids(["a"] * 25 + list(range(25)))
    for u in (ids, da.from_array(ids, chunks=25)):
        with pytest.raises(DataValidationError, match="one kind"):
            dps.count(SPLIT_VALUES, 1.0, privacy_unit=u, max_rows=1)


def test_no_conversion_merges_two_identifiers():
    """Identifiers are encoded injectively or refused: 2^53 and 2^53 + 1 beside a non-integer float (float64 would
    merge them), 'a' and 'a\\x00' (NumPy strings drop trailing NULs)."""
    big = _object_ids([2**53, 2**53 + 1, 0.5])
    with pytest.raises(DataValidationError, match=r"privacy_unit mixes 1 integer\(s\) that float64 cannot hold"):
        canonical_ids(big)
    assert np.unique(canonical_ids(_object_ids([2**53, 2**53 + 1, 2.0]))).size == 3  # int64 holds them all
    assert np.unique(canonical_ids(_object_ids([2**53, 2.0**60, 0.5]))).size == 3  # float64 holds them all
    with pytest.raises(DataValidationError, match=r"1 identifier\(s\) ending in a NUL"):
        canonical_ids(_object_ids(["a", "a\x00"]))
    with pytest.raises(DataValidationError, match="by has 1 identifier"):
        canonical_ids(_object_ids(["a", "b\x00"]), "by")
    # the error counts, never prints, the identifiers
    with pytest.raises(DataValidationError) as err:
        canonical_ids(_object_ids([12345678901234567891, 0.25]))
    assert "12345678901234567891" not in str(err.value) and "0.25" not in str(err.value)


def test_byte_strings_are_identifiers_when_ascii_and_refused_otherwise():
    assert canonical_ids(_object_ids([b"a", b"b", b"a"])).tolist() == ["a", "b", "a"]
    assert canonical_ids(np.array([b"a", b"b"])).tolist() == ["a", "b"]
    for bad in (np.array([b"\xff", b"b"]), _object_ids([b"\xff", b"b"])):
        with pytest.raises(DataValidationError, match=r"privacy_unit has 1 byte string\(s\) that are not ASCII"):
            canonical_ids(bad)
    with pytest.raises(DataValidationError, match="one kind"):
        canonical_ids(_object_ids([b"a", "a"]))


# ----------------------------------------------------------------------------- the row hash and ties


def test_rows_differing_by_signs_of_two_columns_hash_apart():
    """A linear row hash (Σ bits_j·M_j mod 2^64) gave (1.5, 2) and (-1.5, -2) equal hashes for every key."""
    rows = (np.array([[1.5, 2.0], [-1.5, -2.0], [2.0, 1.5]]),)
    for key in range(20):
        hashes = row_hashes(rows, key)
        assert np.unique(hashes).size == 3
    words = np.array(["ab", "ba", "a\x00b"])
    assert np.unique(row_hashes((words,), 5)).size == 3
    # a string's hash does not depend on the width of its array (the Dask partitions' widths differ)
    assert row_hashes((np.array(["ab"]),), 5)[0] == row_hashes((np.array(["ab", "abcdef"]),), 5)[0]


SIGN_IDS = np.r_[[0, 0], np.arange(1, 41)]
SIGN_X = np.r_[[[1.5, 2.0], [-1.5, -2.0]], np.random.default_rng(0).uniform(-5, 5, (40, 2))]


def test_which_of_two_sign_twin_rows_is_kept_does_not_depend_on_their_order():
    swapped = np.r_[[1, 0], np.arange(2, 42)]
    for seed in range(20):
        a = dps.mean(SIGN_X, 1e6, bounds=(-5, 5), axis=0, privacy_unit=SIGN_IDS, max_rows=1, rng=seed)
        b = dps.mean(SIGN_X[swapped], 1e6, bounds=(-5, 5), axis=0, privacy_unit=SIGN_IDS[swapped], max_rows=1, rng=seed)
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", ["int", "str"])
def test_another_units_rows_never_change_a_units_choice_among_near_twins(kind):
    """Unit 0's two rows are negatives of each other; unit A then loses all but one of its rows: unit 0 keeps the
    same row (before, the unstable sort of the identifiers decided, and A's rows moved it)."""
    changed = 0
    for seed in range(15):
        rng = np.random.default_rng(seed)
        ids = rng.integers(1, 300, 5000)
        X = rng.uniform(-5, 5, (5000, 2))
        i, j = sorted(rng.choice(5000, 2, replace=False))
        ids[i] = ids[j] = 0
        X[j] = -X[i]
        if kind == "str":
            ids = np.array([f"u{v:04d}" for v in ids])
        a_rows = np.flatnonzero(ids == ids[np.flatnonzero(ids != ids[i])[0]])
        ids2, X2 = np.delete(ids, a_rows[1:]), np.delete(X, a_rows[1:], axis=0)
        keep, _ = select_rows(canonical_ids(ids), (X,), 1, 99)
        keep2, _ = select_rows(canonical_ids(ids2), (X2,), 1, 99)
        b, b2 = ids == ids[i], ids2 == ids[i]
        changed += not np.array_equal(X[b & keep], X2[b2 & keep2])
    assert changed == 0


def test_a_units_choice_does_not_depend_on_how_many_units_are_heavy():
    """The rows of the heavy units were sorted by (unit, priority >> b), b the bits of the number of heavy units:
    two rows of unit B whose priorities agree in their leading 64 - b bits were ordered by position, and whether
    unit A is heavy (b = 20 or 19) decided which one B kept. Now the full priority orders them."""
    from dpstats._kernels.units import mix, value_hashes

    key, unit_b = 12345, -1.0
    candidates = np.arange(1 << 23, dtype=np.float64) + 0.5
    priority = mix(value_hashes(np.array([unit_b]), key)[0] ^ row_hashes((candidates,), key))
    top = priority >> np.uint64(20)
    order = np.argsort(top, kind="stable")
    tied = np.flatnonzero(top[order][1:] == top[order][:-1])
    pairs = [(order[t], order[t + 1]) for t in tied]
    pairs = [(i, j) for i, j in pairs if (priority[i] >> np.uint64(19)) != (priority[j] >> np.uint64(19))]
    assert pairs, "no pair of priorities agreeing in their leading 44 bits (the search is for this key)"
    i, j = pairs[0]
    heavy = 1 << 19  # other units with 2 rows each: with B, 2^19 + 1 heavy units, b = 20
    kept = set()
    for first, second in ((i, j), (j, i)):
        ids = np.concatenate([[unit_b, unit_b], np.repeat(np.arange(heavy, dtype=np.float64), 2)])
        values = np.concatenate([[candidates[first], candidates[second]], np.tile([1.0, 2.0], heavy)])
        for a_rows in (2, 1):  # unit 0 (A) keeps two rows, or one (it is no longer heavy: b = 19)
            mask = np.ones(ids.size, dtype=bool) if a_rows == 2 else ~((ids == 0) & (values == 2.0))
            keep, _ = select_rows(canonical_ids(ids[mask]), (values[mask],), 1, key)
            kept.add(float(values[mask][(ids[mask] == unit_b) & keep][0]))
    assert len(kept) == 1


# ----------------------------------------------------------------------------- identifiers as the caller passes them


def test_a_pandas_series_of_identifiers_is_paired_with_the_rows_by_index():
    """The analyst sorts the table; the Series of identifiers keeps the original index. pandas pairs them by label:
    so does dpstats (positional pairing gave person 0's 200 rows to 88 different units)."""
    import pandas as pd

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"person": np.r_[np.zeros(200, int), rng.integers(1, 100, 800)]})
    table["amount"] = np.where(table["person"] == 0, 100.0, rng.uniform(0, 100, 1000))
    people = table["person"]
    by_amount = table.sort_values("amount")
    release = lambda ids: dps.sum(by_amount["amount"], 1e9, bounds=(0, 100), privacy_unit=ids, max_rows=5, rng=0)  # noqa: E731
    assert release(people) == release(by_amount["person"]) == release(by_amount["person"].to_numpy())
    grouped = lambda keys: dps.mean(  # noqa: E731
        by_amount["amount"], 1e3, 1e-6, by=keys, bounds=(0, 100), privacy_unit=people, max_rows=5, rng=0
    )
    labels = pd.Series(np.where(table["person"] % 2 == 0, "even", "odd"), index=table.index)
    pd.testing.assert_series_equal(grouped(labels), grouped(labels.reindex(by_amount.index).to_numpy()))
    acc = dps.Accountant(100.0, 1e-3)
    for other in (people.iloc[:-1], people.set_axis(people.index + 1), people.set_axis(np.zeros(1000, int))):
        with pytest.raises(ParameterError, match="privacy_unit is a pandas Series whose index is not the data's"):
            dps.sum(by_amount["amount"], 1.0, bounds=(0, 100), privacy_unit=other, max_rows=5, accountant=acc)
    with pytest.raises(ParameterError, match="by is a pandas Series whose index is not the data's"):
        grouped(labels.set_axis(labels.index + 5000))
    assert acc.ledger == []


BAD_IDENTIFIERS = [
    ([2**53, 2**53 + 1, 0.5], DataValidationError, r"privacy_unit mixes 1 integer\(s\) that float64 cannot hold"),
    (["a", "a\x00", "b"], DataValidationError, r"privacy_unit has 1 identifier\(s\) ending in a NUL"),
    ([b"\xff", b"a", b"b"], DataValidationError, r"privacy_unit has 1 byte string\(s\) that are not ASCII"),
    ({1, 2, 3}, ParameterError, "privacy_unit must be identifiers aligned with the rows.*got a value of type set"),
    ({1: 0, 2: 0, 3: 0}, ParameterError, "privacy_unit must be identifiers aligned.*got a value of type dict"),
    ((i for i in range(3)), ParameterError, "privacy_unit must be identifiers aligned.*type generator"),
    ([(1, 2), (3, 4), (5, 6)], DataValidationError, "privacy_unit must hold integers.*got 3 of type tuple"),
]


@pytest.mark.parametrize("ids,error,match", BAD_IDENTIFIERS, ids=[str(i) for i in range(len(BAD_IDENTIFIERS))])
def test_bad_identifiers_get_a_clear_error_naming_the_parameter(ids, error, match):
    acc = dps.Accountant(100.0, 1e-3)
    with pytest.raises(error, match=match):
        dps.mean([1.0, 2.0, 3.0], 1.0, bounds=(0, 5), privacy_unit=ids, max_rows=1, rng=0, accountant=acc)
    assert acc.ledger == []


def test_pandas_identifiers_with_missing_values_or_a_frame_get_a_clear_error():
    import pandas as pd

    frame = pd.DataFrame({"person": ["ann", "bob", None, "bob"], "amount": [1.0, 2.0, 3.0, 4.0]})
    missing = r"privacy_unit has 1 missing identifier\(s\) \(None, NaN or NA\)"
    for ids in ("person", frame["person"].astype("string"), pd.Series(pd.Categorical(["a", "b", None, "a"]))):
        with pytest.raises(DataValidationError, match=missing):
            dps.count(frame if isinstance(ids, str) else frame["amount"], 1.0, privacy_unit=ids, max_rows=2, rng=0)
    with pytest.raises(ParameterError, match="privacy_unit must be one identifier per row.*DataFrame with 1 column"):
        dps.count(frame["amount"], 1.0, privacy_unit=frame[["person"]], max_rows=2, rng=0)


def test_rows_are_ordered_by_unit_then_full_priority_even_where_the_packed_keys_tie():
    """The packed sort (unit, top bits of the priority) is re-sorted by the full priority where the top bits agree:
    the order is exactly np.lexsort's, whatever the number of units (here priorities that share their top 60 bits
    within a unit, which a sort on the packed key alone would leave in the table's order)."""
    from dpstats._kernels.units import _by_unit_then_priority

    rng = np.random.default_rng(4)
    for units in (1, 2, 3, 1000, 70_000):
        run = np.sort(rng.integers(0, units, 200_000))
        priority = rng.integers(0, 2**63, run.size, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        shared = rng.random(run.size) < 0.3  # 30 % of the rows share their top 60 bits with their unit's first row
        first = np.searchsorted(run, run)
        top = np.uint64(0xFFFFFFFFFFFFFFF0)
        priority[shared] = (priority[first[shared]] & top) | (priority[shared] & ~top)
        order = _by_unit_then_priority(run, priority, units)
        np.testing.assert_array_equal(order, np.lexsort((priority, run)))
