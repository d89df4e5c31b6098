"""Inference after a private release: confidence intervals for the population, sampling error and noise together.

``dps.mean(x, ε, bounds=..., ci=0.95)`` (and :func:`dpstats.variance`, :func:`dpstats.quantile`, a grouped mean)
returns an :class:`Estimate`: the estimate, and an interval that covers the *population* quantity — the mean of the
distribution the rows (or the privacy units) were drawn from — at the stated level, accounting for the sampling of
the data and the exact noise dpstats adds. Whatever the interval needs beyond the estimate is released in the same
call, within its budget (:mod:`dpstats.descriptive._intervals`); the interval itself is post-processing of those
releases and of the noise's public distribution.

The modules: :mod:`~dpstats.inference._simulate` (the simulation machinery: exact noise models, plug-in sampling
models, Monte Carlo quantiles and p-values — what hypothesis tests build their simulated nulls on),
:mod:`~dpstats.inference._mean`, :mod:`~dpstats.inference._variance`, :mod:`~dpstats.inference._quantile` and
:mod:`~dpstats.inference._regression` (the coefficients of SSP and AdaSSP, with their t-test p-values: the
intervals, each with its derivation and references).

This layer sits below the families whose releases take ``ci`` (:mod:`dpstats.descriptive`, and
:mod:`dpstats.linear_model` for coefficients): it imports none of them.
"""

from ._estimate import Estimate

__all__ = ["Estimate"]
