"""Descriptive statistics: mean, variance and histogram.

Neighbouring datasets differ by replacing one record; the number of records n
is public. Bounds and bin edges are parameters, never read from the data.
With ``delta == 0`` the release uses Laplace noise (pure ε-DP), with
``delta > 0`` Gaussian noise calibrated analytically (Balle & Wang 2018).

Records and ``axis``
--------------------
With ``axis=None`` every value of ``x`` is one record. With ``axis=a`` the
records are the slices of ``x`` along axis ``a`` (for an n×d matrix and
``axis=0``: the n rows), and the statistic is released for every position of
the other axes at once, with the vector sensitivity of the whole release.
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    check_array,
    check_bounds,
    check_delta,
    check_epsilon,
    check_int,
    check_rng,
    enforce_bounds,
)
from .accounting import Accountant, charge
from .exceptions import DataValidationError, ParameterError
from .noise import perturb

__all__ = ["mean", "variance", "histogram"]


def _records(x, bounds, axis, clip: bool):
    """Validate ``x`` against ``bounds``; return (x, n, lower, upper, sum of x along axis), bounds broadcast to the
    output."""
    x = check_array(x, "x", ndim=(1, 2, 3))
    if axis is not None:
        if axis not in range(-x.ndim, x.ndim) or isinstance(axis, bool):
            raise ParameterError(f"axis must be None or an integer in [{-x.ndim}, {x.ndim - 1}]; got {axis!r}")
        out_shape = x.shape[:axis % x.ndim] + x.shape[axis % x.ndim + 1:]
        n = x.shape[axis]
    else:
        out_shape, n = (), x.size
    if n < 1:
        raise DataValidationError(f"x must hold at least one record; got shape {x.shape}")
    lower, upper = check_bounds(bounds)
    try:
        lower, upper = np.broadcast_to(lower, out_shape), np.broadcast_to(upper, out_shape)
    except ValueError as err:
        raise ParameterError(
            f"bounds must broadcast to the shape of one record's statistic {out_shape}; "
            f"got shapes {np.shape(lower)} and {np.shape(upper)}"
        ) from err
    x, total = enforce_bounds(x, lower, upper, name="x", axis=axis, clip=clip)
    return x, n, lower, upper, total


def _release(value, per_coordinate, epsilon, delta, rng, accountant, mechanism):
    """Charge the accountant, then add noise for the given per-coordinate sensitivities."""
    per_coordinate = np.asarray(per_coordinate, dtype=np.float64)
    l1 = float(per_coordinate.sum())
    l2 = float(np.sqrt(np.square(per_coordinate).sum()))
    charge(accountant, epsilon, delta, mechanism=mechanism)
    noisy = perturb(value, epsilon, delta, l1_sensitivity=l1, l2_sensitivity=l2, rng=rng)
    return float(noisy) if np.ndim(noisy) == 0 else noisy


def mean(x, epsilon: float, delta: float = 0.0, *, bounds, axis: int | None = None, clip: bool = False,
         rng=None, accountant: Accountant | None = None):
    """Differentially private mean of bounded data.

    Sensitivity (replace one record, n public): every value lies in
    ``[lo, hi]``, so replacing one record moves the mean of each coordinate by
    at most ``(hi − lo) / n``. For a vector release over m coordinates the L1
    sensitivity is ``Σ_j (hi_j − lo_j) / n`` and the L2 sensitivity
    ``√(Σ_j (hi_j − lo_j)²) / n``.

    Parameters
    ----------
    x : array_like
        The data. See the module docstring for ``axis``.
    epsilon : float
        Privacy parameter ε > 0.
    delta : float, default 0.0
        δ = 0: Laplace noise with scale Δ₁/ε. δ > 0: Gaussian noise with σ from
        the analytic calibration of Balle & Wang (2018).
    bounds : tuple (lower, upper)
        Public bounds on every value, chosen without looking at the data;
        scalars or arrays broadcastable to the output.
    axis : int, optional
        Axis along which the records lie; ``None`` treats every value as a record.
    clip : bool, default False
        Clip values outside ``bounds`` instead of raising ``OutOfBoundsError``.
    rng : None, int or numpy.random.Generator
        Source of noise; ``None`` uses fresh OS entropy.
    accountant : Accountant, optional
        Charged (ε, δ) before any noise is drawn.

    Returns
    -------
    float or numpy.ndarray
        The noisy mean (it may fall outside ``bounds``).

    References
    ----------
    Dwork, McSherry, Nissim & Smith, "Calibrating noise to sensitivity in
    private data analysis", TCC 2006. Balle & Wang, "Improving the Gaussian
    mechanism for differential privacy", ICML 2018.

    Examples
    --------
    >>> import dpstats as dps
    >>> m = dps.mean([0.1, 0.5, 0.9], epsilon=1.0, bounds=(0, 1), rng=0)
    """
    epsilon, delta, rng = check_epsilon(epsilon), check_delta(delta), check_rng(rng)
    _, n, lower, upper, total = _records(x, bounds, axis, clip)
    value = total / n
    return _release(value, (upper - lower) / n, epsilon, delta, rng, accountant, "mean")


def variance(x, epsilon: float, delta: float = 0.0, *, bounds, axis: int | None = None, clip: bool = False,
             rng=None, accountant: Accountant | None = None):
    """Differentially private population variance (ddof = 0) of bounded data.

    Sensitivity (replace one record, n public, values in [lo, hi]). Write the
    data as n − 1 fixed values with mean m and population variance s², plus one
    value x. Adding x to those n − 1 values gives::

        Var = ((n − 1)/n) s² + ((n − 1)/n²) (x − m)²

    so replacing x by x′ changes the variance by
    ``((n − 1)/n²) · |(x − m)² − (x′ − m)²|``. As m lies in [lo, hi], each
    square lies in [0, (hi − lo)²], hence::

        Δ = (n − 1)(hi − lo)² / n²

    and the bound is attained (m = lo, x = hi, x′ = lo). The original dp-stats
    used ``3(1 − 1/n)/n``, three times this value. Vector releases combine
    coordinates as in :func:`mean`.

    Parameters
    ----------
    x, epsilon, delta, bounds, axis, clip, rng, accountant
        As in :func:`mean`.

    Returns
    -------
    float or numpy.ndarray
        The noisy variance. It can be negative or exceed ``(hi − lo)²/4``;
        clamping it to that range afterwards is post-processing and costs no
        privacy.

    References
    ----------
    Dwork & Roth, "The Algorithmic Foundations of Differential Privacy", 2014
    (Laplace and Gaussian mechanisms). Balle & Wang, ICML 2018.

    Examples
    --------
    >>> import dpstats as dps
    >>> v = dps.variance([0.1, 0.5, 0.9], epsilon=1.0, bounds=(0, 1), rng=0)
    """
    epsilon, delta, rng = check_epsilon(epsilon), check_delta(delta), check_rng(rng)
    x, n, lower, upper, _ = _records(x, bounds, axis, clip)
    value = np.var(x, axis=axis)
    return _release(value, (n - 1) * (upper - lower) ** 2 / n**2, epsilon, delta, rng, accountant, "variance")


def histogram(x, epsilon: float, delta: float = 0.0, *, bins: int = 10, range, clip: bool = False,  # noqa: A002
              rng=None, accountant: Accountant | None = None):
    """Differentially private histogram with public, equal-width bins.

    The edges come only from ``range`` and ``bins`` (never from the data's
    minimum and maximum, which the original dp-stats disclosed). Sensitivity
    (replace one record): the record leaves one bin and enters another, so the
    count vector changes by 1 in two places: L1 = 2, L2 = √2.

    Parameters
    ----------
    x : array_like, 1-D
        One value per record.
    epsilon, delta : float
        Privacy parameters (δ = 0: Laplace(2/ε) per bin; δ > 0: Gaussian with Δ₂ = √2).
    bins : int, default 10
        Number of equal-width bins.
    range : tuple (lower, upper)
        Public range of the values.
    clip : bool, default False
        Put values outside ``range`` in the first or last bin instead of raising.
    rng, accountant
        As in :func:`mean`.

    Returns
    -------
    counts : numpy.ndarray of float
        Noisy counts (they can be negative or fractional; rounding and
        clamping afterwards are post-processing).
    edges : numpy.ndarray
        The ``bins + 1`` public edges.

    References
    ----------
    Dwork, McSherry, Nissim & Smith, TCC 2006 (histogram queries, Example 3).

    Examples
    --------
    >>> import dpstats as dps
    >>> counts, edges = dps.histogram([0.1, 0.5, 0.9], epsilon=1.0, bins=4, range=(0, 1), rng=0)
    """
    epsilon, delta, rng = check_epsilon(epsilon), check_delta(delta), check_rng(rng)
    bins = check_int(bins, "bins")
    lower, upper = check_bounds(range, "range")
    if lower.ndim or upper.ndim:
        raise ParameterError(f"range must be a pair of scalars; got {range!r}")
    x = check_array(x, "x", ndim=(1,))
    if x.size == 0:
        raise DataValidationError("x must hold at least one record; got an empty array")
    hist_range = (float(lower), float(upper))
    # np.histogram drops NaN and out-of-range values, so a short total reveals them in the same pass.
    counts, edges = np.histogram(x, bins=bins, range=hist_range)
    if counts.sum() != x.size:
        x, _ = enforce_bounds(x, lower, upper, name="x", clip=clip)
        counts, edges = np.histogram(x, bins=bins, range=hist_range)
    charge(accountant, epsilon, delta, mechanism="histogram")
    noisy = perturb(counts.astype(np.float64), epsilon, delta, l1_sensitivity=2.0, l2_sensitivity=np.sqrt(2.0),
                    rng=rng)
    return noisy, edges
