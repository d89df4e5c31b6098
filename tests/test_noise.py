"""Calibration of the noise samplers against theory."""

import math

import numpy as np
import pytest
from scipy import stats

from dpstats.exceptions import NotPrivateWarning, ParameterError
from dpstats.noise import (
    gaussian_privacy_gap,
    gaussian_sigma,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
    sample_gamma_norm_vector,
    sample_symmetric_gaussian,
)

# Type-I error of each distributional test below (fixed seeds make them deterministic).
ALPHA = 1e-3


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.5, 0.99, 1.0, 5.0, 20.0, 200.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2])
def test_analytic_sigma_is_tight(eps, delta):
    sigma = gaussian_sigma_analytic(1.0, eps, delta)
    # private at sigma, not private slightly below it (Balle & Wang 2018, Theorem 8)
    assert gaussian_privacy_gap(sigma, 1.0, eps) <= delta
    assert gaussian_privacy_gap(sigma * (1 - 1e-6), 1.0, eps) > delta


@pytest.mark.parametrize("eps", [0.05, 0.3, 0.9])
def test_analytic_never_exceeds_classic(eps):
    assert gaussian_sigma_analytic(1.0, eps, 1e-5) <= gaussian_sigma_classic(1.0, eps, 1e-5)


def test_analytic_scales_with_sensitivity():
    assert math.isclose(gaussian_sigma_analytic(3.0, 0.7, 1e-6), 3 * gaussian_sigma_analytic(1.0, 0.7, 1e-6),
                        rel_tol=1e-9)


def _balle_wang_algorithm_1(eps, delta):
    """Balle & Wang (2018), Algorithm 1, written independently of dpstats' bisection."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    Phi = norm.cdf
    delta0 = Phi(0) - math.exp(eps) * Phi(-math.sqrt(2 * eps))
    if delta >= delta0:
        def B(v):
            return Phi(math.sqrt(eps * v)) - math.exp(eps) * Phi(-math.sqrt(eps * (v + 2))) - delta
        v = brentq(B, 0, 1e4, xtol=1e-14)
        alpha = math.sqrt(1 + v / 2) - math.sqrt(v / 2)
    else:
        def B(u):
            return Phi(-math.sqrt(eps * u)) - math.exp(eps) * Phi(-math.sqrt(eps * (u + 2))) - delta
        u = brentq(B, 0, 1e4, xtol=1e-14)
        alpha = math.sqrt(1 + u / 2) + math.sqrt(u / 2)
    return alpha / math.sqrt(2 * eps)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (1.0, 1e-5), (3.0, 1e-3), (10.0, 1e-6), (0.5, 0.3)])
def test_analytic_matches_balle_wang_algorithm_1(eps, delta):
    assert gaussian_sigma_analytic(1.0, eps, delta) == pytest.approx(_balle_wang_algorithm_1(eps, delta), rel=1e-6)


def test_classic_warns_for_large_epsilon():
    with pytest.warns(NotPrivateWarning, match="proven only for epsilon < 1"):
        gaussian_sigma_classic(1.0, 1.0, 1e-5)
    assert gaussian_sigma_classic(2.0, 0.5, 1e-5) == pytest.approx(2 * math.sqrt(2 * math.log(1.25e5)) / 0.5)


def test_gaussian_needs_delta():
    with pytest.raises(ParameterError, match="delta must be > 0"):
        gaussian_sigma_analytic(1.0, 1.0, 0.0)
    with pytest.raises(ParameterError, match="calibration must be one of"):
        gaussian_sigma(1.0, 1.0, 1e-5, calibration="exact")


def test_symmetric_gaussian_matrix():
    rng = np.random.default_rng(0)
    d, sigma = 40, 2.5
    E = sample_symmetric_gaussian(d, sigma, rng)
    assert np.array_equal(E, E.T)
    upper = E[np.triu_indices(d)]
    assert stats.kstest(upper / sigma, "norm").pvalue > ALPHA


def test_gamma_norm_vector_distribution():
    rng = np.random.default_rng(1)
    d, beta = 5, 3.0
    draws = np.array([sample_gamma_norm_vector(d, beta, rng) for _ in range(4000)])
    norms = np.linalg.norm(draws, axis=1)
    assert stats.kstest(norms, stats.gamma(a=d, scale=1 / beta).cdf).pvalue > ALPHA
    # direction uniform: the first coordinate of the unit vector has mean 0 and variance 1/d
    u = draws[:, 0] / norms
    assert abs(u.mean()) < 4 * math.sqrt(1 / d / len(u))
