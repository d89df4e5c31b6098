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
    assert math.isclose(
        gaussian_sigma_analytic(3.0, 0.7, 1e-6), 3 * gaussian_sigma_analytic(1.0, 0.7, 1e-6), rel_tol=1e-9
    )


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


# ----------------------------------------------------------------------------- the discrete Gaussian's calibration


def _cks_delta(sigma, sensitivity, eps):
    """Canonne, Kamath & Steinke (2020), Theorem 7: the exact δ(ε) of 1-D discrete Gaussian noise N_Z(0, σ²) on an
    integer query of sensitivity Δ: P[X >= ⌊εσ²/Δ − Δ/2⌋ + 1] − e^ε P[X >= ⌊εσ²/Δ + Δ/2⌋ + 1], summed directly."""
    s2 = sigma * sigma
    lower = math.floor(eps * s2 / sensitivity - sensitivity / 2) + 1
    upper = math.floor(eps * s2 / sensitivity + sensitivity / 2) + 1
    xs = np.arange(-(int(40 * sigma) + upper), int(40 * sigma) + upper + 1, dtype=np.float64)
    weights = np.exp(-xs * xs / (2 * s2))
    total = weights.sum()
    return weights[xs >= lower].sum() / total - math.exp(eps) * weights[xs >= upper].sum() / total


@pytest.mark.parametrize("sigma,sensitivity", [(5.0, 1), (50.0, 3), (1000.0, 200), (1000.0, 600)])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0])
def test_discrete_gaussian_accounting_never_below_cks_and_tight_for_large_sigma(sigma, sensitivity, eps):
    from dpstats.accounting.gaussian import dominating_sigma

    exact = _cks_delta(sigma, sensitivity, eps)
    ours = gaussian_privacy_gap(dominating_sigma(sigma), sensitivity, eps)
    assert ours >= exact * (1 - 1e-9)  # the smoothing argument never claims more privacy than there is
    if sigma >= 1000 and exact > 1e-12:
        assert ours <= exact * 1.01  # at the grid's scales (σ ~ 2^20 in grid units) the two agree


def test_discrete_gaussian_sigma_adds_only_the_smoothing_variance():
    from dpstats.accounting.gaussian import SMOOTHING_SIGMA, dominating_sigma
    from dpstats.noise.calibration import discrete_gaussian_sigma

    for sensitivity in (1.0, 2.0**20):
        sigma_c = gaussian_sigma_analytic(sensitivity, 1.0, 1e-6)
        sigma = discrete_gaussian_sigma(sensitivity, 1.0, 1e-6)
        assert dominating_sigma(sigma) >= sigma_c
        assert sigma == pytest.approx(math.sqrt(sigma_c**2 + SMOOTHING_SIGMA**2), rel=1e-12)


# ----------------------------------------------------------------------------- the grid release


def test_grid_release_adds_integer_noise_to_the_exactly_rounded_statistic():
    from fractions import Fraction

    from dpstats.noise.exact import discrete_laplace
    from dpstats.noise.release import Statistic, make_noise

    values = np.array([3, -7, 2**40 + 1], dtype=np.int64)
    unit = Fraction(1, 3)  # a rational unit: the statistic is values / 3, rounded to the grid exactly
    noise = make_noise(epsilon=1.0, delta=0.0, sensitivity=1.0, changed=3, unit=unit)
    released = noise.apply(Statistic(values, unit), np.random.default_rng(5))
    grid = noise.grid
    expected_integers = [round(Fraction(int(v)) * unit / grid) for v in values]
    draws = discrete_laplace(noise.scale.numerator, noise.scale.denominator, (3,), np.random.default_rng(5))
    assert released.tolist() == [float((k + z) * grid) for k, z in zip(expected_integers, draws, strict=True)]


@pytest.mark.parametrize("delta", [0.0, 1e-6])
@pytest.mark.parametrize("changed", [1, 50])
def test_grid_rounding_costs_a_relative_2_to_the_minus_bits(delta, changed):
    from dpstats.accounting import gaussian_epsilon
    from dpstats.noise.release import Statistic, make_noise

    sensitivity, eps = 0.37, 0.8
    noise = make_noise(epsilon=eps, delta=delta, sensitivity=sensitivity, changed=changed)
    event = noise.event
    if delta == 0:
        assert event.discrete and event.epsilon <= eps
        # rounding adds `changed` grid units to an integer sensitivity of about 2^12 per coordinate
        assert noise.noise_scale == pytest.approx(sensitivity / eps, rel=2.0**-11)
    else:
        assert gaussian_epsilon(event.combined_multiplier, delta) <= eps * (1 + 1e-9)  # (rounded up by 1e-12)
        assert noise.noise_scale == pytest.approx(gaussian_sigma_analytic(sensitivity, eps, delta), rel=2.0**-19)
    assert noise.apply(Statistic(np.zeros(changed)), np.random.default_rng(0)).shape == (changed,)


def test_cached_calibration_still_names_a_bad_parameter():
    with pytest.raises(ParameterError, match="epsilon"):
        gaussian_sigma_analytic(1.0, [1], 1e-6)
