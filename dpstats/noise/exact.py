"""Exact samplers of integer noise: discrete Laplace and discrete Gaussian from uniform random integers.

The public face of :mod:`dpstats.noise._exact` (Canonne, Kamath & Steinke,
"The discrete Gaussian for differential privacy", NeurIPS 2020, Algorithms
1–3, vectorised): every decision is an exact comparison of uniform random
integers drawn with ``Generator.integers``, so the samples follow the stated
distributions exactly — no floating-point approximation is involved. Very
large σ (numerator of σ² above 2^52) are drawn as an exact sum of scaled
discrete Gaussians whose probabilities are within a factor e^{±1e-128} per
level of the discrete Gaussian's (the lemma in :func:`discrete_gaussian`'s
docstring); the accounting covers that factor (:mod:`dpstats.noise.calibration`).
"""

from ._exact import bernoulli_exp, bernoulli_rational, discrete_gaussian, discrete_gaussian_plan, discrete_laplace

__all__ = ["bernoulli_exp", "bernoulli_rational", "discrete_gaussian", "discrete_gaussian_plan", "discrete_laplace"]
