"""Confidence intervals, t-test p-values and the F test of dps.linear_regression's coefficients (``ci=``; SSP and
AdaSSP: :mod:`dpstats.inference._regression`).

Coverage is checked by simulation against known population coefficients: R = 200 data sets drawn afresh from the
population (fixed seeds), each released with ``ci=0.95``; the count of intervals that cover must be at least the
0.001-quantile of Binomial(R, 0.95) — a correct interval fails this once in a thousand seeds, and the threshold is
never tuned. Two regimes: a small n where the noise dominates the error, and a large n·ε where the sampling does
(√n·ε the same at n = 5 000, ε = 40 as at n = 20 000, ε = 20: the ratio of sampling to noise error), each for a
Gaussian design (clipped at ±4σ, which almost never happens) and a bounded, non-Gaussian one (uniform features,
uniform errors), for both methods. In each regime the wrong variant — the same bootstrap with only the part of the
error that does *not* dominate (the non-private OLS interval that ignores the noise at small n, the noise-only
interval at large n·ε), computed from the same releases — must fail the same threshold for every coefficient.

The coefficient t-test (H0: β_j = 0, two-sided) keeps its size: under β_1 = 0 it rejects at 0.05 no more often than
the binomial 0.001-quantile allows, and the noise-ignoring test rejects far more. The F test (H0: every slope is 0,
the intercept free; ``f_pvalue``) keeps its size the same way, with three uniform features, in both regimes and for
both methods; the wrong variant fails it there (the non-private F test, scipy.stats.f on the noisy statistics, at
small n; the noise-only bootstrap of the same statistic at large n·ε); and under a clear alternative it rejects in
at least the 0.001-quantile of Binomial(100, 1/2) of 100 runs (its power is at least a half, and far above 0.05).
Bad input (a level outside (0, 1), ci for TukeyEM or DPTheilSen, with a privacy unit or private bounds) raises
before anything is charged; a call with ci is one ledger entry whose note states the (unchanged) split, and its
release is bitwise the one without ci."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from scipy.stats import f as f_distribution

import dpstats as dps
from dpstats.inference._regression import coefficient_inference
from dpstats.inference._simulate import NoiseModel

LEVEL, R, ALPHA = 0.95, 200, 1e-3
BETA, B0 = np.array([1.0, -0.5]), 0.5
TRUE = np.append(BETA, B0)
#: the fewest covering intervals a correct 95 % interval gives in R runs, but once in a thousand seeds
ENOUGH = binom.ppf(ALPHA, R, LEVEL)
#: (n, ε) of the two regimes
SMALL, LARGE = (1000, 2.0), (5000, 40.0)


def population(design: str, n: int, rng: np.random.Generator, beta=BETA):
    """(X, y, bounds_X, bounds_y): n rows of the population with coefficients ``beta`` and intercept B0."""
    if design == "gaussian":
        X = rng.normal(0.0, 1.0, (n, 2))
        return X, B0 + X @ beta + rng.normal(0.0, 1.0, n), (-4, 4), (-8, 8)
    X = rng.uniform(-1.0, 1.0, (n, 2))
    return X, B0 + X @ beta + rng.uniform(-1.0, 1.0, n), (-1, 1), (-3, 3)


def wrong(estimate, parts: tuple[str, ...], rng, **options):
    """The same bootstrap on the same release, simulating only ``parts`` of the error."""
    stats = estimate.estimate._statistics
    return coefficient_inference(
        stats.gram,
        stats.rows_bound,
        constant=stats.scaling.features,
        ridge=stats.ridge,
        noise=NoiseModel.of(stats.noise),
        affine=stats.scaling.affine(),
        level=LEVEL,
        rng=rng,
        parts=parts,
        **options,
    )


def runs(method: str, design: str, regime, seed: int, beta=BETA):
    """R releases with ci on fresh data: each (the Estimate, the wrong variant's result)."""
    n, epsilon = regime
    dominated = ("sampling",) if regime == SMALL else ("noise",)  # the part that does not dominate
    for r in range(R):
        rng = np.random.default_rng([seed, r])
        X, y, bounds_X, bounds_y = population(design, n, rng, beta)
        found = dps.linear_regression(
            X, y, epsilon, method=method, bounds_X=bounds_X, bounds_y=bounds_y, clip=True, rng=rng, ci=LEVEL
        )
        yield found, wrong(found, dominated, rng)


CASES = [
    pytest.param(method, design, regime, seed, id=f"{method}-{design}-{'small n' if regime == SMALL else 'large n·ε'}")
    for seed, (method, design, regime) in enumerate(
        (m, d, g) for m in ("ssp", "adassp") for d in ("gaussian", "uniform") for g in (SMALL, LARGE)
    )
]


@pytest.mark.parametrize("method, design, regime, seed", CASES)
def test_the_interval_covers_the_population_coefficients_and_the_wrong_variant_does_not(method, design, regime, seed):
    right, bad = np.zeros(3, int), np.zeros(3, int)
    for found, variant in runs(method, design, regime, 100 + seed):
        ci = np.asarray(found.ci)
        right += (ci[:, 0] <= TRUE) & (TRUE <= ci[:, 1])
        bad += (variant.low <= TRUE) & (TRUE <= variant.high)
    print(f"{method} {design} n, eps = {regime}: covered {right.tolist()}, wrong variant {bad.tolist()} of {R}")
    assert np.all(right >= ENOUGH), (right, ENOUGH)
    assert np.all(bad < ENOUGH), (bad, ENOUGH)


@pytest.mark.parametrize("method", ["ssp", "adassp"])
def test_the_coefficient_t_test_keeps_its_size_and_the_naive_test_does_not(method):
    """β_1 = 0 (small n, uniform design): the p-value of H0: β_1 = 0 is below 0.05 in at most the binomial
    0.001-quantile of R runs at 0.05; the test that ignores the noise rejects more often than that."""
    null = np.array([1.0, 0.0])
    most = binom.isf(ALPHA, R, 0.05)
    rejected = naive = 0
    for found, variant in runs(method, "uniform", SMALL, 300 + (method == "adassp"), beta=null):
        rejected += found.pvalue[1] < 0.05
        naive += variant.pvalue[1] < 0.05
    print(f"{method}: rejected {rejected}, naive {naive} of {R} (at most {most})")
    assert rejected <= most
    assert naive > most


# ----------------------------------------------------------------------------- the F test of all slopes = 0

#: the most rejections at 0.05 a valid test gives in R runs, but once in a thousand seeds
MOST = binom.isf(ALPHA, R, 0.05)


def uniform_rows(n: int, beta: np.ndarray, rng: np.random.Generator):
    """n rows with len(beta) uniform features on [-1, 1], intercept B0 and a uniform error on [-1, 1]."""
    X = rng.uniform(-1.0, 1.0, (n, beta.size))
    return X, B0 + X @ beta + rng.uniform(-1.0, 1.0, n)


def scipy_f_pvalue(estimate) -> float:
    """The non-private F test's p-value (scipy.stats.f) computed on the noisy statistics as if they were exact."""
    stats = estimate.estimate._statistics
    G, c, n = stats.gram, stats.scaling.features, stats.rows_bound
    kx = G.shape[0] - 1
    d = kx - 1
    theta = np.linalg.solve(G[:kx, :kx], G[:kx, kx])
    rss = G[kx, kx] - theta @ G[:kx, kx]
    total = G[kx, kx] - G[c, kx] ** 2 / G[c, c]
    if rss <= 0:
        return 0.0
    return float(f_distribution.sf((total - rss) / d / (rss / (n - kx)), d, n - kx))


def f_runs(method: str, regime, seed: int, beta: np.ndarray, wrong_variant: bool = True, runs: int = R):
    """``runs`` releases with ci on fresh data (three uniform features): each (its f_pvalue, the wrong variant's)."""
    n, epsilon = regime
    for r in range(runs):
        rng = np.random.default_rng([seed, r])
        X, y = uniform_rows(n, beta, rng)
        found = dps.linear_regression(
            X, y, epsilon, method=method, bounds_X=(-1, 1), bounds_y=(-3, 3), clip=True, rng=rng, ci=LEVEL
        )
        if not wrong_variant:
            variant = None
        elif regime == SMALL:
            variant = scipy_f_pvalue(found)
        else:
            variant = wrong(found, ("noise",), rng, draws=400).f_pvalue  # fewer draws: it fails all the same
        yield found.f_pvalue, variant


F_CASES = [
    pytest.param(method, regime, 400 + seed, id=f"{method}-{'small n' if regime == SMALL else 'large n·ε'}")
    for seed, (method, regime) in enumerate((m, g) for m in ("ssp", "adassp") for g in (SMALL, LARGE))
]


@pytest.mark.parametrize("method, regime, seed", F_CASES)
def test_the_f_test_keeps_its_size_and_the_wrong_variant_does_not(method, regime, seed):
    """All slopes 0: f_pvalue < 0.05 in at most MOST of R runs; the wrong variant (the noise-ignoring scipy F test
    at small n, the noise-only bootstrap at large n·ε) rejects in more."""
    rejected = wrong_rejected = 0
    for value, variant in f_runs(method, regime, seed, np.zeros(3)):
        assert 0.0 < value <= 1.0
        rejected += value < 0.05
        wrong_rejected += variant < 0.05
    print(f"{method} n, eps = {regime}: F test rejected {rejected}, wrong {wrong_rejected} of {R} (most {MOST})")
    assert rejected <= MOST
    assert wrong_rejected > MOST


@pytest.mark.parametrize("method", ["ssp", "adassp"])
def test_the_f_test_has_power_under_a_clear_alternative(method):
    """Every slope 0.3 (small n): f_pvalue < 0.05 in at least the 0.001-quantile of Binomial(100, 1/2) of 100
    runs (a test whose power is a half or more fails this once in a thousand seeds; a valid test's power is at
    least 0.05, and Binomial(100, 0.05) reaches that quantile with probability 1e-20)."""
    runs = 100
    least = binom.ppf(ALPHA, runs, 0.5)
    found = f_runs(method, SMALL, 410, np.full(3, 0.3), wrong_variant=False, runs=runs)
    rejected = sum(value < 0.05 for value, _ in found)
    print(f"{method}: F test rejected {rejected} of {runs} under the alternative (at least {least})")
    assert rejected >= least


# ----------------------------------------------------------------------------- the result, the ledger, bad input

RNG = np.random.default_rng(5)
X = RNG.uniform(-1, 1, (2000, 2))
Y = B0 + X @ BETA + RNG.uniform(-1, 1, 2000)
BOUNDS = {"bounds_X": (-1, 1), "bounds_y": (-3, 3)}


@pytest.mark.parametrize("method", ["ssp", "adassp"])
def test_a_call_with_ci_is_the_release_without_it_in_one_ledger_entry(method):
    plain, with_ci = dps.Accountant(10.0, 1e-3), dps.Accountant(10.0, 1e-3)
    released = dps.linear_regression(X, Y, 1.0, method=method, **BOUNDS, rng=3, accountant=plain)
    found = dps.linear_regression(X, Y, 1.0, method=method, **BOUNDS, rng=3, accountant=with_ci, ci=0.9)
    assert isinstance(found, dps.Estimate) and found.level == 0.9
    np.testing.assert_array_equal(found.estimate.coef, released.coef)
    assert found.estimate.intercept == released.intercept
    assert np.asarray(found.ci).shape == (3, 2) and np.asarray(found.pvalue).shape == (3,)
    assert np.all(np.asarray(found.std_error) > 0) and "bootstrap" in found.method
    assert isinstance(found.f_pvalue, float) and 0.0 < found.f_pvalue < 0.05 and found.f_statistic > 0
    assert "f_pvalue=" in repr(found) and "f_pvalue" not in repr(dps.mean(Y, 1.0, bounds=(-3, 3), rng=0, ci=0.9))
    assert len(with_ci.ledger) == 1 and len(plain.ledger) == 1
    entry, base = with_ci.ledger[0], plain.ledger[0]
    assert entry.epsilon == base.epsilon and entry.delta == base.delta
    assert [s.scale for s in entry.noise] == [s.scale for s in base.noise]
    assert "ci: a parametric bootstrap" in entry.note and "split as without ci" in entry.note
    if method == "adassp":
        assert "1/3" in entry.note and "2/3" in entry.note
    preview = dps.preview(dps.linear_regression, 1.0, n=2000, d=2, method=method, **BOUNDS, ci=0.9)
    assert [s.scale for s in preview.statements] == pytest.approx([s.scale for s in entry.noise], rel=1e-12)
    assert "ci: a parametric bootstrap" in preview.note


def test_named_features_and_no_intercept():
    frame = pd.DataFrame(X, columns=["age", "dose"])
    found = dps.linear_regression(frame, Y, 1.0, **BOUNDS, rng=0, ci=0.95)
    assert list(found.ci.index) == ["age", "dose", "intercept"] and list(found.ci.columns) == ["low", "high"]
    assert list(found.pvalue.index) == ["age", "dose", "intercept"]
    through = dps.linear_regression(X, Y - B0, 1.0, **BOUNDS, fit_intercept=False, rng=0, ci=0.95)
    assert np.asarray(through.ci).shape == (2, 2)
    assert np.all((through.low <= BETA + 0.2) & (BETA - 0.2 <= through.high))
    assert list(found.pvalue.index) == ["age", "dose", "intercept"] and found.f_pvalue < 0.05
    assert isinstance(through.f_pvalue, float) and through.f_pvalue < 0.05


def test_the_estimator_sets_f_pvalue_with_ci_level():
    from dpstats.estimators import DPLinearRegression

    model = DPLinearRegression(epsilon=1.0, method="ssp", **BOUNDS, random_state=0, ci_level=0.95).fit(X, Y)
    assert model.f_pvalue_ == model.estimate_.f_pvalue and 0.0 < model.f_pvalue_ < 0.05
    assert not hasattr(DPLinearRegression(epsilon=1.0, **BOUNDS, random_state=0).fit(X, Y), "f_pvalue_")


BAD = [
    ({"ci": 0.0}, "ci"),
    ({"ci": 1.0}, "ci"),
    ({"ci": 95}, "ci"),
    ({"ci": 0.95, "method": "tukey", "bounds_X": None, "bounds_y": None}, "ci is not available for method='tukey'"),
    ({"ci": 0.95, "method": "theil_sen", "delta": 0.0}, "ci is not available for method='theil_sen'"),
    ({"ci": 0.95, "bounds_X": "private"}, "ci needs public bounds"),
    ({"ci": 0.95, "privacy_unit": np.arange(2000) // 2, "max_rows": 2}, "ci is not available with privacy_unit"),
]


@pytest.mark.parametrize("changes, message", BAD, ids=[m for _, m in BAD])
def test_bad_ci_raises_before_anything_is_charged(changes, message):
    acc = dps.Accountant(10.0, 1e-3)
    kwargs = {"delta": 1e-6, **BOUNDS, **changes}
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    data = (X[:, :1], Y) if changes.get("method") == "theil_sen" else (X, Y)
    with pytest.raises(dps.ParameterError, match=message):
        dps.linear_regression(*data, 1.0, rng=0, accountant=acc, **kwargs)
    assert acc.ledger == []
    preview = {k: v for k, v in kwargs.items() if k not in ("privacy_unit", "max_rows", "delta")}
    if "privacy_unit" in changes:
        preview.update(units=1000, max_rows=2)
    else:
        preview.update(n=2000)
    if "ci is not available" in message or "public bounds" in message:
        with pytest.raises(dps.ParameterError, match=message):
            dps.preview(dps.linear_regression, 1.0, d=data[0].shape[1], **preview)
