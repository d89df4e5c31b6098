"""Exact samplers of integer noise: discrete Laplace and discrete Gaussian from random bits.

The public face of :mod:`dpstats.noise._exact` (Canonne, Kamath & Steinke,
"The discrete Gaussian for differential privacy", NeurIPS 2020, Algorithms
1–3, vectorised): every decision is an exact comparison of uniform random
integers, so the samples follow the stated distributions exactly — no
floating-point approximation is involved.
"""

from ._exact import discrete_gaussian, discrete_laplace

__all__ = ["discrete_gaussian", "discrete_laplace"]
