"""Tables in, named results out: pandas and polars at every entry point, per-column bounds and weights, the
mixed-scales warning, categorical histograms, PCA loadings named by column."""

import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from scipy import stats

import dpstats as dps

ALPHA = 1e-3
BOUNDS = {"age": (0, 100), "income": (0, 200000)}


def _people(n=400, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 90, n), "income": rng.uniform(1000, 150000, n).round()})


@pytest.mark.parametrize("statistic", [dps.mean, dps.variance])
def test_dataframe_gives_a_series_indexed_by_column_equal_to_the_array_release(statistic):
    people = _people()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dps.MixedScalesWarning)
        named = statistic(people, 1.0, bounds=BOUNDS, rng=3)
        plain = statistic(people.to_numpy(), 1.0, bounds=([0, 0], [100, 200000]), axis=0, rng=3)
    assert isinstance(named, pd.Series) and list(named.index) == ["age", "income"]
    np.testing.assert_array_equal(named.to_numpy(), plain)


def test_polars_in_polars_out_and_series_give_floats():
    people = _people()
    frame = pl.DataFrame({c: people[c].to_numpy() for c in people.columns})
    out = dps.mean(frame, 1.0, bounds=BOUNDS, weights=[1, 1], rng=0)
    assert isinstance(out, pl.DataFrame) and out.columns == ["age", "income"] and out.height == 1
    assert isinstance(dps.mean(frame["age"], 1.0, bounds=(0, 100), rng=0), float)
    assert isinstance(dps.variance(people["age"], 1.0, bounds=(0, 100), rng=0), float)
    assert dps.mean(people["age"], 1.0, bounds=(0, 100), rng=0) == dps.mean(
        people["age"].to_numpy(), 1.0, bounds=(0, 100), rng=0
    )


def test_string_column_raises_an_error_that_names_it_and_what_to_do():
    people = _people().assign(city="Lyon")
    with pytest.raises(dps.DataValidationError, match=r"non-numeric column\(s\) 'city'.*histogram"):
        dps.mean(people, 1.0, bounds=(0, 1))
    with pytest.raises(dps.DataValidationError, match="'city'"):
        dps.pca(pl.DataFrame({"a": [0.1, 0.2], "city": ["x", "y"]}), 1, epsilon=1.0)


def test_missing_values_in_a_table_raise_with_a_count():
    people = _people().astype({"age": "Int64"})
    people.loc[3, "age"] = pd.NA
    with pytest.raises(dps.DataValidationError, match="1 NaN"):
        dps.mean(people, 1.0, bounds=BOUNDS, weights=[1, 1])


@pytest.mark.parametrize(
    "bounds,match",
    [
        ({"age": (0, 100)}, r"missing \['income'\]"),
        ({**BOUNDS, "height": (0, 3)}, r"unknown \['height'\]"),
        ({"age": (0, 100), "income": 5}, "must be a pair"),
    ],
)
def test_bounds_dict_must_name_every_column(bounds, match):
    acc = dps.Accountant(5.0)
    with pytest.raises(dps.ParameterError, match=match):
        dps.mean(_people(), 1.0, bounds=bounds, accountant=acc)
    assert acc.ledger == []


def test_dict_bounds_need_a_dataframe_and_a_dataframe_takes_rows_as_records():
    with pytest.raises(dps.ParameterError, match="needs a DataFrame"):
        dps.mean(np.ones((5, 2)), 1.0, bounds=BOUNDS, axis=0)
    with pytest.raises(dps.ParameterError, match="axis must be None or 0"):
        dps.mean(_people(), 1.0, bounds=BOUNDS, axis=1)


def test_weights_split_epsilon_between_columns_and_scale_each_noise_to_its_own_range():
    people = _people(n=200)
    acc = dps.Accountant(10.0, 0.0, composition="basic")
    dps.mean(people, 1.0, bounds=BOUNDS, weights={"age": 3, "income": 1}, accountant=acc, rng=0)
    (entry,) = acc.ledger
    shares = [e.epsilon for e in entry.events]
    assert shares == pytest.approx([0.75, 0.25], rel=1e-3) and acc.spent[0] <= 1.0
    rng = np.random.default_rng(1)
    draws = (
        np.array(
            [
                dps.mean(people, 1.0, bounds=BOUNDS, weights={"age": 3, "income": 1}, rng=rng).to_numpy()
                for _ in range(2000)
            ]
        )
        - people.mean().to_numpy()
    )
    for j, (width, share) in enumerate([(100, 0.75), (200000, 0.25)]):
        scale = width / len(people) / share
        assert stats.kstest(draws[:, j] / scale, "laplace").pvalue > ALPHA


