"""dps.linear_regression and DPLinearRegression: each method recovers a known model, bad input is refused before
anything is charged, one ledger entry per call, the certified eigenvalue, the sensitivity checker on worst-case
neighbours (with a mis-declared variant flagged), and empirical audits (with under-noised variants flagged)."""

from __future__ import annotations

import importlib
import math
import warnings

import numpy as np
import pytest

import dpstats as dps
from dpstats.audit import audit, check_sensitivity
from dpstats.estimators import DPLinearRegression
from dpstats.linear_model import PTRFailedWarning

RNG = np.random.default_rng(0)
N = 40_000
X2 = RNG.uniform(0, 10, (N, 2))
BETA, B0 = np.array([1.0, -2.0]), 3.0
Y2 = B0 + X2 @ BETA + RNG.normal(0, 1, N)
BOUNDS = dict(bounds_X=(0, 10), bounds_y=(-30, 20), clip=True)


# ----------------------------------------------------------------------------- recovery


@pytest.mark.parametrize("method", ["adassp", "ssp"])
def test_sufficient_statistics_methods_recover_a_known_model(method):
    """n = 40 000, ε = 1: the noise on the Gram matrix is a few units against entries of order n/4, so the
    coefficients are within 0.05 of the truth (the OLS estimate itself is within 0.01)."""
    fit = dps.linear_regression(X2, Y2, 1.0, method=method, rng=1, **BOUNDS)
    np.testing.assert_allclose(fit.coef, BETA, atol=0.05)
    assert abs(fit.intercept - B0) < 0.3
    assert fit.method == method and fit.released


def test_tukey_needs_no_bounds_and_recovers_a_known_model():
    fit = dps.linear_regression(X2, Y2, 1.0, method="tukey", subsets=1000, rng=2)
    np.testing.assert_allclose(fit.coef, BETA, atol=0.1)
    assert abs(fit.intercept - B0) < 0.6


def test_theil_sen_recovers_a_slope_on_one_feature():
    x = X2[:2000, :1]
    y = B0 + 2.0 * x[:, 0] + RNG.normal(0, 1, 2000)
    fit = dps.linear_regression(x, y, 1.0, method="theil_sen", bounds_X=(0, 10), bounds_y=(-10, 30), rng=3)
    assert abs(fit.coef[0] - 2.0) < 0.1 and abs(fit.intercept - B0) < 0.6
    assert fit.bounds_y == (-10.0, 30.0)


def test_without_intercept_the_model_goes_through_the_origin():
    y = X2 @ BETA + RNG.normal(0, 1, N)
    fit = dps.linear_regression(X2, y, 1.0, bounds_X=(0, 10), bounds_y=(-25, 15), clip=True, fit_intercept=False, rng=4)
    assert fit.intercept == 0.0
    np.testing.assert_allclose(fit.coef, BETA, atol=0.05)


def test_private_bounds_are_charged_with_the_fit_as_one_entry():
    acc = dps.Accountant(5.0, 1e-5)
    fit = dps.linear_regression(X2, Y2, 3.0, bounds_X="private", bounds_y="private", rng=5, accountant=acc)
    assert len(acc.ledger) == 1 and "private bounds" in acc.ledger[0].note
    assert np.all(fit.bounds_X[0] < 1) and np.all(fit.bounds_X[1] > 9)
    np.testing.assert_allclose(fit.coef, BETA, atol=0.25)


def test_dataframe_columns_name_the_coefficients_and_bounds_by_column():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X2, columns=["a", "b"])
    fit = dps.linear_regression(
        df, Y2, 1.0, bounds_X={"a": (0, 10), "b": (0, 10)}, bounds_y=(-30, 20), clip=True, rng=6
    )
    same = dps.linear_regression(X2, Y2, 1.0, rng=6, **BOUNDS)
    assert fit.feature_names == ("a", "b")
    np.testing.assert_array_equal(fit.coef, same.coef)


