"""The Dask engine: the same seed gives the same release as NumPy, for every mechanism and estimator; a bound
violated in the last chunk raises before anything is charged, with the count over every chunk; a
``distributed.LocalCluster`` of processes gives the same releases; a lazy array several times larger than the
memory budget is streamed, never gathered.

The chunks are deliberately awkward (sizes that cut the public blocks of :mod:`dpstats._kernels.reduce`, several column
chunks), so the pieces of cut blocks are exercised. Releases are compared bit for bit: the engines run the same
per-block arithmetic and add the blocks by the same tree.
"""

import importlib
import subprocess
import sys
import tracemalloc
import warnings
from fractions import Fraction

import numpy as np
import pytest
from _registry import examples

import dpstats as dps
from dpstats.estimators import DPCCA, DPPCA, DPLinearSVC, DPLogisticRegression

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

RNG = np.random.default_rng(0)
N, D = 20_000, 6
X = RNG.uniform(-1, 1, (N, D))
X /= np.linalg.norm(X, axis=1, keepdims=True) * 1.05
Y = np.where(X[:, 0] + 0.2 * RNG.standard_normal(N) > 0, 1.0, -1.0)
x = RNG.uniform(0, 1, N)
A = RNG.standard_normal((3_000, 40)) / 10


@pytest.fixture(autouse=True)
def small_gram_blocks(monkeypatch):
    """Gram blocks of 1 KiB (the minimum of 256 rows): 20,000 rows make 79 blocks, cut by most chunk edges."""
    monkeypatch.setattr(importlib.import_module("dpstats._kernels.gram"), "_GRAM_BLOCK_BYTES", 1)


