"""Noise: how much (calibration), how it is drawn (samplers, random source) and how it is added (release).

* :mod:`dpstats.noise.calibration` — Laplace scale, analytic and classic Gaussian σ, the discrete Gaussian's σ
  (from the privacy curves of :mod:`dpstats.accounting.gaussian`);
* :mod:`dpstats.noise.exact` — exact discrete Laplace and discrete Gaussian samplers (built on the exact uniform
  and Bernoulli draws of :mod:`dpstats.noise._bernoulli`);
* :mod:`dpstats.noise.normal` — exact standard normals as lazily refined reals (the proposals of the exact
  vector-Bingham sampler);
* :mod:`dpstats.noise.random` — the cryptographically secure default random source;
* :mod:`dpstats.noise.release` — statistics on a public grid with exact integer noise (the default of every
  mechanism);
* :mod:`dpstats.noise.continuous` — floating-point samplers (``noise="float"``, the Gamma-norm noise of ERM);
* :mod:`dpstats.noise.intervals` — how far a release is from its exact statistic (95 % intervals of the error);
* :mod:`dpstats.noise.accuracy` — planning from accuracy: the ε for a target error, the error an ε buys;
* :mod:`dpstats.noise.selection` — private partition selection: the noise and threshold that release only the
  keys of a group-by that enough units share.
"""

from ..accounting.gaussian import gaussian_privacy_gap
from .accuracy import Accuracy, epsilon_for_error, error_for_epsilon
from .calibration import (
    CALIBRATIONS,
    gaussian_sigma,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
    laplace_scale,
)
from .continuous import perturb, sample_gamma_norm_vector, sample_gaussian, sample_laplace, sample_symmetric_gaussian

__all__ = [
    "Accuracy",
    "CALIBRATIONS",
    "epsilon_for_error",
    "error_for_epsilon",
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
