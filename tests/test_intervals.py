"""Confidence intervals (``ci=``): coverage of the population value, simulated with known populations.

Each coverage test draws R data sets from a known population, releases the estimate with its interval (a fresh
seed each time) and counts how often the interval covers the population value. A correct 95 % interval covers it
with probability at least 0.95, so the count is at least Binomial(R, 0.95) in distribution: the test refuses a
count below that binomial's 0.001-quantile (computed, not tuned), so a correct method fails it with probability
below 0.001 (per interval tested; Bonferroni where one test checks several). The same test is run on the
noise-only interval every peer reports (the release ± the noise's 95 % half-width, from the ledger): it covers the
*sample's* mean, not the population's, and must fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpstats as dps
from dpstats.exceptions import DataValidationError, ParameterError

R = 400
LEVEL = 0.95
#: The smallest coverage count a correct 95 % interval reaches with probability >= 0.999 over R repetitions.
THRESHOLD = int(stats.binom.ppf(0.001, R, LEVEL))


def _coverage(make, estimate, truth, *, seed: int, reps: int = R) -> int:
    """How many of ``reps`` intervals ``estimate(data, call_seed)`` cover ``truth`` (data from ``make(rng)``)."""
    rng = np.random.default_rng(seed)
    hits = 0
    for r in range(reps):
        low, high = estimate(make(rng), 100_000 + seed + r)
        hits += bool(low <= truth <= high)
    return hits


def _ci(call):
    """(low, high) of a release with ``ci``."""

    def estimate(data, seed):
        return call(data, seed).ci

    return estimate


def _lognormal_clipped(hi: float, power: int) -> float:
    """E[min(X, hi)^power] for X log-normal(0, 1)."""
    log_hi = math.log(hi)
    return math.exp(power * power / 2) * stats.norm.cdf(log_hi - power) + hi**power * stats.norm.sf(log_hi)


# ----------------------------------------------------------------------------- the mean


def _normal(n):
    return lambda rng: rng.standard_normal(n)


MEAN_CASES = {
    # name: (data, population mean, call options)
    "normal, n = 50 (small n)": (_normal(50), 0.0, dict(epsilon=1.0, bounds=(-6, 6), clip=True)),
    "normal, n = 20000, eps = 4 (large n*eps)": (_normal(20000), 0.0, dict(epsilon=4.0, bounds=(-6, 6), clip=True)),
    "normal, n = 1000, Gaussian noise": (_normal(1000), 0.0, dict(epsilon=1.0, delta=1e-6, bounds=(-6, 6), clip=True)),
    "Beta(2, 5), n = 200 (skewed)": (lambda rng: rng.beta(2, 5, 200), 2 / 7, dict(epsilon=0.5, bounds=(0, 1))),
    "log-normal in wide bounds, n = 1000": (
        lambda rng: rng.lognormal(0.0, 1.0, 1000),
        _lognormal_clipped(math.exp(6), 1),
        dict(epsilon=1.0, bounds=(0, math.exp(6)), clip=True),
    ),
    "0/1 with p = 0.02, n = 300": (
        lambda rng: (rng.random(300) < 0.02).astype(float),
        0.02,
        dict(epsilon=1.0, bounds=(0, 1)),
    ),
    "0/1 with p = 0.02, n = 100, eps = 2": (
        lambda rng: (rng.random(100) < 0.02).astype(float),
        0.02,
        dict(epsilon=2.0, bounds=(0, 1)),
    ),
}


@pytest.mark.parametrize("case", list(MEAN_CASES))
def test_mean_interval_covers_the_population_mean(case):
    make, truth, options = MEAN_CASES[case]
    seed = 1000 + list(MEAN_CASES).index(case)
    hits = _coverage(make, _ci(lambda x, s: dps.mean(x, ci=LEVEL, rng=s, **options)), truth, seed=seed)
    assert hits >= THRESHOLD, f"{case}: {hits}/{R} intervals covered the population mean (threshold {THRESHOLD})"


def test_noise_only_interval_fails_the_same_test():
    """The release ± the ledger's 95 % noise half-width (what peers report): at large n·ε it covers the sample mean
    but rarely the population's, and fails the coverage test the real interval passes."""
    make, truth, options = MEAN_CASES["normal, n = 20000, eps = 4 (large n*eps)"]

    def noise_only(x, seed):
        accountant = dps.Accountant(100.0)
        value = dps.mean(x, rng=seed, accountant=accountant, **options)
        half = accountant.ledger[-1].noise[0].half_width
        return value - half, value + half

    hits = _coverage(make, noise_only, truth, seed=1001)
    assert hits < THRESHOLD, f"the noise-only interval covered the population mean {hits}/{R} times"