def test_the_noisy_statistics_are_kept_for_inference():
    fit = dps.linear_regression(X2, Y2, 1.0, rng=7, **BOUNDS)
    stats = fit._statistics
    assert stats.gram.shape == (4, 4) and stats.sigma > 0 and stats.ridge >= 0 and stats.sigma_eigenvalue > 0


# ----------------------------------------------------------------------------- bad input, before any charge


def _bad(**kw):
    base = dict(X=X2[:500], y=Y2[:500], epsilon=1.0, **BOUNDS)
    base.update(kw)
    return base


BAD = {
    "y strings": (_bad(y=np.array(["a"] * 500)), dps.DataValidationError, "y"),
    "y two columns": (_bad(y=np.ones((500, 2))), dps.DataValidationError, "y"),
    "lengths": (_bad(y=Y2[:400]), dps.DataValidationError, "same number of rows"),
    "bounds_y missing": (_bad(bounds_y=None), dps.ParameterError, "bounds_y"),
    "bounds_X missing": (_bad(bounds_X=None), dps.ParameterError, "bounds_X"),
    "bounds_X reversed": (_bad(bounds_X=(10, 0)), dps.ParameterError, "bounds_X"),
    "bounds_X dict without names": (_bad(bounds_X={"a": (0, 1)}), dps.ParameterError, "bounds_X"),
    "method": (_bad(method="lasso"), dps.ParameterError, "method"),
    "delta for theil_sen": (
        _bad(X=X2[:500, :1], method="theil_sen", delta=1e-6),
        dps.ParameterError,
        "delta",
    ),
    "delta 0 for adassp": (_bad(delta=0.0), dps.ParameterError, "delta"),
    "delta 0 for tukey": (dict(X=X2, y=Y2, epsilon=1.0, method="tukey", delta=0.0), dps.ParameterError, "delta"),
    "unit for theil_sen": (
        _bad(X=X2[:500, :1], method="theil_sen", privacy_unit=np.arange(500), max_rows=1),
        dps.ParameterError,
        "privacy unit",
    ),
    "theil_sen two features": (_bad(method="theil_sen", delta=0.0), dps.ParameterError, "one feature"),
    "tukey too few rows": (
        dict(X=X2[:500], y=Y2[:500], epsilon=1.0, method="tukey"),
        dps.DataValidationError,
        "subsets",
    ),
    "tukey bounds": (dict(X=X2, y=Y2, epsilon=1.0, method="tukey", bounds_X=(0, 1)), dps.ParameterError, "bounds"),
    "outside bounds": (_bad(clip=False, bounds_X=(0, 5)), dps.OutOfBoundsError, "bounds_X"),
    "NaN": (_bad(y=np.where(np.arange(500) == 3, np.nan, Y2[:500])), dps.DataValidationError, "NaN"),
    "epsilon": (_bad(epsilon=0.0), dps.ParameterError, "epsilon"),
    "max_rows without unit": (_bad(max_rows=2), dps.ParameterError, "max_rows"),
    "bounds_share": (_bad(bounds_X="private", bounds_share=1.5), dps.ParameterError, "bounds_share"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_input_raises_a_dpstats_error_naming_it_before_any_charge(name):
    kw, error, match = BAD[name]
    acc = dps.Accountant(10.0, 1e-3, allow_unproven=True)
    with pytest.raises(error, match=match):
        dps.linear_regression(**kw, rng=0, accountant=acc)
    assert len(acc.ledger) == 0


def test_one_ledger_entry_per_call_and_tukey_is_recorded_unproven():
    acc = dps.Accountant(10.0, 1e-4)
    dps.linear_regression(X2, Y2, 1.0, rng=0, accountant=acc, **BOUNDS)
    assert len(acc.ledger) == 1 and acc.ledger[0].mechanism == "linear_regression"
    with pytest.raises(dps.exceptions.UnprovenGuaranteeError):
        dps.linear_regression(X2, Y2, 1.0, method="tukey", rng=0, accountant=acc)
    assert len(acc.ledger) == 1
    open_acc = dps.Accountant(10.0, 1e-4, allow_unproven=True)
    dps.linear_regression(X2, Y2, 1.0, method="tukey", rng=0, accountant=open_acc)
    assert len(open_acc.ledger) == 1 and not open_acc.ledger[0].proven


def test_a_failed_ptr_releases_no_model_and_warns():
    """Models spread wide (pure noise, 4 rows per model) at a tiny ε cannot pass the test."""
    X, y = RNG.normal(0, 1, (4000, 1)), RNG.normal(0, 1, 4000)
    with pytest.warns(PTRFailedWarning):
        fit = dps.linear_regression(X, y, 0.05, method="tukey", subsets=1000, rng=0)
    assert not fit.released and np.isnan(fit.coef).all()


# ----------------------------------------------------------------------------- the certified eigenvalue


def test_the_certified_smallest_eigenvalue_is_within_its_public_bound():
    from dpstats.linear_model._ssp import certified_min_eigenvalue

    rng = np.random.default_rng(1)
    for d, scale in [(3, 1.0), (10, 1e3), (30, 1e6)]:
        Z = rng.normal(0, 1, (5 * d, d))
        A = Z.T @ Z * scale / (5 * d)
        exact = np.linalg.eigvalsh(A)[0]
        value, tau = certified_min_eigenvalue(A, float(np.trace(A)) * 2, 1e-9)
        assert abs(value - exact) <= tau
        assert tau < 1e-9 * np.trace(A)  # and the bound is tight enough to matter little


# ----------------------------------------------------------------------------- the sensitivity checker


def _worst_rows():
    """Row 0 at the corners whose scaled rows are orthogonal unit vectors (the Gram matrix's worst case)."""
    X = np.array([[1.0, 1.0], [0.5, 0.2], [0.1, 0.9], [0.3, 0.3]])
    y = np.array([1.0, 0.2, 0.7, 0.4])
    Xn, yn = X.copy(), y.copy()
    Xn[0], yn[0] = [1.0, 0.0], 0.0
    return [((X, y), (Xn, yn))]


def _ssp(method, **kw):
    return lambda data, r: (
        dps.linear_regression(data[0], data[1], 1.0, method=method, bounds_X=(0, 1), bounds_y=(0, 1), rng=r, **kw).coef
    )


def _theil_sen(data, r):
    return dps.linear_regression(
        data[0][:, :1], data[1], 1.0, method="theil_sen", bounds_X=(0, 1), bounds_y=(0, 1), rng=r
    ).coef


def _tukey_pairs():
    rng = np.random.default_rng(3)
    X = rng.normal(0, 1, (400, 1))
    y = 2 * X[:, 0] + rng.normal(0, 0.1, 400)
    Xn, yn = X.copy(), y.copy()
    Xn[0], yn[0] = 50.0, -100.0
    return [((X, y), (Xn, yn))]


def _tukey(data, r):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTRFailedWarning)
        return dps.linear_regression(data[0], data[1], 2.0, method="tukey", subsets=40, rng=r).coef


def _units_pairs():
    X = np.array([[1.0, 1.0], [1.0, 1.0], [0.5, 0.2], [0.1, 0.9], [0.3, 0.3]])
    y = np.array([1.0, 1.0, 0.2, 0.7, 0.4])
    ids = np.array([0, 0, 1, 2, 3])
    Xn, yn = X.copy(), y.copy()
    Xn[:2], yn[:2] = [1.0, 0.0], 0.0
    return [((X, y, ids), (Xn, yn, ids))]


def _units(method):
    return lambda data, r: (
        dps.linear_regression(
            data[0],
            data[1],
            1.0,
            method=method,
            bounds_X=(0, 1),
            bounds_y=(0, 1),
            privacy_unit=data[2],
            max_rows=2,
            rng=r,
        ).coef
    )


SENSITIVITY = {
    "adassp": (_ssp("adassp"), _worst_rows()),
    "ssp": (_ssp("ssp"), _worst_rows()),
    "ssp no intercept": (_ssp("ssp", fit_intercept=False), _worst_rows()),
    "adassp units": (_units("adassp"), _units_pairs()),
    "theil_sen": (_theil_sen, _worst_rows()),
    "tukey": (_tukey, _tukey_pairs()),
}


@pytest.mark.parametrize("name", SENSITIVITY)
def test_linear_regression_keeps_its_declared_sensitivities(name):
    mechanism, pairs = SENSITIVITY[name]
    for seed, (a, b) in enumerate(pairs):
        report = check_sensitivity(mechanism, a, b, seed=seed)
        assert report.ok, report.violations
        assert report.checks and report.charges == 1 and report.draws >= 1


def test_a_halved_gram_sensitivity_is_flagged(monkeypatch):
    """The Gram matrix's Δ₂ = √2 (rows of norm 1): declared as √2/2 it is exceeded on the worst-case rows."""
    module = importlib.import_module("dpstats.linear_model._ssp")
    monkeypatch.setattr(module, "sqrt_up", lambda v: math.sqrt(v) / 2)
    monkeypatch.setattr(module, "_plan", module._plan.__wrapped__)  # the cached honest calibration would hide it
    mechanism, pairs = SENSITIVITY["ssp"]
    report = check_sensitivity(mechanism, *pairs[0])
    assert not report.ok


def test_a_halved_median_sensitivity_is_flagged():
    """Theil–Sen's ranks move by k (the matchings): declared as k = 1 with 3 matchings, the check fails."""
    from dpstats.linear_model import _theil_sen

    original = _theil_sen._median

    def halved(values, epsilon, sensitivity, lower, upper, rng):
        return original(values, epsilon, 1, lower, upper, rng)

    def mechanism(data, r):
        return dps.linear_regression(
            data[0][:, :1], data[1], 1.0, method="theil_sen", bounds_X=(0, 1), bounds_y=(0, 1), matchings=3, rng=r
        )

    pairs = _worst_rows()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_theil_sen, "_median", halved)
        report = check_sensitivity(mechanism, *pairs[0])
    assert not report.ok


