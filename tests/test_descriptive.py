"""Mean, variance, histogram: sensitivities, noise scale, seeds, vector releases."""

import math

import numpy as np
import pytest
from scipy import stats

import dpstats as dps
from dpstats.noise import gaussian_sigma_analytic

ALPHA = 1e-3  # type-I error of each distributional test (fixed seeds: deterministic)
N_DRAWS = 3000


def _noise(release, truth, n_draws=N_DRAWS):
    rng = np.random.default_rng(12345)
    return np.array([release(rng) for _ in range(n_draws)]) - truth


def test_sensitivity_formulas():
    n, lo, hi = 50, -2.0, 3.0
    x = np.linspace(lo, hi, n)
    # Variance sensitivity (n-1)(hi-lo)^2/n^2 is attained by a worst-case neighbour pair.
    a = np.r_[np.full(n - 1, lo), hi]
    b = np.r_[np.full(n - 1, lo), lo]
    assert math.isclose(np.var(a) - np.var(b), (n - 1) * (hi - lo) ** 2 / n**2)
    # ... and never exceeded over random neighbour pairs.
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(2000):
        y = rng.uniform(lo, hi, n) if rng.random() < 0.5 else rng.choice([lo, hi], n)
        z = y.copy()
        z[rng.integers(n)] = rng.choice([lo, hi, rng.uniform(lo, hi)])
        worst = max(worst, abs(np.var(y) - np.var(z)))
    assert worst <= (n - 1) * (hi - lo) ** 2 / n**2 + 1e-12
    assert np.mean(x) is not None


@pytest.mark.parametrize("eps", [0.3, 3.0])
def test_mean_laplace_scale(eps):
    x = np.linspace(0, 4, 40)
    noise = _noise(lambda r: dps.mean(x, eps, bounds=(0, 4), rng=r), x.mean())
    scale = 4 / 40 / eps
    assert stats.kstest(noise / scale, "laplace").pvalue > ALPHA


@pytest.mark.parametrize("eps", [0.3, 3.0])
def test_variance_gaussian_scale(eps):
    x = np.linspace(0, 1, 25)
    delta = 1e-5
    noise = _noise(lambda r: dps.variance(x, eps, delta, bounds=(0, 1), rng=r), x.var())
    sigma = gaussian_sigma_analytic(24 / 25**2, eps, delta)
    assert stats.kstest(noise / sigma, "norm").pvalue > ALPHA


@pytest.mark.parametrize("eps,delta", [(0.5, 0.0), (2.0, 1e-6)])
def test_histogram_scale(eps, delta):
    x = np.array([0.05, 0.3, 0.35, 0.9])
    counts = np.histogram(x, bins=5, range=(0, 1))[0]
    noise = _noise(lambda r: dps.histogram(x, eps, delta, bins=5, range=(0, 1), rng=r)[0], counts, 1000)
    if delta == 0:
        assert stats.kstest(noise.ravel() / (2 / eps), "laplace").pvalue > ALPHA
    else:
        sigma = gaussian_sigma_analytic(math.sqrt(2), eps, delta)
        assert stats.kstest(noise.ravel() / sigma, "norm").pvalue > ALPHA


def test_histogram_edges_come_from_range_only():
    _, edges = dps.histogram([0.2, 0.3], 1.0, bins=4, range=(-1, 3), rng=0)
    assert np.allclose(edges, [-1, 0, 1, 2, 3])


def test_vector_mean_uses_vector_sensitivity():
    X = np.tile([0.5, 1.0, 1.5], (30, 1))
    eps = 1.0
    noise = _noise(lambda r: dps.mean(X, eps, bounds=(0, [1, 2, 3]), axis=0, rng=r), X.mean(axis=0), 2000)
    l1 = (1 + 2 + 3) / 30
    assert noise.shape == (2000, 3)
    assert stats.kstest(noise.ravel() / (l1 / eps), "laplace").pvalue > ALPHA
    # axis=1: the records are the columns (3 of them)
    assert dps.mean(X, eps, bounds=(0, 3), axis=1, rng=0).shape == (30,)


def test_same_seed_same_release_and_fresh_entropy_by_default():
    x = np.random.default_rng(0).uniform(size=100)
    for mech in (
        lambda r: dps.mean(x, 1.0, bounds=(0, 1), rng=r),
        lambda r: dps.variance(x, 1.0, 1e-6, bounds=(0, 1), rng=r),
        lambda r: dps.histogram(x, 1.0, range=(0, 1), rng=r)[0],
    ):
        assert np.array_equal(mech(7), mech(7))
        assert np.array_equal(mech(np.random.default_rng(7)), mech(7))
        assert not np.array_equal(mech(None), mech(None))


def test_utility_converges():
    x = np.random.default_rng(3).uniform(size=100_000)
    assert abs(dps.mean(x, 1.0, bounds=(0, 1), rng=0) - x.mean()) < 1e-3
    assert abs(dps.variance(x, 1.0, bounds=(0, 1), rng=0) - x.var()) < 1e-3