def test_unit_level_mean_interval_covers_the_mean_over_records_of_units():
    """Units of 1 to 6 records whose values grow with their size; at most 3 kept per unit. The population quantity is
    E[S_u]/E[C_u] over the kept records: units of size c keep min(c, 3) records of mean 0.15 + 0.05·c."""
    sizes = np.arange(1, 7)
    kept = np.minimum(sizes, 3)
    truth = float(np.sum(kept * (0.15 + 0.05 * sizes)) / np.sum(kept))

    def make(rng):
        count = rng.integers(1, 7, 600)
        ids = np.repeat(np.arange(600), count)
        means = np.repeat(0.15 + 0.05 * count, count)
        return rng.beta(10 * means, 10 * (1 - means)), ids

    def estimate(data, seed):
        x, ids = data
        return dps.mean(x, 1.0, bounds=(0, 1), privacy_unit=ids, max_rows=3, ci=LEVEL, rng=seed).ci

    hits = _coverage(make, estimate, truth, seed=1100)
    assert hits >= THRESHOLD, f"{hits}/{R}"


def test_grouped_mean_interval_covers_each_key():
    pd = pytest.importorskip("pandas")
    means = {"a": 0.2, "b": 0.5, "c": 0.7}

    def make(rng):
        keys = rng.choice(list(means), 600, p=[0.5, 0.3, 0.2])
        mu = np.array([means[k] for k in keys])
        return pd.DataFrame({"x": rng.beta(8 * mu, 8 * (1 - mu)), "key": keys})

    rng = np.random.default_rng(1200)
    hits = dict.fromkeys(means, 0)
    for r in range(R):
        result = dps.mean(make(rng), 1.0, bounds={"x": (0, 1)}, by="key", categories=list(means), ci=LEVEL, rng=r)
        for key, truth in means.items():
            hits[key] += bool(result.ci.loc[key, "low"] <= truth <= result.ci.loc[key, "high"])
    threshold = int(stats.binom.ppf(0.001 / len(means), R, LEVEL))  # Bonferroni over the keys
    assert all(h >= threshold for h in hits.values()), (hits, threshold)


# ----------------------------------------------------------------------------- the variance


VARIANCE_CASES = {
    "normal, n = 50 (small n)": (_normal(50), 1.0, dict(epsilon=1.0, bounds=(-6, 6), clip=True)),
    "Beta(2, 5), n = 20000, eps = 4 (large n*eps)": (
        lambda rng: rng.beta(2, 5, 20000),
        10 / (49 * 8),
        dict(epsilon=4.0, bounds=(0, 1)),
    ),
    "log-normal in [0, 50], n = 20000, eps = 4 (heavy tail, sampling error dominant)": (
        lambda rng: rng.lognormal(0.0, 1.0, 20000),
        _lognormal_clipped(50.0, 2) - _lognormal_clipped(50.0, 1) ** 2,
        dict(epsilon=4.0, bounds=(0, 50), clip=True),
    ),
}


@pytest.mark.parametrize("case", list(VARIANCE_CASES))
def test_variance_interval_covers_the_population_variance(case):
    make, truth, options = VARIANCE_CASES[case]
    seed = 2000 + list(VARIANCE_CASES).index(case)
    hits = _coverage(make, _ci(lambda x, s: dps.variance(x, ci=LEVEL, rng=s, **options)), truth, seed=seed)
    assert hits >= THRESHOLD, f"{case}: {hits}/{R} (threshold {THRESHOLD})"


# ----------------------------------------------------------------------------- the quantile


QUANTILE_CASES = {
    "normal median, n = 50 (small n)": (_normal(50), 0.5, 0.0, dict(epsilon=1.0, bounds=(-6, 6), clip=True)),
    "log-normal median, n = 5000, eps = 4 (large n*eps)": (
        lambda rng: rng.lognormal(0.0, 1.0, 5000),
        0.5,
        1.0,
        dict(epsilon=4.0, bounds=(0, 100), clip=True),
    ),
    "Beta(2, 5) 0.9-quantile, n = 1000 (skewed)": (
        lambda rng: rng.beta(2, 5, 1000),
        0.9,
        float(stats.beta.ppf(0.9, 2, 5)),
        dict(epsilon=1.0, bounds=(0, 1)),
    ),
}


