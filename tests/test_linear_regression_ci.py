"""Confidence intervals and t-test p-values of dps.linear_regression's coefficients (``ci=``; SSP and AdaSSP:
:mod:`dpstats.inference._regression`).

Coverage is checked by simulation against known population coefficients: R = 200 data sets drawn afresh from the
population (fixed seeds), each released with ``ci=0.95``; the count of intervals that cover must be at least the
0.001-quantile of Binomial(R, 0.95) — a correct interval fails this once in a thousand seeds, and the threshold is
never tuned. Two regimes: a small n where the noise dominates the error, and a large n·ε where the sampling does
(√n·ε the same at n = 5 000, ε = 40 as at n = 20 000, ε = 20: the ratio of sampling to noise error), each for a
Gaussian design (clipped at ±4σ, which almost never happens) and a bounded, non-Gaussian one (uniform features,
uniform errors), for both methods. In each regime the wrong variant — the same bootstrap with only the part of the
error that does *not* dominate (the non-private OLS interval that ignores the noise at small n, the noise-only
interval at large n·ε), computed from the same releases — must fail the same threshold for every coefficient.

The coefficient t-test (H0: β_j = 0, two-sided) keeps its size: under β_1 = 0 it rejects at 0.05 no more often
than the binomial 0.001-quantile allows, and the noise-ignoring test rejects far more. Bad input (a level outside
(0, 1), ci for TukeyEM or DPTheilSen, with a privacy unit or private bounds) raises before anything is charged; a
call with ci is one ledger entry whose note states the (unchanged) split, and its release is bitwise the one
without ci."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

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


def wrong(estimate, parts: tuple[str, ...], rng):
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