# ----------------------------------------------------------------------------- empirical audits


def _audit_pair():
    """Row 0 moved from (x, y) = (1, 1) to (1, 0) among rows at the centre: in the scaled rows z = a[x̃, 1, ỹ]
    (a² = 1/3) the Gram entries x̃·ỹ and 1·ỹ move from 1/3 to −1/3 each."""
    X = np.full((3, 1), 0.5)
    y = np.full(3, 0.5)
    Xn, yn = X.copy(), y.copy()
    X[0], y[0], Xn[0], yn[0] = 1.0, 1.0, 1.0, 0.0
    return (X, y), (Xn, yn)


def _gram_entries(eps):
    def run(data, r):
        fit = dps.linear_regression(data[0], data[1], eps, 1e-6, method="ssp", bounds_X=(0, 1), bounds_y=(0, 1), rng=r)
        return fit._statistics.gram[0, 2] + fit._statistics.gram[1, 2]  # x̃·ỹ and 1·ỹ: they move together by 4/3

    return run


def test_audit_ssp_stays_below_epsilon_and_flags_an_under_noised_variant():
    """The two moving entries' sum shifts by 4/3 against noise of σ√2 (σ about 3.3 at ε = 1); the variant calibrated
    for 40ε (σ about 0.1) separates the neighbours almost surely and is flagged far above ε."""
    data, neighbour = _audit_pair()
    event = lambda out: out > 0.0  # noqa: E731
    clean = audit(_gram_entries(1.0), data, neighbour, event, n_runs=1000, delta=1e-6, rng=11)
    broken = audit(_gram_entries(40.0), data, neighbour, event, n_runs=1000, delta=1e-6, rng=11)
    assert clean.epsilon_lower <= 1.0
    assert broken.epsilon_lower > 1.0