@pytest.mark.parametrize("case", list(QUANTILE_CASES))
def test_quantile_interval_covers_the_population_quantile(case):
    make, q, truth, options = QUANTILE_CASES[case]
    seed = 3000 + list(QUANTILE_CASES).index(case)
    hits = _coverage(make, _ci(lambda x, s: dps.quantile(x, q, ci=LEVEL, rng=s, **options)), truth, seed=seed)
    assert hits >= THRESHOLD, f"{case}: {hits}/{R} (threshold {THRESHOLD})"


# ----------------------------------------------------------------------------- the result and the ledger


def test_estimate_is_the_release_without_ci_in_form_and_the_call_is_one_ledger_entry():
    pd = pytest.importorskip("pandas")
    x = np.random.default_rng(0).beta(2, 5, 500)
    accountant = dps.Accountant(10.0)
    result = dps.mean(x, 1.0, bounds=(0, 1), ci=0.9, rng=1, accountant=accountant)
    assert isinstance(result, dps.Estimate) and isinstance(result.estimate, float)
    assert result.level == 0.9 and result.ci[0] < result.estimate < result.ci[1] and result.std_error > 0
    (entry,) = accountant.ledger
    assert entry.mechanism == "mean" and 0.999 < entry.epsilon <= 1.0  # the discrete mechanisms' exact ε, summed
    assert "split 4 : 1" in entry.note
    assert "0.9" in repr(result) and "population mean" in result.target
    frame = pd.DataFrame({"a": x, "b": 1 - x})
    table = dps.mean(frame, 1.0, bounds={"a": (0, 1), "b": (0, 1)}, ci=0.95, rng=1)
    assert list(table.estimate.index) == ["a", "b"] and list(table.ci.columns) == ["low", "high"]
    assert (table.ci["low"] < table.estimate).all() and (table.estimate < table.ci["high"]).all()
    matrix = dps.mean(np.c_[x, 1 - x], 1.0, bounds=(0, 1), axis=0, ci=0.95, rng=1)
    assert matrix.ci.shape == (2, 2)


def test_same_seed_same_interval_and_ci_none_is_the_plain_release():
    x = np.random.default_rng(0).normal(0, 1, 300)
    first = dps.mean(x, 1.0, bounds=(-6, 6), clip=True, ci=0.95, rng=7)
    second = dps.mean(x, 1.0, bounds=(-6, 6), clip=True, ci=0.95, rng=7)
    assert first.ci == second.ci and first.estimate == second.estimate
    assert dps.mean(x, 1.0, bounds=(-6, 6), clip=True, ci=None, rng=7) == dps.mean(
        x, 1.0, bounds=(-6, 6), clip=True, rng=7
    )
    assert "clipped" in first.target


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, 95, "0.95", True, math.nan, math.inf, [0.95]])
def test_ci_outside_zero_one_is_refused_naming_it_before_any_charge(bad):
    accountant = dps.Accountant(10.0)
    x = np.linspace(0, 1, 50)
    for call in (
        lambda: dps.mean(x, 1.0, bounds=(0, 1), ci=bad, accountant=accountant),
        lambda: dps.variance(x, 1.0, bounds=(0, 1), ci=bad, accountant=accountant),
        lambda: dps.quantile(x, 0.5, 1.0, bounds=(0, 1), ci=bad, accountant=accountant),
    ):
        with pytest.raises(ParameterError, match="ci"):
            call()
    assert accountant.ledger == []