def lazy(array, rows=1_777):
    """A dask array with chunks that cut the blocks, and (2-D) columns in two chunks."""
    return da.from_array(array, chunks=(rows,) + tuple(max(1, s // 2) for s in array.shape[1:]))


#: every declared example that runs on Dask (:mod:`tests._registry`)
MECHANISMS = examples("dask")


def _lazy_data(data):
    """Each array of the data as a dask array: chunks of 1,777 rows that cut the public blocks (half the rows for
    small data), the columns of a matrix in two chunks."""
    return tuple(lazy(a, 1_777 if len(a) >= 2 * 1_777 else max(1, len(a) // 2)) for a in data)


@pytest.mark.parametrize("name", MECHANISMS)
def test_same_seed_same_release_as_numpy(name):
    declaration, example = MECHANISMS[name]
    data = example.data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (dps.NotPrivateWarning, dps.FloatingPointNoiseWarning))
        expected = declaration.run(example, data, 3)
        released = declaration.run(example, _lazy_data(data), 3)
    if hasattr(released, "compute"):  # a result as large as the data stays lazy (low_rank)
        released = released.compute()
    assert type(released) is type(expected)
    for got, want in zip(_parts(released), _parts(expected), strict=True):
        np.testing.assert_array_equal(got, want)


def _parts(result) -> tuple:
    """A result as arrays (a CCA result: its matrices and correlations)."""
    if hasattr(result, "C_hat"):
        return result.U, result.V, result.correlations, result.C_hat
    return (result,)


@pytest.mark.parametrize("rows", [1, 250, 1_777, 20_000])
def test_the_exact_gram_is_the_same_at_any_chunking_and_reads_each_chunk_once(rows):
    """Issue 40.3: the exact Gram sums follow the chunks (one task per chunk, no row copied to meet a neighbour's
    block) and give NumPy's matrix, bit for bit, whatever the chunk sizes (here one row per chunk, or chunks that
    cut every float block)."""
    import dask

    from dpstats._engine import grid_gram

    data = X[:2_000] if rows == 1 else X
    reads = {}

    def block(block_id=None):
        reads[block_id[0]] = reads.get(block_id[0], 0) + 1
        return data[block_id[0] * rows : (block_id[0] + 1) * rows]

    sizes = tuple(min(rows, len(data) - start) for start in range(0, len(data), rows))
    counted = da.map_blocks(block, chunks=(sizes, (D,)), dtype=float, meta=np.empty((0, D)))
    grid = Fraction(1, 2**30)
    with dask.config.set(scheduler="sync"):
        lazy_gram = grid_gram(counted, grid)
    np.testing.assert_array_equal(lazy_gram.values, grid_gram(data, grid).values)
    assert set(reads.values()) == {1} and len(reads) == len(sizes)
    np.testing.assert_array_equal(dps.pca_ag(lazy(data, rows), 1.0, 1e-6, rng=3), dps.pca_ag(data, 1.0, 1e-6, rng=3))


def test_low_rank_same_release_streamed_and_lazy_output():
    expected = dps.low_rank(A, 2, 1.0, 1e-6, bounds=(-1, 1), rng=4)
    released = dps.low_rank(lazy(A, 701), 2, 1.0, 1e-6, bounds=(-1, 1), rng=4)
    assert isinstance(released, da.Array) and released.chunks[0] == (701,) * 4 + (196,)
    np.testing.assert_array_equal(released.compute(), expected)
    with pytest.raises(dps.ParameterError, match="range_finder"):
        dps.low_rank(lazy(A), 2, 1.0, 1e-6, method="input_perturbation", bounds=(-1, 1), rng=4)


def frame(array, columns, partitions=7):
    return dd.from_pandas(pd.DataFrame(array, columns=columns), npartitions=partitions)


def test_dataframes_give_the_same_release():
    df = frame(np.column_stack([X, Y, x]), [f"x{i}" for i in range(D)] + ["label", "value"])
    features = [f"x{i}" for i in range(D)]
    assert dps.mean(df["value"], 1.0, bounds=(0, 1), rng=2) == dps.mean(x, 1.0, bounds=(0, 1), rng=2)
    np.testing.assert_array_equal(dps.pca_ag(df[features], 1.0, 1e-6, rng=2), dps.pca_ag(X, 1.0, 1e-6, rng=2))
    np.testing.assert_array_equal(
        dps.logistic_regression(df[features], df["label"], 1.0, lam=1e-3, rng=2),
        dps.logistic_regression(X, Y, 1.0, lam=1e-3, rng=2),
    )
    with pytest.raises(dps.DataValidationError, match="numeric"):
        dps.mean(dd.from_pandas(pd.DataFrame({"s": ["a", "b"]}), npartitions=1)["s"], 1.0, bounds=(0, 1))


PEOPLE = pd.DataFrame(
    {
        "person": RNG.integers(0, 400, 3_000),
        "age": RNG.integers(18, 90, 3_000).astype(float),
        "income": RNG.uniform(0, 1_000, 3_000),
        "city": RNG.choice(["lyon", "nice", "metz"], 3_000),
    }
)
AGES = {"age": (0, 100)}
PEOPLE_BOUNDS = {**AGES, "income": (0, 1_000)}
TABLE_CALLS = {
    # the calls a pandas user writes, with column names for privacy_unit and by, and bounds per column
    "mean, dict bounds": lambda t: dps.mean(t[["age", "income"]], 1.0, bounds=PEOPLE_BOUNDS, rng=1),
    "mean, DataFrame without axis": lambda t: dps.mean(t[["age", "income"]], 1.0, bounds=(0, 1_000), rng=1),
    "variance, dict bounds": lambda t: dps.variance(t[["age"]], 1.0, bounds=AGES, clip=True, rng=1),
    "sum, dict bounds and weights": lambda t: dps.sum(
        t[["age", "income"]], 1.0, bounds=PEOPLE_BOUNDS, weights={"age": 1, "income": 2}, rng=1
    ),
    "mean, unit column": lambda t: dps.mean(
        t[["person", "age", "income"]], 1.0, bounds=PEOPLE_BOUNDS, privacy_unit="person", max_rows=3, rng=1
    ),
    "variance, unit column": lambda t: dps.variance(
        t[["person", "age"]], 1.0, 1e-6, bounds=AGES, privacy_unit="person", max_rows=3, rng=1
    ),
    "sum, unit Series": lambda t: dps.sum(t["age"], 1.0, bounds=(0, 100), privacy_unit=t["person"], max_rows=3, rng=1),
    "count, unit column": lambda t: dps.count(t[["person", "age"]], 1.0, privacy_unit="person", max_rows=3, rng=1),
    "mean by column": lambda t: dps.mean(
        t[["city", "age"]], 1.0, bounds=AGES, by="city", categories=["lyon", "nice", "metz"], rng=1
    ),
    "mean by column, unit column": lambda t: dps.mean(
        t[["city", "person", "age"]], 1.0, 1e-6, bounds=AGES, by="city", privacy_unit="person", max_rows=3, rng=1
    ),
    "histogram, unit column": lambda t: dps.histogram(
        t[["person", "age"]], 1.0, bins=5, range=(0, 100), privacy_unit="person", max_rows=3, rng=1
    )[0],
    "pca_ag, named": lambda t: dps.pca_ag(t[["age", "income"]] / 1_500, 1.0, 1e-6, rng=1),
}


@pytest.mark.parametrize("name", TABLE_CALLS)
def test_a_dask_dataframe_is_a_table_like_pandas(name):
    """Issue 40.3 and 39.6: column names, dict bounds and named results on a dask DataFrame as on pandas, the same
    release for the same seed (ungrouped calls used to fail with "pass axis" or refuse the dict bounds)."""
    call = TABLE_CALLS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dps.MixedScalesWarning)
        expected = call(PEOPLE)
        released = call(dd.from_pandas(PEOPLE, npartitions=7))
    assert type(released) is type(expected)
    if isinstance(expected, pd.Series | pd.DataFrame):
        pd.testing.assert_index_equal(released.index, expected.index)
    np.testing.assert_array_equal(np.asarray(released), np.asarray(expected))


def test_a_dask_table_with_a_string_column_is_refused_like_pandas():
    people = dd.from_pandas(PEOPLE, npartitions=3)
    with pytest.raises(dps.DataValidationError, match=r"non-numeric column\(s\) 'city'"):
        dps.mean(people[["age", "city"]], 1.0, bounds=(0, 100))
    with pytest.raises(dps.ParameterError, match=r"missing \['income'\]"):
        dps.mean(people[["age", "income"]], 1.0, bounds=AGES)


ESTIMATORS = {
    "DPPCA ag": (lambda: DPPCA(2, random_state=5), ["components_"]),
    "DPPCA ppm": (lambda: DPPCA(2, mechanism="ppm", random_state=5), ["components_"]),
    "DPPCA ppca": (lambda: DPPCA(2, mechanism="ppca", random_state=5), ["components_"]),
    "DPPCA amin": (lambda: DPPCA(2, mechanism="amin", random_state=5), ["components_"]),
    "DPPCA dong, private bound": (
        lambda: DPPCA(2, mechanism="dong", norm_bound="private", random_state=5),
        ["components_"],
    ),
    "DPLogisticRegression": (
        lambda: DPLogisticRegression(classes=["no", "yes"], random_state=5),
        ["coef_", "intercept_"],
    ),
    "DPLinearSVC": (lambda: DPLinearSVC(classes=["no", "yes"], clip=True, random_state=5), ["coef_", "intercept_"]),
}


@pytest.mark.parametrize("name", ESTIMATORS)
def test_estimators_fit_dask_arrays_and_dataframes_like_numpy(name):
    make, attributes = ESTIMATORS[name]
    labels = np.where(Y > 0, "yes", "no")
    expected = make().fit(X, labels)
    from_array = make().fit(lazy(X), da.from_array(labels, chunks=3_000))
    df = frame(X, [f"f{i}" for i in range(D)]).assign(label=dd.from_pandas(pd.Series(labels), npartitions=7))
    from_frame = make().fit(df[[f"f{i}" for i in range(D)]], df["label"])
    for fitted in (from_array, from_frame):
        for attribute in attributes:
            np.testing.assert_array_equal(getattr(fitted, attribute), getattr(expected, attribute))
        assert fitted.n_features_in_ == D
    assert list(from_frame.feature_names_in_) == [f"f{i}" for i in range(D)]
    out, lazy_out = (
        (expected.transform(X), from_array.transform(lazy(X)))
        if name.startswith("DPPCA")
        else (expected.predict(X), from_array.predict(lazy(X)))
    )
    assert isinstance(lazy_out, da.Array)  # post-processing, chunk by chunk (sums over column chunks: to rounding)
    np.testing.assert_allclose(
        lazy_out.compute(), out, rtol=0, atol=1e-12
    ) if out.dtype == float else np.testing.assert_array_equal(lazy_out.compute(), out)


def test_dpcca_fits_dask_views_like_numpy():
    expected = DPCCA(2, random_state=6).fit(X[:, :3], X[:, 3:])
    fitted = DPCCA(2, random_state=6).fit(lazy(X[:, :3]), lazy(X[:, 3:], 3_000))
    np.testing.assert_array_equal(fitted.result_.C_hat, expected.result_.C_hat)
    np.testing.assert_array_equal(fitted.x_weights_, expected.x_weights_)


def test_unknown_label_in_the_last_chunk_raises_before_the_charge():
    labels = np.where(Y > 0, "yes", "no")
    labels[-1] = "maybe"
    acc = dps.Accountant(10.0, 1e-3)
    with pytest.raises(dps.DataValidationError, match="1 other value"):
        DPLogisticRegression(classes=["no", "yes"], accountant=acc).fit(lazy(X), da.from_array(labels, chunks=3_000))
    assert acc.ledger == []


VIOLATIONS = {
    # name: (mechanism on the lazy data, what to break in the last chunk, error, message)
    "mean out of bounds": (
        lambda v, M, y, acc: dps.mean(v, 1.0, bounds=(0, 1), accountant=acc),
        "x",
        1.5,
        dps.OutOfBoundsError,
        "3 value",
    ),
    "variance NaN": (
        lambda v, M, y, acc: dps.variance(v, 1.0, bounds=(0, 1), clip=True, accountant=acc),
        "x",
        np.nan,
        dps.DataValidationError,
        "3 NaN",
    ),
    "histogram out of range": (
        lambda v, M, y, acc: dps.histogram(v, 1.0, range=(0, 1), accountant=acc),
        "x",
        -0.5,
        dps.OutOfBoundsError,
        "3 value",
    ),
    "pca_ag row norm": (
        lambda v, M, y, acc: dps.pca_ag(M, 1.0, 1e-6, accountant=acc),
        "X",
        0.9,
        dps.OutOfBoundsError,
        "3 row",
    ),
    "pca_ppm NaN": (
        lambda v, M, y, acc: dps.pca_ppm(M, 2, 1.0, 1e-6, accountant=acc),
        "X",
        np.nan,
        dps.DataValidationError,
        "3 NaN",
    ),
    "covariance_dong row norm": (
        lambda v, M, y, acc: dps.covariance_dong(M, 1.0, 1e-6, accountant=acc),
        "X",
        0.9,
        dps.OutOfBoundsError,
        "3 row",
    ),
    "pca private bound NaN": (
        lambda v, M, y, acc: dps.pca(M, 2, 1.0, norm_bound="private", accountant=acc),
        "X",
        np.nan,
        dps.DataValidationError,
        "3 NaN",
    ),
    "cca row norm": (
        lambda v, M, y, acc: dps.cca(M[:, :3], M[:, 3:], 1, 1.0, 1e-6, accountant=acc),
        "X",
        0.9,
        dps.OutOfBoundsError,
        "3 row",
    ),
    "low_rank infinite": (
        lambda v, M, y, acc: dps.low_rank(M, 2, 1.0, 1e-6, bounds=(-1, 1), accountant=acc),
        "X",
        np.inf,
        dps.DataValidationError,
        "3 NaN or infinite",
    ),
    "logistic row norm": (
        lambda v, M, y, acc: dps.logistic_regression(M, y, 1.0, lam=1e-3, accountant=acc),
        "X",
        0.9,
        dps.OutOfBoundsError,
        "3 row",
    ),
    "svm labels": (
        lambda v, M, y, acc: dps.svm(M, y, 1.0, lam=1e-3, accountant=acc),
        "y",
        0.0,
        dps.DataValidationError,
        "3 other value",
    ),
}


@pytest.mark.parametrize("name", VIOLATIONS)
def test_violation_in_the_last_chunk_raises_with_the_count_and_charges_nothing(name):
    mechanism, target, value, error, match = VIOLATIONS[name]
    data = {"x": x.copy(), "X": X.copy(), "y": Y.copy()}
    if target == "X" and np.isfinite(value):
        data["X"][-3:] = value  # 3 rows of norm 0.9·√6
    elif target == "X":
        data["X"][-3:, 0] = value  # 3 values, one per row
    else:
        data[target][-3:] = value
    acc = dps.Accountant(100.0, 1e-3)
    with pytest.raises(error, match=match):
        mechanism(lazy(data["x"]), lazy(data["X"]), lazy(data["y"], 2_500), acc)
    assert acc.ledger == [] and acc.spent == (0.0, 0.0)


def test_import_dpstats_does_not_import_dask():
    code = "import sys, dpstats; print([m for m in ('dask', 'distributed') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_lazy_array_larger_than_the_budget_is_streamed_on_a_cluster_of_processes():
    """Two worker processes with 300 MiB each; data more than 3 times their total memory, generated lazily. What
    the client allocates (traced) stays below a budget of 32 MiB: only the statistics come back (a worker holds a
    few 8 MiB chunks at a time: a materialising run would be killed). On small data the cluster's releases are
    NumPy's, bit for bit."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, memory_limit="300MiB", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        np.testing.assert_array_equal(dps.pca_ag(lazy(X), 1.0, 1e-6, rng=7), dps.pca_ag(X, 1.0, 1e-6, rng=7))
        np.testing.assert_array_equal(
            dps.logistic_regression(lazy(X), lazy(Y), 1.0, lam=1e-3, rng=7),
            dps.logistic_regression(X, Y, 1.0, lam=1e-3, rng=7),
        )
        budget = 32 * 2**20
        rows, d = 2_000 * 2**20 // (8 * 8), 8  # 2,000 MiB
        big = da.random.default_rng(1).uniform(-0.35, 0.35, (rows, d), chunks=(2**20, d))
        tracemalloc.start()
        try:
            A_hat = dps.pca_ag(big, 1.0, 1e-6, rng=7)
            m = dps.mean(big[:, 0], 1.0, bounds=(-0.35, 0.35), rng=7)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert big.nbytes > 3 * 600 * 2**20 and big.nbytes > 60 * budget
        assert peak < budget, f"the client allocated {peak / 2**20:.0f} MiB"
        assert A_hat.shape == (d, d) and abs(m) < 0.01
