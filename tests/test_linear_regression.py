"""dps.linear_regression and DPLinearRegression: each method recovers a known model, bad input is refused before
anything is charged, one ledger entry per call charged before anything is drawn, the Gram matrix's floating-point
error and noise wherever the bounds lie, TukeyEM's public constants, its refusals and its privacy units, the
certified eigenvalue. The sensitivity checker's worst-case neighbours (with mis-declared variants) and the audits
(with under-noised variants) are declared in ``dpstats/linear_model/_cases.py`` and run by ``tests/test_sensitivity.py``
and ``tests/test_audit.py``."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

import dpstats as dps
from dpstats import _trace
from dpstats.estimators import DPLinearRegression
from dpstats.linear_model import PTRFailedWarning
from dpstats.linear_model import _tukey as tukey

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
    # the review of issue 35: a public side is checked even when the other side's bounds are private ...
    "X outside, bounds_y private": (
        _bad(clip=False, bounds_X=(0, 5), bounds_y="private"),
        dps.OutOfBoundsError,
        r"^X has \d+ value\(s\) outside bounds_X",
    ),
    "y outside, bounds_X private": (
        _bad(clip=False, bounds_X="private", bounds_y=(-5, 5)),
        dps.OutOfBoundsError,
        r"^y has \d+ value\(s\) outside bounds_y",
    ),
    # ... bounds too narrow to scale to the unit box are refused, not turned into infinities ...
    "bounds_X too narrow to scale": (_bad(bounds_X=(0, 1e-310)), dps.ParameterError, "bounds_X"),
    # ... TukeyEM configurations that can never pass their test are refused, not charged ...
    "tukey can never release": (dict(X=X2, y=Y2, epsilon=0.1, method="tukey"), dps.ParameterError, "subsets >= 3326"),
    "tukey rate not positive": (
        dict(X=X2, y=Y2, epsilon=1e-3, delta=0.9, method="tukey"),
        dps.ParameterError,
        "epsilon",
    ),
    # ... and Theil-Sen on one row names what is wrong (it used to report matchings = 0, never passed)
    "theil_sen one row": (
        _bad(X=X2[:1, :1], y=Y2[:1], method="theil_sen"),
        dps.DataValidationError,
        "X has 1 row.*at least 2",
    ),
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


def test_a_failed_ptr_releases_no_model_and_warns_at_the_callers_line():
    """m = 400 at ε = 1 can pass (its reachable distance is above the threshold) but only for models whose boxes
    hardly shrink with depth: 400 models of 4 rows of pure noise (Cauchy responses) are far too spread. The warning
    names this file's line, not the library's."""
    X, y = RNG.normal(0, 1, (1600, 1)), RNG.standard_cauchy(1600)
    assert tukey.reachable_distance(400, 1.0, 1e-6) >= tukey.calibration(1.0, 1e-6).threshold
    with pytest.warns(PTRFailedWarning) as record:
        fit = dps.linear_regression(X, y, 1.0, method="tukey", subsets=400, rng=0)
    assert not fit.released and np.isnan(fit.coef).all()
    assert record[0].filename == __file__


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


def test_estimator_ci_level_sets_the_intervals_and_refuses_a_bad_level():
    """ci_level gives coef_ci_, intercept_ci_ and coef_pvalue_ (tests/test_linear_regression_ci.py checks their
    coverage); a level outside (0, 1) raises naming ci_level, and the fit's release is the one without it."""
    kwargs = {"bounds_X": (0, 10), "bounds_y": (-30, 20), "clip": True, "random_state": 0}
    model = DPLinearRegression(ci_level=0.95, **kwargs).fit(X2, Y2)
    assert model.coef_ci_.shape == (X2.shape[1], 2) and model.intercept_ci_.shape == (2,)
    assert model.coef_pvalue_.shape == (X2.shape[1],)
    assert np.all(model.coef_ci_[:, 0] <= model.coef_ci_[:, 1])
    np.testing.assert_array_equal(model.coef_, DPLinearRegression(**kwargs).fit(X2, Y2).coef_)
    for bad in (1.5, 95, 0.0):
        with pytest.raises(dps.ParameterError, match="ci_level"):
            DPLinearRegression(ci_level=bad, **kwargs).fit(X2, Y2)


