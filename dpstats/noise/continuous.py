"""Continuous (floating-point) noise samplers.

These draw Laplace, Gaussian and Gamma-norm noise with NumPy's floating-point
samplers, as the papers describe. Floating-point noise added to a
data-dependent value leaks through its low-order bits (Mironov, CCS 2012);
see :mod:`dpstats.noise` for what each mechanism uses.
"""

from __future__ import annotations

import numpy as np

from .calibration import gaussian_sigma, laplace_scale

__all__ = ["perturb", "sample_gamma_norm_vector", "sample_gaussian", "sample_laplace", "sample_symmetric_gaussian"]


def sample_laplace(scale: float, size, rng: np.random.Generator) -> np.ndarray:
    """iid Laplace(0, ``scale``) noise of shape ``size``."""
    return rng.laplace(0.0, scale, size=size)


def sample_gaussian(sigma: float, size, rng: np.random.Generator) -> np.ndarray:
    """iid N(0, σ²) noise of shape ``size``."""
    return rng.normal(0.0, sigma, size=size)


def sample_symmetric_gaussian(d: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """A symmetric d×d matrix whose upper triangle (diagonal included) is iid N(0, σ²).

    The lower triangle mirrors the upper one, as in Analyze Gauss (Dwork, Talwar,
    Thakurta & Zhang 2014, Algorithm 1) and DP-CCA.
    """
    E = rng.normal(0.0, sigma, size=(d, d))
    upper = np.triu(E)
    return upper + np.triu(E, 1).T


def sample_gamma_norm_vector(d: int, beta: float, rng: np.random.Generator) -> np.ndarray:
    """A vector b in R^d with density ∝ exp(−β‖b‖₂).

    In polar form the direction is uniform on the sphere and the norm has density
    ∝ r^{d−1} e^{−βr}, that is Gamma(shape=d, scale=1/β) (Chaudhuri, Monteleoni &
    Sarwate 2011, Section 4).
    """
    direction = rng.standard_normal(d)
    direction /= np.linalg.norm(direction)
    return rng.gamma(shape=d, scale=1.0 / beta) * direction


def perturb(
    value,
    epsilon: float,
    delta: float,
    *,
    l1_sensitivity: float,
    l2_sensitivity: float,
    rng: np.random.Generator,
    calibration: str = "analytic",
):
    """Add calibrated noise to ``value`` (scalar or array): Laplace if δ = 0, else Gaussian.

    The caller states both sensitivities of the query under replace-one
    neighbours; δ = 0 uses Laplace(Δ₁/ε) per coordinate, δ > 0 uses N(0, σ²)
    per coordinate with σ from :func:`gaussian_sigma`.
    """
    shape = np.shape(value)
    if delta == 0:
        noise = sample_laplace(laplace_scale(l1_sensitivity, epsilon), shape, rng)
    else:
        noise = sample_gaussian(gaussian_sigma(l2_sensitivity, epsilon, delta, calibration), shape, rng)
    return value + noise
