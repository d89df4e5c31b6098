"""Noise: calibration (how much) and samplers (how it is drawn).

* :mod:`dpstats.noise.calibration` — Laplace scale, analytic and classic Gaussian σ.
* :mod:`dpstats.noise.continuous` — floating-point samplers.
"""

from .calibration import (
    CALIBRATIONS,
    gaussian_privacy_gap,
    gaussian_sigma,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
    laplace_scale,
)
from .continuous import perturb, sample_gamma_norm_vector, sample_gaussian, sample_laplace, sample_symmetric_gaussian

__all__ = [
    "CALIBRATIONS",
    "gaussian_privacy_gap",
    "gaussian_sigma",
    "gaussian_sigma_analytic",
    "gaussian_sigma_classic",
    "laplace_scale",
    "perturb",
    "sample_gamma_norm_vector",
    "sample_gaussian",
    "sample_laplace",
    "sample_symmetric_gaussian",
]