def test_estimator_with_privacy_units():
    ids = np.repeat(np.arange(N // 4), 4)
    model = DPLinearRegression(bounds_X=(0, 10), bounds_y=(-30, 20), clip=True, max_rows=2, random_state=0)
    model.fit(X2, Y2, privacy_unit=ids)
    np.testing.assert_allclose(model.coef_, BETA, atol=0.25)  # m = 2: twice the noise, half the rows


def test_estimator_refuses_bounds_for_columns_x_does_not_have():
    """The estimator reads a dict of bounds as the function does: every column, exactly (it used to ignore an
    unknown key silently)."""
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X2[:500], columns=["a", "b"])
    bounds = {"a": (0, 10), "b": (0, 10), "c": (0, 1)}
    with pytest.raises(dps.ParameterError, match=r"bounds_X.*unknown \['c'\]"):
        DPLinearRegression(bounds_X=bounds, bounds_y=(-30, 20), clip=True, random_state=0).fit(df, Y2[:500])
    with pytest.raises(dps.ParameterError, match=r"bounds_X.*missing \['b'\]"):
        DPLinearRegression(bounds_X={"a": (0, 10)}, bounds_y=(-30, 20), clip=True, random_state=0).fit(df, Y2[:500])


# ----------------------------------------------------------------------------- the Gram matrix wherever the bounds lie


def _exact_gram(scaling, X, y):
    """Σ z zᵀ of the rows z = A(v − c̄) in rational arithmetic (the definition the release follows)."""
    factors = [Fraction(a) for a in scaling._factors]
    offsets = [Fraction(c) for c in scaling._offsets]
    V = np.column_stack([X, np.ones(len(y)), y] if scaling.intercept else [X, y])
    Z = [[f * (Fraction(float(v)) - c) for f, c, v in zip(factors, offsets, row, strict=True)] for row in V]
    k = scaling.width
    return [[sum(z[i] * z[j] for z in Z) for j in range(k)] for i in range(k)]


@pytest.mark.parametrize(
    "lower, upper",
    [
        ([1e3 + 0.1, -7e5, 123.456, 1e-3], [1e3 + 0.3, -6.9e5, 123.457, 1e-3 + 1e-9]),  # far from 0, narrow
        ([-1e160, 0.0, -1e300, -1.0], [1e160, 1.0, 1e300, 1.0]),  # squares beyond the float range
    ],
)
@pytest.mark.parametrize("intercept", [True, False])
def test_each_block_gram_is_within_its_public_error_of_the_exact_rows(lower, upper, intercept):
    """Each block's Σ z zᵀ on the grid against the exact rational sum, with values at the bounds and in between:
    within γ_{r+4}·r·a² + r·2^-1073 (what the slack charges) plus half a grid step, whatever the bounds' offset or
    size (the raw XᵀX of the old computation overflowed for bounds of ±1e160 and lost W² = (offset/width)² to
    cancellation for bounds far from 0)."""
    from dpstats._rounding import gamma
    from dpstats.linear_model._ssp import Scaling, _block_gram

    rng = np.random.default_rng(1)
    lower, upper = np.array(lower), np.array(upper)
    r = 300
    V = np.where(rng.integers(0, 2, (r, 4)).astype(bool), lower, upper)
    inside = lower / 2 + (upper / 2 - lower / 2) * rng.uniform(size=(r, 4)) * 2
    V = np.where(rng.uniform(size=(r, 4)) < 0.5, V, np.clip(inside, lower, upper))
    X, y = V[:, :3], V[:, 3]
    scaling = Scaling(lower, upper, intercept, False)
    grid = 2.0**-40
    fused = _block_gram(X, y, scaling, 1.0 / grid).astype(object)
    exact = _exact_gram(scaling, X, y)
    bound = Fraction(gamma(r + 4)) * r * Fraction(scaling.magnitude) ** 2 + Fraction(r, 2**1073) + Fraction(grid) / 2
    k = scaling.width
    worst = max(abs(Fraction(int(fused[i, j])) * Fraction(grid) - exact[i][j]) for i in range(k) for j in range(k))
    assert worst <= bound


def test_the_gram_noise_does_not_depend_on_where_the_bounds_lie():
    """The same data shifted by 1000 with its bounds: the same noise (the review's r02: the slack grew as the
    square of the bounds' offset over their width, σ 10.7 against 6.0 at n = 20 000, 6 539 against 6.0 at
    n = 10⁶), and the same fit up to the shift."""
    from dpstats.linear_model._ssp import Scaling, _plan

    for n in (20_000, 1_000_000):
        sigmas = []
        for offset in (0.0, 1e3):
            scaling = Scaling(np.array([offset, offset, 0.0]), np.array([offset + 1, offset + 1, 1.0]), True, False)
            sigmas.append(_plan(1.0, 1e-6, scaling.width, 1, n, False, scaling.magnitude).gram.noise_scale)
        assert sigmas[0] == sigmas[1]
    x = RNG.uniform(0, 1, (20_000, 2))
    y = x @ [0.5, -0.5] + 0.5
    fits = [
        dps.linear_regression(x + shift, y, 1.0, method="ssp", bounds_X=(shift, shift + 1), bounds_y=(0, 1), rng=3)
        for shift in (0.0, 1e3)
    ]
    assert fits[0]._statistics.sigma == fits[1]._statistics.sigma
    np.testing.assert_allclose(fits[0].coef, fits[1].coef, atol=1e-9)


def test_huge_bounds_release_a_gram_matrix_near_the_exact_one():
    """Bounds of ±1e160 (the review's r13): the released Gram matrix is within 6σ of the exact one on both
    neighbours (one of them used to release an entry of −4.4e12 against noise of scale 6: −2^63 grid steps)."""
    from dpstats.linear_model._ssp import Scaling

    X, y = np.zeros((4, 1)), np.zeros(4)
    moved = X.copy()
    moved[0] = 1e160
    bounds = dict(bounds_X=(-1e160, 1e160), bounds_y=(-1, 1))
    for data in (X, moved):
        fit = dps.linear_regression(data, y, 1.0, method="ssp", rng=5, **bounds)
        Z = Scaling(np.array([-1e160, -1.0]), np.array([1e160, 1.0]), True, False).rows(data, y)
        assert np.abs(fit._statistics.gram - Z.T @ Z).max() < 6 * fit._statistics.sigma


# ----------------------------------------------------------------------------- one charge, before anything is drawn


class _Steps(_trace.Recorder):
    """The order of a call's charges and draws."""

    def __init__(self):
        self.steps = []

    def observe(self, name, statistic, sensitivity, norm, exact):
        pass

    def draw(self, name, rng, sample):
        self.steps.append("draw")
        return sample()

    def event(self, kind, name, details):
        self.steps.append(kind)


@pytest.mark.parametrize("method", ["adassp", "ssp", "theil_sen"])
def test_private_bounds_and_the_fit_are_charged_once_before_anything_is_drawn(method):
    """The bounds' exponential mechanisms and the method: one charge, first (they used to be drawn before it, with
    a charge each on the trace: seven charges, the last one after eight draws)."""
    X = X2[:2000, :1] if method == "theil_sen" else X2[:2000]
    with _trace.recording(_Steps()) as steps:
        dps.linear_regression(X, Y2[:2000], 2.0, method=method, bounds_X="private", bounds_y="private", rng=1)
    assert steps.steps[0] == "charge" and steps.steps.count("charge") == 1 and "draw" in steps.steps


def test_a_refused_call_with_private_bounds_draws_nothing():
    acc = dps.Accountant(0.5, 1e-6)
    with _trace.recording(_Steps()) as steps, pytest.raises(dps.BudgetExceededError):
        dps.linear_regression(X2, Y2, 2.0, bounds_X="private", bounds_y="private", rng=0, accountant=acc)
    assert "draw" not in steps.steps and len(acc.ledger) == 0


def test_private_bounds_with_units_are_one_ledger_entry_stating_the_unit():
    ids = np.repeat(np.arange(N // 4), 4)
    acc = dps.Accountant(10.0, 1e-4)
    fit = dps.linear_regression(
        X2, Y2, 3.0, bounds_X="private", bounds_y="private", privacy_unit=ids, max_rows=2, rng=2, accountant=acc
    )
    (entry,) = acc.ledger
    assert entry.relation == "unit" and "at most 2 rows each" in entry.note and "private bounds" in entry.note
    np.testing.assert_allclose(fit.coef, BETA, atol=0.3)


# ----------------------------------------------------------------------------- TukeyEM: its constants and refusals


def _exp_upper(x: Fraction, terms: int = 80) -> Fraction:
    """A rational upper bound on e^x for 0 <= x <= 10: the Taylor sum over 1 − x^N/N! (the remainder is at most
    e^x x^N/N!)."""
    total, term = Fraction(0), Fraction(1)
    for i in range(terms):
        total += term
        term = term * x / (i + 1)
    return total / (1 - term)


def _exp_lower(x: Fraction, terms: int = 200) -> Fraction:
    """A rational lower bound on e^x for x >= 0: a Taylor sum (every term positive)."""
    total, term = Fraction(0), Fraction(1)
    for i in range(terms):
        total += term
        term = term * x / (i + 1)
    return total


@pytest.mark.parametrize(
    "epsilon, delta",
    [(2.0, 1e-9), (1.0, 1e-12), (4.0, 1e-12), (2.0, 1e-10), (1.0, 1e-6), (0.3, 1e-6), (8.0, 1e-5), (10.0, 0.5)],
)
def test_tukey_constants_never_overstate_the_guarantee(epsilon, delta):
    """θ e^{ε/2} <= δ, ε_PTR + 2c + θ <= ε (ln(1 + θ) <= θ), T >= b ln(1/δ) and the test's ln θ below the true one,
    each checked in exact rational
    arithmetic from rigorous bounds on the exponential (θ and c were rounded to nearest: the review's r18 found
    e^{ε/2}θ above δ by 1.6e-28 at ε = 4, δ = 1e-12)."""
    cal = tukey.calibration(epsilon, delta)
    eps, theta, rate = Fraction(epsilon), Fraction(cal.theta), Fraction(cal.rate)
    assert theta * _exp_upper(eps / 2) <= Fraction(delta)
    assert Fraction(cal.ptr.event.epsilon) + 2 * rate + theta <= eps
    scale = Fraction(cal.ptr.scale) * Fraction(cal.ptr.grid)
    assert _exp_lower(Fraction(cal.threshold) / scale) >= 1 / Fraction(delta)
    assert _exp_lower(-Fraction(cal.log_theta)) >= 1 / theta  # the test's ln θ is at most ln θ
    assert rate > 0 and theta > 0


def _distance_by_definition(log_v: np.ndarray, t: int, rate: float, log_theta: float) -> int:
    """Step 3 of the module docstring, every (k, g) tried: 1 + the largest k >= 0 such that some g >= 1 has
    log V_{t−k−2} − c·g <= log θ + log V_{t+k+g+1} with both indices in 1 … P (0 if none)."""
    depth, found = log_v.size, 0
    for k in range(depth):
        for g in range(1, depth + 1):
            low, high = t - k - 2, t + k + g + 1
            if 1 <= low and high <= depth and log_v[low - 1] - log_v[high - 1] - rate * g <= log_theta:
                found = max(found, k + 1)
    return found


def test_the_distance_to_unsafety_against_its_definition_on_hand_made_volumes():
    """_distance (which stops at the first k that fails) against every (k, g) tried, on non-increasing log-volumes
    of several shapes: geometric at slopes around the rate (where k̂ sits between 0 and its cap), plateaus and
    cliffs, equal volumes (the cap)."""
    cal = tukey.calibration(8.0, 1e-6)  # c near 2, g >= 9: distances up to 21 among 60 depths
    depth = 60
    t = depth // 2
    p = np.arange(1, depth + 1)
    shapes = [np.zeros(depth)]
    shapes += [-s * p for s in (0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0, 1.5, 1.9, 3.0)]
    shapes += [np.where(p < cut, 0.0, -drop) for cut in (10, 25, 31, 45) for drop in (1.0, 5.0, 40.0)]
    shapes += [-np.cumsum(np.random.default_rng(s).exponential(0.3, depth)) for s in range(10)]
    found = set()
    for log_v in shapes:
        expected = _distance_by_definition(log_v, t, cal.rate, cal.log_theta)
        assert tukey._distance(log_v, t, cal.rate, cal.log_theta) == expected
        found.add(expected)
    assert len(found) > 5  # the shapes reach several distances, not only 0 and the cap


def test_the_reachable_distance_bounds_every_dataset_and_is_reached():
    """k̂_max (closed form) equals _distance at equal volumes and bounds it on any model set."""
    for m, epsilon in [(40, 2.0), (200, 1.0), (1000, 1.0), (1000, 0.3), (1001, 4.0), (4000, 0.1)]:
        cal = tukey.calibration(epsilon, 1e-6)
        depth = m // 2
        equal = tukey._distance(np.zeros(depth), depth // 2, cal.rate, cal.log_theta)
        assert tukey.reachable_distance(m, epsilon, 1e-6) == equal
    rng = np.random.default_rng(0)
    cal = tukey.calibration(2.0, 1e-6)
    for _ in range(50):
        models = rng.standard_t(rng.choice([1.0, 3.0, 30.0]), (2, 1000)) * rng.choice([1e-3, 1.0, 1e3])
        log_v = tukey._log_volumes(np.sort(models, axis=1))
        assert tukey._distance(log_v, 250, cal.rate, cal.log_theta) <= tukey.reachable_distance(1000, 2.0, 1e-6)


def test_the_smallest_workable_subsets_are_as_documented():
    for epsilon, m in tukey.SMALLEST_SUBSETS.items():
        assert tukey.smallest_subsets(epsilon, 1e-6) == m
        threshold = tukey.calibration(epsilon, 1e-6).threshold
        assert tukey.reachable_distance(m, epsilon, 1e-6) >= threshold > tukey.reachable_distance(m - 1, epsilon, 1e-6)


def test_a_configuration_that_can_never_release_is_refused_before_any_charge():
    """ε = 0.1 with the default m = 1000 (the review's r19: 20 calls, none released, 2.0 ε charged)."""
    acc = dps.Accountant(10.0, 1e-3, allow_unproven=True)
    with pytest.raises(dps.ParameterError, match="subsets >= 3326"):
        dps.linear_regression(X2, Y2, 0.1, method="tukey", rng=0, accountant=acc)
    assert acc.ledger == [] and acc.spent == (0.0, 0.0)


# ----------------------------------------------------------------------------- TukeyEM with privacy units


def _unit_data(units: int = 1200, rows: int = 6):
    rng = np.random.default_rng(0)
    ids = np.repeat(np.arange(units), rows)
    X = rng.uniform(0, 1, (ids.size, 1))
    return X, 1 + 2 * X[:, 0] + rng.normal(0, 0.05, ids.size), ids


def _tukey_models(monkeypatch, calls):
    """Run each call and return the models TukeyEM fitted in it."""
    seen, original = [], tukey._models
    monkeypatch.setattr(tukey, "_models", lambda Z, y, groups: seen.append(original(Z, y, groups)) or seen[-1])
    for call in calls:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PTRFailedWarning)
            call()
    return seen


def test_one_unit_changes_at_most_one_tukey_model(monkeypatch):
    """Unit 0 loses one of its rows: every other unit keeps its rows, its subset and their order, so one model
    changes (the review's r21: the rows' positions were hashed into the bounding, and all 1000 models moved)."""
    X, y, ids = _unit_data()
    kw = dict(method="tukey", subsets=300, max_rows=4, rng=7)
    first, second = _tukey_models(
        monkeypatch,
        [
            lambda: dps.linear_regression(X, y, 4.0, privacy_unit=ids, **kw),
            lambda: dps.linear_regression(X[1:], y[1:], 4.0, privacy_unit=ids[1:], **kw),
        ],
    )
    assert int((first != second).any(axis=1).sum()) <= 1


def test_tukey_with_units_is_the_same_for_any_order_of_the_rows():
    """The review's r20: the same rows shuffled, the same seed, the same release (bit for bit)."""
    X, y, ids = _unit_data()
    order = np.random.default_rng(1).permutation(ids.size)
    fits = [
        dps.linear_regression(a, b, 4.0, method="tukey", subsets=300, privacy_unit=c, max_rows=4, rng=7)
        for a, b, c in ((X, y, ids), (X[order], y[order], ids[order]))
    ]
    assert fits[0].released
    np.testing.assert_array_equal(
        np.append(fits[0].coef, fits[0].intercept), np.append(fits[1].coef, fits[1].intercept)
    )


def test_tukey_with_units_states_its_rows_per_unit_in_the_ledger():
    X, y, ids = _unit_data()
    acc = dps.Accountant(10.0, 1e-4, allow_unproven=True)
    dps.linear_regression(X, y, 4.0, method="tukey", subsets=300, privacy_unit=ids, max_rows=4, rng=0, accountant=acc)
    (entry,) = acc.ledger
    assert entry.relation == "unit" and "1200 units (public), at most 4 rows each" in entry.note


def test_a_units_subset_depends_on_its_own_identifier_only(monkeypatch):
    """Unit 0 renamed (the same rows): its rows move from one subset to another and nothing else moves (two models;
    a rank of the identifiers among all units would have moved most of them)."""
    X, y, ids = _unit_data()
    kw = dict(method="tukey", subsets=300, max_rows=4, rng=7)
    renamed = np.where(ids == 0, 10**6, ids)
    first, second = _tukey_models(
        monkeypatch,
        [
            lambda: dps.linear_regression(X, y, 4.0, privacy_unit=ids, **kw),
            lambda: dps.linear_regression(X, y, 4.0, privacy_unit=renamed, **kw),
        ],
    )
    assert int((first != second).any(axis=1).sum()) <= 2