def test_weights_with_gaussian_noise_split_delta_too():
    acc = dps.Accountant(10.0, 1e-5, composition="basic")
    dps.variance(_people(), 1.0, 1e-6, bounds=BOUNDS, weights=[1, 1], accountant=acc, rng=0)
    assert [e.delta for e in acc.ledger[0].events] == [5e-7, 5e-7]
    assert acc.spent[0] <= 1.0 + 1e-9


@pytest.mark.parametrize(
    "weights,match",
    [
        ([1, 0], "> 0"),
        ([1, np.inf], "> 0"),
        ([1, 2, 3], "one per"),
        ({"age": 1}, "missing"),
        ([1e-20, 1], "epsilon share"),
    ],
)
def test_bad_weights_raise_before_any_charge(weights, match):
    acc = dps.Accountant(5.0)
    with pytest.raises(dps.ParameterError, match=match):
        dps.mean(_people(), 1.0, bounds=BOUNDS, weights=weights, accountant=acc)
    assert acc.ledger == []


def test_mixed_scales_warn_with_public_values_only():
    people = _people()
    with pytest.warns(dps.MixedScalesWarning) as caught:
        dps.mean(people, 1.0, bounds=BOUNDS, rng=0)
    text = str(caught[0].message)
    assert "'income'" in text and "'age'" in text and "weights=" in text and "2e+03 times" in text
    for value in [people["age"].mean(), people["income"].mean()] + people.to_numpy().ravel()[:50].tolist():
        assert f"{value:g}" not in text and f"{value:.4g}" not in text
    with pytest.warns(dps.MixedScalesWarning, match="column 0 "):  # arrays: columns named by position
        dps.mean(np.ones((10, 2)), 1.0, bounds=([0, 0], [1, 100]), axis=0, rng=0)


def test_no_warning_with_weights_or_comparable_scales():
    with warnings.catch_warnings():
        warnings.simplefilter("error", dps.MixedScalesWarning)
        dps.mean(_people(), 1.0, bounds=BOUNDS, weights=[1, 1], rng=0)
        dps.mean(np.ones((10, 3)), 1.0, bounds=(0, [1, 2, 5]), axis=0, rng=0)
        dps.mean(np.ones((10, 784)), 1.0, bounds=(0, 1), axis=0, rng=0)


# ----------------------------------------------------------------------------- categorical histograms


def test_categorical_histogram_counts_over_the_public_list_named_by_category():
    cities = pd.Series(["Lyon", "Oslo", "Lyon", "Pune", "Lyon"], name="city")
    counts, names = dps.histogram(cities, 50.0, categories=["Pune", "Lyon", "Oslo", "Quito"], rng=0)
    assert names == ["Pune", "Lyon", "Oslo", "Quito"]
    assert isinstance(counts, pd.Series) and counts.name == "city" and list(counts.index) == names
    np.testing.assert_allclose(counts.to_numpy(), [1, 3, 1, 0], atol=0.5)
    polars_counts, _ = dps.histogram(pl.Series("city", cities.tolist()), 50.0, categories=names, rng=0)
    assert isinstance(polars_counts, pl.Series)
    np.testing.assert_array_equal(polars_counts.to_numpy(), counts.to_numpy())
    array_counts, _ = dps.histogram(np.array(cities), 50.0, categories=names, rng=0)
    np.testing.assert_array_equal(array_counts, counts.to_numpy())


def test_values_outside_the_categories_raise_unless_an_other_bin_is_asked_for():
    cities = ["Lyon", "Oslo", None, "Rome", "Lyon"]
    acc = dps.Accountant(5.0)
    with pytest.raises(dps.OutOfBoundsError, match="2 value.*other="):
        dps.histogram(cities, 1.0, categories=["Lyon", "Oslo"], accountant=acc)
    assert acc.ledger == []
    counts, names = dps.histogram(cities, 50.0, categories=["Lyon", "Oslo"], other="other", rng=0)
    assert names == ["Lyon", "Oslo", "other"]
    np.testing.assert_allclose(counts, [2, 1, 2], atol=0.5)
    nan_cities = pd.Series(["Lyon", np.nan, "Oslo"])
    counts, _ = dps.histogram(nan_cities, 50.0, categories=["Lyon", "Oslo"], other="?", rng=0)
    np.testing.assert_allclose(counts.to_numpy(), [1, 1, 1], atol=0.5)


def test_categorical_noise_has_the_histogram_sensitivity():
    labels = np.array(["a"] * 30 + ["b"] * 10)
    rng = np.random.default_rng(2)
    noise = np.array([dps.histogram(labels, 0.5, categories=["a", "b", "c"], rng=rng)[0] for _ in range(1500)])
    noise -= [30, 10, 0]
    assert stats.kstest(noise.ravel() / (2 / 0.5), "laplace").pvalue > ALPHA


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"categories": []}, dps.ParameterError, "at least one"),
        ({"categories": ["a", "a"]}, dps.ParameterError, "unique"),
        ({"categories": "ab"}, dps.ParameterError, "list"),
        ({"categories": [["a"]]}, dps.ParameterError, "hashable"),
        ({"categories": ["a"], "other": "a"}, dps.ParameterError, "already one of"),
        ({"categories": ["a"], "range": (0, 1)}, dps.ParameterError, "not both"),
        ({}, dps.ParameterError, "range is required"),
    ],
)
def test_bad_categorical_parameters_raise(kwargs, error, match):
    with pytest.raises(error, match=match):
        dps.histogram(["a", "b"], 1.0, **kwargs)