# ----------------------------------------------------------------------------- the estimator


def test_estimator_fits_predicts_scores_and_keeps_feature_names():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X2, columns=["a", "b"])
    model = DPLinearRegression(bounds_X={"a": (0, 10), "b": (0, 10)}, bounds_y=(-30, 20), clip=True, random_state=0)
    model.fit(df, Y2)
    assert list(model.feature_names_in_) == ["a", "b"] and model.coef_.shape == (2,)
    assert model.score(df, Y2) > 0.95 * _ols_r2()
    assert model.predict(df.iloc[:3]).shape == (3,)


def _ols_r2():
    from sklearn.linear_model import LinearRegression

    return LinearRegression().fit(X2, Y2).score(X2, Y2)


def test_estimator_in_a_pipeline_and_a_grid_search():
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    base = DPLinearRegression(bounds_X=(0, 10), bounds_y=(-30, 20), clip=True, random_state=0)
    assert make_pipeline(base).fit(X2, Y2).score(X2, Y2) > 0.9
    search = GridSearchCV(base, {"method": ["adassp", "ssp"]}, cv=2).fit(X2, Y2)
    assert search.best_params_["method"] in ("adassp", "ssp")


def test_estimator_refuses_ci_level_for_now():
    with pytest.raises(dps.ParameterError, match="ci_level"):
        DPLinearRegression(bounds_X=(0, 10), bounds_y=(-30, 20), ci_level=0.95).fit(X2, Y2)