def test_ci_on_a_release_without_an_interval_is_refused_before_any_charge():
    pd = pytest.importorskip("pandas")
    accountant = dps.Accountant(10.0)
    x = np.linspace(0, 1, 60)
    frame = pd.DataFrame({"x": x, "key": ["a", "b"] * 30})
    acc = {"accountant": accountant}
    calls = [
        lambda: dps.variance(frame, 1.0, bounds={"x": (0, 1)}, by="key", categories=["a", "b"], ci=0.95, **acc),
        lambda: dps.quantile(x, [0.25, 0.75], 1.0, bounds=(0, 1), ci=0.95, **acc),
        lambda: dps.mean(frame, 1.0, 1e-6, bounds={"x": (0, 1)}, by="key", ci=0.95, **acc),  # keys selected privately
        lambda: dps.variance(x, 1.0, bounds=(0, 1), privacy_unit=np.arange(60) // 2, max_rows=2, ci=0.95, **acc),
        lambda: dps.quantile(x, 0.5, 1.0, bounds=(0, 1), privacy_unit=np.arange(60) // 2, max_rows=2, ci=0.95, **acc),
    ]
    for call in calls:
        with pytest.raises(ParameterError, match="ci"):
            call()
    two = frame.assign(y=x)  # a grouped interval of several columns: refused before the charge (it was after)
    with pytest.raises(DataValidationError, match="ci with by= takes one column"):
        dps.mean(two, 1.0, bounds={"x": (0, 1), "y": (0, 1)}, by="key", categories=["a", "b"], ci=0.95, **acc)
    assert accountant.ledger == []


def test_a_budget_too_small_for_the_interval_is_refused_naming_epsilon_before_any_charge():
    accountant = dps.Accountant(10.0)
    x = np.linspace(0, 1, 50)
    with pytest.raises(ParameterError, match="epsilon"):
        dps.mean(x, 5e-324, bounds=(0, 1), ci=0.95, accountant=accountant)
    with pytest.raises(DataValidationError, match="at least 2"):
        dps.mean(x[:1], 1.0, bounds=(0, 1), ci=0.95, accountant=accountant)
    assert accountant.ledger == []


# ----------------------------------------------------------------------------- the simulation machinery


def _discrete_laplace_cells(t: float, edges: np.ndarray) -> np.ndarray:
    """P(edges[i] <= Z < edges[i + 1]) for the discrete Laplace P(z) ∝ e^{−|z|/t}, the outer cells open."""
    p = math.exp(-1.0 / t)

    def below(z):  # P(Z < z) for an integer z
        z = np.asarray(z, dtype=np.float64)
        return np.where(
            z <= 0, np.power(p, np.maximum(-z + 1, 0)) / (1 + p), 1 - np.power(p, np.maximum(z, 0)) / (1 + p)
        )

    cdf = below(edges)
    cdf[0], cdf[-1] = 0.0, 1.0
    return np.diff(cdf)


def test_the_simulated_noise_is_the_release_noise_exactly(monkeypatch):
    """The interval's model of the mean's noise (NoiseModel) is the exact distribution of the noise the release
    adds: the releases' integer noise and the model's own draws both pass a χ² test against the discrete Laplace
    of the model's scale; the same releases fail it against a scale 10 % off (the wrong variant)."""
    from _chisquare import merged_chisquare

    from dpstats.descriptive import _intervals

    captured = []
    monkeypatch.setattr(_intervals, "mean_interval", lambda r, level, rng, draws: captured.append(r) or (0.0, 1.0, 0.0))
    x = np.full(64, 0.25)  # the exact mean 0.25 lies on every power-of-two grid: the release is 0.25 + noise
    releases = np.array([dps.mean(x, 2.0, bounds=(0, 1), ci=0.95, rng=s).estimate for s in range(3000)])
    model = captured[0].noise_total.times(1 / 64)  # the model of the mean's own noise
    grid = float(model.grid) * model.factor
    noise = np.rint((releases - 0.25) / grid)
    assert np.allclose(noise * grid, releases - 0.25)  # integers on the grid
    t = float(model.scale)
    edges = np.unique(np.rint(np.quantile(np.random.default_rng(0).laplace(0, t, 200_000), np.linspace(0, 1, 31))))
    edges[0], edges[-1] = -1e18, 1e18

    def pvalue(z, scale):
        counts = np.histogram(z, bins=edges)[0]
        return merged_chisquare(counts, _discrete_laplace_cells(scale, edges))

    drawn = model.sample(20_000, np.random.default_rng(1)) / grid
    assert pvalue(noise, t) > 0.001 and pvalue(drawn, t) > 0.001
    assert pvalue(noise, 1.1 * t) < 0.001


def test_monte_carlo_quantiles_and_pvalues_follow_their_rules():
    from dpstats.inference._simulate import crossing, equal_tailed, pvalue

    draws = np.arange(1.0, 2000.0)  # 1 … 1999
    low, high = equal_tailed(draws, 0.95)
    assert (low, high) == (50.0, 1950.0)  # the ⌊(B + 1)·0.025⌋-th from each end
    assert pvalue(1990.5, draws, "greater") == (1 + 9) / 2000
    assert pvalue(0.0, draws, "less") == 1 / 2000 and pvalue(1000.0, draws) == 1.0
    with pytest.raises(ParameterError, match="alternative"):
        pvalue(0.0, draws, "larger")
    assert abs(crossing(lambda v: v * v <= 2.0, 0.0, 0.1, 10.0) - math.sqrt(2.0)) < 1e-6
    assert crossing(lambda v: True, 0.0, 0.1, 10.0) == 10.0