def test_histogram_takes_one_column():
    with pytest.raises(dps.DataValidationError, match="one column"):
        dps.histogram(pd.DataFrame({"a": ["x"], "b": ["y"]}), 1.0, categories=["x"])
    counts, edges = dps.histogram(pd.Series([0.1, 0.7]), 1.0, bins=2, range=(0, 1), rng=0)  # numeric: arrays
    assert isinstance(counts, np.ndarray) and edges.tolist() == [0, 0.5, 1]


# ----------------------------------------------------------------------------- PCA


def _unit_rows(seed=0) -> pd.DataFrame:
    X = np.random.default_rng(seed).uniform(-0.5, 0.5, (300, 4)) / 2
    return pd.DataFrame(X, columns=["height", "weight", "age", "score"])


@pytest.mark.parametrize("mechanism", ["ag", "ppm", "ppca"])
def test_pca_loadings_are_named_by_column(mechanism):
    X = _unit_rows()
    V = dps.pca(X, 2, mechanism=mechanism, epsilon=1.0, rng=0)
    assert list(V.index) == list(X.columns) and list(V.columns) == ["pc1", "pc2"]
    np.testing.assert_array_equal(V.to_numpy(), dps.pca(X.to_numpy(), 2, mechanism=mechanism, epsilon=1.0, rng=0))
    polars_V = dps.pca(pl.from_numpy(X.to_numpy(), schema=list(X.columns)), 2, mechanism=mechanism, epsilon=1.0, rng=0)
    assert isinstance(polars_V, pl.DataFrame) and polars_V.columns == ["pc1", "pc2"]
    np.testing.assert_array_equal(polars_V.to_numpy(), V.to_numpy())


def test_pca_ag_matrix_named_on_both_axes_and_top_components_keeps_the_names():
    X = _unit_rows()
    A = dps.pca_ag(X, 1.0, 1e-6, rng=0)
    assert list(A.index) == list(A.columns) == list(X.columns)
    V = dps.top_components(A, 2)
    assert list(V.index) == list(X.columns)
    np.testing.assert_array_equal(V.to_numpy(), dps.pca(X, 2, epsilon=1.0, delta=1e-6, rng=0).to_numpy())
    assert list(dps.pca_ppm(X, 1, 1.0, 1e-6, rng=0).index) == list(X.columns)
    assert list(dps.pca_ppca(X, 1, 1.0, rng=0).columns) == ["pc1"]


def test_pca_ag_called_like_pca_ppm_says_where_k_goes():
    X = _unit_rows().to_numpy()
    with pytest.raises(TypeError, match=r"takes no k.*dps\.pca\(X, k.*top_components"):
        dps.pca_ag(X, 5, 1.0, 1e-6)
    with pytest.raises(dps.ParameterError, match=r"delta must be.*got 1\.0.*dps\.pca\(X, k"):
        dps.pca_ag(X, 5, 1.0)
    import inspect

    assert list(inspect.signature(dps.pca_ag).parameters)[:3] == ["X", "epsilon", "delta"]


def test_pca_on_defaults_and_one_budget_for_every_mechanism():
    X = _unit_rows()
    acc = dps.Accountant(epsilon=100)
    for mechanism in ("ag", "ppm", "ppca"):
        dps.pca(X, 2, mechanism=mechanism, epsilon=1.0, delta=1e-6, accountant=acc, rng=0)
    assert acc.spent[0] <= 3.0 + 1e-9 and acc.spent[1] <= acc.delta


def test_dppca_keeps_dataframe_feature_names():
    from sklearn.pipeline import make_pipeline

    from dpstats.estimators import DPPCA

    X = _unit_rows()
    model = make_pipeline(DPPCA(2, accountant=dps.Accountant(epsilon=100), random_state=0)).fit(X)
    pca = model[-1]
    assert list(pca.feature_names_in_) == list(X.columns)
    assert list(pca.get_feature_names_out()) == ["dppca0", "dppca1"]
    assert model.transform(X).shape == (300, 2)
    assert not math.isnan(float(model.transform(X).sum()))


def test_import_dpstats_loads_neither_pandas_nor_polars():
    import subprocess
    import sys

    code = "import sys, dpstats; print([m for m in ('pandas', 'polars') if m in sys.modules])"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"
    )