def test_estimator_with_privacy_units():
    ids = np.repeat(np.arange(N // 4), 4)
    model = DPLinearRegression(bounds_X=(0, 10), bounds_y=(-30, 20), clip=True, max_rows=2, random_state=0)
    model.fit(X2, Y2, privacy_unit=ids)
    np.testing.assert_allclose(model.coef_, BETA, atol=0.25)  # m = 2: twice the noise, half the rows


# ----------------------------------------------------------------------------- the block Gram matrix


def test_each_block_gram_is_within_its_public_error_of_the_scaled_rows():
    """Σzzᵀ from a block's raw Gram matrix (centred and scaled afterwards) against the product of the rows z
    themselves, with bounds far from 0 (where centring after summing cancels most): within γ_{r+8}·r·W², the
    error the slack charges, plus the explicit product's own γ_r·r. Dropping the centring is far outside it."""
    from dpstats._rounding import gamma
    from dpstats.linear_model._ssp import Scaling, _block_gram

    rng = np.random.default_rng(5)
    r, d = 3000, 4
    lower, upper = np.array([40.0, -3.0, 1e3, 0.0, 250.0]), np.array([80.0, 5.0, 1.1e3, 1.0, 260.0])
    X = rng.uniform(lower[:d], upper[:d], (r, d))
    y = rng.uniform(lower[d], upper[d], r)
    scaling = Scaling(lower, upper, True, False)
    Z = scaling.rows(X, y)
    assert np.sqrt((Z**2).sum(axis=1)).max() <= 1.0
    explicit = Z.T @ Z
    grid = 2.0**-40
    fused = _block_gram(X, y, scaling, 1.0 / grid) * grid
    bound = gamma(r + 8) * r * scaling.magnitude**2 + gamma(r) * r + grid
    assert np.abs(fused - explicit).max() <= bound
    uncentred = Scaling(lower, upper, True, False)
    object.__setattr__(uncentred, "_offsets", np.zeros_like(uncentred._offsets))
    wrong = _block_gram(X, y, uncentred, 1.0 / grid) * grid
    assert np.abs(wrong - explicit).max() > 1e6 * bound
